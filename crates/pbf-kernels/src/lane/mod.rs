//! The lanes every neighbour pass is written in, one backend per file.
//!
//! [`Lane`] is implemented for `f32` (one particle at a time through the scalar
//! reference, `scalar.rs`), for `wide`'s [`f32x8`] (eight, with the build's target
//! features, `portable.rs`), and on x86-64 for one AVX register of eight (`avx.rs`) and
//! one AVX-512 register of sixteen (`avx512.rs`). A pass is written once, generic over
//! `L: Lane`: a lane holds one particle, which walks its own neighbour list in order,
//! so every width gives the bits of the scalar path. [`LaneKind`] names the backends
//! and picks one at run time ([`LaneKind::dispatch`]); the x86-64 types are private, so
//! a pass meets them only through the dispatcher, after the CPU's features are
//! checked.

#![allow(unsafe_code)]

use crate::{Kernel, SimdF32, TensileCorrection, WallTables};
#[cfg(doc)]
use wide::f32x8;

#[cfg(target_arch = "x86_64")]
mod avx;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod bounded;
mod dispatch;
mod portable;
mod prefetch;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod sift16;

pub use bounded::Bounded;
pub use dispatch::{LaneKind, WithEight, WithLane};
pub use prefetch::prefetch;
#[cfg(target_arch = "x86_64")]
pub use sift16::Sift16;

/// The most lanes any backend holds: a buffer of this many values takes any lane
/// type's [`store`](Lane::store).
pub const MAX_WIDTH: usize = 16;

/// An entry of a neighbour list's columns: a `u32` index, or a `u16` offset from a
/// group's base.
pub trait Index: Copy {
    /// The largest entry the type holds.
    const MAX: usize;
    /// The entry as an index.
    fn at(self) -> usize;
}

impl Index for u32 {
    const MAX: usize = u32::MAX as usize;
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}

impl Index for u16 {
    const MAX: usize = u16::MAX as usize;
    #[inline(always)]
    fn at(self) -> usize {
        usize::from(self)
    }
}

/// A value that holds one (`f32`), eight or sixteen particles' quantities: the
/// operations the neighbour passes are written in (loads, gathers and transposes,
/// masks, the pair terms of [`Kernel`] and [`TensileCorrection`], the walls of
/// [`WallTables`]). Every operation gives, lane by lane, the bits of the scalar
/// reference.
///
/// The lane arithmetic and comparisons are those of [`SimdF32`], which every lane type
/// implements (`f32` as one lane). The types live in this crate, one file per
/// backend; a pass gets one from [`LaneKind::dispatch`], which checks the CPU first.
///
/// # Example
/// A density pass over explicit neighbour lists, on the widest lanes of this CPU, equal
/// bit for bit to the scalar path:
/// ```
/// use pbf_kernels::{Kernel, Lane, LaneKind, WithLane};
///
/// struct Densities<'a> {
///     kernel: &'a Kernel<2>,
///     x: [&'a [f32]; 2],
///     lists: &'a [Vec<u32>],
/// }
///
/// impl WithLane for Densities<'_> {
///     type Output = Vec<f32>;
///     fn run<L: Lane>(self) -> Vec<f32> {
///         L::run(|| {
///             let mut out = vec![0.0; self.lists.len()];
///             for (i, list) in self.lists.iter().enumerate() {
///                 // One particle in lane 0; the other lanes hold copies (a real pass
///                 // fills them with other particles).
///                 let mut sum = L::poly6(self.kernel, L::splat(0.0));
///                 for &j in list {
///                     let indices = [j; pbf_kernels::MAX_WIDTH];
///                     let xj = [0, 1].map(|a| L::gather(self.x[a], &indices));
///                     let d = [0, 1].map(|a| L::splat(self.x[a][i]) - xj[a]);
///                     sum += L::poly6(self.kernel, L::norm2(d));
///                 }
///                 sum.store(&mut out[i..i + 1]);
///             }
///             out
///         })
///     }
/// }
///
/// let kernel = Kernel::<2>::new(1.0)?;
/// let (x, y) = ([0.0f32, 0.5, 0.9], [0.0f32, 0.0, 0.3]);
/// let lists = vec![vec![1, 2], vec![0, 2], vec![0, 1]];
/// let pass = || Densities { kernel: &kernel, x: [&x, &y], lists: &lists };
/// let widest = LaneKind::widest().dispatch(pass())?;
/// let scalar = LaneKind::Scalar.dispatch(pass())?;
/// assert_eq!(widest, scalar);
/// assert_eq!(scalar[0], kernel.poly6(0.0) + kernel.poly6(0.25) + kernel.poly6(0.9));
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
pub trait Lane: SimdF32 + Send + Sync {
    /// How many particles one value holds.
    const WIDTH: usize;
    /// Runs a pass body compiled for the instructions this width needs.
    /// The body must be an `#[inline(always)]` closure: the sixteen
    /// lanes run it inside a function compiled for AVX-512F, and a body the compiler
    /// chose not to inline there would be compiled without it, every intrinsic a call
    /// (an out-of-line body costs a call for every lane operation).
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    /// The values `s[indices[lane]]`, without a bounds check: the safe forms are
    /// [`gather`](Self::gather) and [`gather_in`](Self::gather_in).
    ///
    /// # Safety
    /// Every index is less than `s.len()` (the vector widths load without a bounds
    /// check: a check a lane, and the register spills it causes, are a large part of
    /// a pass's time).
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries.
    unsafe fn gather_unchecked<I: Index>(s: &[f32], indices: &[I]) -> Self;
    /// The four values of `quads[indices[lane]]`, as four lane vectors (a transpose:
    /// one load of sixteen bytes per neighbour instead of four gathered loads), from
    /// the first `WIDTH` indices: `u32` indices, or `u16` offsets into the quads from
    /// a narrow group's base on. Without a bounds check: the safe forms are
    /// [`gather4`](Self::gather4) and [`gather4_in`](Self::gather4_in).
    ///
    /// # Safety
    /// Every index is less than `quads.len()`, as for
    /// [`gather_unchecked`](Self::gather_unchecked).
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries.
    unsafe fn gather4_unchecked<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4];
    /// The values `s[indices[lane]]` of the first `WIDTH` indices.
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries, or one of them is not an index
    /// of `s`.
    #[inline(always)]
    fn gather<I: Index>(s: &[f32], indices: &[I]) -> Self {
        let checked = Bounded::new(&indices[..Self::WIDTH], s.len());
        Self::gather_in(s, checked.expect("gather: every index inside the values"))
    }
    /// The four values of `quads[indices[lane]]` of the first `WIDTH` indices, as
    /// four lane vectors.
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries, or one of them is not an index
    /// of `quads`.
    #[inline(always)]
    fn gather4<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4] {
        let checked = Bounded::new(&indices[..Self::WIDTH], quads.len());
        Self::gather4_in(
            quads,
            checked.expect("gather4: every index inside the quads"),
        )
    }
    /// [`gather`](Self::gather) by indices checked beforehand: one comparison of the
    /// lengths, none a lane.
    ///
    /// # Panics
    /// When `s` is shorter than the indices' bound, or there are fewer than `WIDTH`
    /// indices.
    #[inline(always)]
    fn gather_in<I: Index>(s: &[f32], indices: Bounded<'_, I>) -> Self {
        assert!(
            s.len() >= indices.bound(),
            "gather: a value below the bound"
        );
        // SAFETY: every index is below the bound (`Bounded`'s invariant), at most
        // `s.len()` (asserted above).
        unsafe { Self::gather_unchecked(s, indices.indices()) }
    }
    /// [`gather4`](Self::gather4) by indices checked beforehand: one comparison of
    /// the lengths, none a lane.
    ///
    /// # Panics
    /// When `quads` is shorter than the indices' bound, or there are fewer than
    /// `WIDTH` indices.
    #[inline(always)]
    fn gather4_in<I: Index>(quads: &[[f32; 4]], indices: Bounded<'_, I>) -> [Self; 4] {
        assert!(
            quads.len() >= indices.bound(),
            "gather4: a quad below the bound"
        );
        // SAFETY: every index is below the bound (`Bounded`'s invariant), at most
        // `quads.len()` (asserted above).
        unsafe { Self::gather4_unchecked(quads, indices.indices()) }
    }
    /// The first `WIDTH` values of `s`, in order.
    ///
    /// # Panics
    /// When `s` has fewer than `WIDTH` values.
    fn from_slice(s: &[f32]) -> Self;
    /// The list lengths `counts[..WIDTH]` as values (exact: a list is far shorter than
    /// 2^24 entries), for [`mask_counts`](Self::mask_counts).
    fn counts(counts: &[u32]) -> Self;
    /// `r2` with every lane whose count is at most `slot` set to +inf. The slot's
    /// index comes as lanes (counted up by the caller) rather than as an integer:
    /// converting an integer in the loop (`k as f32`, `vcvtusi2ss`) writes only the low
    /// lane of a register and keeps the others of a register the allocator picks,
    /// which can be a pass's sum, chaining every slot to the previous one.
    fn mask_counts(r2: Self, counts: Self, slot: Self) -> Self;
    /// The first `out.len()` lanes (at most `WIDTH`) into `out`.
    fn store(self, out: &mut [f32]);
    /// 1 where `r2 < h2`, else 0.
    fn indicator(r2: Self, h2: f32) -> Self;
    /// `yes` in the lanes where `self > other` (false where either is NaN), else `no`.
    fn select_gt(self, other: Self, yes: Self, no: Self) -> Self;
    /// The correctly rounded square root of every lane.
    fn square_root(self) -> Self;
    /// `self` where it is above 0, else `+0.0` (also for NaN and `-0.0`): on x86-64
    /// the result of `maxss(self, 0)`, which `f32::max(self, 0.0)` compiles to.
    #[inline(always)]
    fn max_zero(self) -> Self {
        self.select_gt(Self::splat(0.0), self, Self::splat(0.0))
    }
    /// [`Kernel::poly6`] of every lane.
    fn poly6<const D: usize>(k: &Kernel<D>, r2: Self) -> Self;
    /// [`Kernel::spiky_gradient_factor`] of every lane.
    fn gradient_factor<const D: usize>(k: &Kernel<D>, r2: Self) -> Self;
    /// The gradient factor with the slope `dW/dr` whose square is `|gradW|^2`
    /// ([`Kernel::spiky_gradient_factor_and_slope`]).
    fn gradient_factor_and_slope<const D: usize>(k: &Kernel<D>, r2: Self) -> (Self, Self);
    /// [`TensileCorrection::s_corr_from_poly6`] of every lane.
    fn s_corr(t: &TensileCorrection, w: Self) -> Self;
    /// [`Kernel::position_delta_term`] of every lane.
    fn position_delta<const D: usize>(
        k: &Kernel<D>,
        scale: f32,
        lambda_sum: Self,
        s_corr: Self,
        factor: Self,
        x: [Self; D],
    ) -> [Self; D];
    /// [`Kernel::xsph_term`] of every lane.
    fn xsph<const D: usize>(k: &Kernel<D>, volume: Self, dv: [Self; D], w: Self) -> [Self; D];
    /// [`Kernel::vorticity_term`] of every lane.
    fn curl<const D: usize>(
        k: &Kernel<D>,
        volume: Self,
        dv: [Self; D],
        grad: [Self; D],
    ) -> [Self; 3];
    /// The density share and constraint gradient of the faces of the box `lo..=hi`
    /// at the lanes' positions `p`: lane by lane the bits of [`WallTables::faces`].
    /// The default reads the lanes out and calls it lane by lane.
    #[inline(always)]
    fn faces<const D: usize>(
        tables: &WallTables,
        lo: [f32; D],
        hi: [f32; D],
        p: [Self; D],
    ) -> (Self, [Self; D]) {
        let mut at = [[0.0f32; MAX_WIDTH]; D];
        for a in 0..D {
            p[a].store(&mut at[a][..Self::WIDTH]);
        }
        let (mut share, mut grad) = ([0.0f32; MAX_WIDTH], [[0.0f32; MAX_WIDTH]; D]);
        for l in 0..Self::WIDTH {
            let (s, g) = tables.faces(lo, hi, core::array::from_fn(|a| at[a][l]));
            share[l] = s;
            for a in 0..D {
                grad[a][l] = g[a];
            }
        }
        (Self::from_slice(&share), grad.map(|g| Self::from_slice(&g)))
    }
    /// Whether the positions `p` of the first `width` lanes (at least one) are all at
    /// least `h` from every face of the box `lo..=hi` (`p - lo >= h` and
    /// `hi - p >= h` on every axis, a coordinate that is not finite failing), on
    /// positions already in registers.
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool;
    /// Squared length, first axis first (the order of [`crate::norm2`]).
    #[inline(always)]
    fn norm2<const D: usize>(x: [Self; D]) -> Self {
        let mut s = x[0] * x[0];
        for c in &x[1..] {
            s += *c * *c;
        }
        s
    }
}

/// The per-pair terms of a lane type that implements `crate::SimdF32` (and has a
/// `to_array`): the generic lane formulas of `pbf-kernels`, the same for every width,
/// with the lanes' masks, stores and (in tests) index blocks.
macro_rules! simd_lane_terms {
    () => {
        #[inline(always)]
        fn mask_counts(r2: Self, counts: Self, slot: Self) -> Self {
            let inf = <Self as crate::SimdF32>::splat(f32::INFINITY);
            <Self as crate::SimdF32>::select(crate::SimdF32::gt(counts, slot), r2, inf)
        }
        #[inline(always)]
        fn store(self, out: &mut [f32]) {
            $crate::lane::store_first(self.to_array(), out)
        }
        #[inline(always)]
        fn square_root(self) -> Self {
            crate::SimdF32::sqrt(self)
        }
        #[inline(always)]
        fn select_gt(self, other: Self, yes: Self, no: Self) -> Self {
            <Self as crate::SimdF32>::select(crate::SimdF32::gt(self, other), yes, no)
        }
        #[inline(always)]
        fn indicator(r2: Self, h2: f32) -> Self {
            let s = <Self as crate::SimdF32>::splat;
            <Self as crate::SimdF32>::select(crate::SimdF32::lt(r2, s(h2)), s(1.0), s(0.0))
        }
        #[inline(always)]
        fn poly6<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
            k.poly6_lanes(r2)
        }
        #[inline(always)]
        fn gradient_factor<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
            k.spiky_gradient_factor_lanes(r2)
        }
        #[inline(always)]
        fn gradient_factor_and_slope<const D: usize>(k: &Kernel<D>, r2: Self) -> (Self, Self) {
            k.spiky_gradient_factor_and_slope_lanes(r2)
        }
        #[inline(always)]
        fn s_corr(t: &TensileCorrection, w: Self) -> Self {
            t.s_corr_from_poly6_lanes(w)
        }
        #[inline(always)]
        fn position_delta<const D: usize>(
            k: &Kernel<D>,
            scale: f32,
            lambda_sum: Self,
            s_corr: Self,
            factor: Self,
            x: [Self; D],
        ) -> [Self; D] {
            k.position_delta_term_lanes(scale, lambda_sum, s_corr, factor, x)
        }
        #[inline(always)]
        fn xsph<const D: usize>(k: &Kernel<D>, volume: Self, dv: [Self; D], w: Self) -> [Self; D] {
            k.xsph_term_lanes(volume, dv, w)
        }
        #[inline(always)]
        fn curl<const D: usize>(
            k: &Kernel<D>,
            volume: Self,
            dv: [Self; D],
            grad: [Self; D],
        ) -> [Self; 3] {
            k.vorticity_term_lanes(volume, dv, grad)
        }
    };
}
pub(crate) use simd_lane_terms;

/// Eight consecutive values from `s[j..]`; lanes past the end of `s` read 0.
///
/// Eight whole values are one load. The copy of a length known only at run time
/// below is a call of `memmove`; taken for every eight candidates, it would dominate
/// a sifter's distance tests, so only a list's last, partial eight take it.
///
/// ```
/// use pbf_kernels::{Eight, f32x8, load8};
/// let s = [1.0, 2.0, 3.0];
/// let v: f32x8 = load8(&s, 1);
/// assert_eq!(v.to_array(), [2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
/// assert_eq!(v.below(f32x8::splat(2.5)), 0b1111_1101);
/// ```
///
/// # Panics
/// When `j > s.len()`.
#[inline(always)]
pub fn load8<E: Eight>(s: &[f32], j: usize) -> E {
    if let Some(eight) = s.get(j..j + 8) {
        return E::from_eight(eight.try_into().expect("eight values"));
    }
    let mut a = [0.0f32; 8];
    let rest = &s[j..(j + 8).min(s.len())];
    a[..rest.len()].copy_from_slice(rest);
    E::from_eight(&a)
}

/// Eight lanes for distance tests that give a bit mask (a neighbour search's sifter):
/// `wide`'s [`f32x8`], and on x86-64 CPUs with AVX one AVX register, picked by
/// [`LaneKind::dispatch_eight`].
pub trait Eight: Lane {
    /// The eight values of `a`, lane `l` value `l`.
    fn from_eight(a: &[f32; 8]) -> Self;
    /// Bit `l` set where lane `l` is below `limit`'s (not for a NaN).
    fn below(self, limit: Self) -> u32;
}

/// The first `out.len()` lanes of `all` (at most `N`) into `out`. A whole group
/// (every group but a chunk's last) is one store: the copy of a length known only at
/// run time is a call of `memmove`, which the passes' sums would otherwise pay for
/// every group.
#[inline(always)]
pub(crate) fn store_first<const N: usize>(all: [f32; N], out: &mut [f32]) {
    if let Ok(out) = <&mut [f32; N]>::try_from(&mut *out) {
        *out = all;
        return;
    }
    let n = out.len().min(N);
    out[..n].copy_from_slice(&all[..n]);
}
