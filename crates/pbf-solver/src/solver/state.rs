//! The state a checkpoint saves and restores: views of a solver's evolving state, and
//! putting checked state back.

use super::{Solver, refs};
use crate::CoreError;
use crate::emitter::Emitter;
use pbf_grid::Grid;

/// A view of the solver's evolving state (see `Solver::dynamic_state`).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) struct DynamicState<'a, const D: usize> {
    pub positions: [&'a [f32]; D],
    pub velocities: [&'a [f32]; D],
    pub force: [&'a [f32]; D],
    pub density: &'a [f32],
    pub ids: &'a [u64],
    pub next_id: u64,
    pub step: u64,
    pub time: f64,
    pub emitters: &'a [Emitter<D>],
    pub grid_origin: Option<(f32, [f64; D])>,
    /// The positions the lists were built from, when the next step may keep them.
    pub built: Option<[&'a [f32]; D]>,
    /// The skin of the last search and of the next one, relative to h.
    pub skins: (f32, f32),
    /// The steps completed when the search that built the lists ran.
    pub built_step: u64,
}

/// Checked state to put into a solver (see `Solver::restore_dynamic`).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) struct RestoredState<const D: usize> {
    pub positions: [Vec<f32>; D],
    pub velocities: [Vec<f32>; D],
    pub force: [Vec<f32>; D],
    pub density: Vec<f32>,
    pub ids: Vec<u64>,
    pub next_id: u64,
    pub step: u64,
    pub time: f64,
    pub grid: Grid<D>,
    /// Checked for length and finiteness.
    pub built: Option<[Vec<f32>; D]>,
    /// The skin of the last search and of the next one, relative to h: two of
    /// [`SKINS`](super::SKINS) (checked).
    pub skins: (f32, f32),
    /// The steps completed when the search that built the lists ran: at most `step`
    /// (checked).
    pub built_step: u64,
}

impl<const D: usize> Solver<D> {
    /// The state beyond parameters and boundaries, for checkpoints (`checkpoint/`).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn dynamic_state(&self) -> DynamicState<'_, D> {
        DynamicState {
            positions: refs(&self.positions),
            velocities: refs(&self.velocities),
            force: refs(&self.force),
            density: &self.density,
            ids: &self.ids,
            next_id: self.next_id,
            step: self.step,
            time: self.time,
            emitters: &self.emitters,
            grid_origin: self.grid.cell_origin(),
            built: (self.reusable && self.params.keep_lists()).then(|| refs(&self.built)),
            skins: (self.skin, self.next_skin),
            built_step: self.built_step,
        }
    }

    /// Replaces the particles, counters and grid origin by checked ones from a
    /// checkpoint (`checkpoint/load.rs` validates them first; `grid` is empty). With the
    /// positions the saved solver's lists were built from, it builds those lists again:
    /// the particles are in the grid's order of those positions, so the grid keeps
    /// their order, and the next step keeps or replaces the lists as the saved solver's
    /// would have.
    ///
    /// # Errors
    /// [`CoreError::Checkpoint`] (`lists_built`) when the particles are not in the
    /// grid's order of those positions; the errors of a search otherwise.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn restore_dynamic(&mut self, state: RestoredState<D>) -> Result<(), CoreError> {
        self.positions = state.positions;
        self.velocities = state.velocities;
        self.force = state.force;
        self.density = state.density;
        self.ids = state.ids;
        // No step has given these particles pressures yet.
        self.pressure.clear();
        if self.keep_pressures {
            self.pressure.resize(self.ids.len(), 0.0);
        }
        self.next_id = state.next_id;
        self.step = state.step;
        self.time = state.time;
        self.grid = state.grid;
        (self.skin, self.next_skin) = state.skins;
        self.built_step = state.built_step;
        self.reusable = false;
        let Some(built) = state.built else {
            return Ok(());
        };
        let radius = self.list_radius();
        self.grid.rebuild(refs(&built), radius)?;
        if !self.grid.permutation_is_identity() {
            return Err(crate::checkpoint::CheckpointError::Inconsistent {
                field: "lists_built",
                reason: "the particles are not in the grid's order of these positions".into(),
            }
            .into());
        }
        let room = self.room();
        self.lists
            .build(&self.grid, refs(&built), radius * radius, room)
            .map_err(|e| self.collapsed(e, self.step, self.ids[e.index]))?;
        self.built = built;
        self.reusable = true;
        self.reserve_repair();
        Ok(())
    }
}
