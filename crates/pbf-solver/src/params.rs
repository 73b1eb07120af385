//! Solver parameters, with the defaults of the sources and a validating builder.

use crate::CoreError;
use pbf_kernels::LaneKind;

/// The default period of the XSPH blend, in seconds ([`ParamsBuilder::xsph_period`]):
/// the default time step, so that at 1/120 s the blend is the paper's `c` per step.
pub const XSPH_PERIOD: f32 = 1.0 / 120.0;

/// How many constraint iterations a step runs.
///
/// ```
/// use pbf_solver::Iterations;
/// let fixed = Iterations::Fixed(4);
/// let adaptive = Iterations::Adaptive { max_density_error_percent: 0.1, min: 1, max: 50 };
/// assert_ne!(fixed, adaptive);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Iterations {
    /// Always this many (Macklin & Müller use 2 to 6; default 4).
    Fixed(u32),
    /// Iterate until the average density error (compression only, in percent of the
    /// rest density) is at most `max_density_error_percent`, running at least `min`
    /// and at most `max` iterations. The count used is reported per step.
    Adaptive {
        /// The target average density error, in percent.
        max_density_error_percent: f32,
        /// The least number of iterations.
        min: u32,
        /// The cap.
        max: u32,
    },
}

/// The Jacobi relaxation `omega` that scales every lambda of the constraint passes
/// (`lambda_i = -omega C_i / (sum_k |grad_k C_i|^2 + eps)`).
///
/// Each pass solves every particle's constraint on its own and applies all the
/// corrections at once, so neighbouring corrections add up: about the rest lattice,
/// one unrelaxed pass over-corrects the shortest density waves by a factor of up to
/// `a_max = 2.64` in 3D and `2.02` in 2D (h = 2 s), and the velocity
/// `v = (p - x) / dt` carries that overshoot into the next step.
///
/// - [`Auto`](Self::Auto) (the default): `omega = min(1, (4/3) / a_max)`, computed from
///   the rest-lattice spectrum of the kernel and the CFM term (0.505 in 3D, 0.66 in 2D
///   at the defaults; [`Solver::relaxation`](crate::Solver::relaxation) reports it).
///   Every wave then shrinks or flips by at most a third per pass, so one or two
///   iterations per step and large time steps stay stable. Where the fluid is
///   compressed by more than 10% (`rho_i > 1.1 rho0`), a particle's multiplier uses
///   `omega 1.1 rho0 / rho_i`: a denser lattice has more neighbours whose corrections
///   add up (`a_max` 1.6 times as large at 2.2 times the rest density), and without
///   the scaling a deep pool squeezed at a large time step over-corrects from pass to
///   pass and boils (the glass of `pbf validate` at 1/60 s, 64,000 particles, 4
///   iterations: average |v|/h 13.4 per second unscaled, 8.6 scaled). Within 10% of
///   rest nothing changes.
/// - [`Fixed`](Self::Fixed)`(w)`, `w` in `(0, 1]`: `Fixed(1.0)` is the paper's
///   unrelaxed Jacobi pass. Long waves (the hydrostatic compression of a deep column)
///   converge `w` times as fast per iteration, so at a fixed iteration count a larger
///   `w` leaves less average density error (a 100k-particle dam break at 4 iterations:
///   1.5% unrelaxed, 3.2% with `Auto`), but with one or two iterations per step or a
///   large time step the shortest waves grow from step to step and the fluid boils or
///   blows up. [`Iterations::Adaptive`] recovers `Auto`'s accuracy by running more
///   iterations only where the error calls for them.
///
/// Values above 1 are rejected: this is a Jacobi solver, not Gauss-Seidel, and
/// over-relaxation, which speeds up Gauss-Seidel, makes every pass over-correct the
/// short waves further (by `w a_max - 1`, already 1.64 at `w = 1` in 3D) while only
/// the long waves gain; more iterations buy the same gain without the instability.
///
/// ```
/// use pbf_solver::{Params, Relaxation};
/// let p = Params::<3>::builder(0.05).relaxation(Relaxation::Fixed(1.0)).build()?;
/// assert_eq!(p.relaxation(), Relaxation::Fixed(1.0));
/// assert_eq!(Relaxation::default(), Relaxation::Auto);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Relaxation {
    /// `min(1, (4/3) / a_max)` from the rest lattice, times `1.1 rho0 / rho_i` where a
    /// particle is compressed by more than 10%.
    #[default]
    Auto,
    /// This value, in `(0, 1]`.
    Fixed(f32),
}

/// How the constraint iterations of a step combine (see [`ParamsBuilder::acceleration`]).
///
/// ```
/// use pbf_solver::{Acceleration, Params};
/// let p = Params::<3>::builder(0.05).acceleration(Acceleration::Chebyshev).build()?;
/// assert_eq!(p.acceleration(), Acceleration::Chebyshev);
/// assert_eq!(Acceleration::default(), Acceleration::None);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acceleration {
    /// Plain (relaxed) Jacobi: each iteration starts from the last one's positions.
    #[default]
    None,
    /// Chebyshev semi-iteration over the Jacobi passes: long density waves converge
    /// about twice as fast; needs [`Iterations::Fixed`] and [`Relaxation::Auto`].
    Chebyshev,
}

/// Which implementation of the neighbour passes runs.
///
/// All three give the same bits on every input (a test compares every particle over a
/// 3D and a 2D dam break): a lane holds one particle, which adds its neighbours' terms
/// in list order as the scalar path does. `Lanes` is the fastest, `Scalar` the
/// reference.
///
/// ```
/// use pbf_solver::Backend;
/// assert_eq!(Backend::default(), Backend::Lanes);
/// // 16 on a CPU with AVX-512F, else 8.
/// assert!([8, 16].contains(&Backend::Lanes.lane_width()));
/// assert_eq!(Backend::Lanes8.lane_width(), 8);
/// assert_eq!(Backend::Scalar.lane_width(), 1);
/// // Which instructions carry the lanes here ("avx512f", "avx", "f32x8" or "scalar").
/// println!("{}", Backend::Lanes.instructions());
/// assert_eq!(Backend::Scalar.instructions(), "scalar");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The widest lanes this CPU runs, checked at run time: sixteen particles at a
    /// time in one AVX-512 register where the CPU has AVX-512F, else eight as
    /// [`Backend::Lanes8`] runs them (the default).
    #[default]
    Lanes,
    /// Eight particles at a time, on every CPU: in one 256-bit AVX register where the
    /// CPU has AVX (checked at run time), else on `wide`'s `f32x8`, whose
    /// instructions the build's target features choose (two SSE2 registers in a
    /// default x86-64 build, NEON on aarch64). The AVX register's constraint phase
    /// takes about two thirds of the two SSE2 registers' time.
    /// A checkpoint records only whether the backend is `Scalar`, so this one restores
    /// as `Lanes`, which continues with the same bits.
    Lanes8,
    /// One particle and one neighbour at a time through the scalar reference of
    /// `pbf-kernels`.
    Scalar,
}

impl Backend {
    /// How many neighbours one instruction handles with this backend on this CPU.
    pub fn lane_width(self) -> usize {
        self.lane_kind().width()
    }

    /// The instructions that carry this backend's lanes on this CPU: `"avx512f"`
    /// (sixteen lanes), `"avx"` (eight in one register), `"f32x8"` (eight through
    /// `wide`, with the build's target features) or `"scalar"`.
    pub fn instructions(self) -> &'static str {
        self.lane_kind().name()
    }

    /// The lanes of `pbf-kernels` this backend runs on this CPU (the solver's passes
    /// are dispatched to them): always an available kind.
    ///
    /// ```
    /// use pbf_solver::Backend;
    /// use pbf_kernels::LaneKind;
    /// assert_eq!(Backend::Scalar.lane_kind(), LaneKind::Scalar);
    /// assert_eq!(Backend::Lanes.lane_kind(), LaneKind::widest());
    /// assert!(Backend::Lanes8.lane_kind().is_available());
    /// ```
    pub fn lane_kind(self) -> LaneKind {
        match self {
            Backend::Scalar => LaneKind::Scalar,
            Backend::Lanes => LaneKind::widest(),
            Backend::Lanes8 => LaneKind::widest_eight(),
        }
    }
}

/// The parameters of a solver in `D` dimensions. Build them with [`Params::builder`].
///
/// Lengths derive from the particle spacing `s`: the kernel radius is
/// `h = kernel_radius_rel * s`, the mass gives the rest lattice the rest density
/// ([`Params::mass`], close to `rest_density * s^D`). Parameters that
/// carry units are taken relative to `h` (the CFM relaxation `eps = cfm_rel / h^2`,
/// the vorticity strength `eps_v = vorticity_rel * h`), so a scene scaled by a factor
/// (positions, spacing, domain and gravity) behaves the same, scaled.
///
/// ```
/// use pbf_solver::Params;
/// let p = Params::<3>::builder(0.05).time_step(1.0 / 120.0).build()?;
/// assert_eq!(p.kernel_radius(), 0.1);
/// assert!((p.mass() - 1000.0 * 0.05f32.powi(3) / 1.0098).abs() < 1e-4);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Params<const D: usize> {
    pub(crate) spacing: f32,
    pub(crate) kernel_radius_rel: f32,
    pub(crate) rest_density: f32,
    pub(crate) time_step: f32,
    pub(crate) iterations: Iterations,
    pub(crate) gravity: [f32; D],
    pub(crate) cfm_rel: f32,
    pub(crate) s_corr_k: f32,
    pub(crate) s_corr_n: u32,
    pub(crate) s_corr_dq_rel: f32,
    pub(crate) xsph_c: f32,
    pub(crate) xsph_period: Option<f32>,
    pub(crate) vorticity_rel: f32,
    pub(crate) unilateral: bool,
    pub(crate) relaxation: Relaxation,
    pub(crate) backend: Backend,
    pub(crate) acceleration: Acceleration,
    pub(crate) coarse_correction: bool,
    pub(crate) keep_lists: bool,
    /// The particle mass, derived by [`ParamsBuilder::build`] from the other fields
    /// ([`rest_lattice_mass`]).
    pub(crate) mass: f32,
}

/// The mass that gives a particle inside a lattice at the rest spacing the rest density:
/// `rho0 s^D / sum_j s^D W(x_j)` over the lattice points `x_j` within h (the particle
/// itself included), the sum taken in `f64` in units of the spacing, so it depends on
/// `h / s` alone and a scaled scene gets the scaled mass.
///
/// `rho0 s^D` would be the mass if the kernel sum over the lattice were `1 / s^D`; at
/// h = 2 s it is 1.0% larger in 3D and 1.5% larger in 2D, so a block laid out at the
/// rest spacing would start compressed, and under the one-sided constraint, which
/// nothing opposes, that stored compression would blow a free block apart.
fn rest_lattice_mass<const D: usize>(
    spacing: f32,
    kernel_radius_rel: f32,
    rest_density: f32,
) -> f32 {
    let h = f64::from(kernel_radius_rel);
    let h2 = h * h;
    // poly6 in units of the spacing: 315 / (64 pi h^9) in 3D, 4 / (pi h^8) in 2D.
    let coefficient = if D == 2 {
        4.0 / (core::f64::consts::PI * h.powi(8))
    } else {
        315.0 / (64.0 * core::f64::consts::PI * h.powi(9))
    };
    let reach = h.ceil() as i64;
    let side = (2 * reach + 1) as usize;
    let mut sum = 0.0f64;
    for flat in 0..side.pow(D as u32) {
        let mut rest = flat;
        let mut r2 = 0.0f64;
        for _ in 0..D {
            let k = (rest % side) as i64 - reach;
            rest /= side;
            r2 += (k * k) as f64;
        }
        if r2 < h2 {
            sum += coefficient * (h2 - r2).powi(3);
        }
    }
    (f64::from(rest_density) * f64::from(spacing).powi(D as i32) / sum) as f32
}

impl<const D: usize> Params<D> {
    /// A builder with the defaults for particles at rest spacing `spacing`:
    ///
    /// | field | default | source |
    /// |---|---|---|
    /// | `kernel_radius_rel` | 2 (h = 2 s) | common PBF practice |
    /// | `rest_density` | 1000 | water, kg/m^3 |
    /// | `time_step` | 1/120 s | two substeps of a 60 Hz frame: at 1/60 s, 4 Jacobi iterations leave columns taller than about 30 particles badly compressed (measured: 100k-particle dam break, worst average density error 15% at 1/60 s, 2.7% at 1/120 s) |
    /// | `iterations` | `Fixed(4)` | the paper uses 2 to 6 |
    /// | `gravity` | 9.81 down the second axis (y) | |
    /// | `cfm_rel` | 0.1 (eps = 0.1/h^2) | constraint-force mixing, paper eq. 11 |
    /// | `s_corr_k`, `s_corr_n`, `s_corr_dq_rel` | 0.1, 4, 0.2 | paper eq. 13 |
    /// | `xsph_c` | 0.01 | paper eq. 17 |
    /// | `xsph_period` | `Some(1/120)`: `xsph_c` is the blend per 1/120 s, whatever the time step | see [`ParamsBuilder::xsph_period`] |
    /// | `vorticity_rel` | 0.1 per second | paper eq. 16, relative to h |
    /// | `unilateral` | true: only compression is corrected | see [`ParamsBuilder::unilateral`] |
    /// | `relaxation` | `Auto`: `min(1, (4/3) / a_max)` (0.505 in 3D, 0.66 in 2D) | see [`Relaxation`] |
    /// | `backend` | `Lanes` | |
    /// | `acceleration` | `None` (plain Jacobi) | see [`ParamsBuilder::acceleration`] |
    /// | `coarse_correction` | `true` | see [`ParamsBuilder::coarse_correction`] |
    /// | `keep_lists` | `true`: a step keeps the last step's neighbour lists while they hold every pair within h | see [`ParamsBuilder::keep_lists`] |
    ///
    /// ```
    /// let b = pbf_solver::Params::<2>::builder(0.1);
    /// assert_eq!(b.build()?.gravity(), [0.0, -9.81]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn builder(spacing: f32) -> ParamsBuilder<D> {
        let mut gravity = [0.0; D];
        if D >= 2 {
            gravity[1] = -9.81;
        }
        ParamsBuilder {
            params: Params {
                spacing,
                kernel_radius_rel: 2.0,
                rest_density: 1000.0,
                time_step: 1.0 / 120.0,
                iterations: Iterations::Fixed(4),
                gravity,
                cfm_rel: 0.1,
                s_corr_k: 0.1,
                s_corr_n: 4,
                s_corr_dq_rel: 0.2,
                xsph_c: 0.01,
                xsph_period: Some(XSPH_PERIOD),
                vorticity_rel: 0.1,
                unilateral: true,
                relaxation: Relaxation::Auto,
                backend: Backend::Lanes,
                acceleration: Acceleration::None,
                coarse_correction: true,
                keep_lists: true,
                mass: 0.0,
            },
        }
    }

    /// A builder that starts from these parameters.
    ///
    /// ```
    /// # use pbf_solver::Params;
    /// let p = Params::<3>::builder(0.1).build()?;
    /// let q = p.to_builder().time_step(0.01).build()?;
    /// assert_eq!(q.time_step(), 0.01);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn to_builder(&self) -> ParamsBuilder<D> {
        ParamsBuilder {
            params: self.clone(),
        }
    }

    /// Particle rest spacing `s`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.spacing(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn spacing(&self) -> f32 {
        self.spacing
    }
    /// Kernel radius `h = kernel_radius_rel * s`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.kernel_radius(), 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn kernel_radius(&self) -> f32 {
        self.kernel_radius_rel * self.spacing
    }
    /// Particle mass: the mass that gives a particle inside a lattice at the rest
    /// spacing the rest density, `rho0 / sum_j W(x_j)` over the lattice points within
    /// h (itself included). That is close to `rest_density * s^D` (1.5% less in 2D,
    /// 1.0% less in 3D at h = 2 s), which it would be if the kernel summed to exactly
    /// `1 / s^D` over the lattice; so a block laid out at the rest spacing starts at
    /// the rest density, neither compressed nor stretched.
    ///
    /// ```
    /// let p = pbf_solver::Params::<2>::builder(0.1).build()?;
    /// assert!((p.mass() - 10.0 / 1.0146).abs() < 1e-3);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn mass(&self) -> f32 {
        self.mass
    }
    /// Rest density `rho0`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.rest_density(), 1000.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn rest_density(&self) -> f32 {
        self.rest_density
    }
    /// Time step in seconds.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.time_step(), 1.0 / 120.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn time_step(&self) -> f32 {
        self.time_step
    }
    /// The iteration mode.
    ///
    /// ```
    /// use pbf_solver::{Iterations, Params};
    /// assert_eq!(Params::<3>::builder(0.1).build()?.iterations(), Iterations::Fixed(4));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn iterations(&self) -> Iterations {
        self.iterations
    }
    /// Gravity (an acceleration).
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.gravity(), [0.0, -9.81, 0.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn gravity(&self) -> [f32; D] {
        self.gravity
    }
    /// The CFM relaxation `eps = cfm_rel / h^2` added to the denominator of lambda.
    ///
    /// ```
    /// let p = pbf_solver::Params::<3>::builder(0.5).cfm_rel(1.0).build()?;
    /// assert_eq!(p.cfm_epsilon(), 1.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn cfm_epsilon(&self) -> f32 {
        let h = self.kernel_radius();
        self.cfm_rel / (h * h)
    }
    /// The vorticity confinement strength `eps_v = vorticity_rel * h` (length per second).
    ///
    /// ```
    /// let p = pbf_solver::Params::<3>::builder(0.5).vorticity_rel(0.2).build()?;
    /// assert_eq!(p.vorticity_epsilon(), 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn vorticity_epsilon(&self) -> f32 {
        self.vorticity_rel * self.kernel_radius()
    }
    /// The tensile-instability term's `(k, n, dq_rel)`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.s_corr(), (0.1, 4, 0.2));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn s_corr(&self) -> (f32, u32, f32) {
        (self.s_corr_k, self.s_corr_n, self.s_corr_dq_rel)
    }
    /// The XSPH viscosity constant `c`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.xsph_c(), 0.01);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn xsph_c(&self) -> f32 {
        self.xsph_c
    }
    /// The time over which [`xsph_c`](Self::xsph_c) blends (`None`: per step).
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.xsph_period(), Some(1.0 / 120.0));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn xsph_period(&self) -> Option<f32> {
        self.xsph_period
    }
    /// The XSPH blend one step applies: `1 - (1 - c)^(dt / period)` with `c` =
    /// [`xsph_c`](Self::xsph_c), so that `1 / dt` steps blend as much as `1 / period`
    /// periods (the same viscosity at every time step); `c` itself when the period is
    /// `None`.
    ///
    /// ```
    /// use pbf_solver::Params;
    /// let at_120 = Params::<3>::builder(0.1).build()?;
    /// assert!((at_120.xsph_per_step() - 0.01).abs() < 1e-7);
    /// // Four times the step: four periods' blend, 1 - 0.99^4.
    /// let at_30 = Params::<3>::builder(0.1).time_step(1.0 / 30.0).build()?;
    /// assert!((at_30.xsph_per_step() - 0.0394).abs() < 1e-4);
    /// let literal = Params::<3>::builder(0.1).time_step(1.0 / 30.0).xsph_period(None).build()?;
    /// assert_eq!(literal.xsph_per_step(), 0.01);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn xsph_per_step(&self) -> f32 {
        match self.xsph_period {
            None => self.xsph_c,
            Some(period) => {
                let periods = f64::from(self.time_step) / f64::from(period);
                (1.0 - (1.0 - f64::from(self.xsph_c)).powf(periods)) as f32
            }
        }
    }
    /// The vorticity strength relative to `h`, per second.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.vorticity_rel(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn vorticity_rel(&self) -> f32 {
        self.vorticity_rel
    }
    /// The CFM relaxation relative to `h^2`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.cfm_rel(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn cfm_rel(&self) -> f32 {
        self.cfm_rel
    }
    /// `h / s`.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Params::<3>::builder(0.1).build()?.kernel_radius_rel(), 2.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn kernel_radius_rel(&self) -> f32 {
        self.kernel_radius_rel
    }
    /// Whether only compression is corrected.
    ///
    /// ```
    /// assert!(pbf_solver::Params::<3>::builder(0.1).build()?.unilateral());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn unilateral(&self) -> bool {
        self.unilateral
    }
    /// The Jacobi relaxation setting ([`Relaxation`]); the value a solver resolves
    /// `Auto` to is [`Solver::relaxation`](crate::Solver::relaxation).
    ///
    /// ```
    /// use pbf_solver::{Params, Relaxation};
    /// assert_eq!(Params::<3>::builder(0.1).build()?.relaxation(), Relaxation::Auto);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn relaxation(&self) -> Relaxation {
        self.relaxation
    }
    /// The pass implementation.
    ///
    /// ```
    /// use pbf_solver::{Backend, Params};
    /// assert_eq!(Params::<3>::builder(0.1).build()?.backend(), Backend::Lanes);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn backend(&self) -> Backend {
        self.backend
    }
    /// How the iterations combine.
    ///
    /// ```
    /// use pbf_solver::{Acceleration, Params};
    /// assert_eq!(Params::<3>::builder(0.1).build()?.acceleration(), Acceleration::None);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn acceleration(&self) -> Acceleration {
        self.acceleration
    }
    /// Whether each step starts with the coarse density correction (see
    /// [`ParamsBuilder::coarse_correction`]).
    ///
    /// ```
    /// use pbf_solver::Params;
    /// assert!(Params::<3>::builder(0.1).build()?.coarse_correction());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn coarse_correction(&self) -> bool {
        self.coarse_correction
    }
    /// Whether a step may keep the last step's neighbour lists (see
    /// [`ParamsBuilder::keep_lists`]).
    ///
    /// ```
    /// use pbf_solver::Params;
    /// assert!(Params::<3>::builder(0.1).build()?.keep_lists());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn keep_lists(&self) -> bool {
        self.keep_lists
    }
}

/// Builder of [`Params`]; [`build`](Self::build) validates every field.
///
/// ```
/// use pbf_solver::{CoreError, Params};
/// let err = Params::<3>::builder(0.1).time_step(-1.0).build().unwrap_err();
/// assert!(matches!(err, CoreError::InvalidParameter { field: "time_step", .. }));
/// ```
#[derive(Debug, Clone)]
pub struct ParamsBuilder<const D: usize> {
    params: Params<D>,
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
        /// fluid at every time step. Measured (the glass of the stability experiment,
        /// 4096 and 8000 particles, dt = 1/30 s): per step, the settled fluid keeps
        /// boiling at |v|/h 13-19 per second; with the period, 6-9 at 4 iterations.
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
        /// under plain Jacobi. Measured at 4 iterations: a 30k dam break at the
        /// scene's time step, average density error 1.2 / 0.57 / 0.41% at steps 50 /
        /// 100 / 300 against 3.3 / 1.3 / 0.94% (max 4.5% against 11%); a column 40
        /// particles deep at rest, 2.4% against 5.2% (8 iterations: 0.52% against
        /// 2.5%, what plain Jacobi needs 32 for). The cost: one blend per iteration
        /// (no neighbour pass). The trade-off: at large time steps the glasses of the
        /// stability experiment boil more than under plain Jacobi (4,096 particles at
        /// 1/30 s and 4 iterations: |v|/h 11.6 per second against 6.0).
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
        /// its own weight. Measured (the glass of `pbf validate`'s stability
        /// experiment, 64,000 particles, dt = 1/30 s, g/h = 196.2, 2 iterations):
        /// average density error 0.42% against 1468%, |v|/h 6.0 per second against
        /// 35.9, no particle out of the glass. The cost: one pass over the particles
        /// to spread them on the grid and one to move them, and a conjugate-gradient
        /// solve on a grid of about one cell per 64 particles (3D); on the 97k-particle
        /// dam break (two threads) 4.2 ms of a 57 ms step
        /// ([`PhaseTimes::coarse`](crate::PhaseTimes::coarse)), while the neighbour
        /// searches fell from 1.85 to 1.0 per step.
        ///
        /// It is on by default because without it the fluid is not incompressible at
        /// depth, and the compression the passes leave is stored energy: a released
        /// column gives it back as motion, so the total of kinetic and potential
        /// energy rose after the release (a column 32 particles deep in a closed box,
        /// 4 iterations: by 1.6% of `M g a` without it; with it, never above its start
        /// at 1 to 64 iterations).
        ///
        /// Momentum: the passes' position deltas are sums of antisymmetric pair terms
        /// and keep the centre of mass; the correction's displacement is a grid
        /// gradient interpolated to the particles. So each connected body of fluid
        /// that no wall touches has its particles' mean displacement taken out, and
        /// keeps its centre of mass; a body that touches a wall keeps the whole
        /// displacement, the wall taking the momentum as it does in the passes.
        ///
        /// The grid covers the domain (the particles' bounding box where the domain is
        /// much larger than the fluid); a step whose spray would stretch even that
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
        /// A fluid at rest then searches only when its drift adds up: measured, the
        /// step of a settled glass of 21k particles 15-18% faster on one thread
        /// (14.5-14.8 against 17.4-17.6 ms), the settled 10k dam break 37% faster on
        /// two. A fluid in motion searches every step either way. `false` searches at
        /// the start of every step, as before this option existed: a steadier cost a
        /// step (a real-time budget), and the same work a step for benchmarks.
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
