//! `step`: one solver step of the 3D dam break at 10k, 100k and 1M particles and of
//! the 2D dam break at 100k (h = 2 spacings, 4 iterations, XSPH and vorticity on), on
//! 1 and 2 threads; at 100k in 3D also with the eight-lane backend and with the coarse
//! density correction, and the `glass` scene (a block dropped into a hollow cylinder,
//! a collider the dam break does not have), and that glass at 20k after its fluid has
//! come to rest (`glass-settled`: 800 steps first), where most steps keep the last
//! step's neighbour lists instead of searching. Besides criterion's timing of the
//! whole step, it prints the time per phase and per particle-iteration, and the share
//! of steps that searched, from the solver's own diagnostics.
//!
//! `cargo bench --bench step` (add `-- 1M` etc. to filter). The ratio of the 1M and
//! 10k steps a particle-iteration is better read from `--bench scaling`, which times
//! the two sizes in alternation in one process. The scenes are stepped 30
//! times before measuring (`glass-settled` 800), so the fluid is moving and the grid
//! is in its steady state.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pbf_benches::{dam_break_3d_with, size_label as label};
use pbf_solver::Backend;
use pbf_solver::scenes::{AnySolver, build};
use std::time::Duration;

fn phases(solver: &mut AnySolver, steps: usize) -> String {
    let mut t = [Duration::ZERO; 5];
    let mut iterations = 0u64;
    let (mut neighbours, mut searched) = (0.0, 0);
    for _ in 0..steps {
        let d = solver.step().expect("step");
        searched += usize::from(d.searches > 0);
        t[0] += d.times.predict;
        t[1] += d.times.neighbour_search;
        t[2] += d.times.constraints;
        t[3] += d.times.velocity;
        t[4] += d.times.coarse;
        iterations += u64::from(d.iterations);
        neighbours += f64::from(d.average_neighbours);
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3 / steps as f64;
    let total: Duration = t.iter().sum();
    let per_pi = total.as_secs_f64() * 1e9 / (solver.len() as f64 * iterations as f64);
    format!(
        "predict {:.2} ms, neighbours {:.2} ms, coarse {:.2} ms, constraints {:.2} ms, velocity {:.2} ms, total {:.2} ms; {:.2} ns per particle-iteration; {:.1} neighbours a particle; {searched} of {steps} steps searched",
        ms(t[0]),
        ms(t[1]),
        ms(t[4]),
        ms(t[2]),
        ms(t[3]),
        ms(total),
        per_pi,
        neighbours / steps as f64
    )
}

fn bench_step(c: &mut Criterion) {
    eprintln!("{}", pbf_benches::machine::describe());
    eprintln!("SIMD backend of f32x8: {}", pbf_kernels::simd_backend());
    eprintln!(
        "Backend::Lanes runs {} lanes on this CPU ({}); Backend::Lanes8 runs {}",
        Backend::Lanes.lane_width(),
        Backend::Lanes.instructions(),
        Backend::Lanes8.instructions()
    );
    // The default backend (the widest lanes the CPU has), and at 100k in 3D also the
    // eight-lane backend and the coarse density correction, for the ratios in one run.
    let cases: &[(&str, usize, Backend)] = &[
        ("dam-break", 10_000, Backend::Lanes),
        ("dam-break", 100_000, Backend::Lanes),
        ("dam-break", 100_000, Backend::Lanes8),
        ("dam-break-coarse", 100_000, Backend::Lanes),
        ("dam-break-2d", 100_000, Backend::Lanes),
        ("glass", 100_000, Backend::Lanes),
        ("glass-settled", 20_000, Backend::Lanes),
        ("dam-break", 1_000_000, Backend::Lanes),
    ];
    let mut group = c.benchmark_group("step");
    for &(scene, particles, backend) in cases {
        let scene_label = match backend {
            Backend::Lanes8 => format!("{scene}-lanes8"),
            _ => scene.to_string(),
        };
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let (mut solver, warm_up) = match scene {
                "dam-break-coarse" => (
                    AnySolver::Three(dam_break_3d_with(particles, |p| p.coarse_correction(true))),
                    30,
                ),
                "glass-settled" => (build("glass", particles).expect("scene"), 800),
                _ => (build(scene, particles).expect("scene"), 30),
            };
            solver.set_backend(backend);
            let n = solver.len();
            pool.install(|| {
                for _ in 0..warm_up {
                    solver.step().expect("warm-up");
                }
                eprintln!(
                    "{scene_label} {} on {threads} thread(s): {}",
                    label(n),
                    phases(&mut solver, if warm_up > 30 { 50 } else { 5 })
                );
            });
            group.throughput(Throughput::Elements(n as u64));
            if n >= 1_000_000 {
                group
                    .sample_size(10)
                    .measurement_time(Duration::from_secs(20));
            } else {
                group
                    .sample_size(20)
                    .measurement_time(Duration::from_secs(8));
            }
            let id = BenchmarkId::new(format!("{scene_label}/{threads}t"), label(n));
            let mut last = None;
            group.bench_function(id, |b| {
                b.iter(|| {
                    let d = pool.install(|| solver.step().expect("step"));
                    last = Some(d);
                    d
                })
            });
            // Where in the scene criterion measured: the fluid of the larger blocks
            // compresses further as it falls, so later steps have more neighbours.
            if let Some(d) = last {
                eprintln!(
                    "{scene_label} {} on {threads} thread(s): measured up to step {}, {:.1} neighbours a particle there",
                    label(n),
                    d.step,
                    d.average_neighbours
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_step);
criterion_main!(benches);
