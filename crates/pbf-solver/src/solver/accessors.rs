//! What a solver reports: its particles, parameters, boundaries, time and the last
//! step's statistics; and switching the backend.

use super::{Solver, refs};
use crate::diagnostics::StepDiagnostics;
use crate::emitter::Emitter;
use crate::{Backend, Collider, Domain, Params};
use pbf_kernels::Kernel;

impl<const D: usize> Solver<D> {
    /// Number of particles.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.len(), 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no particles.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!(s.is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Positions, one slice per axis (structure of arrays), in the solver's current
    /// order. For a GPU upload, `bytemuck::cast_slice::<f32, u8>(solver.positions()[0])`
    /// gives the bytes without a copy; [`positions_interleaved`](Self::positions_interleaved)
    /// gives `[x, y, z]` records.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// assert_eq!(s.positions()[1], &[0.5]);
    /// let bytes: &[u8] = bytemuck::cast_slice(s.positions()[0]);
    /// assert_eq!(bytes.len(), 4);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn positions(&self) -> [&[f32]; D] {
        refs(&self.positions)
    }

    /// Velocities, one slice per axis, in the order of [`positions`](Self::positions).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], Some(&[[1.0, 2.0]]))?;
    /// assert_eq!(s.velocities()[0], &[1.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn velocities(&self) -> [&[f32]; D] {
        refs(&self.velocities)
    }

    /// Densities at the end of the last step, at its final positions (computed by its
    /// XSPH pass; the rest density for particles that have not been stepped yet).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// assert_eq!(s.densities(), &[1000.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn densities(&self) -> &[f32] {
        &self.density
    }

    /// The neighbour lists of the last step (`pbf-grid`'s column-stored lists), over
    /// the particles in the order of [`positions`](Self::positions): every pair within
    /// h of the final positions is in them. An engine can run its own passes over
    /// them with a `pbf-kernels` backend; [`pbf_grid::lists::densities`] over them
    /// gives [`densities`](Self::densities) bit for bit for particles clear of the
    /// walls. Empty before the first step.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [2.0; 2])?)?;
    /// s.add_block([0.5; 2], [1.0; 2], [0.0; 2])?;
    /// s.step()?;
    /// assert_eq!(s.neighbour_lists().len(), s.len());
    /// assert!(s.neighbour_lists().pairs() > 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn neighbour_lists(&self) -> &pbf_grid::lists::NeighbourLists {
        &self.lists
    }

    /// Stable ids, in the order of [`positions`](Self::positions): a particle keeps its
    /// id through every reordering.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.9, 0.9], [0.1, 0.1]], None)?;
    /// s.step()?;
    /// let mut ids = s.ids().to_vec();
    /// ids.sort();
    /// assert_eq!(ids, [0, 1]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Copies the positions as `[f32; D]` records into `out` (cleared first).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// let mut out = Vec::new();
    /// s.positions_interleaved(&mut out);
    /// assert_eq!(out, [[0.25, 0.5]]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn positions_interleaved(&self, out: &mut Vec<[f32; D]>) {
        out.clear();
        out.extend((0..self.len()).map(|i| core::array::from_fn(|a| self.positions[a][i])));
    }

    /// The parameters.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.params().spacing(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn params(&self) -> &Params<D> {
        &self.params
    }

    /// The domain.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.domain().hi(), [1.0; 3]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn domain(&self) -> &Domain<D> {
        &self.domain
    }

    /// The colliders.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!(s.colliders().is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn colliders(&self) -> &[Collider<D>] {
        &self.colliders
    }

    /// The emitters.
    ///
    /// ```
    /// use pbf_solver::{Domain, Emitter, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_emitter(Emitter::new([0.5, 0.8], [0.0, -1.0], 1.0, 0.1, 0.0, 1.0)?)?;
    /// assert_eq!(s.emitters()[0].speed(), 1.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn emitters(&self) -> &[Emitter<D>] {
        &self.emitters
    }

    /// Simulated time in seconds.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<3>::builder(0.1).time_step(0.5).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// s.step()?;
    /// assert_eq!(s.time(), 0.5);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Steps taken.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.steps(), 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The statistics of the last step.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.last_diagnostics().step, 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn last_diagnostics(&self) -> &StepDiagnostics {
        &self.last
    }

    /// The Jacobi relaxation `omega` the constraint passes scale every lambda by: the
    /// value of [`Relaxation::Fixed`](crate::Relaxation::Fixed), or what
    /// [`Relaxation::Auto`](crate::Relaxation::Auto) resolves to for
    /// these parameters (`min(1, (4/3) / a_max)` from the rest lattice's spectrum;
    /// under `Auto` a particle compressed by more than 10% uses `omega 1.1 rho0 /
    /// rho_i`).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Relaxation, Solver};
    /// let auto = Solver::new(Params::<3>::builder(0.05).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!((auto.relaxation() - 0.505).abs() < 0.01);
    /// let params = Params::<3>::builder(0.05).relaxation(Relaxation::Fixed(1.0)).build()?;
    /// let unrelaxed = Solver::new(params, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(unrelaxed.relaxation(), 1.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn relaxation(&self) -> f32 {
        self.relaxation
    }

    /// Switches the implementation of the neighbour passes from the next step on
    /// (for example to compare the widths in one run; `Lanes` and `Lanes8` give the
    /// same bits).
    ///
    /// ```
    /// use pbf_solver::{Backend, scenes};
    /// let mut s = scenes::dam_break_3d(1000)?;
    /// s.set_backend(Backend::Scalar);
    /// assert_eq!(s.params().backend(), Backend::Scalar);
    /// s.step()?;
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn set_backend(&mut self, backend: Backend) {
        self.params.backend = backend;
    }

    /// The kernel (radius and constants).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.kernel().h(), 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn kernel(&self) -> &Kernel<D> {
        &self.kernel
    }
}
