//! Neighbour lists: every particle's neighbours within a radius, built once from the
//! grid's candidate ranges and walked by the passes many times, on the lanes of any
//! `pbf-kernels` backend.
//!
//! The grid hands every particle the particles of the `3^D` cells around its own:
//! about 216 candidates in 3D at h = 2 x spacing, of which only about 15% lie within
//! h. A PBF step walks the neighbourhood of every particle ten or more times, so it
//! pays to sift the candidates once: [`NeighbourLists::build`] keeps, for every
//! particle, the indices `j != i` with `distance2 < R^2` ([`crate::within`], `R` the
//! search radius) in ascending order. A solver builds them with R a little larger
//! than h and mends them ([`NeighbourLists::insert`]) while particles move less than
//! the margin; pairs beyond h get zero from every kernel.
//!
//! # Using them in an engine
//! Sort the particles with a [`Grid`], build the lists over the sorted positions,
//! pack the positions for a pass ([`pack`]) and walk the groups of lanes with
//! [`Neighbourhood::for_each_slot`], inside a pass that [`pbf_kernels::LaneKind`]
//! dispatches to a backend. [`densities`] is the simplest such pass;
//! `examples/densities.rs` runs it on every backend this CPU has.
//!
//! ```
//! use pbf_grid::Grid;
//! use pbf_grid::lists::NeighbourLists;
//!
//! let (x, y) = ([0.0f32, 0.5, 3.0], [0.0f32; 3]);
//! let mut grid = Grid::<2>::new();
//! grid.rebuild([&x, &y], 1.0)?;
//! let mut sorted = [vec![0.0; 3], vec![0.0; 3]];
//! grid.reorder_into(&x, &mut sorted[0])?;
//! grid.reorder_into(&y, &mut sorted[1])?;
//! let mut lists = NeighbourLists::default();
//! lists.build(&grid, [&sorted[0], &sorted[1]], 1.0, 4)?;
//! let near = sorted[0].iter().position(|&v| v == 0.0).unwrap();
//! assert_eq!(lists.count(near), 1);
//! assert_eq!(lists.pairs(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layout
//! Two sifters build the same lists, entry for entry (a property test holds them
//! equal): a portable one, eight candidates at a time on any eight-lane backend with a
//! table that packs the indices of the hits (`sift.rs`), and one for CPUs with
//! AVX-512F, sixteen at a time with `pbf_kernels::Sift16` (`sift16.rs`), picked at
//! run time. The latter sifts up to four particles of a cell together, loading each
//! candidate once for all of them.
//!
//! Storage is blocked and by columns (`block.rs`): a sifter writes the lists of
//! [`BLOCK`] consecutive particles one after the other into the block's scratch rows,
//! which are then transposed into the block's column groups: [`GROUP`] particles, their
//! `k`-th neighbours side by side, so that a pass runs one particle a lane
//! ([`Neighbourhood::for_each_slot`]). Blocks are built in parallel without a global
//! prefix sum, and every vector keeps its capacity between builds (no allocation in
//! steady state).
//!
//! A group whose indices span at most 65535 is stored narrow: 16-bit offsets from its
//! smallest index, half the bytes that every pass streams. A pass gathers from the
//! arrays' part past the base by the offsets themselves ([`Slot`]), so a narrow slot
//! costs no more instructions than a wide one; the bits are the same either way.
//!
//! Below [`SORT_BELOW`] particles a group's sixteen lanes are not sixteen consecutive
//! particles but the block's particles by descending list length
//! ([`NeighbourLists::members`]), so that its slots carry little padding; the passes
//! read and write their lanes' own values through the members. Each particle still
//! walks its own list in order: the same bits.

use crate::Grid;
mod block;
mod density;
mod images;
mod neighbourhood;
mod sift;
#[cfg(target_arch = "x86_64")]
mod sift16;
#[cfg(test)]
mod tests;

use block::*;
pub use density::densities;
pub use neighbourhood::*;
use sift::*;
pub use sift::{Sifter, near};

use crate::parallel::{for_each_chunk_of, for_each_chunk_with, join, stretches};
use pbf_kernels::f32x8;
use pbf_kernels::{Bounded, Eight, Index, Lane, LaneKind, WithEight};

/// Particles per list block.
pub const BLOCK: usize = 256;

/// The fewest particles for which a build marks the lines each block's passes first
/// touch, and the passes prefetch them a block ahead
/// ([`NeighbourLists::prefetch_next`]): their quads are then 1 MiB or more, as much
/// as or more than a core's level-2 cache on common server CPUs, behind which a
/// pass's first touches wait on the shared level 3 or on memory. The marking is a
/// single-threaded sweep of the grid's cells beside the sifting; below this size it
/// costs about what the prefetches save. Prefetching changes no result: the same
/// bits with or without it.
pub const PREFETCH_FROM: usize = 1 << 16;

use pbf_kernels::prefetch;

/// The most blocks a build chunk takes (see [`scratch_blocks`]).
const SCRATCH_BLOCKS: usize = 16;

/// The blocks of a build chunk, which share one sifter's scratch ([`Rows`]), out of
/// `blocks`: as many as leave 64 chunks or more to share among the threads, at most
/// [`SCRATCH_BLOCKS`]; it depends on the particle count only.
///
/// Scratch of its own for every block would be written once a step and, for large
/// counts, take hundreds of megabytes whose lines the sifters' writes first fetch from
/// memory; shared, the scratch stays small and warm in the cache.
fn scratch_blocks(blocks: usize) -> usize {
    (blocks / 64).clamp(1, SCRATCH_BLOCKS)
}

/// Blocks per chunk of [`NeighbourLists::mark_ahead`].
const AHEAD_CHUNK: usize = 64;

/// The entries a particle's list gets room for: the lattice points within `radius` of
/// a particle on a lattice of `spacing` (the rest density), times 1.5 in 3D and 2 in
/// 2D. PBF holds the density near rest, so blocks of 256 particles stay below this on
/// average; in 2D a block also needs room for one particle's candidates (about three
/// times its neighbours) past its last list, and a 2D dam break with relaxed Jacobi
/// passes packed one block past 1.5 (the allocation test caught it).
pub fn room_per_particle<const D: usize>(radius: f32, spacing: f32) -> usize {
    let ratio = f64::from(radius) / f64::from(spacing);
    let (ball, factor) = match D {
        2 => (core::f64::consts::PI * ratio * ratio, 2.0),
        _ => (4.0 / 3.0 * core::f64::consts::PI * ratio.powi(3), 1.5),
    };
    (factor * ball).ceil().min(1e6) as usize + 1
}

/// How many times the rest density a particle's neighbourhood may reach before a list
/// build stops with [`Overfull`] (see [`max_candidates`]).
pub const COLLAPSE_FACTOR: usize = 16;

/// The most candidates (particles of the `3^D` cells of side `radius` around its own)
/// a particle may have: [`COLLAPSE_FACTOR`] times their number at rest density on a
/// lattice of `spacing`. PBF holds the density within a few percent of rest; sixteen
/// times is a fluid that has collapsed into clumps (a diverging run), whose lists
/// would take memory quadratic in the clump size (a 2D dam break at four times its
/// stable time step took 20 GB).
pub fn max_candidates<const D: usize>(radius: f32, spacing: f32) -> usize {
    let cells = f64::from(radius) / f64::from(spacing) * 3.0;
    (COLLAPSE_FACTOR as f64 * cells.powi(D as i32))
        .ceil()
        .min(1e12) as usize
}

/// Particles per column group of a `ListBlock`: the widest lanes the passes run.
pub const GROUP: usize = 16;

/// The most particles for which a build orders every block's lanes by list length
/// (`ListBlock::members`); from there on the lanes keep the particles' order. Sorted
/// lanes carry less padding, which pays while the per-particle arrays fit the caches;
/// beyond, where every pass streams them from memory, reading and writing them in a
/// block's sorted order costs more than the padding saves.
pub const SORT_BELOW: usize = 1 << 19;

/// A build stopped: a particle has more candidates than the limit allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "neighbour lists: particle {index} (sorted index) has {candidates} candidates, more than the limit"
)]
pub struct Overfull {
    /// The particle (sorted index).
    pub index: usize,
    /// Its candidates (the particles of the cells around its own).
    pub candidates: usize,
}

/// Every particle's neighbours within h, excluding itself.
///
/// Every entry of a group's slots is the index of a particle of the last build (below
/// [`len`](Self::len)): a build writes the grid's candidates, which its sifters read
/// the positions of (bounds-checked), and the groups' own particles as padding;
/// [`insert`](Self::insert) checks its pair. The passes' unchecked loads rely on it
/// ([`Neighbourhood::for_each_slot`]).
#[derive(Debug, Default, Clone)]
pub struct NeighbourLists {
    pub(super) blocks: Vec<ListBlock>,
    /// The sifters' scratch, one for each build chunk of [`scratch_blocks`] blocks.
    pub(super) scratch: Vec<Rows>,
    /// For every block, the lines of four particles (`index / 4`) of its candidate
    /// cells that no earlier block of its chunk of [`AHEAD_CHUNK`] blocks has among
    /// its own, in ascending order of their cells ([`NeighbourLists::mark_ahead`]):
    /// what a pass first touches in the block, which the pass over the block before
    /// prefetches ([`NeighbourLists::prefetch_next`]). Apart from the blocks, so that
    /// a build marks them while it sifts.
    pub(super) ahead: Vec<Vec<u32>>,
    /// The particles of the last build.
    pub(super) len: usize,
    /// Which distance test builds the lists.
    pub(super) sifter: Sifter,
    /// The most candidates a particle may have (see [`Self::set_max_candidates`]).
    pub(super) max_candidates: Option<usize>,
    /// The periodic axes the builds find pairs across, and the passes' offsets take
    /// the minimum image on (see [`Self::set_periodic`]).
    pub(super) periodic: crate::Periodic,
    /// Whether the last build marked the blocks' [`ListBlock::ahead`] (see
    /// [`PREFETCH_FROM`]).
    pub(super) prefetching: bool,
    /// The fewest particles for which a build marks the lines a pass prefetches
    /// ([`PREFETCH_FROM`] when `None`; see [`Self::set_prefetch_from`]).
    pub(super) prefetch_from: Option<usize>,
    /// Tests store groups of a narrower span than [`NARROW_SPAN`] as narrow.
    #[cfg(test)]
    pub(super) narrow_span: Option<u32>,
    /// Tests share a sifter's scratch among other numbers of blocks than
    /// [`scratch_blocks`] gives.
    #[cfg(test)]
    pub(super) scratch_blocks: Option<usize>,
    /// Tests sort the lanes, or keep them in order, at any size (see
    /// [`SORT_BELOW`]).
    #[cfg(test)]
    pub(super) sort_lanes: Option<bool>,
}

/// The blocks that announced a cell in [`NeighbourLists::mark_ahead`], one per chunk
/// of blocks its candidates reach, the first [`Announced::MOST`] of them (a cell's
/// candidates seldom reach more than two chunks; past the most, the line the cell
/// shares with the next one may be announced twice).
pub(super) struct Announced {
    pub(super) blocks: [usize; Announced::MOST],
    pub(super) len: usize,
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

impl NeighbourLists {
    /// Empty lists that the given sifter builds (for tests and benchmarks: the default
    /// picks the fastest the CPU has).
    #[cfg(test)]
    pub fn with_sifter(sifter: Sifter) -> Self {
        Self {
            sifter,
            ..Self::default()
        }
    }

    /// Makes [`build`](Self::build) fail, before it allocates for them, when a particle
    /// has more than `limit` candidates: the memory of the lists grows with the square
    /// of a clump's size, so a collapsed flow would otherwise take gigabytes.
    pub fn set_max_candidates(&mut self, limit: usize) {
        self.max_candidates = Some(limit);
    }

    /// Makes the builds find the pairs across the periodic faces of `periodic` (by the
    /// minimum-image offset, [`crate::Periodic::offset`]), and the passes
    /// ([`Neighbourhood::for_each_slot`]) hand out minimum-image offsets. The lists
    /// change at the next [`build`](Self::build). Every period must be more than
    /// twice the search radius, so that a pair has one image within it; the points
    /// should lie in the box, or stray from it by less than the radius.
    ///
    /// ```
    /// use pbf_grid::{Grid, Periodic};
    /// use pbf_grid::lists::NeighbourLists;
    ///
    /// // Two points 0.2 apart across the face x = 0 of the periodic box 0..4.
    /// let (x, y) = ([0.1f32, 3.9, 2.0], [0.5f32; 3]);
    /// let mut grid = Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?;
    /// let mut sorted = [vec![0.0; 3], vec![0.0; 3]];
    /// grid.reorder_into(&x, &mut sorted[0])?;
    /// grid.reorder_into(&y, &mut sorted[1])?;
    /// let mut lists = NeighbourLists::default();
    /// lists.set_periodic(Periodic::new([0.0, 0.0], [4.0, 1.0], [true, false])?);
    /// lists.build(&grid, [&sorted[0], &sorted[1]], 1.0, 4)?;
    /// assert_eq!(lists.pairs(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_periodic(&mut self, periodic: crate::Periodic) {
        self.periodic = periodic;
    }

    /// The periodic axes of the lists (see [`Self::set_periodic`]).
    pub fn periodic(&self) -> &crate::Periodic {
        &self.periodic
    }

    /// Marks, from `particles` on, the lines each block's passes first touch, which
    /// the passes then prefetch a block ahead ([`PREFETCH_FROM`] by default);
    /// `usize::MAX` never marks them, for lists that no pass walks by blocks (the
    /// marks' buffers then never grow). Prefetching changes no result.
    pub fn set_prefetch_from(&mut self, particles: usize) {
        self.prefetch_from = Some(particles);
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
    pub fn build<const D: usize>(
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
        #[cfg(not(test))]
        let span = NARROW_SPAN;
        #[cfg(test)]
        let span = self.narrow_span.unwrap_or(NARROW_SPAN);
        #[cfg(not(test))]
        let sort = n < SORT_BELOW;
        #[cfg(test)]
        let sort = self.sort_lanes.unwrap_or(n < SORT_BELOW);
        #[cfg(not(test))]
        let per_chunk = scratch_blocks(blocks);
        #[cfg(test)]
        let per_chunk = self
            .scratch_blocks
            .unwrap_or_else(|| scratch_blocks(blocks));
        let chunks = blocks.div_ceil(per_chunk);
        if self.scratch.len() < chunks {
            self.scratch.resize_with(chunks, Rows::default);
        }
        let scratch = &mut self.scratch[..chunks];
        let from = self.prefetch_from.unwrap_or(PREFETCH_FROM);
        self.prefetching = n >= from;
        if self.ahead.len() < blocks {
            self.ahead.resize_with(blocks, Vec::new);
        }
        let (ahead, prefetching) = (&mut self.ahead[..blocks], self.prefetching);
        let sifter = self.sifter;
        let periodic = self.periodic;
        let blocks_built = &mut self.blocks[..blocks];
        // The marks depend on the grid alone: they are made beside the sifting, which
        // keeps the other threads busy meanwhile.
        join(
            || {
                if prefetching {
                    Self::mark_ahead(ahead, grid);
                }
            },
            || {
                for_each_chunk_with(blocks_built, per_chunk, scratch, &|c, chunk, rows| {
                    for (b, block) in chunk.iter_mut().enumerate() {
                        let start = (c * per_chunk + b) * BLOCK;
                        let room = BLOCK * per_particle;
                        rows.reserve(room);
                        // The same room for the columns, and a quarter more for the
                        // padding of the groups. The allocation reserves `room` more,
                        // which is never written (so not resident): with the blocks'
                        // columns that much apart, the passes over large counts run
                        // faster than with them close (fewer conflicts in the caches).
                        if block.columns.len() < room + room / 4 {
                            let extra = 2 * room + room / 4 - block.columns.len();
                            block.columns.reserve_exact(extra);
                            block.columns.resize(room + room / 4, 0);
                        }
                        let range = start..(start + BLOCK).min(n);
                        rows.overfull = None;
                        match sifter {
                            #[cfg(target_arch = "x86_64")]
                            Sifter::Avx512 => {
                                sift16::fill_block(rows, grid, positions, h2, range.clone(), most);
                            }
                            eight => {
                                let pass = FillBlock {
                                    rows,
                                    grid,
                                    positions,
                                    h2,
                                    range: range.clone(),
                                    most,
                                };
                                eight.lane_kind().dispatch_eight(pass).unwrap_or_else(|e| {
                                    unreachable!("{e}: a sifter runs only available lanes")
                                });
                            }
                        }
                        if periodic.any() {
                            images::add_images(rows, grid, positions, h2, range.clone(), &periodic);
                        }
                        transpose_block(rows, block, (start, range.len()), sifter, (span, sort));
                    }
                });
            },
        );
        if let Some((index, candidates)) = self.blocks[..blocks].iter().find_map(|b| b.overfull) {
            self.prefetching = false;
            return Err(Overfull { index, candidates });
        }
        Ok(())
    }

    /// The particles of the last build: every entry of the lists is below it.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the last build had no particles.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of entries in all lists.
    pub fn pairs(&self) -> u64 {
        self.blocks
            .iter()
            .take(self.len.div_ceil(BLOCK))
            .flat_map(|b| &b.counts)
            .map(|&c| u64::from(c))
            .sum()
    }

    /// The particles of the lanes from lane `first` (a lane of the block's order,
    /// `ListBlock::members`) to the end of its block: at least [`GROUP`] from the
    /// first lane of a group, every one a particle of the last build.
    #[inline(always)]
    pub fn members(&self, first: usize) -> &[u32] {
        &self.blocks[first / BLOCK].members[first % BLOCK..]
    }

    /// The lane of particle `i` (see [`Self::members`]).
    fn lane_of(&self, i: usize) -> usize {
        i / BLOCK * BLOCK + usize::from(self.blocks[i / BLOCK].lane_of[i % BLOCK])
    }

    /// The column layout of the group of `width` lanes from lane `first` (a multiple
    /// of `width`, which divides [`GROUP`]; see [`Self::members`] for their
    /// particles): the columns from its first slot (offset to its lanes), its slot
    /// count and its lanes' list lengths.
    #[inline(always)]
    pub fn group(&self, first: usize, width: usize) -> (Columns<'_>, usize, &[u32]) {
        let block = &self.blocks[first / BLOCK];
        let k = first % BLOCK;
        let g = k / GROUP;
        let (head, slots) = (block.heads[g], block.slots(g));
        let counts = &block.counts[k..k + width];
        // A group without entries may start at the end of the columns.
        let columns = if head.base == WIDE {
            Columns::Wide(
                block
                    .columns
                    .get(head.word as usize + k % GROUP..)
                    .unwrap_or(&[]),
            )
        } else {
            let offsets: &[u16] = bytemuck::cast_slice(&block.columns);
            Columns::Narrow(
                offsets
                    .get(2 * head.word as usize + k % GROUP..)
                    .unwrap_or(&[]),
                head.base,
            )
        };
        (columns, slots, counts)
    }

    /// Marks the [`NeighbourLists::ahead`] of every block (one `Vec` a block of the
    /// grid's particles).
    ///
    /// The blocks are taken in chunks of [`AHEAD_CHUNK`] (a pass's thread runs the
    /// blocks of a chunk in order): in each chunk, the first block whose lists may
    /// gather from a grid cell (a block with a particle among the cell's candidates)
    /// announces the cell's lines, so that every line a block's lists gather is
    /// announced by it or an earlier block of its chunk. One sweep of the cells, on
    /// one thread (a small part of what the sifting takes), beside the sifting: on two
    /// threads the other thread sifts meanwhile.
    fn mark_ahead<const D: usize>(ahead: &mut [Vec<u32>], grid: &Grid<D>) {
        for lines in ahead.iter_mut() {
            lines.clear();
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
                        } else if ahead[e].last() == Some(&lo) {
                            ahead[e].pop();
                        }
                    }
                    ahead[b].extend(from..end);
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

    /// Prefetches, for the group of `width` lanes from lane `first`, one line of the
    /// next block's columns and its share of the next block's `ListBlock::ahead`
    /// lines of `data` (an array of one element a particle: the quads, or any other
    /// the pass gathers by the lists, when the last build marked them), so that a
    /// pass's first touches of lines are under way a block before it needs them.
    /// Nothing off x86-64.
    ///
    /// The columns' lines too: a pass over a block reads them first.
    #[inline(always)]
    pub fn prefetch_next<T>(&self, first: usize, width: usize, data: &[T]) {
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
    pub fn prefetch_ahead<T>(&self, first: usize, width: usize, data: &[T]) {
        let next = first / BLOCK + 1;
        if !self.prefetching || next >= self.len.div_ceil(BLOCK) {
            return;
        }
        let Some(last) = data.len().checked_sub(1) else {
            return;
        };
        let lines = &self.ahead[next];
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
    /// block move up by one slot. The lanes keep their order (a group's lists may then
    /// differ more in length until the next build). The solver adds the few pairs that particles moving
    /// far bring within h, instead of searching again (`Solver::repair_lists`).
    ///
    /// # Panics
    /// When `i` or `j` is not a particle of the last build (a bug in the caller).
    pub fn insert(&mut self, i: usize, j: u32) {
        let n = self.len;
        assert!(
            i < n && (j as usize) < n,
            "neighbour lists: pair ({i}, {j}) outside the {n} particles"
        );
        let k = self.lane_of(i) % BLOCK;
        let block = &mut self.blocks[i / BLOCK];
        let (g, lane) = (k / GROUP, k % GROUP);
        let base = block.heads[g].base;
        if base != WIDE
            && j.checked_sub(base)
                .is_none_or(|offset| offset > NARROW_SPAN)
        {
            block.widen(g);
        }
        let slots = block.slots(g);
        let count = block.counts[k] as usize;
        if count == slots {
            let head = block.heads[g];
            let at = head.word as usize + slots * head.slot_words();
            block.open(g, at, head.slot_words());
            for end in &mut block.slot_ends[g..] {
                *end += 1;
            }
            for l in 0..GROUP {
                block.set(g, slots, l, block.members[g * GROUP + l]);
            }
        }
        block.set(g, count, lane, j);
        block.counts[k] += 1;
    }

    /// Whether `j` is in the list of particle `i`.
    pub fn contains(&self, i: usize, j: u32) -> bool {
        let (columns, _, counts) = self.group(self.lane_of(i), 1);
        (0..counts[0] as usize).any(|s| columns.entry(s) == j)
    }

    /// The column of particle `i` over all the slots of its group: its list, then its
    /// own index as padding.
    pub fn column_of(&self, i: usize) -> Vec<u32> {
        let (columns, slots, _) = self.group(self.lane_of(i), 1);
        (0..slots).map(|s| columns.entry(s)).collect()
    }

    /// The length of particle `i`'s list.
    ///
    /// # Panics
    /// When `i` is not a particle of the last build.
    pub fn count(&self, i: usize) -> usize {
        let (_, _, counts) = self.group(self.lane_of(i), 1);
        counts[0] as usize
    }

    /// Copies particle `i`'s list, in list order, into `out`, which holds exactly
    /// [`count(i)`](Self::count) entries.
    ///
    /// # Panics
    /// When `i` is not a particle of the last build, or `out` has another length.
    pub fn copy_list(&self, i: usize, out: &mut [u32]) {
        let (columns, _, counts) = self.group(self.lane_of(i), 1);
        assert_eq!(
            out.len(),
            counts[0] as usize,
            "copy_list: the list's length"
        );
        for (s, o) in out.iter_mut().enumerate() {
            *o = columns.entry(s);
        }
    }

    /// The neighbours of particle `i` in list order (ascending as built, then those
    /// added by [`Self::insert`]), `i` itself not included.
    pub fn of(&self, i: usize) -> Vec<u32> {
        let (columns, _, counts) = self.group(self.lane_of(i), 1);
        (0..counts[0] as usize).map(|s| columns.entry(s)).collect()
    }

    /// How many groups of the last build are narrow and how many wide.
    #[cfg(test)]
    fn formats(&self) -> (usize, usize) {
        let heads = self.blocks[..self.len.div_ceil(BLOCK)]
            .iter()
            .flat_map(|b| &b.heads);
        let narrow = heads.clone().filter(|h| h.base != WIDE).count();
        (narrow, heads.count() - narrow)
    }

    /// The span of group `g` (counted over the whole lists): its largest entry, own
    /// indices included, less its smallest.
    #[cfg(test)]
    fn span_of(&self, g: usize) -> u32 {
        let first = g * GROUP;
        let width = GROUP.min(self.len - first);
        let (columns, slots, _) = self.group(first, width);
        let lanes = (0..slots).flat_map(|s| (0..GROUP).map(move |l| (s, l)));
        let entries = lanes.map(|(s, l)| columns.lane(s, l));
        let own = self.members(first)[..GROUP].iter().copied();
        let (lo, hi) = entries
            .chain(own)
            .fold((u32::MAX, 0), |(lo, hi), j| (lo.min(j), hi.max(j)));
        hi - lo
    }
}
