//! The neighbour search: the grid rebuilt on the predicted positions, every array
//! reordered and the lists built; whether a step keeps the last step's lists; and the
//! check of the lists before each constraint iteration.

use super::skin::{Drift, SKINS, WIDEST_SKIN};
use super::{Solver, muts, refs};
use crate::CoreError;
use crate::lists::{Overfull, max_candidates, room_per_particle};
use crate::parallel::for_each_chunk;

impl<const D: usize> Solver<D> {
    /// Phase 3 of a step: the neighbour search on the predicted positions, unless the
    /// last step's lists still hold every pair within h ([`Self::keeps_lists`]).
    /// Returns how many searches ran (0 or 1) and whether the flow outruns every skin.
    pub(super) fn neighbour_search(&mut self) -> Result<(u32, bool), CoreError> {
        let (kept, outrun) = self.keeps_lists();
        if kept {
            return Ok((0, outrun));
        }
        self.search(self.next_skin).map_err(|e| match e {
            // Finite but huge velocities can overflow the prediction: that is
            // divergence, not bad input.
            CoreError::Grid(pbf_grid::GridError::NonFinitePosition { index, .. }) => {
                CoreError::Diverged {
                    step: self.step + 1,
                    id: self.ids[index],
                }
            }
            e => e,
        })?;
        Ok((1, outrun))
    }

    /// Verlet's check before a constraint iteration: when particles have moved more
    /// than half the skin since the lists were built, the lists are mended
    /// ([`Self::repair_lists`]) or, when they cannot be, the search runs again at the
    /// widest skin. `count`: also count the particles past half of each of [`SKINS`]
    /// (the step's last check, for the next search). Returns the drift and whether it
    /// searched.
    pub(super) fn check_lists(&mut self, count: bool) -> Result<(Drift, bool), CoreError> {
        let drift = self.drift(count);
        let moved = f32::from_bits(drift.most);
        // A non-finite displacement means the iterations diverged: no search (the
        // grid would reject the positions); the step reports it at its end.
        if moved.is_finite() && drift.movers > 0 && !self.repair_lists(true) {
            // The skin taken at the start of the step was too narrow for it.
            self.search(WIDEST_SKIN)?;
            return Ok((drift, true));
        }
        Ok((drift, false))
    }

    /// The neighbour search: bins the predicted positions in the grid with cells of
    /// `h (1 + skin)`, reorders every per-particle array that carries over into the
    /// grid's Morton order, builds the lists of the pairs within that radius and keeps
    /// the positions they were built from.
    pub(super) fn search(&mut self, skin: f32) -> Result<(), CoreError> {
        self.reusable = false;
        self.skin = skin;
        self.built_step = self.step;
        let radius = self.list_radius();
        let room = self.room();
        self.grid.rebuild(refs(&self.predicted), radius)?;
        if !self.grid.permutation_is_identity() {
            for set in [
                &mut self.positions,
                &mut self.velocities,
                &mut self.predicted,
            ] {
                for a in set.iter_mut() {
                    self.grid.reorder(a, &mut self.scratch)?;
                }
            }
            if self.previous[0].len() == self.ids.len() {
                for a in self.previous.iter_mut() {
                    self.grid.reorder(a, &mut self.scratch)?;
                }
            }
            // The last lambda pass's densities: the XSPH pass weighs by them when the
            // check before it searched again.
            self.grid.reorder(&mut self.density, &mut self.scratch)?;
            // The pressures the constraint phases are summing, or the last step's.
            if self.pressure.len() == self.ids.len() {
                self.grid.reorder(&mut self.pressure, &mut self.scratch)?;
            }
            self.grid.reorder(&mut self.ids, &mut self.scratch_ids)?;
        }
        self.lists
            .build(&self.grid, refs(&self.predicted), radius * radius, room)
            .map_err(|e| self.collapsed(e, self.steps() + 1, self.ids[e.index]))?;
        // On the threads: the copy streams every predicted position.
        for a in self.built.iter_mut() {
            a.resize(self.predicted[0].len(), 0.0);
        }
        let predicted = refs(&self.predicted);
        for_each_chunk(muts(&mut self.built), &|start, built| {
            for (a, b) in built.into_iter().enumerate() {
                b.copy_from_slice(&predicted[a][start..start + b.len()]);
            }
        });
        self.reusable = true;
        self.reserve_repair();
        Ok(())
    }

    /// Whether the step may keep the last step's lists for its predicted positions
    /// instead of searching: they are [`reusable`](Self::reusable) and either no
    /// particle has moved more than half the skin since they were built (Verlet's
    /// criterion, as before every constraint iteration) or few enough have for
    /// [`Self::repair_lists`] to mend them. They then hold every pair within h, and
    /// the particles keep their order. A fluid at rest searches only when its drift
    /// adds up, or when more than a few particles move fast.
    ///
    /// Also returns whether the flow outruns every skin: the lists were built in the
    /// last step and more particles have moved past half the widest skin since than
    /// the repair mends, so lists of any skin would have been replaced. Only then may
    /// the next search take a narrower skin than the widest (see [`next_skin`](super::skin::next_skin)):
    /// otherwise the widest lets the lists outlive the step, as in a fluid at rest.
    pub(super) fn keeps_lists(&mut self) -> (bool, bool) {
        if !self.params.keep_lists() || !self.reusable {
            return (false, true);
        }
        debug_assert_eq!(
            self.built[0].len(),
            self.len(),
            "reusable lists are of these particles"
        );
        let drift = self.drift(true);
        let limit = Self::fast_limit(self.len());
        let outrun =
            self.built_step + 1 == self.step && drift.past[SKINS.len() - 1] as usize > limit;
        // The repair takes its movers per chunk from this count.
        let kept = drift.movers as usize <= limit && self.repair_lists(true);
        (kept, outrun)
    }

    /// The error of a list build that found the fluid collapsed around particle `id`
    /// (`e.index` is a sorted index: the caller maps it to the particle's id).
    pub(super) fn collapsed(&self, e: Overfull, step: u64, id: u64) -> CoreError {
        CoreError::Collapsed {
            step,
            id,
            candidates: e.candidates as u64,
            limit: self.candidate_limit() as u64,
        }
    }

    /// The most candidates a particle may have in a list build before the fluid
    /// counts as collapsed ([`max_candidates`] at the radius of the widest skin, the
    /// same whatever skin a search takes).
    pub(super) fn candidate_limit(&self) -> usize {
        max_candidates::<D>(self.radius_of(WIDEST_SKIN), self.params.spacing())
    }

    /// The radius of the last neighbour search, its grid's cells and the lists:
    /// `h (1 + skin)`.
    pub(crate) fn list_radius(&self) -> f32 {
        self.radius_of(self.skin)
    }

    /// The entries a list gets room for in a build: as for the widest skin, so that
    /// what the lists allocate does not depend on the skins taken.
    pub(super) fn room(&self) -> usize {
        room_per_particle::<D>(self.radius_of(WIDEST_SKIN), self.params.spacing())
    }

    /// The radius of a search with `skin` (relative to h): `h (1 + skin)`.
    pub(crate) fn radius_of(&self, skin: f32) -> f32 {
        self.kernel.h() * (1.0 + skin)
    }
}
