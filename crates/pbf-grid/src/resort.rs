//! Re-sorting points that mostly kept their cells: the steady state of a simulation.
//!
//! When the input is the previous rebuild's sorted order and most points are still
//! in their cell, the points whose key equals the key of the cell at their position
//! last time (the "stayers") are already in sorted order: those old keys are
//! non-decreasing along the positions by construction, whatever the input is. Only
//! the "movers" need sorting. They are gathered and sorted (a small radix sort),
//! and the two sorted sequences are merged: stretches of stayers are copied whole
//! between the movers' insertion points. The result is the one stable order, as from
//! the full radix sort, so the path taken does not show in the output.

use rayon::prelude::*;

use crate::parts::{MAX_PARTS, reserve_total, split_at_bounds};
use crate::sort::{RadixSorter, SortItem};

/// Use the merge while at most this fraction (1/MOVER_LIMIT) of the points moved.
///
/// A quarter: in the splash of a 97k-particle dam break, whose lists are searched
/// every step, 1/8 to 1/4 of the particles change cell between searches. With a limit
/// of 1/8 they would take the full sort, whose keys are then computed a second time,
/// which costs about 1.5 times the key pass and merge.
pub(crate) const MOVER_LIMIT: usize = 4;

/// The re-sort's key pass runs in up to this many chunks a thread (none shorter than
/// [`MIN_KEY_CHUNK`]): the chunks' stayers are merged part by part, so finer chunks
/// also split the merge finer. With one chunk a thread, a thread that starts late
/// leaves the other waiting (the threads seldom start the pass together); with eight,
/// the chunks even out the threads' shares.
const KEY_CHUNKS_PER_THREAD: usize = 8;

/// The shortest chunk of the re-sort's key pass (see [`KEY_CHUNKS_PER_THREAD`]).
const MIN_KEY_CHUNK: usize = 1 << 12;

/// The length of the chunks of the re-sort's key pass over `n` points: at most
/// [`KEY_CHUNKS_PER_THREAD`] a thread of the current pool and [`MAX_PARTS`] in all
/// (the merge's parts), none shorter than [`MIN_KEY_CHUNK`] (but for the only one).
/// The re-sort's result does not depend on it.
pub(crate) fn key_chunk_len(n: usize) -> usize {
    let tasks = (rayon::current_num_threads().max(1) * KEY_CHUNKS_PER_THREAD).min(MAX_PARTS);
    n.div_ceil(tasks).max(MIN_KEY_CHUNK).min(n).max(1)
}

/// Reusable buffers of the re-sort.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resorter<T> {
    movers: Vec<T>,
    movers_scratch: Vec<T>,
    mover_bounds: Vec<usize>,
    out_bounds: Vec<usize>,
}

impl<T: SortItem> Resorter<T> {
    /// Makes room for a re-sort of `n` points in `chunks` key chunks, so that the
    /// first one allocates nothing (a full sort calls it, and the steady state that
    /// follows it then runs in the room).
    pub fn reserve(&mut self, n: usize, chunks: usize) {
        reserve_total(&mut self.movers, n / MOVER_LIMIT + 1);
        reserve_total(&mut self.movers_scratch, n / MOVER_LIMIT + 1);
        reserve_total(&mut self.mover_bounds, chunks + 1);
        reserve_total(&mut self.out_bounds, chunks + 1);
    }

    /// Sorts the points of a key pass that split them: chunk `t` (of `chunk_len`
    /// items) holds its `stayer_counts[t]` stayers, sorted, at the front of its part
    /// of `items`, and its movers in `mover_chunks[t]`. The `n` sorted items end up
    /// in `items`; `scratch` is the second buffer.
    #[allow(clippy::too_many_arguments)]
    pub fn resort(
        &mut self,
        items: &mut Vec<T>,
        scratch: &mut Vec<T>,
        chunk_len: usize,
        stayer_counts: &[usize],
        mover_chunks: &[Vec<T>],
        sorter: &mut RadixSorter,
        key_bits: u32,
    ) {
        let n = items.len();
        self.movers.clear();
        // This path runs while at most n / MOVER_LIMIT points moved: reserve for that.
        reserve_total(&mut self.movers, n / MOVER_LIMIT + 1);
        reserve_total(&mut self.movers_scratch, n / MOVER_LIMIT + 1);
        for movers in mover_chunks {
            self.movers.extend_from_slice(movers);
        }
        if self.movers.is_empty() {
            return; // every point stayed: `items` is complete and sorted
        }
        sorter.sort(&mut self.movers, &mut self.movers_scratch, key_bits, false);
        let movers = &self.movers;
        let chunks = stayer_counts.len();
        // Part t: chunk t's stayers and the movers from below its first stayer up to
        // below the next chunk's first stayer (part 0 also takes all movers below).
        self.mover_bounds.clear();
        self.mover_bounds.resize(chunks + 1, movers.len());
        for t in (1..chunks).rev() {
            self.mover_bounds[t] = if stayer_counts[t] > 0 {
                let first = items[t * chunk_len];
                movers.partition_point(|&m| m < first)
            } else {
                self.mover_bounds[t + 1]
            };
        }
        self.mover_bounds[0] = 0;
        self.out_bounds.clear();
        let mut stayers_before = 0;
        for (&stayers, &movers_before) in stayer_counts.iter().zip(&self.mover_bounds) {
            self.out_bounds.push(stayers_before + movers_before);
            stayers_before += stayers;
        }
        self.out_bounds.push(n);
        debug_assert_eq!(*self.out_bounds.last().unwrap(), n);
        scratch.resize(n, T::default());
        let mut out_parts = split_at_bounds(scratch, &self.out_bounds);
        let mb = &self.mover_bounds;
        let stayers = &items[..];
        out_parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(t, out)| {
                let mut s = &stayers[t * chunk_len..t * chunk_len + stayer_counts[t]];
                let mut out: &mut [T] = out;
                for &m in &movers[mb[t]..mb[t + 1]] {
                    let k = gallop(s, m);
                    let (copy, rest) = std::mem::take(&mut out).split_at_mut(k);
                    copy.copy_from_slice(&s[..k]);
                    rest[0] = m;
                    out = &mut rest[1..];
                    s = &s[k..];
                }
                out.copy_from_slice(s);
            });
        std::mem::swap(items, scratch);
    }

    /// Bytes of heap held.
    pub fn heap_bytes(&self) -> usize {
        (self.movers.capacity() + self.movers_scratch.capacity()) * size_of::<T>()
            + (self.mover_bounds.capacity() + self.out_bounds.capacity()) * size_of::<usize>()
    }
}

/// `sorted.partition_point(|&x| x < value)`, searching from the front in growing
/// steps: the answer is usually a few dozen places ahead, and a plain binary search
/// over the whole rest would miss the cache at every step.
fn gallop<T: Ord + Copy>(sorted: &[T], value: T) -> usize {
    let mut hi = 1;
    while hi < sorted.len() && sorted[hi - 1] < value {
        hi *= 2;
    }
    let lo = hi / 2;
    let hi = hi.min(sorted.len());
    lo + sorted[lo..hi].partition_point(|&x| x < value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_chunks_fit_the_merge_and_are_not_too_short() {
        for threads in [1, 2, 3, 8, 9, 17] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for n in [1, 100, 4096, 4097, 40_000, 97_336, 1_000_000, 50_000_000] {
                    let len = key_chunk_len(n);
                    let chunks = n.div_ceil(len);
                    assert!(chunks <= MAX_PARTS, "{threads} threads, {n} points");
                    assert!(chunks <= threads * KEY_CHUNKS_PER_THREAD, "{threads}, {n}");
                    assert!(len >= MIN_KEY_CHUNK.min(n), "{threads}, {n}: {len}");
                }
                // Enough points: every thread gets its chunks.
                let n = 64 * MIN_KEY_CHUNK * threads;
                let chunks = n.div_ceil(key_chunk_len(n));
                assert_eq!(chunks, (threads * KEY_CHUNKS_PER_THREAD).min(MAX_PARTS));
            });
        }
    }

    #[test]
    fn gallop_finds_the_partition_point() {
        let v: Vec<u32> = (0..1000).map(|i| i * 2).collect();
        for x in [0, 1, 2, 3, 64, 65, 1000, 1997, 1998, 1999, 5000] {
            assert_eq!(gallop(&v, x), v.partition_point(|&y| y < x), "{x}");
        }
        assert_eq!(gallop(&[] as &[u32], 3), 0);
    }

    #[test]
    fn merging_movers_gives_the_sorted_order() {
        // Sorted keys, then a few points change key (in place, as after a step).
        let n = 50_000u32;
        let old_keys: Vec<u64> = (0..n).map(|i| u64::from(i / 8)).collect();
        let mut keys = old_keys.clone();
        for (j, k) in keys
            .iter_mut()
            .enumerate()
            .filter(|(j, _)| j % 37 == 0 || j % 101 == 3)
        {
            *k = (*k * 7 + j as u64) % 6000;
        }
        keys[0] = 5999;
        keys[n as usize - 1] = 0;
        // A whole chunk of movers, too.
        for k in &mut keys[21_000..28_000] {
            *k = 17;
        }
        let all: Vec<u64> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| u64::pack(k, i as u32))
            .collect();
        let mut expected = all.clone();
        expected.sort_unstable();
        let chunk_len = 7000;
        let mut items = all.clone();
        let mut stayer_counts = Vec::new();
        let mut mover_chunks = Vec::new();
        for (t, chunk) in all.chunks(chunk_len).enumerate() {
            let (mut stay, mut moved) = (Vec::new(), Vec::new());
            for (k, &item) in chunk.iter().enumerate() {
                if item.key() == old_keys[t * chunk_len + k] {
                    stay.push(item)
                } else {
                    moved.push(item)
                }
            }
            items[t * chunk_len..t * chunk_len + stay.len()].copy_from_slice(&stay);
            stayer_counts.push(stay.len());
            mover_chunks.push(moved);
        }
        assert_eq!(stayer_counts[3], 0);
        let mut scratch = Vec::new();
        Resorter::default().resort(
            &mut items,
            &mut scratch,
            chunk_len,
            &stayer_counts,
            &mover_chunks,
            &mut RadixSorter::default(),
            13,
        );
        assert_eq!(items, expected);
    }
}
