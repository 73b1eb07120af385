//! The sixteen-wide sifter: [`fill_block`]'s walk over the cells with the distance
//! tests, copies and transposes of [`pbf_kernels::Sift16`], which computes every
//! squared distance exactly as [`fill_block`] does, so the two give the same lists,
//! entry for entry, on the same input.

use super::*;
use pbf_kernels::Sift16;

/// The token of the sixteen-wide sifter, which the lists pick only where the CPU
/// runs it.
fn token() -> Sift16 {
    Sift16::new().expect("the AVX-512 sifter needs AVX-512F and POPCNT")
}

/// [`super::fill_block`], sixteen candidates at a time.
///
/// # Panics
/// Like [`super::fill_block`], when the grid and the positions disagree (a bug in
/// the caller): every index is checked against the slices before it is used.
pub(super) fn fill_block<const D: usize>(
    block: &mut Rows,
    grid: &Grid<D>,
    positions: [&[f32]; D],
    h2: f32,
    range: core::ops::Range<usize>,
    most: usize,
) {
    let sift = token();
    sift.run(
        #[inline(always)]
        || fill_block_with(sift, block, grid, positions, h2, range, most),
    );
}

/// [`Sift16::transpose_group`], compiled for its instructions.
pub(super) fn transpose_group(
    indices: &[u32],
    start: [usize; 16],
    count: [usize; 16],
    own: [u32; 16],
    columns: &mut [u32],
    span: u32,
) -> u32 {
    let sift = token();
    sift.run(
        #[inline(always)]
        || sift.transpose_group(indices, start, count, own, columns, span),
    )
}

#[inline(always)]
fn fill_block_with<const D: usize>(
    sift: Sift16,
    block: &mut Rows,
    grid: &Grid<D>,
    positions: [&[f32]; D],
    h2: f32,
    range: core::ops::Range<usize>,
    most: usize,
) {
    block.ends.clear();
    // Room for the most candidates a cell may have, once, under a limit (the
    // solver's): a step allocates nothing in steady state.
    if most < usize::MAX {
        reserve_run(&mut block.packed, D, most, 16);
    }
    let cells = grid.cell_of();
    let mut used = 0usize;
    let mut i = range.start;
    while i < range.end {
        // The particles of a cell are consecutive and share their candidates:
        // up to four of them are sifted together, each candidate's coordinates
        // loaded once for all of them.
        let mut stop = i + 1;
        while stop < range.end && cells[stop] == cells[i] {
            stop += 1;
        }
        // A cell of several particles copies its candidates into one run first,
        // which its groups then walk in whole blocks of sixteen: the ranges' last
        // blocks are partly empty.
        let mut copied = (stop - i >= PACK_FROM).then_some(false);
        while i < stop {
            let args = (&mut *block, grid, positions, h2, most);
            let copied = copied.as_mut();
            let same;
            (used, same) = match stop - i {
                4.. => (sift_together::<D, 4>(sift, args, i, used, copied), 4),
                2 | 3 => (sift_together::<D, 2>(sift, args, i, used, copied), 2),
                _ => (sift_together::<D, 1>(sift, args, i, used, copied), 1),
            };
            i += same;
        }
    }
}

/// The lists of the `K` particles from `i`, which share a cell, written one after
/// the other from `used` (each to its own stretch first, then moved down to follow
/// the one before); returns where the last one ends. Each particle's entries are
/// those [`super::fill_block`] finds, in the same order.
///
/// `copied`: for a cell whose candidates are copied into one run
/// ([`Sift16::pack_candidates`]), whether they are (the cell's first group with
/// room copies them); the group then walks that run instead of the ranges.
#[inline(always)]
fn sift_together<const D: usize, const K: usize>(
    sift: Sift16,
    (block, grid, positions, h2, most): (&mut Rows, &Grid<D>, [&[f32]; D], f32, usize),
    i: usize,
    used: usize,
    copied: Option<&mut bool>,
) -> usize {
    let Some((candidates, count)) =
        super::candidates_with_room(block, grid, i, used, (K, 16), most)
    else {
        for _ in 0..K {
            block.ends.push(used as u32);
        }
        return used;
    };
    let stride = count + 16;
    let xi: [[f32; D]; K] = core::array::from_fn(|k| core::array::from_fn(|a| positions[a][i + k]));
    let own: [u32; K] = core::array::from_fn(|k| (i + k) as u32);
    // Particle `k`'s entries go to `used + k * stride..`, room for all its
    // candidates and the sixteen a store writes past the last hit.
    let mut at: [usize; K] = core::array::from_fn(|k| used + k * stride);
    let ranges = || candidates.iter().map(|r| r.start as usize..r.end as usize);
    if let Some(copied) = copied {
        if !*copied {
            // Under a limit, reserved by `fill_block_with` (`count <= most`).
            reserve_run(&mut block.packed, D, count, 16);
            let (xyz, indices) = &mut block.packed;
            sift.pack_candidates((xyz, indices), positions, ranges(), count);
            *copied = true;
        }
        let (xyz, indices) = &block.packed;
        let run: [&[f32]; D] = core::array::from_fn(|a| &xyz[a][..]);
        sift.sift_run(
            xi,
            own,
            h2,
            (run, indices),
            count,
            &mut block.indices,
            &mut at,
        );
    } else {
        for range in ranges() {
            sift.sift_range(xi, own, h2, positions, range, &mut block.indices, &mut at);
        }
    }
    super::close_lists(block, used, stride, &at)
}
