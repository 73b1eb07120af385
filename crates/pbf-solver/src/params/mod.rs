//! Solver parameters, with the defaults of the sources: [`Params`] and its derived
//! values here; the choices they hold (`options.rs`) and the validating builder
//! (`builder.rs`) in files of their own.

mod builder;
mod options;

pub use builder::ParamsBuilder;
pub use options::{Acceleration, Backend, Iterations, Relaxation};

/// The default period of the XSPH blend, in seconds ([`ParamsBuilder::xsph_period`]):
/// the default time step, so that at 1/120 s the blend is the paper's `c` per step.
pub const XSPH_PERIOD: f32 = 1.0 / 120.0;

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
    pub(crate) viscosity: f32,
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
    /// | `time_step` | 1/120 s | two substeps of a 60 Hz frame: at 1/60 s, 4 Jacobi iterations leave columns taller than about 30 particles badly compressed |
    /// | `iterations` | `Fixed(4)` | the paper uses 2 to 6 |
    /// | `gravity` | 9.81 down the second axis (y) | |
    /// | `cfm_rel` | 0.1 (eps = 0.1/h^2) | constraint-force mixing, paper eq. 11 |
    /// | `s_corr_k`, `s_corr_n`, `s_corr_dq_rel` | 0.1, 4, 0.2 | paper eq. 13 |
    /// | `xsph_c` | 0.01 | paper eq. 17 |
    /// | `xsph_period` | `Some(1/120)`: `xsph_c` is the blend per 1/120 s, whatever the time step | see [`ParamsBuilder::xsph_period`] |
    /// | `vorticity_rel` | 0.1 per second | paper eq. 16, relative to h |
    /// | `viscosity` | 0 m^2/s: no physical viscosity (XSPH only) | see [`ParamsBuilder::viscosity`] |
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
                viscosity: 0.0,
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
    /// The kinematic viscosity `nu` in m^2/s (0: off).
    ///
    /// ```
    /// let p = pbf_solver::Params::<2>::builder(0.01).viscosity(1e-6).build()?;
    /// assert_eq!(p.viscosity(), 1e-6);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn viscosity(&self) -> f32 {
        self.viscosity
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
