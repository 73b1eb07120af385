//! [`ParamsBuilder`]: the builder of [`Params`], whose `build` validates every field.

use super::{Acceleration, Backend, Iterations, Params, Relaxation, rest_lattice_mass};
use crate::CoreError;

/// Builder of [`Params`]; [`build`](Self::build) validates every field.
///
/// ```
/// use pbf_solver::{CoreError, Params};
/// let err = Params::<3>::builder(0.1).time_step(-1.0).build().unwrap_err();
/// assert!(matches!(err, CoreError::InvalidParameter { field: "time_step", .. }));
/// ```
#[derive(Debug, Clone)]
pub struct ParamsBuilder<const D: usize> {
    pub(super) params: Params<D>,
}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: $t:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, value: $t) -> Self {
            self.params.$name = value;
            self
        }
    };
}

impl<const D: usize> ParamsBuilder<D> {
    setter!(
        /// Particle rest spacing `s` (> 0).
        spacing: f32
    );
    setter!(
        /// Kernel radius in spacings, `h / s`, in `[1, 8]` (default 2).
        kernel_radius_rel: f32
    );
    setter!(
        /// Rest density (> 0, default 1000).
        rest_density: f32
    );
    setter!(
        /// Time step in seconds (> 0 and finite, default 1/120).
        time_step: f32
    );
    setter!(
        /// Iteration mode (default `Fixed(4)`); counts must be in `1..=1000`.
        iterations: Iterations
    );
    setter!(
        /// Gravity, an acceleration (finite; default 9.81 down the y axis). It is not
        /// relative to h: to scale a scene by s, scale gravity by s too.
        gravity: [f32; D]
    );
    setter!(
        /// CFM relaxation relative to `h^2` (> 0, default 0.1): `eps = cfm_rel / h^2`.
        cfm_rel: f32
    );
    setter!(
        /// Strength `k` of the tensile term (>= 0, default 0.1; 0 turns it off).
        ///
        /// The paper adds `s_corr = -k (W(r)/W(dq))^n`, a pure number, to
        /// `lambda_i + lambda_j`, which has units of length^2 once masses are included;
        /// its `k = 0.1` then overwhelms the constraint at small h. Here `s_corr` is taken
        /// in lambda's own unit, `1 / D_rest`, where `D_rest` is the lambda denominator of
        /// a particle inside the rest lattice: `k = 0.1` is the artificial pressure of a
        /// 10% compression at `|dq|`, at every scale.
        ///
        /// The term vanishes at and beyond the rest spacing
        /// ([`TensileCorrection::vanishing_beyond`](pbf_kernels::TensileCorrection::vanishing_beyond)):
        /// only pairs closer than the rest spacing are pushed apart. The paper's form
        /// pushes every pair within h apart, and against the one-sided constraint,
        /// which never pulls particles together, that blows a free block apart and
        /// adds energy in every iteration.
        s_corr_k: f32
    );
    setter!(
        /// Exponent `n` of the tensile term (1..=16, default 4).
        s_corr_n: u32
    );
    setter!(
        /// `|dq| / h` of the tensile term, in (0, 1) (default 0.2).
        s_corr_dq_rel: f32
    );
    setter!(
        /// XSPH viscosity constant `c` in `[0, 1]` (default 0.01; 0 turns it off).
        xsph_c: f32
    );
    setter!(
        /// The time in seconds over which [`xsph_c`](Self::xsph_c) blends (finite
        /// and > 0), or `None` for the paper's literal per-step blend.
        ///
        /// XSPH (paper eq. 17) blends each velocity towards its neighbours' average by
        /// `c` once per step, so per step its viscosity is a property of the time step:
        /// at 1/30 s a fluid with a per-step `c` is four times less viscous than at
        /// 1/120 s. With a period (default 1/120 s, the default time step) each step
        /// blends `1 - (1 - c)^(dt / period)` ([`Params::xsph_per_step`]): the same
        /// fluid at every time step. At a large time step a per-step blend leaves a
        /// settled fluid boiling, which the period calms.
        ///
        /// ```
        /// use pbf_solver::{CoreError, Params};
        /// let p = Params::<2>::builder(0.1).xsph_period(Some(0.01)).time_step(0.02).build()?;
        /// assert!((p.xsph_per_step() - (1.0 - 0.99f32 * 0.99)).abs() < 1e-6);
        /// let err = Params::<2>::builder(0.1).xsph_period(Some(0.0)).build().unwrap_err();
        /// assert!(matches!(err, CoreError::InvalidParameter { field: "xsph_period", .. }));
        /// # Ok::<(), CoreError>(())
        /// ```
        xsph_period: Option<f32>
    );
    setter!(
        /// Vorticity confinement strength relative to `h`, per second (>= 0,
        /// default 0.1; 0 turns it off).
        vorticity_rel: f32
    );
    setter!(
        /// The kinematic viscosity `nu` in m^2/s (>= 0 and finite; default 0, off):
        /// water about 1e-6, olive oil about 1e-4, honey about 5e-3. Scaled with a
        /// scene (lengths by `k`, gravity by `k`, the same times) it scales by `k^2`.
        ///
        /// Physical viscosity adds `nu` times the SPH Laplacian of the velocity
        /// (Morris' component-wise form,
        /// [`Kernel::viscosity_term`](pbf_kernels::Kernel::viscosity_term))
        /// to every step, solved implicitly (backward Euler, by conjugate gradients
        /// over the neighbour lists), so it is stable at any time step and any `nu`.
        /// The Laplacian is calibrated on the rest lattice, where the plain sum
        /// underestimates it (by 14% in 2D and 7% in 3D at h = 2 s). No-slip walls
        /// ([`Wall::NoSlip`](crate::Wall::NoSlip)) act through it. XSPH
        /// ([`xsph_c`](Self::xsph_c)) stays what it is: an artificial velocity filter,
        /// not a viscosity with a unit.
        ///
        /// ```
        /// use pbf_solver::{CoreError, Params};
        /// let p = Params::<3>::builder(0.01).viscosity(1e-6).build()?;
        /// assert_eq!(p.viscosity(), 1e-6);
        /// let err = Params::<3>::builder(0.01).viscosity(-1.0).build().unwrap_err();
        /// assert!(matches!(err, CoreError::InvalidParameter { field: "viscosity", .. }));
        /// # Ok::<(), CoreError>(())
        /// ```
        viscosity: f32
    );
    setter!(
        /// `true` (default): the density constraint acts only where the fluid is
        /// compressed (`C_i = max(rho_i / rho0 - 1, 0)`), so particles at a free surface,
        /// which lack neighbours, are not pulled together. `false`: the paper's
        /// two-sided constraint, with `s_corr` against the clumping it causes.
        unilateral: bool
    );
    setter!(
        /// The Jacobi relaxation of the constraint passes: [`Relaxation::Auto`]
        /// (default) or [`Relaxation::Fixed`] with a value in `(0, 1]`.
        ///
        /// The trade-off: a smaller `omega` keeps one or two iterations per step and
        /// large time steps stable (`Auto` is the largest value that damps every
        /// density wave of the rest lattice), a larger one converges faster per
        /// iteration (`Fixed(1.0)`, the paper's unrelaxed pass, about halves the
        /// average density error at 4 iterations but blows up at 1). Adaptive
        /// iterations ([`Iterations::Adaptive`]) make up `Auto`'s slower convergence
        /// where it matters. See [`Relaxation`].
        ///
        /// ```
        /// use pbf_solver::{CoreError, Params, Relaxation};
        /// let p = Params::<2>::builder(0.05).relaxation(Relaxation::Fixed(0.8)).build()?;
        /// assert_eq!(p.relaxation(), Relaxation::Fixed(0.8));
        /// let err = Params::<2>::builder(0.05).relaxation(Relaxation::Fixed(1.5)).build();
        /// assert!(matches!(err, Err(CoreError::InvalidParameter { field: "relaxation", .. })));
        /// # Ok::<(), CoreError>(())
        /// ```
        relaxation: Relaxation
    );
    setter!(
        /// How the constraint iterations of a step combine: [`Acceleration::None`]
        /// (default) or [`Acceleration::Chebyshev`].
        ///
        /// Chebyshev semi-iteration (Golub & Varga 1961; for position-based dynamics,
        /// Wang 2015) blends each Jacobi result with the iterate before the last, with
        /// weights chosen so that after the step's `k` iterations every density wave
        /// of the rest lattice that Jacobi damps by at most `1 - omega a` per pass is
        /// left at most a tenth of its size (and never flipped beyond that), while the
        /// long waves, the hydrostatic compression, converge about twice as fast as
        /// under plain Jacobi, so a step leaves about half the average density error
        /// at the same iteration count. The cost: one blend per iteration (no
        /// neighbour pass). The trade-off: at large time steps the glasses of the
        /// stability experiment boil more than under plain Jacobi.
        ///
        /// Needs [`Iterations::Fixed`] (the weights depend on the count; an adaptive
        /// count may stop where the blend is not yet damped) and [`Relaxation::Auto`]
        /// (whose overshoot bound, a third, the weights are computed from).
        ///
        /// ```
        /// use pbf_solver::{Acceleration, CoreError, Iterations, Params};
        /// let ok = Params::<3>::builder(0.05).acceleration(Acceleration::Chebyshev).build();
        /// assert!(ok.is_ok());
        /// let adaptive = Iterations::Adaptive { max_density_error_percent: 1.0, min: 2, max: 20 };
        /// let err = Params::<3>::builder(0.05)
        ///     .acceleration(Acceleration::Chebyshev)
        ///     .iterations(adaptive)
        ///     .build()
        ///     .unwrap_err();
        /// assert!(matches!(err, CoreError::InvalidParameter { field: "acceleration", .. }));
        /// ```
        acceleration: Acceleration
    );
    setter!(
        /// Start every step's constraint iterations with a coarse density correction
        /// (default `true`): a Poisson solve on a grid of cells `2 h` wide that
        /// removes the long-wave part of the compression in one shot (it measures
        /// the compression as the particles' volume over each cell's free volume,
        /// walls and colliders taken out, and moves every particle by the gradient
        /// of the solution; the Jacobi passes then correct the short waves).
        ///
        /// Jacobi passes move information about one kernel radius per pass, so a pool
        /// many kernel radii deep, stepped at a large time step, stays squeezed under
        /// its own weight; with the correction the glass of `pbf validate`'s
        /// stability experiment at a large time step and 2 iterations stays near the
        /// rest density, calm and inside the glass. The cost: one pass over the
        /// particles to spread them on the grid and one to move them, and a
        /// conjugate-gradient solve on a grid of about one cell per 64 particles (3D)
        /// ([`PhaseTimes::coarse`](crate::PhaseTimes::coarse)), while the neighbour
        /// searches become fewer.
        ///
        /// It is on by default because without it the fluid is not incompressible at
        /// depth, and the compression the passes leave is stored energy: a released
        /// column gives it back as motion, so the total of kinetic and potential
        /// energy rises after the release without it; with it, it stays at or below
        /// its start at any iteration count.
        ///
        /// Momentum: the passes' position deltas are sums of antisymmetric pair terms
        /// and keep the centre of mass; the correction's displacement is a grid
        /// gradient interpolated to the particles. So each connected body of fluid
        /// that no wall touches has its particles' mean displacement taken out, and
        /// keeps its centre of mass; a body that touches a wall keeps the whole
        /// displacement, the wall taking the momentum as it does in the passes.
        ///
        /// The grid covers the domain (the particles' bounding box where the domain is
        /// much larger than the fluid) and wraps around its periodic axes, each
        /// divided into whole cells at least `2 h` wide; a step whose spray would stretch even that
        /// beyond 8 cells a particle goes without the correction (the passes still
        /// hold every particle).
        ///
        /// ```
        /// use pbf_solver::{Domain, Iterations, Params, Solver};
        /// let params = Params::<2>::builder(0.05)
        ///     .time_step(1.0 / 30.0)
        ///     .iterations(Iterations::Fixed(2))
        ///     .coarse_correction(true)
        ///     .build()?;
        /// let mut pool = Solver::new(params, Domain::new([0.0; 2], [0.8, 6.4])?)?;
        /// pool.add_block([0.0; 2], [0.8, 3.2], [0.0; 2])?; // 16 x 64 particles
        /// let mut stats = pool.step()?;
        /// for _ in 0..60 {
        ///     stats = pool.step()?;
        /// }
        /// assert!(stats.average_density_error < 0.05);
        /// # Ok::<(), pbf_solver::CoreError>(())
        /// ```
        coarse_correction: bool
    );
    setter!(
        /// Let a step keep the last step's neighbour lists, and the particles their
        /// order, instead of searching (default `true`), when the lists still hold
        /// every pair within h: no particle has moved more than half the lists' skin
        /// ([`StepDiagnostics::list_skin`](crate::StepDiagnostics::list_skin)) since
        /// they were built, or few have and the pairs they bring within
        /// h are mended in (see
        /// [`StepDiagnostics::searches`](crate::StepDiagnostics::searches)). The
        /// physics is the same either way; the bits differ, as the summation order
        /// follows the particle order.
        ///
        /// A fluid at rest then searches only when its drift adds up, and its steps
        /// are faster. A fluid in motion searches every step either way. `false`
        /// searches at the start of every step: a steadier cost a step (a real-time
        /// budget), and the same work a step for benchmarks.
        ///
        /// ```
        /// use pbf_solver::{Domain, Params, Solver};
        /// let params = Params::<2>::builder(0.05).gravity([0.0; 2]).build()?;
        /// let mut pool = Solver::new(params.clone(), Domain::new([0.0; 2], [1.0; 2])?)?;
        /// pool.add_block([0.2; 2], [0.6; 2], [0.0; 2])?;
        /// pool.step()?;
        /// assert_eq!(pool.step()?.searches, 0); // nothing moved: the lists are kept
        ///
        /// let params = params.to_builder().keep_lists(false).build()?;
        /// let mut pool = Solver::new(params, Domain::new([0.0; 2], [1.0; 2])?)?;
        /// pool.add_block([0.2; 2], [0.6; 2], [0.0; 2])?;
        /// pool.step()?;
        /// assert_eq!(pool.step()?.searches, 1);
        /// # Ok::<(), pbf_solver::CoreError>(())
        /// ```
        keep_lists: bool
    );
    setter!(
        /// SIMD lanes (default) or the scalar reference path.
        backend: Backend
    );

    /// Validates every field and returns the parameters.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] naming the first field out of range.
    ///
    /// ```
    /// use pbf_solver::{CoreError, Iterations, Params};
    /// assert!(Params::<3>::builder(0.1).build().is_ok());
    /// let err = Params::<3>::builder(0.1).iterations(Iterations::Fixed(0)).build();
    /// assert!(matches!(err, Err(CoreError::InvalidParameter { field: "iterations", .. })));
    /// let err = Params::<2>::builder(f32::NAN).build();
    /// assert!(matches!(err, Err(CoreError::InvalidParameter { field: "spacing", .. })));
    /// ```
    pub fn build(self) -> Result<Params<D>, CoreError> {
        let mut p = self.params;
        let bad = |field: &'static str, value: f64, reason: &'static str| {
            Err(CoreError::InvalidParameter {
                field,
                value,
                reason,
            })
        };
        if D != 2 && D != 3 {
            return bad("dimension", D as f64, "must be 2 or 3");
        }
        if !(p.spacing.is_finite() && p.spacing > 0.0) {
            return bad("spacing", p.spacing.into(), "must be positive and finite");
        }
        if !(p.kernel_radius_rel.is_finite() && (1.0..=8.0).contains(&p.kernel_radius_rel)) {
            return bad(
                "kernel_radius_rel",
                p.kernel_radius_rel.into(),
                "must be in [1, 8]",
            );
        }
        if !(p.rest_density.is_finite() && p.rest_density > 0.0) {
            return bad(
                "rest_density",
                p.rest_density.into(),
                "must be positive and finite",
            );
        }
        if !(p.time_step.is_finite() && p.time_step > 0.0) {
            return bad(
                "time_step",
                p.time_step.into(),
                "must be positive and finite",
            );
        }
        match p.iterations {
            Iterations::Fixed(n) if !(1..=1000).contains(&n) => {
                return bad("iterations", n.into(), "must be in 1..=1000");
            }
            Iterations::Adaptive {
                max_density_error_percent,
                min,
                max,
            } => {
                if !(max_density_error_percent.is_finite() && max_density_error_percent > 0.0) {
                    return bad(
                        "max_density_error_percent",
                        max_density_error_percent.into(),
                        "must be positive and finite",
                    );
                }
                if !(1..=1000).contains(&min) {
                    return bad("iterations.min", min.into(), "must be in 1..=1000");
                }
                if !(min..=1000).contains(&max) {
                    return bad("iterations.max", max.into(), "must be in min..=1000");
                }
            }
            Iterations::Fixed(_) => {}
        }
        if let Some(g) = p.gravity.iter().find(|g| !g.is_finite()) {
            return bad("gravity", (*g).into(), "must be finite");
        }
        if !(p.cfm_rel.is_finite() && p.cfm_rel > 0.0) {
            return bad("cfm_rel", p.cfm_rel.into(), "must be positive and finite");
        }
        if !(p.s_corr_k.is_finite() && p.s_corr_k >= 0.0) {
            return bad("s_corr_k", p.s_corr_k.into(), "must be >= 0 and finite");
        }
        if !(1..=16).contains(&p.s_corr_n) {
            return bad("s_corr_n", p.s_corr_n.into(), "must be in 1..=16");
        }
        if !(p.s_corr_dq_rel.is_finite() && p.s_corr_dq_rel > 0.0 && p.s_corr_dq_rel < 1.0) {
            return bad("s_corr_dq_rel", p.s_corr_dq_rel.into(), "must be in (0, 1)");
        }
        if !(p.xsph_c.is_finite() && (0.0..=1.0).contains(&p.xsph_c)) {
            return bad("xsph_c", p.xsph_c.into(), "must be in [0, 1]");
        }
        if let Some(period) = p.xsph_period
            && !(period.is_finite() && period > 0.0)
        {
            return bad("xsph_period", period.into(), "must be > 0 and finite");
        }
        if !(p.vorticity_rel.is_finite() && p.vorticity_rel >= 0.0) {
            return bad(
                "vorticity_rel",
                p.vorticity_rel.into(),
                "must be >= 0 and finite",
            );
        }
        if !(p.viscosity.is_finite() && p.viscosity >= 0.0) {
            return bad("viscosity", p.viscosity.into(), "must be >= 0 and finite");
        }
        if let Relaxation::Fixed(w) = p.relaxation
            && !(w.is_finite() && w > 0.0 && w <= 1.0)
        {
            return bad("relaxation", w.into(), "must be in (0, 1]");
        }
        if p.acceleration == Acceleration::Chebyshev {
            if let Iterations::Adaptive { max, .. } = p.iterations {
                return bad(
                    "acceleration",
                    max.into(),
                    "Chebyshev needs Iterations::Fixed: its weights are for one iteration count",
                );
            }
            if let Relaxation::Fixed(w) = p.relaxation {
                return bad(
                    "acceleration",
                    w.into(),
                    "Chebyshev needs Relaxation::Auto: its weights assume Auto's overshoot bound",
                );
            }
        }
        let h = p.kernel_radius();
        p.mass = rest_lattice_mass::<D>(p.spacing, p.kernel_radius_rel, p.rest_density);
        if !(h.is_normal() && p.mass().is_normal() && p.cfm_epsilon().is_normal()) {
            return bad(
                "spacing",
                p.spacing.into(),
                "gives a kernel radius, mass or relaxation outside the range of f32",
            );
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(r: Result<Params<3>, CoreError>) -> &'static str {
        match r {
            Err(CoreError::InvalidParameter { field, .. }) => field,
            other => panic!("expected a parameter error, got {other:?}"),
        }
    }

    #[test]
    fn every_field_is_validated() {
        let b = || Params::<3>::builder(0.1);
        assert_eq!(field_of(b().spacing(0.0).build()), "spacing");
        assert_eq!(field_of(b().spacing(f32::INFINITY).build()), "spacing");
        assert_eq!(
            field_of(b().kernel_radius_rel(0.5).build()),
            "kernel_radius_rel"
        );
        assert_eq!(field_of(b().rest_density(-1.0).build()), "rest_density");
        assert_eq!(field_of(b().time_step(f32::NAN).build()), "time_step");
        assert_eq!(field_of(b().time_step(0.0).build()), "time_step");
        assert_eq!(
            field_of(b().iterations(Iterations::Fixed(0)).build()),
            "iterations"
        );
        assert_eq!(
            field_of(
                b().iterations(Iterations::Adaptive {
                    max_density_error_percent: -1.0,
                    min: 1,
                    max: 4
                })
                .build()
            ),
            "max_density_error_percent"
        );
        assert_eq!(
            field_of(
                b().iterations(Iterations::Adaptive {
                    max_density_error_percent: 1.0,
                    min: 5,
                    max: 4
                })
                .build()
            ),
            "iterations.max"
        );
        assert_eq!(
            field_of(b().gravity([0.0, f32::NAN, 0.0]).build()),
            "gravity"
        );
        assert_eq!(field_of(b().cfm_rel(0.0).build()), "cfm_rel");
        assert_eq!(field_of(b().s_corr_k(-0.1).build()), "s_corr_k");
        assert_eq!(field_of(b().s_corr_n(0).build()), "s_corr_n");
        assert_eq!(field_of(b().s_corr_dq_rel(1.0).build()), "s_corr_dq_rel");
        assert_eq!(field_of(b().xsph_c(2.0).build()), "xsph_c");
        for bad in [-1e-6, f32::NAN, f32::INFINITY] {
            assert_eq!(field_of(b().viscosity(bad).build()), "viscosity");
        }
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert_eq!(field_of(b().xsph_period(Some(bad)).build()), "xsph_period");
        }
        assert_eq!(
            field_of(b().vorticity_rel(f32::NAN).build()),
            "vorticity_rel"
        );
        for w in [0.0, -0.5, 1.0001, f32::NAN, f32::INFINITY] {
            assert_eq!(
                field_of(b().relaxation(Relaxation::Fixed(w)).build()),
                "relaxation",
                "{w}"
            );
        }
        assert!(b().relaxation(Relaxation::Fixed(1.0)).build().is_ok());
        assert!(b().relaxation(Relaxation::Fixed(1e-6)).build().is_ok());
        assert_eq!(field_of(b().spacing(1e-30).build()), "spacing");
        assert!(b().build().is_ok());
    }

    #[test]
    fn unsupported_dimension_is_an_error() {
        let r = Params::<4>::builder(0.1).build();
        assert!(matches!(
            r,
            Err(CoreError::InvalidParameter {
                field: "dimension",
                ..
            })
        ));
    }

    #[test]
    fn relative_parameters_scale_with_h() {
        let a = Params::<3>::builder(0.1).build().unwrap();
        let b = Params::<3>::builder(10.0).build().unwrap();
        let ratio = b.cfm_epsilon() / a.cfm_epsilon();
        assert!((ratio - 1e-4).abs() < 1e-9);
        assert!((b.vorticity_epsilon() / a.vorticity_epsilon() - 100.0).abs() < 1e-3);
    }
}
