//! The constraint phases of a step: the coarse density correction, then the Jacobi
//! iterations of the density constraint (lambda pass, delta pass, collisions),
//! with the lists checked before each.

use super::skin::SKINS;
use super::{Solver, muts, refs};
use crate::boundary::Boundary;
use crate::constraint::{Chebyshev, ChebyshevStep, Constraint};
use crate::lists::{Neighbourhood, pack, repack_extra};
use crate::parallel::{deterministic_sum, for_each_chunk};
use crate::{Acceleration, CoreError, Iterations};
use pbf_kernels::Lane;

/// What the constraint iterations of a step did.
pub(super) struct Solve {
    /// The iterations run.
    pub(super) iterations: u32,
    /// The searches run between them, where the lists could not be mended.
    pub(super) searches: u32,
    /// How many particles had moved past half of each of [`SKINS`] since the lists
    /// were built, at the step's last check (none when adaptive iterations stopped on
    /// their target).
    pub(super) past: Option<[u32; SKINS.len()]>,
}

impl<const D: usize> Solver<D> {
    /// Phase 4 of a step: the coarse correction, one grid solve that moves every
    /// predicted position (see [`crate::coarse`]). Returns whether it ran; Verlet's
    /// criterion is then checked before the first pass.
    pub(super) fn coarse_correction(&mut self) -> bool {
        if !self.params.coarse_correction() || self.is_empty() {
            // The pressures of the step start from 0.
            if self.keep_pressures {
                self.pressure.fill(0.0);
            }
            return false;
        }
        let scene = crate::coarse::Scene {
            h: self.kernel.h(),
            spacing: self.params.spacing(),
            margin: self.margin(),
            domain: &self.domain,
            colliders: &self.colliders,
        };
        // The pressures of the step start from the correction's potential.
        let potential = self.keep_pressures.then_some(self.pressure.as_mut_slice());
        self.coarse
            .correct(&scene, muts(&mut self.predicted), potential);
        true
    }

    /// Phase 5 of a step: `iterations` Jacobi passes of the density constraint over
    /// the predicted positions, each a lambda pass and a delta pass, the lists checked
    /// before each pass after the first (and before the first when `corrected`: the
    /// coarse correction moved the positions) and once more after the last, so that
    /// they hold the final positions' pairs.
    pub(super) fn constrain<L: Lane>(&mut self, corrected: bool) -> Result<Solve, CoreError> {
        let (min_iterations, max_iterations, target) = match self.params.iterations() {
            Iterations::Fixed(k) => (k, k, None),
            Iterations::Adaptive {
                max_density_error_percent,
                min,
                max,
            } => (min, max, Some(f64::from(max_density_error_percent) / 100.0)),
        };
        // The builder allows Chebyshev only with a fixed count.
        let chebyshev = (self.params.acceleration() == Acceleration::Chebyshev)
            .then(|| Chebyshev::new(max_iterations));
        let mut weight = 1.0f64;
        let mut solve = Solve {
            iterations: 0,
            searches: 0,
            past: None,
        };
        loop {
            if solve.iterations > 0 || corrected {
                // The last check of the step also counts the particles past half of
                // each skin, for the next search.
                let last = solve.iterations >= max_iterations;
                let (drift, searched) = self.check_lists(last)?;
                if last {
                    solve.past = Some(drift.past);
                }
                solve.searches += u32::from(searched);
            }
            if solve.iterations >= max_iterations {
                // The lists hold the final positions: the XSPH pass computes their
                // densities.
                break;
            }
            self.lambda_pass::<L>();
            if let Some(target) = target
                && solve.iterations >= min_iterations
                && self.average_density_error() <= target
            {
                break;
            }
            let weights = chebyshev.map(|chebyshev| {
                weight = chebyshev.weight(solve.iterations, weight);
                (weight as f32, chebyshev.gamma() as f32)
            });
            if self.keep_pressures {
                // The lambdas the delta pass applies, with their share of the step.
                let share = chebyshev.map_or(1.0, |c| c.share(solve.iterations, max_iterations));
                self.add_to_pressures(share as f32);
            }
            self.delta_pass::<L>(solve.iterations, weights);
            solve.iterations += 1;
        }
        if self.keep_pressures {
            self.finish_pressures();
        }
        for a in self.previous.iter_mut() {
            a.clear();
        }
        Ok(solve)
    }

    /// The lambda pass at the predicted positions: every particle's density, lambda
    /// and the walls' share of its constraint gradient.
    fn lambda_pass<L: Lane>(&mut self) {
        let constraint = Constraint::new(
            &self.params,
            &self.kernel,
            &self.tensile,
            self.relaxation,
            Boundary {
                domain: &self.domain,
                colliders: &self.colliders,
                tables: &self.walls,
                corners: super::corner_tables(
                    &self.domain,
                    &self.colliders,
                    &self.corners,
                    &self.kernel,
                ),
            },
        );
        // The lambda pass reads the positions of the quads; the delta pass also the
        // neighbours' lambda.
        pack(&mut self.quads, refs(&self.predicted), &self.lambda);
        let nb = Neighbourhood {
            lists: &self.lists,
            quads: &self.quads,
        };
        constraint.lambda_pass::<L>(
            &nb,
            &mut self.density,
            &mut self.lambda,
            &mut self.wall_gradient,
        );
    }

    /// Adds `share` times every particle's lambda to its pressure sum (see
    /// [`Self::pressures`]).
    fn add_to_pressures(&mut self, share: f32) {
        let lambda = &self.lambda;
        for_each_chunk([self.pressure.as_mut_slice()], &|start, [sum]| {
            for (k, p) in sum.iter_mut().enumerate() {
                *p += share * lambda[start + k];
            }
        });
    }

    /// Turns the pressure sums of the step, `phi_i + sum_k c_k lambda_i^k` (length
    /// squared), into pascals: times `-rho0 / dt^2` (see [`Self::pressures`]).
    fn finish_pressures(&mut self) {
        let dt = self.params.time_step();
        let scale = -self.params.rest_density() / (dt * dt);
        for_each_chunk([self.pressure.as_mut_slice()], &|_, [sum]| {
            for p in sum.iter_mut() {
                *p *= scale;
            }
        });
    }

    /// The average density error (compression only, a fraction of the rest density)
    /// of the last lambda pass: the adaptive iterations' measure.
    fn average_density_error(&mut self) -> f64 {
        let (n, rest_density) = (self.len(), self.params.rest_density());
        let density = &self.density;
        deterministic_sum(n, &mut self.partials, &|i| {
            f64::from((density[i] / rest_density - 1.0).max(0.0))
        }) / n as f64
    }

    /// The delta pass of iteration `iteration` after the lambda pass: the predicted
    /// positions move by their deltas, kept out of the colliders and in the domain.
    /// With Chebyshev weights `(w, gamma)` the pass takes the Chebyshev step too, and
    /// the iterate before stays in `previous`.
    fn delta_pass<L: Lane>(&mut self, iteration: u32, chebyshev: Option<(f32, f32)>) {
        let (n, margin) = (self.len(), self.margin());
        let constraint = Constraint::new(
            &self.params,
            &self.kernel,
            &self.tensile,
            self.relaxation,
            Boundary {
                domain: &self.domain,
                colliders: &self.colliders,
                tables: &self.walls,
                corners: super::corner_tables(
                    &self.domain,
                    &self.colliders,
                    &self.corners,
                    &self.kernel,
                ),
            },
        );
        repack_extra::<D>(&mut self.quads, &self.lambda);
        let nb = Neighbourhood {
            lists: &self.lists,
            quads: &self.quads,
        };
        // y_{k+1} = w (g J(y_k) + (1 - g) y_k - y_{k-1}) + y_{k-1}, kept out of the
        // solids from y_k's side and inside the domain, like a pass: in the delta
        // pass's epilogue.
        let step = chebyshev.map(|(weight, gamma)| ChebyshevStep {
            weight,
            gamma,
            // y_{-1} is y_0 itself.
            before: if iteration == 0 {
                refs(&self.predicted)
            } else {
                refs(&self.previous)
            },
        });
        constraint.delta_pass::<L>(
            &nb,
            &self.lambda,
            &self.wall_gradient,
            muts(&mut self.next),
            &self.colliders,
            &self.domain,
            margin,
            step,
        );
        if chebyshev.is_some() {
            if iteration == 0 {
                // Room for y_0 after the swaps below.
                for a in self.previous.iter_mut() {
                    a.resize(n, 0.0);
                }
            }
            // previous <- predicted <- next.
            core::mem::swap(&mut self.previous, &mut self.predicted);
        }
        core::mem::swap(&mut self.predicted, &mut self.next);
    }
}
