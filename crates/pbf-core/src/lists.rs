//! Neighbour lists, built once per step from the grid's candidate ranges.
//!
//! The grid hands every particle the particles of the `3^D` cells around its own:
//! about 216 candidates in 3D at h = 2 x spacing, of which only about 15% lie within
//! h. A step walks the neighbourhood of every particle ten or more times (two passes
//! per constraint iteration, then XSPH with the final densities, and vorticity),
//! so it pays to sift the candidates once: [`NeighbourLists::build`] keeps, for every
//! particle, the indices `j != i` with `r^2 < R^2` (the predicate of
//! [`pbf_kernels::within`], `R` the search radius) in ascending order, and every pass
//! then loads its lanes from those indices. The solver builds them with R a little
//! larger than h, on the predicted positions (Macklin & Müller 2013, Algorithm 1,
//! line 6), and mends them ([`NeighbourLists::insert`]) or builds them again when
//! particles have moved too far for the margin (see the solver's `LIST_SKIN`); pairs
//! beyond h get zero from every kernel.
//!
//! Two sifters build the same lists, entry for entry (a property test holds them
//! equal): a portable one, eight candidates at a time through `wide` and a table that
//! packs the indices of the hits, and one for CPUs with AVX-512F, sixteen at a time with
//! masked loads and `vpcompressd`, picked at run time (`unsafe` code kept because it
//! builds the lists 2.2x faster at 100k particles; see BENCHMARKS.md).
//!
//! Storage is blocked and by columns: a sifter writes the lists of [`BLOCK`]
//! consecutive particles one after the other into the block's scratch ([`Rows`]),
//! which is then transposed into the block's [`ListBlock`]: groups of [`GROUP`]
//! particles, their `k`-th neighbours side by side, so that a pass runs one particle a
//! lane ([`Neighbourhood::for_each_slot`]). With AVX-512F the transpose is sixteen
//! masked loads and a 16 x 16 transpose in registers (`unsafe`, 1.9x less of a step
//! than the portable loop). Blocks are built in parallel without a global prefix sum,
//! and every vector keeps its capacity between steps (no allocation in steady state).

use crate::lanes::{Lane, load8, norm2};
use crate::parallel::for_each_chunk_of;
use pbf_grid::Grid;
use pbf_kernels::f32x8;

/// Particles per list block.
pub(crate) const BLOCK: usize = 256;

/// The fewest particles for which a build marks the lines each block's passes first
/// touch, and the passes prefetch them a block ahead
/// ([`NeighbourLists::prefetch_next`]): their quads are then 8 MiB or more. In the 3D
/// dam break at 1M particles on 2 threads, where the quads no longer stay in the
/// caches from one pass to the next, the prefetches made the constraint phase 7% and
/// the velocity phase 9% faster, and the step 4% with the marking's cost (a
/// single-threaded sweep of the grid's cells, 3-4 ms). At 97k and 300k particles the
/// passes gained 0-3% and the marking cost as much or more.
pub(crate) const PREFETCH_FROM: usize = 1 << 19;

/// Asks the CPU to bring the cache line of `value` into its caches (x86-64; nothing
/// elsewhere): a hint, which changes no result.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the address is that of a live reference; a prefetch reads nothing into
    // the program and never faults.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Blocks per chunk of [`NeighbourLists::mark_ahead`].
const AHEAD_CHUNK: usize = 64;

/// The entries a particle's list gets room for: the lattice points within `radius` of
/// a particle on a lattice of `spacing` (the rest density), times 1.5 in 3D and 2 in
/// 2D. PBF holds the density near rest, so blocks of 256 particles stay below this on
/// average; in 2D a block also needs room for one particle's candidates (about three
/// times its neighbours) past its last list, and a 2D dam break with relaxed Jacobi
/// passes packed one block past 1.5 (the allocation test caught it).
pub(crate) fn room_per_particle<const D: usize>(radius: f32, spacing: f32) -> usize {
    let ratio = f64::from(radius) / f64::from(spacing);
    let (ball, factor) = match D {
        2 => (core::f64::consts::PI * ratio * ratio, 2.0),
        _ => (4.0 / 3.0 * core::f64::consts::PI * ratio.powi(3), 1.5),
    };
    (factor * ball).ceil().min(1e6) as usize + 1
}

/// How many times the rest density a particle's neighbourhood may reach before a list
/// build stops with [`Overfull`] (see [`max_candidates`]).
pub(crate) const COLLAPSE_FACTOR: usize = 16;

/// The most candidates (particles of the `3^D` cells of side `radius` around its own)
/// a particle may have: [`COLLAPSE_FACTOR`] times their number at rest density on a
/// lattice of `spacing`. PBF holds the density within a few percent of rest; sixteen
/// times is a fluid that has collapsed into clumps (a diverging run), whose lists
/// would take memory quadratic in the clump size (a 2D dam break at four times its
/// stable time step took 20 GB).
pub(crate) fn max_candidates<const D: usize>(radius: f32, spacing: f32) -> usize {
    let cells = f64::from(radius) / f64::from(spacing) * 3.0;
    (COLLAPSE_FACTOR as f64 * cells.powi(D as i32))
        .ceil()
        .min(1e12) as usize
}

/// The lists of one block of [`BLOCK`] particles as the sifters write them, one after
/// the other: scratch of the block (kept with the block, so that what a build
/// reallocates depends on the flow alone, not on which thread built which block), which
/// [`transpose_block`] turns into the
/// block's [`ListBlock`].
#[derive(Debug, Default, Clone)]
pub(crate) struct Rows {
    /// `ends[k]` is one past the last entry of particle `k` of the block in `indices`.
    ends: Vec<u32>,
    /// The lists one after the other; entries past the last end are scratch.
    indices: Vec<u32>,
    /// The first particle of the block whose candidates exceeded the limit of the
    /// build, and their number (its list and the later ones are left empty).
    overfull: Option<(usize, usize)>,
}

impl Rows {
    /// Makes room for a block: `room` indices and [`BLOCK`] ends.
    fn reserve(&mut self, room: usize) {
        if self.indices.len() < room {
            self.indices.resize(room, 0);
        }
        if self.ends.capacity() < BLOCK {
            self.ends.reserve(BLOCK);
        }
    }
}

/// Particles per column group of a [`ListBlock`]: the widest lanes the passes run.
pub(crate) const GROUP: usize = 16;

/// The lists of one block of [`BLOCK`] particles, by columns, so that a pass can walk
/// [`GROUP`] lists at once, one particle a lane ([`Neighbourhood::for_each_slot`]):
/// group `g` of the block holds the slots `slot_ends[g - 1]..slot_ends[g]`, and slot
/// `s` the `k`-th entry of each of the group's lists, at `columns[s * GROUP + lane]`.
/// A lane whose list is shorter than the group's longest holds its own particle's index
/// in the slots past its end (a valid index to load, masked by its count).
#[derive(Debug, Default, Clone)]
pub(crate) struct ListBlock {
    /// The slots of the groups, one after the other; entries past the last slot end
    /// are scratch.
    columns: Vec<u32>,
    /// One past the last slot of every group of the block.
    slot_ends: Vec<u32>,
    /// The length of every particle's list, [`BLOCK`] entries (0 past the particles).
    counts: Vec<u32>,
    /// As [`Rows::overfull`].
    overfull: Option<(usize, usize)>,
    /// The sifter's scratch for this block.
    rows: Rows,
    /// The lines of four particles (`index / 4`) of the block's candidate cells that no
    /// earlier block of its chunk of [`AHEAD_CHUNK`] blocks has among its own, in
    /// ascending order of their cells ([`NeighbourLists::mark_ahead`]): what a pass
    /// first touches in this block, which the pass over the block before prefetches
    /// ([`NeighbourLists::prefetch_next`]).
    ahead: Vec<u32>,
}

/// The index a column holds past the end of the list of lane `k` of a block whose
/// `len` particles start at `first`: the lane's own particle, or past the particles
/// the block's last one (a valid index to load, masked by its count).
fn padding(first: usize, k: usize, len: usize) -> u32 {
    (first + k.min(len - 1)) as u32
}

impl ListBlock {
    /// The first slot of group `g` and its number of slots.
    #[inline(always)]
    fn slots(&self, g: usize) -> (usize, usize) {
        let start = if g == 0 {
            0
        } else {
            self.slot_ends[g - 1] as usize
        };
        (start, self.slot_ends[g] as usize - start)
    }
}

/// Writes `rows`, the lists of the particles `first..first + len`, into `block` by
/// columns.
fn transpose_block(rows: &Rows, block: &mut ListBlock, first: usize, len: usize, sifter: Sifter) {
    block.overfull = rows.overfull;
    block.counts.clear();
    block.counts.resize(BLOCK, 0);
    block.slot_ends.clear();
    let mut slots = 0usize;
    for g in 0..len.div_ceil(GROUP) {
        // Where each lane's list starts in the rows and how long it is; past the
        // particles, an empty list padded with the block's last particle.
        let mut start = [0usize; GROUP];
        let mut count = [0usize; GROUP];
        let mut own = [0u32; GROUP];
        for lane in 0..GROUP {
            let k = g * GROUP + lane;
            own[lane] = padding(first, k, len);
            if k < len {
                start[lane] = if k == 0 { 0 } else { rows.ends[k - 1] as usize };
                count[lane] = rows.ends[k] as usize - start[lane];
                block.counts[k] = count[lane] as u32;
            }
        }
        let most = count.iter().copied().max().unwrap_or(0);
        let needed = (slots + most) * GROUP;
        if block.columns.len() < needed {
            // Half again as much, as the rows do.
            block.columns.resize(needed + needed / 2, 0);
        }
        // Slot by slot, so that every slot is one full sixteen-entry store.
        let columns = &mut block.columns[slots * GROUP..needed];
        match sifter {
            Sifter::Portable => {
                for (s, slot) in columns.chunks_exact_mut(GROUP).enumerate() {
                    let mut entries = own;
                    for lane in 0..GROUP {
                        if s < count[lane] {
                            entries[lane] = rows.indices[start[lane] + s];
                        }
                    }
                    slot.copy_from_slice(&entries);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Sifter::Avx512 => avx512::transpose_group(&rows.indices, start, count, own, columns),
        }
        slots += most;
        block.slot_ends.push(slots as u32);
    }
}

/// A build stopped: a particle has more candidates than the limit allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overfull {
    /// The particle (sorted index).
    pub(crate) index: usize,
    /// Its candidates (the particles of the cells around its own).
    pub(crate) candidates: usize,
}

/// Every particle's neighbours within h, excluding itself.
///
/// Every entry of a group's slots is the index of a particle of the last build (below
/// [`len`](Self::len)): a build writes the grid's candidates, which its sifters read
/// the positions of (bounds-checked), and the groups' own particles as padding;
/// [`insert`](Self::insert) checks its pair. The passes' unchecked loads rely on it
/// ([`Neighbourhood::for_each_slot`]).
#[derive(Debug, Default, Clone)]
pub(crate) struct NeighbourLists {
    blocks: Vec<ListBlock>,
    /// The particles of the last build.
    len: usize,
    /// Which distance test builds the lists.
    sifter: Sifter,
    /// The most candidates a particle may have (see [`Self::set_max_candidates`]).
    max_candidates: Option<usize>,
    /// Whether the last build marked the blocks' [`ListBlock::ahead`] (see
    /// [`PREFETCH_FROM`]).
    prefetching: bool,
    /// Tests mark the lines from other sizes than [`PREFETCH_FROM`].
    #[cfg(test)]
    prefetch_from: Option<usize>,
}

/// The blocks that announced a cell in [`NeighbourLists::mark_ahead`], one per chunk
/// of blocks its candidates reach, the first [`Announced::MOST`] of them (a cell's
/// candidates seldom reach more than two chunks; past the most, the line the cell
/// shares with the next one may be announced twice).
struct Announced {
    blocks: [usize; Announced::MOST],
    len: usize,
}

impl Announced {
    const MOST: usize = 32;
}

impl Default for Announced {
    fn default() -> Self {
        Self {
            blocks: [0; Self::MOST],
            len: 0,
        }
    }
}

/// The code that sifts the candidates: both give the same lists, entry for entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sifter {
    /// Eight-wide through `wide` and the [`COMPRESS`] table, on every machine.
    Portable,
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
        Sifter::Portable
    }
}

impl NeighbourLists {
    /// Empty lists that the given sifter builds (for tests and benchmarks: the default
    /// picks the fastest the CPU has).
    #[cfg(test)]
    pub(crate) fn with_sifter(sifter: Sifter) -> Self {
        Self {
            sifter,
            ..Self::default()
        }
    }

    /// Makes [`build`](Self::build) fail, before it allocates for them, when a particle
    /// has more than `limit` candidates: the memory of the lists grows with the square
    /// of a clump's size, so a collapsed flow would otherwise take gigabytes.
    pub(crate) fn set_max_candidates(&mut self, limit: usize) {
        self.max_candidates = Some(limit);
    }

    /// Rebuilds the lists for `positions` (sorted as the grid's last rebuild left them),
    /// with room in every block for `per_particle` entries a particle, so that a flow
    /// whose density stays below that bound never reallocates (see
    /// [`room_per_particle`]).
    ///
    /// # Errors
    /// [`Overfull`] for the first particle (in sorted order) with more candidates than
    /// [`set_max_candidates`](Self::set_max_candidates) allows; the lists are then not
    /// usable until the next successful build.
    ///
    /// # Panics
    /// When `positions` do not have the grid's length (a bug in the caller).
    pub(crate) fn build<const D: usize>(
        &mut self,
        grid: &Grid<D>,
        positions: [&[f32]; D],
        h2: f32,
        per_particle: usize,
    ) -> Result<(), Overfull> {
        let n = positions[0].len();
        assert!(
            positions.iter().all(|p| p.len() == n) && grid.cell_of().len() == n,
            "neighbour lists: positions and grid disagree in length"
        );
        let blocks = n.div_ceil(BLOCK);
        self.len = n;
        if self.blocks.len() < blocks {
            self.blocks.resize_with(blocks, ListBlock::default);
        }
        let most = self.max_candidates.unwrap_or(usize::MAX);
        for_each_chunk_of([&mut self.blocks[..blocks]], 1, 1, &|first, [chunk]| {
            for (b, block) in chunk.iter_mut().enumerate() {
                let start = (first + b) * BLOCK;
                let room = BLOCK * per_particle;
                // Taken out for the build (no allocation: an empty `Rows` holds
                // none) and put back with its capacity.
                let rows = &mut core::mem::take(&mut block.rows);
                rows.reserve(room);
                // The same room for the columns, and a quarter more for the
                // padding of the groups (12% in the dam break at 97k).
                if block.columns.len() < room + room / 4 {
                    block.columns.resize(room + room / 4, 0);
                }
                let range = start..(start + BLOCK).min(n);
                rows.overfull = None;
                match self.sifter {
                    Sifter::Portable => {
                        fill_block(rows, grid, positions, h2, range.clone(), most);
                    }
                    #[cfg(target_arch = "x86_64")]
                    Sifter::Avx512 => {
                        avx512::fill_block(rows, grid, positions, h2, range.clone(), most);
                    }
                }
                transpose_block(rows, block, start, range.len(), self.sifter);
                block.rows = core::mem::take(rows);
            }
        });
        if let Some((index, candidates)) = self.blocks[..blocks].iter().find_map(|b| b.overfull) {
            self.prefetching = false;
            return Err(Overfull { index, candidates });
        }
        self.mark_ahead(grid, n);
        Ok(())
    }

    /// The particles of the last build: every entry of the lists is below it.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The number of entries in all lists.
    pub(crate) fn pairs(&self) -> u64 {
        self.blocks
            .iter()
            .take(self.len.div_ceil(BLOCK))
            .flat_map(|b| &b.counts)
            .map(|&c| u64::from(c))
            .sum()
    }

    /// The column layout of the group of `width` particles from `first` (a multiple
    /// of `width`, which divides [`GROUP`]): the columns from its first slot (offset
    /// to its lanes), its slot count and its lanes' list lengths.
    #[inline(always)]
    pub(crate) fn group(&self, first: usize, width: usize) -> (&[u32], usize, &[u32]) {
        let block = &self.blocks[first / BLOCK];
        let k = first % BLOCK;
        let (start, slots) = block.slots(k / GROUP);
        // A group without entries may start at the end of the columns.
        let columns = block.columns.get(start * GROUP + k % GROUP..);
        (columns.unwrap_or(&[]), slots, &block.counts[k..k + width])
    }

    /// Marks every block's [`ListBlock::ahead`] when there are at least
    /// [`PREFETCH_FROM`] particles (and none otherwise).
    ///
    /// The blocks are taken in chunks of [`AHEAD_CHUNK`] (a pass's thread runs the
    /// blocks of a chunk in order): in each chunk, the first block whose lists may
    /// gather from a grid cell (a block with a particle among the cell's candidates)
    /// announces the cell's lines, so that every line a block's lists gather is
    /// announced by it or an earlier block of its chunk. One sweep of the cells, on
    /// one thread (3.3 ms at 1M particles, where sifting and transposing the lists
    /// take about 100 ms of one thread).
    fn mark_ahead<const D: usize>(&mut self, grid: &Grid<D>, n: usize) {
        #[cfg(not(test))]
        let from = PREFETCH_FROM;
        #[cfg(test)]
        let from = self.prefetch_from.unwrap_or(PREFETCH_FROM);
        self.prefetching = n >= from;
        if !self.prefetching {
            return;
        }
        let blocks = n.div_ceil(BLOCK);
        for block in &mut self.blocks[..blocks] {
            block.ahead.clear();
        }
        let chunk = BLOCK * AHEAD_CHUNK;
        // The blocks that announced the cell before, one per chunk its candidates
        // reach (at most one per range, of which a cell has at most `3^D`), and its
        // last line.
        let (mut before, mut now) = (Announced::default(), Announced::default());
        let mut last_line = None;
        for (d, points) in grid.cells().iter().enumerate() {
            let (lo, end) = (points.start / 4, (points.end - 1) / 4 + 1);
            let shared = last_line == Some(lo);
            now.len = 0;
            // Cell `d` is a candidate of exactly the particles among its own candidates
            // (the `3^D` cells around a cell are symmetric): in each chunk of blocks
            // these reach, the first of them is in the block that first gathers from
            // `d`. The ranges ascend, so a chunk comes up once.
            let mut next_chunk = 0;
            for r in grid.candidate_ranges(d) {
                let mut first = (r.start as usize).max(next_chunk);
                while first < r.end as usize {
                    let b = first / BLOCK;
                    // The line the cell before shares goes with the earlier of the
                    // two announcements in this chunk (that cell's were the last
                    // lines its blocks got).
                    let mut from = lo;
                    let other = before.blocks[..before.len]
                        .iter()
                        .find(|&&e| e / AHEAD_CHUNK == b / AHEAD_CHUNK);
                    if let (true, Some(&e)) = (shared, other) {
                        if e <= b {
                            from = lo + 1;
                        } else if self.blocks[e].ahead.last() == Some(&lo) {
                            self.blocks[e].ahead.pop();
                        }
                    }
                    self.blocks[b].ahead.extend(from..end);
                    if let Some(slot) = now.blocks.get_mut(now.len) {
                        *slot = b;
                        now.len += 1;
                    }
                    next_chunk = (first / chunk + 1) * chunk;
                    first = next_chunk;
                }
            }
            core::mem::swap(&mut before, &mut now);
            last_line = Some(end - 1);
        }
    }

    /// Prefetches, for the group of `width` particles from `first`, one line of the
    /// next block's columns and its share of the next block's [`ListBlock::ahead`]
    /// lines of `data` (an array of one element a particle: the quads, or any other
    /// the pass gathers by the lists, when the last build marked them), so that a
    /// pass's first touches of lines are under way a block before it needs them.
    /// Nothing off x86-64.
    ///
    /// The columns' lines: at 1M particles (2 threads) they made the constraint phase
    /// another 5% faster (148-153 ms against 158-165), at 97k about 2%.
    #[inline(always)]
    pub(crate) fn prefetch_next<T>(&self, first: usize, width: usize, data: &[T]) {
        let next = first / BLOCK + 1;
        if next >= self.len.div_ceil(BLOCK) {
            return;
        }
        // A line of the next block's first columns a group: each block's columns are
        // an allocation of their own, where the hardware's stream prefetch would
        // start again.
        let share = (first % BLOCK) / width;
        if let Some(entry) = self.blocks[next].columns.get(share * GROUP) {
            prefetch(entry);
        }
        self.prefetch_ahead(first, width, data);
    }

    /// The second half of [`prefetch_next`](Self::prefetch_next) alone, for a pass
    /// that gathers `data` besides the quads (whose call to `prefetch_next`, in
    /// [`Neighbourhood::for_each_slot`], prefetched the columns already).
    #[inline(always)]
    pub(crate) fn prefetch_ahead<T>(&self, first: usize, width: usize, data: &[T]) {
        let next = first / BLOCK + 1;
        if !self.prefetching || next >= self.len.div_ceil(BLOCK) {
            return;
        }
        let Some(last) = data.len().checked_sub(1) else {
            return;
        };
        let lines = &self.blocks[next].ahead;
        let (shares, share) = (BLOCK / width, (first % BLOCK) / width);
        let (from, to) = (
            lines.len() * share / shares,
            lines.len() * (share + 1) / shares,
        );
        for &line in &lines[from..to] {
            let k = line as usize * 4;
            // The first and the last of the line's four elements: an array's lines of
            // four elements need not start on cache lines.
            prefetch(&data[k.min(last)]);
            prefetch(&data[(k + 3).min(last)]);
        }
    }

    /// Adds `j` to the list of particle `i`, after its entries (so a list is
    /// ascending only as a build leaves it; no pass depends on the order beyond
    /// summing in it). When `i` has the longest list of its group, the group gets one
    /// more slot, padded with its lanes' own indices, and the later groups of the
    /// block move up by one slot. The solver adds the few pairs that particles moving
    /// far bring within h, instead of searching again (`Solver::repair_lists`).
    ///
    /// # Panics
    /// When `i` or `j` is not a particle of the last build (a bug in the caller).
    pub(crate) fn insert(&mut self, i: usize, j: u32) {
        let n = self.len;
        assert!(
            i < n && (j as usize) < n,
            "neighbour lists: pair ({i}, {j}) outside the {n} particles"
        );
        let block = &mut self.blocks[i / BLOCK];
        let k = i % BLOCK;
        let (g, lane) = (k / GROUP, k % GROUP);
        let (start, slots) = block.slots(g);
        let count = block.counts[k] as usize;
        if count == slots {
            let total = *block.slot_ends.last().expect("the group has an end") as usize;
            let needed = (total + 1) * GROUP;
            if block.columns.len() < needed {
                block.columns.resize(needed + needed / 2, 0);
            }
            let at = (start + slots) * GROUP;
            block.columns.copy_within(at..total * GROUP, at + GROUP);
            let (first, len) = (i - k, (n - (i - k)).min(BLOCK));
            for (l, entry) in block.columns[at..at + GROUP].iter_mut().enumerate() {
                *entry = padding(first, g * GROUP + l, len);
            }
            for end in &mut block.slot_ends[g..] {
                *end += 1;
            }
        }
        block.columns[(start + count) * GROUP + lane] = j;
        block.counts[k] += 1;
    }

    /// Whether `j` is in the list of particle `i`.
    pub(crate) fn contains(&self, i: usize, j: u32) -> bool {
        let (columns, _, counts) = self.group(i, 1);
        (0..counts[0] as usize).any(|s| columns[s * GROUP] == j)
    }

    /// The column of particle `i` over all the slots of its group: its list, then its
    /// own index as padding.
    #[cfg(test)]
    pub(crate) fn column_of(&self, i: usize) -> Vec<u32> {
        let (columns, slots, _) = self.group(i, 1);
        (0..slots).map(|s| columns[s * GROUP]).collect()
    }

    /// The neighbours of particle `i` in list order (ascending as built, then those
    /// added by [`Self::insert`]), `i` itself not included.
    #[cfg(test)]
    pub(crate) fn of(&self, i: usize) -> Vec<u32> {
        let (columns, _, counts) = self.group(i, 1);
        (0..counts[0] as usize)
            .map(|s| columns[s * GROUP])
            .collect()
    }
}

/// For every 8-bit mask, the positions of its set bits, lowest first (the rest 0).
const COMPRESS: [[u32; 8]; 256] = {
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
fn tail_bits(remaining: usize) -> u32 {
    if remaining >= 8 {
        0xff
    } else {
        (1 << remaining) - 1
    }
}

/// The candidate ranges of particle `i` in `cell`, after making room in `block` for
/// all of them past `used`, plus `surplus` entries that a sifter writes past the hits;
/// `None` (and the block marked overfull) when they are more than `limit`.
#[allow(clippy::too_many_arguments)]
fn candidates_with_room<'g, const D: usize>(
    block: &mut Rows,
    grid: &'g Grid<D>,
    i: usize,
    cell: u32,
    used: usize,
    surplus: usize,
    limit: usize,
) -> Option<&'g [pbf_grid::CellRange]> {
    let candidates = grid.candidate_ranges(cell as usize);
    let most: usize = candidates.iter().map(|r| r.len()).sum();
    if most > limit || block.overfull.is_some() {
        block.overfull.get_or_insert((i, most));
        return None;
    }
    let needed = used + most + surplus;
    if block.indices.len() < needed {
        // Half again as much as needed, so that a flow that packs a block a little
        // tighter later does not reallocate in the middle of a run.
        block.indices.resize(needed + needed / 2, 0);
    }
    Some(candidates)
}

/// The lists of the particles `range`, by an eight-wide distance test over their
/// candidate ranges. The indices of a block of candidates within h are written eight
/// at a time through [`COMPRESS`] (the surplus is overwritten by the next block), so
/// `block.indices` keeps its high-water length and only the `ends` say what is used.
fn fill_block<const D: usize>(
    block: &mut Rows,
    grid: &Grid<D>,
    positions: [&[f32]; D],
    h2: f32,
    range: core::ops::Range<usize>,
    most: usize,
) {
    block.ends.clear();
    let cells = grid.cell_of();
    let limit = f32x8::splat(h2);
    let mut used = 0usize;
    for i in range {
        let xi: [f32x8; D] = core::array::from_fn(|a| f32x8::splat(positions[a][i]));
        let Some(candidates) = candidates_with_room(block, grid, i, cells[i], used, 8, most) else {
            block.ends.push(used as u32);
            continue;
        };
        for candidates in candidates {
            let (start, end) = (candidates.start as usize, candidates.end as usize);
            let mut j = start;
            while j < end {
                let x: [f32x8; D] = core::array::from_fn(|a| xi[a] - load8(positions[a], j));
                // Lanes past the candidates' end (the next cell's particles, or the
                // zeros past the arrays) are dropped from the mask.
                let mut bits = norm2(x).simd_lt(limit).to_bitmask() & tail_bits(end - j);
                let own = i.wrapping_sub(j);
                if own < 8 {
                    bits &= !(1 << own);
                }
                let lanes = &COMPRESS[bits as usize];
                let out = &mut block.indices[used..used + 8];
                for k in 0..8 {
                    out[k] = j as u32 + lanes[k];
                }
                used += bits.count_ones() as usize;
                j += 8;
            }
        }
        block.ends.push(used as u32);
    }
}

/// The sixteen-wide sifter. It computes every squared distance exactly as
/// [`fill_block`] does (`x^2 + y^2 (+ z^2)`, products rounded before the sums, no fused
/// multiply-add), so the two give the same lists, entry for entry, on the same input.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512 {
    use super::Rows;
    use core::arch::x86_64::{
        __m512, __m512i, _CMP_LT_OQ, _mm512_add_epi32, _mm512_add_ps, _mm512_mask_cmp_ps_mask,
        _mm512_mask_loadu_epi32, _mm512_maskz_compress_epi32, _mm512_maskz_loadu_ps, _mm512_mul_ps,
        _mm512_set1_epi32, _mm512_set1_ps, _mm512_setr_epi32, _mm512_shuffle_i32x4,
        _mm512_storeu_si512, _mm512_sub_ps, _mm512_unpackhi_epi32, _mm512_unpackhi_epi64,
        _mm512_unpacklo_epi32, _mm512_unpacklo_epi64,
    };
    use pbf_grid::Grid;

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
        assert!(
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("popcnt"),
            "the AVX-512 sifter needs AVX-512F and POPCNT"
        );
        // SAFETY: the CPU has AVX-512F and POPCNT (asserted above; the target features
        // are all the function requires beyond what its own body checks).
        unsafe { fill_block_avx512(block, grid, positions, h2, range, most) }
    }

    /// The columns of one group: `columns[s * 16 + lane]` is entry `s` of the list
    /// `indices[start[lane]..start[lane] + count[lane]]`, or `own[lane]` past its end,
    /// for every slot `s` of `columns` (as many as the longest list). Sixteen slots at a
    /// time: sixteen masked row loads, a 16 x 16 transpose in registers, sixteen stores.
    ///
    /// # Panics
    /// When a list reaches past `indices`, or `columns` is not a whole number of slots
    /// or has fewer slots than a list has entries (a bug in the caller).
    pub(super) fn transpose_group(
        indices: &[u32],
        start: [usize; 16],
        count: [usize; 16],
        own: [u32; 16],
        columns: &mut [u32],
    ) {
        assert!(
            std::arch::is_x86_feature_detected!("avx512f"),
            "the AVX-512 transpose needs AVX-512F"
        );
        assert!(
            columns.len().is_multiple_of(16)
                && (0..16).all(|l| start[l] + count[l] <= indices.len()
                    && count[l] * 16 <= columns.len()),
            "column transpose: lists past the rows or the columns"
        );
        // SAFETY: the CPU has AVX-512F (asserted above); every list lies inside
        // `indices` (asserted above), the function's one requirement.
        unsafe { transpose_group_avx512(indices, start, count, own, columns) }
    }

    /// # Safety
    /// The CPU has AVX-512F, and `start[l] + count[l] <= indices.len()` for every lane.
    #[target_feature(enable = "avx512f")]
    unsafe fn transpose_group_avx512(
        indices: &[u32],
        start: [usize; 16],
        count: [usize; 16],
        own: [u32; 16],
        columns: &mut [u32],
    ) {
        let slots = columns.len() / 16;
        let mut s0 = 0;
        while s0 < slots {
            let rows: [__m512i; 16] = core::array::from_fn(|l| {
                let left = count[l].saturating_sub(s0).min(16);
                let mask: u16 = if left == 16 {
                    u16::MAX
                } else {
                    (1u16 << left) - 1
                };
                let fill = _mm512_set1_epi32(own[l] as i32);
                // SAFETY: the lanes set in `mask` are entries `s0..s0 + left` of list
                // `l`, all inside `indices` (`start + count <= len`, the function's
                // safety requirement); a masked load touches no other lane. With no lane set the
                // pointer is not read (it is at most one past the end).
                unsafe {
                    let at = indices.as_ptr().add((start[l] + s0).min(indices.len()));
                    _mm512_mask_loadu_epi32(fill, mask, at.cast())
                }
            });
            let t: [__m512i; 16] = core::array::from_fn(|k| {
                let (a, b) = (rows[k & !1], rows[k | 1]);
                if k % 2 == 0 {
                    _mm512_unpacklo_epi32(a, b)
                } else {
                    _mm512_unpackhi_epi32(a, b)
                }
            });
            // u[4m + e] holds, in 128-bit lane q, element 4q + e of rows 4m..4m + 4.
            let u: [__m512i; 16] = core::array::from_fn(|k| {
                let (m, e) = (k / 4, k % 4);
                let (a, b) = (t[4 * m + e / 2], t[4 * m + 2 + e / 2]);
                if e % 2 == 0 {
                    _mm512_unpacklo_epi64(a, b)
                } else {
                    _mm512_unpackhi_epi64(a, b)
                }
            });
            for e in 0..4 {
                let low_v = _mm512_shuffle_i32x4::<0x44>(u[e], u[4 + e]);
                let low_w = _mm512_shuffle_i32x4::<0x44>(u[8 + e], u[12 + e]);
                let high_v = _mm512_shuffle_i32x4::<0xEE>(u[e], u[4 + e]);
                let high_w = _mm512_shuffle_i32x4::<0xEE>(u[8 + e], u[12 + e]);
                let out = [
                    _mm512_shuffle_i32x4::<0x88>(low_v, low_w),
                    _mm512_shuffle_i32x4::<0xDD>(low_v, low_w),
                    _mm512_shuffle_i32x4::<0x88>(high_v, high_w),
                    _mm512_shuffle_i32x4::<0xDD>(high_v, high_w),
                ];
                for (q, v) in out.into_iter().enumerate() {
                    let s = s0 + 4 * q + e;
                    if s < slots {
                        let slot = &mut columns[s * 16..s * 16 + 16];
                        // SAFETY: `slot` is sixteen `u32`, the 64 bytes the store writes.
                        unsafe { _mm512_storeu_si512(slot.as_mut_ptr().cast(), v) };
                    }
                }
            }
            s0 += 16;
        }
    }

    #[target_feature(enable = "avx512f,popcnt")]
    fn fill_block_avx512<const D: usize>(
        block: &mut Rows,
        grid: &Grid<D>,
        positions: [&[f32]; D],
        h2: f32,
        range: core::ops::Range<usize>,
        most: usize,
    ) {
        block.ends.clear();
        let cells = grid.cell_of();
        let limit = _mm512_set1_ps(h2);
        let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut used = 0usize;
        for i in range {
            let xi: [__m512; D] = core::array::from_fn(|a| _mm512_set1_ps(positions[a][i]));
            let Some(candidates) =
                super::candidates_with_room(block, grid, i, cells[i], used, 16, most)
            else {
                block.ends.push(used as u32);
                continue;
            };
            for candidates in candidates {
                let (start, end) = (candidates.start as usize, candidates.end as usize);
                assert!(
                    positions.iter().all(|p| end <= p.len()),
                    "neighbour lists: a candidate past the positions"
                );
                let mut j = start;
                while j < end {
                    let tail: u16 = if end - j >= 16 {
                        u16::MAX
                    } else {
                        (1u16 << (end - j)) - 1
                    };
                    let mut r2 = _mm512_set1_ps(0.0);
                    for (a, p) in positions.iter().enumerate() {
                        // SAFETY: the lanes set in `tail` are `j..min(j + 16, end)`, and
                        // `end <= p.len()` (asserted above); a masked load reads no lane
                        // whose bit is clear, so nothing past the slice is touched.
                        let q = unsafe { _mm512_maskz_loadu_ps(tail, p.as_ptr().add(j)) };
                        let d = _mm512_sub_ps(xi[a], q);
                        let d2 = _mm512_mul_ps(d, d);
                        r2 = if a == 0 { d2 } else { _mm512_add_ps(r2, d2) };
                    }
                    let mut bits = _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(tail, r2, limit);
                    let own = i.wrapping_sub(j);
                    if own < 16 {
                        bits &= !(1u16 << own);
                    }
                    let indices = _mm512_add_epi32(lane, _mm512_set1_epi32(j as i32));
                    let packed = _mm512_maskz_compress_epi32(bits, indices);
                    let out = &mut block.indices[used..used + 16];
                    // SAFETY: `out` is sixteen `u32`s (checked by the slice above), the
                    // 64 bytes an unaligned 512-bit store writes.
                    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), packed) };
                    used += bits.count_ones() as usize;
                    j += 16;
                }
            }
            block.ends.push(used as u32);
        }
    }
}

/// The particles of one pass: their sorted positions, their lists, and the positions
/// packed four floats a particle with one more per-particle value (see [`pack`]).
pub(crate) struct Neighbourhood<'a, const D: usize> {
    pub(crate) lists: &'a NeighbourLists,
    pub(crate) positions: [&'a [f32]; D],
    /// `[p_x, p_y, (p_z,) extra, ...]` of every particle: what the passes gather.
    /// Their epilogues read a particle's own position from its quad too (the bits of
    /// `positions`): the quads are in the cache already, the position arrays would
    /// add twelve bytes a particle to a pass's working set.
    pub(crate) quads: &'a [[f32; 4]],
}

/// Packs `positions` into the first `D` floats of every quad and `extra` into the
/// next (`quads[i][D]`), the layout [`Neighbourhood::for_each_slot`] gathers: one
/// sixteen-byte load per neighbour, transposed into lanes, instead of `D + 1` gathered
/// loads. Resizes `quads` to the particle count (keeping its capacity).
pub(crate) fn pack<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    positions: [&[f32]; D],
    extra: &[f32],
) {
    assert!(
        extra.len() == positions[0].len(),
        "pack: the extra value of every particle"
    );
    pack_with(quads, positions, |i| extra[i]);
}

/// As [`pack`], with every particle's volume ([`volume`]) as the extra value: the
/// weight of a neighbour in the XSPH, curl and confinement passes, divided once per
/// particle rather than once per pair (the same bits either way).
pub(crate) fn pack_volumes<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    positions: [&[f32]; D],
    density: &[f32],
    mass: f32,
) {
    assert!(
        density.len() == positions[0].len(),
        "pack: the density of every particle"
    );
    pack_with(quads, positions, |i| volume(mass, density[i]));
}

/// A particle's volume `m / rho`, 0 where the density is not positive (a particle no
/// pass has seen yet).
pub(crate) fn volume(mass: f32, density: f32) -> f32 {
    if density > 0.0 {
        mass * (1.0 / density)
    } else {
        0.0
    }
}

/// Packs the `D` components of a vector field into the first `D` floats of every quad
/// (the rest 0), for passes that gather a neighbour's vector as one sixteen-byte load
/// ([`Lane::gather4`]) instead of `D` scalar gathers. Resizes `quads` to the particle
/// count (keeping its capacity).
pub(crate) fn pack_vectors<const D: usize>(quads: &mut Vec<[f32; 4]>, field: [&[f32]; D]) {
    pack_with(quads, field, |_| 0.0);
}

/// `quads[i] = [field[0][i], .., field[D - 1][i], extra(i), 0, ..]`.
fn pack_with<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    field: [&[f32]; D],
    extra: impl Fn(usize) -> f32 + Sync,
) {
    const { assert!(D < 4, "a quad holds D components and one more value") };
    let n = field[0].len();
    assert!(
        field.iter().all(|f| f.len() == n),
        "pack: every component of every particle"
    );
    quads.resize(n, [0.0; 4]);
    for_each_chunk_of([quads.as_mut_slice()], 1024, 64, &|start, [q]| {
        for (k, q) in q.iter_mut().enumerate() {
            let i = start + k;
            *q = [0.0; 4];
            for a in 0..D {
                q[a] = field[a][i];
            }
            q[D] = extra(i);
        }
    });
}

/// Replaces the extra value of every quad (`quads[i][D] = extra[i]`).
pub(crate) fn repack_extra<const D: usize>(quads: &mut [[f32; 4]], extra: &[f32]) {
    assert!(
        extra.len() == quads.len(),
        "repack: the extra value of every particle"
    );
    repack_with::<D>(quads, |i| extra[i]);
}

/// Replaces the extra value of every quad with the particle's volume ([`volume`]):
/// [`pack_volumes`] for quads whose positions are already packed.
pub(crate) fn repack_volumes<const D: usize>(quads: &mut [[f32; 4]], density: &[f32], mass: f32) {
    assert!(
        density.len() == quads.len(),
        "repack: the density of every particle"
    );
    repack_with::<D>(quads, |i| volume(mass, density[i]));
}

/// `quads[i][D] = extra(i)`.
fn repack_with<const D: usize>(quads: &mut [[f32; 4]], extra: impl Fn(usize) -> f32 + Sync) {
    for_each_chunk_of([quads], 1024, 64, &|start, [q]| {
        for (k, q) in q.iter_mut().enumerate() {
            q[D] = extra(start + k);
        }
    });
}

impl<const D: usize> Neighbourhood<'_, D> {
    /// The particles: every index [`Self::for_each_slot`] hands out is below it.
    pub(crate) fn len(&self) -> usize {
        self.quads.len()
    }

    /// Calls `f(indices, x, r2, extra)` for every slot of the group of `L::WIDTH`
    /// particles from `first` (a multiple of the width), one particle a lane: lane `l`
    /// of call `k` is the `k`-th entry of the list of particle `first + l`, with the
    /// offset `x = p_i - p_j` at the current positions, its squared length and the
    /// neighbour's extra value of the quads (`quads[j][D]`). Lanes past the end of
    /// their list carry `x = 0` (their own index is the padding) and `r2 = +inf`,
    /// outside every support; lanes past the particles (whose padding is the block's
    /// last particle) carry `r2 = +inf` too, and their sums are dropped. Every lane walks its list in order, so a sum over the calls adds each
    /// particle's terms in list order, at every width: the sixteen and eight lanes
    /// give the bits of one (`f32`). Load other per-particle values with
    /// [`Lane::gather`]: the indices are below [`Self::len`].
    ///
    /// # Panics
    /// When the quads and the lists are not of the same particles (a bug in the
    /// caller).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn for_each_slot<L: Lane>(
        &self,
        first: usize,
        mut f: impl FnMut(&L::Indices, [L; D], L, L),
    ) {
        debug_assert_eq!(self.quads.len(), self.positions[0].len());
        assert_eq!(self.quads.len(), self.lists.len(), "quads and lists");
        let xi: [L; D] = core::array::from_fn(|a| L::load(self.positions[a], first));
        self.lists.prefetch_next(first, L::WIDTH, self.quads);
        let (columns, slots, counts) = self.lists.group(first, L::WIDTH);
        // Narrower lanes stop at their own longest list.
        let slots = if L::WIDTH == GROUP {
            slots
        } else {
            counts.iter().copied().max().unwrap_or(0) as usize
        };
        let count = L::counts(counts);
        // The slot's index as lanes (see `Lane::mask_counts`): exact, a list is far
        // shorter than 2^24 entries.
        let mut slot = L::splat(0.0);
        for k in 0..slots {
            let indices = L::column(&columns[k * GROUP..]);
            // SAFETY: the indices are entries of the lists, below `self.lists.len()`
            // (`NeighbourLists`' invariant), which is the quads' length (asserted).
            let q = unsafe { L::gather4(self.quads, &indices) };
            let x: [L; D] = core::array::from_fn(|a| xi[a] - q[a]);
            let r2 = L::mask_counts(norm2(x), count, slot);
            slot += L::splat(1.0);
            f(&indices, x, r2, q[D]);
        }
    }
}

/// Runs `f(first, width)` for every group of `L::WIDTH` particles of the chunk of
/// `len` particles from `start` (a multiple of the width): `first` the group's first
/// particle, `width` how many of its lanes are particles (`L::WIDTH` but in the last).
///
/// The groups run inside [`Lane::run`], compiled for the instructions of the width:
/// `f`, and the closures it passes on ([`Neighbourhood::for_each_slot`]'s), must be
/// `#[inline(always)]` closures (see [`Lane::run`]).
#[inline(always)]
pub(crate) fn for_each_group<L: Lane>(start: usize, len: usize, mut f: impl FnMut(usize, usize)) {
    debug_assert_eq!(start % L::WIDTH, 0, "a chunk starts a group");
    L::run(
        #[inline(always)]
        || {
            let mut k = 0;
            while k < len {
                f(start + k, L::WIDTH.min(len - k));
                k += L::WIDTH;
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_bits_keep_the_first_lanes() {
        assert_eq!(tail_bits(0), 0);
        assert_eq!(tail_bits(3), 0b111);
        assert_eq!(tail_bits(7), 0x7f);
        assert_eq!(tail_bits(8), 0xff);
        assert_eq!(tail_bits(100), 0xff);
    }

    fn cloud(n: usize, seed: u64) -> [Vec<f32>; 3] {
        let mut state = seed;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut p: [Vec<f32>; 3] = Default::default();
        for _ in 0..n {
            for axis in p.iter_mut() {
                axis.push(next());
            }
        }
        p
    }

    /// [`cloud`] binned in a grid of cells `h` and put in the grid's order.
    fn sorted_cloud(n: usize, seed: u64, h: f32) -> ([Vec<f32>; 3], Grid<3>) {
        let mut p = cloud(n, seed);
        let mut grid = Grid::<3>::new();
        grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
        let mut scratch = Vec::new();
        for a in p.iter_mut() {
            grid.reorder(a, &mut scratch).unwrap();
        }
        (p, grid)
    }

    /// The invariant the passes' unchecked loads rely on: after a build of fewer
    /// particles than the last, every entry of every group's slots (padding included)
    /// is still a particle of the new build; and a pass over quads of other particles
    /// is refused.
    #[test]
    fn every_entry_is_a_particle_of_the_last_build() {
        let mut lists = NeighbourLists::default();
        for (n, h) in [(3000, 0.12f32), (700, 0.2), (5, 0.9)] {
            let (p, grid) = sorted_cloud(n, 11, h);
            lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4).unwrap();
            assert_eq!(lists.len(), n);
            for first in (0..n).step_by(GROUP) {
                let (columns, slots, _) = lists.group(first, GROUP);
                let entries = &columns[..slots * GROUP];
                assert!(
                    entries.iter().all(|&j| (j as usize) < n),
                    "group {first} of {n}"
                );
            }
            let mut quads = Vec::new();
            pack(&mut quads, [&p[0], &p[1], &p[2]], &vec![0.0; n]);
            let short = &quads[..n - 1];
            let nb = Neighbourhood {
                lists: &lists,
                positions: [&p[0][..n - 1], &p[1][..n - 1], &p[2][..n - 1]],
                quads: short,
            };
            let refused = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
                nb.for_each_slot::<f32x8>(0, |_, _, _, _| {});
            }));
            assert!(
                refused.is_err(),
                "quads of {} particles, lists of {n}",
                n - 1
            );
        }
    }

    #[test]
    fn lists_hold_exactly_the_points_within_h() {
        for (n, h) in [(0, 0.1f32), (1, 0.1), (700, 0.1), (3000, 0.07), (2000, 0.3)] {
            let (p, grid) = sorted_cloud(n, n as u64 + 7, h);
            for sifter in sifters() {
                let mut lists = NeighbourLists::with_sifter(sifter);
                // Twice, so that the second build reuses the blocks of the first.
                for _ in 0..2 {
                    let mut pairs = 0;
                    lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4).unwrap();
                    for i in 0..n {
                        let expected: Vec<u32> = (0..n)
                            .filter(|&j| {
                                let x: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
                                j != i && pbf_kernels::within(pbf_kernels::norm2(x), h * h)
                            })
                            .map(|j| j as u32)
                            .collect();
                        assert_eq!(lists.of(i), expected, "particle {i} of {n}");
                        let column = lists.column_of(i);
                        assert!(
                            column[expected.len()..].iter().all(|&j| j == i as u32),
                            "particle {i} of {n}: padded with itself"
                        );
                        pairs += expected.len() as u64;
                    }
                    assert_eq!(lists.pairs(), pairs);
                }
            }
        }
    }

    #[test]
    fn inserted_pairs_follow_each_list_and_keep_the_padding() {
        // 700 points: the last block is partial, so new slots there pad past its
        // particles too.
        let n = 700;
        let h = 0.1f32;
        let (p, grid) = sorted_cloud(n, 11, h);
        let positions = [&p[0][..], &p[1][..], &p[2][..]];
        for sifter in sifters() {
            let mut lists = NeighbourLists::with_sifter(sifter);
            lists.build(&grid, positions, h * h, 4).unwrap();
            let mut expected: Vec<Vec<u32>> = (0..n).map(|i| lists.of(i)).collect();
            // The longest list of a group (a new slot, later groups move up), a short
            // one, the longest in the last group of the partial block (a new slot
            // padded past the particles), and the same particle twice (its second
            // entry needs a slot of its own again).
            let longest = (16..32).max_by_key(|&i| (expected[i].len(), i)).unwrap();
            let shortest = (32..48).min_by_key(|&i| (expected[i].len(), i)).unwrap();
            let last = (688..700).max_by_key(|&i| (expected[i].len(), i)).unwrap();
            let slots_before = |lists: &NeighbourLists, i: usize| lists.group(i, 1).1;
            let (group_slots, last_slots) = (slots_before(&lists, 16), slots_before(&lists, 688));
            for (i, j) in [(longest, 699), (shortest, 3), (last, 0), (longest, 698)] {
                lists.insert(i, j);
                expected[i].push(j);
            }
            assert_eq!(slots_before(&lists, 16), group_slots + 2, "two new slots");
            assert_eq!(slots_before(&lists, 688), last_slots + 1, "a new slot");
            // Lanes 700..704 of the last group: past the particles, the last one.
            let (columns, slots, _) = lists.group(688, 16);
            for s in 0..slots {
                assert_eq!(
                    columns[s * GROUP + 12..s * GROUP + 16],
                    [699; 4],
                    "slot {s}"
                );
            }
            let mut pairs = 0;
            for i in 0..n {
                assert_eq!(lists.of(i), expected[i], "particle {i}");
                let column = lists.column_of(i);
                assert!(
                    column[expected[i].len()..].iter().all(|&j| j == i as u32),
                    "particle {i}: padded with itself"
                );
                pairs += expected[i].len() as u64;
            }
            assert_eq!(lists.pairs(), pairs);
            // What a pass sees: every group's lanes at eight and one lanes a time.
            let mut quads = Vec::new();
            pack(&mut quads, positions, &vec![0.0; n]);
            let nb = Neighbourhood {
                lists: &lists,
                positions,
                quads: &quads,
            };
            let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
            for_each_group::<f32x8>(0, n, |first, width| {
                nb.for_each_slot::<f32x8>(first, |indices, _, r2, _| {
                    for l in 0..width {
                        if r2.to_array()[l].is_finite() {
                            seen[first + l].push(indices[l]);
                        }
                    }
                });
            });
            assert_eq!(seen, expected);
            let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
            for (i, list) in seen.iter_mut().enumerate() {
                nb.for_each_slot::<f32>(i, |indices, _, r2, _| {
                    if r2.is_finite() {
                        list.push(*indices);
                    }
                });
            }
            assert_eq!(seen, expected);
            #[cfg(target_arch = "x86_64")]
            if crate::lanes16::available() {
                use crate::lanes16::F32x16;
                let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
                F32x16::run(|| {
                    for_each_group::<F32x16>(0, n, |first, width| {
                        nb.for_each_slot::<F32x16>(first, |indices, _, r2, _| {
                            let mut r = [0.0f32; 16];
                            r2.store(&mut r);
                            for l in 0..width {
                                if r[l].is_finite() {
                                    seen[first + l].push(indices[l]);
                                }
                            }
                        });
                    });
                });
                assert_eq!(seen, expected);
            }
        }
    }

    /// The lines of four particles of the candidate ranges around the cells of block
    /// `b`'s particles, as ranges of lines.
    fn candidate_spans(grid: &Grid<3>, b: usize, n: usize) -> Vec<(u32, u32)> {
        let cells = &grid.cell_of()[b * BLOCK..((b + 1) * BLOCK).min(n)];
        cells
            .iter()
            .flat_map(|&c| grid.candidate_ranges(c as usize))
            .filter(|r| !r.is_empty())
            .map(|r| (r.start / 4, (r.end - 1) / 4))
            .collect()
    }

    /// What the passes prefetch: with one thread (so that no two chunks race for a
    /// stamp) every block announces only lines of its own candidates, and every line
    /// its lists gather is announced in time, by itself or an earlier block of its
    /// chunk; a line is announced again only as a line that cells share.
    #[test]
    fn each_block_announces_the_lines_its_chunk_first_touches() {
        // 70 blocks: a full chunk and a partial one; about 30 neighbours a point.
        let n = 70 * BLOCK - 5;
        let h = 0.082f32;
        let (p, grid) = sorted_cloud(n, 5, h);
        let mut lists = NeighbourLists {
            prefetch_from: Some(0),
            ..NeighbourLists::default()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 4))
            .unwrap();
        assert!(lists.prefetching);
        let blocks = n.div_ceil(BLOCK);
        for chunk_start in (0..blocks).step_by(AHEAD_CHUNK) {
            let (mut announced, mut announcements) = (std::collections::HashSet::new(), 0);
            for b in chunk_start..(chunk_start + AHEAD_CHUNK).min(blocks) {
                let spans = candidate_spans(&grid, b, n);
                for &line in &lists.blocks[b].ahead {
                    assert!(
                        spans.iter().any(|&(lo, hi)| (lo..=hi).contains(&line)),
                        "block {b} announced line {line}, not among its candidates"
                    );
                    announced.insert(line);
                    announcements += 1;
                }
                for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
                    for j in lists.of(i) {
                        assert!(
                            announced.contains(&(j / 4)),
                            "block {b} gathers line {} before it is announced",
                            j / 4
                        );
                    }
                }
            }
            // Lines shared by cells come again, but rarely.
            assert!(
                announcements as f64 <= 1.05 * announced.len() as f64,
                "{announcements} announcements of {} lines",
                announced.len()
            );
        }
    }

    /// Below [`PREFETCH_FROM`] particles a build marks nothing; and the prefetches of a
    /// marked build leave every pass's sums as they are, at every width.
    #[test]
    fn prefetching_is_off_for_small_builds_and_changes_no_sum() {
        let n = 3 * BLOCK + 40;
        let h = 0.12f32;
        let (p, grid) = sorted_cloud(n, 3, h);
        let positions = [&p[0][..], &p[1][..], &p[2][..]];
        let mut plain = NeighbourLists::default();
        plain.build(&grid, positions, h * h, 4).unwrap();
        assert!(!plain.prefetching);
        assert!(plain.blocks.iter().all(|b| b.ahead.is_empty()));
        let mut marked = NeighbourLists {
            prefetch_from: Some(n),
            ..NeighbourLists::default()
        };
        marked.build(&grid, positions, h * h, 4).unwrap();
        assert!(marked.prefetching);
        assert!(
            marked.blocks[1..n.div_ceil(BLOCK)]
                .iter()
                .any(|b| !b.ahead.is_empty())
        );
        let extra: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut quads = Vec::new();
        pack(&mut quads, positions, &extra);
        let kernel = pbf_kernels::Kernel::<3>::new(h).unwrap();
        let sums = |lists: &NeighbourLists, width: usize| -> Vec<u32> {
            let nb = Neighbourhood {
                lists,
                positions,
                quads: &quads,
            };
            let mut out = vec![0; n];
            fn run<L: Lane>(
                nb: &Neighbourhood<'_, 3>,
                kernel: &pbf_kernels::Kernel<3>,
                out: &mut [u32],
            ) {
                L::run(|| {
                    for_each_group::<L>(0, out.len(), |first, width| {
                        let mut sum = L::splat(0.0);
                        nb.for_each_slot::<L>(first, |_, x, r2, extra| {
                            sum += L::poly6(kernel, r2) * (extra + x[0]);
                        });
                        let mut lanes = [0.0f32; GROUP];
                        sum.store(&mut lanes);
                        for l in 0..width {
                            out[first + l] = lanes[l].to_bits();
                        }
                    });
                });
            }
            match width {
                1 => run::<f32>(&nb, &kernel, &mut out),
                8 => run::<f32x8>(&nb, &kernel, &mut out),
                #[cfg(target_arch = "x86_64")]
                _ => run::<crate::lanes16::F32x16>(&nb, &kernel, &mut out),
                #[cfg(not(target_arch = "x86_64"))]
                _ => unreachable!("sixteen lanes off x86-64"),
            }
            out
        };
        let mut widths = vec![1, 8];
        #[cfg(target_arch = "x86_64")]
        if crate::lanes16::available() {
            widths.push(16);
        }
        for width in widths {
            let expected = sums(&plain, width);
            assert!(expected.iter().any(|&s| s != 0), "the sums see neighbours");
            assert_eq!(sums(&marked, width), expected, "{width} lanes");
        }
    }

    /// Every sifter this CPU runs.
    fn sifters() -> Vec<Sifter> {
        let mut all = vec![Sifter::Portable];
        #[cfg(target_arch = "x86_64")]
        if Sifter::default() == Sifter::Avx512 {
            all.push(Sifter::Avx512);
        }
        all
    }

    #[test]
    fn the_fastest_sifter_is_the_default() {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            Sifter::default() == Sifter::Avx512,
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("popcnt")
        );
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(Sifter::default(), Sifter::Portable);
    }

    /// Builds the lists of `p` (3D or, with the third axis ignored, 2D) with every
    /// sifter and checks that they agree entry for entry.
    fn sifters_agree(p: &[Vec<f32>; 3], radius: f32, dimension: usize) {
        fn lists_of<const D: usize>(p: [&[f32]; D], radius: f32, sifter: Sifter) -> Vec<Vec<u32>> {
            let mut grid = Grid::<D>::new();
            grid.rebuild(p, radius).unwrap();
            let sorted: [Vec<f32>; D] = core::array::from_fn(|a| {
                grid.permutation()
                    .iter()
                    .map(|&k| p[a][k as usize])
                    .collect()
            });
            let mut lists = NeighbourLists::with_sifter(sifter);
            lists
                .build(
                    &grid,
                    core::array::from_fn(|a| &sorted[a][..]),
                    radius * radius,
                    3,
                )
                .unwrap();
            // Padding included: the transposes of both sifters write the same columns.
            (0..p[0].len()).map(|i| lists.column_of(i)).collect()
        }
        let all: Vec<Vec<Vec<u32>>> = sifters()
            .into_iter()
            .map(|sifter| match dimension {
                2 => lists_of([&p[0][..], &p[1][..]], radius, sifter),
                _ => lists_of([&p[0][..], &p[1][..], &p[2][..]], radius, sifter),
            })
            .collect();
        for other in &all[1..] {
            assert_eq!(
                other,
                &all[0],
                "{dimension}D, {} points, radius {radius}",
                p[0].len()
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(48))]
        /// The sixteen-wide sifter (where the CPU has it) and the portable one give the
        /// same lists on random, clustered and lattice clouds of any length (so every
        /// tail length of a candidate range occurs).
        #[test]
        fn sifters_give_the_same_lists(
            n in 0usize..1500,
            seed in 0u64..1000,
            radius in 0.02f32..0.4,
            lattice in proptest::bool::ANY,
        ) {
            let mut p = cloud(n, seed);
            if lattice {
                // Points on a lattice of spacing radius / 2: many pairs at exactly the
                // radius, where a different rounding would flip the predicate.
                let side = (n as f64).cbrt().ceil() as usize;
                for i in 0..n {
                    let c = [i % side, (i / side) % side, i / (side * side)];
                    for a in 0..3 {
                        p[a][i] = c[a] as f32 * radius * 0.5;
                    }
                }
            }
            sifters_agree(&p, radius, 3);
            sifters_agree(&p, radius, 2);
        }
    }

    #[test]
    fn room_is_a_multiple_of_the_rest_neighbours() {
        // 3D, h = 2 s: 4/3 pi 8 = 33.5 lattice points, times 1.5.
        assert_eq!(room_per_particle::<3>(2.0, 1.0), 52);
        // 2D: pi 4 = 12.6, times 2.
        assert_eq!(room_per_particle::<2>(2.0, 1.0), 27);
    }

    #[test]
    fn columns_pad_with_the_particle_itself() {
        let p = [vec![0.0f32, 0.05, 0.1, 0.5], vec![0.0; 4]];
        let mut grid = Grid::<2>::new();
        grid.rebuild([&p[0], &p[1]], 0.12).unwrap();
        let sorted: [Vec<f32>; 2] = core::array::from_fn(|a| {
            grid.permutation()
                .iter()
                .map(|&k| p[a][k as usize])
                .collect()
        });
        let mut lists = NeighbourLists::default();
        lists
            .build(&grid, [&sorted[0], &sorted[1]], 0.12 * 0.12, 0)
            .unwrap();
        let mut quads = Vec::new();
        pack(
            &mut quads,
            [&sorted[0], &sorted[1]],
            &[0.0; 4][..sorted[0].len()],
        );
        let nb = Neighbourhood {
            lists: &lists,
            positions: [&sorted[0], &sorted[1]],
            quads: &quads,
        };
        let mut seen = 0;
        nb.for_each_slot::<f32x8>(0, |indices, x, r2, _| {
            let r2 = r2.to_array();
            for i in 0..8 {
                if i >= 4 {
                    // Past the particles: the last particle, masked.
                    assert_eq!(indices[i], 3);
                    assert!(r2[i].is_infinite());
                } else if r2[i].is_finite() {
                    assert!(r2[i] < 0.12 * 0.12);
                    seen += 1;
                } else {
                    assert_eq!(indices[i], i as u32, "padded with itself");
                    assert_eq!(x[0].to_array()[i], 0.0);
                }
            }
        });
        // 0-0.05, 0.05-0.1, 0-0.1: three pairs, each seen from both ends.
        assert_eq!(seen, 6);
    }
}
