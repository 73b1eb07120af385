//! Neighbour lists in compressed sparse row (CSR) form.
//!
//! Built in two steps, both parallel: every chunk of [`LIST_CHUNK`] points writes its
//! points' neighbours into its own reused buffer and its local offsets into the
//! shared offset array; then the chunks' totals are summed and the buffers copied
//! into place. The chunks are fixed, so the result does not depend on the thread
//! count.

use rayon::prelude::*;

use crate::{Grid, GridError, within};

/// Points per chunk.
const LIST_CHUNK: usize = 4096;

/// One chunk's neighbours before they are copied into place.
#[derive(Clone, Debug, Default)]
struct ChunkBuffer {
    /// Neighbour indices in `data[..len]`; the rest is spare room that is
    /// overwritten, never cleared.
    data: Vec<u32>,
    len: usize,
    /// Where the chunk's entries start in the final list.
    base: usize,
}

/// The neighbours of every point, as CSR: `indices()[offsets()[i] .. offsets()[i + 1]]`
/// are the sorted indices of the neighbours of sorted point `i`, ascending, the point
/// itself excluded. Filled by [`Grid::neighbour_list`], which reuses its buffers.
///
/// ```
/// use pbf_grid::{Grid, NeighbourList};
///
/// let x = [0.0, 0.5, 0.9];
/// let y = [0.0, 0.0, 0.0];
/// let mut grid = Grid::<2>::new();
/// grid.rebuild([&x, &y], 1.0)?;
/// let mut list = NeighbourList::new();
/// grid.neighbour_list([&x, &y], &mut list)?;
/// assert_eq!(list.len(), 3);
/// assert_eq!(list.total(), 6);
/// assert_eq!(list.neighbours(1), &[0, 2]);
/// assert_eq!(list.offsets(), &[0, 2, 4, 6]);
/// assert_eq!(list.indices(), &[1, 2, 0, 2, 0, 1]);
/// # Ok::<(), pbf_grid::GridError>(())
/// ```
#[derive(Clone, Default)]
pub struct NeighbourList {
    /// `len() + 1` entries once built; empty before (then `offsets()` is `[0]`).
    offsets: Vec<u32>,
    indices: Vec<u32>,
    chunks: Vec<ChunkBuffer>,
}

impl std::fmt::Debug for NeighbourList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeighbourList")
            .field("points", &self.len())
            .field("total", &self.total())
            .finish_non_exhaustive()
    }
}

impl NeighbourList {
    /// An empty list. Allocates nothing.
    ///
    /// ```
    /// let list = pbf_grid::NeighbourList::new();
    /// assert!(list.is_empty());
    /// assert_eq!(list.offsets(), &[0]);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of points the list describes.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the list describes no point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len() + 1` offsets into [`indices`](NeighbourList::indices), starting at 0.
    #[inline]
    pub fn offsets(&self) -> &[u32] {
        if self.offsets.is_empty() {
            &[0]
        } else {
            &self.offsets
        }
    }

    /// All neighbour indices, point after point.
    #[inline]
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The neighbours of sorted point `i`, ascending.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    #[inline]
    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The total number of entries (each pair counted once per direction).
    #[inline]
    pub fn total(&self) -> usize {
        self.indices.len()
    }

    fn clear(&mut self) {
        self.offsets.clear();
        self.indices.clear();
    }

    /// Fills the list from a grid and the sorted positions (lengths already checked).
    pub(crate) fn build<const D: usize>(
        &mut self,
        grid: &Grid<D>,
        sorted: [&[f32]; D],
    ) -> Result<(), GridError> {
        let n = grid.len();
        let h2 = grid.radius() * grid.radius();
        let chunks = n.div_ceil(LIST_CHUNK);
        if self.chunks.len() < chunks {
            self.chunks.resize_with(chunks, ChunkBuffer::default);
        }
        self.offsets.resize(n + 1, 0);
        self.offsets[0] = 0;
        let cell_of = grid.cell_of();
        self.offsets[1..]
            .par_chunks_mut(LIST_CHUNK)
            .zip(self.chunks[..chunks].par_iter_mut())
            .enumerate()
            .for_each(|(t, (offsets, buffer))| {
                buffer.len = 0;
                let first = t * LIST_CHUNK;
                for (k, end) in offsets.iter_mut().enumerate() {
                    let i = first + k;
                    let ranges = grid.candidate_ranges(cell_of[i] as usize);
                    let room: usize = ranges.iter().map(|r| r.len() + 8).sum();
                    if buffer.data.len() < buffer.len + room {
                        let grown = (buffer.len + room).max(2 * buffer.data.len());
                        buffer.data.resize(grown, 0);
                    }
                    let p: [f32; D] = std::array::from_fn(|a| sorted[a][i]);
                    let mut len = buffer.len;
                    let out = &mut buffer.data[..];
                    for r in ranges {
                        len = append_within(p, i, sorted, r.as_range(), h2, out, len);
                    }
                    buffer.len = len;
                    // Saturated here, checked below: a chunk beyond u32 fails the build.
                    *end = u32::try_from(len).unwrap_or(u32::MAX);
                }
            });
        let mut total = 0usize;
        for buffer in &mut self.chunks[..chunks] {
            buffer.base = total;
            total += buffer.len;
        }
        if total > u32::MAX as usize {
            self.clear();
            return Err(GridError::TooManyNeighbours {
                count: total as u64,
            });
        }
        self.indices.resize(total, 0);
        copy_chunks(
            &self.chunks[..chunks],
            &mut self.indices,
            &mut self.offsets[1..],
        );
        Ok(())
    }
}

/// Candidates whose flags are computed per step of [`append_within`].
const FLAG_BLOCK: usize = 256;

/// `COMPRESS[m]`: the positions of the set bits of `m`, ascending, then zeros.
static COMPRESS: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if (m >> bit) & 1 == 1 {
                t[m][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    t
};

/// `COUNT[m]`: the number of set bits of `m` (`count_ones` is a dozen instructions
/// without the `popcnt` extension, which the x86-64 baseline lacks).
static COUNT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut m = 0;
    while m < 256 {
        t[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    t
};

/// Gathers the low bit of each byte of `word` into one byte (byte `i` -> bit `i`).
#[inline(always)]
fn byte_mask(word: u64) -> usize {
    (word.wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize
}

/// `flags[k] = within(distance2(p, x_{start + k}), h2)` for `k < flags.len()`, in a
/// loop the compiler vectorises (the same operations in the same order as
/// [`distance2`](crate::distance2), so the same results).
#[inline(always)]
fn within_flags<const D: usize>(
    p: [f32; D],
    sorted: [&[f32]; D],
    start: usize,
    h2: f32,
    flags: &mut [u8],
) {
    let end = start + flags.len();
    if D == 3 {
        let (xs, ys, zs) = (
            &sorted[0][start..end],
            &sorted[1][start..end],
            &sorted[2][start..end],
        );
        for (((f, &x), &y), &z) in flags.iter_mut().zip(xs).zip(ys).zip(zs) {
            let (dx, dy, dz) = (p[0] - x, p[1] - y, p[2] - z);
            *f = u8::from(within(dx * dx + dy * dy + dz * dz, h2));
        }
    } else {
        let (xs, ys) = (&sorted[0][start..end], &sorted[1][start..end]);
        for ((f, &x), &y) in flags.iter_mut().zip(xs).zip(ys) {
            let (dx, dy) = (p[0] - x, p[1] - y);
            *f = u8::from(within(dx * dx + dy * dy, h2));
        }
    }
}

/// Appends to `out[len..]` the `j` in `range` (ascending, `j != i`) within `h2` of
/// `p`; returns the new length. `out` has room for `range.len() + 8` more entries.
///
/// The distance test runs vectorised over up to 256 candidates into byte flags;
/// then every 8 flags become a bit mask, and a table of the set bits' positions
/// writes the hits without branches (8 entries written, the hit count kept).
#[inline(always)]
fn append_within<const D: usize>(
    p: [f32; D],
    i: usize,
    sorted: [&[f32]; D],
    range: std::ops::Range<usize>,
    h2: f32,
    out: &mut [u32],
    mut len: usize,
) -> usize {
    let mut flags = [0u8; FLAG_BLOCK];
    let mut start = range.start;
    while start < range.end {
        let count = (range.end - start).min(FLAG_BLOCK);
        within_flags(p, sorted, start, h2, &mut flags[..count]);
        if i.wrapping_sub(start) < count {
            flags[i - start] = 0; // the point itself
        }
        let padded = count.div_ceil(8) * 8;
        flags[count..padded].fill(0);
        for (w, bytes) in flags[..padded].chunks_exact(8).enumerate() {
            let mask = byte_mask(u64::from_le_bytes(bytes.try_into().expect("8 flags")));
            let base = (start + 8 * w) as u32;
            let dst: &mut [u32; 8] = (&mut out[len..len + 8]).try_into().expect("room for 8");
            for (d, &bit) in dst.iter_mut().zip(&COMPRESS[mask]) {
                *d = base + u32::from(bit);
            }
            len += usize::from(COUNT[mask]);
        }
        start += count;
    }
    len
}

/// Copies every chunk's entries to its place in `indices` and turns its local
/// offsets into global ones, splitting the work in halves.
fn copy_chunks(chunks: &[ChunkBuffer], indices: &mut [u32], offsets: &mut [u32]) {
    if chunks.is_empty() {
        return;
    }
    if chunks.len() == 1 {
        let c = &chunks[0];
        indices.copy_from_slice(&c.data[..c.len]);
        let base = c.base as u32;
        for o in offsets {
            *o += base;
        }
        return;
    }
    let mid = chunks.len() / 2;
    let (left_chunks, right_chunks) = chunks.split_at(mid);
    let (left_idx, right_idx) = indices.split_at_mut(right_chunks[0].base - left_chunks[0].base);
    let (left_off, right_off) = offsets.split_at_mut(mid * LIST_CHUNK);
    rayon::join(
        || copy_chunks(left_chunks, left_idx, left_off),
        || copy_chunks(right_chunks, right_idx, right_off),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_masks_and_compress_table() {
        for (m, positions) in COMPRESS.iter().enumerate() {
            let bytes: [u8; 8] = std::array::from_fn(|i| ((m >> i) & 1) as u8);
            assert_eq!(byte_mask(u64::from_le_bytes(bytes)), m);
            let set: Vec<u8> = (0..8).filter(|&b| (m >> b) & 1 == 1).collect();
            assert_eq!(&positions[..set.len()], &set[..]);
            assert_eq!(usize::from(COUNT[m]), set.len());
        }
    }
}
