//! Neighbour lists in compressed sparse row (CSR) form: an export of the column-stored
//! [`NeighbourLists`], for code that wants one flat row per point.
//!
//! The lists are built once, by the sifters of [`crate::lists`], and copied out: the
//! offsets by a running sum of the list lengths, the rows in parallel over fixed
//! chunks of [`LIST_CHUNK`] points, so the result does not depend on the thread count.
//! The CSR form stays beside the column form because other tools (and the brute-force
//! comparisons of the tests) read rows, which the columns' interleaved groups are not.

use crate::lists::NeighbourLists;
use crate::{Grid, GridError};

/// Points per chunk of the copy.
const LIST_CHUNK: usize = 4096;

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
    /// The column-stored lists the rows are copied from, kept for their buffers.
    lists: NeighbourLists,
    /// The room a particle's list gets in the column blocks: half again the longest
    /// mean list length built so far, so that the blocks stop growing once the lists
    /// have seen their working sizes.
    room: usize,
    /// The candidate limit of the column lists: half again the most candidates a
    /// point has had, so that the sifters reserve their scratch once, never
    /// reached.
    most: usize,
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
        let h = grid.radius();
        let most = (0..grid.cells().len())
            .map(|c| {
                grid.candidate_ranges(c)
                    .iter()
                    .map(|r| r.len())
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(0);
        // The rows are copied out, never walked by blocks: no prefetch marks.
        self.lists.set_prefetch_from(usize::MAX);
        if most > self.most {
            self.most = most + most / 2;
            self.lists.set_max_candidates(self.most);
        }
        if let Err(e) = self.lists.build(grid, sorted, h * h, self.room) {
            unreachable!("the candidate limit is above every point's candidates: {e}");
        }
        let total = self.lists.pairs();
        let mean = total.div_ceil(n.max(1) as u64) as usize;
        self.room = self.room.max(mean + mean / 2 + 8);
        if total > u64::from(u32::MAX) {
            self.clear();
            return Err(GridError::TooManyNeighbours { count: total });
        }
        self.offsets.resize(n + 1, 0);
        let mut end = 0u32;
        self.offsets[0] = 0;
        for i in 0..n {
            // Below u32::MAX: the total is (checked above).
            end += self.lists.count(i) as u32;
            self.offsets[i + 1] = end;
        }
        self.indices.resize(end as usize, 0);
        copy_rows(&self.lists, &self.offsets, 0..n, &mut self.indices);
        Ok(())
    }
}

/// Copies the lists of the points `range` into `out`, their rows from
/// `offsets[range.start]` on: halves in parallel down to [`LIST_CHUNK`] points.
fn copy_rows(
    lists: &NeighbourLists,
    offsets: &[u32],
    range: core::ops::Range<usize>,
    out: &mut [u32],
) {
    if range.len() <= LIST_CHUNK {
        let base = offsets[range.start] as usize;
        for i in range {
            let row = offsets[i] as usize - base..offsets[i + 1] as usize - base;
            lists.copy_list(i, &mut out[row]);
        }
        return;
    }
    let mid = range.start + range.len() / 2;
    let (left, right) = out.split_at_mut((offsets[mid] - offsets[range.start]) as usize);
    rayon::join(
        || copy_rows(lists, offsets, range.start..mid, left),
        || copy_rows(lists, offsets, mid..range.end, right),
    );
}
