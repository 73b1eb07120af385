//! One step (Macklin & Müller 2013, Algorithm 1): the phases in order, each a method
//! of its own file.

use super::Solver;
use super::diagnostics::Clock;
use crate::CoreError;
use crate::diagnostics::StepDiagnostics;
use pbf_kernels::{Lane, WithLane};
use std::time::Instant;

impl<const D: usize> Solver<D> {
    /// Advances the simulation by one time step and returns its statistics.
    ///
    /// # Errors
    /// [`CoreError::Diverged`] when a velocity became NaN or infinite (the state is
    /// the one the step produced); [`CoreError::Collapsed`] when the particles around
    /// one reached sixteen times the rest density (a diverging run; the step stops
    /// before its neighbour lists take the memory); [`CoreError::Grid`] when the
    /// particles span more cells than the neighbour search can index.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.4, 0.4], [0.0; 2])?;
    /// for _ in 0..10 {
    ///     s.step()?;
    /// }
    /// assert_eq!(s.steps(), 10);
    /// assert!(s.last_diagnostics().max_density_error < 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn step(&mut self) -> Result<StepDiagnostics, CoreError> {
        /// The step on the lanes the dispatcher picks.
        struct Step<'a, const D: usize>(&'a mut Solver<D>);
        impl<const D: usize> WithLane for Step<'_, D> {
            type Output = Result<StepDiagnostics, CoreError>;
            fn run<L: Lane>(self) -> Self::Output {
                self.0.step_with::<L>()
            }
        }
        let kind = self.params.backend().lane_kind();
        kind.dispatch(Step(self))
            .unwrap_or_else(|e| unreachable!("{e}: a backend runs only available lanes"))
    }

    /// The step on the lanes `L`: each phase reads and writes the solver's arrays.
    fn step_with<L: Lane>(&mut self) -> Result<StepDiagnostics, CoreError> {
        let start = Instant::now();
        // 1-2. Emission, forces, prediction, collisions.
        self.emit();
        self.prepare();
        self.predict();
        let predicted = Instant::now();
        // 3. Neighbour search on the predicted positions, unless the lists still hold.
        let (searches, outrun) = self.neighbour_search()?;
        let searched = Instant::now();
        // 4. The coarse density correction.
        let corrected = self.coarse_correction();
        let coarse = Instant::now();
        // 5. Constraint iterations, then the skin of the next search.
        let solve = self.constrain::<L>(corrected)?;
        self.choose_next_skin(solve.searches, outrun, solve.past);
        let constrained = Instant::now();
        // 6. Velocities, contact response, physical viscosity, XSPH, vorticity.
        self.update_velocities();
        let viscous = Instant::now();
        let viscosity_iterations = self.physical_viscosity::<L>();
        let viscosity = viscous.elapsed();
        self.xsph_and_vorticity::<L>();
        // 7. x = p*, inside the box on the periodic axes.
        core::mem::swap(&mut self.positions, &mut self.predicted);
        self.wrap_positions();
        let clock = Clock {
            start,
            predicted,
            searched,
            coarse,
            constrained,
            viscosity,
        };
        let counts = (
            solve.iterations,
            searches + solve.searches,
            viscosity_iterations,
        );
        self.diagnose(counts, clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `wide`'s `f32x8` gives the scalar path's bits through whole steps, as every
    /// public backend does (`every_backend_gives_the_bits_of_the_scalar_path`): the
    /// solver runs it only on CPUs without AVX, where that public test reaches it, so
    /// here it is stepped directly, in 3D and 2D.
    #[test]
    fn the_portable_eight_lanes_give_the_scalar_paths_bits() {
        fn same<const D: usize>(mut wide: Solver<D>, mut scalar: Solver<D>) {
            for step in 1..=80 {
                let (a, b) = (
                    wide.step_with::<pbf_kernels::f32x8>(),
                    scalar.step_with::<f32>(),
                );
                assert_eq!(a.unwrap().iterations, b.unwrap().iterations);
                for k in 0..D {
                    for (what, x, y) in [
                        ("position", &wide.positions[k], &scalar.positions[k]),
                        ("velocity", &wide.velocities[k], &scalar.velocities[k]),
                    ] {
                        let first = x
                            .iter()
                            .zip(y)
                            .position(|(p, q)| p.to_bits() != q.to_bits());
                        assert!(
                            first.is_none(),
                            "step {step}: {what} {k} of particle {first:?}"
                        );
                    }
                }
            }
        }
        let three = || crate::scenes::dam_break_3d(1500).unwrap();
        same(three(), three());
        let two = || crate::scenes::dam_break_2d(1500).unwrap();
        same(two(), two());
    }
}
