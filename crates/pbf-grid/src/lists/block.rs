//! The storage of the lists: the sifters' rows ([`Rows`]) and their transpose into a
//! block's column groups ([`ListBlock`]), narrow (16-bit offsets) where a group's
//! indices span little.

use super::*;

/// The lists of one block of [`BLOCK`] particles as the sifters write them, one after
/// the other, which [`transpose_block`] turns into the block's [`ListBlock`]: scratch
/// of a build chunk of [`scratch_blocks`] consecutive blocks, which the chunk's blocks
/// reuse one after the other (so the rows a sifter writes are lines already in the
/// caches), kept with the chunk (so that what a build reallocates depends on the flow
/// alone, not on which thread built which chunk).
#[derive(Debug, Default, Clone)]
pub struct Rows {
    /// `ends[k]` is one past the last entry of particle `k` of the block in `indices`.
    pub(super) ends: Vec<u32>,
    /// The lists one after the other; entries past the last end are scratch.
    pub(super) indices: Vec<u32>,
    /// The first particle of the block whose candidates exceeded the limit of the
    /// build, and their number (its list and the later ones are left empty).
    pub(super) overfull: Option<(usize, usize)>,
    /// The sifters' copy of a cell's candidates, one run for all its particles: their
    /// coordinates by axis and their indices (entries past the cell's candidates are
    /// scratch).
    pub(super) packed: ([Vec<f32>; 3], Vec<u32>),
    /// The pairs across periodic faces a build adds to the block's rows (the
    /// particle's place in the block, the neighbour), see `images.rs`.
    pub(super) images: Vec<(u32, u32)>,
}

impl Rows {
    /// Makes room for a block: `room` indices and [`BLOCK`] ends.
    pub(super) fn reserve(&mut self, room: usize) {
        if self.indices.len() < room {
            self.indices.resize(room, 0);
        }
        if self.ends.capacity() < BLOCK {
            self.ends.reserve(BLOCK);
        }
    }
}

/// The list lengths [`order_lanes`] tells apart: longer lists sort as this long (a
/// fixed tally on the stack; lists so long are seldom more than a few a block).
pub(super) const SORTED_LENGTHS: usize = 255;

/// The [`Head::base`] of a wide group, whose slots are sixteen `u32` indices.
pub(super) const WIDE: u32 = u32::MAX;

/// The widest span of a narrow group's indices (its largest less its smallest,
/// padding and the lanes' own indices included): what a `u16` offset holds.
pub(super) const NARROW_SPAN: u32 = u16::MAX as u32;

/// Where a group of a [`ListBlock`] starts in its columns, and how it stores them.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Head {
    /// The group's first word (`u32`) in [`ListBlock::columns`].
    pub(super) word: u32,
    /// [`WIDE`]: a slot is sixteen `u32` indices (sixteen words). Otherwise the group
    /// is narrow: a slot is sixteen `u16` offsets from `base` (eight words), the
    /// offset of lane `l` of slot `s` at `u16` position `2 * word + 16 * s + l` of the
    /// columns.
    pub(super) base: u32,
}

impl Head {
    /// The words a slot of the group takes.
    pub(super) fn slot_words(self) -> usize {
        if self.base == WIDE { GROUP } else { GROUP / 2 }
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
/// carry little padding (far less than groups of sixteen consecutive particles, whose
/// list lengths differ from lane to lane). A pass's sums do not
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
    pub(super) columns: Vec<u32>,
    /// One past the last slot of every group of the block.
    pub(super) slot_ends: Vec<u32>,
    /// Where every group of the block starts in `columns`, and its base.
    pub(super) heads: Vec<Head>,
    /// The length of every lane's list, [`BLOCK`] entries (0 past the particles).
    pub(super) counts: Vec<u32>,
    /// The particle of every lane, [`BLOCK`] entries: the block's particles by
    /// descending list length, ties in their order; past the particles, the block's
    /// last one (a valid index to load).
    pub(super) members: Vec<u32>,
    /// The lane of every particle of the block (its offset from the block's first).
    pub(super) lane_of: Vec<u16>,
    /// As [`Rows::overfull`].
    pub(super) overfull: Option<(usize, usize)>,
}

const _: () = assert!(BLOCK <= 1 << 16, "a lane's index in a block is a u16");

impl ListBlock {
    /// The number of slots of group `g`.
    #[inline(always)]
    pub(super) fn slots(&self, g: usize) -> usize {
        let start = if g == 0 {
            0
        } else {
            self.slot_ends[g - 1] as usize
        };
        self.slot_ends[g] as usize - start
    }

    /// One past the last word of the block's groups in `columns`.
    pub(super) fn end_word(&self) -> usize {
        let g = self.heads.len() - 1;
        let head = self.heads[g];
        head.word as usize + self.slots(g) * head.slot_words()
    }

    /// Makes room for `words` words at word `at` of group `g` (at most its end): the
    /// words from `at` on, and the later groups, move up.
    pub(super) fn open(&mut self, g: usize, at: usize, words: usize) {
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
    pub(super) fn set(&mut self, g: usize, s: usize, lane: usize, j: u32) {
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
    pub(super) fn widen(&mut self, g: usize) {
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
pub(super) fn narrow(columns: &mut [u32], own: &[u32; GROUP], span: u32) -> u32 {
    // Slot by slot, lane by lane: sixteen independent minima and maxima, which the
    // compiler keeps on vector registers (one chain through every entry would make
    // the transpose wait on each comparison in turn).
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
pub(super) fn order_lanes(
    ends: &[u32],
    block: &mut ListBlock,
    (first, len): (usize, usize),
    sort: bool,
) {
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
pub(super) fn transpose_block(
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
                sift16::transpose_group(&rows.indices, start, count, own, columns, span)
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
