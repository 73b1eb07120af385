//! Sixteen particles per instruction with AVX-512F, picked at run time.
//!
//! [`F32x16`] is one 512-bit register of `f32` lanes. It implements [`SimdF32`], so
//! the kernels' lane formulas run on it unchanged, and [`Lane`], so every neighbour
//! pass runs on it from the same generic source. The neighbours' positions (and one
//! more value) come as packed quads: one sixteen-byte load per neighbour, transposed
//! into four registers ([`Lane::gather4`]); other values by sixteen scalar loads.
//! Neither checks an index a lane (`gather_unchecked`, `gather4_unchecked`): sixteen
//! compare-and-branch pairs per slot spill the registers that hold the indices; the
//! safe gathers check a run of indices once ([`Bounded`](crate::Bounded)). The hardware gather
//! (`vgatherdps`) is not used: for single values and for the quads (four gathers a
//! slot) it is slower than the scalar loads and the in-register transpose.
//!
//! **The scalar path's bits.** A pass holds one particle a lane and walks the lists of
//! a group together, so every lane adds its particle's terms in list order, as the
//! scalar path does, with the same correctly rounded operations. The lanes past the
//! end of a list are masked: their terms are zeros of either sign, which change no
//! sum (a sum that starts at `+0.0` is never `-0.0`).
//!
//! **Safety.** The intrinsics need a CPU with AVX-512F. The type is private to the
//! crate: a pass gets it only from [`LaneKind::dispatch`](crate::LaneKind::dispatch),
//! which checks [`available`] first, and [`Lane::run`] runs a pass body in a function
//! compiled for AVX-512F (so that the intrinsics inline). The unchecked loads rely on
//! their callers' indices being in bounds (the safe gathers check them first).

#![allow(unsafe_code)]

use super::{Index, Lane, simd_lane_terms};
use crate::walls::SAMPLES;
use crate::{Kernel, SimdF32, TensileCorrection, WallTables};
use core::arch::x86_64::{
    __m512, __mmask16, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _mm512_add_ps, _mm512_castps_si512,
    _mm512_castsi512_ps, _mm512_cmp_ps_mask, _mm512_div_ps, _mm512_mask_blend_ps, _mm512_mul_ps,
    _mm512_set1_epi32, _mm512_set1_ps, _mm512_sqrt_ps, _mm512_sub_ps, _mm512_xor_si512,
};
use core::ops::{Add, AddAssign, BitAnd, Div, Mul, MulAssign, Neg, Sub};

/// Whether this CPU runs [`F32x16`] (it has AVX-512F).
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// Sixteen `f32` lanes in one AVX-512 register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x16(__m512);

impl F32x16 {
    /// The sixteen lanes in order.
    #[inline(always)]
    fn to_array(self) -> [f32; 16] {
        // SAFETY: sixteen `f32` in lane order.
        unsafe { core::mem::transmute::<__m512, [f32; 16]>(self.0) }
    }

    /// Sixteen lanes from `a`, in order.
    #[inline(always)]
    fn from_array(a: [f32; 16]) -> Self {
        // SAFETY: sixteen `f32` in lane order.
        Self(unsafe { core::mem::transmute::<[f32; 16], __m512>(a) })
    }
}

/// A lane condition: one bit per lane.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mask16(__mmask16);

macro_rules! binary {
    ($trait:ident, $method:ident, $intrinsic:ident) => {
        impl $trait for F32x16 {
            type Output = Self;
            #[inline(always)]
            fn $method(self, other: Self) -> Self {
                // SAFETY: values of this type exist only on CPUs with AVX-512F (module
                // documentation).
                Self(unsafe { $intrinsic(self.0, other.0) })
            }
        }
    };
}
binary!(Add, add, _mm512_add_ps);
binary!(Sub, sub, _mm512_sub_ps);
binary!(Mul, mul, _mm512_mul_ps);
binary!(Div, div, _mm512_div_ps);

impl Neg for F32x16 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        // Flips the sign bit, as the scalar `-x` and `f32x8`'s negation do.
        // SAFETY: see the module documentation.
        Self(unsafe {
            _mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                _mm512_set1_epi32(i32::MIN),
            ))
        })
    }
}

impl AddAssign for F32x16 {
    #[inline(always)]
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

impl MulAssign for F32x16 {
    #[inline(always)]
    fn mul_assign(&mut self, other: Self) {
        *self = *self * other;
    }
}

impl BitAnd for Mask16 {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

impl SimdF32 for F32x16 {
    type Mask = Mask16;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm512_set1_ps(v) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm512_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn lt(self, other: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn ge(self, other: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Mask16 {
        // SAFETY: see the module documentation.
        Mask16(unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn select(mask: Mask16, yes: Self, no: Self) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm512_mask_blend_ps(mask.0, no.0, yes.0) })
    }
}

impl Lane for F32x16 {
    const WIDTH: usize = 16;

    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        #[target_feature(enable = "avx512f")]
        fn compiled_for_avx512<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        assert!(available(), "sixteen lanes need AVX-512F");
        // SAFETY: the CPU has AVX-512F (asserted above), the only feature the function
        // is compiled for.
        unsafe { compiled_for_avx512(f) }
    }
    /// The faces on all sixteen lanes at once, each face only when a lane is within h
    /// of it, with [`WallTables::at`]'s operations (the table read by sixteen loads).
    /// The scalar reference subtracts a `+0` from the gradient's other axes for each
    /// face, which changes no value: skipped here.
    #[inline(always)]
    fn faces<const D: usize>(
        tables: &WallTables,
        lo: [f32; D],
        hi: [f32; D],
        p: [Self; D],
    ) -> (Self, [Self; D]) {
        use core::arch::x86_64::{
            _mm512_cvtepu32_ps, _mm512_cvttps_epu32, _mm512_mask_add_ps, _mm512_mask_sub_ps,
            _mm512_max_ps, _mm512_min_epu32, _mm512_setzero_ps, _mm512_storeu_si512,
        };
        let (density, gradient) = tables.samples();
        let h = tables.h();
        // SAFETY (all the intrinsics below): see the module documentation.
        let zero = unsafe { _mm512_setzero_ps() };
        let (mut phi, mut grad) = (zero, [zero; D]);
        let hv = unsafe { _mm512_set1_ps(h) };
        let last = unsafe { _mm512_set1_epi32((SAMPLES - 2) as i32) };
        let steps = unsafe { _mm512_set1_ps((SAMPLES - 1) as f32) };
        // Sample k + next of a table for every lane: `k` is at most SAMPLES - 2 (below).
        let read = |table: &[f32; SAMPLES], k: &[u32; 16], next: usize| {
            // SAFETY: `k[l] + next <= SAMPLES - 1`, so `k[l]` is inside the table from
            // sample `next` on.
            unsafe { Self::gather_unchecked(&table[next..], k) }
        };
        for a in 0..D {
            let faces = [
                (
                    unsafe { _mm512_sub_ps(p[a].0, _mm512_set1_ps(lo[a])) },
                    1.0f32,
                ),
                (
                    unsafe { _mm512_sub_ps(_mm512_set1_ps(hi[a]), p[a].0) },
                    -1.0,
                ),
            ];
            for (d, n) in faces {
                let within = unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(d, hv) };
                if within == 0 {
                    continue;
                }
                // `WallTables::at`: t = (max(d, 0) / h) (SAMPLES - 1), k = min(t as
                // integer, SAMPLES - 2), f = t - k. A lane outside (or NaN) still reads
                // inside the table: max(NaN, 0) is 0, and the unsigned minimum caps k.
                let (k, f) = unsafe {
                    let t = _mm512_mul_ps(_mm512_div_ps(_mm512_max_ps(d, zero), hv), steps);
                    let k = _mm512_min_epu32(_mm512_cvttps_epu32(t), last);
                    (k, _mm512_sub_ps(t, _mm512_cvtepu32_ps(k)))
                };
                let mut ks = [0u32; 16];
                // SAFETY: `ks` is sixteen `u32`, the 64 bytes the store writes.
                unsafe { _mm512_storeu_si512(ks.as_mut_ptr().cast(), k) };
                let lerp = |table: &[f32; SAMPLES]| {
                    let (a0, a1) = (read(table, &ks, 0), read(table, &ks, 1));
                    unsafe { _mm512_add_ps(a0.0, _mm512_mul_ps(f, _mm512_sub_ps(a1.0, a0.0))) }
                };
                let (share, slope) = (lerp(density), lerp(gradient));
                unsafe {
                    phi = _mm512_mask_add_ps(phi, within, phi, share);
                    let step = _mm512_mul_ps(slope, _mm512_set1_ps(n));
                    grad[a] = _mm512_mask_sub_ps(grad[a], within, grad[a], step);
                }
            }
        }
        (F32x16(phi), grad.map(F32x16))
    }
    #[inline(always)]
    fn from_slice(s: &[f32]) -> Self {
        Self::from_array(s[..16].try_into().expect("sixteen values"))
    }
    #[inline(always)]
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool {
        let h = <Self as SimdF32>::splat(h);
        let mut clear = Mask16(u16::MAX);
        for a in 0..D {
            let below = p[a] - <Self as SimdF32>::splat(lo[a]);
            let above = <Self as SimdF32>::splat(hi[a]) - p[a];
            clear = clear & SimdF32::ge(below, h) & SimdF32::ge(above, h);
        }
        let lanes = (1u32 << width.min(16)) - 1;
        u32::from(clear.0) & lanes == lanes
    }
    #[inline(always)]
    unsafe fn gather_unchecked<I: Index>(s: &[f32], idx: &[I]) -> Self {
        let idx: &[I; 16] = idx[..16].try_into().expect("sixteen indices");
        // SAFETY: every index is less than `s.len()` (the caller's contract).
        let at = |l: usize| unsafe { *s.get_unchecked(idx[l].at()) };
        // SAFETY: see the module documentation.
        Self(unsafe {
            core::arch::x86_64::_mm512_setr_ps(
                at(0),
                at(1),
                at(2),
                at(3),
                at(4),
                at(5),
                at(6),
                at(7),
                at(8),
                at(9),
                at(10),
                at(11),
                at(12),
                at(13),
                at(14),
                at(15),
            )
        })
    }
    #[inline(always)]
    unsafe fn gather4_unchecked<I: Index>(quads: &[[f32; 4]], idx: &[I]) -> [Self; 4] {
        let idx: &[I; 16] = idx[..16].try_into().expect("sixteen indices");
        use core::arch::x86_64::{
            _mm_loadu_ps, _mm512_castpd_ps, _mm512_castps_pd, _mm512_castps128_ps512,
            _mm512_insertf32x4, _mm512_unpackhi_pd, _mm512_unpackhi_ps, _mm512_unpacklo_pd,
            _mm512_unpacklo_ps,
        };
        let load = |l: usize| {
            // SAFETY: the index is less than `quads.len()` (the caller's contract); `q`
            // is four `f32`, the sixteen bytes an unaligned load reads.
            unsafe {
                let q = quads.get_unchecked(idx[l].at());
                _mm_loadu_ps(q.as_ptr())
            }
        };
        // SAFETY (all the intrinsics below): see the module documentation.
        // Register k holds the quads of neighbours k, k + 4, k + 8 and k + 12, one per
        // 128-bit lane; a 4x4 transpose inside every 128-bit lane then puts component c
        // of neighbour 4j + k into lane 4j + k of output c.
        let row = |k: usize| unsafe {
            let v = _mm512_castps128_ps512(load(k));
            let v = _mm512_insertf32x4::<1>(v, load(k + 4));
            let v = _mm512_insertf32x4::<2>(v, load(k + 8));
            _mm512_insertf32x4::<3>(v, load(k + 12))
        };
        let (z0, z1, z2, z3) = (row(0), row(1), row(2), row(3));
        unsafe {
            let (t0, t1) = (_mm512_unpacklo_ps(z0, z1), _mm512_unpackhi_ps(z0, z1));
            let (t2, t3) = (_mm512_unpacklo_ps(z2, z3), _mm512_unpackhi_ps(z2, z3));
            let (t0, t1, t2, t3) = (
                _mm512_castps_pd(t0),
                _mm512_castps_pd(t1),
                _mm512_castps_pd(t2),
                _mm512_castps_pd(t3),
            );
            [
                Self(_mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2))),
                Self(_mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2))),
                Self(_mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3))),
                Self(_mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3))),
            ]
        }
    }
    #[inline(always)]
    fn counts(counts: &[u32]) -> Self {
        use core::arch::x86_64::{_mm512_cvtepu32_ps, _mm512_loadu_si512};
        let counts: &[u32; 16] = counts[..16].try_into().expect("sixteen counts");
        // SAFETY: `counts` is sixteen `u32`, the 64 bytes the load reads; see also the
        // module documentation.
        Self(unsafe { _mm512_cvtepu32_ps(_mm512_loadu_si512(counts.as_ptr().cast())) })
    }
    simd_lane_terms!();
}

#[cfg(test)]
mod tests {
    use super::super::portable::transpose8;
    use super::*;

    /// Whether this CPU lacks the backend, reported by name (the test then checks
    /// nothing on it).
    fn skipped() -> bool {
        let lacks = !available();
        if lacks {
            crate::LaneKind::Avx512.report_skipped();
        }
        lacks
    }
    use proptest::prelude::*;
    use wide::f32x8;

    fn lanes(v: F32x16) -> [f32; 16] {
        v.to_array()
    }

    fn from(a: [f32; 16]) -> F32x16 {
        F32x16::from_array(a)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every lane formula of `pbf-kernels` on sixteen lanes gives the bits of the
        /// scalar reference, lane by lane (with the edge values of the support mixed in).
        #[test]
        fn kernels_on_sixteen_lanes_are_the_scalar_reference(
            r2 in prop::array::uniform16(prop_oneof![0.0f32..1.2, Just(0.0), Just(1.0), Just(1e-39), Just(f32::INFINITY)]),
            x in prop::array::uniform3(prop::array::uniform16(-1.0f32..1.0)),
            lambda in prop::array::uniform16(-50.0f32..50.0),
            h in 0.01f32..10.0,
        ) {
            if skipped() {
                return Ok(());
            }
            let k = Kernel::<3>::new(h).unwrap();
            let t = TensileCorrection::new(&k, 0.1, 4, 0.2).unwrap();
            let r2: [f32; 16] = r2.map(|v| v * h * h);
            let (w, f, s, d, n) = F32x16::run(|| {
                let r = from(r2);
                let w = k.poly6_lanes(r);
                let f = k.spiky_gradient_factor_lanes(r);
                let s = t.s_corr_from_poly6_lanes(w);
                let xs = x.map(from);
                let d = k.position_delta_term_lanes(0.5, from(lambda), s, f, xs);
                let n = crate::norm2_lanes(xs);
                (lanes(w), lanes(f), lanes(s), d.map(lanes), lanes(n))
            });
            for l in 0..16 {
                prop_assert_eq!(w[l].to_bits(), k.poly6(r2[l]).to_bits());
                prop_assert_eq!(f[l].to_bits(), k.spiky_gradient_factor(r2[l]).to_bits());
                let sl = t.s_corr_from_poly6(k.poly6(r2[l]));
                prop_assert_eq!(s[l].to_bits(), sl.to_bits());
                let xl = [x[0][l], x[1][l], x[2][l]];
                let dl = k.position_delta_term(0.5, lambda[l], sl, k.spiky_gradient_factor(r2[l]), xl);
                for a in 0..3 {
                    prop_assert_eq!(d[a][l].to_bits(), dl[a].to_bits());
                }
                prop_assert_eq!(n[l].to_bits(), crate::norm2(xl).to_bits());
            }
        }

        /// The faces' test on the lanes answers as `Boundary::clear_box` does for the
        /// bounding box of the first `width` positions, at every width (and lanes
        /// past `width` do not count), with non-finite coordinates and positions on
        /// the bound mixed in.
        #[test]
        fn the_faces_on_the_lanes_are_the_bounding_box_test(
            p in prop::array::uniform3(prop::array::uniform16(prop_oneof![
                8 => -0.5f32..2.5,
                1 => Just(0.25f32),
                1 => Just(1.75f32),
                1 => Just(f32::NAN),
                1 => Just(f32::INFINITY),
                1 => Just(f32::NEG_INFINITY),
            ])),
            width in 1usize..=16,
        ) {
            let (lo, hi, h) = ([0.0f32; 3], [2.0f32; 3], 0.25f32);
            let clear_box = |bounds: Option<([f32; 3], [f32; 3])>| {
                bounds.is_some_and(|(l, u)| (0..3).all(|a| !(l[a] - lo[a] < h) && !(hi[a] - u[a] < h)))
            };
            let bounds = |w: usize| {
                let points = (0..w).map(|l| [p[0][l], p[1][l], p[2][l]]);
                let finite = points.clone().all(|q| q.iter().all(|c| c.is_finite()));
                finite.then(|| points.fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(l, u), q| {
                    (core::array::from_fn(|a| l[a].min(q[a])), core::array::from_fn(|a| u[a].max(q[a])))
                }))
            };
            let expected = clear_box(bounds(width));
            let one = <f32 as Lane>::clear_of_faces([p[0][0], p[1][0], p[2][0]], 1, lo, hi, h);
            prop_assert_eq!(one, clear_box(bounds(1)));
            let eight = <f32x8 as Lane>::clear_of_faces(
                p.map(|c| f32x8::from(<[f32; 8]>::try_from(&c[..8]).unwrap())),
                width.min(8),
                lo,
                hi,
                h,
            );
            prop_assert_eq!(eight, clear_box(bounds(width.min(8))));
            if !skipped() {
                let sixteen = F32x16::run(|| {
                    <F32x16 as Lane>::clear_of_faces(p.map(from), width, lo, hi, h)
                });
                prop_assert_eq!(sixteen, expected);
            }
        }

        /// The transposed loads give `quads[indices[lane]][c]`, at both widths.
        #[test]
        fn gather4_transposes_the_quads(
            quads in prop::collection::vec(prop::array::uniform4(-1e3f32..1e3), 1..64),
            picks in prop::array::uniform16(any::<prop::sample::Index>()),
        ) {
            let indices: [u32; 16] = picks.map(|p| p.index(quads.len()) as u32);
            let eight: [u32; 8] = indices[..8].try_into().unwrap();
            // SAFETY: `picks` are indices into `quads`.
            let x8 = unsafe { transpose8(&quads, &eight) };
            for c in 0..4 {
                for l in 0..8 {
                    prop_assert_eq!(x8[c].to_array()[l], quads[eight[l] as usize][c]);
                }
            }
            if !skipped() {
                // SAFETY: as above.
                let x16 = F32x16::run(|| unsafe { <F32x16 as Lane>::gather4_unchecked(&quads, &indices) }.map(lanes));
                for c in 0..4 {
                    for l in 0..16 {
                        prop_assert_eq!(x16[c][l], quads[indices[l] as usize][c]);
                    }
                }
            }
        }
    }

    #[test]
    fn negation_flips_the_sign_bit_and_lanes_load_mask_and_store() {
        if skipped() {
            return;
        }
        let v: [f32; 16] = core::array::from_fn(|l| l as f32 - 4.0);
        let neg = F32x16::run(|| lanes(-from(v)));
        assert_eq!(neg[4].to_bits(), (-0.0f32).to_bits());
        assert_eq!(neg[0], 4.0);
        // Lanes whose count is at most the slot are moved out of every support.
        let counts: [u32; 16] = core::array::from_fn(|l| l as u32 % 5);
        let masked = F32x16::run(|| {
            lanes(<F32x16 as Lane>::mask_counts(
                from(v),
                <F32x16 as Lane>::counts(&counts),
                <F32x16 as SimdF32>::splat(2.0),
            ))
        });
        for l in 0..16 {
            if counts[l] > 2 {
                assert_eq!(masked[l], v[l]);
            } else {
                assert!(masked[l].is_infinite());
            }
        }
        let mut out = [9.0f32; 5];
        F32x16::run(|| <F32x16 as Lane>::store(from(v), &mut out[..3]));
        assert_eq!(out, [v[0], v[1], v[2], 9.0, 9.0]);
    }
}
