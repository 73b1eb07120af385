//! The last phase of a step: its statistics, gathered in one sweep of the particles
//! ([`StepDiagnostics`]).

use super::Solver;
use super::refs;
use crate::CoreError;
use crate::diagnostics::{PhaseTimes, StepDiagnostics};
use crate::parallel::{per_chunk, pick_max};
use std::time::Instant;

/// When the phases of a step began and ended, for its [`PhaseTimes`] (the velocity
/// phase ends with the statistics).
pub(super) struct Clock {
    /// The start of the step.
    pub(super) start: Instant,
    /// The end of the prediction.
    pub(super) predicted: Instant,
    /// The end of the neighbour search.
    pub(super) searched: Instant,
    /// The end of the coarse correction.
    pub(super) coarse: Instant,
    /// The end of the constraint iterations.
    pub(super) constrained: Instant,
    /// The time of the physical viscosity's solve (part of the velocity phase).
    pub(super) viscosity: std::time::Duration,
}

impl<const D: usize> Solver<D> {
    /// Phase 7 of a step, after `x = p*`: counts the step and gathers its statistics
    /// (`iterations` and `searches` from the phases before), which
    /// [`Self::last_diagnostics`] keeps.
    ///
    /// # Errors
    /// [`CoreError::Diverged`] when a velocity is not finite.
    pub(super) fn diagnose(
        &mut self,
        (iterations, searches, viscosity_iterations): (u32, u32, u32),
        clock: Clock,
    ) -> Result<StepDiagnostics, CoreError> {
        let (n, dt) = (self.len(), self.params.time_step());
        let rest_density = self.params.rest_density();
        // Statistics: one sweep of the particles, by the chunks of `deterministic_sum`.
        let (velocities, density, count) = (refs(&self.velocities), &self.density, &self.count);
        let speed2 = |i: usize| {
            let v: [f32; D] = core::array::from_fn(|a| velocities[a][i]);
            f64::from(pbf_kernels::norm2(v))
        };
        let error = |i: usize| f64::from((density[i] / rest_density - 1.0).max(0.0));
        let neighbours = |i: usize| f64::from(count[i] - 1.0);
        per_chunk(n, &mut self.tallies, &|chunk| {
            let mut t = Tally::default();
            for i in chunk {
                t.add(speed2(i), error(i), neighbours(i));
            }
            t
        });
        let total = |part: fn(&Tally) -> f64| self.tallies.iter().map(part).sum::<f64>();
        let most = |part: fn(&Tally) -> f64| {
            self.tallies
                .iter()
                .map(part)
                .fold(f64::NEG_INFINITY, pick_max)
        };
        let max_speed2 = most(|t| t.speed2.1);
        self.step += 1;
        self.time += f64::from(dt);
        if !max_speed2.is_finite() && n > 0 {
            let index = (0..n).find(|&i| !speed2(i).is_finite()).unwrap_or(0);
            return Err(CoreError::Diverged {
                step: self.step,
                id: self.ids[index],
            });
        }
        let mass = f64::from(self.params.mass());
        let kinetic_energy = 0.5 * mass * total(|t| t.speed2.0);
        let average_error = total(|t| t.error.0) / n.max(1) as f64;
        let max_error = most(|t| t.error.1).max(0.0);
        let neighbours_sum = total(|t| t.neighbours.0);
        let max_neighbours = most(|t| t.neighbours.1).max(0.0);
        let min_neighbours = -most(|t| -t.fewest_neighbours).min(0.0);
        let velocity_at = Instant::now();
        self.last = StepDiagnostics {
            step: self.step,
            particles: n,
            iterations,
            average_density_error: average_error as f32,
            max_density_error: max_error as f32,
            max_speed: max_speed2.max(0.0).sqrt() as f32,
            kinetic_energy,
            min_neighbours: if n == 0 { 0 } else { min_neighbours as u32 },
            average_neighbours: (neighbours_sum / n.max(1) as f64) as f32,
            max_neighbours: max_neighbours as u32,
            list_pairs: self.lists.pairs(),
            list_skin: self.skin,
            searches,
            viscosity_iterations,
            times: PhaseTimes {
                predict: clock.predicted - clock.start,
                neighbour_search: clock.searched - clock.predicted,
                coarse: clock.coarse - clock.searched,
                constraints: clock.constrained - clock.coarse,
                velocity: velocity_at - clock.constrained - clock.viscosity,
                viscosity: clock.viscosity,
            },
        };
        Ok(self.last)
    }
}

/// The statistics of a chunk of particles at the end of a step: sum and maximum of
/// the squared speeds, of the density errors and of the neighbour counts, and the
/// fewest neighbours (each maximum NaN if a value is).
#[derive(Debug, Clone, Copy)]
pub(super) struct Tally {
    speed2: (f64, f64),
    error: (f64, f64),
    neighbours: (f64, f64),
    fewest_neighbours: f64,
}

impl Default for Tally {
    /// No particle: sums 0, maxima -inf, the fewest +inf.
    fn default() -> Self {
        let none = (0.0, f64::NEG_INFINITY);
        Self {
            speed2: none,
            error: none,
            neighbours: none,
            fewest_neighbours: f64::INFINITY,
        }
    }
}

impl Tally {
    /// Adds one particle: sums in order, the maxima as [`pick_max`] folds them.
    #[inline(always)]
    fn add(&mut self, speed2: f64, error: f64, neighbours: f64) {
        for (part, v) in [
            (&mut self.speed2, speed2),
            (&mut self.error, error),
            (&mut self.neighbours, neighbours),
        ] {
            part.0 += v;
            part.1 = pick_max(part.1, v);
        }
        self.fewest_neighbours = -pick_max(-self.fewest_neighbours, -neighbours);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk's tally holds the sums, maxima and the minimum of its values, a NaN
    /// makes a maximum NaN, and an empty chunk has none.
    #[test]
    fn a_tally_sums_and_bounds_its_particles() {
        let values = [(4.0, 0.0, 30.0), (1.0, 0.25, 12.0), (9.0, 0.5, 41.0)];
        let mut t = Tally::default();
        for &(s, e, k) in &values {
            t.add(s, e, k);
        }
        assert_eq!(t.speed2, (14.0, 9.0));
        assert_eq!(t.error, (0.75, 0.5));
        assert_eq!(t.neighbours, (83.0, 41.0));
        assert_eq!(t.fewest_neighbours, 12.0);
        t.add(f64::NAN, 0.0, 20.0);
        assert!(t.speed2.0.is_nan() && t.speed2.1.is_nan());
        assert_eq!(t.error.1, 0.5);
        let none = Tally::default();
        assert_eq!(none.speed2, (0.0, f64::NEG_INFINITY));
        assert_eq!(none.fewest_neighbours, f64::INFINITY);
    }
}
