//! The portable sifter: which particles of a cell's candidates lie within the radius,
//! eight candidates at a time on any eight-lane backend, the hits' indices packed
//! through a table.

use super::*;

/// The code that sifts the candidates: both give the same lists, entry for entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sifter {
    /// Eight-wide through `wide` and the `COMPRESS` table, on every machine.
    Portable,
    /// The portable sifter's code on one AVX register ([`LaneKind::Avx`]), where the
    /// CPU has AVX but not AVX-512F (checked at run time).
    #[cfg(target_arch = "x86_64")]
    Avx,
    /// Sixteen-wide with AVX-512F's masked loads and `vpcompressd`, where the CPU has
    /// AVX-512F and POPCNT (checked at run time).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Default for Sifter {
    /// The fastest the CPU runs.
    fn default() -> Self {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return Sifter::Avx512;
        }
        #[cfg(target_arch = "x86_64")]
        if LaneKind::Avx.is_available() {
            return Sifter::Avx;
        }
        Sifter::Portable
    }
}

impl Sifter {
    /// The eight lanes of the portable sifter's code ([`Sifter::Avx512`] has its own).
    pub(super) fn lane_kind(self) -> LaneKind {
        match self {
            #[cfg(target_arch = "x86_64")]
            Sifter::Avx => LaneKind::Avx,
            _ => LaneKind::Portable,
        }
    }
}

/// One block's rows sifted by the portable sifter's code on eight lanes.
pub(super) struct FillBlock<'a, const D: usize> {
    pub(super) rows: &'a mut Rows,
    pub(super) grid: &'a Grid<D>,
    pub(super) positions: [&'a [f32]; D],
    pub(super) h2: f32,
    pub(super) range: core::ops::Range<usize>,
    pub(super) most: usize,
}

impl<const D: usize> WithEight for FillBlock<'_, D> {
    type Output = ();
    fn run<E: Eight>(self) {
        let FillBlock {
            rows,
            grid,
            positions,
            h2,
            range,
            most,
        } = self;
        E::run(
            #[inline(always)]
            || fill_block::<E, D>(rows, grid, positions, h2, range, most),
        );
    }
}

/// For every 8-bit mask, the positions of its set bits, lowest first (the rest 0).
pub(super) const COMPRESS: [[u32; 8]; 256] = {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if mask & (1 << bit) != 0 {
                table[mask][k] = bit as u32;
                k += 1;
            }
            bit += 1;
        }
        mask += 1;
    }
    table
};

/// The 8-bit mask of the first `remaining` lanes (all eight from 8 on).
pub(super) fn tail_bits(remaining: usize) -> u32 {
    if remaining >= 8 {
        0xff
    } else {
        (1 << remaining) - 1
    }
}

/// The candidate ranges of particle `i` and their number, after making room in `block`
/// past `used` for the lists of `lists` particles of its cell: for each, all the
/// candidates plus `surplus` entries that a sifter writes past the hits; `None` (and
/// the block marked overfull) when they are more than `limit`.
pub(super) fn candidates_with_room<'g, const D: usize>(
    block: &mut Rows,
    grid: &'g Grid<D>,
    i: usize,
    used: usize,
    (lists, surplus): (usize, usize),
    limit: usize,
) -> Option<(&'g [crate::CellRange], usize)> {
    let candidates = grid.candidate_ranges(grid.cell_of()[i] as usize);
    let most: usize = candidates.iter().map(|r| r.len()).sum();
    if most > limit || block.overfull.is_some() {
        block.overfull.get_or_insert((i, most));
        return None;
    }
    let needed = used + lists * (most + surplus);
    if block.indices.len() < needed {
        // Half again as much as needed, so that a flow that packs a block a little
        // tighter later does not reallocate in the middle of a run.
        block.indices.resize(needed + needed / 2, 0);
    }
    Some((candidates, most))
}

/// The lists of the particles `range`, by an eight-wide distance test over their
/// candidate ranges. The indices of a block of candidates within h are written eight
/// at a time through [`COMPRESS`] (the surplus is overwritten by the next block), so
/// `block.indices` keeps its high-water length and only the `ends` say what is used.
///
/// A cell of [`PACK_FROM`] particles or more first copies its candidates into one run
/// ([`pack_run`]), which its particles then walk in whole blocks of eight, up to four
/// particles against each block ([`sift_run`]): walking the ranges, each range's last
/// block is partly empty (a cell holds about nine particles at h = 2 spacings), and
/// the run is shared by all the cell's particles, and four at once load each block
/// once for all four. The entries are the same, in the same order.
///
/// Inlined into its callers, so that the AVX register's ([`Sifter::Avx`]) runs in
/// a function compiled for AVX.
#[inline(always)]
pub(super) fn fill_block<E: Eight, const D: usize>(
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
        reserve_run(&mut block.packed, D, most, 8);
    }
    let limit = E::splat(h2);
    let cells = grid.cell_of();
    let mut used = 0usize;
    let mut i = range.start;
    while i < range.end {
        let mut stop = i + 1;
        while stop < range.end && cells[stop] == cells[i] {
            stop += 1;
        }
        // Whether the run of the cell's candidates is there: its first particles with
        // room copy it.
        let mut copied = false;
        if stop - i >= PACK_FROM {
            // Up to four of the cell's particles at once, each block of the run loaded
            // once for all of them (as the sixteen-wide sifter does).
            let mut p = i;
            while p < stop {
                let args = (&mut *block, grid, positions, limit, most);
                (used, p) = match stop - p {
                    4.. => (sift_run::<E, D, 4>(args, p, used, &mut copied), p + 4),
                    2 | 3 => (sift_run::<E, D, 2>(args, p, used, &mut copied), p + 2),
                    _ => (sift_run::<E, D, 1>(args, p, used, &mut copied), p + 1),
                };
            }
            i = stop;
            continue;
        }
        for i in i..stop {
            let xi: [E; D] = core::array::from_fn(|a| E::splat(positions[a][i]));
            let Some((candidates, _)) = candidates_with_room(block, grid, i, used, (1, 8), most)
            else {
                block.ends.push(used as u32);
                continue;
            };
            within8(positions, xi, limit, candidates, |j, bits| {
                used = store_hits(&mut block.indices, used, j, without(bits, i, j));
            });
            block.ends.push(used as u32);
        }
        i = stop;
    }
}

/// The lists of the `K` particles from `i`, which share a cell of [`PACK_FROM`]
/// particles or more, written one after the other from `used`; returns where the
/// last one ends. The cell's candidates are copied into one run (`block.packed`) by
/// its first call with room (`copied` says whether they are), and every block of
/// eight of the run is loaded once for the `K` particles. Each particle's hits go to
/// a stretch of its own first (room for all the candidates and the eight a store
/// writes past the last hit), as positions in the run; they are then moved down to
/// follow the particle before and made indices. The entries are those the
/// one-particle walk finds, in the same order.
#[inline(always)]
pub(super) fn sift_run<E: Eight, const D: usize, const K: usize>(
    (block, grid, positions, limit, most): (&mut Rows, &Grid<D>, [&[f32]; D], E, usize),
    i: usize,
    used: usize,
    copied: &mut bool,
) -> usize {
    let Some((candidates, count)) = candidates_with_room(block, grid, i, used, (K, 8), most) else {
        for _ in 0..K {
            block.ends.push(used as u32);
        }
        return used;
    };
    if !*copied {
        // Under a limit, reserved by `fill_block` (`count <= most`).
        reserve_run(&mut block.packed, D, count, 8);
        pack_run(&mut block.packed, positions, candidates, count);
        *copied = true;
    }
    // Where `i` itself lies in the run (the ranges are copied in order); the cell's
    // next particles follow it, in the same range.
    let mut own = 0usize;
    for r in candidates {
        if (r.start as usize..r.end as usize).contains(&i) {
            own += i - r.start as usize;
            break;
        }
        own += r.len();
    }
    let xi: [[E; D]; K] =
        core::array::from_fn(|k| core::array::from_fn(|a| E::splat(positions[a][i + k])));
    let stride = count + 8;
    let mut at: [usize; K] = core::array::from_fn(|k| used + k * stride);
    let Rows {
        indices, packed, ..
    } = &mut *block;
    let xyz = &packed.0;
    let mut j = 0;
    while j < count {
        // The run's lanes past `count` are scratch: `tail_bits` leaves them out.
        let q: [E; D] =
            core::array::from_fn(|a| E::from_eight(xyz[a][j..j + 8].try_into().expect("eight")));
        let tail = tail_bits(count - j);
        for k in 0..K {
            let x: [E; D] = core::array::from_fn(|a| xi[k][a] - q[a]);
            let bits = E::below(E::norm2(x), limit) & tail;
            // Positions in the run, made indices below (a load a hit, where here it
            // would be eight a block).
            at[k] = store_hits(indices, at[k], j, without(bits, own + k, j));
        }
        j += 8;
    }
    let end = close_lists(block, used, stride, &at);
    let (indices, run_indices) = (&mut block.indices, &block.packed.1);
    for entry in &mut indices[used..end] {
        *entry = run_indices[*entry as usize];
    }
    end
}

/// `bits` (of the eight candidates from `j`) without the one that is `own`, if any.
#[inline(always)]
pub(super) fn without(bits: u32, own: usize, j: usize) -> u32 {
    let at = own.wrapping_sub(j);
    if at < 8 { bits & !(1 << at) } else { bits }
}

/// Writes `j + l` for every bit `l` of `bits` at `indices[used..]`, through
/// [`COMPRESS`] (eight entries, the surplus overwritten by the next call), and returns
/// where the hits end.
#[inline(always)]
pub(super) fn store_hits(indices: &mut [u32], used: usize, j: usize, bits: u32) -> usize {
    let lanes = &COMPRESS[bits as usize];
    let out = &mut indices[used..used + 8];
    for k in 0..8 {
        out[k] = j as u32 + lanes[k];
    }
    used + bits.count_ones() as usize
}

/// Closes the lists of particles sifted together ([`sift_run`] and the AVX-512
/// sifter's group): list `k` was written from `used + k * stride` to `at[k]`; each is
/// moved down to follow the one before (the first is in place) and its end pushed.
/// Returns the end of the last.
pub(super) fn close_lists(block: &mut Rows, used: usize, stride: usize, at: &[usize]) -> usize {
    let mut end = at[0];
    block.ends.push(end as u32);
    for (k, &at) in at.iter().enumerate().skip(1) {
        let from = used + k * stride;
        block.indices.copy_within(from..at, end);
        end += at - from;
        block.ends.push(end as u32);
    }
    end
}

/// The fewest particles of a cell for which the sifters copy the cell's candidates
/// into one run first: fewer are walked once or twice, and the copy costs about as
/// much as a walk's partly empty blocks.
pub(super) const PACK_FROM: usize = 5;

/// Makes `packed` (see [`Rows`]) hold `count` candidates of `dimension` axes, and
/// a whole block of `width` stored or loaded from the last of them on.
pub(super) fn reserve_run(
    (xyz, indices): &mut ([Vec<f32>; 3], Vec<u32>),
    dimension: usize,
    count: usize,
    width: usize,
) {
    for v in xyz.iter_mut().take(dimension) {
        if v.len() < count + width {
            v.resize(count + width, 0.0);
        }
    }
    if indices.len() < count + width {
        indices.resize(count + width, 0);
    }
}

/// Copies the candidates `ranges` (`count` in all) into `packed`, one after the
/// other: coordinates by axis and indices, in the order the ranges give them.
///
/// # Panics
/// When a range reaches past the positions, or the ranges hold more than `count`
/// candidates (bugs in the caller).
pub(super) fn pack_run<const D: usize>(
    (xyz, indices): &mut ([Vec<f32>; 3], Vec<u32>),
    positions: [&[f32]; D],
    ranges: &[crate::CellRange],
    count: usize,
) {
    let mut n = 0;
    for range in ranges {
        let (start, end) = (range.start as usize, range.end as usize);
        assert!(
            n + (end - start) <= count,
            "neighbour lists: more candidates than counted"
        );
        // Eight at a time (a copy of a length known only at run time is a call of
        // `memmove`): the blocks past the range's end are scratch that the next range
        // overwrites, or past `count`.
        let mut k = start;
        while k < end {
            for a in 0..D {
                let to: &mut [f32; 8] = (&mut xyz[a][n..n + 8]).try_into().expect("eight");
                match positions[a].get(k..k + 8) {
                    Some(from) => *to = from.try_into().expect("eight"),
                    None => to[..end - k].copy_from_slice(&positions[a][k..end]),
                }
            }
            let to: &mut [u32; 8] = (&mut indices[n..n + 8]).try_into().expect("eight");
            *to = core::array::from_fn(|l| (k + l) as u32);
            let step = (end - k).min(8);
            n += step;
            k += step;
        }
    }
}

/// Appends to `out` the points of `ranges` within `sqrt(h2)` of `p`, ascending when
/// the ranges are: those with `norm2(p - x_j) < h2` at `positions`, the test of
/// `pbf_kernels::within(pbf_kernels::norm2(p - x_j), h2)` with the same bits, eight
/// candidates at a time. What a repair then spends is mostly the cache misses of moved
/// particles scattered over the fluid.
///
/// # Panics
/// When a range reaches past the positions (a bug in the caller).
pub fn near<const D: usize>(
    positions: [&[f32]; D],
    p: [f32; D],
    h2: f32,
    ranges: &[crate::CellRange],
    out: &mut Vec<u32>,
) {
    let xi: [f32x8; D] = core::array::from_fn(|a| f32x8::splat(p[a]));
    within8(positions, xi, f32x8::splat(h2), ranges, |j, mut bits| {
        while bits != 0 {
            out.push(j as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    });
}

/// Runs `f(j, bits)` for every eight candidates `j..j + 8` of each of `ranges`, bit
/// `l` of `bits` set when candidate `j + l` is in the range and `norm2(xi - x) <
/// limit` at `positions`: the scalar test's bits (`pbf_kernels::within` of
/// `pbf_kernels::norm2`). The lanes past a range's end (the next cell's particles, or
/// the zeros past the arrays) are dropped from the mask.
///
/// # Panics
/// When a range reaches past the positions (a bug in the caller).
#[inline(always)]
pub(super) fn within8<E: Eight, const D: usize>(
    positions: [&[f32]; D],
    xi: [E; D],
    limit: E,
    ranges: &[crate::CellRange],
    mut f: impl FnMut(usize, u32),
) {
    for range in ranges {
        let (start, end) = (range.start as usize, range.end as usize);
        assert!(
            positions.iter().all(|x| end <= x.len()),
            "neighbour lists: a candidate past the positions"
        );
        let mut j = start;
        while j < end {
            let x: [E; D] =
                core::array::from_fn(|a| xi[a] - pbf_kernels::load8::<E>(positions[a], j));
            f(j, E::below(E::norm2(x), limit) & tail_bits(end - j));
            j += 8;
        }
    }
}
