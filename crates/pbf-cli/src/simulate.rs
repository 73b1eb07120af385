//! A run: step the solver, write frames, pictures and the animation, report progress,
//! and sum up.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pbf_solver::scenes::AnySolver;

use crate::error::CliError;
use crate::formats::{Format, frame_file_name};
use crate::frame::Frame;
use crate::output::{ANIMATION, LAST_FRAME};
use crate::progress::{Progress, ProgressMode};
use crate::render::{Axis, ColourRange, GifWriter, Quantity, Renderer, save_png};
use crate::series::SeriesWriter;
use crate::surface::{SurfaceFormat, SurfaceMesh, SurfaceParams, surface_file_name};

/// What a run does.
pub(crate) struct RunPlan {
    /// The scene's name, for the summary.
    pub scene: String,
    pub solver: AnySolver,
    pub steps: u64,
    pub every: u64,
    pub out_dir: PathBuf,
    /// Delete an earlier run's files in `out_dir` instead of refusing to run.
    pub overwrite: bool,
    /// Frame files, if asked for.
    pub format: Option<Format>,
    /// PNG frames.
    pub render: bool,
    /// An animated GIF.
    pub gif: bool,
    pub axis: Axis,
    /// The quantity that colours the pictures.
    pub colour: Quantity,
    pub width: u32,
    pub progress: ProgressMode,
    /// Surface meshes of every frame, in this format with these parameters.
    pub surface: Option<(SurfaceFormat, SurfaceParams)>,
}

/// What a run did: the figures of the summary table and the files written.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let out = dir.path().to_str().unwrap();
/// let outcome = pbf_cli::run(["pbf", "run", "--steps", "2", "--quiet", "--out", out])?;
/// let summary = outcome.summary().unwrap();
/// assert_eq!(summary.steps, 2);
/// assert!(summary.picture.exists());
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The scene's name or path.
    pub scene: String,
    /// 2 or 3.
    pub dimension: usize,
    /// Particles at the end of the run.
    pub particles: usize,
    /// Steps taken.
    pub steps: u64,
    /// Simulated seconds.
    pub simulated_time: f64,
    /// Wall time of the whole run, output included.
    pub wall_time: Duration,
    /// Wall time spent in the solver's steps.
    pub step_time: Duration,
    /// Sum over steps of particles x constraint iterations.
    pub particle_iterations: f64,
    /// Mean over steps of the average density error (a fraction).
    pub average_density_error: f32,
    /// Largest density error of any particle in any step (a fraction).
    pub max_density_error: f32,
    /// Worker threads.
    pub threads: usize,
    /// Frame files written, in order.
    pub frames: Vec<PathBuf>,
    /// The simulated time of each frame file, in seconds.
    pub frame_times: Vec<f64>,
    /// The `frames.EXT.series` file listing the frame files, if any were asked for.
    pub series: Option<PathBuf>,
    /// The `frames.pvd` collection of VTK frames.
    pub collection: Option<PathBuf>,
    /// Surface meshes written (`--surface`), in order.
    pub surfaces: Vec<PathBuf>,
    /// The `surfaces.EXT.series` file listing the surface meshes with their simulated
    /// times, with `--surface`.
    pub surface_series: Option<PathBuf>,
    /// PNG frames written, in order: the particles, or the surface with `--surface`.
    pub renders: Vec<PathBuf>,
    /// The animation, if written.
    pub gif: Option<PathBuf>,
    /// The picture of the last frame: the particles, or the surface with `--surface`.
    pub picture: PathBuf,
}

impl RunSummary {
    /// Average wall time of a step (zero for a run of no steps).
    pub fn time_per_step(&self) -> Duration {
        if self.steps == 0 {
            Duration::ZERO
        } else {
            self.step_time / u32::try_from(self.steps).unwrap_or(u32::MAX)
        }
    }

    /// Particles x constraint iterations per second of step time.
    pub fn particle_iterations_per_second(&self) -> f64 {
        let t = self.step_time.as_secs_f64();
        if t > 0.0 {
            self.particle_iterations / t
        } else {
            0.0
        }
    }

    /// The summary table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let rows: [(&str, String); 7] = [
            ("particles", self.particles.to_string()),
            ("steps", self.steps.to_string()),
            ("simulated time", format!("{:.3} s", self.simulated_time)),
            (
                "time per step",
                format!(
                    "{} ({} threads, wall time {:.2} s)",
                    duration(self.time_per_step()),
                    self.threads,
                    self.wall_time.as_secs_f64()
                ),
            ),
            (
                "particle-iterations/s",
                si(self.particle_iterations_per_second()),
            ),
            (
                "density error, average",
                format!("{:.3}%", 100.0 * self.average_density_error),
            ),
            (
                "density error, maximum",
                format!("{:.3}%", 100.0 * self.max_density_error),
            ),
        ];
        let _ = writeln!(s, "{} ({}D)", self.scene, self.dimension);
        for (k, v) in rows {
            let _ = writeln!(s, "  {k:<24} {v}");
        }
        s
    }
}

/// `12.3 ms`, `850 us`, `1.20 s`.
pub(crate) fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

/// `12.3 M`, `850.0 k`.
pub(crate) fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The time step of a solver.
pub(crate) fn time_step(solver: &AnySolver) -> f32 {
    match solver {
        AnySolver::Two(s) => s.params().time_step(),
        AnySolver::Three(s) => s.params().time_step(),
    }
}

/// Runs the plan (on the current rayon pool).
pub(crate) fn execute(plan: RunPlan) -> Result<RunSummary, CliError> {
    let start = Instant::now();
    let RunPlan {
        scene,
        mut solver,
        steps,
        every,
        out_dir,
        overwrite,
        format,
        render,
        gif,
        axis,
        colour,
        width,
        progress,
        surface,
    } = plan;
    crate::output::prepare(&out_dir, overwrite)?;
    std::fs::create_dir_all(&out_dir).map_err(|e| CliError::write(&out_dir, e))?;
    let mut series = format.map(|f| SeriesWriter::new(&out_dir, f));
    let mut surface_series = surface
        .as_ref()
        .map(|(f, _)| SeriesWriter::for_surfaces(&out_dir, *f));
    let renderer = Renderer::new(&solver, axis, width).with_quantity(colour);
    // A run's pictures share one colour scale that only widens, so that a colour
    // means the same value from frame to frame of the animation.
    let mut sequence_range: Option<ColourRange> = None;
    let dt = time_step(&solver);
    let mut gif_writer = if gif {
        let delay_ms = (f64::from(dt) * every as f64 * 1000.0)
            .round()
            .min(f64::from(u32::MAX)) as u32;
        Some(GifWriter::create(&out_dir.join(ANIMATION), delay_ms)?)
    } else {
        None
    };
    let mut frame = Frame::default();
    let mut summary = RunSummary {
        scene,
        dimension: solver.dimension(),
        particles: solver.len(),
        steps: 0,
        simulated_time: 0.0,
        wall_time: Duration::ZERO,
        step_time: Duration::ZERO,
        particle_iterations: 0.0,
        average_density_error: 0.0,
        max_density_error: 0.0,
        threads: rayon::current_num_threads(),
        frames: Vec::new(),
        frame_times: Vec::new(),
        series: series.as_ref().map(|s| s.series_path().to_owned()),
        collection: series
            .as_ref()
            .and_then(|s| s.pvd_path().map(Path::to_path_buf)),
        surfaces: Vec::new(),
        surface_series: surface_series.as_ref().map(|s| s.series_path().to_owned()),
        renders: Vec::new(),
        gif: None,
        picture: out_dir.join(LAST_FRAME),
    };
    // The surface of the latest frame written, with its simulated time: the picture of
    // the last frame draws it when the run ends on that frame.
    let mut last_surface: Option<(f64, SurfaceMesh)> = None;
    let mut outputs =
        |solver: &AnySolver, index: u64, frame: &mut Frame, summary: &mut RunSummary| {
            if format.is_none() && surface.is_none() && !render && gif_writer.is_none() {
                return Ok::<(), CliError>(());
            }
            frame.capture(solver);
            if let (Some(format), Some(series)) = (format, series.as_mut()) {
                let name = frame_file_name(index, format.extension());
                let path = out_dir.join(&name);
                format.write(frame, &path)?;
                series.push(name, solver.time())?;
                summary.frames.push(path);
                summary.frame_times.push(solver.time());
            }
            let mut mesh = None;
            if let Some((surface_format, params)) = &surface {
                let name = surface_file_name(index, surface_format.extension());
                let path = out_dir.join(&name);
                let reconstructed = reconstruct(frame, params, &name)?;
                reconstructed.write(*surface_format, &path)?;
                if let Some(s) = surface_series.as_mut() {
                    s.push(name, solver.time())?;
                }
                summary.surfaces.push(path);
                mesh = Some(reconstructed);
            }
            if render || gif_writer.is_some() {
                // The scale comes from the particles, whose values bound the ones
                // interpolated to the surface.
                let range = renderer.colour_range(frame);
                let range = sequence_range.unwrap_or(range).widened(range);
                sequence_range = Some(range);
                let img = match &mesh {
                    Some(mesh) => renderer.render_surface(mesh, solver.time(), range),
                    None => renderer.render_with(frame, solver.time(), range),
                };
                if render {
                    let path = out_dir.join(frame_file_name(index, "png"));
                    save_png(&img, &path)?;
                    summary.renders.push(path);
                }
                if let Some(g) = gif_writer.as_mut() {
                    g.push(&img)?;
                }
            }
            if let Some(mesh) = mesh {
                last_surface = Some((solver.time(), mesh));
            }
            Ok(())
        };
    outputs(&solver, 0, &mut frame, &mut summary)?;
    let mut progress = Progress::new(progress, steps);
    let mut error_sum = 0.0f64;
    for step in 1..=steps {
        let t0 = Instant::now();
        let d = solver.step()?;
        summary.step_time += t0.elapsed();
        summary.steps = step;
        summary.particle_iterations += d.particles as f64 * f64::from(d.iterations);
        error_sum += f64::from(d.average_density_error);
        summary.max_density_error = summary.max_density_error.max(d.max_density_error);
        if step % every == 0 {
            outputs(&solver, step / every, &mut frame, &mut summary)?;
        }
        progress.step(step, solver.time());
    }
    progress.finish();
    if let Some(g) = gif_writer {
        g.finish()?;
        summary.gif = Some(out_dir.join(ANIMATION));
    }
    frame.capture(&solver);
    let last_picture = match (&surface, last_surface) {
        (None, _) => renderer.render(&frame, solver.time()),
        (Some((_, params)), last) => {
            let mesh = match last {
                Some((time, mesh)) if time == solver.time() => mesh,
                _ => reconstruct(&frame, params, LAST_FRAME)?,
            };
            renderer.render_surface(&mesh, solver.time(), renderer.colour_range(&frame))
        }
    };
    save_png(&last_picture, &summary.picture)?;
    summary.particles = solver.len();
    summary.simulated_time = solver.time();
    summary.average_density_error = if steps > 0 {
        (error_sum / steps as f64) as f32
    } else {
        0.0
    };
    summary.wall_time = start.elapsed();
    Ok(summary)
}

/// The surface of `frame`, whose errors name `what` it is for (a mesh file or a
/// picture).
fn reconstruct(frame: &Frame, params: &SurfaceParams, what: &str) -> Result<SurfaceMesh, CliError> {
    SurfaceMesh::reconstruct(frame, params).map_err(|e| match e {
        CliError::Surface { message } => CliError::Surface {
            message: format!("{what}: {message}"),
        },
        other => other,
    })
}

/// The number of steps that covers `duration` simulated seconds at time step `dt`.
pub(crate) fn steps_for(duration: f64, dt: f32) -> u64 {
    let n = (duration / f64::from(dt) - 1e-6).ceil();
    if n.is_finite() && n > 0.0 {
        n.min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// Displays a path relative to the current directory when it is inside it.
pub(crate) fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_up_to_whole_steps() {
        assert_eq!(steps_for(1.0, 1.0 / 60.0), 60);
        assert_eq!(steps_for(1.01, 0.5), 3);
        assert_eq!(steps_for(0.0, 0.1), 0);
        assert_eq!(steps_for(f64::INFINITY, 0.1), 0);
    }

    #[test]
    fn figures_are_readable() {
        assert_eq!(duration(Duration::from_micros(12_345)), "12.35 ms");
        assert_eq!(si(8.3e6), "8.30 M");
        assert_eq!(si(12.0), "12");
    }
}
