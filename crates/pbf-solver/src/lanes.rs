//! One solver source at three widths: the [`Lane`] trait is implemented for `f32` (the
//! scalar path, which calls the scalar reference of `pbf-kernels`), for `f32x8` (eight
//! particles per instruction) and, on x86-64 CPUs with AVX-512F, for
//! [`F32x16`](crate::lanes16::F32x16) (sixteen). Every neighbour pass is written once,
//! generic over it: a lane holds one particle, which walks its own list in order
//! ([`crate::lists::Neighbourhood::for_each_slot`]), so every width gives the bits of
//! the scalar path.

use crate::boundary::Boundary;
use core::ops::{Add, AddAssign, Div, Mul, Neg, Sub};
use pbf_kernels::{Kernel, TensileCorrection, f32x8};

/// An entry of the lists' columns: a `u32` index, or a narrow group's `u16` offset.
pub(crate) trait Index: Copy {
    /// The entry as an index.
    fn at(self) -> usize;
}

impl Index for u32 {
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}

impl Index for u16 {
    #[inline(always)]
    fn at(self) -> usize {
        usize::from(self)
    }
}

/// A value that holds one (`f32`), eight (`f32x8`) or sixteen particles' quantities.
#[allow(unsafe_code)]
pub(crate) trait Lane:
    Copy
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
{
    /// How many particles one value holds.
    const WIDTH: usize;
    /// The neighbours' indices of one slot: each lane's particle's `k`-th neighbour.
    type Indices: Copy;
    /// Runs a pass body (a chunk of particles) compiled for the instructions this
    /// width needs ([`crate::lists::for_each_group`] runs the passes' groups in it).
    /// The body must be an `#[inline(always)]` closure: the sixteen
    /// lanes run it inside a function compiled for AVX-512F, and a body the compiler
    /// chose not to inline there would be compiled without it, every intrinsic a call
    /// (a change elsewhere in the crate once tipped the delta pass's body out of line:
    /// its phase took 225 ms a step at 97k instead of 15).
    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    fn splat(v: f32) -> Self;
    /// The values `s[indices[lane]]`.
    ///
    /// # Safety
    /// Every index is less than `s.len()` (the vector widths load without a bounds
    /// check: the checks, and the register spills they caused, cost the constraint
    /// and velocity phases about 18% at 97k particles).
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries.
    unsafe fn gather<I: Index>(s: &[f32], indices: &[I]) -> Self;
    /// The four values of `quads[indices[lane]]`, as four lane vectors (a transpose:
    /// one load of sixteen bytes per neighbour instead of four gathered loads), from
    /// the first `WIDTH` indices: `u32` indices, or `u16` offsets into the quads from
    /// a narrow group's base on (see the lists).
    ///
    /// # Safety
    /// Every index is less than `quads.len()`, as for [`gather`](Self::gather).
    ///
    /// # Panics
    /// When `indices` has fewer than `WIDTH` entries.
    unsafe fn gather4<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4];
    /// The block of `column[..WIDTH]`.
    #[cfg(test)]
    fn column(column: &[u32]) -> Self::Indices;
    /// The block of `base + column[..WIDTH]`: a column of 16-bit offsets (see the
    /// lists' narrow groups).
    #[cfg(test)]
    fn column16(column: &[u16], base: u32) -> Self::Indices;
    /// The list lengths `counts[..WIDTH]` as values (exact: a list is far shorter than
    /// 2^24 entries), for [`mask_counts`](Self::mask_counts).
    fn counts(counts: &[u32]) -> Self;
    /// `r2` with every lane whose count is at most `slot` set to +inf. The slot's
    /// index comes as lanes (counted up by the caller) rather than as an integer:
    /// converting an integer in the loop (`k as f32`, `vcvtusi2ss`) writes only the low
    /// lane of a register and keeps the others of a register the allocator picks,
    /// which was once a pass's sum and chained every slot to the previous one (the
    /// lambda pass took 5.6 ms instead of 4.0 ms at 97k, one thread).
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
    fn poly6<const D: usize>(k: &Kernel<D>, r2: Self) -> Self;
    fn gradient_factor<const D: usize>(k: &Kernel<D>, r2: Self) -> Self;
    /// The gradient factor with the slope `dW/dr` whose square is `|gradW|^2`
    /// ([`Kernel::spiky_gradient_factor_and_slope`]).
    fn gradient_factor_and_slope<const D: usize>(k: &Kernel<D>, r2: Self) -> (Self, Self);
    fn s_corr(t: &TensileCorrection, w: Self) -> Self;
    fn position_delta<const D: usize>(
        k: &Kernel<D>,
        scale: f32,
        lambda_sum: Self,
        s_corr: Self,
        factor: Self,
        x: [Self; D],
    ) -> [Self; D];
    fn xsph<const D: usize>(k: &Kernel<D>, volume: Self, dv: [Self; D], w: Self) -> [Self; D];
    fn curl<const D: usize>(
        k: &Kernel<D>,
        volume: Self,
        dv: [Self; D],
        grad: [Self; D],
    ) -> [Self; 3];
    /// The walls' density share and constraint gradient at the lanes' positions `p`:
    /// lane by lane the bits of [`Boundary::density_and_gradient`].
    fn walls<const D: usize>(boundary: &Boundary<'_, D>, p: [Self; D]) -> (Self, [Self; D]);
    /// Whether the positions `p` of the first `width` lanes (at least one) are all at
    /// least `h` from every face of the box `lo..=hi` (`p - lo >= h` and
    /// `hi - p >= h` on every axis, a coordinate that is not finite failing): the
    /// test [`Boundary::clear_box`] makes of their bounding box for the domain's
    /// faces, lane by lane, on positions already in registers.
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool;
}

/// The per-pair terms of a lane type that implements `pbf_kernels::SimdF32` (and has a
/// `to_array`): the generic lane formulas of `pbf-kernels`, the same for every width,
/// with the lanes' masks, stores and (in tests) index blocks.
macro_rules! simd_lane_terms {
    () => {
        #[cfg(test)]
        #[inline(always)]
        fn column(column: &[u32]) -> Self::Indices {
            column[..Self::WIDTH]
                .try_into()
                .expect("a block of indices")
        }
        #[cfg(test)]
        #[inline(always)]
        fn column16(column: &[u16], base: u32) -> Self::Indices {
            core::array::from_fn(|l| base + u32::from(column[l]))
        }
        #[inline(always)]
        fn mask_counts(r2: Self, counts: Self, slot: Self) -> Self {
            let inf = <Self as pbf_kernels::SimdF32>::splat(f32::INFINITY);
            <Self as pbf_kernels::SimdF32>::select(pbf_kernels::SimdF32::gt(counts, slot), r2, inf)
        }
        #[inline(always)]
        fn store(self, out: &mut [f32]) {
            $crate::lanes::store_first(self.to_array(), out)
        }
        #[inline(always)]
        fn square_root(self) -> Self {
            pbf_kernels::SimdF32::sqrt(self)
        }
        #[inline(always)]
        fn select_gt(self, other: Self, yes: Self, no: Self) -> Self {
            <Self as pbf_kernels::SimdF32>::select(pbf_kernels::SimdF32::gt(self, other), yes, no)
        }
        #[inline(always)]
        fn indicator(r2: Self, h2: f32) -> Self {
            let s = <Self as pbf_kernels::SimdF32>::splat;
            <Self as pbf_kernels::SimdF32>::select(
                pbf_kernels::SimdF32::lt(r2, s(h2)),
                s(1.0),
                s(0.0),
            )
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
#[cfg(target_arch = "x86_64")]
pub(crate) use simd_lane_terms;

impl Lane for f32 {
    const WIDTH: usize = 1;
    type Indices = u32;
    #[inline(always)]
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        _width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool {
        (0..D).all(|a| p[a] - lo[a] >= h && hi[a] - p[a] >= h)
    }
    #[inline(always)]
    fn walls<const D: usize>(boundary: &Boundary<'_, D>, p: [Self; D]) -> (Self, [Self; D]) {
        boundary.density_and_gradient(p)
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather<I: Index>(s: &[f32], indices: &[I]) -> Self {
        // The scalar path keeps its bounds check.
        s[indices[0].at()]
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather4<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4] {
        quads[indices[0].at()]
    }
    #[cfg(test)]
    #[inline(always)]
    fn column(column: &[u32]) -> u32 {
        column[0]
    }
    #[cfg(test)]
    #[inline(always)]
    fn column16(column: &[u16], base: u32) -> u32 {
        base + u32::from(column[0])
    }
    #[inline(always)]
    fn counts(counts: &[u32]) -> Self {
        counts[0] as f32
    }
    #[inline(always)]
    fn mask_counts(r2: Self, counts: Self, slot: Self) -> Self {
        if counts > slot { r2 } else { f32::INFINITY }
    }
    #[inline(always)]
    fn store(self, out: &mut [f32]) {
        if let Some(o) = out.first_mut() {
            *o = self;
        }
    }
    #[inline(always)]
    fn square_root(self) -> Self {
        self.sqrt()
    }
    #[inline(always)]
    fn select_gt(self, other: Self, yes: Self, no: Self) -> Self {
        if self > other { yes } else { no }
    }
    #[inline(always)]
    fn indicator(r2: Self, h2: f32) -> Self {
        if pbf_kernels::within(r2, h2) {
            1.0
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn poly6<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
        k.poly6(r2)
    }
    #[inline(always)]
    fn gradient_factor<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
        k.spiky_gradient_factor(r2)
    }
    #[inline(always)]
    fn gradient_factor_and_slope<const D: usize>(k: &Kernel<D>, r2: Self) -> (Self, Self) {
        k.spiky_gradient_factor_and_slope(r2)
    }
    #[inline(always)]
    fn s_corr(t: &TensileCorrection, w: Self) -> Self {
        t.s_corr_from_poly6(w)
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
        k.position_delta_term(scale, lambda_sum, s_corr, factor, x)
    }
    #[inline(always)]
    fn xsph<const D: usize>(k: &Kernel<D>, volume: Self, dv: [Self; D], w: Self) -> [Self; D] {
        k.xsph_term(volume, dv, w)
    }
    #[inline(always)]
    fn curl<const D: usize>(
        k: &Kernel<D>,
        volume: Self,
        dv: [Self; D],
        grad: [Self; D],
    ) -> [Self; 3] {
        k.vorticity_term(volume, dv, grad)
    }
}

impl Lane for f32x8 {
    const WIDTH: usize = 8;
    type Indices = [u32; 8];
    #[inline(always)]
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool {
        use pbf_kernels::SimdF32;
        let h = f32x8::splat(h);
        let mut clear = f32x8::splat(f32::from_bits(u32::MAX));
        for a in 0..D {
            clear &= (p[a] - f32x8::splat(lo[a])).ge(h);
            clear &= (f32x8::splat(hi[a]) - p[a]).ge(h);
        }
        let lanes = (1u32 << width.min(8)) - 1;
        clear.to_bitmask() & lanes == lanes
    }
    #[inline(always)]
    fn walls<const D: usize>(boundary: &Boundary<'_, D>, p: [Self; D]) -> (Self, [Self; D]) {
        let (share, grad) = walls_by_lane(boundary, p.map(|v| v.to_array()));
        (f32x8::from(share), grad.map(f32x8::from))
    }
    #[inline(always)]
    fn splat(v: f32) -> Self {
        f32x8::splat(v)
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather<I: Index>(s: &[f32], indices: &[I]) -> Self {
        let indices: &[I; 8] = indices[..8].try_into().expect("eight indices");
        // SAFETY: every index is less than `s.len()` (the caller's contract).
        let at = |k: usize| unsafe { *s.get_unchecked(indices[k].at()) };
        f32x8::from([at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)])
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather4<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4] {
        let indices: &[I; 8] = indices[..8].try_into().expect("eight indices");
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: every index is less than `quads.len()` (the caller's contract).
            unsafe { crate::lanes16::transpose8(quads, indices) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            core::array::from_fn(|c| {
                f32x8::from(core::array::from_fn::<f32, 8, _>(|l| {
                    quads[indices[l].at()][c]
                }))
            })
        }
    }
    #[inline(always)]
    fn counts(counts: &[u32]) -> Self {
        f32x8::from(core::array::from_fn::<f32, 8, _>(|l| counts[l] as f32))
    }
    simd_lane_terms!();
}

/// The first `width` lanes of `v` (the rest 0).
#[inline(always)]
pub(crate) fn lanes<L: Lane>(v: L, width: usize) -> [f32; crate::lists::GROUP] {
    let mut out = [0.0; crate::lists::GROUP];
    v.store(&mut out[..width]);
    out
}

/// Eight consecutive values from `s[j..]`; lanes past the end of `s` read 0.
///
/// Eight whole values are one load. The copy of a length known only at run time
/// below is a call of `memmove`; taken for every eight candidates, it would dominate
/// the portable sifter (the machines without AVX-512) and the lists' repairs on every
/// machine, so only a list's last, partial eight take it.
#[inline(always)]
pub(crate) fn load8<E: Eight>(s: &[f32], j: usize) -> E {
    if let Some(eight) = s.get(j..j + 8) {
        return E::from_eight(eight.try_into().expect("eight values"));
    }
    let mut a = [0.0f32; 8];
    let rest = &s[j..(j + 8).min(s.len())];
    a[..rest.len()].copy_from_slice(rest);
    E::from_eight(&a)
}

/// The eight lanes of the portable sifter's distance tests: `wide`'s `f32x8`, and on
/// x86-64 CPUs with AVX one AVX register ([`crate::lanes8::F32x8Avx`]).
pub(crate) trait Eight: Lane {
    /// The eight values of `a`, lane `l` value `l`.
    fn from_eight(a: &[f32; 8]) -> Self;
    /// Bit `l` set where lane `l` is below `limit`'s (not for a NaN).
    fn below(self, limit: Self) -> u32;
}

impl Eight for f32x8 {
    #[inline(always)]
    fn from_eight(a: &[f32; 8]) -> Self {
        f32x8::from(*a)
    }
    #[inline(always)]
    fn below(self, limit: Self) -> u32 {
        self.simd_lt(limit).to_bitmask()
    }
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

/// [`Boundary::density_and_gradient`] lane by lane, for the lanes of `p` (axis by
/// axis): the scalar path's bits by construction.
#[inline(always)]
pub(crate) fn walls_by_lane<const N: usize, const D: usize>(
    boundary: &Boundary<'_, D>,
    p: [[f32; N]; D],
) -> ([f32; N], [[f32; N]; D]) {
    let (mut share, mut grad) = ([0.0f32; N], [[0.0f32; N]; D]);
    for l in 0..N {
        let (s, g) = boundary.density_and_gradient(core::array::from_fn(|a| p[a][l]));
        share[l] = s;
        for a in 0..D {
            grad[a][l] = g[a];
        }
    }
    (share, grad)
}

/// Squared length, first axis first (the order of `pbf_kernels::norm2`).
#[inline(always)]
pub(crate) fn norm2<L: Lane, const D: usize>(x: [L; D]) -> L {
    let mut s = x[0] * x[0];
    for c in &x[1..] {
        s += *c * *c;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_reads_zero_past_the_end() {
        let s = [1.0, 2.0, 3.0];
        assert_eq!(
            load8::<f32x8>(&s, 1).to_array(),
            [2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        );
        let s: Vec<f32> = (0..20).map(|v| v as f32).collect();
        // Eight whole values (one load), up to the last eight, then fewer.
        for j in 0..=20 {
            let expected: [f32; 8] =
                core::array::from_fn(|l| if j + l < 20 { (j + l) as f32 } else { 0.0 });
            assert_eq!(load8::<f32x8>(&s, j).to_array(), expected, "from {j}");
        }
    }

    #[test]
    #[allow(unsafe_code)]
    fn gather_reads_the_indexed_values() {
        let s: Vec<f32> = (0..20).map(|v| v as f32 * 0.5).collect();
        let indices = [3u32, 19, 0, 0, 7, 8, 2, 11];
        // SAFETY: every index is less than 20.
        let eight = unsafe { <f32x8 as Lane>::gather(&s, &indices[..]) };
        assert_eq!(eight.to_array(), [1.5, 9.5, 0.0, 0.0, 3.5, 4.0, 1.0, 5.5]);
        // SAFETY: 3 < 20.
        assert_eq!(unsafe { <f32 as Lane>::gather(&s, &[3u32]) }, 1.5);
        // Narrow offsets index as the indices do.
        let offsets = [3u16, 19, 0, 0, 7, 8, 2, 11];
        // SAFETY: every offset is less than 20.
        let narrow = unsafe { <f32x8 as Lane>::gather(&s, &offsets[..]) };
        assert_eq!(narrow.to_array(), eight.to_array());
    }

    #[test]
    fn indicator_counts_within() {
        let r2 = f32x8::from([0.0, 0.5, 1.0, 2.0, 0.99, f32::INFINITY, f32::NAN, 0.1]);
        assert_eq!(<f32x8 as Lane>::indicator(r2, 1.0).reduce_add(), 4.0);
        assert_eq!(<f32 as Lane>::indicator(0.99, 1.0), 1.0);
        assert_eq!(<f32 as Lane>::indicator(1.0, 1.0), 0.0);
    }
}
