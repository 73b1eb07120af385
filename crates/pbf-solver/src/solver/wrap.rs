//! Periodic axes: the positions moved back into the box at the end of a step.
//!
//! Within a step the predicted positions may stray out of the box across a periodic
//! face (no wall stops them there); every offset between two particles is then the
//! minimum image (the lists' walk, the drift and the list repair), and the velocity
//! update `v = (p* - x) / dt` sees the move as it was. Once `x = p*`, every position
//! is put back into `lo..hi` by whole periods, so a step always starts, and the
//! positions a caller reads are always, inside the box.

use super::{Solver, muts};
use crate::parallel::for_each_chunk;

impl<const D: usize> Solver<D> {
    /// Moves every position into `lo..hi` on the periodic axes
    /// ([`pbf_grid::Periodic::wrap`]); nothing without a periodic axis.
    pub(super) fn wrap_positions(&mut self) {
        let periodic = *self.lists.periodic();
        if !periodic.any() {
            return;
        }
        for_each_chunk(muts(&mut self.positions), &|_, x| {
            for (a, x) in x.into_iter().enumerate() {
                if periodic.is_periodic(a) {
                    for v in x.iter_mut() {
                        *v = periodic.wrap(a, *v).0;
                    }
                }
            }
        });
    }
}
