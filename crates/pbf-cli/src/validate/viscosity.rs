//! Physical viscosity: shear waves decaying between free-slip and no-slip walls
//! against the diffusion equation's `exp(-nu k^2 t)`, plane Poiseuille flow against
//! its parabola and Couette flow starting up against its series.

use pbf_solver::flows::{Couette, Poiseuille, ShearWave};
use pbf_solver::{Backend, CoreError, Wall};

/// The relative deviation of the measured decay rate from `nu k^2` that a run may
/// have: stated before the run (the backward-Euler step's own error at
/// `nu k^2 dt = 0.01` is 0.5%; the rest is the SPH discretisation of the mode and of
/// the walls).
pub const DECAY_TOLERANCE: f64 = 0.10;

/// One shear wave's decay.
///
/// ```
/// use pbf_cli::validate::shear_decay;
/// let r = shear_decay(8, pbf_solver::Wall::FreeSlip, 1, 10)?;
/// assert_eq!(r.trace.len(), 11);
/// assert!(r.measured > 0.0 && r.analytic > 0.0);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ShearDecay {
    /// The walls.
    pub wall: Wall,
    /// Half waves across the channel (`k = n pi / H`).
    pub half_waves: u32,
    /// Particles across the channel.
    pub rows: usize,
    /// Particles simulated.
    pub particles: usize,
    /// `nu k^2`, per second.
    pub analytic: f64,
    /// The decay rate measured over the run, per second.
    pub measured: f64,
    /// `(t, A(t) / A(0))` at every step, from t = 0.
    pub trace: Vec<(f64, f64)>,
    /// The most conjugate-gradient iterations of a step.
    pub most_iterations: u32,
}

impl ShearDecay {
    /// The measured rate's relative deviation from the analytic one.
    pub fn error(&self) -> f64 {
        self.measured / self.analytic - 1.0
    }
}

/// Runs [`ShearWave::with_mode`] at 1/120 s for `steps` steps.
///
/// # Errors
/// A [`CoreError`] from the solver ([`CoreError::InvalidParameter`] for 0 half waves).
pub fn shear_decay(
    rows: usize,
    wall: Wall,
    half_waves: u32,
    steps: usize,
) -> Result<ShearDecay, CoreError> {
    let wave = ShearWave::with_mode(rows, wall, half_waves, 1.0 / 120.0);
    let mut s = wave.solver(Backend::Lanes)?;
    let start = wave.amplitude_of(&s);
    let mut trace = vec![(0.0, 1.0)];
    let mut most_iterations = 0;
    for _ in 0..steps {
        let d = s.step()?;
        most_iterations = most_iterations.max(d.viscosity_iterations);
        trace.push((s.time(), wave.amplitude_of(&s) / start));
    }
    let (t, ratio) = trace[trace.len() - 1];
    Ok(ShearDecay {
        wall,
        half_waves,
        rows,
        particles: s.len(),
        analytic: f64::from(wave.decay_rate()),
        measured: -ratio.ln() / t.max(f64::MIN_POSITIVE),
        trace,
        most_iterations,
    })
}

/// The deviation from the parabola that a Poiseuille run may have: stated before the
/// run (L2 over the particles, relative to the peak).
pub const POISEUILLE_TOLERANCE: f64 = 0.02;

/// One plane Poiseuille flow settled from rest.
///
/// ```
/// use pbf_cli::validate::poiseuille;
/// let r = poiseuille(8, 0.1)?;
/// assert!(r.steps > 0 && r.error.is_finite());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PoiseuilleRun {
    /// Particles across the channel.
    pub rows: usize,
    /// `U H / nu`.
    pub reynolds: f32,
    /// Steps run (the settling time `0.6 H^2 / nu` at 1/30 s).
    pub steps: usize,
    /// The L2 deviation from the parabola, relative to the peak.
    pub error: f64,
    /// `(y / H, u / U)` of every particle at the end, and the analytic profile
    /// sampled the same way.
    pub profile: Vec<(f64, f64)>,
}

/// Runs [`Poiseuille::new`] (peak 0.02 m/s, 1/30 s steps) from rest for its
/// settling time.
///
/// # Errors
/// A [`CoreError`] from the solver.
pub fn poiseuille(rows: usize, reynolds: f32) -> Result<PoiseuilleRun, CoreError> {
    let flow = Poiseuille::new(rows, reynolds, 0.02, 1.0 / 30.0);
    let mut s = flow.solver(Backend::Lanes)?;
    let steps = (flow.settling_time() / f64::from(flow.time_step)).ceil() as usize;
    for _ in 0..steps {
        s.step()?;
    }
    let (height, peak) = (f64::from(flow.height()), f64::from(flow.peak()));
    let profile = (0..s.len())
        .map(|i| {
            let (y, u) = (s.positions()[1][i], s.velocities()[0][i]);
            (f64::from(y) / height, f64::from(u) / peak)
        })
        .collect();
    Ok(PoiseuilleRun {
        rows,
        reynolds,
        steps,
        error: flow.profile_error(&s),
        profile,
    })
}

/// The deviation from the series that a Couette run may have at each time: stated
/// before the run (L2 over the particles, relative to the plate's speed).
pub const COUETTE_TOLERANCE: f64 = 0.02;

/// The times a Couette run is compared with the series at, in units of `H^2 / nu`.
pub const COUETTE_TIMES: [f64; 3] = [0.02, 0.1, 0.5];

/// One Couette flow starting up, compared with the series at [`COUETTE_TIMES`].
///
/// ```
/// use pbf_cli::validate::couette;
/// let r = couette(8)?;
/// assert!(r.errors.iter().all(|e| e.is_finite()));
/// assert_eq!(r.profiles.len(), 3);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CouetteRun {
    /// Particles across the channel.
    pub rows: usize,
    /// The L2 deviation from the series at each time, relative to the plate's speed.
    pub errors: [f64; 3],
    /// `(u / U, y / H)` of every particle at each time.
    pub profiles: Vec<Vec<(f64, f64)>>,
    /// The series `(u / U, y / H)` at each time, sampled across the channel.
    pub series: Vec<Vec<(f64, f64)>>,
}

/// Runs [`Couette::new`] (Reynolds number 1, the plate at 0.02 m/s, steps of
/// `0.002 H^2 / nu`) from rest to the last of [`COUETTE_TIMES`].
///
/// # Errors
/// A [`CoreError`] from the solver.
pub fn couette(rows: usize) -> Result<CouetteRun, CoreError> {
    let flow = Couette::new(rows, 1.0, 0.02);
    let mut s = flow.solver(Backend::Lanes)?;
    let (height, speed) = (f64::from(flow.height()), f64::from(flow.speed));
    let mut run = CouetteRun {
        rows,
        errors: [0.0; 3],
        profiles: Vec::new(),
        series: Vec::new(),
    };
    let mut done = 0;
    for (k, fraction) in COUETTE_TIMES.into_iter().enumerate() {
        let steps = (fraction / 0.002).round() as usize;
        while done < steps {
            s.step()?;
            done += 1;
        }
        run.errors[k] = flow.profile_error(&s);
        run.profiles.push(
            (0..s.len())
                .map(|i| {
                    let (y, u) = (s.positions()[1][i], s.velocities()[0][i]);
                    (f64::from(u) / speed, f64::from(y) / height)
                })
                .collect(),
        );
        run.series.push(
            (0..=50)
                .map(|i| {
                    let y = f64::from(i) / 50.0;
                    (flow.velocity((y * height) as f32, s.time()) / speed, y)
                })
                .collect(),
        );
    }
    Ok(run)
}
