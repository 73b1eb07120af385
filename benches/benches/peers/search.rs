//! Fixed-radius neighbour search: `pbf-grid` against `splashsurf_lib` and `kiddo` on
//! one jittered lattice.

use kiddo::{ImmutableKdTree, SquaredEuclidean};
use pbf_benches::fused_density;
use pbf_benches::rng::SplitMix64;
use pbf_grid::{Grid, NeighbourList};
use pbf_kernels::Kernel;
use rayon::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

use super::{Options, SPACING, fmt_ms, median, ms};

/// `side^3` lattice points of spacing `SPACING`, each moved by up to a quarter
/// spacing per axis, in a random order.
fn jittered_lattice(side: usize) -> Vec<[f32; 3]> {
    let mut rng = SplitMix64(side as u64);
    let mut points = Vec::with_capacity(side * side * side);
    for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                points.push([i, j, k].map(|c| (c as f32 + 0.25 * rng.signed()) * SPACING));
            }
        }
    }
    for i in (1..points.len()).rev() {
        points.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    points
}

/// What a method returns: build time, pass time, pairs found (self excluded) and
/// the sum of all kernel sums (a checksum).
struct SearchRun {
    build: Duration,
    pass: Duration,
    pairs: u64,
    checksum: f64,
}

/// The methods compared.
const METHODS: [&str; 4] = [
    "pbf-grid, fused cell-blocked pass (no lists; AVX-512F where present)",
    "pbf-grid, CSR list + pass",
    "splashsurf_lib 0.14 spatial hashing (Vec<Vec>) + pass",
    "kiddo 6.3 ImmutableKdTree + within-radius queries",
];

/// Scratch kept across repetitions, so that allocation of the first run is not timed
/// twice for the methods that reuse buffers (pbf-grid's API is built for reuse).
struct SearchState {
    grid: Grid<3>,
    soa: [Vec<f32>; 3],
    sorted: [Vec<f32>; 3],
    list: NeighbourList,
    sums: Vec<f32>,
    counts: Vec<u32>,
}

fn run_method(
    method: usize,
    points: &[[f32; 3]],
    threads: usize,
    kernel: &Kernel<3>,
    st: &mut SearchState,
) -> SearchRun {
    let h = 2.0 * SPACING;
    let h2 = h * h;
    let n = points.len();
    st.sums.clear();
    st.sums.resize(n, 0.0);
    st.counts.clear();
    st.counts.resize(n, 0);
    match method {
        0 | 1 => {
            let start = Instant::now();
            let [x, y, z] = &st.soa;
            st.grid.rebuild([x, y, z], h).expect("finite points");
            for axis in 0..3 {
                st.sorted[axis].resize(n, 0.0);
                st.grid
                    .reorder_into(&st.soa[axis], &mut st.sorted[axis])
                    .expect("same length");
            }
            let build = start.elapsed();
            let [x, y, z] = &st.sorted;
            let sorted = [x.as_slice(), y, z];
            let grid = &st.grid;
            let start = Instant::now();
            if method == 0 {
                // The widest lanes this CPU runs (as the `grid` bench's headline row).
                fused_density(grid, kernel, sorted, &mut st.sums);
                let pass = start.elapsed();
                // Pairs from a separate, untimed count (the fused pass has no lists).
                count_pairs(grid, sorted, &mut st.counts);
                return finish(build, pass, &st.sums, &st.counts);
            } else {
                grid.neighbour_list(sorted, &mut st.list).expect("list");
                let list = &st.list;
                per_point(&mut st.sums, &mut st.counts, |i| {
                    let nb = list.neighbours(i);
                    let mut acc = kernel.poly6(0.0);
                    for &j in nb {
                        let j = j as usize;
                        let d = [x[i] - x[j], y[i] - y[j], z[i] - z[j]];
                        acc += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    }
                    (acc, nb.len() as u32)
                });
            }
            let pass = start.elapsed();
            finish(build, pass, &st.sums, &st.counts)
        }
        2 => {
            let start = Instant::now();
            let positions: Vec<splashsurf_lib::nalgebra::Vector3<f32>> = points
                .iter()
                .map(|p| splashsurf_lib::nalgebra::Vector3::new(p[0], p[1], p[2]))
                .collect();
            let domain = splashsurf_lib::Aabb3d::from_points(&positions);
            let lists = splashsurf_lib::neighborhood_search::search::<i64, f32>(
                &domain,
                &positions,
                h,
                threads > 1,
            );
            let build = start.elapsed();
            let start = Instant::now();
            per_point(&mut st.sums, &mut st.counts, |i| {
                let p = points[i];
                let mut acc = kernel.poly6(0.0);
                for &j in &lists[i] {
                    let q = points[j];
                    let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
                    acc += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                }
                (acc, lists[i].len() as u32)
            });
            let pass = start.elapsed();
            drop(black_box(lists));
            finish(build, pass, &st.sums, &st.counts)
        }
        _ => {
            let start = Instant::now();
            let tree: ImmutableKdTree<f32, 3> = if threads > 1 {
                ImmutableKdTree::new_from_slice_parallel(points).expect("tree")
            } else {
                ImmutableKdTree::new_from_slice(points).expect("tree")
            };
            let build = start.elapsed();
            let start = Instant::now();
            per_point(&mut st.sums, &mut st.counts, |i| {
                let mut acc = 0.0;
                let mut count = 0u32;
                tree.query(&points[i])
                    .within::<SquaredEuclidean<f32>>(h2)
                    .unsorted()
                    .exclusive_boundaries()
                    .visit(|hit| {
                        acc += kernel.poly6(hit.distance);
                        count += 1;
                    });
                (acc, count - 1) // the point itself is not a pair
            });
            let pass = start.elapsed();
            drop(black_box(tree));
            finish(build, pass, &st.sums, &st.counts)
        }
    }
}

/// Runs `pass` for every point in parallel, storing its kernel sum and its
/// neighbour count.
fn per_point(sums: &mut [f32], counts: &mut [u32], pass: impl Fn(usize) -> (f32, u32) + Sync) {
    sums.par_iter_mut()
        .zip(counts.par_iter_mut())
        .enumerate()
        .with_min_len(256)
        .for_each(|(i, (s, c))| (*s, *c) = pass(i));
}

fn finish(build: Duration, pass: Duration, sums: &[f32], counts: &[u32]) -> SearchRun {
    SearchRun {
        build,
        pass,
        pairs: counts.iter().map(|&c| u64::from(c)).sum(),
        checksum: sums.iter().map(|&s| f64::from(s)).sum(),
    }
}

fn count_pairs(grid: &Grid<3>, sorted: [&[f32]; 3], counts: &mut [u32]) {
    grid.par_for_each_cell(counts, |cell, out| {
        let first = grid.cells()[cell].start as usize;
        for (k, c) in out.iter_mut().enumerate() {
            let i = first + k;
            grid.for_each_neighbour(sorted, i, |j| *c += u32::from(j != i));
        }
    })
    .expect("one count per point");
}

pub(crate) struct SearchRow {
    side: usize,
    threads: usize,
    /// Per method: median build, pass, total (ms).
    medians: Vec<[f64; 3]>,
    pairs: u64,
}

pub(crate) fn search(o: &Options, pools: &[rayon::ThreadPool; 2]) -> Vec<SearchRow> {
    let kernel = Kernel::<3>::new(2.0 * SPACING).expect("h > 0");
    let mut rows = Vec::new();
    for &side in &o.sides {
        let points = jittered_lattice(side);
        let n = points.len();
        let mut st = SearchState {
            grid: Grid::new(),
            soa: std::array::from_fn(|a| points.iter().map(|p| p[a]).collect()),
            sorted: Default::default(),
            list: NeighbourList::new(),
            sums: Vec::new(),
            counts: Vec::new(),
        };
        for (pool, threads) in [(0usize, 1usize), (1, 2)] {
            let p = &pools[pool];
            eprintln!(
                "search: {n} points, {threads} thread(s), {} repetitions",
                o.reps
            );
            // One untimed run of each to grow buffers and check agreement.
            let mut reference: Option<(u64, f64)> = None;
            for (m, name) in METHODS.iter().enumerate() {
                let r = p.install(|| run_method(m, &points, threads, &kernel, &mut st));
                match reference {
                    None => reference = Some((r.pairs, r.checksum)),
                    Some((pairs, checksum)) => {
                        assert_eq!(r.pairs, pairs, "{name} finds other pairs");
                        assert!(
                            ((r.checksum - checksum) / checksum).abs() < 1e-4,
                            "{name}: kernel sums differ ({} vs {checksum})",
                            r.checksum
                        );
                    }
                }
            }
            let mut samples: Vec<[Vec<f64>; 3]> =
                (0..METHODS.len()).map(|_| Default::default()).collect();
            // Round robin: each repetition runs every method once, back to back.
            for rep in 0..o.reps {
                for (m, s) in samples.iter_mut().enumerate() {
                    let r = p.install(|| run_method(m, &points, threads, &kernel, &mut st));
                    s[0].push(ms(r.build));
                    s[1].push(ms(r.pass));
                    s[2].push(ms(r.build + r.pass));
                }
                eprintln!(
                    "  rep {}: {}",
                    rep + 1,
                    samples
                        .iter()
                        .map(|s| format!("{:.1}", s[2].last().copied().unwrap_or(0.0)))
                        .collect::<Vec<_>>()
                        .join(" / ")
                );
            }
            rows.push(SearchRow {
                side,
                threads,
                medians: samples
                    .iter_mut()
                    .map(|s| [median(&mut s[0]), median(&mut s[1]), median(&mut s[2])])
                    .collect(),
                pairs: reference.map_or(0, |r| r.0),
            });
        }
    }
    rows
}

pub(crate) fn print_search(o: &Options, rows: &[SearchRow]) {
    println!();
    println!(
        "### Neighbour search: build + one full pass (poly6 sum over each point's neighbours)"
    );
    println!();
    println!(
        "Jittered lattice (spacing s = {SPACING}, up to s/4 per axis, shuffled order), radius 2s; medians of {} repetitions, methods run round robin",
        o.reps
    );
    println!();
    println!("| points | threads | method | build ms | pass ms | total ms | fastest peer / this |");
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        let peers = r.medians[2..]
            .iter()
            .map(|m| m[2])
            .fold(f64::INFINITY, f64::min);
        for (m, med) in r.medians.iter().enumerate() {
            let ratio = if m < 2 {
                format!("**{:.1}x**", peers / med[2])
            } else {
                format!("{:.2}x", peers / med[2])
            };
            println!(
                "| {} ({}^3) | {} | {} | {} | {} | {} | {} |",
                r.side.pow(3),
                r.side,
                r.threads,
                METHODS[m],
                fmt_ms(med[0]),
                fmt_ms(med[1]),
                fmt_ms(med[2]),
                ratio
            );
        }
    }
    println!();
    for r in rows.iter().filter(|r| r.threads == 1) {
        println!(
            "- {} points: {} pairs within the radius (self excluded), {:.1} per point, the same for every method",
            r.side.pow(3),
            r.pairs,
            r.pairs as f64 / r.side.pow(3) as f64
        );
    }
}
