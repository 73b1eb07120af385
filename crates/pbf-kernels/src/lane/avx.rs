//! Eight particles per instruction in one 256-bit AVX register, picked at run time.
//!
//! `wide`'s `f32x8` takes its instructions from the build's target features: a
//! default x86-64 build (SSE2) runs it as two 128-bit halves, so every lane operation
//! is two instructions, whatever the CPU. [`F32x8Avx`] is one AVX register, for CPUs
//! that have AVX but not AVX-512F. It implements [`SimdF32`], so the kernels' lane
//! formulas run on it unchanged, and [`Lane`], so every neighbour pass runs on it from
//! the same generic source, with the bits of the scalar path (the same correctly
//! rounded operations lane by lane, no fused multiply-add).
//!
//! **Safety.** The intrinsics need a CPU with AVX. The type is private to the crate:
//! a pass gets it only from [`LaneKind::dispatch`](crate::LaneKind::dispatch) or
//! [`LaneKind::dispatch_eight`](crate::LaneKind::dispatch_eight), which check
//! [`available`] first, and [`Lane::run`] runs a pass body in a function compiled for
//! AVX (so that the intrinsics inline). The unchecked loads (`gather_unchecked`,
//! `gather4_unchecked`) rely on their callers' indices being in bounds.

#![allow(unsafe_code)]

use super::{Eight, Index, Lane, simd_lane_terms};
use crate::{Kernel, SimdF32, TensileCorrection};
use core::arch::x86_64::{
    __m256, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_TRUE_UQ, _mm256_add_ps, _mm256_and_ps,
    _mm256_blendv_ps, _mm256_cmp_ps, _mm256_div_ps, _mm256_movemask_ps, _mm256_mul_ps,
    _mm256_set1_ps, _mm256_sqrt_ps, _mm256_sub_ps, _mm256_xor_ps,
};
use core::ops::{Add, AddAssign, BitAnd, Div, Mul, MulAssign, Neg, Sub};

/// Whether this CPU runs [`F32x8Avx`] (it has AVX).
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx")
}

/// Eight `f32` lanes in one AVX register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct F32x8Avx(__m256);

impl F32x8Avx {
    /// The eight lanes in order.
    #[inline(always)]
    pub(crate) fn to_array(self) -> [f32; 8] {
        // SAFETY: eight `f32` in lane order.
        unsafe { core::mem::transmute::<__m256, [f32; 8]>(self.0) }
    }

    /// Eight lanes from `a`, in order.
    #[inline(always)]
    pub(crate) fn from_array(a: [f32; 8]) -> Self {
        // SAFETY: eight `f32` in lane order.
        Self(unsafe { core::mem::transmute::<[f32; 8], __m256>(a) })
    }
}

/// A lane condition: every bit of a lane set where it holds (a comparison's result).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mask8(__m256);

impl Mask8 {
    /// One bit per lane, lane 0 lowest.
    #[inline(always)]
    fn bits(self) -> u32 {
        // SAFETY: values of this type exist only on CPUs with AVX (module
        // documentation).
        (unsafe { _mm256_movemask_ps(self.0) }) as u32
    }
}

macro_rules! binary {
    ($trait:ident, $method:ident, $intrinsic:ident) => {
        impl $trait for F32x8Avx {
            type Output = Self;
            #[inline(always)]
            fn $method(self, other: Self) -> Self {
                // SAFETY: values of this type exist only on CPUs with AVX (module
                // documentation).
                Self(unsafe { $intrinsic(self.0, other.0) })
            }
        }
    };
}
binary!(Add, add, _mm256_add_ps);
binary!(Sub, sub, _mm256_sub_ps);
binary!(Mul, mul, _mm256_mul_ps);
binary!(Div, div, _mm256_div_ps);

impl Neg for F32x8Avx {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        // Flips the sign bit, as the scalar `-x` and `f32x8`'s negation do.
        // SAFETY: see the module documentation.
        Self(unsafe { _mm256_xor_ps(self.0, _mm256_set1_ps(-0.0)) })
    }
}

impl AddAssign for F32x8Avx {
    #[inline(always)]
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

impl MulAssign for F32x8Avx {
    #[inline(always)]
    fn mul_assign(&mut self, other: Self) {
        *self = *self * other;
    }
}

impl BitAnd for Mask8 {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm256_and_ps(self.0, other.0) })
    }
}

impl SimdF32 for F32x8Avx {
    type Mask = Mask8;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm256_set1_ps(v) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: see the module documentation.
        Self(unsafe { _mm256_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn lt(self, other: Self) -> Mask8 {
        // SAFETY: see the module documentation.
        Mask8(unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn ge(self, other: Self) -> Mask8 {
        // SAFETY: see the module documentation.
        Mask8(unsafe { _mm256_cmp_ps::<_CMP_GE_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Mask8 {
        // SAFETY: see the module documentation.
        Mask8(unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn select(mask: Mask8, yes: Self, no: Self) -> Self {
        // A comparison sets every bit of a lane or none, so the sign bit that
        // `vblendvps` reads is the lane's condition.
        // SAFETY: see the module documentation.
        Self(unsafe { _mm256_blendv_ps(no.0, yes.0, mask.0) })
    }
}

impl Lane for F32x8Avx {
    const WIDTH: usize = 8;

    #[inline(always)]
    fn run<R>(f: impl FnOnce() -> R) -> R {
        #[target_feature(enable = "avx")]
        fn compiled_for_avx<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        assert!(available(), "eight AVX lanes need AVX");
        // SAFETY: the CPU has AVX (asserted above), the only feature the function is
        // compiled for.
        unsafe { compiled_for_avx(f) }
    }
    #[inline(always)]
    fn from_slice(s: &[f32]) -> Self {
        Self::from_array(s[..8].try_into().expect("eight values"))
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
        // SAFETY: see the module documentation.
        let mut clear = Mask8(unsafe { _mm256_cmp_ps::<_CMP_TRUE_UQ>(h.0, h.0) });
        for a in 0..D {
            let below = p[a] - <Self as SimdF32>::splat(lo[a]);
            let above = <Self as SimdF32>::splat(hi[a]) - p[a];
            clear = clear & SimdF32::ge(below, h) & SimdF32::ge(above, h);
        }
        let lanes = (1u32 << width.min(8)) - 1;
        clear.bits() & lanes == lanes
    }
    #[inline(always)]
    unsafe fn gather_unchecked<I: Index>(s: &[f32], idx: &[I]) -> Self {
        let idx: &[I; 8] = idx[..8].try_into().expect("eight indices");
        // SAFETY: every index is less than `s.len()` (the caller's contract).
        let at = |l: usize| unsafe { *s.get_unchecked(idx[l].at()) };
        // SAFETY: see the module documentation.
        Self(unsafe {
            core::arch::x86_64::_mm256_setr_ps(
                at(0),
                at(1),
                at(2),
                at(3),
                at(4),
                at(5),
                at(6),
                at(7),
            )
        })
    }
    #[inline(always)]
    unsafe fn gather4_unchecked<I: Index>(quads: &[[f32; 4]], idx: &[I]) -> [Self; 4] {
        let idx: &[I; 8] = idx[..8].try_into().expect("eight indices");
        use core::arch::x86_64::{
            _mm_loadu_ps, _mm256_castpd_ps, _mm256_castps_pd, _mm256_castps128_ps256,
            _mm256_insertf128_ps, _mm256_unpackhi_pd, _mm256_unpackhi_ps, _mm256_unpacklo_pd,
            _mm256_unpacklo_ps,
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
        // Register k holds the quads of neighbours k and k + 4, one per 128-bit lane;
        // a 4x4 transpose inside both 128-bit lanes then puts component c of neighbour
        // 4j + k into lane 4j + k of output c.
        let row = |k: usize| unsafe {
            _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(load(k)), load(k + 4))
        };
        let (z0, z1, z2, z3) = (row(0), row(1), row(2), row(3));
        unsafe {
            let (t0, t1) = (_mm256_unpacklo_ps(z0, z1), _mm256_unpackhi_ps(z0, z1));
            let (t2, t3) = (_mm256_unpacklo_ps(z2, z3), _mm256_unpackhi_ps(z2, z3));
            let (t0, t1, t2, t3) = (
                _mm256_castps_pd(t0),
                _mm256_castps_pd(t1),
                _mm256_castps_pd(t2),
                _mm256_castps_pd(t3),
            );
            [
                Self(_mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2))),
                Self(_mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2))),
                Self(_mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3))),
                Self(_mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3))),
            ]
        }
    }
    #[inline(always)]
    fn counts(counts: &[u32]) -> Self {
        use core::arch::x86_64::{_mm256_cvtepi32_ps, _mm256_loadu_si256};
        let counts: &[u32; 8] = counts[..8].try_into().expect("eight counts");
        // Exact: a list is far shorter than 2^24 entries, so every count is a positive
        // `i32` that an `f32` holds.
        // SAFETY: `counts` is eight `u32`, the 32 bytes the load reads; see also the
        // module documentation.
        Self(unsafe { _mm256_cvtepi32_ps(_mm256_loadu_si256(counts.as_ptr().cast())) })
    }
    simd_lane_terms!();
}

impl Eight for F32x8Avx {
    #[inline(always)]
    fn from_eight(a: &[f32; 8]) -> Self {
        // SAFETY: `a` is eight `f32`, the 32 bytes an unaligned load reads; see also
        // the module documentation.
        Self(unsafe { core::arch::x86_64::_mm256_loadu_ps(a.as_ptr()) })
    }
    #[inline(always)]
    fn below(self, limit: Self) -> u32 {
        SimdF32::lt(self, limit).bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this CPU lacks the backend, reported by name (the test then checks
    /// nothing on it).
    fn skipped() -> bool {
        let lacks = !available();
        if lacks {
            crate::LaneKind::Avx.report_skipped();
        }
        lacks
    }
    use proptest::prelude::*;
    use wide::f32x8;

    fn from(a: [f32; 8]) -> F32x8Avx {
        F32x8Avx::from_array(a)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every lane formula of `pbf-kernels` on the eight AVX lanes gives the bits of
        /// the scalar reference, lane by lane (with the edge values of the support
        /// mixed in).
        #[test]
        fn kernels_on_eight_avx_lanes_are_the_scalar_reference(
            r2 in prop::array::uniform8(prop_oneof![0.0f32..1.2, Just(0.0), Just(1.0), Just(1e-39), Just(f32::INFINITY), Just(f32::NAN)]),
            x in prop::array::uniform3(prop::array::uniform8(-1.0f32..1.0)),
            lambda in prop::array::uniform8(-50.0f32..50.0),
            h in 0.01f32..10.0,
        ) {
            if skipped() {
                return Ok(());
            }
            let k = Kernel::<3>::new(h).unwrap();
            let t = TensileCorrection::new(&k, 0.1, 4, 0.2).unwrap();
            let r2: [f32; 8] = r2.map(|v| v * h * h);
            let (w, f, s, d, n, g) = F32x8Avx::run(|| {
                let r = from(r2);
                let w = k.poly6_lanes(r);
                let f = k.spiky_gradient_factor_lanes(r);
                let s = t.s_corr_from_poly6_lanes(w);
                let xs = x.map(from);
                let d = k.position_delta_term_lanes(0.5, from(lambda), s, f, xs);
                let n = crate::norm2_lanes(xs);
                let (_, g) = k.spiky_gradient_factor_and_slope_lanes(r);
                (w.to_array(), f.to_array(), s.to_array(), d.map(F32x8Avx::to_array), n.to_array(), g.to_array())
            });
            for l in 0..8 {
                prop_assert_eq!(w[l].to_bits(), k.poly6(r2[l]).to_bits());
                prop_assert_eq!(f[l].to_bits(), k.spiky_gradient_factor(r2[l]).to_bits());
                prop_assert_eq!(g[l].to_bits(), k.spiky_gradient_factor_and_slope(r2[l]).1.to_bits());
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

        /// The faces' test on the eight AVX lanes answers as `f32x8`'s does (which the
        /// sixteen lanes' tests hold to `Boundary::clear_box`), at every width, with
        /// non-finite coordinates and positions on the bound mixed in.
        #[test]
        fn the_faces_on_eight_avx_lanes_are_the_portable_test(
            p in prop::array::uniform3(prop::array::uniform8(prop_oneof![
                8 => -0.5f32..2.5,
                1 => Just(0.25f32),
                1 => Just(1.75f32),
                1 => Just(f32::NAN),
                1 => Just(f32::INFINITY),
                1 => Just(f32::NEG_INFINITY),
            ])),
            width in 1usize..=8,
        ) {
            if skipped() {
                return Ok(());
            }
            let (lo, hi, h) = ([0.0f32; 3], [2.0f32; 3], 0.25f32);
            let portable = <f32x8 as Lane>::clear_of_faces(p.map(f32x8::from), width, lo, hi, h);
            let avx = F32x8Avx::run(|| <F32x8Avx as Lane>::clear_of_faces(p.map(from), width, lo, hi, h));
            prop_assert_eq!(avx, portable);
        }

        /// The transposed loads give `quads[indices[lane]][c]`, from `u32` indices
        /// and from 16-bit offsets alike; `gather` reads the indexed values.
        #[test]
        fn gather4_on_eight_avx_lanes_transposes_the_quads(
            quads in prop::collection::vec(prop::array::uniform4(-1e3f32..1e3), 1..64),
            picks in prop::array::uniform8(any::<prop::sample::Index>()),
        ) {
            if skipped() {
                return Ok(());
            }
            let indices: [u32; 8] = picks.map(|p| p.index(quads.len()) as u32);
            let narrow: [u16; 8] = indices.map(|i| i as u16);
            let flat: Vec<f32> = quads.iter().map(|q| q[1]).collect();
            let (wide, short, one) = F32x8Avx::run(|| {
                // SAFETY: `picks` are indices into `quads` (and `flat`, as long).
                unsafe {
                    (
                        <F32x8Avx as Lane>::gather4_unchecked(&quads, &indices).map(F32x8Avx::to_array),
                        <F32x8Avx as Lane>::gather4_unchecked(&quads, &narrow).map(F32x8Avx::to_array),
                        <F32x8Avx as Lane>::gather_unchecked(&flat, &indices).to_array(),
                    )
                }
            });
            for l in 0..8 {
                for c in 0..4 {
                    prop_assert_eq!(wide[c][l], quads[indices[l] as usize][c]);
                    prop_assert_eq!(short[c][l], quads[indices[l] as usize][c]);
                }
                prop_assert_eq!(one[l], flat[indices[l] as usize]);
            }
        }
    }

    #[test]
    fn negation_selection_counts_and_stores() {
        if skipped() {
            return;
        }
        let v: [f32; 8] = core::array::from_fn(|l| l as f32 - 4.0);
        let neg = F32x8Avx::run(|| (-from(v)).to_array());
        assert_eq!(neg[4].to_bits(), (-0.0f32).to_bits());
        assert_eq!(neg[0], 4.0);
        // Lanes whose count is at most the slot are moved out of every support.
        let counts: [u32; 8] = core::array::from_fn(|l| l as u32 % 5);
        let masked = F32x8Avx::run(|| {
            <F32x8Avx as Lane>::mask_counts(
                from(v),
                <F32x8Avx as Lane>::counts(&counts),
                <F32x8Avx as SimdF32>::splat(2.0),
            )
            .to_array()
        });
        for l in 0..8 {
            if counts[l] > 2 {
                assert_eq!(masked[l], v[l]);
            } else {
                assert!(masked[l].is_infinite());
            }
        }
        // `max_zero` is `maxss(v, 0)`: +0 for 0, -0 and NaN.
        let odd = [
            -1.0,
            -0.0,
            0.0,
            f32::NAN,
            2.5,
            f32::INFINITY,
            -f32::INFINITY,
            1e-40,
        ];
        let z = F32x8Avx::run(|| from(odd).max_zero().to_array());
        for l in 0..8 {
            let expected = if odd[l] > 0.0 { odd[l] } else { 0.0 };
            assert_eq!(z[l].to_bits(), expected.to_bits(), "lane {l}");
        }
        let mut out = [9.0f32; 5];
        F32x8Avx::run(|| <F32x8Avx as Lane>::store(from(v), &mut out[..3]));
        assert_eq!(out, [v[0], v[1], v[2], 9.0, 9.0]);
        let mut all = [0.0f32; 8];
        F32x8Avx::run(|| <F32x8Avx as Lane>::store(from(v), &mut all));
        assert_eq!(all, v);
    }
}
