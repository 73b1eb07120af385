//! Incompressibility: a column of water at rest in a box that fits it, its density
//! error against the number of constraint iterations, the adaptive mode's iteration
//! count for a target error, and density against depth.

use pbf_solver::{CoreError, Domain, Iterations, Params, Solver};

use super::stability::SPACING;

/// The column: `width x height x width` particles (2D: `width x height`) in a box
/// exactly `width` spacings wide, stepped at `time_step`, settled for `settle` seconds
/// and measured over the next `measure` seconds.
///
/// ```
/// let c = pbf_cli::validate::ColumnSpec::FULL;
/// assert!(c.height > c.width);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnSpec {
    /// Width in particles.
    pub width: usize,
    /// Height in particles.
    pub height: usize,
    /// Time step in seconds.
    pub time_step: f32,
    /// Seconds before the measurement.
    pub settle: f64,
    /// Seconds measured.
    pub measure: f64,
}

impl ColumnSpec {
    /// The full run: a 3D column 10 x 40 x 10 (4,000 particles, 2 m of water) at
    /// 1/120 s, 2 s settled, 1 s measured.
    pub const FULL: Self = Self {
        width: 10,
        height: 40,
        time_step: 1.0 / 120.0,
        settle: 2.0,
        measure: 1.0,
    };
}

/// The column's density statistics under one iteration mode.
///
/// ```
/// use pbf_cli::validate::{run_column, ColumnSpec};
/// use pbf_solver::Iterations;
/// let spec = ColumnSpec { width: 4, height: 8, time_step: 1.0 / 120.0, settle: 0.1, measure: 0.05 };
/// let r = run_column(&spec, Iterations::Fixed(4))?;
/// assert_eq!(r.particles, 128);
/// assert!(r.average_density_error >= 0.0 && r.max_density_error >= r.average_density_error);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnResult {
    /// The iteration mode.
    pub iterations: Iterations,
    /// Particles simulated.
    pub particles: usize,
    /// The mean over the measured steps of the average density error (a fraction).
    pub average_density_error: f64,
    /// The largest maximum density error of a measured step (a fraction).
    pub max_density_error: f64,
    /// Mean iterations per measured step.
    pub mean_iterations: f64,
    /// Most iterations in a measured step.
    pub max_iterations: u32,
    /// `(depth below the free surface in spacings, mean rho / rho0)` per layer one
    /// spacing thick, averaged over the measured steps.
    pub density_by_depth: Vec<(f64, f64)>,
}

/// Runs the column under `iterations`.
///
/// # Errors
/// [`CoreError`] from the solver (an invalid mode, divergence).
///
/// ```
/// use pbf_cli::validate::{run_column, ColumnSpec};
/// use pbf_solver::Iterations;
/// let spec = ColumnSpec { width: 4, height: 8, time_step: 1.0 / 120.0, settle: 0.0, measure: 0.05 };
/// assert!(run_column(&spec, Iterations::Fixed(0)).is_err());
/// ```
pub fn run_column(spec: &ColumnSpec, iterations: Iterations) -> Result<ColumnResult, CoreError> {
    let s = SPACING;
    let (w, hgt) = (spec.width as f32 * s, spec.height as f32 * s);
    let params = Params::<3>::builder(s)
        .time_step(spec.time_step)
        .iterations(iterations)
        .build()?;
    let mut solver = Solver::new(params, Domain::new([0.0; 3], [w, 1.5 * hgt, w])?)?;
    solver.add_block([0.0; 3], [w, hgt, w], [0.0; 3])?;
    let dt = f64::from(spec.time_step);
    let settle = (spec.settle / dt).round() as u64;
    let measure = ((spec.measure / dt).round() as u64).max(1);
    let rho0 = f64::from(solver.params().rest_density());
    let layers = spec.height + 2;
    let (mut sums, mut counts) = (vec![0.0f64; layers], vec![0u64; layers]);
    let (mut avg, mut max, mut its, mut max_its) = (0.0, 0.0f64, 0.0, 0);
    for step in 0..settle + measure {
        let d = solver.step()?;
        if step < settle {
            continue;
        }
        avg += f64::from(d.average_density_error);
        max = max.max(f64::from(d.max_density_error));
        its += f64::from(d.iterations);
        max_its = max_its.max(d.iterations);
        let y = solver.positions()[1];
        let top = y.iter().fold(f32::MIN, |a, b| a.max(*b)) + 0.5 * s;
        for (yi, rho) in y.iter().zip(solver.densities()) {
            let layer = (((top - yi) / s).floor().max(0.0) as usize).min(layers - 1);
            sums[layer] += f64::from(*rho) / rho0;
            counts[layer] += 1;
        }
    }
    let m = measure as f64;
    Ok(ColumnResult {
        iterations,
        particles: solver.len(),
        average_density_error: avg / m,
        max_density_error: max,
        mean_iterations: its / m,
        max_iterations: max_its,
        density_by_depth: sums
            .iter()
            .zip(&counts)
            .enumerate()
            .filter(|(_, (_, c))| **c > 0)
            .map(|(k, (sum, c))| (k as f64 + 0.5, sum / *c as f64))
            .collect(),
    })
}
