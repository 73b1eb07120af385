//! Flows with known answers, to check the physics against: the scenes the tests and
//! `pbf validate` share.

use crate::{Backend, CoreError, Domain, Params, Solver, Wall};

/// A decaying shear wave in a 2D channel: `v_x = A f(y)` between two walls `H` apart,
/// no gravity, no XSPH, no vorticity confinement. By the diffusion equation its
/// amplitude decays as `exp(-nu k^2 t)`, with `n` half waves across the channel
/// (`k = n pi / H`): between free-slip walls the mode `f = cos(k y)`, between no-slip
/// walls `f = sin(k y)`. [`ShearWave::with_decay`] takes the free-slip channel's
/// slowest mode (`n = 1`) and the no-slip channel's slowest without a net flow
/// (`n = 2`); [`ShearWave::with_mode`] any `n`. The channel is periodic along x, `2 H`
/// long: no end disturbs the flow, and the amplitude is fitted over every particle.
///
/// ```
/// use pbf_solver::{Backend, Wall, flows::ShearWave};
/// let wave = ShearWave::with_decay(8, Wall::NoSlip, 1.0 / 120.0);
/// assert!((wave.decay_rate() * (1.0 / 120.0) - 0.01).abs() < 1e-6);
/// let mut s = wave.solver(Backend::Lanes)?;
/// let start = wave.amplitude_of(&s);
/// s.step()?;
/// assert!(wave.amplitude_of(&s) < start);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShearWave {
    /// Particles across the channel (`H = rows s`).
    pub rows: usize,
    /// The condition of the two walls.
    pub wall: Wall,
    /// Half waves across the channel, `n` in `k = n pi / H` (at least 1).
    pub half_waves: u32,
    /// The kinematic viscosity in m^2/s.
    pub nu: f32,
    /// The amplitude `A` in m/s.
    pub amplitude: f32,
    /// The time step.
    pub time_step: f32,
}

impl ShearWave {
    /// The particle spacing of every shear wave.
    pub const SPACING: f32 = 0.01;

    /// The wave whose decay per step `nu k^2 dt` is 0.01 (about a half in 60 steps)
    /// and whose Reynolds number `A / (nu k)` is 1: one half wave between free-slip
    /// walls, two (no net flow) between no-slip walls.
    pub fn with_decay(rows: usize, wall: Wall, time_step: f32) -> Self {
        let half_waves = match wall {
            Wall::FreeSlip => 1,
            Wall::NoSlip => 2,
        };
        Self::with_mode(rows, wall, half_waves, time_step)
    }

    /// As [`with_decay`](Self::with_decay), with `half_waves` half waves across the
    /// channel. With 0 there is no wave: the viscosity is infinite and
    /// [`solver`](Self::solver) refuses it.
    ///
    /// ```
    /// use pbf_solver::{Wall, flows::ShearWave};
    /// let slowest = ShearWave::with_mode(16, Wall::NoSlip, 1, 1.0 / 120.0);
    /// let free = ShearWave::with_decay(16, Wall::FreeSlip, 1.0 / 120.0);
    /// assert_eq!(slowest.wavenumber(), free.wavenumber());
    /// assert!(slowest.mode(0.0).abs() < 1e-6 && slowest.mode(slowest.height()).abs() < 1e-6);
    /// assert!(ShearWave::with_mode(16, Wall::NoSlip, 0, 1.0 / 120.0)
    ///     .solver(pbf_solver::Backend::Lanes)
    ///     .is_err());
    /// ```
    pub fn with_mode(rows: usize, wall: Wall, half_waves: u32, time_step: f32) -> Self {
        let mut wave = Self {
            rows,
            wall,
            half_waves,
            nu: 0.0,
            amplitude: 0.0,
            time_step,
        };
        let k = wave.wavenumber();
        wave.nu = 0.01 / (k * k * time_step);
        wave.amplitude = wave.nu * k;
        wave
    }

    /// The channel's height `H`.
    pub fn height(&self) -> f32 {
        self.rows as f32 * Self::SPACING
    }

    /// The mode's wavenumber `k = n pi / H`.
    pub fn wavenumber(&self) -> f32 {
        self.half_waves as f32 * core::f32::consts::PI / self.height()
    }

    /// The analytic decay rate `nu k^2`, per second.
    pub fn decay_rate(&self) -> f32 {
        self.nu * self.wavenumber() * self.wavenumber()
    }

    /// The mode `f(y)`.
    pub fn mode(&self, y: f32) -> f32 {
        let phase = self.wavenumber() * y;
        match self.wall {
            Wall::FreeSlip => phase.cos(),
            Wall::NoSlip => phase.sin(),
        }
    }

    /// The channel filled at the rest spacing, with the wave's velocities.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`] for a bad viscosity or time step.
    pub fn solver(&self, backend: Backend) -> Result<Solver<2>, CoreError> {
        let s = Self::SPACING;
        let params = Params::<2>::builder(s)
            .time_step(self.time_step)
            .gravity([0.0, 0.0])
            .xsph_c(0.0)
            .vorticity_rel(0.0)
            .viscosity(self.nu)
            .coarse_correction(false)
            .backend(backend)
            .build()?;
        let (height, length) = (self.height(), 2.0 * self.height());
        let domain = Domain::new([0.0; 2], [length, height])?
            .with_walls([[Wall::FreeSlip; 2], [self.wall; 2]])
            .with_periodic([true, false])?;
        let mut solver = Solver::new(params, domain)?;
        let mut points = Vec::new();
        let mut velocities = Vec::new();
        for i in 0..2 * self.rows {
            for j in 0..self.rows {
                let p = [(i as f32 + 0.5) * s, (j as f32 + 0.5) * s];
                points.push(p);
                velocities.push([self.amplitude * self.mode(p[1]), 0.0]);
            }
        }
        solver.add_particles(&points, Some(&velocities))?;
        Ok(solver)
    }

    /// The mode's amplitude in the horizontal velocities (a least-squares fit of
    /// `A f(y)` over every particle).
    pub fn amplitude_of(&self, solver: &Solver<2>) -> f64 {
        let (p, v) = (solver.positions(), solver.velocities());
        let (mut along, mut norm) = (0.0f64, 0.0f64);
        for i in 0..solver.len() {
            let f = f64::from(self.mode(p[1][i]));
            along += f64::from(v[0][i]) * f;
            norm += f * f;
        }
        along / norm
    }
}

/// Plane Poiseuille flow: a 2D channel periodic along x between two no-slip plates `H`
/// apart, driven by a body force `g` along x (gravity's place), no XSPH, no
/// vorticity confinement. From rest it settles to the parabola
/// `u(y) = g / (2 nu) y (H - y)`, whose peak is `U = g H^2 / (8 nu)`; the Reynolds
/// number is `U H / nu`. The slowest transient decays as `exp(-pi^2 nu t / H^2)`.
///
/// ```
/// use pbf_solver::{Backend, flows::Poiseuille};
/// let flow = Poiseuille::new(8, 1.0, 0.02, 1.0 / 30.0);
/// assert!((flow.reynolds() - 1.0).abs() < 1e-5);
/// let mut s = flow.solver(Backend::Lanes)?;
/// s.step()?;
/// assert!(s.velocities()[0].iter().all(|&u| u >= 0.0));
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Poiseuille {
    /// Particles across the channel (`H = rows s`).
    pub rows: usize,
    /// The kinematic viscosity in m^2/s.
    pub nu: f32,
    /// The body force along x in m/s^2.
    pub force: f32,
    /// The time step.
    pub time_step: f32,
}

impl Poiseuille {
    /// The particle spacing of every channel.
    pub const SPACING: f32 = 0.01;

    /// The channel of `rows` particles across whose steady flow has the peak speed
    /// `peak` (m/s) at the Reynolds number `reynolds`.
    pub fn new(rows: usize, reynolds: f32, peak: f32, time_step: f32) -> Self {
        let height = rows as f32 * Self::SPACING;
        let nu = peak * height / reynolds;
        Self {
            rows,
            nu,
            force: 8.0 * nu * peak / (height * height),
            time_step,
        }
    }

    /// The distance `H` between the plates.
    pub fn height(&self) -> f32 {
        self.rows as f32 * Self::SPACING
    }

    /// The steady flow's peak speed `U = g H^2 / (8 nu)`.
    pub fn peak(&self) -> f32 {
        self.force * self.height() * self.height() / (8.0 * self.nu)
    }

    /// `U H / nu`.
    pub fn reynolds(&self) -> f32 {
        self.peak() * self.height() / self.nu
    }

    /// The steady velocity `u(y)`.
    pub fn profile(&self, y: f32) -> f32 {
        self.force / (2.0 * self.nu) * y * (self.height() - y)
    }

    /// The time after which the slowest transient from rest has fallen below 0.3% of
    /// the peak: `0.6 H^2 / nu`.
    pub fn settling_time(&self) -> f64 {
        0.6 * f64::from(self.height()).powi(2) / f64::from(self.nu)
    }

    /// The channel (16 spacings long, periodic along x) filled at the rest spacing, at
    /// rest.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`].
    pub fn solver(&self, backend: Backend) -> Result<Solver<2>, CoreError> {
        self.channel(backend, 16)
    }

    /// The channel `columns` spacings long (periodic along x) filled at the rest
    /// spacing, at rest.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`]; a channel shorter than three kernel
    /// radii (`domain.periodic`).
    pub fn channel(&self, backend: Backend, columns: usize) -> Result<Solver<2>, CoreError> {
        let plates = Channel {
            rows: self.rows,
            columns,
            nu: self.nu,
            time_step: self.time_step,
        };
        plates.solver([self.force, 0.0], 0.0, backend)
    }

    /// The L2 deviation of the particles' x velocities from the steady profile at
    /// their heights, relative to the peak:
    /// `sqrt(mean (u_i - u(y_i))^2) / U`.
    pub fn profile_error(&self, solver: &Solver<2>) -> f64 {
        l2_deviation(solver, |y| f64::from(self.profile(y))) / f64::from(self.peak())
    }
}

/// Couette flow starting up: a 2D channel periodic along x between two no-slip plates
/// `H` apart, the fluid at rest until the top plate starts sliding along x at the
/// speed `U` ([`Domain::with_wall_velocity`]); no gravity, no XSPH, no vorticity
/// confinement. By the diffusion equation the velocity is the series
/// `u(y, t) = U y / H - (2 U / pi) sum_n (-1)^(n+1) / n sin(n pi y / H)
/// exp(-n^2 pi^2 nu t / H^2)`, which settles to the line `U y / H`. The time step
/// is `0.002 H^2 / nu`.
///
/// ```
/// use pbf_solver::{Backend, flows::Couette};
/// let flow = Couette::new(8, 1.0, 0.02);
/// assert!((flow.reynolds() - 1.0).abs() < 1e-5);
/// // At rest at the start; the line once the start-up has diffused across.
/// assert_eq!(flow.velocity(0.04, 0.0), 0.0);
/// let late = 10.0 * flow.diffusion_time();
/// assert!((flow.velocity(0.04, late) - 0.01).abs() < 1e-9);
/// // Just after the start the plate has dragged only the fluid next to it.
/// assert!(flow.velocity(0.04, 1e-9).abs() < 1e-9);
/// let mut s = flow.solver(Backend::Lanes)?;
/// s.step()?;
/// assert!(s.velocities()[0].iter().any(|&u| u > 0.0));
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Couette {
    /// Particles across the channel (`H = rows s`).
    pub rows: usize,
    /// The kinematic viscosity in m^2/s.
    pub nu: f32,
    /// The top plate's speed `U` in m/s.
    pub speed: f32,
    /// The time step.
    pub time_step: f32,
}

impl Couette {
    /// The particle spacing of every channel.
    pub const SPACING: f32 = 0.01;

    /// The channel of `rows` particles across whose top plate slides at `speed`
    /// (m/s), at the Reynolds number `U H / nu` of `reynolds`.
    pub fn new(rows: usize, reynolds: f32, speed: f32) -> Self {
        let height = rows as f32 * Self::SPACING;
        let nu = speed * height / reynolds;
        Self {
            rows,
            nu,
            speed,
            time_step: 0.002 * height * height / nu,
        }
    }

    /// The distance `H` between the plates.
    pub fn height(&self) -> f32 {
        self.rows as f32 * Self::SPACING
    }

    /// `U H / nu`.
    pub fn reynolds(&self) -> f32 {
        self.speed * self.height() / self.nu
    }

    /// The viscous diffusion time across the channel, `H^2 / nu`.
    pub fn diffusion_time(&self) -> f64 {
        f64::from(self.height()).powi(2) / f64::from(self.nu)
    }

    /// The analytic velocity `u(y, t)` of the series: 0 at `t <= 0` below the
    /// top plate, the terms summed until their decay factor is below `1e-15` (at
    /// most a million terms, which a time below about `1e-11 H^2 / nu` would need
    /// more of).
    pub fn velocity(&self, y: f32, t: f64) -> f64 {
        let (y, height, speed) = (
            f64::from(y),
            f64::from(self.height()),
            f64::from(self.speed),
        );
        if t <= 0.0 {
            return if y >= height { speed } else { 0.0 };
        }
        let pi = core::f64::consts::PI;
        let tau = pi * pi * t / self.diffusion_time();
        let mut sum = 0.0;
        for n in 1..=MAX_SERIES_TERMS {
            let n = f64::from(n);
            let decay = (-n * n * tau).exp();
            if decay < 1e-15 {
                break;
            }
            let sign = if n % 2.0 == 1.0 { 1.0 } else { -1.0 };
            sum += sign / n * (n * pi * y / height).sin() * decay;
        }
        speed * (y / height - 2.0 / pi * sum)
    }

    /// The channel (16 spacings long, periodic along x) filled at the rest spacing, at
    /// rest, its top plate sliding.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`].
    pub fn solver(&self, backend: Backend) -> Result<Solver<2>, CoreError> {
        self.channel(backend, 16)
    }

    /// The channel `columns` spacings long (periodic along x) filled at the rest
    /// spacing, at rest, its top plate sliding.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`]; a channel shorter than three kernel
    /// radii (`domain.periodic`).
    pub fn channel(&self, backend: Backend, columns: usize) -> Result<Solver<2>, CoreError> {
        let plates = Channel {
            rows: self.rows,
            columns,
            nu: self.nu,
            time_step: self.time_step,
        };
        plates.solver([0.0; 2], self.speed, backend)
    }

    /// The L2 deviation of the particles' x velocities from the series at their
    /// heights and the solver's time, relative to `U`:
    /// `sqrt(mean (u_i - u(y_i, t))^2) / U`.
    pub fn profile_error(&self, solver: &Solver<2>) -> f64 {
        let t = solver.time();
        l2_deviation(solver, |y| self.velocity(y, t)) / f64::from(self.speed)
    }
}

/// The most terms [`Couette::velocity`] sums.
const MAX_SERIES_TERMS: u32 = 1_000_000;

/// A 2D channel periodic along x between no-slip plates, filled at rest at the
/// flows' spacing: no XSPH, no vorticity confinement, no coarse correction (no
/// gravity across the channel squeezes it, and the checks are of the viscosity
/// alone).
struct Channel {
    /// Particles across (`H = rows s`).
    rows: usize,
    /// Particles along (the period is `columns s`).
    columns: usize,
    nu: f32,
    time_step: f32,
}

impl Channel {
    /// The solver with the body force `force` and the top plate sliding along x at
    /// `top` (0: at rest).
    fn solver(&self, force: [f32; 2], top: f32, backend: Backend) -> Result<Solver<2>, CoreError> {
        let s = Poiseuille::SPACING;
        let params = Params::<2>::builder(s)
            .time_step(self.time_step)
            .gravity(force)
            .xsph_c(0.0)
            .vorticity_rel(0.0)
            .viscosity(self.nu)
            .coarse_correction(false)
            .backend(backend)
            .build()?;
        let hi = [self.columns as f32 * s, self.rows as f32 * s];
        let mut domain = Domain::new([0.0; 2], hi)?
            .with_walls([[Wall::FreeSlip; 2], [Wall::NoSlip; 2]])
            .with_periodic([true, false])?;
        if top != 0.0 {
            domain = domain.with_wall_velocity(1, 1, [top, 0.0])?;
        }
        let mut solver = Solver::new(params, domain)?;
        solver.add_block([0.0; 2], hi, [0.0; 2])?;
        Ok(solver)
    }
}

/// `sqrt(mean (u_i - u(y_i))^2)` over the particles' x velocities `u_i` and heights
/// `y_i`.
fn l2_deviation(solver: &Solver<2>, u: impl Fn(f32) -> f64) -> f64 {
    let (p, v) = (solver.positions(), solver.velocities());
    let n = solver.len().max(1);
    let sum: f64 = (0..solver.len())
        .map(|i| (f64::from(v[0][i]) - u(p[1][i])).powi(2))
        .sum();
    (sum / n as f64).sqrt()
}
