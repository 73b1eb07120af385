//! Parallel loops over particle ranges that write several per-particle arrays at once.
//!
//! Each call hands out disjoint chunks of the output slices, split recursively with
//! `rayon::join`: no allocation, no locks, no atomics. Every particle's value is
//! computed by the same code whatever the split, so results are bit-identical for any
//! thread count. Without the `rayon` feature the loop runs on the calling thread.

/// Chunks smaller than this are not split further.
pub const MIN_CHUNK: usize = 256;

/// A group of per-particle output slices of equal length that can be cut in two:
/// arrays of slices, and pairs of groups.
pub trait Outputs: Send + Sized {
    /// The slices' common length.
    fn len(&self) -> usize;
    /// Whether the slices are empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Only the parallel split cuts outputs.
    #[cfg_attr(not(feature = "rayon"), allow(dead_code))]
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send, const K: usize> Outputs for [&mut [T]; K] {
    fn len(&self) -> usize {
        let len = self.first().map_or(0, |s| s.len());
        debug_assert!(self.iter().all(|s| s.len() == len));
        len
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let mut halves = self.map(|s| {
            let (a, b) = s.split_at_mut(mid);
            (Some(a), Some(b))
        });
        let left = core::array::from_fn(|k| halves[k].0.take().expect("split once"));
        let right = core::array::from_fn(|k| halves[k].1.take().expect("split once"));
        (left, right)
    }
}

impl<A: Outputs, B: Outputs> Outputs for (A, B) {
    fn len(&self) -> usize {
        let len = self.0.len();
        debug_assert_eq!(len, self.1.len());
        len
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split_at(mid);
        let (b0, b1) = self.1.split_at(mid);
        ((a0, b0), (a1, b1))
    }
}

/// Calls `f(start, chunk)` on disjoint chunks covering `0..len` of every slice in
/// `outputs`; the chunk's slices are `outputs[..][start..start + chunk_len]`.
pub fn for_each_chunk<O: Outputs, F>(outputs: O, f: &F)
where
    F: Fn(usize, O) + Sync,
{
    for_each_chunk_of(outputs, MIN_CHUNK, 64, f);
}

/// [`for_each_chunk`] with chunks of at most `min_len` elements (at least 1) whose
/// starts are multiples of `align`, for outputs whose elements are themselves blocks
/// of particles.
pub fn for_each_chunk_of<O: Outputs, F>(outputs: O, min_len: usize, align: usize, f: &F)
where
    F: Fn(usize, O) + Sync,
{
    let len = outputs.len();
    split(0, len, min_len.max(1), align.max(1), outputs, f);
}

#[cfg(feature = "rayon")]
fn split<O: Outputs, F>(start: usize, len: usize, min_len: usize, align: usize, outputs: O, f: &F)
where
    F: Fn(usize, O) + Sync,
{
    let mid = (len / 2).next_multiple_of(align).min(len);
    if len <= min_len || mid == 0 || mid == len {
        f(start, outputs);
        return;
    }
    let (left, right) = outputs.split_at(mid);
    rayon::join(
        || split(start, mid, min_len, align, left, f),
        || split(start + mid, len - mid, min_len, align, right, f),
    );
}

#[cfg(not(feature = "rayon"))]
fn split<O: Outputs, F>(
    start: usize,
    _len: usize,
    _min_len: usize,
    _align: usize,
    outputs: O,
    f: &F,
) where
    F: Fn(usize, O) + Sync,
{
    f(start, outputs);
}

/// Runs `a` and `b`, on two threads when rayon has them (`rayon::join`).
pub fn join(a: impl FnOnce() + Send, b: impl FnOnce() + Send) {
    #[cfg(feature = "rayon")]
    rayon::join(a, b);
    #[cfg(not(feature = "rayon"))]
    {
        a();
        b();
    }
}

/// Sums `f(i)` over `0..len` in `f64` with a fixed association (chunks of
/// [`MIN_CHUNK`] summed in order, then the chunk sums in order), so the result does not
/// depend on the thread count. `partials` is reused scratch.
pub fn deterministic_sum(
    len: usize,
    partials: &mut Vec<f64>,
    f: &(impl Fn(usize) -> f64 + Sync),
) -> f64 {
    per_chunk(len, partials, &|range| range.map(f).sum());
    partials.iter().sum()
}

/// Chunk `c` of the chunks of [`MIN_CHUNK`] indices of `0..len`.
pub fn chunk(c: usize, len: usize) -> core::ops::Range<usize> {
    c * MIN_CHUNK..((c + 1) * MIN_CHUNK).min(len)
}

/// Calls `f(c, block)` on the consecutive blocks of `block_len` elements of `out` (the
/// last may be shorter), in parallel with the `rayon` feature. Each block is written by
/// one call only, so the result does not depend on the thread count.
pub fn for_each_block<T: Send>(
    out: &mut [T],
    block_len: usize,
    f: &(impl Fn(usize, &mut [T]) + Sync),
) {
    let block_len = block_len.max(1);
    // No scratch: units (a `Vec` of them holds no memory).
    let mut units = vec![(); out.len().div_ceil(block_len)];
    for_each_chunk_with(out, block_len, &mut units, &|c, block, ()| f(c, block));
}

/// Calls `f(c, chunk, &mut with[c])` on the consecutive chunks of `per` elements of
/// `out` (the last may be shorter; `with` has one element for each), in parallel with
/// the `rayon` feature: per-chunk scratch that does not depend on the thread count.
///
/// # Panics
/// When `with` has not one element per chunk (a bug in the caller).
pub fn for_each_chunk_with<T: Send, S: Send>(
    out: &mut [T],
    per: usize,
    with: &mut [S],
    f: &(impl Fn(usize, &mut [T], &mut S) + Sync),
) {
    let per = per.max(1);
    assert_eq!(out.len().div_ceil(per), with.len(), "one scratch a chunk");
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(per)
            .zip(with.par_iter_mut())
            .enumerate()
            .for_each(|(c, (chunk, s))| f(c, chunk, s));
    }
    #[cfg(not(feature = "rayon"))]
    out.chunks_mut(per)
        .zip(with.iter_mut())
        .enumerate()
        .for_each(|(c, (chunk, s))| f(c, chunk, s));
}

/// `out[c] = f(range)` for every chunk `c` of [`MIN_CHUNK`] indices of `0..len` (the
/// chunks of [`deterministic_sum`]), in parallel: folding `out` in order gives the
/// same result on any number of threads.
pub fn per_chunk<T: Send + Default>(
    len: usize,
    out: &mut Vec<T>,
    f: &(impl Fn(core::ops::Range<usize>) -> T + Sync),
) {
    out.clear();
    out.resize_with(len.div_ceil(MIN_CHUNK), T::default);
    // Sixteen chunks a task at least, split as the passes are.
    for_each_chunk_of([out.as_mut_slice()], 16, 1, &|first, [part]| {
        for (k, o) in part.iter_mut().enumerate() {
            let c = first + k;
            *o = f(chunk(c, len));
        }
    });
}

/// Every array's stretch `range`: a chunk's own part of per-particle inputs. A loop
/// over a chunk that indexes these by its offset in the chunk keeps their pointers in
/// registers; a loop that indexes the whole arrays by particle from inside the chunk
/// closures loads every slice's pointer and length again for each value, with a
/// bounds check each.
///
/// # Panics
/// When `range` is not inside every array.
pub fn stretches<const K: usize>(
    arrays: [&[f32]; K],
    range: core::ops::Range<usize>,
) -> [&[f32]; K] {
    arrays.map(|a| &a[range.clone()])
}

/// The larger of `a` and `b`, NaN if either is NaN.
pub fn pick_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_index_once() {
        let n = 10_000;
        let mut a = vec![0u32; n];
        let mut b = vec![0u32; n];
        for_each_chunk([&mut a[..], &mut b[..]], &|start, [a, b]| {
            for k in 0..a.len() {
                a[k] += (start + k) as u32;
                b[k] += 1;
            }
        });
        assert!(a.iter().enumerate().all(|(i, v)| *v == i as u32));
        assert!(b.iter().all(|v| *v == 1));
    }

    #[test]
    fn blocks_are_numbered_in_order() {
        let mut a = vec![0usize; 1000];
        for_each_block(&mut a, 300, &|c, block| {
            for (k, v) in block.iter_mut().enumerate() {
                *v = c * 300 + k;
            }
        });
        assert!(a.iter().enumerate().all(|(i, v)| *v == i));
        for_each_block(&mut a[..0], 7, &|_, block| assert!(block.is_empty()));
    }

    #[test]
    fn chunks_with_scratch_get_their_own_scratch_in_order() {
        for (len, per) in [
            (0, 3),
            (1, 1),
            (1000, 1),
            (1000, 7),
            (1000, 1000),
            (999, 16),
        ] {
            let mut a = vec![usize::MAX; len];
            // Each chunk's scratch counts the calls that got it and records the chunk.
            let mut with = vec![(0u32, usize::MAX); len.div_ceil(per)];
            for_each_chunk_with(&mut a, per, &mut with, &|c, chunk, s| {
                s.0 += 1;
                s.1 = c;
                assert!(!chunk.is_empty() && chunk.len() <= per);
                for (k, v) in chunk.iter_mut().enumerate() {
                    *v = c * per + k;
                }
            });
            assert!(a.iter().enumerate().all(|(i, v)| *v == i), "{len} {per}");
            assert!(with.iter().enumerate().all(|(c, s)| *s == (1, c)));
        }
    }

    #[test]
    #[should_panic(expected = "one scratch a chunk")]
    fn chunks_with_too_little_scratch_panic() {
        let mut a = [0u8; 10];
        for_each_chunk_with(&mut a, 3, &mut [(); 3], &|_, _, _| {});
    }

    #[test]
    fn empty_outputs_are_fine() {
        let mut a: Vec<f32> = Vec::new();
        for_each_chunk([&mut a[..]], &|_, [a]| assert!(a.is_empty()));
    }

    #[test]
    fn per_chunk_covers_every_index_once_in_chunk_order() {
        for len in [0, 1, 255, 256, 257, 10_000] {
            let mut out: Vec<(usize, usize)> = Vec::new();
            per_chunk(len, &mut out, &|r| (r.start, r.end));
            assert_eq!(out.len(), len.div_ceil(MIN_CHUNK));
            let mut next = 0;
            for &(start, end) in &out {
                assert_eq!(start, next);
                assert!(end > start && end - start <= MIN_CHUNK);
                next = end;
            }
            assert_eq!(next, len);
        }
    }

    #[test]
    fn the_sum_is_exact_on_integers() {
        let mut scratch = Vec::new();
        assert_eq!(
            deterministic_sum(1000, &mut scratch, &|i| i as f64),
            499_500.0
        );
    }
}
