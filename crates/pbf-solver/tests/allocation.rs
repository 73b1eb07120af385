//! A step allocates nothing once the particle count is steady: a counting global
//! allocator (per test binary, hence this file of its own) counts every heap
//! allocation and reallocation, on every thread, while a flowing scene (a dam break,
//! which reorders particles every step and keeps spreading into new cells) steps
//! with XSPH and vorticity confinement on, in 2D and 3D.
//!
//! What is counted honestly: every thread of the process, the solver's own and
//! rayon's workers alike. The steps run inside one `ThreadPool::install`, as a
//! program that steps in a loop would: entering the pool from outside queues a job in
//! rayon's global injector, which allocates a block every 63 jobs, so a loop that
//! called `install` per step would see rayon (not the solver) allocate now and then.
//! Inside the pool, the splits of the passes go to the workers' own deques, which
//! keep their capacity. The only test in this binary, so that no other test's
//! allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pbf_solver::{Domain, Params, Solver};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: every call is forwarded unchanged to the system allocator; the counter
// is an atomic that does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc`; `ptr` and `layout` come from this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Steps `solver` `warm_up` times, then counts the allocations of `measured` steps
/// and returns them with the steps at which they happened.
fn allocations_per_step<const D: usize>(
    solver: &mut Solver<D>,
    warm_up: usize,
    measured: usize,
) -> Vec<(u64, usize)> {
    for _ in 0..warm_up {
        solver.step().expect("warm-up step");
    }
    let mut found = Vec::new();
    for _ in 0..measured {
        ALLOCATIONS.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        let result = solver.step();
        COUNTING.store(false, Ordering::SeqCst);
        let count = ALLOCATIONS.load(Ordering::SeqCst);
        let stats = result.expect("measured step");
        if count > 0 {
            found.push((stats.step, count));
        }
    }
    found
}

fn dam_break_2d() -> Solver<2> {
    // At the scenes' time step for a 0.6 m fall: at 1/120 s the fastest particles
    // would move 1.4 h a step, beyond what any neighbour-based solver follows, and the
    // flow would pack the lists beyond their room (an allocation this test would flag
    // for a run that is not a fluid any more).
    let params = Params::<2>::builder(0.01)
        .xsph_c(0.01)
        .vorticity_rel(0.1)
        .time_step(pbf_solver::scenes::scene_time_step(0.6, 0.02, 9.81))
        .build()
        .unwrap();
    let mut s = Solver::new(params, Domain::new([0.0; 2], [1.6, 0.8]).unwrap()).unwrap();
    s.add_block([0.0, 0.0], [0.4, 0.6], [0.0; 2]).unwrap();
    s
}

fn dam_break_3d() -> Solver<3> {
    let params = Params::<3>::builder(0.025)
        .xsph_c(0.01)
        .vorticity_rel(0.1)
        .build()
        .unwrap();
    let mut s = Solver::new(params, Domain::new([0.0; 3], [1.0, 0.6, 0.3]).unwrap()).unwrap();
    s.add_block([0.0; 3], [0.25, 0.4, 0.3], [0.0; 3]).unwrap();
    s
}

#[test]
fn a_step_allocates_nothing_after_warm_up() {
    // One pool at a time, each dropped and its workers gone before the next is made,
    // and each having run a job on every worker before any counting: a worker thread
    // allocates once when it first looks for work (its crossbeam-epoch handle), now
    // and then while idle (its garbage bag), and once when it exits. A pool dropped
    // after its measurement, as this test once did, let its worker exit while the next
    // pool's steps were counted, and a worker that a loaded machine started late
    // registered during them: under load 1-3 such allocations showed in a step
    // (backtraces in crossbeam-epoch's `Local::register` and `Local::finalize`), none
    // of them the solver's.
    for threads in [1, 2] {
        // The workers' threads are the test's own, so that it can join them (their
        // thread-local destructors included) before the next pool counts.
        let mut workers = Vec::new();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .spawn_handler(|thread| {
                workers.push(std::thread::spawn(move || thread.run()));
                Ok(())
            })
            .build()
            .unwrap();
        pool.broadcast(|_| ());
        pool.install(|| {
            let mut s2 = dam_break_2d();
            assert!(s2.len() > 2000);
            let found = allocations_per_step(&mut s2, 5, 150);
            assert!(
                found.is_empty(),
                "2D, {threads} threads: (step, allocations) {found:?}"
            );
            let mut s3 = dam_break_3d();
            assert!(s3.len() > 1500);
            let found = allocations_per_step(&mut s3, 5, 100);
            assert!(
                found.is_empty(),
                "3D, {threads} threads: (step, allocations) {found:?}"
            );
            // The 2D dam break again, its pressures kept.
            let mut kept = dam_break_2d();
            kept.keep_pressures(true);
            let found = allocations_per_step(&mut kept, 5, 60);
            assert!(
                found.is_empty(),
                "2D with pressures, {threads} threads: (step, allocations) {found:?}"
            );
            // A flow from rest, whose particles first change cell after the warm-up:
            // the viscosity's solve with no-slip plates, in a channel periodic along x.
            let flow = pbf_solver::flows::Poiseuille::new(16, 1.0, 0.02, 1.0 / 30.0);
            let mut channel = flow.solver(pbf_solver::Backend::Lanes).unwrap();
            let found = allocations_per_step(&mut channel, 5, 100);
            assert!(
                found.is_empty(),
                "periodic channel, {threads} threads: (step, allocations) {found:?}"
            );
        });
        drop(pool);
        for worker in workers {
            worker.join().expect("a worker's exit");
        }
    }
}
