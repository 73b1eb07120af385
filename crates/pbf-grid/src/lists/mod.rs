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
//! particles have moved too far for the margin (see the solver's `SKINS`); pairs
//! beyond h get zero from every kernel.
//!
//! Two sifters build the same lists, entry for entry (a property test holds them
//! equal): a portable one, eight candidates at a time through `wide` and a table that
//! packs the indices of the hits, and one for CPUs with AVX-512F, sixteen at a time with
//! masked loads and `vpcompressd`, picked at run time (`unsafe` code, kept because it
//! builds the lists about twice as fast as the portable sifter). The latter sifts
//! up to four particles of a cell together, loading each candidate once for all of
//! them.
//!
//! Storage is blocked and by columns: a sifter writes the lists of [`BLOCK`]
//! consecutive particles one after the other into the block's scratch ([`Rows`]),
//! which is then transposed into the block's [`ListBlock`]: groups of [`GROUP`]
//! particles, their `k`-th neighbours side by side, so that a pass runs one particle a
//! lane ([`Neighbourhood::for_each_slot`]). With AVX-512F the transpose is sixteen
//! masked loads and a 16 x 16 transpose in registers (`unsafe`, 1.9x less of a step
//! than the portable loop). Blocks are built in parallel without a global prefix sum,
//! and every vector keeps its capacity between steps (no allocation in steady state).
//!
//! A group whose indices span at most 65535 is stored narrow: 16-bit offsets from its
//! smallest index ([`Head`]), half the bytes that every pass streams. A pass gathers
//! from the arrays' part past the base by the offsets themselves ([`Slot`]), so a
//! narrow slot costs no more instructions than a wide one. Up to a few hundred
//! thousand particles nearly every group is narrow (99.7% in the peers' tank at
//! 97k), at a million three in four; the bits are the same either way.
//!
//! Below [`SORT_BELOW`] particles a group's sixteen lanes are not sixteen consecutive
//! particles but the block's particles by descending list length
//! ([`ListBlock::members`]), so that its slots carry little padding; the passes read
//! and write their lanes' own values through the members. Each particle still walks
//! its own list in order: the same bits.

use crate::Grid;
mod density;

pub use density::densities;

use crate::parallel::{for_each_chunk_of, for_each_chunk_with, join, stretches};
use pbf_kernels::f32x8;
use pbf_kernels::{Eight, Lane, LaneKind, WithEight};

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
/// Scratch of its own for every block would be written once a step and, at 1M
/// particles, take 270 MB whose lines the sifters' writes first fetch from memory;
/// shared, the scratch stays small and warm in the cache.
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

/// The lists of one block of [`BLOCK`] particles as the sifters write them, one after
/// the other, which [`transpose_block`] turns into the block's [`ListBlock`]: scratch
/// of a build chunk of [`scratch_blocks`] consecutive blocks, which the chunk's blocks
/// reuse one after the other (so the rows a sifter writes are lines already in the
/// caches), kept with the chunk (so that what a build reallocates depends on the flow
/// alone, not on which thread built which chunk).
#[derive(Debug, Default, Clone)]
pub struct Rows {
    /// `ends[k]` is one past the last entry of particle `k` of the block in `indices`.
    ends: Vec<u32>,
    /// The lists one after the other; entries past the last end are scratch.
    indices: Vec<u32>,
    /// The first particle of the block whose candidates exceeded the limit of the
    /// build, and their number (its list and the later ones are left empty).
    overfull: Option<(usize, usize)>,
    /// The sifters' copy of a cell's candidates, one run for all its particles: their
    /// coordinates by axis and their indices (entries past the cell's candidates are
    /// scratch).
    packed: ([Vec<f32>; 3], Vec<u32>),
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
pub const GROUP: usize = 16;

/// The most particles for which a build orders every block's lanes by list length
/// ([`ListBlock::members`]); from there on the lanes keep the particles' order. In
/// the peers' tank at 97k the sorted lanes made the constraint phase 3% and the
/// substep 2.7% faster, and the dam break's step at 10k 5%; at 1M, where every
/// pass streams its per-particle arrays from memory, reading and writing them in a
/// block's sorted order made the step 1.5% slower.
pub const SORT_BELOW: usize = 1 << 19;

/// The list lengths [`order_lanes`] tells apart: longer lists sort as this long (a
/// fixed tally on the stack; lists so long are seldom more than a few a block).
const SORTED_LENGTHS: usize = 255;

/// The [`Head::base`] of a wide group, whose slots are sixteen `u32` indices.
const WIDE: u32 = u32::MAX;

/// The widest span of a narrow group's indices (its largest less its smallest,
/// padding and the lanes' own indices included): what a `u16` offset holds.
const NARROW_SPAN: u32 = u16::MAX as u32;

/// Where a group of a [`ListBlock`] starts in its columns, and how it stores them.
#[derive(Debug, Default, Clone, Copy)]
struct Head {
    /// The group's first word (`u32`) in [`ListBlock::columns`].
    word: u32,
    /// [`WIDE`]: a slot is sixteen `u32` indices (sixteen words). Otherwise the group
    /// is narrow: a slot is sixteen `u16` offsets from `base` (eight words), the
    /// offset of lane `l` of slot `s` at `u16` position `2 * word + 16 * s + l` of the
    /// columns.
    base: u32,
}

impl Head {
    /// The words a slot of the group takes.
    fn slot_words(self) -> usize {
        if self.base == WIDE { GROUP } else { GROUP / 2 }
    }
}

/// The columns of a group as a pass reads them, from one of its lanes on: slot `s`
/// of that lane and the next ones from entry `s * GROUP`.
#[derive(Debug, Clone, Copy)]
pub enum Columns<'a> {
    /// Indices.
    Wide(&'a [u32]),
    /// Offsets from the base (the second field).
    Narrow(&'a [u16], u32),
}

/// One slot of a group as a pass gets it ([`Neighbourhood::for_each_slot`]): each
/// lane's neighbour, by which the pass gathers per-particle arrays. A narrow group's
/// neighbours gather from the array's part from their base on, by their 16-bit
/// offsets (no index is formed).
#[derive(Clone, Copy)]
pub struct Slot<'a, L> {
    /// The slot's entries from the first lane on.
    entries: Columns<'a>,
    lanes: core::marker::PhantomData<L>,
}

#[allow(unsafe_code)]
impl<'a, L: Lane> Slot<'a, L> {
    #[inline(always)]
    fn new(entries: Columns<'a>) -> Self {
        Self {
            entries,
            lanes: core::marker::PhantomData,
        }
    }

    /// The neighbours' indices, one a lane (0 past the lanes).
    pub fn indices(&self) -> [u32; GROUP] {
        core::array::from_fn(|l| {
            if l < L::WIDTH {
                self.entries.lane(0, l)
            } else {
                0
            }
        })
    }

    /// `quads[j]` for each lane's neighbour `j` ([`Lane::gather4`]).
    ///
    /// # Safety
    /// `quads` holds at least the particles of the lists' last build (every neighbour
    /// is one of them).
    #[inline(always)]
    pub unsafe fn gather4(&self, quads: &[[f32; 4]]) -> [L; 4] {
        match self.entries {
            // SAFETY: every index is below the lists' particles, at most
            // `quads.len()` (the caller's contract).
            Columns::Wide(c) => unsafe { L::gather4(quads, c) },
            // SAFETY: `base + offset` is a neighbour, below `quads.len()` (the
            // caller's contract): so is `base`, and every offset is below the rest's
            // length.
            Columns::Narrow(c, base) => unsafe {
                L::gather4(quads.get_unchecked(base as usize..), c)
            },
        }
    }
}

impl Columns<'_> {
    /// The first lane's entry of slot `s`.
    fn entry(self, s: usize) -> u32 {
        self.lane(s, 0)
    }

    /// Lane `l` (from the first lane) of slot `s`.
    fn lane(self, s: usize, l: usize) -> u32 {
        match self {
            Columns::Wide(c) => c[s * GROUP + l],
            Columns::Narrow(c, base) => base + u32::from(c[s * GROUP + l]),
        }
    }
}

/// The lists of one block of [`BLOCK`] particles, by columns, so that a pass can walk
/// [`GROUP`] lists at once, one particle a lane ([`Neighbourhood::for_each_slot`]):
/// group `g` of the block has `slot_ends[g] - slot_ends[g - 1]` slots, slot `s` the
/// `s`-th entry of each of the group's lists side by side, from the group's
/// [`Head::word`]. A lane whose list is shorter than the group's longest holds its own
/// particle's index in the slots past its end (a valid index to load, masked by its
/// count).
///
/// The lanes are the block's particles by descending list length ([`Self::members`]),
/// not in their order: a group's lists are then of nearly one length, and its slots
/// carry little padding (1.5% of the lanes' entries in the peers' tank at 97k,
/// against 11-13% for groups of sixteen consecutive particles). A pass's sums do not
/// depend on it: each particle's terms come from its own list, in its order.
///
/// A group whose indices span at most [`NARROW_SPAN`] (nearly every group up to a few
/// hundred thousand particles, three in four at a million in the dam break) is
/// narrow: it stores them as 16-bit offsets from their smallest ([`Head`]), half the
/// bytes a pass streams.
#[derive(Debug, Default, Clone)]
pub struct ListBlock {
    /// The slots of the groups, one after the other; words past the last group's end
    /// are scratch.
    columns: Vec<u32>,
    /// One past the last slot of every group of the block.
    slot_ends: Vec<u32>,
    /// Where every group of the block starts in `columns`, and its base.
    heads: Vec<Head>,
    /// The length of every lane's list, [`BLOCK`] entries (0 past the particles).
    counts: Vec<u32>,
    /// The particle of every lane, [`BLOCK`] entries: the block's particles by
    /// descending list length, ties in their order; past the particles, the block's
    /// last one (a valid index to load).
    members: Vec<u32>,
    /// The lane of every particle of the block (its offset from the block's first).
    lane_of: Vec<u16>,
    /// As [`Rows::overfull`].
    overfull: Option<(usize, usize)>,
}

const _: () = assert!(BLOCK <= 1 << 16, "a lane's index in a block is a u16");

impl ListBlock {
    /// The number of slots of group `g`.
    #[inline(always)]
    fn slots(&self, g: usize) -> usize {
        let start = if g == 0 {
            0
        } else {
            self.slot_ends[g - 1] as usize
        };
        self.slot_ends[g] as usize - start
    }

    /// One past the last word of the block's groups in `columns`.
    fn end_word(&self) -> usize {
        let g = self.heads.len() - 1;
        let head = self.heads[g];
        head.word as usize + self.slots(g) * head.slot_words()
    }

    /// Makes room for `words` words at word `at` of group `g` (at most its end): the
    /// words from `at` on, and the later groups, move up.
    fn open(&mut self, g: usize, at: usize, words: usize) {
        let end = self.end_word();
        if self.columns.len() < end + words {
            // Half again as much, as the build does.
            self.columns.resize((end + words) * 3 / 2, 0);
        }
        self.columns.copy_within(at..end, at + words);
        for head in &mut self.heads[g + 1..] {
            head.word += words as u32;
        }
    }

    /// Sets lane `lane` of slot `s` of group `g` to `j` (which a narrow group's span
    /// holds).
    fn set(&mut self, g: usize, s: usize, lane: usize, j: u32) {
        let head = self.heads[g];
        let at = s * GROUP + lane;
        if head.base == WIDE {
            self.columns[head.word as usize + at] = j;
        } else {
            let offsets: &mut [u16] = bytemuck::cast_slice_mut(&mut self.columns);
            offsets[2 * head.word as usize + at] =
                u16::try_from(j - head.base).expect("an index a narrow group's span holds");
        }
    }

    /// Stores narrow group `g` as a wide one: it takes twice the words, and the later
    /// groups move up.
    fn widen(&mut self, g: usize) {
        let head = self.heads[g];
        let (word, entries) = (head.word as usize, self.slots(g) * GROUP);
        self.open(g, word + entries / 2, entries / 2);
        // From the last entry back: entry `e`'s `u32` (bytes 4e..4e + 4) is written
        // after every offset at or past it (bytes 2e' for e' >= e) is read.
        for e in (0..entries).rev() {
            let offsets: &[u16] = bytemuck::cast_slice(&self.columns);
            let j = head.base + u32::from(offsets[2 * word + e]);
            self.columns[word + e] = j;
        }
        self.heads[g].base = WIDE;
    }
}

/// Stores `columns`, whole slots of sixteen indices of a group whose lanes' own
/// indices are `own`, as narrow when the indices and `own` span at most `span`
/// ([`Head`]): their offsets from the smallest, packed into the first half of the
/// words, in place. Returns the base, or [`WIDE`] (and the columns as they were).
fn narrow(columns: &mut [u32], own: &[u32; GROUP], span: u32) -> u32 {
    // Slot by slot, lane by lane: sixteen independent minima and maxima, which the
    // compiler keeps on vector registers (one chain through every entry was 45% of
    // the portable transpose's samples).
    let (mut lo, mut hi) = (*own, *own);
    for slot in columns.chunks_exact(GROUP) {
        for l in 0..GROUP {
            lo[l] = lo[l].min(slot[l]);
            hi[l] = hi[l].max(slot[l]);
        }
    }
    let (lo, hi) = (
        lo.into_iter().min().unwrap_or(u32::MAX),
        hi.into_iter().max().unwrap_or(0),
    );
    if hi - lo > span.min(NARROW_SPAN) {
        return WIDE;
    }
    // Slot by slot: slot `s`'s offsets go to words 8s..8s + 8, which hold nothing not
    // read already (slots before it, or its own sixteen words, read first).
    for s in 0..columns.len() / GROUP {
        let slot: [u32; GROUP] = columns[s * GROUP..(s + 1) * GROUP]
            .try_into()
            .expect("a slot");
        let offsets: [u16; GROUP] = core::array::from_fn(|l| (slot[l] - lo) as u16);
        let words = &mut columns[s * GROUP / 2..(s + 1) * GROUP / 2];
        bytemuck::cast_slice_mut::<u32, u16>(words).copy_from_slice(&offsets);
    }
    lo
}

/// Orders the lanes of the block of the `len` particles from `first` (whose lists end
/// at `ends`) into [`ListBlock::members`] and [`ListBlock::lane_of`]: when `sort`, by
/// descending list length (lengths past [`SORTED_LENGTHS`] as one), ties in the
/// particles' order, by a counting sort; otherwise in the particles' order.
fn order_lanes(ends: &[u32], block: &mut ListBlock, (first, len): (usize, usize), sort: bool) {
    block.members.clear();
    block.members.resize(BLOCK, (first + len.max(1) - 1) as u32);
    block.lane_of.clear();
    block.lane_of.resize(len, 0);
    if !sort {
        for k in 0..len {
            block.members[k] = (first + k) as u32;
            block.lane_of[k] = k as u16;
        }
        return;
    }
    let mut counts = [0u32; BLOCK];
    let mut before = 0;
    for (count, &end) in counts.iter_mut().zip(&ends[..len]) {
        (*count, before) = (end - before, end);
    }
    // `tally[SORTED_LENGTHS - c]`: the particles with lists of length c, then where
    // the first of them goes.
    let bucket = |c: u32| SORTED_LENGTHS - (c as usize).min(SORTED_LENGTHS);
    let mut tally = [0u32; SORTED_LENGTHS + 1];
    for &c in &counts[..len] {
        tally[bucket(c)] += 1;
    }
    let mut at = 0;
    for t in tally.iter_mut() {
        (*t, at) = (at, at + *t);
    }
    for (k, &c) in counts[..len].iter().enumerate() {
        let slot = &mut tally[bucket(c)];
        block.members[*slot as usize] = (first + k) as u32;
        block.lane_of[k] = *slot as u16;
        *slot += 1;
    }
}

/// Writes `rows`, the lists of the particles `first..first + len`, into `block` by
/// columns, its lanes ordered by [`order_lanes`].
fn transpose_block(
    rows: &Rows,
    block: &mut ListBlock,
    (first, len): (usize, usize),
    sifter: Sifter,
    (span, sort): (u32, bool),
) {
    block.overfull = rows.overfull;
    order_lanes(&rows.ends, block, (first, len), sort);
    block.counts.clear();
    block.counts.resize(BLOCK, 0);
    block.slot_ends.clear();
    block.heads.clear();
    let (mut slots, mut word) = (0usize, 0usize);
    for g in 0..len.div_ceil(GROUP) {
        // Where each lane's list starts in the rows and how long it is; past the
        // particles, an empty list padded with the block's last particle.
        let mut start = [0usize; GROUP];
        let mut count = [0usize; GROUP];
        let own: [u32; GROUP] = core::array::from_fn(|lane| block.members[g * GROUP + lane]);
        for lane in 0..GROUP {
            let p = g * GROUP + lane;
            if p < len {
                let k = own[lane] as usize - first;
                start[lane] = if k == 0 { 0 } else { rows.ends[k - 1] as usize };
                count[lane] = rows.ends[k] as usize - start[lane];
                block.counts[p] = count[lane] as u32;
            }
        }
        let most = count.iter().copied().max().unwrap_or(0);
        let needed = word + most * GROUP;
        if block.columns.len() < needed {
            // Half again as much, as the rows do.
            block.columns.resize(needed + needed / 2, 0);
        }
        // The group's slots: the AVX-512 transpose writes each as one sixteen-entry
        // store, the portable one row by row into the lanes.
        let columns = &mut block.columns[word..needed];
        let base = match sifter {
            #[cfg(target_arch = "x86_64")]
            Sifter::Avx512 => {
                avx512::transpose_group(&rows.indices, start, count, own, columns, span)
            }
            // The portable and AVX sifters' rows.
            _ => {
                // Lane by lane: each row read in order into its lane of every slot,
                // then the padding.
                for lane in 0..GROUP {
                    let row = &rows.indices[start[lane]..start[lane] + count[lane]];
                    let mut slots = columns.chunks_exact_mut(GROUP);
                    // The row first: `zip` asks it before taking a slot, so the
                    // first slot past the row is left for the padding.
                    for (&j, slot) in row.iter().zip(&mut slots) {
                        slot[lane] = j;
                    }
                    for slot in slots {
                        slot[lane] = own[lane];
                    }
                }
                narrow(columns, &own, span)
            }
        };
        let head = Head {
            word: word as u32,
            base,
        };
        block.heads.push(head);
        word += most * head.slot_words();
        slots += most;
        block.slot_ends.push(slots as u32);
    }
}

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
    blocks: Vec<ListBlock>,
    /// The sifters' scratch, one for each build chunk of [`scratch_blocks`] blocks.
    scratch: Vec<Rows>,
    /// For every block, the lines of four particles (`index / 4`) of its candidate
    /// cells that no earlier block of its chunk of [`AHEAD_CHUNK`] blocks has among
    /// its own, in ascending order of their cells ([`NeighbourLists::mark_ahead`]):
    /// what a pass first touches in the block, which the pass over the block before
    /// prefetches ([`NeighbourLists::prefetch_next`]). Apart from the blocks, so that
    /// a build marks them while it sifts.
    ahead: Vec<Vec<u32>>,
    /// The particles of the last build.
    len: usize,
    /// Which distance test builds the lists.
    sifter: Sifter,
    /// The most candidates a particle may have (see [`Self::set_max_candidates`]).
    max_candidates: Option<usize>,
    /// Whether the last build marked the blocks' [`ListBlock::ahead`] (see
    /// [`PREFETCH_FROM`]).
    prefetching: bool,
    /// The fewest particles for which a build marks the lines a pass prefetches
    /// ([`PREFETCH_FROM`] when `None`; see [`Self::set_prefetch_from`]).
    prefetch_from: Option<usize>,
    /// Tests store groups of a narrower span than [`NARROW_SPAN`] as narrow.
    #[cfg(test)]
    narrow_span: Option<u32>,
    /// Tests share a sifter's scratch among other numbers of blocks than
    /// [`scratch_blocks`] gives.
    #[cfg(test)]
    scratch_blocks: Option<usize>,
    /// Tests sort the lanes, or keep them in order, at any size (see
    /// [`SORT_BELOW`]).
    #[cfg(test)]
    sort_lanes: Option<bool>,
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
pub enum Sifter {
    /// Eight-wide through `wide` and the [`COMPRESS`] table, on every machine.
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
    fn lane_kind(self) -> LaneKind {
        match self {
            #[cfg(target_arch = "x86_64")]
            Sifter::Avx => LaneKind::Avx,
            _ => LaneKind::Portable,
        }
    }
}

/// One block's rows sifted by the portable sifter's code on eight lanes.
struct FillBlock<'a, const D: usize> {
    rows: &'a mut Rows,
    grid: &'a Grid<D>,
    positions: [&'a [f32]; D],
    h2: f32,
    range: core::ops::Range<usize>,
    most: usize,
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
                        // padding of the groups (12% in the dam break at 97k). The
                        // allocation reserves `room` more, which is never written (so not
                        // resident): with the blocks' columns that much apart, as they were
                        // when each block kept its scratch between them, the constraint
                        // phase at 1M particles measured 3% faster than with them close
                        // (149-157 ms against 155-165, alternating runs on 2 threads).
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
                                avx512::fill_block(rows, grid, positions, h2, range.clone(), most);
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
    /// [`ListBlock::members`]) to the end of its block: at least [`GROUP`] from the
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
    /// one thread (5.3 ms at 1M particles, where sifting and transposing the lists
    /// take about 95 ms of one thread), beside the sifting: on two threads the other
    /// thread sifts meanwhile.
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
    /// next block's columns and its share of the next block's [`ListBlock::ahead`]
    /// lines of `data` (an array of one element a particle: the quads, or any other
    /// the pass gathers by the lists, when the last build marked them), so that a
    /// pass's first touches of lines are under way a block before it needs them.
    /// Nothing off x86-64.
    ///
    /// The columns' lines: at 1M particles (2 threads) they made the constraint phase
    /// another 5% faster (148-153 ms against 158-165), at 97k about 2%.
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

/// The candidate ranges of particle `i` and their number, after making room in `block`
/// past `used` for the lists of `lists` particles of its cell: for each, all the
/// candidates plus `surplus` entries that a sifter writes past the hits; `None` (and
/// the block marked overfull) when they are more than `limit`.
fn candidates_with_room<'g, const D: usize>(
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
fn fill_block<E: Eight, const D: usize>(
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
fn sift_run<E: Eight, const D: usize, const K: usize>(
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
fn without(bits: u32, own: usize, j: usize) -> u32 {
    let at = own.wrapping_sub(j);
    if at < 8 { bits & !(1 << at) } else { bits }
}

/// Writes `j + l` for every bit `l` of `bits` at `indices[used..]`, through
/// [`COMPRESS`] (eight entries, the surplus overwritten by the next call), and returns
/// where the hits end.
#[inline(always)]
fn store_hits(indices: &mut [u32], used: usize, j: usize, bits: u32) -> usize {
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
fn close_lists(block: &mut Rows, used: usize, stride: usize, at: &[usize]) -> usize {
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
/// much as a walk's partly empty blocks (97k dam break, 1 thread: the sixteen-wide
/// sifter's samples fell 5-7% with the copy from 3, 5 or 8 particles on, the copy
/// taking a fifth of what remained).
const PACK_FROM: usize = 5;

/// Makes `packed` (see [`Rows`]) hold `count` candidates of `dimension` axes, and
/// a whole block of `width` stored or loaded from the last of them on.
fn reserve_run(
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
fn pack_run<const D: usize>(
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
/// candidates at a time. The repairs of the 97k dam break's splash took 1.21-1.30 ms a
/// step with a scalar walk, 1.11-1.17 ms with this one: most of what is left is the
/// cache misses of moved particles scattered over the fluid.
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
fn within8<E: Eight, const D: usize>(
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

/// The sixteen-wide sifter: [`fill_block`]'s walk over the cells with the distance
/// tests, copies and transposes of [`pbf_kernels::Sift16`], which computes every
/// squared distance exactly as [`fill_block`] does, so the two give the same lists,
/// entry for entry, on the same input.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{PACK_FROM, Rows, reserve_run};
    use crate::Grid;
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
        let xi: [[f32; D]; K] =
            core::array::from_fn(|k| core::array::from_fn(|a| positions[a][i + k]));
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
}

/// The particles of one pass: their lists, and their sorted positions packed four
/// floats a particle with one more per-particle value (see [`pack`]).
pub struct Neighbourhood<'a, const D: usize> {
    /// The lists of the pass's particles.
    pub lists: &'a NeighbourLists,
    /// `[p_x, p_y, (p_z,) extra, ...]` of every particle: what the passes gather, for
    /// the neighbours and for the lanes' own particles alike (the position arrays
    /// would add twelve bytes a particle to a pass's working set).
    pub quads: &'a [[f32; 4]],
}

/// Packs `positions` into the first `D` floats of every quad and `extra` into the
/// next (`quads[i][D]`), the layout [`Neighbourhood::for_each_slot`] gathers: one
/// sixteen-byte load per neighbour, transposed into lanes, instead of `D + 1` gathered
/// loads. Resizes `quads` to the particle count (keeping its capacity).
pub fn pack<const D: usize>(quads: &mut Vec<[f32; 4]>, positions: [&[f32]; D], extra: &[f32]) {
    assert!(
        extra.len() == positions[0].len(),
        "pack: the extra value of every particle"
    );
    pack_with(quads, positions, Some(extra), |e| e);
}

/// As [`pack`], with every particle's volume ([`volume`]) as the extra value: the
/// weight of a neighbour in the XSPH and curl pass, divided once per
/// particle rather than once per pair (the same bits either way).
pub fn pack_volumes<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    positions: [&[f32]; D],
    density: &[f32],
    mass: f32,
) {
    assert!(
        density.len() == positions[0].len(),
        "pack: the density of every particle"
    );
    pack_with(quads, positions, Some(density), |rho| volume(mass, rho));
}

/// A particle's volume `m / rho`, 0 where the density is not positive (a particle no
/// pass has seen yet).
pub fn volume(mass: f32, density: f32) -> f32 {
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
pub fn pack_vectors<const D: usize>(quads: &mut Vec<[f32; 4]>, field: [&[f32]; D]) {
    pack_with(quads, field, None, |e| e);
}

/// `quads[i] = [field[0][i], .., field[D - 1][i], map(extra[i]), 0, ..]`, with 0 for
/// `map(extra[i])` when there is no `extra` (whose length the callers check).
fn pack_with<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    field: [&[f32]; D],
    extra: Option<&[f32]>,
    map: impl Fn(f32) -> f32 + Sync,
) {
    const { assert!(D < 4, "a quad holds D components and one more value") };
    let n = field[0].len();
    assert!(
        field.iter().all(|f| f.len() == n),
        "pack: every component of every particle"
    );
    quads.resize(n, [0.0; 4]);
    for_each_chunk_of([quads.as_mut_slice()], 1024, 64, &|start, [q]| {
        let range = start..start + q.len();
        let from = stretches(field, range.clone());
        let extra = extra.map(|e| &e[range]);
        for (k, q) in q.iter_mut().enumerate() {
            let mut quad = [0.0; 4];
            for a in 0..D {
                quad[a] = from[a][k];
            }
            quad[D] = extra.map_or(0.0, |e| map(e[k]));
            *q = quad;
        }
    });
}

/// Replaces the extra value of every quad (`quads[i][D] = extra[i]`).
pub fn repack_extra<const D: usize>(quads: &mut [[f32; 4]], extra: &[f32]) {
    assert!(
        extra.len() == quads.len(),
        "repack: the extra value of every particle"
    );
    for_each_chunk_of([quads], 1024, 64, &|start, [q]| {
        let extra = &extra[start..start + q.len()];
        for (q, &e) in q.iter_mut().zip(extra) {
            q[D] = e;
        }
    });
}

impl<const D: usize> Neighbourhood<'_, D> {
    /// The particles: every index [`Self::for_each_slot`] hands out is below it.
    pub fn len(&self) -> usize {
        self.quads.len()
    }

    /// Whether the pass has no particles.
    pub fn is_empty(&self) -> bool {
        self.quads.is_empty()
    }

    /// Calls `f(neighbours, x, r2, extra)` for every slot of the group of `L::WIDTH`
    /// lanes from lane `first` (a multiple of the width), one particle a lane: lane
    /// `l` is particle `members(first)[l]` ([`NeighbourLists::members`]: the lanes
    /// are not the particles' order), and of call `k` the `k`-th entry of its list,
    /// with the offset `x = p_i - p_j` at the current positions, its squared length
    /// and the neighbour's extra value of the quads (`quads[j][D]`). Lanes past the
    /// end of their list carry `x = 0` (their own index is the padding) and
    /// `r2 = +inf`, outside every support; lanes past the particles (whose padding is
    /// the block's last particle) carry `r2 = +inf` too, and their sums are dropped.
    /// Every lane walks its list in order, so a sum over the calls adds each
    /// particle's terms in list order, at every width: the sixteen and eight lanes
    /// give the bits of one (`f32`). Gather other per-particle values by the
    /// neighbours as quads ([`Slot::gather4`]), and the lanes' own by the members
    /// ([`Lane::gather`]).
    ///
    /// Each slot's quads are loaded before the call for the slot ahead of it
    /// ([`Self::for_each_slot_ahead`]).
    ///
    /// # Panics
    /// When the quads and the lists are not of the same particles (a bug in the
    /// caller).
    #[inline(always)]
    pub fn for_each_slot<L: Lane>(&self, first: usize, f: impl FnMut(&Slot<'_, L>, [L; D], L, L)) {
        self.for_each_slot_ahead(first, self.own(first), f);
    }

    /// The quads of the group's own particles (lane `l` particle
    /// `members(first)[l]`), as [`Self::for_each_slot_from`] takes them.
    ///
    /// # Panics
    /// When the quads and the lists are not of the same particles (a bug in the
    /// caller).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub fn own<L: Lane>(&self, first: usize) -> [L; 4] {
        assert_eq!(self.quads.len(), self.lists.len(), "quads and lists");
        // SAFETY: the members are particles of the lists' last build, below
        // `self.lists.len()` (`NeighbourLists`' invariant), the quads' length
        // (asserted above).
        unsafe { L::gather4(self.quads, self.lists.members(first)) }
    }

    /// [`Self::for_each_slot_ahead`] without loading ahead: each slot's quads are
    /// loaded in its own turn. For the XSPH pass, which gathers the neighbours'
    /// velocities as well in every call: with it loading ahead too, the velocity
    /// phase of the 97k dam break was about 9% slower.
    #[inline(always)]
    pub fn for_each_slot_from<L: Lane>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        self.walk_group::<L, false>(first, own, f);
    }

    /// [`Self::for_each_slot`] with the group's own quads already gathered
    /// ([`Self::own`]), for a pass that reads them itself too.
    ///
    /// Each slot's quads (the loads and their transpose into registers) are loaded
    /// before `f` runs for the slot ahead of it, so that they come early in the
    /// instruction stream: the kernels' square root and division of one slot then
    /// wait beside the next slot's loads instead of before them. The operations are
    /// the same (the same bits); only their order in the instruction stream changes.
    /// One slot ahead is enough: two slots ahead gain nothing more measurable.
    #[inline(always)]
    pub fn for_each_slot_ahead<L: Lane>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        self.walk_group::<L, true>(first, own, f);
    }

    /// The group's walk: with `AHEAD`, see [`Self::for_each_slot_ahead`].
    #[inline(always)]
    fn walk_group<L: Lane, const AHEAD: bool>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        assert_eq!(self.quads.len(), self.lists.len(), "quads and lists");
        let xi: [L; D] = core::array::from_fn(|a| own[a]);
        self.lists.prefetch_next(first, L::WIDTH, self.quads);
        let (columns, slots, counts) = self.lists.group(first, L::WIDTH);
        // Narrower lanes stop at their own longest list.
        let slots = if L::WIDTH == GROUP {
            slots
        } else {
            counts.iter().copied().max().unwrap_or(0) as usize
        };
        let count = L::counts(counts);
        // One loop a kind of group, each with its kind of slot known: the compiler
        // drops the other kind's code from both.
        match columns {
            Columns::Wide(c) => {
                let slot = |k: usize| Slot::new(Columns::Wide(&c[k * GROUP..]));
                self.walk_slots::<L, AHEAD>(xi, slots, count, slot, f);
            }
            Columns::Narrow(c, base) => {
                let slot = |k: usize| Slot::new(Columns::Narrow(&c[k * GROUP..], base));
                self.walk_slots::<L, AHEAD>(xi, slots, count, slot, f);
            }
        }
    }

    /// The loop of [`Self::for_each_slot`] over `slots` slots.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn walk_slots<'c, L: Lane, const AHEAD: bool>(
        &self,
        xi: [L; D],
        slots: usize,
        count: L,
        slot_at: impl Fn(usize) -> Slot<'c, L>,
        mut f: impl FnMut(&Slot<'c, L>, [L; D], L, L),
    ) {
        // The slot's index as lanes (see `Lane::mask_counts`): exact, a list is far
        // shorter than 2^24 entries.
        let mut slot = L::splat(0.0);
        // SAFETY (every load): the slot's neighbours are entries of the lists, below
        // `self.lists.len()` (`NeighbourLists`' invariant), which is the quads' length
        // (asserted by `walk_group`).
        let load = |k: usize| unsafe { slot_at(k).gather4(self.quads) };
        // With `AHEAD`, slot `k`'s quads, loaded before the call for slot `k - 1`.
        let mut ahead = if AHEAD && slots > 0 {
            load(0)
        } else {
            [L::splat(0.0); 4]
        };
        for k in 0..slots {
            let neighbours = slot_at(k);
            let q = if AHEAD { ahead } else { load(k) };
            let x: [L; D] = core::array::from_fn(|a| xi[a] - q[a]);
            let r2 = L::mask_counts(L::norm2(x), count, slot);
            slot += L::splat(1.0);
            if AHEAD && k + 1 < slots {
                ahead = load(k + 1);
            }
            f(&neighbours, x, r2, q[D]);
        }
    }
}

/// [`for_each_chunk`](crate::parallel::for_each_chunk) for the neighbour passes:
/// chunks of whole list blocks, so that the particles of a chunk's lanes
/// ([`NeighbourLists::members`]) are the chunk's own.
pub fn for_each_pass_chunk<O: crate::parallel::Outputs, F>(outputs: O, f: &F)
where
    F: Fn(usize, O) + Sync,
{
    crate::parallel::for_each_chunk_of(outputs, crate::parallel::MIN_CHUNK.max(BLOCK), BLOCK, f);
}

/// Runs `f(first, width)` for every group of `L::WIDTH` lanes of the chunk of `len`
/// lanes from `start` (a multiple of the width): `first` the group's first lane (its
/// particles are [`NeighbourLists::members`]), `width` how many of its lanes are
/// particles (`L::WIDTH` but in the last).
///
/// The groups run inside [`Lane::run`], compiled for the instructions of the width:
/// `f`, and the closures it passes on ([`Neighbourhood::for_each_slot`]'s), must be
/// `#[inline(always)]` closures (see [`Lane::run`]).
#[inline(always)]
pub fn for_each_group<L: Lane>(start: usize, len: usize, mut f: impl FnMut(usize, usize)) {
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

    /// Floats in `[0, 1)` from a linear congruential generator seeded by `seed`.
    fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    fn cloud(n: usize, seed: u64) -> [Vec<f32>; 3] {
        let mut next = uniform(seed);
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

    /// `near` finds exactly the points of the ranges within h of a point by the scalar
    /// test, in order, with ranges of every length (tails of one to seven lanes) and
    /// points inside and outside the cloud, some on a particle itself.
    #[test]
    fn near_is_the_scalar_test_eight_at_a_time() {
        let (p, grid) = sorted_cloud(2000, 5, 0.1);
        let at = [&p[0][..], &p[1][..], &p[2][..]];
        let mut next = uniform(9);
        let points: Vec<[f32; 3]> = (0..200)
            .map(|k| {
                if k % 10 == 0 {
                    core::array::from_fn(|a| p[a][k * 7])
                } else {
                    core::array::from_fn(|_| 1.4 * next() - 0.2)
                }
            })
            .collect();
        let (mut found, mut lengths) = (0, std::collections::BTreeSet::new());
        for (k, point) in points.into_iter().enumerate() {
            // Within the grid's cells, and a smaller radius for a few.
            let h = if k % 3 == 0 { 0.06f32 } else { 0.1 };
            let mut ranges = [crate::CellRange::default(); 27];
            let count = grid.ranges_around(point, &mut ranges).unwrap();
            let ranges = &ranges[..count];
            lengths.extend(ranges.iter().map(|r| (r.end - r.start) % 8));
            let mut out = vec![u32::MAX];
            near(at, point, h * h, ranges, &mut out);
            let expected: Vec<u32> = ranges
                .iter()
                .flat_map(|r| r.as_range())
                .filter(|&j| {
                    let d: [f32; 3] = core::array::from_fn(|a| point[a] - p[a][j]);
                    pbf_kernels::within(pbf_kernels::norm2(d), h * h)
                })
                .map(|j| j as u32)
                .collect();
            assert_eq!(out[0], u32::MAX, "appended, not cleared");
            assert_eq!(&out[1..], &expected[..], "point {point:?}");
            found += expected.len();
        }
        assert!(found > 300, "{found} points found");
        assert!(lengths.len() == 8, "tails of every length: {lengths:?}");
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
                let mut entries = (0..slots).flat_map(|s| (0..GROUP).map(move |l| (s, l)));
                assert!(
                    entries.all(|(s, l)| (columns.lane(s, l) as usize) < n),
                    "group {first} of {n}"
                );
            }
            let mut quads = Vec::new();
            pack(&mut quads, [&p[0], &p[1], &p[2]], &vec![0.0; n]);
            let short = &quads[..n - 1];
            let nb = Neighbourhood::<3> {
                lists: &lists,
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

    /// Span limits for tests: the default (every group narrow in a small cloud),
    /// none (every group wide) and a mix.
    const SPANS: [Option<u32>; 3] = [None, Some(0), Some(60)];

    /// Empty lists of every sifter this CPU runs and every span limit of [`SPANS`], whose
    /// builds share a sifter's scratch among 1, 3 and 16 blocks (the small builds of
    /// the tests would not share it).
    fn every_kind_of_lists() -> impl Iterator<Item = NeighbourLists> {
        sifters().into_iter().flat_map(|sifter| {
            SPANS
                .into_iter()
                .zip([1, 3, 16])
                .map(move |(span, scratch)| NeighbourLists {
                    narrow_span: span,
                    scratch_blocks: Some(scratch),
                    ..NeighbourLists::with_sifter(sifter)
                })
        })
    }

    #[test]
    fn build_chunks_share_scratch_by_the_particle_count_alone() {
        let shares = [
            (1, 1),
            (63, 1),
            (64, 1),
            (128, 2),
            (400, 6),
            (3907, 16),
            (1 << 20, 16),
        ];
        for (blocks, per_chunk) in shares {
            assert_eq!(scratch_blocks(blocks), per_chunk, "{blocks} blocks");
        }
    }

    #[test]
    fn lists_hold_exactly_the_points_within_h() {
        for (n, h) in [(0, 0.1f32), (1, 0.1), (700, 0.1), (3000, 0.07), (2000, 0.3)] {
            let (p, grid) = sorted_cloud(n, n as u64 + 7, h);
            // Narrow groups, wide ones, and a mix.
            for mut lists in every_kind_of_lists() {
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
        for mut lists in every_kind_of_lists() {
            lists.build(&grid, positions, h * h, 4).unwrap();
            let mut expected: Vec<Vec<u32>> = (0..n).map(|i| lists.of(i)).collect();
            let formats = lists.formats();
            // The longest list of a group (a new slot, later groups move up), a short
            // one, the longest in the last group of the partial block (a new slot
            // padded past the particles), and the same particle twice (its second
            // entry needs a slot of its own again). A group's particles are its
            // lanes' members.
            let group = |first: usize, width: usize| lists.members(first)[..width].to_vec();
            let by_length = |i: &u32| (expected[*i as usize].len(), *i);
            let longest = group(16, 16).into_iter().max_by_key(by_length).unwrap() as usize;
            let shortest = group(32, 16).into_iter().min_by_key(by_length).unwrap() as usize;
            let last = group(688, 12).into_iter().max_by_key(by_length).unwrap() as usize;
            let slots_before =
                |lists: &NeighbourLists, i: usize| lists.group(lists.lane_of(i), 1).1;
            let (group_slots, last_slots) =
                (slots_before(&lists, longest), slots_before(&lists, last));
            for (i, j) in [(longest, 699), (shortest, 3), (last, 0), (longest, 698)] {
                lists.insert(i, j);
                expected[i].push(j);
            }
            assert_eq!(
                slots_before(&lists, longest),
                group_slots + 2,
                "two new slots"
            );
            assert_eq!(slots_before(&lists, last), last_slots + 1, "a new slot");
            // Particle 0 is below the base of the last group: a narrow one widens.
            if lists.narrow_span.is_none() {
                assert_eq!(formats.1, 0, "all narrow");
                assert!(lists.formats().1 >= 1, "the last group widened");
            }
            // Lanes 700..704 of the last group: past the particles, the last one.
            let (columns, slots, _) = lists.group(688, 16);
            for s in 0..slots {
                assert_eq!(
                    (12..16).map(|l| columns.lane(s, l)).collect::<Vec<_>>(),
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
            let nb = Neighbourhood::<3> {
                lists: &lists,
                quads: &quads,
            };
            pbf_kernels::for_each_lane! {
                let nb: &'a Neighbourhood<'a, 3> = &nb;
                let expected: &'a [Vec<u32>] = &expected;
                |L| {
                    assert_eq!(seen_by::<L>(nb), expected, "{} lanes", L::WIDTH);
                }
            }
        }
    }

    /// Every particle's neighbours as a pass on lanes `L` sees them: the entries of
    /// the lanes within the particle's list.
    fn seen_by<L: Lane>(nb: &Neighbourhood<'_, 3>) -> Vec<Vec<u32>> {
        let n = nb.lists.len();
        let mut seen: Vec<Vec<u32>> = vec![Vec::new(); n];
        L::run(|| {
            for_each_group::<L>(0, n, |first, width| {
                let members = nb.lists.members(first);
                nb.for_each_slot::<L>(first, |indices, _, r2, _| {
                    let mut r = [0.0f32; GROUP];
                    r2.store(&mut r[..L::WIDTH]);
                    for l in 0..width {
                        if r[l].is_finite() {
                            seen[members[l] as usize].push(indices.indices()[l]);
                        }
                    }
                });
            });
        });
        seen
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
                for &line in &lists.ahead[b] {
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
        assert!(plain.ahead.iter().all(|lines| lines.is_empty()));
        let mut marked = NeighbourLists {
            prefetch_from: Some(n),
            ..NeighbourLists::default()
        };
        marked.build(&grid, positions, h * h, 4).unwrap();
        assert!(marked.prefetching);
        assert!(
            marked.ahead[1..n.div_ceil(BLOCK)]
                .iter()
                .any(|lines| !lines.is_empty())
        );
        assert_same_sums(&plain, &[&marked], positions, h);
    }

    /// Every pass sum of [`pass_sums`] over `others` has the bits of its sum over
    /// `reference` (which sees neighbours), at every width this CPU runs.
    fn assert_same_sums(
        reference: &NeighbourLists,
        others: &[&NeighbourLists],
        positions: [&[f32]; 3],
        h: f32,
    ) {
        pbf_kernels::for_each_lane! {
            let reference: &'a NeighbourLists = reference;
            let others: &'a [&'a NeighbourLists] = others;
            let positions: [&'a [f32]; 3] = positions;
            let h: f32 = h;
            |L| {
                let expected = pass_sums::<L>(reference, positions, h);
                assert!(expected.iter().any(|&s| s != 0), "the sums see neighbours");
                for (k, other) in others.iter().enumerate() {
                    let sums = pass_sums::<L>(other, positions, h);
                    assert_eq!(sums, expected, "lists {k}, {} lanes", L::WIDTH);
                }
            }
        }
    }

    /// The bits of a sum over every particle's neighbours on lanes `L`, of the quads
    /// (with an extra value) and of what a pass gathers by the slot's neighbours
    /// besides: other quads (`Slot::gather4`).
    #[allow(unsafe_code)]
    fn pass_sums<L: Lane>(lists: &NeighbourLists, positions: [&[f32]; 3], h: f32) -> Vec<u32> {
        let n = positions[0].len();
        let extra: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let other: Vec<f32> = (0..n).map(|i| (i as f32).sqrt()).collect();
        let (mut quads, mut others) = (Vec::new(), Vec::new());
        pack(&mut quads, positions, &extra);
        pack(&mut others, positions, &other);
        let kernel = pbf_kernels::Kernel::<3>::new(h).unwrap();
        let nb = Neighbourhood::<3> {
            lists,
            quads: &quads,
        };
        let mut out = vec![0; n];
        L::run(|| {
            for_each_group::<L>(0, out.len(), |first, width| {
                let mut sum = L::splat(0.0);
                nb.for_each_slot::<L>(first, |j, x, r2, extra| {
                    // SAFETY: the quads have the lists' particles.
                    let q = unsafe { j.gather4(&others) };
                    sum += L::poly6(&kernel, r2) * (extra + x[0] + q[3] + q[1]);
                });
                let mut lanes = [0.0f32; GROUP];
                sum.store(&mut lanes[..L::WIDTH]);
                for l in 0..width {
                    out[nb.lists.members(first)[l] as usize] = lanes[l].to_bits();
                }
            });
        });
        out
    }

    /// Lists built with every group narrow, every group wide, and a mix (a span
    /// limit between), by both sifters: the same entries, and the same sums in every
    /// pass at every width, bit for bit.
    #[test]
    fn narrow_and_wide_groups_give_the_same_lists_and_sums() {
        let n = 3 * BLOCK + 40;
        let h = 0.12f32;
        let (p, grid) = sorted_cloud(n, 5, h);
        let positions = [&p[0][..], &p[1][..], &p[2][..]];
        let build = |span: Option<u32>, sifter: Sifter| {
            let mut lists = NeighbourLists {
                narrow_span: span,
                ..NeighbourLists::with_sifter(sifter)
            };
            lists.build(&grid, positions, h * h, 4).unwrap();
            lists
        };
        let narrow = build(None, Sifter::default());
        let wide = build(Some(0), Sifter::default());
        assert_eq!(narrow.formats(), (n.div_ceil(GROUP), 0), "all narrow");
        assert_eq!(wide.formats(), (0, n.div_ceil(GROUP)), "all wide");
        // A span limit that splits the groups.
        let mut spans: Vec<u32> = (0..n.div_ceil(GROUP)).map(|g| narrow.span_of(g)).collect();
        spans.sort_unstable();
        let middle = spans[spans.len() / 2];
        for sifter in sifters() {
            let mixed = build(Some(middle), sifter);
            let (some_narrow, some_wide) = mixed.formats();
            assert!(
                some_narrow > 0 && some_wide > 0,
                "{some_narrow} narrow, {some_wide} wide"
            );
            // Both sifters pick the same groups: those within the span.
            let within = spans.iter().filter(|&&s| s <= middle).count();
            assert_eq!(some_narrow, within, "{sifter:?}");
            for i in 0..n {
                assert_eq!(mixed.column_of(i), wide.column_of(i), "particle {i}");
                assert_eq!(narrow.column_of(i), wide.column_of(i), "particle {i}");
            }
            assert_same_sums(&wide, &[&narrow, &mixed], positions, h);
        }
    }

    /// Sorted lanes: every block's members are its particles, each once, by
    /// descending list length (ties in order), `lane_of` their inverse, and the lanes
    /// past the particles hold the block's last one; unsorted, the particles' order.
    /// Either way the same lists, the same sums in every pass at every width (bit for
    /// bit), and fewer slots sorted.
    #[test]
    fn sorted_lanes_keep_every_list_and_sum_and_take_fewer_slots() {
        // Three blocks and a partial one; a cloud with a denser corner, so that the
        // lists' lengths differ.
        let n = 3 * BLOCK + 40;
        let h = 0.12f32;
        let (mut p, _) = sorted_cloud(n, 9, h);
        for i in 0..n / 3 {
            for axis in p.iter_mut() {
                axis[i] *= 0.4;
            }
        }
        let mut grid = Grid::<3>::new();
        grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
        let mut scratch = Vec::new();
        for a in p.iter_mut() {
            grid.reorder(a, &mut scratch).unwrap();
        }
        let positions = [&p[0][..], &p[1][..], &p[2][..]];
        let build = |sort: bool, sifter: Sifter| {
            let mut lists = NeighbourLists {
                sort_lanes: Some(sort),
                ..NeighbourLists::with_sifter(sifter)
            };
            lists.build(&grid, positions, h * h, 8).unwrap();
            lists
        };
        let plain = build(false, Sifter::default());
        for i in 0..n {
            assert_eq!(plain.members(i)[0] as usize, i, "in order");
        }
        let slots = |lists: &NeighbourLists| -> usize {
            (0..n.div_ceil(GROUP))
                .map(|g| lists.group(g * GROUP, 1).1)
                .sum()
        };
        for sifter in sifters() {
            let sorted = build(true, sifter);
            for b in 0..n.div_ceil(BLOCK) {
                let (first, len) = (b * BLOCK, (n - b * BLOCK).min(BLOCK));
                let members = &sorted.members(first)[..BLOCK];
                let mut particles = members[..len].to_vec();
                particles.sort_unstable();
                assert_eq!(
                    particles,
                    (first as u32..(first + len) as u32).collect::<Vec<_>>()
                );
                assert!(
                    members[len..]
                        .iter()
                        .all(|&i| i as usize == first + len - 1)
                );
                let key = |&i: &u32| (core::cmp::Reverse(sorted.of(i as usize).len()), i);
                assert!(members[..len].is_sorted_by_key(key), "block {b}");
                for (lane, &i) in members[..len].iter().enumerate() {
                    assert_eq!(sorted.lane_of(i as usize), first + lane);
                }
            }
            for i in 0..n {
                assert_eq!(sorted.column_of(i)[..sorted.of(i).len()], plain.of(i)[..]);
                assert_eq!(sorted.of(i), plain.of(i), "particle {i}");
            }
            assert!(
                slots(&sorted) < slots(&plain),
                "{} against {}",
                slots(&sorted),
                slots(&plain)
            );
            assert_same_sums(&plain, &[&sorted], positions, h);
        }
    }

    /// A narrow group packs its offsets from the smallest index, its lanes' own
    /// included; a group one wider than the span stays as it was.
    #[test]
    fn a_group_is_narrow_exactly_when_its_span_fits() {
        let own: [u32; GROUP] = core::array::from_fn(|l| 1000 + l as u32);
        let mut columns: Vec<u32> = (0..3 * GROUP).map(|e| 990 + (e as u32 * 7) % 40).collect();
        let before = columns.clone();
        // Smallest 990, largest 1029: a span of 39.
        assert_eq!(narrow(&mut columns, &own, 38), WIDE);
        assert_eq!(columns, before);
        assert_eq!(narrow(&mut columns, &own, 39), 990);
        let offsets: &[u16] = bytemuck::cast_slice(&columns[..3 * GROUP / 2]);
        let unpacked: Vec<u32> = offsets.iter().map(|&o| 990 + u32::from(o)).collect();
        assert_eq!(unpacked, before);
        // The lanes' own indices count: 2000 is past a span of 39 from 990.
        let mut columns = before.clone();
        let far: [u32; GROUP] = core::array::from_fn(|l| if l == 3 { 2000 } else { 1000 });
        assert_eq!(narrow(&mut columns, &far, 1010), 990);
        assert_eq!(narrow(&mut before.clone(), &far, 1009), WIDE);
        // Never past what 16 bits hold, whatever the limit asked.
        let mut spread: Vec<u32> = vec![5; GROUP];
        spread[7] = 5 + 65_536;
        assert_eq!(narrow(&mut spread, &[5; GROUP], u32::MAX), WIDE);
        spread[7] = 5 + 65_535;
        assert_eq!(narrow(&mut spread, &[5; GROUP], u32::MAX), 5);
    }

    /// Every sifter this CPU runs.
    fn sifters() -> Vec<Sifter> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut all = vec![Sifter::Portable];
        #[cfg(target_arch = "x86_64")]
        if LaneKind::Avx.is_available() {
            all.push(Sifter::Avx);
        }
        #[cfg(target_arch = "x86_64")]
        if Sifter::default() == Sifter::Avx512 {
            all.push(Sifter::Avx512);
        }
        all
    }

    #[test]
    fn the_fastest_sifter_is_the_default() {
        #[cfg(target_arch = "x86_64")]
        {
            let expected = if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("popcnt")
            {
                Sifter::Avx512
            } else if std::arch::is_x86_feature_detected!("avx") {
                Sifter::Avx
            } else {
                Sifter::Portable
            };
            assert_eq!(Sifter::default(), expected);
        }
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

    /// The sixteen-wide sifter takes up to four particles of a cell at once, and both
    /// sifters from five particles on walk a copy of the cell's candidates in one run:
    /// cells of one to nine particles (every way a cell splits into fours, twos and
    /// ones, with and without the copy) give the same lists from both, entry for
    /// entry.
    #[test]
    fn cells_of_every_occupancy_give_the_same_lists() {
        let radius = 0.1f32;
        let side = 6;
        let mut next = uniform(7);
        let mut p: [Vec<f32>; 3] = Default::default();
        for c in 0..side * side * side {
            let cell = [c % side, (c / side) % side, c / (side * side)];
            // The middle half of a cell of the lattice, so that the grid's cells (of
            // the same size, wherever their origin) hold about as many.
            for _ in 0..c % 10 {
                for a in 0..3 {
                    p[a].push((cell[a] as f32 + 0.25 + 0.5 * next()) * radius);
                }
            }
        }
        let mut grid = Grid::<3>::new();
        grid.rebuild([&p[0], &p[1], &p[2]], radius).unwrap();
        let mut occupancy = [false; 10];
        for cell in grid.cells() {
            occupancy[cell.len().min(9)] = true;
        }
        assert!(
            occupancy[1..].iter().all(|&o| o),
            "cells of every occupancy from 1 to 9: {occupancy:?}"
        );
        sifters_agree(&p, radius, 3);
        sifters_agree(&p, radius, 2);
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
        let nb = Neighbourhood::<2> {
            lists: &lists,
            quads: &quads,
        };
        let mut seen = 0;
        nb.for_each_slot::<f32x8>(0, |indices, x, r2, _| {
            let r2 = r2.to_array();
            for i in 0..8 {
                if i >= 4 {
                    // Past the particles: the last particle, masked.
                    assert_eq!(indices.indices()[i], 3);
                    assert!(r2[i].is_infinite());
                } else if r2[i].is_finite() {
                    assert!(r2[i] < 0.12 * 0.12);
                    seen += 1;
                } else {
                    assert_eq!(indices.indices()[i], i as u32, "padded with itself");
                    assert_eq!(x[0].to_array()[i], 0.0);
                }
            }
        });
        // 0-0.05, 0.05-0.1, 0-0.1: three pairs, each seen from both ends.
        assert_eq!(seen, 6);
    }
}
