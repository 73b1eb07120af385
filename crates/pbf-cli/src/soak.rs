//! `pbf soak`: a long run of a small scene that checks the state every so many steps
//! and stops with an error at the first check that fails.
//!
//! Each check looks at every particle and at the last step's statistics:
//! - every position and velocity is finite (a step that produces a non-finite
//!   velocity already fails with [`CoreError::Diverged`](pbf_solver::CoreError::Diverged));
//! - every particle lies inside the domain;
//! - the mean specific mechanical energy (kinetic plus potential energy per unit mass,
//!   the potential measured from the domain wall gravity points at, so it is never
//!   negative) stays below `energy_factor` times its reference: the smaller of its
//!   values at the start and at the last check (in a closed tank it can only fall), or,
//!   when emitters added particles since the last check, the larger of the last value
//!   and the potential energy of a particle at the far side of the domain;
//! - the average and the largest density error of the last step stay below their
//!   bounds.

// `!(value <= bound)` is how the checks fail NaN along with values over the bound.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use std::io::Write;

use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;

use crate::CliError;

/// What `pbf soak` runs and checks.
///
/// ```
/// let o = pbf_cli::SoakOptions::default();
/// assert_eq!((o.steps, o.check_every), (100_000, 1000));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SoakOptions {
    /// A built-in scene (see `pbf scenes`).
    pub scene: String,
    /// About this many particles.
    pub particles: usize,
    /// Steps to run.
    pub steps: u64,
    /// Steps between checks (the last step is always checked).
    pub check_every: u64,
    /// The bound on the mean specific energy, relative to its reference.
    pub energy_factor: f64,
    /// The bound on the average density error of a step (a fraction: 0.05 = 5%).
    pub max_average_density_error: f32,
    /// The bound on the largest density error of a step.
    pub max_density_error: f32,
    /// Worker threads (`None`: rayon's default pool, all cores).
    pub threads: Option<usize>,
    /// Print nothing.
    pub quiet: bool,
}

impl Default for SoakOptions {
    fn default() -> Self {
        Self {
            scene: "dam-break-2d".into(),
            particles: 1200,
            steps: 100_000,
            check_every: 1000,
            energy_factor: 1.1,
            max_average_density_error: 0.05,
            max_density_error: 0.5,
            threads: None,
            quiet: false,
        }
    }
}

/// What a soak found at one check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoakCheck {
    /// The step checked.
    pub step: u64,
    /// Particles.
    pub particles: usize,
    /// Mean specific mechanical energy divided by its reference (see the module docs).
    pub energy_ratio: f64,
    /// The last step's average density error.
    pub average_density_error: f32,
    /// The last step's largest density error.
    pub max_density_error: f32,
    /// The last step's largest speed.
    pub max_speed: f32,
}

/// The checks of a soak that passed.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakReport {
    /// One entry per check, in order.
    pub checks: Vec<SoakCheck>,
}

/// Runs a soak; prints a line per check to `out` unless `quiet`.
///
/// # Errors
/// [`CliError::Soak`] naming the step and the failed check;
/// [`CliError::Simulation`] when a step fails (it diverged);
/// [`CliError::InvalidArgument`] for an unknown scene or bad bounds.
///
/// ```
/// let options = pbf_cli::SoakOptions { steps: 20, check_every: 10, quiet: true, ..Default::default() };
/// let report = pbf_cli::soak(&options, &mut std::io::sink())?;
/// assert_eq!(report.checks.len(), 2);
/// assert_eq!(report.checks[1].step, 20);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn soak(options: &SoakOptions, out: &mut dyn Write) -> Result<SoakReport, CliError> {
    let bad = |flag, message: String| Err(CliError::InvalidArgument { flag, message });
    if options.check_every == 0 {
        return bad("--check-every", "must be at least 1".into());
    }
    if !(options.energy_factor.is_finite() && options.energy_factor >= 1.0) {
        return bad(
            "--energy-factor",
            format!("{} must be >= 1 and finite", options.energy_factor),
        );
    }
    for (flag, v) in [
        (
            "--max-average-density-error",
            options.max_average_density_error,
        ),
        ("--max-density-error", options.max_density_error),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return bad(flag, format!("{v} must be >= 0 and finite"));
        }
    }
    let solver = pbf_solver::scenes::build(&options.scene, options.particles).map_err(|e| {
        CliError::InvalidArgument {
            flag: "--scene",
            message: format!("`{}`: {e}", options.scene),
        }
    })?;
    if !options.quiet {
        let _ = writeln!(
            out,
            "pbf soak: {} ({}D, {} particles), {} steps, checked every {}",
            options.scene,
            solver.dimension(),
            solver.len(),
            options.steps,
            options.check_every
        );
    }
    let pool = match options.threads {
        Some(t) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| CliError::InvalidArgument {
                    flag: "--threads",
                    message: e.to_string(),
                })?,
        ),
        None => None,
    };
    match solver {
        AnySolver::Two(s) => soak_in(s, options, pool.as_ref(), out),
        AnySolver::Three(s) => soak_in(s, options, pool.as_ref(), out),
    }
}

/// Mean specific mechanical energy: kinetic plus potential per unit mass, the
/// potential measured from the wall gravity points at on each axis.
fn specific_energy<const D: usize>(s: &Solver<D>) -> f64 {
    let n = s.len();
    if n == 0 {
        return 0.0;
    }
    let g = s.params().gravity();
    let (lo, hi) = (s.domain().lo(), s.domain().hi());
    let (x, v) = (s.positions(), s.velocities());
    let mut total = 0.0f64;
    for i in 0..n {
        for a in 0..D {
            let ga = f64::from(g[a]);
            let height = if ga > 0.0 {
                f64::from(hi[a]) - f64::from(x[a][i])
            } else {
                f64::from(x[a][i]) - f64::from(lo[a])
            };
            total += 0.5 * f64::from(v[a][i]).powi(2) + ga.abs() * height;
        }
    }
    total / n as f64
}

/// Why `energy` fails the bound `factor * reference`, if it does (NaN fails).
fn energy_failure(energy: f64, reference: f64, factor: f64) -> Option<String> {
    (!(energy <= factor * reference)).then(|| {
        format!(
            "the mean specific energy {energy:.6} J/kg exceeds {factor} times its reference {reference:.6} J/kg"
        )
    })
}

/// The potential energy per unit mass of a particle at the far side of the domain.
fn domain_energy<const D: usize>(s: &Solver<D>) -> f64 {
    let g = s.params().gravity();
    let (lo, hi) = (s.domain().lo(), s.domain().hi());
    (0..D)
        .map(|a| f64::from(g[a]).abs() * (f64::from(hi[a]) - f64::from(lo[a])))
        .sum()
}

fn soak_in<const D: usize>(
    mut s: Solver<D>,
    options: &SoakOptions,
    pool: Option<&rayon::ThreadPool>,
    out: &mut dyn Write,
) -> Result<SoakReport, CliError> {
    let start_energy = specific_energy(&s);
    let (mut last_count, mut last_energy) = (s.len(), start_energy);
    let mut checks = Vec::new();
    let mut step = 0;
    while step < options.steps {
        // The steps up to the next check, inside the pool.
        let next = (step + options.check_every).min(options.steps);
        let mut run = || -> Result<(), pbf_solver::CoreError> {
            for _ in step..next {
                s.step()?;
            }
            Ok(())
        };
        match pool {
            Some(pool) => pool.install(run)?,
            None => run()?,
        }
        step = next;
        let fail = |message: String| Err(CliError::Soak { step, message });
        let (x, v) = (s.positions(), s.velocities());
        for i in 0..s.len() {
            let p: [f32; D] = core::array::from_fn(|a| x[a][i]);
            let u: [f32; D] = core::array::from_fn(|a| v[a][i]);
            if !(p.iter().chain(&u).all(|c| c.is_finite())) {
                return fail(format!(
                    "particle id {} is not finite: position {p:?}, velocity {u:?}",
                    s.ids()[i]
                ));
            }
            if !s.domain().contains(p) {
                return fail(format!(
                    "particle id {} at {p:?} is outside the domain {:?}..{:?}",
                    s.ids()[i],
                    s.domain().lo(),
                    s.domain().hi()
                ));
            }
        }
        let reference = if s.len() == last_count {
            // No particle came or went: the energy can only fall (walls, XSPH and the
            // constraint dissipate), so bound it by the start and the last check.
            start_energy.min(last_energy)
        } else {
            last_energy.max(domain_energy(&s))
        };
        let energy = specific_energy(&s);
        let energy_ratio = if reference > 0.0 {
            energy / reference
        } else {
            0.0
        };
        if let Some(message) = energy_failure(energy, reference, options.energy_factor) {
            return fail(message);
        }
        let d = s.last_diagnostics();
        if !(d.average_density_error <= options.max_average_density_error) {
            return fail(format!(
                "the average density error {:.4} exceeds {}",
                d.average_density_error, options.max_average_density_error
            ));
        }
        if !(d.max_density_error <= options.max_density_error) {
            return fail(format!(
                "the largest density error {:.4} exceeds {}",
                d.max_density_error, options.max_density_error
            ));
        }
        (last_count, last_energy) = (s.len(), energy);
        let check = SoakCheck {
            step,
            particles: s.len(),
            energy_ratio,
            average_density_error: d.average_density_error,
            max_density_error: d.max_density_error,
            max_speed: d.max_speed,
        };
        if !options.quiet {
            let _ = writeln!(
                out,
                "step {:>7}: t = {:>8.2} s, energy {:.3} of reference, density error {:.2}% avg {:.2}% max, max speed {:.3} m/s: ok",
                step,
                s.time(),
                energy_ratio,
                100.0 * check.average_density_error,
                100.0 * check.max_density_error,
                check.max_speed
            );
        }
        checks.push(check);
    }
    if !options.quiet {
        let _ = writeln!(out, "pbf soak: {} checks passed", checks.len());
    }
    Ok(SoakReport { checks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tight_bound_fails_with_the_step_and_the_check() {
        let options = SoakOptions {
            steps: 30,
            check_every: 10,
            max_density_error: 0.0,
            quiet: true,
            ..Default::default()
        };
        let err = soak(&options, &mut std::io::sink()).unwrap_err();
        assert!(matches!(err, CliError::Soak { step: 10, .. }), "{err}");
        assert!(err.to_string().contains("largest density error"), "{err}");
    }

    #[test]
    fn energy_is_kinetic_plus_potential_from_the_floor() {
        let params = pbf_solver::Params::<2>::builder(0.1).build().unwrap();
        let domain = pbf_solver::Domain::new([0.0, -1.0], [1.0, 1.0]).unwrap();
        let mut s = Solver::new(params, domain).unwrap();
        s.add_particles(&[[0.5, 0.0], [0.5, 1.0]], Some(&[[3.0, 4.0], [0.0, 0.0]]))
            .unwrap();
        // Heights 1 and 2 above the floor at y = -1; speeds 5 and 0.
        let g = 9.81f64;
        let expected = ((0.5 * 25.0 + g * 1.0) + g * 2.0) / 2.0;
        assert!((specific_energy(&s) - expected).abs() < 1e-4);
        assert!((domain_energy(&s) - 2.0 * g).abs() < 1e-4);
        assert!(energy_failure(2.0, 1.0, 1.5).is_some());
        assert_eq!(energy_failure(1.4, 1.0, 1.5), None);
        assert!(energy_failure(f64::NAN, 1.0, 1.5).is_some());
    }

    #[test]
    fn bad_options_are_errors() {
        for o in [
            SoakOptions {
                check_every: 0,
                ..Default::default()
            },
            SoakOptions {
                energy_factor: 0.5,
                ..Default::default()
            },
            SoakOptions {
                max_density_error: f32::NAN,
                ..Default::default()
            },
            SoakOptions {
                scene: "no-such-scene".into(),
                ..Default::default()
            },
        ] {
            let err = soak(&o, &mut std::io::sink()).unwrap_err();
            assert!(matches!(err, CliError::InvalidArgument { .. }), "{err}");
        }
    }
}
