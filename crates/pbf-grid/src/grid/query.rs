//! The neighbour queries on a built grid: around a sorted point, around any point,
//! the whole neighbour list, and a parallel walk over the occupied cells.

use super::Grid;
use crate::candidates::cells_around;
use crate::cells::CellRange;
use crate::{GridError, NeighbourList, distance2, within};

/// Points per leaf task in [`Grid::par_for_each_cell`].
const CELL_TASK_POINTS: usize = 1 << 11;

impl<const D: usize> Grid<D> {
    /// Calls `f(j)` for every sorted `j` with `within(|x_j - x_i|^2, h^2)`, `j = i`
    /// included, in ascending `j`. `sorted` are the positions after
    /// [`reorder`](Grid::reorder); they may have moved a little since the rebuild (then
    /// points that moved by more than the cells' slack can be missed, as in any cell list).
    ///
    /// # Panics
    ///
    /// If `i >= len()` or a `sorted` array is shorter than `len()`.
    ///
    /// ```
    /// let x = [0.0, 0.5, 2.0];
    /// let y = [0.0, 0.0, 0.0];
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?; // already sorted: identity permutation
    /// let mut found = Vec::new();
    /// grid.for_each_neighbour([&x, &y], 0, |j| found.push(j));
    /// assert_eq!(found, [0, 1]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn for_each_neighbour(&self, sorted: [&[f32]; D], i: usize, mut f: impl FnMut(usize)) {
        let h2 = self.h * self.h;
        let p: [f32; D] = std::array::from_fn(|a| sorted[a][i]);
        for r in self.candidate_ranges(self.cell_of[i] as usize) {
            for j in r.as_range() {
                let q: [f32; D] = std::array::from_fn(|a| sorted[a][j]);
                if within(distance2(p, q), h2) {
                    f(j);
                }
            }
        }
    }

    /// The sorted indices of all points within `h` of an arbitrary `point`
    /// (ascending) into `out` (cleared first, capacity kept).
    ///
    /// # Errors
    ///
    /// [`NonFiniteQuery`](GridError::NonFiniteQuery) for a NaN or infinite coordinate;
    /// [`LengthMismatch`](GridError::LengthMismatch) when a `sorted` array's length is
    /// not `len()`.
    ///
    /// ```
    /// let x = [0.0, 0.5, 2.0];
    /// let y = [0.0, 0.0, 0.0];
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?;
    /// let mut out = Vec::new();
    /// grid.query([&x, &y], [1.2, 0.0], &mut out)?;
    /// assert_eq!(out, [1, 2]);
    /// grid.query([&x, &y], [100.0, 0.0], &mut out)?;
    /// assert!(out.is_empty());
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn query(
        &self,
        sorted: [&[f32]; D],
        point: [f32; D],
        out: &mut Vec<u32>,
    ) -> Result<(), GridError> {
        if let Some(axis) = point.iter().position(|v| !v.is_finite()) {
            return Err(GridError::NonFiniteQuery {
                axis,
                value: point[axis],
            });
        }
        self.check_sorted(&sorted)?;
        out.clear();
        let h2 = self.h * self.h;
        let mut found = [CellRange::default(); 27];
        let count = self.ranges_around(point, &mut found)?;
        for range in &found[..count] {
            for j in range.as_range() {
                let q: [f32; D] = std::array::from_fn(|a| sorted[a][j]);
                if within(distance2(point, q), h2) {
                    out.push(j as u32);
                }
            }
        }
        Ok(())
    }

    /// The ranges of sorted points in the occupied cells around an arbitrary `point`
    /// (the cell it falls in and the `3^D - 1` next to it), ascending, into the first
    /// entries of `out`; returns how many. Every point within `h` of `point` lies in
    /// one of them (the cells are at least `h` wide), so a caller with its own
    /// distance test, or with positions other than the grid's (that moved less than
    /// the difference between `h` and the distance it looks for), can walk them
    /// instead of calling [`query`](Grid::query).
    ///
    /// # Errors
    ///
    /// [`NonFiniteQuery`](GridError::NonFiniteQuery) for a NaN or infinite coordinate.
    ///
    /// ```
    /// use pbf_grid::{CellRange, Grid};
    ///
    /// let x = [0.0, 0.5, 2.0, 9.0];
    /// let y = [0.0, 0.0, 0.0, 0.0];
    /// let mut grid = Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?;
    /// let mut out = [CellRange::default(); 27];
    /// let count = grid.ranges_around([1.2, 0.0], &mut out)?;
    /// let around: Vec<usize> = out[..count].iter().flat_map(|r| r.as_range()).collect();
    /// // The sorted indices of the points at 0.0, 0.5 and 2.0, not the one at 9.0.
    /// assert_eq!(around.len(), 3);
    /// assert_eq!(grid.ranges_around([100.0, 0.0], &mut out)?, 0);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn ranges_around(
        &self,
        point: [f32; D],
        out: &mut [CellRange; 27],
    ) -> Result<usize, GridError> {
        if let Some(axis) = point.iter().position(|v| !v.is_finite()) {
            return Err(GridError::NonFiniteQuery {
                axis,
                value: point[axis],
            });
        }
        if self.is_empty() {
            return Ok(0);
        }
        let coords: [i64; D] = std::array::from_fn(|a| self.frame.coord_signed(a, point[a]));
        Ok(cells_around::<D>(
            coords,
            self.frame.extent,
            &self.table,
            out,
        ))
    }

    /// Builds the CSR list of every sorted point's neighbours within `h` (self
    /// excluded, ascending) into `list`, reusing its buffers. Parallel, and the same
    /// for any number of threads.
    ///
    /// # Errors
    ///
    /// [`LengthMismatch`](GridError::LengthMismatch) when a `sorted` array's length is
    /// not `len()` (the list is then unchanged);
    /// [`TooManyNeighbours`](GridError::TooManyNeighbours) when the list would exceed
    /// `u32::MAX` entries (the list is then left empty).
    ///
    /// ```
    /// use pbf_grid::{Grid, NeighbourList};
    ///
    /// let x = [0.0, 0.5, 2.0];
    /// let y = [0.0, 0.0, 0.0];
    /// let mut grid = Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?;
    /// let mut list = NeighbourList::new();
    /// grid.neighbour_list([&x, &y], &mut list)?;
    /// assert_eq!(list.neighbours(0), &[1]);
    /// assert_eq!(list.neighbours(1), &[0]);
    /// assert!(list.neighbours(2).is_empty());
    /// assert_eq!(list.offsets(), &[0, 1, 2, 2]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn neighbour_list(
        &self,
        sorted: [&[f32]; D],
        list: &mut NeighbourList,
    ) -> Result<(), GridError> {
        self.check_sorted(&sorted)?;
        list.build(self, sorted)
    }

    /// Runs `f(cell, part)` for every occupied cell in parallel, where `part` is the
    /// slice of `out` (a per-point array in sorted order) that holds the cell's
    /// points, `cells()[cell].as_range()`. The building block of gather-only
    /// cell-blocked passes: each task writes only its own cells' outputs, so the
    /// result does not depend on the number of threads.
    ///
    /// # Errors
    ///
    /// [`DataLength`](GridError::DataLength) when `out.len() != len()`.
    ///
    /// ```
    /// let x = [0.0, 0.5, 2.0];
    /// let y = [0.0, 0.0, 0.0];
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&x, &y], 1.0)?;
    /// let mut count = vec![0u32; grid.len()];
    /// grid.par_for_each_cell(&mut count, |cell, part| {
    ///     let first = grid.cells()[cell].start as usize;
    ///     for (k, c) in part.iter_mut().enumerate() {
    ///         grid.for_each_neighbour([&x, &y], first + k, |_| *c += 1);
    ///     }
    /// })?;
    /// assert_eq!(count, [2, 2, 1]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn par_for_each_cell<T: Send>(
        &self,
        out: &mut [T],
        f: impl Fn(usize, &mut [T]) + Sync,
    ) -> Result<(), GridError> {
        self.check_data(out.len())?;
        for_cells(&self.cells, 0, out, &f);
        Ok(())
    }
}

/// Splits `cells` (starting at cell index `first`) and `out` (their points) in halves
/// until the pieces are small, then runs `f` on each cell.
fn for_cells<T: Send>(
    cells: &[CellRange],
    first: usize,
    out: &mut [T],
    f: &(impl Fn(usize, &mut [T]) + Sync),
) {
    if cells.len() <= 1 || out.len() <= CELL_TASK_POINTS {
        let base = cells.first().map_or(0, |c| c.start as usize);
        for (k, c) in cells.iter().enumerate() {
            f(
                first + k,
                &mut out[c.start as usize - base..c.end as usize - base],
            );
        }
        return;
    }
    let mid = cells.len() / 2;
    let (left_cells, right_cells) = cells.split_at(mid);
    let (left, right) = out.split_at_mut((right_cells[0].start - cells[0].start) as usize);
    rayon::join(
        || for_cells(left_cells, first, left, f),
        || for_cells(right_cells, first + mid, right, f),
    );
}
