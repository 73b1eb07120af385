//! Walking the neighbours of one particle, `WIDTH` candidates at a time.

use crate::lanes::{Lane, norm2};
use pbf_grid::Grid;

/// The sorted positions and the grid they were binned in.
pub(crate) struct Neighbourhood<'a, const D: usize> {
    pub(crate) grid: &'a Grid<D>,
    pub(crate) positions: [&'a [f32]; D],
}

impl<const D: usize> Neighbourhood<'_, D> {
    /// Calls `f(j, x, r2)` for every block of `L::WIDTH` candidates `j..j + WIDTH` of
    /// particle `i` (the particles of the 3^D cells around its cell, `i` included),
    /// with the offsets `x = p_i - p_j` and their squared lengths; lanes past the end
    /// of a candidate range carry `r2 = +inf`. The order is fixed, so sums over it are
    /// the same on every run and every thread count. Blocks with no lane within `h`
    /// are skipped: every term is zero there.
    #[inline(always)]
    pub(crate) fn for_each_block<L: Lane>(
        &self,
        i: usize,
        h2: f32,
        mut f: impl FnMut(usize, [L; D], L),
    ) {
        let xi: [f32; D] = core::array::from_fn(|a| self.positions[a][i]);
        let xi_lanes: [L; D] = xi.map(L::splat);
        let cell = self.grid.cell_of()[i] as usize;
        for range in self.grid.candidate_ranges(cell) {
            let (start, end) = (range.start as usize, range.end as usize);
            let mut j = start;
            while j < end {
                let x: [L; D] =
                    core::array::from_fn(|a| xi_lanes[a] - L::load(self.positions[a], j));
                let r2 = L::mask_tail(norm2(x), end - j);
                if L::any_within(r2, h2) {
                    f(j, x, r2);
                }
                j += L::WIDTH;
            }
        }
    }
}
