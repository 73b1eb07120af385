//! The physical viscosity phase of a step: the implicit solve of
//! [`crate::viscosity`] on the velocities of the velocity update.

use super::{Solver, muts, refs};
use crate::lists::{Neighbourhood, pack};
use pbf_kernels::Lane;

impl<const D: usize> Solver<D> {
    /// Phase 6b of a step, after the velocity update: the velocities through the
    /// physical viscosity (nothing when it is off). Returns the conjugate-gradient
    /// iterations run.
    pub(super) fn physical_viscosity<L: Lane>(&mut self) -> u32 {
        if !self.viscosity.is_on() || self.is_empty() {
            return 0;
        }
        // The positions the lists hold; the extra value is not read.
        pack(&mut self.quads, refs(&self.predicted), &self.density);
        let nb = Neighbourhood {
            lists: &self.lists,
            quads: &self.quads,
        };
        let dt = self.params.time_step();
        let velocities = muts(&mut self.velocities);
        let walls = (&self.domain, self.colliders.as_slice());
        self.viscosity
            .solve::<L>(&nb, &self.kernel, dt, walls, velocities)
    }
}
