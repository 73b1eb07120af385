//! A neighbour search's inner loops on sixteen AVX-512 lanes: the distance test of
//! sixteen candidates against up to four particles with the hits' indices compressed
//! into place (`vpcompressd`), the copy of candidate ranges into one run, and the
//! 16 x 16 transpose of sixteen lists into a group's columns.
//!
//! [`Sift16`] is a token: it exists only on a CPU with AVX-512F and POPCNT
//! ([`Sift16::new`] checks), so its methods are safe. They are `#[inline(always)]`:
//! a caller runs its loop in [`Sift16::run`], which compiles the loop, and the methods
//! inlined into it, for those features.
//!
//! Every squared distance is `x^2 + y^2 (+ z^2)`, products rounded before the sums, no
//! fused multiply-add: [`crate::norm2`] of the offset, the test of the portable sifter
//! and of [`crate::within`], so both sifters give the same lists, entry for entry.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m512, __m512i, _CMP_LT_OQ, _mm256_storeu_si256, _mm512_add_epi32, _mm512_add_ps,
    _mm512_cvtepi32_epi16, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mask_cmp_ps_mask,
    _mm512_mask_cmpneq_epi32_mask, _mm512_mask_loadu_epi32, _mm512_maskz_compress_epi32,
    _mm512_maskz_loadu_ps, _mm512_mul_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setr_epi32,
    _mm512_shuffle_i32x4, _mm512_storeu_ps, _mm512_storeu_si512, _mm512_sub_epi32, _mm512_sub_ps,
    _mm512_unpackhi_epi32, _mm512_unpackhi_epi64, _mm512_unpacklo_epi32, _mm512_unpacklo_epi64,
};

/// The proof that this CPU runs the sixteen-lane sifter (AVX-512F and POPCNT).
///
/// ```
/// use pbf_kernels::Sift16;
/// if let Some(sift) = Sift16::new() {
///     // Candidates 0..20 on a line, one particle at x = 3: the hits within 1.5.
///     let x: Vec<f32> = (0..20).map(|j| j as f32).collect();
///     let mut out = vec![0u32; 64];
///     let mut at = [0usize];
///     sift.run(|| sift.sift_range([[3.0]], [3], 2.25, [&x], 0..20, &mut out, &mut at));
///     assert_eq!(&out[..at[0]], &[2, 4]);
/// }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Sift16(());

/// The mask of the first `left` of sixteen lanes (all sixteen from 16 on).
#[inline(always)]
fn tail16(left: usize) -> u16 {
    if left >= 16 {
        u16::MAX
    } else {
        (1u16 << left) - 1
    }
}

impl Sift16 {
    /// The base [`transpose_group`](Self::transpose_group) returns for a group stored
    /// wide (`u32` indices).
    pub const WIDE: u32 = u32::MAX;

    /// The token, on a CPU with AVX-512F and POPCNT.
    pub fn new() -> Option<Sift16> {
        (std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("popcnt"))
        .then_some(Sift16(()))
    }

    /// Runs `f` compiled for AVX-512F and POPCNT, so that the methods it calls inline
    /// their instructions. `f` should be an `#[inline(always)]` closure.
    #[inline(always)]
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        #[target_feature(enable = "avx512f,popcnt")]
        fn compiled_for_avx512<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the token exists only on a CPU with AVX-512F and POPCNT (`new`), the
        // features the function is compiled for.
        unsafe { compiled_for_avx512(f) }
    }

    /// The hits among the candidates `range` of `positions` for the `K` particles at
    /// `xi` (whose own indices `own` are left out): particle `k`'s indices `j` with
    /// `norm2(xi[k] - x_j) < h2`, in ascending order, stored from `at[k]` on, which is
    /// advanced past them. Each store writes sixteen entries: `out` has room for
    /// sixteen past the last hit of every particle.
    ///
    /// # Panics
    /// When `range` reaches past a `positions` slice or a store past `out`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn sift_range<const D: usize, const K: usize>(
        self,
        xi: [[f32; D]; K],
        own: [u32; K],
        h2: f32,
        positions: [&[f32]; D],
        range: core::ops::Range<usize>,
        out: &mut [u32],
        at: &mut [usize; K],
    ) {
        let (start, end) = (range.start, range.end);
        assert!(
            positions.iter().all(|p| end <= p.len()),
            "neighbour lists: a candidate past the positions"
        );
        // SAFETY (the intrinsics without memory operands): the token proves AVX-512F.
        let lane =
            unsafe { _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) };
        let mut j = start;
        while j < end {
            let tail = tail16(end - j);
            let q: [__m512; D] = core::array::from_fn(|a| {
                // SAFETY: the lanes set in `tail` are `j..min(j + 16, end)`, and
                // `end <= positions[a].len()` (asserted above); a masked load reads no
                // lane whose bit is clear, so nothing past the slice is touched.
                unsafe { _mm512_maskz_loadu_ps(tail, positions[a].as_ptr().add(j)) }
            });
            // SAFETY: as `lane` above.
            let indices = unsafe { _mm512_add_epi32(lane, _mm512_set1_epi32(j as i32)) };
            self.sift(xi, own, h2, tail, q, indices, out, at);
            j += 16;
        }
    }

    /// As [`sift_range`](Self::sift_range), over the first `count` candidates of a run
    /// made by [`pack_candidates`](Self::pack_candidates): coordinates `xyz` by axis
    /// and their `indices`, each with sixteen readable entries past `count`.
    ///
    /// # Panics
    /// When a run holds fewer than `count` rounded up to sixteen entries, or a store
    /// reaches past `out`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn sift_run<const D: usize, const K: usize>(
        self,
        xi: [[f32; D]; K],
        own: [u32; K],
        h2: f32,
        (xyz, indices): ([&[f32]; D], &[u32]),
        count: usize,
        out: &mut [u32],
        at: &mut [usize; K],
    ) {
        let mut j = 0;
        while j < count {
            // The run's lanes past `count` are scratch: `tail` leaves them out of the
            // test.
            let q: [__m512; D] = core::array::from_fn(|a| {
                let run = &xyz[a][j..j + 16];
                // SAFETY: `run` is sixteen `f32`, the 64 bytes the load reads.
                unsafe { _mm512_loadu_ps(run.as_ptr()) }
            });
            let run = &indices[j..j + 16];
            // SAFETY: `run` is sixteen `u32`, the 64 bytes the load reads.
            let index = unsafe { _mm512_loadu_si512(run.as_ptr().cast()) };
            self.sift(xi, own, h2, tail16(count - j), q, index, out, at);
            j += 16;
        }
    }

    /// Sixteen candidates (`tail` says which lanes are): each of the `K` particles'
    /// hits among them, stored after its earlier ones.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn sift<const D: usize, const K: usize>(
        self,
        xi: [[f32; D]; K],
        own: [u32; K],
        h2: f32,
        tail: u16,
        q: [__m512; D],
        indices: __m512i,
        out: &mut [u32],
        at: &mut [usize; K],
    ) {
        // SAFETY (the intrinsics without memory operands): the token proves AVX-512F
        // and POPCNT.
        unsafe {
            let limit = _mm512_set1_ps(h2);
            for k in 0..K {
                let mut r2 = _mm512_set1_ps(0.0);
                for a in 0..D {
                    let d = _mm512_sub_ps(_mm512_set1_ps(xi[k][a]), q[a]);
                    let d2 = _mm512_mul_ps(d, d);
                    r2 = if a == 0 { d2 } else { _mm512_add_ps(r2, d2) };
                }
                let near = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(tail, r2, limit);
                let bits =
                    _mm512_mask_cmpneq_epi32_mask(near, indices, _mm512_set1_epi32(own[k] as i32));
                let packed = _mm512_maskz_compress_epi32(bits, indices);
                let slot = &mut out[at[k]..at[k] + 16];
                // SAFETY: `slot` is sixteen `u32`s (checked by the slice above), the
                // 64 bytes an unaligned 512-bit store writes.
                _mm512_storeu_si512(slot.as_mut_ptr().cast(), packed);
                at[k] += bits.count_ones() as usize;
            }
        }
    }

    /// Copies the candidates `ranges` (`count` in all) into a run, one after the
    /// other: coordinates by axis into `xyz` and indices into `indices`, in the order
    /// the ranges give them; each store writes sixteen entries.
    ///
    /// # Panics
    /// When a range reaches past the positions, the ranges hold more than `count`
    /// candidates, or the run has fewer than `count` rounded up to sixteen entries.
    #[inline(always)]
    pub fn pack_candidates<const D: usize>(
        self,
        (xyz, indices): (&mut [Vec<f32>; 3], &mut [u32]),
        positions: [&[f32]; D],
        ranges: impl Iterator<Item = core::ops::Range<usize>>,
        count: usize,
    ) {
        // SAFETY: the token proves AVX-512F.
        let lane =
            unsafe { _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) };
        let mut n = 0;
        for range in ranges {
            let (start, end) = (range.start, range.end);
            assert!(
                positions.iter().all(|p| end <= p.len()) && n + (end - start) <= count,
                "neighbour lists: a candidate past the positions or the count"
            );
            let mut j = start;
            while j < end {
                let tail = tail16(end - j);
                for a in 0..D {
                    // SAFETY: the lanes set in `tail` are `j..min(j + 16, end)`, inside
                    // the positions (asserted above); a masked load reads no other lane.
                    let v = unsafe { _mm512_maskz_loadu_ps(tail, positions[a].as_ptr().add(j)) };
                    let out = &mut xyz[a][n..n + 16];
                    // SAFETY: `out` is sixteen `f32`, the 64 bytes the store writes.
                    unsafe { _mm512_storeu_ps(out.as_mut_ptr(), v) };
                }
                let out = &mut indices[n..n + 16];
                // SAFETY: the token proves AVX-512F; `out` is sixteen `u32`, the 64
                // bytes the store writes.
                unsafe {
                    let index = _mm512_add_epi32(lane, _mm512_set1_epi32(j as i32));
                    _mm512_storeu_si512(out.as_mut_ptr().cast(), index);
                }
                n += (end - j).min(16);
                j += 16;
            }
        }
    }

    /// The columns of one group of sixteen lists: `columns[s * 16 + lane]` is entry `s`
    /// of the list `indices[start[lane]..start[lane] + count[lane]]`, or `own[lane]`
    /// past its end, for every slot `s` of `columns` (as many as the longest list).
    /// Sixteen slots at a time: sixteen masked row loads, a 16 x 16 transpose in
    /// registers, sixteen stores. When the entries and `own` span at most `span`
    /// (at most `u16::MAX`), the columns are those of a narrow group instead: slot `s`
    /// in words `8s..8s + 8`, sixteen `u16` offsets from the smallest entry, which is
    /// returned; else [`Self::WIDE`]. The lists must ascend, so that each one's first and
    /// last entries give the span.
    ///
    /// # Panics
    /// When a list reaches past `indices`, or `columns` is not a whole number of slots
    /// or has fewer slots than a list has entries.
    #[inline(always)]
    pub fn transpose_group(
        self,
        indices: &[u32],
        start: [usize; 16],
        count: [usize; 16],
        own: [u32; 16],
        columns: &mut [u32],
        span: u32,
    ) -> u32 {
        assert!(
            columns.len().is_multiple_of(16)
                && (0..16).all(|l| start[l] + count[l] <= indices.len()
                    && count[l] * 16 <= columns.len()),
            "column transpose: lists past the rows or the columns"
        );
        debug_assert!(
            (0..16).all(|l| indices[start[l]..start[l] + count[l]].is_sorted()),
            "column transpose: a list out of order"
        );
        let slots = columns.len() / 16;
        // Entries `s0..s0 + 16` of list `l`, `own[l]` past its end.
        let row = |l: usize, s0: usize| {
            let left = count[l].saturating_sub(s0).min(16);
            let mask = tail16(left);
            // SAFETY: the token proves AVX-512F. The lanes set in `mask` are entries
            // `s0..s0 + left` of list `l`, all inside `indices` (asserted above); a
            // masked load touches no other lane. With no lane set the pointer is not
            // read (it is at most one past the end).
            unsafe {
                let fill = _mm512_set1_epi32(own[l] as i32);
                let at = indices.as_ptr().add((start[l] + s0).min(indices.len()));
                _mm512_mask_loadu_epi32(fill, mask, at.cast())
            }
        };
        // The lists ascend: a list's first entry is its smallest and its last its
        // largest, so the span needs two loads a lane, not a pass over the rows.
        let (mut lo, mut hi) = (u32::MAX, 0);
        for l in 0..16 {
            lo = lo.min(own[l]);
            hi = hi.max(own[l]);
            if count[l] > 0 {
                lo = lo.min(indices[start[l]]);
                hi = hi.max(indices[start[l] + count[l] - 1]);
            }
        }
        let base = if hi - lo <= span.min(u32::from(u16::MAX)) {
            lo
        } else {
            Self::WIDE
        };
        // SAFETY (the intrinsics without memory operands below): the token proves
        // AVX-512F.
        let offset = unsafe { _mm512_set1_epi32(lo as i32) };
        let mut s0 = 0;
        while s0 < slots {
            let rows: [__m512i; 16] = core::array::from_fn(|l| row(l, s0));
            let t: [__m512i; 16] = core::array::from_fn(|k| {
                let (a, b) = (rows[k & !1], rows[k | 1]);
                // SAFETY: as `offset`.
                unsafe {
                    if k % 2 == 0 {
                        _mm512_unpacklo_epi32(a, b)
                    } else {
                        _mm512_unpackhi_epi32(a, b)
                    }
                }
            });
            // u[4m + e] holds, in 128-bit lane q, element 4q + e of rows 4m..4m + 4.
            let u: [__m512i; 16] = core::array::from_fn(|k| {
                let (m, e) = (k / 4, k % 4);
                let (a, b) = (t[4 * m + e / 2], t[4 * m + 2 + e / 2]);
                // SAFETY: as `offset`.
                unsafe {
                    if e % 2 == 0 {
                        _mm512_unpacklo_epi64(a, b)
                    } else {
                        _mm512_unpackhi_epi64(a, b)
                    }
                }
            });
            for e in 0..4 {
                // SAFETY: as `offset`.
                let out = unsafe {
                    let low_v = _mm512_shuffle_i32x4::<0x44>(u[e], u[4 + e]);
                    let low_w = _mm512_shuffle_i32x4::<0x44>(u[8 + e], u[12 + e]);
                    let high_v = _mm512_shuffle_i32x4::<0xEE>(u[e], u[4 + e]);
                    let high_w = _mm512_shuffle_i32x4::<0xEE>(u[8 + e], u[12 + e]);
                    [
                        _mm512_shuffle_i32x4::<0x88>(low_v, low_w),
                        _mm512_shuffle_i32x4::<0xDD>(low_v, low_w),
                        _mm512_shuffle_i32x4::<0x88>(high_v, high_w),
                        _mm512_shuffle_i32x4::<0xDD>(high_v, high_w),
                    ]
                };
                for (q, v) in out.into_iter().enumerate() {
                    let s = s0 + 4 * q + e;
                    if s >= slots {
                        continue;
                    }
                    if base == Self::WIDE {
                        let slot = &mut columns[s * 16..s * 16 + 16];
                        // SAFETY: `slot` is sixteen `u32`, the 64 bytes the store
                        // writes.
                        unsafe { _mm512_storeu_si512(slot.as_mut_ptr().cast(), v) };
                    } else {
                        // Sixteen offsets of sixteen bits: slot `s` of a narrow group,
                        // in words 8s..8s + 8.
                        let slot = &mut columns[s * 8..s * 8 + 8];
                        // SAFETY: the token proves AVX-512F; `slot` is eight `u32`,
                        // the 32 bytes the store writes.
                        unsafe {
                            let packed = _mm512_cvtepi32_epi16(_mm512_sub_epi32(v, offset));
                            _mm256_storeu_si256(slot.as_mut_ptr().cast(), packed);
                        }
                    }
                }
            }
            s0 += 16;
        }
        base
    }
}
