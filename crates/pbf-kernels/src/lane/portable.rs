//! The portable backend: `wide`'s [`f32x8`], eight lanes whose instructions the
//! build's target features choose (two SSE2 registers in a default x86-64 build, NEON
//! on aarch64, one AVX register in a build for a CPU with AVX).

use super::{Eight, Index, Lane, simd_lane_terms};
use crate::{Kernel, TensileCorrection};
use wide::f32x8;

impl Lane for f32x8 {
    const WIDTH: usize = 8;
    #[inline(always)]
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool {
        use crate::SimdF32;
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
    fn from_slice(s: &[f32]) -> Self {
        f32x8::from(<[f32; 8]>::try_from(&s[..8]).expect("eight values"))
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather_unchecked<I: Index>(s: &[f32], indices: &[I]) -> Self {
        let indices: &[I; 8] = indices[..8].try_into().expect("eight indices");
        // SAFETY: every index is less than `s.len()` (the caller's contract).
        let at = |k: usize| unsafe { *s.get_unchecked(indices[k].at()) };
        f32x8::from([at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)])
    }
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn gather4_unchecked<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4] {
        let indices: &[I; 8] = indices[..8].try_into().expect("eight indices");
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: every index is less than `quads.len()` (the caller's contract).
            unsafe { transpose8(quads, indices) }
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

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
/// `[quads[indices[l]][c] for l in 0..8]` for each `c` (two 4x4 transposes with SSE,
/// which every x86-64 CPU has).
///
/// # Safety
/// Every index is less than `quads.len()`.
#[inline(always)]
pub(crate) unsafe fn transpose8<I: Index>(quads: &[[f32; 4]], indices: &[I; 8]) -> [f32x8; 4] {
    use core::arch::x86_64::{
        __m128, _mm_loadu_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
    };
    let load = |l: usize| {
        // SAFETY: the index is less than `quads.len()` (the caller's contract); `q` is
        // four `f32`, the sixteen bytes an unaligned load reads; SSE is part of every
        // x86-64 CPU.
        unsafe {
            let q = quads.get_unchecked(indices[l].at());
            _mm_loadu_ps(q.as_ptr())
        }
    };
    let quarter = |o: usize| -> [__m128; 4] {
        let (a, b, c, d) = (load(o), load(o + 1), load(o + 2), load(o + 3));
        // SAFETY: SSE is part of every x86-64 CPU.
        unsafe {
            let (t0, t1) = (_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
            let (t2, t3) = (_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
            [
                _mm_movelh_ps(t0, t2),
                _mm_movehl_ps(t2, t0),
                _mm_movelh_ps(t1, t3),
                _mm_movehl_ps(t3, t1),
            ]
        }
    };
    let (low, high) = (quarter(0), quarter(4));
    // SAFETY: two `__m128` are the eight `f32` of an `f32x8` in lane order (32 bytes
    // either way; a value transmute does not need the alignment of either).
    core::array::from_fn(|c| unsafe {
        core::mem::transmute::<[__m128; 2], f32x8>([low[c], high[c]])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load8;

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
        let eight = unsafe { <f32x8 as Lane>::gather_unchecked(&s, &indices[..]) };
        assert_eq!(eight.to_array(), [1.5, 9.5, 0.0, 0.0, 3.5, 4.0, 1.0, 5.5]);
        // SAFETY: 3 < 20.
        assert_eq!(unsafe { <f32 as Lane>::gather_unchecked(&s, &[3u32]) }, 1.5);
        // Narrow offsets index as the indices do.
        let offsets = [3u16, 19, 0, 0, 7, 8, 2, 11];
        // SAFETY: every offset is less than 20.
        let narrow = unsafe { <f32x8 as Lane>::gather_unchecked(&s, &offsets[..]) };
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
