//! `pbf bench`: the 3D dam break timed on one thread and on all of them.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use pbf_solver::scenes;

use crate::error::CliError;
use crate::simulate::{duration, si};

/// One timed configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BenchRun {
    /// Worker threads.
    pub threads: usize,
    /// Average wall time of a step.
    pub time_per_step: Duration,
    /// Particles x constraint iterations per second.
    pub particle_iterations_per_second: f64,
}

/// The result of `pbf bench`.
///
/// ```
/// let report = pbf_cli::bench(300, 2)?;
/// assert!(report.runs[0].threads == 1 && report.runs[0].particle_iterations_per_second > 0.0);
/// assert!(report.table().contains("particle-iterations/s"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// Particles simulated.
    pub particles: usize,
    /// Timed steps per configuration.
    pub steps: u64,
    /// The SIMD instruction set `wide`'s `f32x8` was compiled for (the kernels' crate
    /// and the solver's eight portable lanes).
    pub simd: &'static str,
    /// The instructions that carry the solver's passes on this CPU, picked at run
    /// time ([`pbf_solver::Backend::instructions`] of the default backend).
    pub lanes: &'static str,
    /// Particles per instruction in the solver's passes
    /// ([`pbf_solver::Backend::lane_width`]).
    pub lane_width: usize,
    /// One thread first, then all threads (when there is more than one).
    pub runs: Vec<BenchRun>,
}

impl BenchReport {
    /// All threads over one thread, if both ran.
    pub fn speedup(&self) -> Option<f64> {
        let (one, all) = (self.runs.first()?, self.runs.get(1)?);
        Some(
            all.particle_iterations_per_second
                / one.particle_iterations_per_second.max(f64::MIN_POSITIVE),
        )
    }

    /// The report as a table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "pbf bench: 3D dam break, {} particles, {} timed steps, passes on {} lanes of {} (f32x8 built for {})",
            self.particles, self.steps, self.lane_width, self.lanes, self.simd
        );
        let _ = writeln!(
            s,
            "  {:<8} {:>14} {:>24}",
            "threads", "time/step", "particle-iterations/s"
        );
        for r in &self.runs {
            let _ = writeln!(
                s,
                "  {:<8} {:>14} {:>24}",
                r.threads,
                duration(r.time_per_step),
                si(r.particle_iterations_per_second)
            );
        }
        if let Some(x) = self.speedup() {
            let _ = writeln!(s, "  speed-up {x:.2}x on {} threads", self.runs[1].threads);
        }
        s
    }
}

/// Times `steps` steps of the 3D dam break with about `particles` particles, after two
/// untimed warm-up steps, on one thread and on every available core. Each run starts
/// from the same state, so both do the same work.
///
/// # Errors
/// [`CliError::InvalidArgument`] for fewer than 8 particles or no steps;
/// [`CliError::Simulation`] if the solver fails.
pub fn bench(particles: usize, steps: u64) -> Result<BenchReport, CliError> {
    if steps == 0 {
        return Err(CliError::InvalidArgument {
            flag: "--steps",
            message: "must be at least 1".into(),
        });
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts = vec![1];
    if all > 1 {
        counts.push(all);
    }
    let mut report = BenchReport {
        particles: 0,
        steps,
        simd: pbf_kernels::simd_backend(),
        lanes: pbf_solver::Backend::Lanes.instructions(),
        lane_width: pbf_solver::Backend::Lanes.lane_width(),
        runs: Vec::new(),
    };
    for threads in counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| CliError::InvalidArgument {
                flag: "--threads",
                message: e.to_string(),
            })?;
        let (n, elapsed, work) = pool.install(|| -> Result<_, CliError> {
            let mut solver =
                scenes::build("dam-break", particles).map_err(|e| CliError::InvalidArgument {
                    flag: "--particles",
                    message: e.to_string(),
                })?;
            for _ in 0..2 {
                solver.step()?;
            }
            let mut work = 0.0;
            let start = Instant::now();
            for _ in 0..steps {
                let d = solver.step()?;
                work += d.particles as f64 * f64::from(d.iterations);
            }
            Ok((solver.len(), start.elapsed(), work))
        })?;
        report.particles = n;
        report.runs.push(BenchRun {
            threads,
            time_per_step: elapsed / u32::try_from(steps).unwrap_or(u32::MAX),
            particle_iterations_per_second: work / elapsed.as_secs_f64().max(1e-12),
        });
    }
    Ok(report)
}
