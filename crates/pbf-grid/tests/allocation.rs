//! No allocation in steady state: rebuilding at a fixed point count, reordering and
//! building the neighbour list reuse every buffer. A counting global allocator sees
//! every allocation of the process (this file holds a single test for that reason).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use pbf_grid::{Grid, NeighbourList};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_does_not_allocate() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let cloud = common::uniform::<3>(100_000, 45.0, 2.0, 5);
        let mut grid = Grid::<3>::new();
        let mut list = NeighbourList::new();
        let mut positions = cloud.axes.clone();
        let mut scratch = Vec::new();
        let mut rng = common::Rng(1);
        let mut step = |positions: &mut [Vec<f32>; 3], rng: &mut common::Rng| {
            // Move every point a little, rebuild, reorder, list.
            for axis in positions.iter_mut() {
                for x in axis.iter_mut() {
                    *x += (rng.unit() - 0.5) * 0.05;
                }
            }
            grid.rebuild([&positions[0], &positions[1], &positions[2]], cloud.h)
                .unwrap();
            for axis in positions.iter_mut() {
                grid.reorder(axis, &mut scratch).unwrap();
            }
            grid.neighbour_list([&positions[0], &positions[1], &positions[2]], &mut list)
                .unwrap();
        };
        // Warm-up: the buffers reach their working sizes (plus a little jitter room).
        for _ in 0..5 {
            step(&mut positions, &mut rng);
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..5 {
            step(&mut positions, &mut rng);
        }
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(after - before, 0, "allocations in steady state");
    });
}
