//! Neighbour search with `pbf-grid` on a jittered 3D lattice.
//!
//! The scene: a cubic lattice of spacing `s` with every point moved by up to
//! `0.25 s` per axis, searched with `h = 2 s` (about 33 neighbours within `h`, 216
//! candidates in the 27 cells). Sizes 10k, 100k and 1M points (22^3, 46^3, 100^3),
//! each on a rayon pool of 1 and of 2 threads. Throughput counts points.
//!
//! - `grid_rebuild/steady`: the solver's case. Each iteration is one step: the input
//!   is the previous iteration's sorted output with every point moved by up to
//!   `0.02 s` per axis (the move is not timed), and the timed part is `rebuild` plus
//!   the reorder of the three position arrays (`reorder_into`, reused buffers). About
//!   1.5 % of the points change cell per step.
//! - `grid_rebuild/shuffled`: the first build, the same from a random order (buffers
//!   already grown: the same grid rebuilt on the same shuffled input).
//! - `grid_density/fused`: the cell-blocked density pass with no lists: for each
//!   occupied cell, its points in `f32x8` lanes against every candidate of the
//!   cell's merged candidate ranges, `sum_j W_poly6(r_ij)` (`j = i` included) through
//!   `pbf_kernels::Kernel::poly6_lanes`.
//! - `grid_density/fused_avx512` (CPUs with AVX-512F only): the same pass sixteen
//!   candidates at a time, four points of a cell sharing each candidate block
//!   (`pbf_benches::density`, picked at run time, so also in the default build).
//! - `grid_neighbour_list/csr`: the CSR neighbour list.
//! - `grid_brute_force/density`: the baseline at 10k, the density pass over all
//!   pairs (`i` broadcast against eight `j` per step).
//!
//! `cargo bench -p pbf-benches --bench grid`; add `RUSTFLAGS="-C target-cpu=native"`
//! for AVX2/AVX-512 lanes (the bench prints the active `f32x8` backend).

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group};
use pbf_benches::fused_density;
use pbf_benches::rng::SplitMix64;
use pbf_grid::{Grid, NeighbourList};
use pbf_kernels::{Kernel, LANES, f32x8, norm2_lanes};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Lattice spacing `s`.
const SPACING: f32 = 0.05;
/// Search radius `h = 2 s`.
const RADIUS: f32 = 2.0 * SPACING;
/// Lattice points per axis for the 10k, 100k and 1M clouds.
const SIDES: [usize; 3] = [22, 46, 100];
/// Thread counts of the rayon pools.
const THREADS: [usize; 2] = [1, 2];
/// Largest move of a point per axis and step, in lattice spacings.
const STEP: f32 = 0.02;

type Positions = [Vec<f32>; 3];

fn view(p: &Positions) -> [&[f32]; 3] {
    [&p[0], &p[1], &p[2]]
}

/// The jittered lattice, in lattice (x fastest) order.
fn lattice(side: usize, rng: &mut SplitMix64) -> Positions {
    let n = side * side * side;
    let mut p: Positions = std::array::from_fn(|_| Vec::with_capacity(n));
    for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                for (axis, c) in [i, j, k].into_iter().enumerate() {
                    p[axis].push((c as f32 + 0.25 * rng.signed()) * SPACING);
                }
            }
        }
    }
    p
}

/// The points in a random order (Fisher-Yates).
fn shuffled(p: &Positions, rng: &mut SplitMix64) -> Positions {
    let n = p[0].len();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    std::array::from_fn(|axis| order.iter().map(|&i| p[axis][i]).collect())
}

/// Rebuilds and reorders the three position arrays into `out`.
fn rebuild_and_reorder(grid: &mut Grid<3>, input: &Positions, out: &mut Positions) {
    grid.rebuild(view(input), RADIUS).expect("valid scene");
    for axis in 0..3 {
        grid.reorder_into(&input[axis], &mut out[axis])
            .expect("same length");
    }
}

/// The brute-force density: every point against all points, eight `j` per step.
fn brute_force_density(kernel: &Kernel<3>, p: &Positions, density: &mut [f32]) {
    use rayon::prelude::*;
    let [x, y, z] = view(p);
    let n = x.len();
    let full = n / LANES * LANES;
    density
        .par_iter_mut()
        .enumerate()
        .with_min_len(64)
        .for_each(|(i, out)| {
            let (xi, yi, zi) = (f32x8::splat(x[i]), f32x8::splat(y[i]), f32x8::splat(z[i]));
            let load = |v: &[f32], j: usize| {
                f32x8::from(<[f32; LANES]>::try_from(&v[j..j + LANES]).unwrap())
            };
            let mut sum = f32x8::ZERO;
            for j in (0..full).step_by(LANES) {
                let d = [xi - load(x, j), yi - load(y, j), zi - load(z, j)];
                sum += kernel.poly6_lanes(norm2_lanes(d));
            }
            let mut total = sum.reduce_add();
            for j in full..n {
                let d = [x[i] - x[j], y[i] - y[j], z[i] - z[j]];
                total += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            }
            *out = total;
        });
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

/// Runs `f` `iters` times inside `pool` and returns the elapsed time (for
/// `iter_custom`: criterion's own types cannot enter the pool).
fn timed(pool: &rayon::ThreadPool, iters: u64, mut f: impl FnMut() + Send) -> Duration {
    pool.install(|| {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        start.elapsed()
    })
}

/// The nominal size of a lattice: 10k, 100k or 1M.
fn label(side: usize) -> &'static str {
    match side {
        ..=22 => "10k",
        23..=46 => "100k",
        _ => "1M",
    }
}

/// Ten flat samples per case, measured for about `seconds_at_1m` at 1M points and
/// a tenth of it per tenth of the points, so that the whole bench takes minutes.
fn configure(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    side: usize,
    seconds_at_1m: f64,
) {
    let scale = (side * side * side) as f64 / 1e6;
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_secs_f64(
        (0.3 * seconds_at_1m * scale).clamp(0.2, 1.0),
    ));
    group.measurement_time(Duration::from_secs_f64(
        (seconds_at_1m * scale.powf(0.5)).max(0.5),
    ));
}

fn bench_rebuild(c: &mut Criterion) {
    let mut group = c.benchmark_group("grid_rebuild");
    for side in SIDES {
        let mut rng = SplitMix64(side as u64);
        let points = lattice(side, &mut rng);
        let n = points[0].len();
        let shuffled_points = shuffled(&points, &mut rng);
        configure(&mut group, side, 1.5);
        group.throughput(Throughput::Elements(n as u64));
        for threads in THREADS {
            let pool = pool(threads);
            // A solver's steps: the input of each rebuild is the previous step's
            // sorted output, every point moved a little (not timed).
            let mut grid = Grid::<3>::new();
            let mut input = shuffled_points.clone();
            let mut out: Positions = std::array::from_fn(|_| vec![0.0; n]);
            let mut jitter = SplitMix64(7);
            let mut step = |grid: &mut Grid<3>, input: &mut Positions, out: &mut Positions| {
                std::mem::swap(input, out);
                for axis in input.iter_mut() {
                    for v in axis.iter_mut() {
                        *v += STEP * SPACING * jitter.signed();
                    }
                }
                let start = Instant::now();
                rebuild_and_reorder(grid, input, out);
                start.elapsed()
            };
            pool.install(|| {
                rebuild_and_reorder(&mut grid, &input, &mut out);
                step(&mut grid, &mut input, &mut out);
            });
            group.bench_function(
                BenchmarkId::new(format!("steady/{threads}t"), label(side)),
                |b| {
                    b.iter_custom(|iters| {
                        pool.install(|| {
                            (0..iters)
                                .map(|_| step(&mut grid, &mut input, &mut out))
                                .sum()
                        })
                    })
                },
            );
            // How far a steady step moves points in the sorted order, on average.
            let shift = grid
                .permutation()
                .iter()
                .enumerate()
                .map(|(k, &p)| k.abs_diff(p as usize) as f64)
                .sum::<f64>()
                / n as f64;
            let mut first = Grid::<3>::new();
            group.bench_function(
                BenchmarkId::new(format!("shuffled/{threads}t"), label(side)),
                |b| {
                    b.iter_custom(|iters| {
                        timed(&pool, iters, || {
                            rebuild_and_reorder(&mut first, black_box(&shuffled_points), &mut out)
                        })
                    })
                },
            );
            if threads == 1 {
                eprintln!(
                    "grid_rebuild {}: {} cells; a steady step moves points {shift:.1} places in the order on average",
                    label(side),
                    grid.cells().len()
                );
            }
        }
    }
    group.finish();
}

/// A grid built on the lattice and the positions in its sorted order.
fn sorted_scene(side: usize) -> (Grid<3>, Positions) {
    let mut rng = SplitMix64(side as u64);
    let points = shuffled(&lattice(side, &mut rng), &mut rng);
    let mut grid = Grid::<3>::new();
    let mut sorted: Positions = std::array::from_fn(|_| vec![0.0; points[0].len()]);
    rebuild_and_reorder(&mut grid, &points, &mut sorted);
    grid.rebuild(view(&sorted), RADIUS).expect("valid scene");
    (grid, sorted)
}

fn bench_density(c: &mut Criterion) {
    let kernel = Kernel::<3>::new(RADIUS).expect("valid radius");
    let mut group = c.benchmark_group("grid_density");
    for side in SIDES {
        let (grid, sorted) = sorted_scene(side);
        let n = grid.len();
        let mut density = vec![0.0f32; n];
        configure(&mut group, side, 2.5);
        group.throughput(Throughput::Elements(n as u64));
        for threads in THREADS {
            let pool = pool(threads);
            group.bench_function(
                BenchmarkId::new(format!("fused/{threads}t"), label(side)),
                |b| {
                    b.iter_custom(|iters| {
                        timed(&pool, iters, || {
                            fused_density(&grid, &kernel, view(black_box(&sorted)), &mut density)
                        })
                    })
                },
            );
            group.bench_function(
                BenchmarkId::new(format!("fused_f32x8/{threads}t"), label(side)),
                |b| {
                    b.iter_custom(|iters| {
                        timed(&pool, iters, || {
                            pbf_benches::fused_density_on(
                                pbf_kernels::LaneKind::Portable,
                                &grid,
                                &kernel,
                                view(black_box(&sorted)),
                                &mut density,
                            )
                            .expect("the portable lanes run everywhere");
                        })
                    })
                },
            );
        }
        // Interior points see about 33 neighbours: W summed is near its lattice value.
        let mean = density.iter().sum::<f32>() / n as f32;
        eprintln!(
            "grid_density {}: mean sum_j W = {mean:.1} (W(0) = {:.1})",
            label(side),
            kernel.poly6(0.0)
        );
    }
    group.finish();
}

fn bench_neighbour_list(c: &mut Criterion) {
    let mut group = c.benchmark_group("grid_neighbour_list");
    for side in SIDES {
        let (grid, sorted) = sorted_scene(side);
        let n = grid.len();
        let mut list = NeighbourList::new();
        configure(&mut group, side, 4.0);
        group.throughput(Throughput::Elements(n as u64));
        for threads in THREADS {
            let pool = pool(threads);
            group.bench_function(
                BenchmarkId::new(format!("csr/{threads}t"), label(side)),
                |b| {
                    b.iter_custom(|iters| {
                        timed(&pool, iters, || {
                            grid.neighbour_list(view(black_box(&sorted)), &mut list)
                                .expect("fits u32")
                        })
                    })
                },
            );
        }
        eprintln!(
            "grid_neighbour_list {}: {:.1} neighbours per point",
            label(side),
            list.total() as f64 / n as f64
        );
    }
    group.finish();
}

fn bench_brute_force(c: &mut Criterion) {
    let kernel = Kernel::<3>::new(RADIUS).expect("valid radius");
    let mut group = c.benchmark_group("grid_brute_force");
    let side = SIDES[0];
    let (_, sorted) = sorted_scene(side);
    let n = sorted[0].len();
    let mut density = vec![0.0f32; n];
    configure(&mut group, side, 5.0);
    group.throughput(Throughput::Elements(n as u64));
    for threads in THREADS {
        let pool = pool(threads);
        group.bench_function(
            BenchmarkId::new(format!("density/{threads}t"), label(side)),
            |b| {
                b.iter_custom(|iters| {
                    timed(&pool, iters, || {
                        brute_force_density(&kernel, black_box(&sorted), &mut density)
                    })
                })
            },
        );
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_rebuild,
    bench_density,
    bench_neighbour_list,
    bench_brute_force
);

fn main() {
    eprintln!("{}", pbf_benches::machine::describe());
    eprintln!(
        "pbf-grid bench: f32x8 backend {} ({}), {} rayon threads available",
        pbf_kernels::simd_backend(),
        if cfg!(target_feature = "avx512f") {
            "AVX-512 available, wide uses one 256-bit AVX register"
        } else if cfg!(target_feature = "avx") {
            "one 256-bit register"
        } else {
            "two 128-bit halves"
        },
        rayon::current_num_threads()
    );
    benches();
    Criterion::default().configure_from_args().final_summary();
}
