//! Kernel functions and pair terms of Position Based Fluids (Macklin & Müller 2013),
//! in 2D and 3D, each written twice with the same shape:
//!
//! - a **scalar reference** on plain `f32`, written as the textbook formula: it is the
//!   specification;
//! - a **lane version**, generic over [`SimdF32`] and used here on [`f32x8`] (eight
//!   pairs in structure-of-arrays form: lanes of offsets in, lanes of contributions
//!   out; `pbf-solver` runs the same formulas on sixteen AVX-512 lanes), masked so that
//!   lanes outside the support (`r^2 >= h^2`) and, for gradients, at `r = 0` are
//!   exactly zero.
//!
//! The property tests in `tests/` hold every lane version **bit-identical** to its
//! scalar reference: both use only IEEE-754 correctly rounded operations (`+ - * /`
//! and `sqrt`) in the same order, with no fused multiply-add and no approximate
//! reciprocal, so the result does not depend on the instruction set either.
//!
//! | term | 3D | 2D |
//! |---|---|---|
//! | [poly6](Kernel::poly6) `W(r)` | `315/(64 pi h^9) (h^2 - r^2)^3` | `4/(pi h^8) (h^2 - r^2)^3` |
//! | [spiky gradient](Kernel::spiky_gradient) | `-45/(pi h^6) (h - r)^2 x/r` | `-30/(pi h^5) (h - r)^2 x/r` |
//! | [s_corr](TensileCorrection) | `-k (W(r)/W(dq))^n` | same |
//!
//! and the [pair terms](Kernel::density_term) the solver sums: density, constraint
//! gradient, position delta, XSPH viscosity, curl and the gradient of the vorticity
//! magnitude.
//!
//! # Example
//! ```
//! use pbf_kernels::{Kernel, f32x8, norm2};
//!
//! let kernel = Kernel::<3>::new(0.1)?;
//! // Density of a particle with one neighbour 0.05 away, self included.
//! let mass = 0.001;
//! let neighbour = [0.05, 0.0, 0.0];
//! let rho = kernel.density_term(mass, 0.0) + kernel.density_term(mass, norm2(neighbour));
//!
//! // The same neighbour in lane 0 of eight, the other lanes outside the support.
//! let mut r2 = [1.0f32; 8];
//! r2[0] = norm2(neighbour);
//! let lanes = kernel.density_term_lanes(mass, f32x8::from(r2));
//! assert_eq!(lanes.reduce_add(), kernel.density_term(mass, norm2(neighbour)));
//! assert!(rho > 0.0);
//! # Ok::<(), pbf_kernels::KernelError>(())
//! ```
//!
//! # Instruction set
//!
//! `wide` chooses its instructions at **compile time** from the target features. A
//! plain `cargo build` targets baseline x86-64, where an [`f32x8`] is two SSE2
//! registers. To get AVX2 (one 256-bit register per `f32x8`) build with a wider CPU
//! target, either for one command:
//!
//! ```text
//! RUSTFLAGS="-C target-cpu=native" cargo bench
//! RUSTFLAGS="-C target-cpu=x86-64-v3" cargo build --release   # AVX2 + FMA, portable to 2015+ CPUs
//! ```
//!
//! or for a whole project in `.cargo/config.toml`:
//!
//! ```text
//! [build]
//! rustflags = ["-C", "target-cpu=x86-64-v3"]
//! ```
//!
//! `x86-64-v4` (or `native` on an AVX-512 machine) enables AVX-512 as well; `f32x8`
//! still uses 256-bit registers there. [`simd_backend`] tells which one a build uses.
//! Because the lanes never use fused or approximate operations, the results are the
//! same bits under every target.
#![deny(missing_docs)]
// `unsafe` is allowed only in the lane backends (`lane/`), each block with its
// `SAFETY` note.
#![deny(unsafe_code)]

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod corner;
mod error;
mod kernel;
mod lane;
mod pair;
mod poly6;
mod simd;
mod spiky;
mod tensile;
mod viscosity;
mod walls;

pub use corner::{CORNER_SAMPLES, CornerTables};
pub use error::KernelError;
pub use kernel::Kernel;
#[cfg(target_arch = "x86_64")]
pub use lane::Sift16;
pub use lane::{
    Bounded, Eight, Index, Lane, LaneKind, MAX_WIDTH, WithEight, WithLane, load8, prefetch,
};
pub use simd::SimdF32;
pub use tensile::TensileCorrection;
pub use walls::{SAMPLES, WallTables};
pub use wide::f32x8;

/// Number of lanes in [`f32x8`].
///
/// ```
/// assert_eq!(pbf_kernels::LANES, 8);
/// ```
pub const LANES: usize = 8;

/// The one support predicate of the project: a pair at squared distance `r2` interacts
/// when `r2 < h2`, strictly; NaN is never within. The kernels are zero at `r = h`
/// anyway; the neighbour search (`pbf-grid`, which re-exports it) uses the same test.
///
/// ```
/// assert!(pbf_kernels::within(0.99, 1.0));
/// assert!(!pbf_kernels::within(1.0, 1.0));
/// assert!(!pbf_kernels::within(f32::NAN, 1.0));
/// ```
#[inline]
pub fn within(r2: f32, h2: f32) -> bool {
    r2 < h2
}

/// The squared distance of two points: [`norm2`] of `a - b`, the axes summed in
/// order, in `f32` without fused multiply-adds. It is symmetric bit for bit, so a
/// brute-force search that uses it with [`within`] finds exactly the neighbour
/// search's pairs.
///
/// ```
/// assert_eq!(pbf_kernels::distance2([0.0, 0.0, 0.0], [1.0, 2.0, 2.0]), 9.0);
/// assert_eq!(pbf_kernels::distance2([1.0, 2.0], [0.5, 0.0]), pbf_kernels::distance2([0.5, 0.0], [1.0, 2.0]));
/// ```
#[inline(always)]
pub fn distance2<const D: usize>(a: [f32; D], b: [f32; D]) -> f32 {
    norm2(core::array::from_fn::<f32, D, _>(|k| a[k] - b[k]))
}

/// Squared length `x_0^2 + x_1^2 (+ x_2^2)`, summed from the first axis on.
///
/// ```
/// assert_eq!(pbf_kernels::norm2([3.0, 4.0]), 25.0);
/// ```
#[inline]
pub fn norm2<const D: usize>(x: [f32; D]) -> f32 {
    let mut s = x[0] * x[0];
    for c in &x[1..] {
        s += c * c;
    }
    s
}

/// Lanes version of [`norm2`], the same operations in the same order.
///
/// ```
/// use pbf_kernels::{f32x8, norm2_lanes};
/// let n = norm2_lanes([f32x8::splat(3.0), f32x8::splat(4.0)]);
/// assert_eq!(n.to_array(), [25.0; 8]);
/// ```
#[inline(always)]
pub fn norm2_lanes<V: SimdF32, const D: usize>(x: [V; D]) -> V {
    let mut s = x[0] * x[0];
    for c in &x[1..] {
        s += *c * *c;
    }
    s
}

/// The SIMD instruction set [`f32x8`] was compiled for in this build: `"avx"`
/// (one 256-bit register), `"sse2"` (two 128-bit registers) or `"scalar"`.
///
/// ```
/// let backend = pbf_kernels::simd_backend();
/// assert!(["avx", "sse2", "scalar"].contains(&backend));
/// ```
pub fn simd_backend() -> &'static str {
    if cfg!(target_feature = "avx") {
        "avx"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else {
        "scalar"
    }
}

/// Pads a 2D or 3D vector to three components with zeros.
#[inline]
pub(crate) fn pad3<const D: usize>(x: [f32; D]) -> [f32; 3] {
    let mut out = [0.0; 3];
    out[..D].copy_from_slice(&x);
    out
}

/// Lanes version of [`pad3`].
#[inline(always)]
pub(crate) fn pad3_lanes<V: SimdF32, const D: usize>(x: [V; D]) -> [V; 3] {
    let mut out = [V::splat(0.0); 3];
    out[..D].copy_from_slice(&x);
    out
}
