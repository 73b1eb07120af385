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

    /// Whether the steps from now on keep every particle's pressure for
    /// [`pressures`](Self::pressures) (off by default, and in a solver restored from a
    /// checkpoint). Kept, a step pays one streaming loop over the particles per
    /// constraint iteration and one at the end, and an interpolation per particle in
    /// the coarse correction; the positions and velocities are the same bits either
    /// way. Turned off, the pressures are dropped.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0; 2], [0.5; 2], [0.0; 2])?;
    /// assert!(s.pressures().is_empty());
    /// s.keep_pressures(true);
    /// assert_eq!(s.pressures(), &[0.0; 25]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn keep_pressures(&mut self, keep: bool) {
        self.keep_pressures = keep;
        if keep {
            self.pressure.resize(self.len(), 0.0);
        } else {
            self.pressure.clear();
        }
    }

    /// The pressure in pascals that the density constraint applied to each particle in
    /// the last step, in the order of [`positions`](Self::positions), when
    /// [`keep_pressures`](Self::keep_pressures) asks for it (empty otherwise; 0 for
    /// particles no kept step has moved).
    ///
    /// **What it is.** A step predicts `p* = x + dt v + dt^2 g`, corrects `p*` and
    /// sets `v = (p* - x) / dt`: every correction `dx_i` is an impulse, an acceleration
    /// `dx_i / dt^2` over the step. The SPH pressure acceleration with the symmetric
    /// gradient is `a_i = -sum_j m (p_i / rho_i^2 + p_j / rho_j^2) gradW_ij`, which at
    /// the rest density gives the displacement
    /// `dx_i = -(dt^2 / rho0) (m / rho0) sum_j (p_i + p_j) gradW_ij`.
    ///
    /// The constraint's corrections have that form. A delta pass moves particle `i` by
    /// `(m / rho0) sum_j (lambda_i + lambda_j + s_corr_ij) gradW_ij + lambda_i
    /// gradC_walls` ([`position_deltas`](Self::position_deltas)); its `lambda_i =
    /// -omega C_i / (sum_k |grad_k C_i|^2 + eps)` already holds the relaxation `omega`
    /// (and under [`Relaxation::Auto`](crate::Relaxation::Auto) its scaling where the
    /// fluid is compressed), so the lambdas applied are the ones summed. The passes of a
    /// step add up to `(m / rho0) sum_j (L_i + L_j) gradW_ij` with `L_i = sum_k c_k
    /// lambda_i^k` over the iterations `k` whose delta pass ran (an adaptive count's
    /// last lambda pass, which stops the iterations, moves nothing): `c_k = 1` for plain
    /// Jacobi passes, and under [`Acceleration::Chebyshev`](crate::Acceleration::Chebyshev)
    /// each pass's share of the step's blended displacement. The coarse correction
    /// ([`ParamsBuilder::coarse_correction`](crate::ParamsBuilder::coarse_correction))
    /// moves every particle by `grad phi` of a potential solved on its grid (0 at the
    /// free surface), the continuum form of the same displacement: it adds `phi_i`,
    /// interpolated at the particle. Matched term by term,
    ///
    /// `p_i = -(rho0 / dt^2) (phi_i + sum_k c_k lambda_i^k)`.
    ///
    /// What it leaves out: `s_corr_ij` is a term of the pair, not of either particle
    /// (an artificial pressure against clumping, zero at and beyond the rest spacing);
    /// the walls' term `lambda_i gradC_walls` takes the wall as rest fluid with
    /// pressure 0, so near a wall the force is that of `p_i` alone and the pressure
    /// there reads the wall model as much as the fluid; a free body's mean coarse
    /// displacement, which the correction takes out, is a translation, no pressure;
    /// within a cell of a wall the correction moves the fluid by its open face's
    /// difference carried into the wall, not by `grad phi` there.
    /// The CFM `eps` enters through lambda only: it softens the constraint (a fluid
    /// at rest keeps a small compression) but not the relation between lambda and
    /// the impulse. The equality is to first order: each pass's gradients are taken at
    /// the positions of its iteration, and the collisions of a pass are left out.
    ///
    /// The lambdas' share is SPH's pressure, with SPH's discretisation in it: the
    /// symmetric sum gives `c` times a linear field's gradient, `c` set by the
    /// particles' arrangement (at h = 2 s, 0.886 on the square rest lattice in 2D,
    /// 0.856 on the hexagonal one, 0.956 on the cubic lattice in 3D), so the part of
    /// the weight the passes carry reads `1 / c` times as steep; and in a fluid
    /// compressed by a fraction `e` that varies with depth, the sum also reads the
    /// density's gradient times `p`, a term of order `e`. The coarse correction's grid
    /// gradient is exact for a linear potential: with it (the default) the pressure
    /// of a settled fluid rises with the weight.
    ///
    /// So in a fluid at rest under gravity `g` the pressure balances the weight:
    /// `grad p = rho0 g`, and `p` grows with depth `d` as `rho0 |g| d`. Only its
    /// differences are the impulse's, though: the coarse correction's `phi` is 0 at the
    /// centres of the grid's first air cells (a cell is fluid when its particles fill a
    /// tenth of it), which lie 0.55 to 1.55 cells (1.1 h to 3.1 h) above the free
    /// surface, so with the correction the pressure at the surface reads the weight of
    /// that much fluid instead of 0.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// // A 2D pool 0.4 m deep, settled.
    /// let params = Params::<2>::builder(0.02).build()?;
    /// let mut s = Solver::new(params, Domain::new([0.0; 2], [0.4, 0.6])?)?;
    /// s.add_block([0.0; 2], [0.4, 0.4], [0.0; 2])?;
    /// s.keep_pressures(true);
    /// for _ in 0..240 {
    ///     s.step()?;
    /// }
    /// let (y, p) = (s.positions()[1], s.pressures());
    /// let mean_at = |height: f32| {
    ///     let near: Vec<f32> =
    ///         (0..s.len()).filter(|&i| (y[i] - height).abs() < 0.02).map(|i| p[i]).collect();
    ///     near.iter().sum::<f32>() / near.len() as f32
    /// };
    /// // 0.2 m deeper, the pressure is higher by about 1000 * 9.81 * 0.2 Pa.
    /// let rise = mean_at(0.1) - mean_at(0.3);
    /// assert!((rise / (1000.0 * 9.81 * 0.2) - 1.0).abs() < 0.1, "{rise} Pa");
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn pressures(&self) -> &[f32] {
        &self.pressure
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
