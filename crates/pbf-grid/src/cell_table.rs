//! Finding an occupied cell by its Morton key, with memory that follows the number of
//! points, never the volume of the bounding box. The table hands out the cell's range
//! of sorted points directly (one load less in the candidate pass than a cell index
//! would cost).
//!
//! Two layouts, chosen per rebuild:
//! - dense: when the occupied cells' keys span at most [`DENSE_FACTOR`] slots per
//!   point (plus [`DENSE_SLACK`]): a filled tank, a lattice, a splashing fluid whose
//!   cells hold several points each. A direct `key - min_key` table. Morton order
//!   keeps a cell's neighbours close in it, so the lookups of the candidate pass
//!   mostly hit L1. Built in parallel: each task owns the slots between its cells'
//!   keys.
//! - hashed: otherwise (sparse or far-apart clouds), an open-addressing table with
//!   linear probing, keyed by the Morton key, sized to the next power of two at or
//!   above twice the occupied-cell count. Filled in cell order, so its layout is
//!   deterministic.

use rayon::prelude::*;

use crate::cells::CellRange;
use crate::parts::{MAX_PARTS, reserve_total, split_at_bounds};

/// Slot value of an empty slot: an empty range (an occupied cell's is never empty).
const EMPTY: CellRange = CellRange { start: 0, end: 0 };

/// The dense layout is used while its slots number at most this many per point (plus
/// [`DENSE_SLACK`]): 32 bytes a point at most. Per point rather than per occupied
/// cell: a fluid's cells hold about eight points each at rest, and its splashes
/// spread the keys of few cells over a wide span. In the 97k dam break's splash the
/// keys span about 20 slots per occupied cell (2.4 per point): with a bound of 8 per
/// cell, two thirds of the searches took the hashed table, and the candidate ranges
/// took 0.96 ms a search instead of 0.53 ms (2 threads).
pub(crate) const DENSE_FACTOR: u64 = 4;
/// Small sets may always use a dense table of this many slots.
const DENSE_SLACK: u64 = 4096;

/// Cells per task when the dense table is filled.
const FILL_CHUNK: usize = 4096;

/// One slot of the hashed layout.
#[derive(Clone, Copy, Debug, Default)]
struct HashSlot {
    key: u64,
    range: CellRange,
}

/// Map from the Morton key of an occupied cell to its range of sorted points.
#[derive(Clone, Debug, Default)]
pub(crate) struct CellTable {
    dense: bool,
    /// Dense layout: key of slot 0.
    min_key: u64,
    /// Dense layout: slot `key - min_key` holds the cell's range, or an empty range.
    slots: Vec<CellRange>,
    /// Hashed layout.
    hashed: Vec<HashSlot>,
    /// `64 - log2(hashed.len())`.
    shift: u32,
    /// Boundaries of the fill tasks (reused buffer).
    bounds: Vec<usize>,
}

#[inline(always)]
fn hash(key: u64, shift: u32) -> usize {
    // Fibonacci hashing: the top bits of key * 2^64 / phi.
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> shift) as usize
}

impl CellTable {
    /// Rebuilds the table for the given cells: keys strictly ascending, ranges non-empty,
    /// from `points` points (so at most that many cells). The layout in use is reserved
    /// for the most cells `points` points can occupy, so rebuilding with as many points
    /// never allocates: up to `4 points + 4096` dense slots (8 bytes each) or
    /// `2 points` rounded up to a power of two hashed slots (16 bytes each).
    pub fn rebuild(&mut self, keys: &[u64], cells: &[CellRange], points: usize) {
        self.slots.clear();
        self.hashed.clear();
        let Some((&min_key, &max_key)) = keys.first().zip(keys.last()) else {
            self.dense = true;
            self.min_key = 0;
            return;
        };
        let last_slot = max_key - min_key;
        let points = points.max(keys.len());
        self.dense = last_slot < DENSE_FACTOR * points as u64 + DENSE_SLACK;
        if self.dense {
            reserve_total(
                &mut self.slots,
                (DENSE_FACTOR as usize)
                    .saturating_mul(points)
                    .saturating_add(DENSE_SLACK as usize),
            );
            self.min_key = min_key;
            self.fill_dense(keys, cells, last_slot as usize + 1);
        } else {
            reserve_total(
                &mut self.hashed,
                points.saturating_mul(2).next_power_of_two().max(16),
            );
            self.fill_hashed(keys, cells);
        }
    }

    fn fill_dense(&mut self, keys: &[u64], cells: &[CellRange], span: usize) {
        self.slots.resize(span, EMPTY);
        let per_task = keys.len().div_ceil(MAX_PARTS).max(FILL_CHUNK);
        let tasks = keys.len().div_ceil(per_task);
        // Task t owns cells [t * per_task, ..) and the slots from its first cell's key
        // up to the next task's first key.
        self.bounds.clear();
        self.bounds
            .extend((0..tasks).map(|t| (keys[t * per_task] - self.min_key) as usize));
        self.bounds[0] = 0;
        self.bounds.push(span);
        let min_key = self.min_key;
        let mut parts = split_at_bounds(&mut self.slots, &self.bounds);
        let bounds = &self.bounds;
        parts[..tasks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(t, part)| {
                part.fill(EMPTY);
                let first = t * per_task;
                let last = ((t + 1) * per_task).min(keys.len());
                for (&key, &range) in keys[first..last].iter().zip(&cells[first..last]) {
                    part[(key - min_key) as usize - bounds[t]] = range;
                }
            });
    }

    fn fill_hashed(&mut self, keys: &[u64], cells: &[CellRange]) {
        let capacity = (2 * keys.len()).next_power_of_two().max(16);
        self.shift = 64 - capacity.trailing_zeros();
        self.hashed.resize(
            capacity,
            HashSlot {
                key: 0,
                range: EMPTY,
            },
        );
        let mask = capacity - 1;
        for (&key, &range) in keys.iter().zip(cells) {
            let mut s = hash(key, self.shift);
            while !self.hashed[s].range.is_empty() {
                s = (s + 1) & mask;
            }
            self.hashed[s] = HashSlot { key, range };
        }
    }

    /// The range of sorted points of the occupied cell with this key, if any.
    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<CellRange> {
        if self.dense {
            let s = key.wrapping_sub(self.min_key);
            match self.slots.get(s as usize) {
                Some(&r) if !r.is_empty() => Some(r),
                _ => None,
            }
        } else {
            if self.hashed.is_empty() {
                return None;
            }
            let mask = self.hashed.len() - 1;
            let mut s = hash(key, self.shift);
            loop {
                let slot = self.hashed[s];
                if slot.range.is_empty() {
                    return None;
                }
                if slot.key == key {
                    return Some(slot.range);
                }
                s = (s + 1) & mask;
            }
        }
    }

    /// Bytes of heap the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<CellRange>()
            + self.hashed.capacity() * size_of::<HashSlot>()
            + self.bounds.capacity() * size_of::<usize>()
    }

    /// The dense layout's key of slot 0 and slots (empty ranges where no cell), if
    /// it is in use: lets hot loops look up without a layout branch.
    pub fn dense_slots(&self) -> Option<(u64, &[CellRange])> {
        self.dense.then_some((self.min_key, &self.slots[..]))
    }

    /// Whether the dense layout is in use.
    pub fn is_dense(&self) -> bool {
        self.dense
    }

    /// Number of slots in use (memory checks in tests).
    #[cfg(test)]
    pub fn slot_count(&self) -> usize {
        self.slots.len() + self.hashed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(keys: &[u64], expect_dense: bool) {
        check_with(keys, keys.len(), expect_dense);
    }

    /// `keys` as the cells of `points` points.
    fn check_with(keys: &[u64], points: usize, expect_dense: bool) {
        let cells: Vec<CellRange> = (0..keys.len() as u32)
            .map(|c| CellRange {
                start: 2 * c,
                end: 2 * c + 1 + c % 3,
            })
            .collect();
        let mut table = CellTable::default();
        table.rebuild(keys, &cells, points);
        assert_eq!(table.is_dense(), expect_dense);
        for (c, &k) in keys.iter().enumerate() {
            assert_eq!(table.get(k), Some(cells[c]));
        }
        for &k in keys {
            for probe in [k.wrapping_add(1), k.wrapping_sub(1), k ^ (1 << 40)] {
                if keys.binary_search(&probe).is_err() {
                    assert_eq!(table.get(probe), None);
                }
            }
        }
        assert!(table.slot_count() as u64 <= DENSE_FACTOR * points as u64 + DENSE_SLACK);
    }

    #[test]
    fn dense_for_compact_keys() {
        let keys: Vec<u64> = (100..20_000).step_by(3).collect();
        check(&keys, true);
        let keys: Vec<u64> = (100..200_000).step_by(3).collect();
        check(&keys, true);
    }

    /// The bound is per point: cells of several points each may spread wider, as a
    /// splashing fluid's do, and keep the dense table; the same cells of one point
    /// each take the hashed one.
    #[test]
    fn dense_by_the_points_not_the_cells() {
        let keys: Vec<u64> = (100..200_000).step_by(20).collect();
        check_with(&keys, 8 * keys.len(), true);
        check_with(&keys, keys.len(), false);
        // Just past the bound: hashed.
        let points = 2_000;
        let span = DENSE_FACTOR * points as u64 + DENSE_SLACK;
        check_with(&[7, 7 + span], points, false);
        check_with(&[7, 7 + span - 1], points, true);
    }

    #[test]
    fn hashed_for_spread_keys() {
        let keys: Vec<u64> = (0..10_000u64).map(|i| i * 1_000_003 + (i & 7)).collect();
        check(&keys, false);
        // Keys that differ only in high bits.
        let keys: Vec<u64> = (0..5000u64).map(|i| i << 40).collect();
        check(&keys, false);
        check(&[0, u64::MAX], false);
    }

    #[test]
    fn empty_table_finds_nothing() {
        let mut table = CellTable::default();
        table.rebuild(&[], &[], 0);
        assert_eq!(table.get(0), None);
        assert_eq!(table.get(u64::MAX), None);
    }
}
