//! The grid: points binned into cells of side `h`, sorted into Morton order, with
//! the neighbour queries built on it (`query.rs`) and the reordering of the caller's
//! per-point arrays (`reorder.rs`).

mod query;
mod reorder;

use rayon::prelude::*;

use crate::GridError;
use crate::candidates::Candidates;
use crate::cell_table::CellTable;
use crate::cells::{CellExtractor, CellOutputs, CellRange};
use crate::frame::{self, CellFrame};
use crate::keys::{keys_and_digits, keys_and_movers};
use crate::parts::reserve_total;
use crate::resort::{MOVER_LIMIT, Resorter, key_chunk_len};
use crate::sort::{RadixSorter, SortItem};

/// The largest supported point count: indices and range ends must fit a `u32`.
const MAX_POINTS: usize = u32::MAX as usize - 1;

/// Morton-sorted cell lists for fixed-radius neighbour search among `D`-dimensional
/// points (`D` = 2 or 3).
///
/// [`rebuild`](Grid::rebuild) bins the points into cells of side `h` (a hair more,
/// see the crate docs), sorts them into Morton order of their cells and records for
/// every occupied cell its contiguous range of sorted points and the merged ranges of
/// its `3^D` neighbour cells. The caller then reorders its own per-point arrays with
/// [`reorder`](Grid::reorder) and searches in the sorted order.
///
/// All buffers are kept between rebuilds, so a rebuild at an unchanged point count
/// does not allocate.
///
/// ```
/// use pbf_grid::{Grid, within};
///
/// let mut x = vec![0.0, 5.5, 0.5, 5.9];
/// let mut y = vec![0.0, 5.5, 0.0, 5.5];
/// let mut grid = Grid::<2>::new();
/// grid.rebuild([&x, &y], 1.0)?;
/// let mut scratch = Vec::new();
/// grid.reorder(&mut x, &mut scratch)?;
/// grid.reorder(&mut y, &mut scratch)?;
///
/// // Two clusters of two points: two occupied cells.
/// assert_eq!(grid.cells().len(), 2);
/// let mut pairs = 0;
/// for i in 0..grid.len() {
///     grid.for_each_neighbour([&x, &y], i, |j| if j != i { pairs += 1 });
/// }
/// assert_eq!(pairs, 4); // each point of each cluster sees the other one
/// # Ok::<(), pbf_grid::GridError>(())
/// ```
#[derive(Clone)]
pub struct Grid<const D: usize> {
    h: f32,
    frame: CellFrame<D>,
    permutation: Vec<u32>,
    identity: bool,
    cell_of: Vec<u32>,
    cell_keys: Vec<u64>,
    cells: Vec<CellRange>,
    table: CellTable,
    candidates: Candidates,
    sorter: RadixSorter,
    extractor: CellExtractor,
    narrow: SortBuffers<u64>,
    wide: SortBuffers<u128>,
}

impl<const D: usize> Default for Grid<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const D: usize> std::fmt::Debug for Grid<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grid")
            .field("dimension", &D)
            .field("radius", &self.h)
            .field("points", &self.len())
            .field("cells", &self.cells.len())
            .field("dense_table", &self.table.is_dense())
            .finish_non_exhaustive()
    }
}

/// Checks that `h` and `h * h` are positive and finite.
fn check_radius(h: f32) -> Result<(), GridError> {
    let h2 = h * h;
    if h > 0.0 && h.is_finite() && h2 > 0.0 && h2.is_finite() {
        Ok(())
    } else {
        Err(GridError::InvalidRadius { value: h })
    }
}

impl<const D: usize> Grid<D> {
    /// An empty grid (no point, radius 0). Allocates nothing.
    ///
    /// ```
    /// let grid = pbf_grid::Grid::<3>::new();
    /// assert!(grid.is_empty());
    /// assert_eq!(grid.radius(), 0.0);
    /// ```
    pub fn new() -> Self {
        Self {
            h: 0.0,
            frame: CellFrame::default(),
            permutation: Vec::new(),
            identity: true,
            cell_of: Vec::new(),
            cell_keys: Vec::new(),
            cells: Vec::new(),
            table: CellTable::default(),
            candidates: Candidates::default(),
            sorter: RadixSorter::default(),
            extractor: CellExtractor::default(),
            narrow: SortBuffers::default(),
            wide: SortBuffers::default(),
        }
    }

    /// Bins the points (given in any order, one array per axis) into cells of side
    /// `h` and computes their Morton order. Does **not** reorder the caller's arrays:
    /// use [`reorder`](Grid::reorder) for that.
    ///
    /// Runs in parallel on the current rayon pool; the result is the same for any
    /// number of threads. Points with equal cells keep their input order, so the
    /// permutation is the identity when the input is already sorted.
    ///
    /// The origin of the cell coordinates is kept from the previous rebuild with the
    /// same `h` while the points stay near it (see [`cell_keys`](Grid::cell_keys)),
    /// so a reused grid may order points differently from a fresh one; both orders are
    /// valid Morton orders, and the same sequence of rebuilds always gives the same.
    ///
    /// # Errors
    ///
    /// Checked before anything changes (on error the grid is as it was):
    /// [`UnsupportedDimension`](GridError::UnsupportedDimension) unless `D` is 2 or 3;
    /// [`InvalidRadius`](GridError::InvalidRadius) unless `h` and `h * h` are positive
    /// and finite; [`LengthMismatch`](GridError::LengthMismatch) when the axes differ
    /// in length; [`TooManyParticles`](GridError::TooManyParticles) beyond
    /// `u32::MAX - 1` points; [`NonFinitePosition`](GridError::NonFinitePosition) for
    /// the first point with a NaN or infinite coordinate;
    /// [`OutOfRange`](GridError::OutOfRange) when the points span more cells along an
    /// axis than a Morton key holds (2^21 in 3D, 2^32 in 2D).
    ///
    /// ```
    /// use pbf_grid::Grid;
    ///
    /// let x = [3.5, 0.0, 3.6];
    /// let y = [0.0, 0.0, 0.0];
    /// let z = [0.0, 0.0, 0.0];
    /// let mut grid = Grid::<3>::new();
    /// grid.rebuild([&x, &y, &z], 1.0)?;
    /// assert_eq!(grid.permutation(), &[1, 0, 2]);
    /// assert_eq!(grid.cells().len(), 2);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn rebuild(&mut self, positions: [&[f32]; D], h: f32) -> Result<(), GridError> {
        if D != 2 && D != 3 {
            return Err(GridError::UnsupportedDimension { dim: D });
        }
        check_radius(h)?;
        let n = positions[0].len();
        for (axis, p) in positions.iter().enumerate() {
            if p.len() != n {
                return Err(GridError::LengthMismatch {
                    axis,
                    expected: n,
                    found: p.len(),
                });
            }
        }
        if n > MAX_POINTS {
            return Err(GridError::TooManyParticles { count: n });
        }
        let frame = if n == 0 {
            CellFrame::default()
        } else {
            CellFrame::new(frame::bounds(&positions)?, h, &self.frame)?
        };

        let previous = std::mem::replace(&mut self.frame, frame);
        self.h = h;
        let key_bits = frame.key_bits();
        let outputs = CellOutputs {
            permutation: &mut self.permutation,
            cell_of: &mut self.cell_of,
            cell_keys: &mut self.cell_keys,
            cells: &mut self.cells,
        };
        self.identity = if key_bits <= 32 {
            self.narrow.bin(
                &positions,
                &frame,
                &previous,
                &mut self.sorter,
                &mut self.extractor,
                outputs,
            )
        } else {
            self.wide.bin(
                &positions,
                &frame,
                &previous,
                &mut self.sorter,
                &mut self.extractor,
                outputs,
            )
        };
        self.table.rebuild(&self.cell_keys, &self.cells, n);
        self.candidates
            .rebuild::<D>(&self.cell_keys, &self.table, frame.extent, n);
        Ok(())
    }

    /// The origin of the cell coordinates of the last rebuild, in whole cells per
    /// axis, and the radius it was made for: `None` before the first rebuild with
    /// points. The next rebuild keeps this origin while the points stay near it, so a
    /// program that saves a simulation and resumes it bit for bit saves this too and
    /// resumes with [`with_cell_origin`](Grid::with_cell_origin).
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// assert_eq!(grid.cell_origin(), None);
    /// grid.rebuild([&[5.0, 9.0], &[0.0, 0.0]], 1.0)?;
    /// let (h, origin) = grid.cell_origin().unwrap();
    /// assert_eq!(h, 1.0);
    /// assert!(origin[0] <= 4.0 && origin[1] <= 0.0);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn cell_origin(&self) -> Option<(f32, [f64; D])> {
        (self.frame.inv_cell != 0.0).then_some((self.h, self.frame.base))
    }

    /// An empty grid whose next rebuild with radius `h` treats `origin` (from
    /// [`cell_origin`](Grid::cell_origin)) as the previous rebuild's origin: it then
    /// orders points exactly as the grid that reported the origin would.
    ///
    /// # Errors
    /// [`InvalidRadius`](GridError::InvalidRadius) for a bad `h`;
    /// [`InvalidOrigin`](GridError::InvalidOrigin) when an origin coordinate is not a
    /// finite whole number.
    ///
    /// ```
    /// use pbf_grid::Grid;
    /// let (x, y) = ([5.0f32, 9.0, 5.5], [0.0f32, 0.0, 3.0]);
    /// let mut a = Grid::<2>::new();
    /// a.rebuild([&x, &y], 1.0)?;
    /// let (h, origin) = a.cell_origin().unwrap();
    /// let mut b = Grid::<2>::with_cell_origin(h, origin)?;
    /// a.rebuild([&x, &y], 1.0)?;
    /// b.rebuild([&x, &y], 1.0)?;
    /// assert_eq!(a.permutation(), b.permutation());
    /// assert_eq!(a.cell_keys(), b.cell_keys());
    /// assert!(Grid::<2>::with_cell_origin(1.0, [0.5, 0.0]).is_err());
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn with_cell_origin(h: f32, origin: [f64; D]) -> Result<Self, GridError> {
        check_radius(h)?;
        if let Some(axis) = origin
            .iter()
            .position(|c| !(c.is_finite() && c.fract() == 0.0))
        {
            return Err(GridError::InvalidOrigin {
                axis,
                value: origin[axis],
            });
        }
        let mut grid = Self::new();
        grid.h = h;
        grid.frame = CellFrame {
            inv_cell: frame::inverse_cell(h),
            base: origin,
            extent: [0; D],
        };
        Ok(grid)
    }

    /// The number of points of the last rebuild.
    #[inline]
    pub fn len(&self) -> usize {
        self.permutation.len()
    }

    /// Whether the last rebuild had no point (or there was none).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.permutation.is_empty()
    }

    /// The search radius `h` of the last rebuild (0 before the first).
    #[inline]
    pub fn radius(&self) -> f32 {
        self.h
    }

    /// `permutation()[k]` is the index, in the arrays given to the last rebuild, of
    /// the point placed at sorted slot `k`.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[5.0, 0.0], &[0.0, 0.0]], 1.0)?;
    /// assert_eq!(grid.permutation(), &[1, 0]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn permutation(&self) -> &[u32] {
        &self.permutation
    }

    /// Whether the last rebuild left every point where it was (then reordering is a
    /// no-op, and [`reorder`](Grid::reorder) skips the copy).
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[0.0, 5.0], &[0.0, 0.0]], 1.0)?;
    /// assert!(grid.permutation_is_identity());
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn permutation_is_identity(&self) -> bool {
        self.identity
    }

    /// Bytes of heap held by the grid's buffers (their capacities). It grows with the
    /// number of points and occupied cells, never with the volume of the bounding box.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<3>::new();
    /// // Two points a kilometre apart with h = 1 mm: 10^6 cells between them.
    /// grid.rebuild([&[0.0, 1000.0], &[0.0; 2], &[0.0; 2]], 1e-3)?;
    /// assert!(grid.heap_bytes() < 100_000);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    pub fn heap_bytes(&self) -> usize {
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * size_of::<T>()
        }
        bytes(&self.permutation)
            + bytes(&self.cell_of)
            + bytes(&self.cell_keys)
            + bytes(&self.cells)
            + self.table.heap_bytes()
            + self.candidates.heap_bytes()
            + self.sorter.heap_bytes()
            + self.extractor.heap_bytes()
            + self.narrow.heap_bytes()
            + self.wide.heap_bytes()
    }

    fn check_data(&self, found: usize) -> Result<(), GridError> {
        if found == self.len() {
            Ok(())
        } else {
            Err(GridError::DataLength {
                expected: self.len(),
                found,
            })
        }
    }

    fn check_sorted(&self, sorted: &[&[f32]; D]) -> Result<(), GridError> {
        for (axis, s) in sorted.iter().enumerate() {
            if s.len() != self.len() {
                return Err(GridError::LengthMismatch {
                    axis,
                    expected: self.len(),
                    found: s.len(),
                });
            }
        }
        Ok(())
    }

    /// The occupied cells in Morton order; each range indexes the **sorted** order,
    /// and together they cover `0 .. len()` in order without gaps.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[0.0, 0.1, 3.0], &[0.0, 0.0, 0.0]], 1.0)?;
    /// assert_eq!(grid.cells().len(), 2);
    /// assert_eq!(grid.cells()[0].as_range(), 0..2);
    /// assert_eq!(grid.cells()[1].as_range(), 2..3);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn cells(&self) -> &[CellRange] {
        &self.cells
    }

    /// The Morton key of every occupied cell (strictly ascending). Cell coordinates
    /// count from an origin cell a little below the bounding box's minimum corner,
    /// which the grid keeps from one rebuild to the next while the points stay near
    /// it, so that the order changes only where points change cell.
    ///
    /// ```
    /// use pbf_grid::morton::{decode2, encode2};
    ///
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[0.0, 1.5], &[0.0, 0.0]], 1.0)?;
    /// let [a, b] = [grid.cell_keys()[0], grid.cell_keys()[1]];
    /// assert_eq!(decode2(b)[0], decode2(a)[0] + 1); // next cell along x
    /// assert_eq!(decode2(b)[1], decode2(a)[1]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn cell_keys(&self) -> &[u64] {
        &self.cell_keys
    }

    /// For each sorted point, the index into [`cells`](Grid::cells) of its cell.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// grid.rebuild([&[3.0, 0.0, 0.2], &[0.0, 0.0, 0.0]], 1.0)?;
    /// assert_eq!(grid.cell_of(), &[0, 0, 1]);
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn cell_of(&self) -> &[u32] {
        &self.cell_of
    }

    /// The points of the `3^D` cells around `cell` (itself included) as ascending,
    /// disjoint, merged ranges of sorted indices: ranges that touch are coalesced, so
    /// Morton-contiguous neighbour cells come as one range. Precomputed by the rebuild.
    ///
    /// This is the input of cell-blocked passes: every point of `cell` finds all its
    /// neighbours within `h` among these candidates, which for uniformly spread points
    /// number about 6.4 times the neighbours in 3D (27 h^3 against 4/3 pi h^3) and
    /// 2.9 times in 2D.
    ///
    /// # Panics
    ///
    /// If `cell >= cells().len()`.
    ///
    /// ```
    /// let mut grid = pbf_grid::Grid::<2>::new();
    /// // Three cells in a row along x: 0, 1 and 3 (cell 2 is empty).
    /// grid.rebuild([&[0.0, 1.5, 3.5], &[0.0, 0.0, 0.0]], 1.0)?;
    /// let c = grid.cell_of()[1] as usize; // the middle point's cell
    /// let ranges: Vec<_> = grid.candidate_ranges(c).iter().map(|r| r.as_range()).collect();
    /// assert_eq!(ranges, vec![0..2]); // cells 0 and 1, merged; cell 3 is two cells away
    /// # Ok::<(), pbf_grid::GridError>(())
    /// ```
    #[inline]
    pub fn candidate_ranges(&self, cell: usize) -> &[CellRange] {
        assert!(
            cell < self.cells.len(),
            "cell {cell} out of range ({} cells)",
            self.cells.len()
        );
        self.candidates.get(cell)
    }
}

/// Whether the points look like the last rebuild's sorted order, moved a little:
/// at most a quarter of 256 evenly spaced samples changed cell. Saves the re-sort's
/// key pass (and a second one for the full sort) when the input is in another order.
fn few_moved<const D: usize>(
    positions: &[&[f32]; D],
    frame: &CellFrame<D>,
    cell_of: &[u32],
    cell_keys: &[u64],
) -> bool {
    const SAMPLES: usize = 256;
    let n = cell_of.len();
    let moved = (0..SAMPLES.min(n))
        .map(|s| s * n / SAMPLES.min(n))
        .filter(|&k| {
            let coords: [u32; D] = std::array::from_fn(|a| frame.coord(a, positions[a][k]));
            crate::morton::encode::<D>(coords) != cell_keys[cell_of[k] as usize]
        })
        .count();
    moved <= SAMPLES.min(n) / 4
}

/// The sort buffers for one item type.
#[derive(Clone, Debug, Default)]
struct SortBuffers<T> {
    items: Vec<T>,
    scratch: Vec<T>,
    resorter: Resorter<T>,
    /// Stayers per chunk of the key pass (re-sort path).
    stayer_counts: Vec<usize>,
    /// Movers of each chunk of the key pass (re-sort path).
    mover_chunks: Vec<Vec<T>>,
}

impl<T: SortItem> SortBuffers<T> {
    /// Makes room for the re-sort of `n` points (the steady state after a full
    /// sort: every point of a key chunk may move), so that the first rebuild that
    /// finds few points moved allocates nothing.
    fn reserve_resort(&mut self, n: usize) {
        let chunk_len = key_chunk_len(n);
        let chunks = n.div_ceil(chunk_len);
        reserve_total(&mut self.stayer_counts, chunks);
        if self.mover_chunks.len() < chunks {
            self.mover_chunks.resize_with(chunks, Vec::new);
        }
        for (t, movers) in self.mover_chunks[..chunks].iter_mut().enumerate() {
            reserve_total(movers, chunk_len.min(n - t * chunk_len));
        }
        self.resorter.reserve(n, chunks);
    }

    fn heap_bytes(&self) -> usize {
        (self.items.capacity() + self.scratch.capacity()) * size_of::<T>()
            + self.resorter.heap_bytes()
            + self.stayer_counts.capacity() * size_of::<usize>()
            + self
                .mover_chunks
                .iter()
                .map(|m| m.capacity() * size_of::<T>())
                .sum::<usize>()
    }

    /// Computes the keys, sorts them and extracts the cells. `previous` is the frame
    /// of the last rebuild, whose cells are still in `outputs`. Returns whether the
    /// permutation is the identity.
    fn bin<const D: usize>(
        &mut self,
        positions: &[&[f32]; D],
        frame: &CellFrame<D>,
        previous: &CellFrame<D>,
        sorter: &mut RadixSorter,
        extractor: &mut CellExtractor,
        outputs: CellOutputs<'_>,
    ) -> bool {
        let n = positions[0].len();
        let key_bits = frame.key_bits();
        self.items.resize(n, T::default());
        // Same cells as last time (same size and origin) and as many points: the input
        // is probably the last sorted order, moved a little. Count the points that
        // changed cell while computing the keys.
        let same_cells = n > 0
            && outputs.cell_of.len() == n
            && previous.inv_cell == frame.inv_cell
            && previous.base == frame.base
            && few_moved(positions, frame, outputs.cell_of, outputs.cell_keys);
        let mut resorted = false;
        if same_cells {
            let chunk_len = key_chunk_len(n);
            let chunks = n.div_ceil(chunk_len);
            let (cell_of, cell_keys) = (&outputs.cell_of[..], &outputs.cell_keys[..]);
            self.stayer_counts.resize(chunks, 0);
            if self.mover_chunks.len() < chunks {
                self.mover_chunks.resize_with(chunks, Vec::new);
            }
            self.items
                .par_chunks_mut(chunk_len)
                .zip(self.stayer_counts.par_iter_mut())
                .zip(self.mover_chunks[..chunks].par_iter_mut())
                .enumerate()
                .for_each(|(t, ((items, stayers), movers))| {
                    let cell_of = &cell_of[t * chunk_len..t * chunk_len + items.len()];
                    *stayers = keys_and_movers(
                        frame,
                        positions,
                        t * chunk_len,
                        items,
                        cell_of,
                        cell_keys,
                        movers,
                    );
                });
            let movers = n - self.stayer_counts.iter().sum::<usize>();
            if movers <= n / MOVER_LIMIT {
                self.resorter.resort(
                    &mut self.items,
                    &mut self.scratch,
                    chunk_len,
                    &self.stayer_counts,
                    &self.mover_chunks[..chunks],
                    sorter,
                    key_bits,
                );
                resorted = true;
            }
            // Otherwise most points changed cell (or the input is in another order):
            // the keys are computed again for the full sort, whose ties must come in
            // input order.
        }
        if !resorted && n > 0 {
            let (chunk_len, buckets, counts) = sorter.first_counts(n, key_bits);
            let mask = (buckets - 1) as u64;
            self.items
                .par_chunks_mut(chunk_len)
                .zip(counts.par_chunks_mut(buckets))
                .enumerate()
                .for_each(|(t, (items, counts))| {
                    keys_and_digits(frame, positions, t * chunk_len, items, counts, mask);
                });
            sorter.sort(&mut self.items, &mut self.scratch, key_bits, true);
            self.reserve_resort(n);
        }
        extractor.extract(&self.items, outputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radius_checks() {
        assert!(check_radius(1.0).is_ok());
        assert!(check_radius(1e-19).is_ok());
        for bad in [0.0, -1.0, f32::INFINITY, 1e-30, 1e20] {
            assert_eq!(
                check_radius(bad),
                Err(GridError::InvalidRadius { value: bad }),
                "{bad}"
            );
        }
        assert!(
            matches!(check_radius(f32::NAN), Err(GridError::InvalidRadius { value }) if value.is_nan())
        );
    }

    #[test]
    fn debug_is_a_summary() {
        let mut grid = Grid::<2>::new();
        grid.rebuild([&[0.0, 3.0], &[0.0, 0.0]], 1.0).unwrap();
        let text = format!("{grid:?}");
        assert!(
            text.contains("points: 2") && text.contains("cells: 2"),
            "{text}"
        );
    }

    #[test]
    fn cell_tasks_cover_every_cell_once() {
        let n = 20_000;
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.3).collect();
        let y: Vec<f32> = (0..n).map(|i| (i / 97) as f32 * 0.3).collect();
        let mut grid = Grid::<2>::new();
        grid.rebuild([&x, &y], 1.0).unwrap();
        let mut seen = vec![u32::MAX; n];
        grid.par_for_each_cell(&mut seen, |c, part| part.fill(c as u32))
            .unwrap();
        assert_eq!(seen, grid.cell_of());
    }
}
