//! The stability experiment of the "Game Development Reference" (Game Physics Pearls,
//! ch. 6): fluid dropped into a glass, left to come to rest, then measured over one
//! second against five criteria fixed before the run ([`StabilityResult::stable`]).

use std::time::{Duration, Instant};

use pbf_solver::{Collider, ColliderKind, CoreError, Domain, Iterations, Params, Shape, Solver};

/// The particle spacing of the experiment (h = 2 spacings = 0.1).
pub const SPACING: f32 = 0.05;

/// Criterion (a): a cell is unstable when its average `|v| / h` over the measured
/// second is above this (per second). The project's choice: the source names the
/// measure, not a bound.
pub const UNSTABLE_SPEED_OVER_H: f64 = 10.0;

/// Criterion (b): the largest maximum density error (compression, a fraction of the
/// rest density) any measured step may show.
pub const MAX_DENSITY_ERROR: f32 = 0.10;

/// Criterion (e): how far the total energy (kinetic + potential from the glass's
/// floor) may ever stand above its value at the drop, in units of `M g b` (`M` the
/// fluid's mass, `b` the cube's side): nothing flows in, so it must never rise; the
/// tolerance covers rounding.
pub const ENERGY_TOLERANCE: f64 = 1e-3;

/// The longest a cell waits, beyond [`StabilityTiming::settle`], for its fluid to come
/// to rest before the measurement starts anyway (simulated seconds).
pub const MAX_EXTRA_SETTLE: f64 = 4.0;

/// One configuration of the experiment.
///
/// ```
/// use pbf_cli::validate::StabilityCell;
/// let cell = StabilityCell {
///     particles: 4000,
///     time_step: 1.0 / 60.0,
///     gravity_over_h: 98.1,
///     iterations: 4,
///     coarse_correction: false,
/// };
/// assert_eq!(cell.iterations, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StabilityCell {
    /// About this many particles (a cube of `round(cbrt(particles))^3`).
    pub particles: usize,
    /// The time step in seconds.
    pub time_step: f32,
    /// Gravity relative to the kernel radius, per second squared.
    pub gravity_over_h: f32,
    /// Constraint iterations per step (fixed).
    pub iterations: u32,
    /// Whether the solver runs [`pbf_solver::ParamsBuilder::coarse_correction`] (the
    /// library's default is on).
    pub coarse_correction: bool,
}

/// How long a cell runs: at least `settle` seconds, and on until its fluid has come to
/// rest (the mean kinetic energy of the last quarter second within 10% of the quarter
/// second before, or falling; at most [`MAX_EXTRA_SETTLE`] seconds more), then
/// `measure` seconds measured.
///
/// ```
/// let t = pbf_cli::validate::StabilityTiming::FULL;
/// assert_eq!(t.measure, 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StabilityTiming {
    /// Simulated seconds from the drop to the start of the measurement.
    pub settle: f64,
    /// Simulated seconds measured.
    pub measure: f64,
}

impl StabilityTiming {
    /// The timing of the full run: 1.5 s to fall and settle, 1 s measured.
    pub const FULL: Self = Self {
        settle: 1.5,
        measure: 1.0,
    };
}

/// What one cell measured.
///
/// ```
/// use pbf_cli::validate::{run_stability_cell, StabilityCell, StabilityTiming};
/// let cell = StabilityCell { particles: 216, time_step: 1.0 / 30.0, gravity_over_h: 98.1, iterations: 2, coarse_correction: false };
/// let r = run_stability_cell(&cell, StabilityTiming { settle: 0.2, measure: 0.1 })?;
/// assert_eq!(r.particles, 216);
/// assert!(r.steps >= 9 && r.settle_time >= 0.2);
/// assert!(r.average_speed_over_h.is_finite());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StabilityResult {
    /// The configuration.
    pub cell: StabilityCell,
    /// Particles simulated.
    pub particles: usize,
    /// `mean over the measured steps of (mean over particles of |v|) / h`, per second
    /// (NaN when the run diverged).
    pub average_speed_over_h: f64,
    /// The largest per-step maximum density error (compression, a fraction) over the
    /// measured second.
    pub max_density_error: f32,
    /// The most particles found outside the glass (beyond its wall, below its floor or
    /// above its rim) at any step of the run.
    pub escaped: usize,
    /// The most the total energy (kinetic + potential from the floor) ever stood above
    /// its value at the drop, in `M g b` (0 when it never did).
    pub energy_rise: f64,
    /// When the measurement started (simulated seconds after the drop).
    pub settle_time: f64,
    /// The highest any particle rose above the floor of the glass after any step of the
    /// run, in cube sides `b`: the run-up jets of the landing (the glass is
    /// [`GLASS_HEIGHT`] sides tall). `NEG_INFINITY` when the first step diverged.
    pub highest_rise: f32,
    /// Whether a velocity became NaN or infinite, or the fluid collapsed into clumps
    /// ([`CoreError::Collapsed`]).
    pub diverged: bool,
    /// Steps run.
    pub steps: u64,
    /// `(time, mean |v| / h)` after every step, from the drop on.
    pub speed_trace: Vec<(f64, f64)>,
    /// Wall-clock time of the run.
    pub wall_time: Duration,
}

impl StabilityResult {
    /// Stable: all five criteria, fixed before the run, hold: (a) average `|v| / h` over
    /// the measured second at most [`UNSTABLE_SPEED_OVER_H`]; (b) no measured step's
    /// maximum density error above [`MAX_DENSITY_ERROR`]; (c) nothing became NaN; (d) no
    /// particle ever left the glass, whose rim stands [`GLASS_HEIGHT`] cube sides above
    /// its floor; (e) the total energy never stood more than [`ENERGY_TOLERANCE`]
    /// `M g b` above its value at the drop.
    ///
    /// ```
    /// # use pbf_cli::validate::{run_stability_cell, StabilityCell, StabilityTiming};
    /// # let cell = StabilityCell { particles: 216, time_step: 1.0 / 30.0, gravity_over_h: 98.1, iterations: 2, coarse_correction: true };
    /// let r = run_stability_cell(&cell, StabilityTiming { settle: 0.1, measure: 0.1 })?;
    /// assert_eq!(
    ///     r.stable(),
    ///     !r.diverged
    ///         && r.escaped == 0
    ///         && r.average_speed_over_h <= 10.0
    ///         && r.max_density_error <= 0.1
    ///         && r.energy_rise <= 1e-3
    /// );
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn stable(&self) -> bool {
        self.failures().is_empty()
    }

    /// The criteria of [`stable`](Self::stable) that fail, each with its figure.
    ///
    /// ```
    /// # use pbf_cli::validate::{run_stability_cell, StabilityCell, StabilityTiming};
    /// # let cell = StabilityCell { particles: 216, time_step: 1.0 / 30.0, gravity_over_h: 98.1, iterations: 2, coarse_correction: true };
    /// let r = run_stability_cell(&cell, StabilityTiming { settle: 0.1, measure: 0.1 })?;
    /// assert_eq!(r.failures().is_empty(), r.stable());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn failures(&self) -> Vec<String> {
        if self.diverged {
            return vec!["(c) NaN".to_owned()];
        }
        let mut failed = Vec::new();
        if self.average_speed_over_h > UNSTABLE_SPEED_OVER_H {
            failed.push(format!("(a) |v|/h {:.1}", self.average_speed_over_h));
        }
        if self.max_density_error > MAX_DENSITY_ERROR || self.max_density_error.is_nan() {
            failed.push(format!(
                "(b) max density error {:.1}%",
                100.0 * self.max_density_error
            ));
        }
        if self.escaped > 0 {
            failed.push(format!("(d) {} escaped", self.escaped));
        }
        if self.energy_rise > ENERGY_TOLERANCE || self.energy_rise.is_nan() {
            failed.push(format!("(e) energy rise {:.1e} M g b", self.energy_rise));
        }
        failed
    }
}

/// The inner height of the glass in cube sides `b`: its rim stands this far above its
/// floor (see criterion (d) of [`StabilityResult::stable`]).
pub const GLASS_HEIGHT: f32 = 3.0;

/// A glass and the cube of fluid held above its floor: what [`glass`] builds.
pub(crate) struct GlassSpec {
    /// Particles along each side of the cube.
    pub side: usize,
    /// The particle spacing `s` (h = 2 s).
    pub spacing: f32,
    /// The magnitude of gravity, pointing down `-y`.
    pub gravity: f32,
    /// The time step in seconds.
    pub time_step: f32,
    /// Constraint iterations per step (fixed).
    pub iterations: u32,
    /// Whether the solver runs the coarse density correction.
    pub coarse_correction: bool,
    /// The glass's inner height in cube sides: its rim stands this far above its floor.
    pub rim: f32,
}

impl GlassSpec {
    /// The glass of a stability cell: a cube of `round(cbrt(particles))` particles a
    /// side at [`SPACING`], the rim [`GLASS_HEIGHT`] sides above the floor.
    fn of_cell(cell: &StabilityCell) -> Self {
        Self {
            side: ((cell.particles as f64).cbrt().round() as usize).max(2),
            spacing: SPACING,
            gravity: cell.gravity_over_h * 2.0 * SPACING,
            time_step: cell.time_step,
            iterations: cell.iterations,
            coarse_correction: cell.coarse_correction,
            rim: GLASS_HEIGHT,
        }
    }
}

/// The glass of a run and where its inside is.
pub(crate) struct Glass {
    pub solver: Solver<3>,
    centre: [f32; 2],
    inner_radius: f32,
    /// The height of the glass's floor.
    pub floor: f32,
    /// The cube's side `b`.
    pub side: f32,
    /// The rim's height above the floor in cube sides.
    rim: f32,
}

impl Glass {
    /// How many particles are outside the glass: beyond its wall, below its floor or
    /// above its rim.
    pub fn escaped(&self) -> usize {
        let p = self.solver.positions();
        (0..self.solver.len())
            .filter(|&i| {
                let (dx, dz) = (p[0][i] - self.centre[0], p[2][i] - self.centre[1]);
                (dx * dx + dz * dz).sqrt() > self.inner_radius
                    || p[1][i] < self.floor
                    || p[1][i] > self.floor + self.rim * self.side
            })
            .count()
    }

    /// The highest particle above the floor, in cube sides.
    pub fn rise(&self) -> f32 {
        let top = self.solver.positions()[1]
            .iter()
            .fold(f32::NEG_INFINITY, |m, &y| m.max(y));
        (top - self.floor) / self.side
    }
}

/// A cube of fluid, `spec.side` spacings on a side (`b = side s`), held a quarter of
/// its side above the floor of a glass of inner radius `0.75 b + 2 s` and inner height
/// `spec.rim` `b`: it falls, splashes and settles about `0.57 b` deep. The walls are at
/// least eight spacings thick, and six times the distance a particle falling from the
/// top of the block moves in one step (kept from when containers let particles that
/// got more than half-way into a wall out on the far side; colliders now never do).
/// The domain reaches `0.75 b` above the rim.
pub(crate) fn glass(spec: &GlassSpec) -> Result<Glass, CoreError> {
    let s = spec.spacing;
    let b = spec.side as f32 * s;
    let drop = 0.25 * b;
    let inner_radius = 0.75 * b + 2.0 * s;
    let inner_height = spec.rim * b;
    let fastest = (2.0 * spec.gravity.abs() * (drop + b)).sqrt();
    let wall = (8.0 * s).max(6.0 * fastest * spec.time_step);
    let floor = wall;
    let width = 2.0 * (inner_radius + wall) + 2.0 * s;
    let params = Params::<3>::builder(s)
        .time_step(spec.time_step)
        .iterations(Iterations::Fixed(spec.iterations))
        .gravity([0.0, -spec.gravity, 0.0])
        .coarse_correction(spec.coarse_correction)
        .build()?;
    let top = floor + inner_height + 0.75 * b;
    let mut solver = Solver::new(params, Domain::new([0.0; 3], [width, top, width])?)?;
    let c = 0.5 * width;
    solver.add_collider(Collider::new(
        Shape::Cylinder {
            base: [c, 0.5 * wall, c],
            radius: inner_radius + 0.5 * wall,
            height: inner_height + 0.5 * wall,
        },
        ColliderKind::Container {
            wall_thickness: wall,
            open_top: true,
        },
    )?)?;
    let lo = [c - 0.5 * b, floor + drop, c - 0.5 * b];
    solver.add_block(lo, [lo[0] + b, lo[1] + b, lo[2] + b], [0.0; 3])?;
    Ok(Glass {
        solver,
        centre: [c, c],
        inner_radius,
        floor,
        side: b,
        rim: spec.rim,
    })
}

/// Runs one cell: drop, settle for `timing.settle` seconds, measure for
/// `timing.measure` seconds. A diverged run is a result (`diverged`), not an error.
///
/// # Errors
/// [`CoreError`] for an invalid configuration (a time step or iteration count the
/// solver rejects) or a failure other than divergence.
///
/// ```
/// use pbf_cli::validate::{run_stability_cell, StabilityCell, StabilityTiming};
/// let bad = StabilityCell { particles: 216, time_step: -1.0, gravity_over_h: 98.1, iterations: 2, coarse_correction: false };
/// assert!(run_stability_cell(&bad, StabilityTiming::FULL).is_err());
/// ```
pub fn run_stability_cell(
    cell: &StabilityCell,
    timing: StabilityTiming,
) -> Result<StabilityResult, CoreError> {
    let start = Instant::now();
    let mut g = glass(&GlassSpec::of_cell(cell))?;
    let dt = f64::from(cell.time_step);
    let min_settle_steps = (timing.settle / dt).round() as u64;
    let max_settle_steps = ((timing.settle + MAX_EXTRA_SETTLE) / dt).round() as u64;
    let window = ((0.25 / dt).round() as usize).max(1);
    let measure_steps = ((timing.measure / dt).round() as u64).max(1);
    let h = f64::from(g.solver.kernel().h());
    let n = g.solver.len();
    let mass = f64::from(g.solver.params().mass());
    let gravity = f64::from(cell.gravity_over_h) * h;
    let unit = mass * n as f64 * gravity * f64::from(g.side);
    let floor = f64::from(g.floor);
    // Kinetic energy and the total (kinetic + potential from the floor), in M g b.
    let energies = |solver: &Solver<3>| {
        let (p, v) = (solver.positions(), solver.velocities());
        let mut kinetic = 0.0f64;
        let mut potential = 0.0f64;
        for i in 0..n {
            kinetic += 0.5 * mass * (0..3).map(|a| f64::from(v[a][i]).powi(2)).sum::<f64>();
            potential += mass * gravity * (f64::from(p[1][i]) - floor);
        }
        (kinetic / unit, (kinetic + potential) / unit)
    };
    let initial = energies(&g.solver).1;
    let (mut speed_sum, mut max_error, mut diverged) = (0.0, 0.0f32, false);
    let (mut escaped, mut energy_rise) = (g.escaped(), 0.0f64);
    let mut highest_rise = f32::NEG_INFINITY;
    let mut trace = Vec::with_capacity((max_settle_steps + measure_steps) as usize);
    let mut kinetic_trace = Vec::with_capacity(max_settle_steps as usize);
    let mut measuring_from: Option<u64> = None;
    let mut step = 0u64;
    loop {
        if let Some(from) = measuring_from
            && step >= from + measure_steps
        {
            break;
        }
        match g.solver.step() {
            Ok(d) => {
                let v = g.solver.velocities();
                let mean: f64 = (0..n)
                    .map(|i| {
                        f64::from(
                            (v[0][i] * v[0][i] + v[1][i] * v[1][i] + v[2][i] * v[2][i]).sqrt(),
                        )
                    })
                    .sum::<f64>()
                    / n.max(1) as f64;
                trace.push((g.solver.time(), mean / h));
                highest_rise = highest_rise.max(g.rise());
                escaped = escaped.max(g.escaped());
                let (kinetic, total) = energies(&g.solver);
                energy_rise = energy_rise.max(total - initial);
                if measuring_from.is_some() {
                    speed_sum += mean / h;
                    max_error = max_error.max(d.max_density_error);
                } else {
                    kinetic_trace.push(kinetic);
                    step += 1;
                    if step >= max_settle_steps
                        || (step >= min_settle_steps && at_rest(&kinetic_trace, window))
                    {
                        measuring_from = Some(step);
                    }
                    continue;
                }
            }
            // A velocity became non-finite, or the fluid collapsed into clumps: both are
            // a diverged run, a result of the experiment.
            Err(CoreError::Diverged { .. } | CoreError::Collapsed { .. }) => {
                diverged = true;
                break;
            }
            Err(e) => return Err(e),
        }
        step += 1;
    }
    let settle_steps = measuring_from.unwrap_or(step);
    Ok(StabilityResult {
        cell: *cell,
        particles: n,
        average_speed_over_h: if diverged {
            f64::NAN
        } else {
            speed_sum / measure_steps as f64
        },
        max_density_error: max_error,
        escaped,
        energy_rise,
        settle_time: settle_steps as f64 * dt,
        highest_rise,
        diverged,
        steps: g.solver.steps(),
        speed_trace: trace,
        wall_time: start.elapsed(),
    })
}

/// Whether the fluid has come to rest: the mean kinetic energy of the last `window`
/// steps is within 10% of the `window` before, or below it.
fn at_rest(kinetic: &[f64], window: usize) -> bool {
    if kinetic.len() < 2 * window {
        return false;
    }
    let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
    let last = mean(&kinetic[kinetic.len() - window..]);
    let before = mean(&kinetic[kinetic.len() - 2 * window..kinetic.len() - window]);
    last <= 1.1 * before
}

/// The grid of cells, at the library's defaults: every combination, ordered by
/// particles, time step, gravity, iterations.
///
/// ```
/// let cells = pbf_cli::validate::stability_grid(&[4000], &[1.0 / 60.0, 1.0 / 30.0], &[98.1], &[2, 4]);
/// assert_eq!(cells.len(), 4);
/// assert_eq!(cells[1].iterations, 4);
/// ```
pub fn stability_grid(
    particles: &[usize],
    time_steps: &[f32],
    gravity_over_h: &[f32],
    iterations: &[u32],
) -> Vec<StabilityCell> {
    // The library's default, which every cell takes.
    let coarse_correction = Params::<3>::builder(SPACING)
        .build()
        .is_ok_and(|p| p.coarse_correction());
    let mut cells = Vec::new();
    for &p in particles {
        for &dt in time_steps {
            for &g in gravity_over_h {
                for &k in iterations {
                    cells.push(StabilityCell {
                        particles: p,
                        time_step: dt,
                        gravity_over_h: g,
                        iterations: k,
                        coarse_correction,
                    });
                }
            }
        }
    }
    cells
}
