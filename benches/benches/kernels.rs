//! Pair evaluations per second in the solver's three fused pair loops, scalar
//! reference against `f32x8` lanes.
//!
//! The scene is what a cell-list solver sees: a jittered 3D lattice (spacing `s`,
//! `h = 2 s`) binned into cells of size `h`; for each of a set of particles `i`, the
//! candidates of its 27 cells are stored consecutively in structure-of-arrays form
//! (`x[]`, `y[]`, `z[]`, `lambda[]`), as a cell-sorted grid gives them. About 1 in 6
//! candidates lies within `h`. Each pass sums one particle against its whole block:
//!
//! - `density`: `rho_i = sum_j m W(r)`;
//! - `lambda`: density, the constraint gradient `sum_j (m/rho0) gradW` and the sum of
//!   squared gradient norms, giving `lambda_i`;
//! - `position_delta`: `s_corr` from `W` and `(m/rho0)(lambda_i + lambda_j + s_corr) gradW`.
//!
//! Four loops per pass, the same arithmetic per pair:
//!
//! - `scalar` calls the scalar reference on every candidate, as written (its branches
//!   included);
//! - `scalar_cutoff` skips candidates outside `h` first, as a hand-written scalar
//!   solver would;
//! - `lanes` loads eight consecutive candidates per step (`f32x8::from([f32; 8])`) and
//!   relies on the kernels' masks, the tail padded with far-away positions;
//! - `lanes_skip_empty` is `lanes` with a branch past the chunks that have no candidate
//!   within `h` (about 60% of them in cell-ordered blocks).
//!
//! Throughput counts candidate pairs, the same for all four. Figures and their reading
//! (density is fastest with plain `lanes`, lambda and position delta with
//! `lanes_skip_empty`) are in `BENCHMARKS.md`.
//!
//! `cargo bench -p pbf-benches --bench kernels`; add `RUSTFLAGS="-C target-cpu=native"`
//! for AVX2/AVX-512 (the bench prints the active `f32x8` backend).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pbf_benches::rng::SplitMix64;
use pbf_kernels::{Kernel, LANES, TensileCorrection, f32x8, norm2, norm2_lanes, within};
use std::hint::black_box;
use std::time::Duration;

/// Lattice spacing `s`; the kernel radius is `2 s`, the cell size `h`.
const SPACING: f32 = 0.05;
/// Lattice points per axis: 24^3 = 13824 particles, 12^3 cells.
const LATTICE: usize = 24;
/// Particles `i` measured per iteration; their blocks (about 216 candidates each,
/// 16 bytes per candidate) stay within a 1 MiB L2, as the neighbouring cells of
/// consecutive particles do in the solver.
const PARTICLES: usize = 128;
const REST_DENSITY: f32 = 1000.0;
/// Constraint-force mixing relaxation `eps_rel / h^2`.
const RELAXATION_REL: f32 = 1e-6;
/// Padding for the tail of a block: far outside every support.
const FAR: f32 = 1e6;

/// The candidate blocks of `PARTICLES` particles, each block consecutive in SoA arrays.
struct Blocks {
    centre: Vec<[f32; 3]>,
    lambda_centre: Vec<f32>,
    /// Block `b` is `start[b]..start[b + 1]`.
    start: Vec<usize>,
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    lambda: Vec<f32>,
}

impl Blocks {
    fn block(&self, b: usize) -> Block<'_> {
        let range = self.start[b]..self.start[b + 1];
        Block {
            centre: self.centre[b],
            x: &self.x[range.clone()],
            y: &self.y[range.clone()],
            z: &self.z[range.clone()],
            lambda: &self.lambda[range],
        }
    }

    fn pairs(&self) -> usize {
        self.x.len()
    }
}

#[derive(Clone, Copy)]
struct Block<'a> {
    centre: [f32; 3],
    x: &'a [f32],
    y: &'a [f32],
    z: &'a [f32],
    lambda: &'a [f32],
}

fn scene(h: f32) -> Blocks {
    let mut random = SplitMix64(0x5eed);
    let cells = (LATTICE as f32 * SPACING / h).ceil() as usize;
    let mut cell_points: Vec<Vec<[f32; 3]>> = vec![Vec::new(); cells.pow(3)];
    let cell_of = |p: [f32; 3]| p.map(|c| ((c / h) as usize).min(cells - 1));
    let index = |c: [usize; 3]| (c[2] * cells + c[1]) * cells + c[0];
    for n in 0..LATTICE.pow(3) {
        let lattice = [n % LATTICE, (n / LATTICE) % LATTICE, n / LATTICE.pow(2)];
        // Half a spacing in, jittered by up to a quarter spacing per axis.
        let p = lattice.map(|l| (l as f32 + 0.5 + 0.25 * random.signed()) * SPACING);
        cell_points[index(cell_of(p))].push(p);
    }
    // Particles i from interior cells (all 27 neighbours present), spread over the box.
    let interior: Vec<[f32; 3]> = cell_points
        .iter()
        .enumerate()
        .filter(|(c, _)| {
            let c = [c % cells, (c / cells) % cells, c / cells.pow(2)];
            c.iter().all(|&a| a >= 1 && a + 2 <= cells)
        })
        .flat_map(|(_, points)| points.iter().copied())
        .collect();
    let stride = interior.len() / PARTICLES;
    let mut blocks = Blocks {
        centre: Vec::new(),
        lambda_centre: Vec::new(),
        start: vec![0],
        x: Vec::new(),
        y: Vec::new(),
        z: Vec::new(),
        lambda: Vec::new(),
    };
    for i in 0..PARTICLES {
        let p = interior[i * stride];
        let c = cell_of(p);
        blocks.centre.push(p);
        blocks.lambda_centre.push(-1e-3 * (random.signed() + 1.0));
        for dz in 0..3 {
            for dy in 0..3 {
                for dx in 0..3 {
                    let neighbour = [c[0] + dx - 1, c[1] + dy - 1, c[2] + dz - 1];
                    for q in &cell_points[index(neighbour)] {
                        blocks.x.push(q[0]);
                        blocks.y.push(q[1]);
                        blocks.z.push(q[2]);
                        blocks.lambda.push(-1e-3 * (random.signed() + 1.0));
                    }
                }
            }
        }
        blocks.start.push(blocks.x.len());
    }
    blocks
}

/// Eight consecutive values; the slice has exactly `LANES` elements.
#[inline(always)]
fn load(values: &[f32]) -> f32x8 {
    f32x8::from(<[f32; LANES]>::try_from(values).expect("a full chunk"))
}

/// The last, partial chunk of a block, padded with `pad`.
#[inline(always)]
fn load_tail(values: &[f32], pad: f32) -> f32x8 {
    let mut lanes = [pad; LANES];
    lanes[..values.len()].copy_from_slice(values);
    f32x8::from(lanes)
}

/// How a lane loop walks the chunks of eight consecutive candidates of a block.
type Walk = u8;
/// Every chunk, no test: the kernels' masks zero the lanes outside `h`.
const EVERY_CHUNK: Walk = 0;
/// Every chunk, skipping the work of those with no candidate within `h` by a branch.
const SKIP_EMPTY: Walk = 1;

/// Offsets `p_i - p_j` and `lambda_j` of chunk `c` of a block; the last, partial
/// chunk is padded with far-away candidates.
#[inline(always)]
fn chunk(block: Block<'_>, p: [f32x8; 3], c: usize) -> ([f32x8; 3], f32x8) {
    let range = c * LANES..(c + 1) * LANES;
    let (x, y, z, lambda) = if range.end <= block.x.len() {
        (
            load(&block.x[range.clone()]),
            load(&block.y[range.clone()]),
            load(&block.z[range.clone()]),
            load(&block.lambda[range]),
        )
    } else {
        (
            load_tail(&block.x[range.start..], FAR),
            load_tail(&block.y[range.start..], FAR),
            load_tail(&block.z[range.start..], FAR),
            load_tail(&block.lambda[range.start..], 0.0),
        )
    };
    ([p[0] - x, p[1] - y, p[2] - z], lambda)
}

/// Calls `body(offsets, r2, lambda_j)` for the chunks of `block` that `WALK` selects.
#[inline(always)]
fn walk<const WALK: Walk>(
    block: Block<'_>,
    h2: f32,
    mut body: impl FnMut([f32x8; 3], f32x8, f32x8),
) {
    let p = block.centre.map(f32x8::splat);
    let h2 = f32x8::splat(h2);
    let chunks = block.x.len().div_ceil(LANES);
    for c in 0..chunks {
        let (x, lambda) = chunk(block, p, c);
        let r2 = norm2_lanes(x);
        if WALK == SKIP_EMPTY && !r2.simd_lt(h2).any() {
            continue;
        }
        body(x, r2, lambda);
    }
}

/// The parameters the passes share.
struct Setup {
    kernel: Kernel<3>,
    tensile: TensileCorrection,
    mass: f32,
    relaxation: f32,
}

impl Setup {
    fn new(h: f32) -> Self {
        let kernel = Kernel::<3>::new(h).expect("a valid radius");
        let tensile = TensileCorrection::new(&kernel, 0.1, 4, 0.2).expect("the defaults");
        Self {
            kernel,
            tensile,
            mass: REST_DENSITY * SPACING.powi(3),
            relaxation: RELAXATION_REL / (h * h),
        }
    }

    fn scale(&self) -> f32 {
        self.mass / REST_DENSITY
    }

    /// `lambda_i = -C_i / (sum_k |grad_k C_i|^2 + eps)` from the sums of the pass.
    fn lambda_from(&self, (rho, grad_i, sum_grad2): LambdaSums) -> f32 {
        let constraint = rho / REST_DENSITY - 1.0;
        -constraint / (sum_grad2 + norm2(grad_i) + self.relaxation)
    }
}

/// Offsets `p_i - p_j` of a block, one candidate at a time.
fn offsets(block: Block<'_>) -> impl Iterator<Item = ([f32; 3], f32)> + '_ {
    let p = block.centre;
    block
        .x
        .iter()
        .zip(block.y)
        .zip(block.z)
        .zip(block.lambda)
        .map(move |(((x, y), z), lambda)| ([p[0] - x, p[1] - y, p[2] - z], *lambda))
}

// ---------------------------------------------------------------------------------
// Pass 1: density

fn density_scalar(s: &Setup, block: Block<'_>) -> f32 {
    let mut rho = 0.0;
    for (x, _) in offsets(block) {
        rho += s.kernel.density_term(s.mass, norm2(x));
    }
    rho
}

fn density_scalar_cutoff(s: &Setup, block: Block<'_>) -> f32 {
    let h2 = s.kernel.h2();
    let mut rho = 0.0;
    for (x, _) in offsets(block) {
        let r2 = norm2(x);
        if within(r2, h2) {
            rho += s.kernel.density_term(s.mass, r2);
        }
    }
    rho
}

fn density_lanes<const WALK: Walk>(s: &Setup, block: Block<'_>) -> f32 {
    let mut rho = f32x8::ZERO;
    walk::<WALK>(block, s.kernel.h2(), |_, r2, _| {
        rho += s.kernel.density_term_lanes(s.mass, r2);
    });
    rho.reduce_add()
}

// ---------------------------------------------------------------------------------
// Pass 2: lambda (density, constraint gradient, squared gradient norms)

/// `rho_i`, `grad_{p_i} C_i` and `sum_j |grad_{p_j} C_i|^2`.
type LambdaSums = (f32, [f32; 3], f32);

fn lambda_scalar(s: &Setup, block: Block<'_>) -> LambdaSums {
    let scale = s.scale();
    let (mut rho, mut grad_i, mut sum_grad2) = (0.0, [0.0f32; 3], 0.0);
    for (x, _) in offsets(block) {
        let r2 = norm2(x);
        rho += s.kernel.density_term(s.mass, r2);
        let factor = s.kernel.spiky_gradient_factor(r2);
        let g = s.kernel.constraint_gradient(scale, factor, x);
        for (sum, c) in grad_i.iter_mut().zip(g) {
            *sum += c;
        }
        sum_grad2 += norm2(g);
    }
    (rho, grad_i, sum_grad2)
}

fn lambda_scalar_cutoff(s: &Setup, block: Block<'_>) -> LambdaSums {
    let scale = s.scale();
    let h2 = s.kernel.h2();
    let (mut rho, mut grad_i, mut sum_grad2) = (0.0, [0.0f32; 3], 0.0);
    for (x, _) in offsets(block) {
        let r2 = norm2(x);
        if !within(r2, h2) {
            continue;
        }
        rho += s.kernel.density_term(s.mass, r2);
        let factor = s.kernel.spiky_gradient_factor(r2);
        let g = s.kernel.constraint_gradient(scale, factor, x);
        for (sum, c) in grad_i.iter_mut().zip(g) {
            *sum += c;
        }
        sum_grad2 += norm2(g);
    }
    (rho, grad_i, sum_grad2)
}

fn lambda_lanes<const WALK: Walk>(s: &Setup, block: Block<'_>) -> LambdaSums {
    let scale = s.scale();
    let (mut rho, mut grad_i, mut sum_grad2) = (f32x8::ZERO, [f32x8::ZERO; 3], f32x8::ZERO);
    walk::<WALK>(block, s.kernel.h2(), |x, r2, _| {
        rho += s.kernel.density_term_lanes(s.mass, r2);
        let factor = s.kernel.spiky_gradient_factor_lanes(r2);
        let g = s.kernel.constraint_gradient_lanes(scale, factor, x);
        for (sum, c) in grad_i.iter_mut().zip(g) {
            *sum += c;
        }
        sum_grad2 += norm2_lanes(g);
    });
    (
        rho.reduce_add(),
        grad_i.map(f32x8::reduce_add),
        sum_grad2.reduce_add(),
    )
}

// ---------------------------------------------------------------------------------
// Pass 3: position delta (s_corr and the delta term)

fn delta_scalar(s: &Setup, block: Block<'_>, lambda_i: f32) -> [f32; 3] {
    let scale = s.scale();
    let mut dp = [0.0f32; 3];
    for (x, lambda_j) in offsets(block) {
        let r2 = norm2(x);
        let s_corr = s.tensile.s_corr_from_poly6(s.kernel.poly6(r2));
        let factor = s.kernel.spiky_gradient_factor(r2);
        let d = s
            .kernel
            .position_delta_term(scale, lambda_i + lambda_j, s_corr, factor, x);
        for (sum, c) in dp.iter_mut().zip(d) {
            *sum += c;
        }
    }
    dp
}

fn delta_scalar_cutoff(s: &Setup, block: Block<'_>, lambda_i: f32) -> [f32; 3] {
    let scale = s.scale();
    let h2 = s.kernel.h2();
    let mut dp = [0.0f32; 3];
    for (x, lambda_j) in offsets(block) {
        let r2 = norm2(x);
        if !within(r2, h2) {
            continue;
        }
        let s_corr = s.tensile.s_corr_from_poly6(s.kernel.poly6(r2));
        let factor = s.kernel.spiky_gradient_factor(r2);
        let d = s
            .kernel
            .position_delta_term(scale, lambda_i + lambda_j, s_corr, factor, x);
        for (sum, c) in dp.iter_mut().zip(d) {
            *sum += c;
        }
    }
    dp
}

fn delta_lanes<const WALK: Walk>(s: &Setup, block: Block<'_>, lambda_i: f32) -> [f32; 3] {
    let scale = s.scale();
    let lambda_i = f32x8::splat(lambda_i);
    let mut dp = [f32x8::ZERO; 3];
    walk::<WALK>(block, s.kernel.h2(), |x, r2, lambda_j| {
        let s_corr = s.tensile.s_corr_from_poly6_lanes(s.kernel.poly6_lanes(r2));
        let factor = s.kernel.spiky_gradient_factor_lanes(r2);
        let d = s
            .kernel
            .position_delta_term_lanes(scale, lambda_i + lambda_j, s_corr, factor, x);
        for (sum, c) in dp.iter_mut().zip(d) {
            *sum += c;
        }
    });
    dp.map(f32x8::reduce_add)
}

// ---------------------------------------------------------------------------------

/// The loops must agree before they are timed: the lanes sum in another order, so
/// the results match to rounding, not bit for bit.
fn check_agreement(s: &Setup, blocks: &Blocks) {
    let close = |a: f32, b: f32, scale: f32| (a - b).abs() <= 1e-4 * scale.abs().max(1e-30);
    for b in 0..PARTICLES {
        let block = blocks.block(b);
        let rho = density_scalar(s, block);
        assert!(rho > 0.0);
        assert_eq!(rho, density_scalar_cutoff(s, block));
        assert!(
            close(rho, density_lanes::<EVERY_CHUNK>(s, block), rho),
            "density of {b}"
        );
        assert!(
            close(rho, density_lanes::<SKIP_EMPTY>(s, block), rho),
            "density of {b}"
        );
        // Compare the sums: lambda itself divides the cancellation rho / rho0 - 1.
        let sums = lambda_scalar(s, block);
        let gradient_size = norm2(sums.1).sqrt().max(sums.2.sqrt());
        for (name, other) in [
            ("lanes", lambda_lanes::<EVERY_CHUNK>(s, block)),
            ("lanes_skip_empty", lambda_lanes::<SKIP_EMPTY>(s, block)),
            ("cutoff", lambda_scalar_cutoff(s, block)),
        ] {
            let same = close(sums.0, other.0, sums.0)
                && sums
                    .1
                    .iter()
                    .zip(other.1)
                    .all(|(a, c)| close(*a, c, gradient_size))
                && close(sums.2, other.2, sums.2);
            assert!(same, "lambda sums of {b} ({name}): {sums:?} vs {other:?}");
        }
        assert!(s.lambda_from(sums).is_finite());
        let lambda_i = blocks.lambda_centre[b];
        let dp = delta_scalar(s, block, lambda_i);
        let size = norm2(dp).sqrt();
        for (name, other) in [
            ("lanes", delta_lanes::<EVERY_CHUNK>(s, block, lambda_i)),
            (
                "lanes_skip_empty",
                delta_lanes::<SKIP_EMPTY>(s, block, lambda_i),
            ),
            ("cutoff", delta_scalar_cutoff(s, block, lambda_i)),
        ] {
            for (a, c) in dp.iter().zip(other) {
                assert!(
                    close(*a, c, size),
                    "delta of {b} ({name}): {dp:?} vs {other:?}"
                );
            }
        }
    }
}

fn kernels(c: &mut Criterion) {
    let h = black_box(2.0 * SPACING);
    let setup = Setup::new(h);
    let blocks = scene(h);
    let inside = (0..PARTICLES)
        .flat_map(|b| offsets(blocks.block(b)).map(|(x, _)| norm2(x)))
        .filter(|&r2| within(r2, setup.kernel.h2()))
        .count();
    let (mut chunks, mut live) = (0, 0);
    for b in 0..PARTICLES {
        walk::<EVERY_CHUNK>(blocks.block(b), setup.kernel.h2(), |_, _, _| chunks += 1);
        walk::<SKIP_EMPTY>(blocks.block(b), setup.kernel.h2(), |_, _, _| live += 1);
    }
    let empty = chunks - live;
    eprintln!("{}", pbf_benches::machine::describe());
    eprintln!(
        "kernels: f32x8 backend {}, {} particles, {} candidate pairs, {:.1}% within h (1 in {:.1}), \
         {:.1}% of {} chunks of {LANES} with none within h",
        pbf_kernels::simd_backend(),
        PARTICLES,
        blocks.pairs(),
        100.0 * inside as f64 / blocks.pairs() as f64,
        blocks.pairs() as f64 / inside as f64,
        100.0 * empty as f64 / chunks as f64,
        chunks,
    );
    check_agreement(&setup, &blocks);

    let mut out = vec![0.0f32; PARTICLES];
    let mut out3 = vec![[0.0f32; 3]; PARTICLES];

    macro_rules! loops {
        ($group:ident, $out:ident, [$($name:literal => $pass:expr),+ $(,)?]) => {
            $(
                $group.bench_function($name, |bench| {
                    bench.iter(|| {
                        for (b, out) in $out.iter_mut().enumerate() {
                            *out = $pass(&setup, blocks.block(b), blocks.lambda_centre[b]);
                        }
                        black_box(&$out);
                    })
                });
            )+
        };
    }

    let mut group = c.benchmark_group("kernels/density");
    group.throughput(Throughput::Elements(blocks.pairs() as u64));
    loops!(group, out, [
        "scalar" => |s, block, _| density_scalar(s, block),
        "scalar_cutoff" => |s, block, _| density_scalar_cutoff(s, block),
        "lanes" => |s, block, _| density_lanes::<EVERY_CHUNK>(s, block),
        "lanes_skip_empty" => |s, block, _| density_lanes::<SKIP_EMPTY>(s, block),
    ]);
    group.finish();

    let mut group = c.benchmark_group("kernels/lambda");
    group.throughput(Throughput::Elements(blocks.pairs() as u64));
    loops!(group, out, [
        "scalar" => |s: &Setup, block, _| s.lambda_from(lambda_scalar(s, block)),
        "scalar_cutoff" => |s: &Setup, block, _| s.lambda_from(lambda_scalar_cutoff(s, block)),
        "lanes" => |s: &Setup, block, _| s.lambda_from(lambda_lanes::<EVERY_CHUNK>(s, block)),
        "lanes_skip_empty" => |s: &Setup, block, _| s.lambda_from(lambda_lanes::<SKIP_EMPTY>(s, block)),
    ]);
    group.finish();

    let mut group = c.benchmark_group("kernels/position_delta");
    group.throughput(Throughput::Elements(blocks.pairs() as u64));
    loops!(group, out3, [
        "scalar" => delta_scalar,
        "scalar_cutoff" => delta_scalar_cutoff,
        "lanes" => delta_lanes::<EVERY_CHUNK>,
        "lanes_skip_empty" => delta_lanes::<SKIP_EMPTY>,
    ]);
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = kernels
}
criterion_main!(benches);
