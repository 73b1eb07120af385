//! The fused density pass of the `grid` bench, sixteen candidates at a time with
//! AVX-512F where the CPU has it (picked at run time).
//!
//! A fused pass sums a kernel over the candidates of the grid's cells directly, with no
//! neighbour lists: `density[i] = sum_j W(|x_i - x_j|)` over the sorted `j` within h,
//! `i` included (the grid's predicate `r^2 < h^2`). The lanes hold sixteen consecutive
//! candidates of one cell range (contiguous loads, no gathers; the tail of a range is
//! masked), and four points of a cell share every load of a candidate block (the last
//! one to three points of a cell form a block of their own size). (Packing
//! the candidates near the cell into a contiguous buffer first, which drops a quarter
//! of them and the partial blocks, was measured 1.7x slower.)
//!
//! It is the benches crate's only `unsafe` code: the masked loads take raw pointers.
//! Kept because it is 3-4x faster than the portable eight-wide pass here (see
//! BENCHMARKS.md, `grid` bench, "fused density"); the test below holds it to the
//! scalar reference.

use pbf_grid::Grid;
use pbf_kernels::Kernel;

/// Whether [`fused_density_avx512`] runs on this CPU.
pub fn avx512_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The fused density pass with AVX-512F: `density[i] = sum_j W(r_ij)` over the sorted
/// `j` within h (`i` included) for the positions `sorted` of `grid`'s last rebuild
/// (at the radius of `kernel`). Returns `false`, computing nothing, when the CPU lacks
/// AVX-512F (see [`avx512_available`]).
///
/// # Panics
/// When `sorted` or `density` do not have one entry per point of the grid.
///
/// ```
/// use pbf_benches::density::{avx512_available, fused_density_avx512};
/// let x = [0.0f32, 0.5, 3.0];
/// let (y, z) = ([0.0f32; 3], [0.0f32; 3]);
/// let mut grid = pbf_grid::Grid::<3>::new();
/// grid.rebuild([&x, &y, &z], 1.0)?;
/// let kernel = pbf_kernels::Kernel::<3>::new(1.0)?;
/// let mut density = [0.0f32; 3];
/// if fused_density_avx512(&grid, &kernel, [&x, &y, &z], &mut density) {
///     let near = kernel.poly6(0.0) + kernel.poly6(0.25);
///     assert!((density[0] - near).abs() <= 1e-6 * near);
///     assert_eq!(density[2], kernel.poly6(0.0));
/// } else {
///     assert!(!avx512_available());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fused_density_avx512(
    grid: &Grid<3>,
    kernel: &Kernel<3>,
    sorted: [&[f32]; 3],
    density: &mut [f32],
) -> bool {
    assert!(
        sorted.iter().all(|s| s.len() == grid.len()) && density.len() == grid.len(),
        "one position and one density per point"
    );
    #[cfg(target_arch = "x86_64")]
    if avx512_available() {
        let (h2, coefficient) = (kernel.h2(), kernel.poly6_coefficient());
        grid.par_for_each_cell(density, |cell, out| {
            // SAFETY: the CPU has AVX-512F (checked above); `avx512::cell` needs nothing
            // else beyond what it checks itself.
            unsafe { avx512::cell(grid, sorted, h2, coefficient, cell, out) }
        })
        .expect("one density per point");
        return true;
    }
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use core::arch::x86_64::{
        __m512, _CMP_LT_OQ, _mm512_fmadd_ps, _mm512_mask_add_ps, _mm512_mask_cmp_ps_mask,
        _mm512_maskz_loadu_ps, _mm512_mul_ps, _mm512_reduce_add_ps, _mm512_set1_ps,
        _mm512_setzero_ps, _mm512_sub_ps,
    };
    use pbf_grid::Grid;

    /// Points of a cell that share the loads of a candidate block (measured: 4 beats 8,
    /// whose broadcasts and sums no longer fit the 32 registers).
    const POINTS: usize = 4;

    /// The densities of the points of `cell` into `out` (one per point of the cell):
    /// blocks of [`POINTS`], then the last one to three points as a block of their own
    /// size (no lanes spent on padding points).
    #[target_feature(enable = "avx512f")]
    pub(super) fn cell(
        grid: &Grid<3>,
        sorted: [&[f32]; 3],
        h2: f32,
        coefficient: f32,
        cell: usize,
        out: &mut [f32],
    ) {
        let first = grid.cells()[cell].start as usize;
        let candidates = grid.candidate_ranges(cell);
        assert!(
            candidates
                .iter()
                .all(|r| sorted.iter().all(|s| r.end as usize <= s.len())),
            "a candidate past the positions"
        );
        let mut chunks = out.chunks_exact_mut(POINTS);
        let mut i0 = first;
        for out in &mut chunks {
            block::<POINTS>(sorted, candidates, h2, coefficient, i0, out);
            i0 += POINTS;
        }
        let rest = chunks.into_remainder();
        match rest.len() {
            1 => block::<1>(sorted, candidates, h2, coefficient, i0, rest),
            2 => block::<2>(sorted, candidates, h2, coefficient, i0, rest),
            3 => block::<3>(sorted, candidates, h2, coefficient, i0, rest),
            _ => {}
        }
    }

    /// The densities of the `P` points `i0..i0 + P` into `out` (`P` entries), every
    /// candidate block loaded once for all of them. Every candidate range ends within
    /// the positions (checked by the caller).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn block<const P: usize>(
        sorted: [&[f32]; 3],
        candidates: &[pbf_grid::CellRange],
        h2: f32,
        coefficient: f32,
        i0: usize,
        out: &mut [f32],
    ) {
        let limit = _mm512_set1_ps(h2);
        let xi: [[__m512; 3]; P] =
            core::array::from_fn(|p| core::array::from_fn(|a| _mm512_set1_ps(sorted[a][i0 + p])));
        let mut sums = [_mm512_setzero_ps(); P];
        for range in candidates {
            let (start, end) = (range.start as usize, range.end as usize);
            let mut j = start;
            while j < end {
                let tail: u16 = if end - j >= 16 {
                    u16::MAX
                } else {
                    (1u16 << (end - j)) - 1
                };
                // SAFETY: the lanes set in `tail` are `j..min(j + 16, end)`, and no
                // range ends past the positions (checked by the caller); a masked load
                // touches no other lane.
                let q: [__m512; 3] = core::array::from_fn(|a| unsafe {
                    _mm512_maskz_loadu_ps(tail, sorted[a].as_ptr().add(j))
                });
                for p in 0..P {
                    let d: [__m512; 3] = core::array::from_fn(|a| _mm512_sub_ps(xi[p][a], q[a]));
                    let r2 = _mm512_fmadd_ps(
                        d[2],
                        d[2],
                        _mm512_fmadd_ps(d[1], d[1], _mm512_mul_ps(d[0], d[0])),
                    );
                    let inside = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(tail, r2, limit);
                    let t = _mm512_sub_ps(limit, r2);
                    let w = _mm512_mul_ps(_mm512_mul_ps(t, t), t);
                    sums[p] = _mm512_mask_add_ps(sums[p], inside, sums[p], w);
                }
                j += 16;
            }
        }
        for (p, out) in out.iter_mut().enumerate() {
            *out = coefficient * _mm512_reduce_add_ps(sums[p]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jittered lattice of `side^3` points, spacing 1, jitter up to 0.3, shuffled by
    /// a fixed permutation (so the grid reorders it).
    fn cloud(side: usize, seed: u64) -> [Vec<f32>; 3] {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut p: [Vec<f32>; 3] = Default::default();
        for k in 0..side * side * side {
            let c = [k % side, (k / side) % side, k / (side * side)];
            for a in 0..3 {
                p[a].push(c[a] as f32 + 0.6 * next() - 0.3);
            }
        }
        p
    }

    #[test]
    fn avx512_density_matches_the_scalar_reference() {
        // h = 4: cells of 64 points, 1728 candidates, more than a cell packs.
        for (side, h) in [
            (1, 2.0f32),
            (7, 2.0),
            (12, 2.0),
            (10, 1.5),
            (9, 3.1),
            (13, 4.0),
        ] {
            let p = cloud(side, side as u64);
            let mut grid = Grid::<3>::new();
            grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
            let sorted: [Vec<f32>; 3] = core::array::from_fn(|a| {
                grid.permutation()
                    .iter()
                    .map(|&k| p[a][k as usize])
                    .collect()
            });
            let s = [&sorted[0][..], &sorted[1][..], &sorted[2][..]];
            let kernel = Kernel::<3>::new(h).unwrap();
            let mut density = vec![0.0f32; grid.len()];
            if !fused_density_avx512(&grid, &kernel, s, &mut density) {
                assert!(!avx512_available());
                return;
            }
            for i in 0..grid.len() {
                let mut expected = 0.0f64;
                for j in 0..grid.len() {
                    let d: [f32; 3] = core::array::from_fn(|a| s[a][i] - s[a][j]);
                    expected += f64::from(kernel.poly6(pbf_kernels::norm2(d)));
                }
                let got = f64::from(density[i]);
                assert!(
                    (got - expected).abs() <= 1e-5 * expected,
                    "point {i} of {}: {got} vs {expected}",
                    grid.len()
                );
            }
        }
    }
}
