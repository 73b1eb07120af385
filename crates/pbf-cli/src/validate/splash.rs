//! The splash of the stability experiment's glass under refinement: one glass of one
//! size, its cube resolved by more and more particles, and how high the splash of the
//! landing throws the fluid.
//!
//! In the stability grid the spacing is fixed, so the particle count sets both the
//! glass's size and how finely its flow is resolved. Here the size is fixed (a cube of
//! side [`SPLASH_CUBE_SIDE`] under [`SPLASH_GRAVITY`]) and only the resolution changes,
//! with the time step shrinking in step with the spacing. A splash height that the
//! solver resolves settles as the particles get finer; one that keeps growing is not a
//! property of the flow that a rim of fixed height can judge at every resolution.

use std::time::{Duration, Instant};

use pbf_solver::CoreError;

use super::stability::{GlassSpec, glass};

/// The cube's side `b` in metres (the 8,000-particle glass of the stability grid).
pub const SPLASH_CUBE_SIDE: f32 = 1.0;
/// The magnitude of gravity in m/s^2.
pub const SPLASH_GRAVITY: f32 = 9.81;
/// The glass's inner height in cube sides: tall enough that no splash reaches the rim,
/// so every highest rise is measured, not cut off.
pub const SPLASH_RIM: f32 = 8.0;
/// Simulated seconds from the drop: past the highest run-up of the landing.
pub const SPLASH_DURATION: f64 = 1.5;
/// Constraint iterations per step: the most the stability grid runs.
pub const SPLASH_ITERATIONS: u32 = 8;
/// The time step is the spacing divided by this speed (m/s): 1/240 s, the stability
/// grid's smallest, at 16 particles a side, and a fixed fraction of the kernel radius
/// per step at every resolution.
pub const SPLASH_STEP_SPEED: f32 = 15.0;
/// The criterion, fixed before the run: a resolved splash height changes by at most
/// this fraction between the two finest resolutions.
pub const SPLASH_CONVERGED: f32 = 0.10;

/// One resolution of the glass.
///
/// ```
/// let spec = pbf_cli::validate::SplashSpec { side_particles: 16, coarse_correction: true };
/// assert_eq!(spec.spacing(), 1.0 / 16.0);
/// assert_eq!(spec.time_step(), 1.0 / 240.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplashSpec {
    /// Particles along each side of the cube (at least 2).
    pub side_particles: usize,
    /// Whether the solver runs the coarse density correction (the library's default
    /// is on).
    pub coarse_correction: bool,
}

impl SplashSpec {
    /// The particle spacing: the cube's side over the particles along it.
    pub fn spacing(&self) -> f32 {
        SPLASH_CUBE_SIDE / self.side_particles as f32
    }

    /// The time step: the spacing over [`SPLASH_STEP_SPEED`].
    pub fn time_step(&self) -> f32 {
        self.spacing() / SPLASH_STEP_SPEED
    }
}

/// What one resolution measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SplashRun {
    /// The resolution.
    pub spec: SplashSpec,
    /// Particles simulated.
    pub particles: usize,
    /// The highest any particle rose above the glass's floor after any step from the
    /// landing on (the time a fall of a quarter side takes), in cube sides: the cube's
    /// top layer, about one side up at the landing, or a splash above it.
    pub highest_rise: f32,
    /// When it rose highest (simulated seconds after the drop).
    pub time_of_highest: f64,
    /// The most particles ever outside the glass (0 unless the splash reached the
    /// rim, where its highest rise is only a lower bound).
    pub escaped: usize,
    /// Wall-clock time of the run.
    pub wall_time: Duration,
}

/// Drops the cube into the tall glass at `spec`'s resolution and follows the splash
/// for [`SPLASH_DURATION`] seconds.
///
/// # Errors
/// [`CoreError::InvalidParameter`] (`side_particles`) for fewer than 2 particles a
/// side; [`CoreError::Diverged`] or [`CoreError::Collapsed`] when the run diverges.
///
/// ```
/// use pbf_cli::validate::{SplashSpec, run_splash};
/// let r = run_splash(&SplashSpec { side_particles: 6, coarse_correction: true })?;
/// assert_eq!(r.particles, 216);
/// assert!(r.highest_rise > 0.8 && r.escaped == 0);
/// assert!(run_splash(&SplashSpec { side_particles: 1, coarse_correction: true }).is_err());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn run_splash(spec: &SplashSpec) -> Result<SplashRun, CoreError> {
    if spec.side_particles < 2 {
        return Err(CoreError::InvalidParameter {
            field: "side_particles",
            value: spec.side_particles as f64,
            reason: "the cube needs at least 2 particles a side",
        });
    }
    let start = Instant::now();
    let mut g = glass(&GlassSpec {
        side: spec.side_particles,
        spacing: spec.spacing(),
        gravity: SPLASH_GRAVITY,
        time_step: spec.time_step(),
        iterations: SPLASH_ITERATIONS,
        coarse_correction: spec.coarse_correction,
        rim: SPLASH_RIM,
    })?;
    let steps = (SPLASH_DURATION / f64::from(spec.time_step())).round() as u64;
    // The cube's lowest layer reaches the floor after falling a quarter of its side.
    let landing = (2.0 * 0.25 * f64::from(SPLASH_CUBE_SIDE) / f64::from(SPLASH_GRAVITY)).sqrt();
    let (mut highest_rise, mut time_of_highest, mut escaped) = (f32::NEG_INFINITY, 0.0, 0);
    for _ in 0..steps {
        g.solver.step()?;
        let rise = g.rise();
        if g.solver.time() >= landing && rise > highest_rise {
            highest_rise = rise;
            time_of_highest = g.solver.time();
        }
        escaped = escaped.max(g.escaped());
    }
    Ok(SplashRun {
        spec: *spec,
        particles: g.solver.len(),
        highest_rise,
        time_of_highest,
        escaped,
        wall_time: start.elapsed(),
    })
}

/// The criterion: among the runs with the library's default correction (on), the two
/// finest resolutions' highest rises differ by at most [`SPLASH_CONVERGED`] of the
/// finer one. `None` with fewer than two such runs.
///
/// ```
/// use pbf_cli::validate::{SplashRun, SplashSpec, splash_settles};
/// let run = |n, rise| SplashRun {
///     spec: SplashSpec { side_particles: n, coarse_correction: true },
///     particles: n * n * n,
///     highest_rise: rise,
///     time_of_highest: 1.0,
///     escaped: 0,
///     wall_time: Default::default(),
/// };
/// assert_eq!(splash_settles(&[run(10, 2.0), run(20, 2.1)]), Some(true));
/// assert_eq!(splash_settles(&[run(10, 2.0), run(20, 3.0)]), Some(false));
/// assert_eq!(splash_settles(&[run(10, 2.0)]), None);
/// ```
pub fn splash_settles(runs: &[SplashRun]) -> Option<bool> {
    let mut on: Vec<&SplashRun> = runs.iter().filter(|r| r.spec.coarse_correction).collect();
    on.sort_by_key(|r| r.spec.side_particles);
    let [.., coarser, finer] = on.as_slice() else {
        return None;
    };
    let change = (finer.highest_rise - coarser.highest_rise).abs();
    Some(change <= SPLASH_CONVERGED * finer.highest_rise)
}
