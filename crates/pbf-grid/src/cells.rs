//! Occupied cells from the sorted `(key, index)` items: the permutation, each cell's
//! key and contiguous range of sorted points, and each sorted point's cell.

use std::ops::Range;

use rayon::prelude::*;

use crate::parts::{MAX_PARTS, split_at_bounds};
use crate::sort::SortItem;

/// Smallest number of points per task in the cell passes.
const MIN_CHUNK: usize = 1 << 13;

/// A half-open range `start .. end` of **sorted** point indices: the points of one
/// cell, or a run of neighbouring cells that are contiguous in Morton order.
///
/// It is `Pod`, so a slice of ranges can be viewed as `&[u32]` with `bytemuck`
/// (for instance to upload to a GPU).
///
/// ```
/// use pbf_grid::CellRange;
///
/// let r = CellRange { start: 4, end: 7 };
/// assert_eq!(r.len(), 3);
/// assert!(!r.is_empty());
/// assert_eq!(r.as_range(), 4..7);
/// let flat: &[u32] = bytemuck::cast_slice(std::slice::from_ref(&r));
/// assert_eq!(flat, &[4, 7]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct CellRange {
    /// First sorted index in the range.
    pub start: u32,
    /// One past the last sorted index in the range.
    pub end: u32,
}

impl CellRange {
    /// The number of points in the range.
    #[inline]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the range holds no point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// The range as a `Range<usize>`, for slicing the sorted arrays.
    #[inline]
    pub fn as_range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// What the first pass learns about one chunk of sorted items.
#[derive(Clone, Copy, Debug, Default)]
struct ChunkInfo {
    /// Cells that start inside the chunk.
    starts: usize,
    /// Position of the first cell start at or after the chunk's beginning, or `n`.
    next_start: usize,
}

/// Reusable buffers of the cell extraction.
#[derive(Clone, Debug, Default)]
pub(crate) struct CellExtractor {
    info: Vec<ChunkInfo>,
    /// Index of the first cell starting in each chunk, plus the total at the end.
    cell_bounds: Vec<usize>,
}

/// The outputs of the cell extraction (all resized by it).
pub(crate) struct CellOutputs<'a> {
    pub permutation: &'a mut Vec<u32>,
    pub cell_of: &'a mut Vec<u32>,
    pub cell_keys: &'a mut Vec<u64>,
    pub cells: &'a mut Vec<CellRange>,
}

impl CellExtractor {
    /// Bytes of heap held.
    pub fn heap_bytes(&self) -> usize {
        self.info.capacity() * size_of::<ChunkInfo>()
            + self.cell_bounds.capacity() * size_of::<usize>()
    }

    /// Fills the outputs from items sorted by key; returns whether the permutation is
    /// the identity.
    pub fn extract<T: SortItem>(&mut self, items: &[T], out: CellOutputs<'_>) -> bool {
        let n = items.len();
        let tasks = rayon::current_num_threads().clamp(1, MAX_PARTS / 4) * 4;
        let chunk_len = n.div_ceil(tasks).max(MIN_CHUNK).max(n.div_ceil(MAX_PARTS));
        let chunks = n.div_ceil(chunk_len);

        // Pass 1: how many cells start in each chunk, and where the first does.
        (0..chunks)
            .into_par_iter()
            .map(|t| {
                let (a, b) = (t * chunk_len, ((t + 1) * chunk_len).min(n));
                let mut info = ChunkInfo {
                    starts: 0,
                    next_start: n,
                };
                let mut previous = if a == 0 {
                    None
                } else {
                    Some(items[a - 1].key())
                };
                for (k, item) in items[a..b].iter().enumerate() {
                    if previous != Some(item.key()) {
                        info.next_start = a + k;
                        break;
                    }
                    previous = Some(item.key());
                }
                if info.next_start < n {
                    let k0 = info.next_start;
                    info.starts = 1 + items[k0..b]
                        .windows(2)
                        .map(|w| usize::from(w[0].key() != w[1].key()))
                        .sum::<usize>();
                }
                info
            })
            .collect_into_vec(&mut self.info);
        // A chunk without a cell start inherits the next chunk's first start.
        for t in (0..chunks.saturating_sub(1)).rev() {
            if self.info[t].starts == 0 {
                self.info[t].next_start = self.info[t + 1].next_start;
            }
        }
        self.cell_bounds.clear();
        let mut total = 0;
        for info in &self.info {
            self.cell_bounds.push(total);
            total += info.starts;
        }
        self.cell_bounds.push(total);

        // At most one cell per point: reserve for that, once per point count.
        crate::parts::reserve_total(out.cell_keys, n);
        crate::parts::reserve_total(out.cells, n);
        out.permutation.resize(n, 0);
        out.cell_of.resize(n, 0);
        out.cell_keys.resize(total, 0);
        out.cells.resize(total, CellRange::default());
        if n == 0 {
            return true;
        }
        let mut key_parts = split_at_bounds(out.cell_keys, &self.cell_bounds);
        let mut cell_parts = split_at_bounds(out.cells, &self.cell_bounds);
        let info = &self.info;
        let cell_bounds = &self.cell_bounds;
        out.permutation
            .par_chunks_mut(chunk_len)
            .zip(out.cell_of.par_chunks_mut(chunk_len))
            .zip(key_parts[..chunks].par_iter_mut())
            .zip(cell_parts[..chunks].par_iter_mut())
            .enumerate()
            .map(|(t, (((perm, cell_of), keys), cells))| {
                let base = t * chunk_len;
                let own = info[t].next_start.max(base).min(base + perm.len()) - base;
                let mut identity = true;
                // Points before the chunk's first cell start belong to the last cell of
                // an earlier chunk.
                for off in 0..own {
                    let index = items[base + off].index();
                    perm[off] = index;
                    identity &= index as usize == base + off;
                    cell_of[off] = (cell_bounds[t] - 1) as u32;
                }
                if own == perm.len() {
                    return identity;
                }
                // From the first start on, without branches: `local` counts the cells
                // started so far; every point rewrites its cell's key and end, so the
                // last write of a cell leaves its true end.
                let mut local = 0usize;
                let mut previous = !items[base + own].key();
                for off in own..perm.len() {
                    let k = base + off;
                    let item = items[k];
                    let key = item.key();
                    local += usize::from(key != previous);
                    previous = key;
                    let index = item.index();
                    perm[off] = index;
                    identity &= index as usize == k;
                    cell_of[off] = (cell_bounds[t] + local - 1) as u32;
                    keys[local - 1] = key;
                    cells[local - 1].end = k as u32 + 1;
                }
                // The last cell may run on into later chunks.
                let next = if t + 1 < chunks {
                    info[t + 1].next_start
                } else {
                    n
                };
                cells[local - 1].end = next as u32;
                // Starts: each cell starts where the one before it ends.
                let mut start = (base + own) as u32;
                for cell in cells.iter_mut() {
                    cell.start = start;
                    start = cell.end;
                }
                identity
            })
            .reduce(|| true, |a, b| a & b)
    }
}

/// The chunk boundaries the extraction would use, exposed for tests.
#[cfg(test)]
fn chunk_ranges(n: usize) -> Vec<Range<usize>> {
    let tasks = rayon::current_num_threads().clamp(1, MAX_PARTS / 4) * 4;
    let chunk_len = n.div_ceil(tasks).max(MIN_CHUNK).max(n.div_ceil(MAX_PARTS));
    (0..n.div_ceil(chunk_len))
        .map(|t| t * chunk_len..((t + 1) * chunk_len).min(n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(keys: &[u64]) -> (Vec<u32>, Vec<u32>, Vec<u64>, Vec<CellRange>, bool) {
        let items: Vec<u64> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| u64::pack(k, (i as u32) ^ 1))
            .collect();
        let (mut p, mut co, mut ck, mut cr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let identity = CellExtractor::default().extract(
            &items,
            CellOutputs {
                permutation: &mut p,
                cell_of: &mut co,
                cell_keys: &mut ck,
                cells: &mut cr,
            },
        );
        (p, co, ck, cr, identity)
    }

    #[test]
    fn cells_partition_the_sorted_points() {
        // Runs of keys of many lengths, including one longer than a chunk.
        let mut keys = Vec::new();
        for (k, len) in [
            (0u64, 3usize),
            (5, 1),
            (6, 40_000),
            (9, 2),
            (100, 17_000),
            (101, 1),
        ] {
            keys.extend(std::iter::repeat_n(k, len));
        }
        assert!(chunk_ranges(keys.len()).len() > 1);
        let (perm, cell_of, cell_keys, cells, identity) = run(&keys);
        assert!(!identity);
        assert_eq!(cell_keys, vec![0, 5, 6, 9, 100, 101]);
        let lens: Vec<usize> = cells.iter().map(CellRange::len).collect();
        assert_eq!(lens, vec![3, 1, 40_000, 2, 17_000, 1]);
        assert_eq!(cells[0].start, 0);
        assert!(cells.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(cells.last().unwrap().end as usize, keys.len());
        for (c, r) in cells.iter().enumerate() {
            assert!(cell_of[r.as_range()].iter().all(|&x| x as usize == c));
        }
        assert_eq!(perm[0], 1);
        assert_eq!(perm[1], 0);
    }

    #[test]
    fn empty_and_single() {
        let (perm, cell_of, keys, cells, identity) = run(&[]);
        assert!(
            perm.is_empty()
                && cell_of.is_empty()
                && keys.is_empty()
                && cells.is_empty()
                && identity
        );
        let (_, cell_of, keys, cells, _) = run(&[42]);
        assert_eq!(
            (cell_of, keys, cells),
            (vec![0], vec![42], vec![CellRange { start: 0, end: 1 }])
        );
    }
}
