//! A parallel, stable LSD radix sort of `(key, index)` items, in safe Rust.
//!
//! Items pack a Morton key above a 32-bit point index (`u64` when the key needs at
//! most 32 bits, `u128` otherwise). The sort looks only at the key bits the occupied
//! cells can use, in as few passes of at most [`MAX_DIGIT_BITS`] bits as cover them
//! (18 key bits, a 51^3-cell box, take two passes of 9 bits).
//!
//! Each pass splits the items into one chunk per thread, counts each chunk's digits,
//! and scatters every chunk into its own reserved piece of every bucket. The pieces
//! are handed out as disjoint `&mut` slices (split recursively alongside the chunks),
//! so no `unsafe` and no atomics are needed. A stable sort has exactly one result, so
//! the output does not depend on the number of threads or chunks.
//!
//! This is the sort of a first build, or of a step in which many points changed
//! cell; a step in which few did takes the re-sort of `resort.rs` instead.

use rayon::prelude::*;

/// Widest digit per pass. 2^10 buckets keep a chunk's counts (4 KiB) and its bucket
/// slices (16 KiB, on the stack) small.
pub(crate) const MAX_DIGIT_BITS: u32 = 10;
const MAX_BUCKETS: usize = 1 << MAX_DIGIT_BITS;

/// Below this many items per chunk a pass is not split further.
const MIN_CHUNK: usize = 1 << 14;
/// At most this many chunks per pass (bounds the recursion depth, hence the stack).
const MAX_CHUNKS: usize = 16;

/// A sortable `(key, index)` pair packed into one integer.
pub(crate) trait SortItem: Copy + Send + Sync + Default + Ord + 'static {
    /// Packs `key` (which must fit the item's key bits) above `index`.
    fn pack(key: u64, index: u32) -> Self;
    /// The key.
    fn key(self) -> u64;
    /// The point index.
    fn index(self) -> u32;
    /// Bits `shift .. shift + bits` of the key.
    #[inline(always)]
    fn digit(self, shift: u32, mask: u64) -> usize {
        ((self.key() >> shift) & mask) as usize
    }
}

impl SortItem for u64 {
    #[inline(always)]
    fn pack(key: u64, index: u32) -> Self {
        debug_assert!(key >> 32 == 0);
        (key << 32) | u64::from(index)
    }
    #[inline(always)]
    fn key(self) -> u64 {
        self >> 32
    }
    #[inline(always)]
    fn index(self) -> u32 {
        self as u32
    }
}

impl SortItem for u128 {
    #[inline(always)]
    fn pack(key: u64, index: u32) -> Self {
        (u128::from(key) << 32) | u128::from(index)
    }
    #[inline(always)]
    fn key(self) -> u64 {
        (self >> 32) as u64
    }
    #[inline(always)]
    fn index(self) -> u32 {
        self as u32
    }
}

/// How a sort of `key_bits` bits is cut into passes: `(passes, bits per pass)`.
pub(crate) fn digit_plan(key_bits: u32) -> (u32, u32) {
    if key_bits == 0 {
        return (0, 0);
    }
    let passes = key_bits.div_ceil(MAX_DIGIT_BITS);
    (passes, key_bits.div_ceil(passes))
}

/// The number of chunks a pass over `n` items uses on the current thread pool.
pub(crate) fn chunk_count(n: usize) -> usize {
    let by_size = n.div_ceil(MIN_CHUNK).max(1);
    by_size.min(rayon::current_num_threads().clamp(1, MAX_CHUNKS))
}

/// Reusable buffers of the sort.
#[derive(Clone, Debug, Default)]
pub(crate) struct RadixSorter {
    /// `counts[t * buckets + d]`: items of chunk `t` with digit `d`; turned into the
    /// start of piece `(t, d)` in the output before the scatter.
    counts: Vec<usize>,
}

impl RadixSorter {
    /// Sorts `items` by bits `0 .. key_bits` of their keys, stably, using `scratch`
    /// (resized as needed) as the second buffer; the result ends up in `items`.
    ///
    /// With `first_counts_ready`, the counts buffer (from
    /// [`first_counts`](RadixSorter::first_counts)) already holds the digit counts of
    /// the first pass per chunk, computed by the caller while it wrote the items;
    /// otherwise they are counted here.
    pub fn sort<T: SortItem>(
        &mut self,
        items: &mut Vec<T>,
        scratch: &mut Vec<T>,
        key_bits: u32,
        first_counts_ready: bool,
    ) {
        let n = items.len();
        let (passes, bits) = digit_plan(key_bits);
        if n <= 1 || passes == 0 {
            return;
        }
        let buckets = 1usize << bits;
        let mask = (buckets - 1) as u64;
        let chunks = chunk_count(n);
        let chunk_len = n.div_ceil(chunks);
        let chunks = n.div_ceil(chunk_len);
        scratch.resize(n, T::default());
        for pass in 0..passes {
            let shift = pass * bits;
            if pass > 0 || !first_counts_ready {
                self.count(items, chunk_len, buckets, shift, mask);
            }
            // A digit shared by every item leaves the order as it is.
            let single = (0..buckets).any(|d| {
                (0..chunks)
                    .map(|t| self.counts[t * buckets + d])
                    .sum::<usize>()
                    == n
            });
            if single {
                continue;
            }
            self.counts_to_offsets(chunks, buckets);
            scatter(
                items,
                scratch,
                chunk_len,
                chunks,
                buckets,
                shift,
                mask,
                &self.counts,
            );
            std::mem::swap(items, scratch);
        }
    }

    /// The counts buffer for the first pass, sized for `n` items and `key_bits`, for a
    /// caller that fills it while it produces the items. Returns `(chunk_len, buckets)`
    /// and the zeroed counts, `chunks * buckets` entries.
    pub fn first_counts(&mut self, n: usize, key_bits: u32) -> (usize, usize, &mut [usize]) {
        let (_, bits) = digit_plan(key_bits);
        let buckets = 1usize << bits;
        let chunk_len = n.div_ceil(chunk_count(n)).max(1);
        let chunks = n.div_ceil(chunk_len);
        self.reserve_counts();
        self.counts.clear();
        self.counts.resize(chunks * buckets, 0);
        (chunk_len, buckets, &mut self.counts)
    }

    /// Bytes of heap held.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * size_of::<usize>()
    }

    /// Reserves the counts for the most chunks and the widest digit at once, so that
    /// sorts of other sizes (the movers of a re-sort vary from step to step) never
    /// allocate: at most `threads << MAX_DIGIT_BITS` entries.
    fn reserve_counts(&mut self) {
        let most = rayon::current_num_threads().clamp(1, MAX_CHUNKS) << MAX_DIGIT_BITS;
        crate::parts::reserve_total(&mut self.counts, most);
    }

    fn count<T: SortItem>(
        &mut self,
        items: &[T],
        chunk_len: usize,
        buckets: usize,
        shift: u32,
        mask: u64,
    ) {
        let chunks = items.len().div_ceil(chunk_len);
        self.reserve_counts();
        self.counts.clear();
        self.counts.resize(chunks * buckets, 0);
        self.counts
            .par_chunks_mut(buckets)
            .zip(items.par_chunks(chunk_len))
            .for_each(|(counts, items)| {
                for &item in items {
                    counts[item.digit(shift, mask)] += 1;
                }
            });
    }

    /// Turns per-chunk digit counts into the start of each `(chunk, digit)` piece in
    /// the output: bucket by bucket, and chunk by chunk inside a bucket.
    fn counts_to_offsets(&mut self, chunks: usize, buckets: usize) {
        let mut sum = 0;
        for d in 0..buckets {
            for t in 0..chunks {
                let c = &mut self.counts[t * buckets + d];
                let here = *c;
                *c = sum;
                sum += here;
            }
        }
    }
}

/// Moves every item of `src` to its place in `dst`, given the piece offsets.
#[allow(clippy::too_many_arguments)]
fn scatter<T: SortItem>(
    src: &[T],
    dst: &mut [T],
    chunk_len: usize,
    chunks: usize,
    buckets: usize,
    shift: u32,
    mask: u64,
    offsets: &[usize],
) {
    let n = src.len();
    let mut slots: [&mut [T]; MAX_BUCKETS] = std::array::from_fn(|_| Default::default());
    let mut rest = dst;
    for d in 0..buckets {
        let end = if d + 1 < buckets { offsets[d + 1] } else { n };
        let (bucket, tail) = rest.split_at_mut(end - offsets[d]);
        slots[d] = bucket;
        rest = tail;
    }
    let job = ScatterJob {
        src,
        chunk_len,
        chunks,
        buckets,
        shift,
        mask,
        offsets,
    };
    job.run(0, chunks, slots);
}

/// The shared, read-only part of one scatter pass.
struct ScatterJob<'a, T> {
    src: &'a [T],
    chunk_len: usize,
    chunks: usize,
    buckets: usize,
    shift: u32,
    mask: u64,
    offsets: &'a [usize],
}

impl<T: SortItem> ScatterJob<'_, T> {
    /// Scatters chunks `lo .. hi`; `slots[d]` is the part of bucket `d` that these
    /// chunks fill, in chunk order.
    fn run(&self, lo: usize, hi: usize, mut slots: [&mut [T]; MAX_BUCKETS]) {
        if hi - lo == 1 {
            let start = lo * self.chunk_len;
            let end = (start + self.chunk_len).min(self.src.len());
            for &item in &self.src[start..end] {
                let slot = &mut slots[item.digit(self.shift, self.mask)];
                let (first, tail) = std::mem::take(slot)
                    .split_first_mut()
                    .expect("piece sized by the counts");
                *first = item;
                *slot = tail;
            }
            return;
        }
        let mid = (lo + hi) / 2;
        let mut left: [&mut [T]; MAX_BUCKETS] = std::array::from_fn(|_| Default::default());
        for d in 0..self.buckets {
            let split = self.offsets[mid * self.buckets + d] - self.offsets[lo * self.buckets + d];
            let (l, r) = std::mem::take(&mut slots[d]).split_at_mut(split);
            left[d] = l;
            slots[d] = r;
        }
        debug_assert!(hi <= self.chunks);
        rayon::join(|| self.run(lo, mid, left), || self.run(mid, hi, slots));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u64) -> impl Iterator<Item = u64> {
        let mut s = seed;
        (0..n).map(move |_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
    }

    fn check<T: SortItem + std::fmt::Debug>(n: usize, key_bits: u32, seed: u64) {
        let keys: Vec<u64> = pseudo_random(n, seed)
            .map(|r| r & ((1u64 << key_bits) - 1))
            .collect();
        let mut items: Vec<T> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| T::pack(k, i as u32))
            .collect();
        let mut expected = items.clone();
        // Stable by key = ascending by (key, index) = ascending packed value.
        expected.sort_unstable();
        let mut scratch = Vec::new();
        RadixSorter::default().sort(&mut items, &mut scratch, key_bits, false);
        assert_eq!(items, expected, "n = {n}, bits = {key_bits}");
    }

    #[test]
    fn sorts_stably_for_many_sizes_and_widths() {
        for &n in &[0, 1, 2, 3, 100, 5000, 70_000] {
            for &bits in &[1, 5, 10, 11, 18, 21, 32] {
                check::<u64>(n, bits, n as u64 * 31 + u64::from(bits));
            }
            check::<u128>(n, 63, n as u64);
            check::<u128>(n, 40, n as u64 + 1);
        }
    }

    #[test]
    fn same_result_for_any_thread_count() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| check::<u64>(100_000, 20, 7));
        }
    }

    #[test]
    fn digit_plans() {
        assert_eq!(digit_plan(0), (0, 0));
        assert_eq!(digit_plan(7), (1, 7));
        assert_eq!(digit_plan(18), (2, 9));
        assert_eq!(digit_plan(21), (3, 7));
        assert_eq!(digit_plan(63), (7, 9));
    }

    #[test]
    fn presorted_and_constant_keys() {
        let mut items: Vec<u64> = (0..50_000u32)
            .map(|i| u64::pack(u64::from(i / 7), i))
            .collect();
        let expected = items.clone();
        let mut scratch = Vec::new();
        RadixSorter::default().sort(&mut items, &mut scratch, 13, false);
        assert_eq!(items, expected);
        let mut same: Vec<u64> = (0..50_000u32).rev().map(|i| u64::pack(5, i)).collect();
        let expected = same.clone();
        RadixSorter::default().sort(&mut same, &mut scratch, 3, false);
        assert_eq!(same, expected);
    }
}
