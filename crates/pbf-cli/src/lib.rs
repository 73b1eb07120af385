//! The `pbf` command as a library: [`run`] takes the arguments `main` gets and returns
//! what happened, so tests drive the command without a process.
//!
//! ```text
//! pbf                                  run the built-in 3D dam break, print a summary,
//!                                      write pbf-out/last_frame.png
//! pbf run [SCENE.toml] [--steps N | --duration SECONDS] [-o|--output DIR] [--overwrite]
//!         [--format vtk|bgeo|bgeo-gz|ply|csv] [--every K] [--threads T] [-q|--quiet]
//!         [--render] [--gif] [--axis x|y|z] [--colour speed|density] [--width PX]
//!         [--surface obj|ply|vtk [--surface-cube-size M] [--surface-iso T]]
//! pbf scenes                           list the built-in scenes
//! pbf init NAME [--particles N] [-o|--output FILE] [--force]
//!                                      write a built-in scene as TOML
//! pbf bench [--particles N] [--steps N]
//! pbf validate [--quick] [--only stability,incompressibility,dam-break,conservation]
//!         [-o|--output DIR]            run the validation suite, write DIR/VALIDATION.md
//! pbf soak [--scene NAME] [--particles N] [--steps N] [--check-every K] [--threads T]
//!                                      run a small scene for 100,000 steps, check
//!                                      it every 1,000, exit 1 at the first failure
//! ```
//!
//! - Scenes are TOML files ([`scene`] documents the schema). A malformed scene is
//!   reported with file, line, column and field, and nothing runs.
//! - Frames go to `DIR/frame_00000.EXT` every `K` steps (frame 0 is the initial
//!   state): legacy binary VTK, classic BGEO, binary PLY or CSV ([`formats`]), each
//!   particle with its id, velocity and density. `DIR/frames.EXT.series` (ParaView's
//!   file series) and, for VTK, `DIR/frames.pvd` list each frame's simulated time and
//!   are rewritten after every frame.
//! - A directory that holds an earlier run's frames is an error naming it;
//!   `--overwrite` deletes the files a run writes there (and no others), then runs.
//!   `-o` is the output path in every subcommand (`--out` is an alias of `--output`).
//! - `--render` writes `DIR/frame_00000.png` and so on, `--gif` `DIR/animation.gif`;
//!   every run writes `DIR/last_frame.png`. Pictures ([`Renderer`]) show the particles
//!   as shaded discs coloured by `--colour` (speed by default), the colliders'
//!   outlines, axes in metres, the simulated time and a colour bar whose scale comes
//!   from the data (speed from 0 to the 99th percentile); the frames of one run share
//!   a scale that only widens, so that colours compare between them.
//! - `--surface` (3D scenes) reconstructs the fluid's surface at every frame with
//!   splashsurf and writes `DIR/surface_00000.EXT` ([`surface`]): particle radius and
//!   marching-cubes cell spacing/2, kernel support h, iso-surface 0.6
//!   (`--surface-cube-size`, `--surface-iso` override the last two).
//!   `DIR/surfaces.EXT.series` lists each mesh with its simulated time, and the
//!   pictures draw the surface instead of the particles
//!   ([`Renderer::render_surface`]): its triangles far to near, shaded flat by their
//!   normal and coloured by the quantity interpolated to the vertices. 2D scenes have
//!   no surface (splashsurf works in 3D), so their pictures always show particles.
//! - Progress goes to standard error: a bar on a terminal, plain lines otherwise.
//! - `PBF_DEFAULT_STEPS=N` shortens the built-in default scene to `N` steps when
//!   neither `--steps` nor `--duration` is given (the tests use it).
//!
//! # Example
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let out = dir.path().to_str().unwrap();
//! let outcome = pbf_cli::run(["pbf", "run", "--steps", "3", "--every", "1", "--format", "csv", "--out", out, "--quiet"])?;
//! let summary = outcome.summary().unwrap();
//! assert_eq!(summary.frames.len(), 4); // frames 0 to 3
//! assert!(dir.path().join("frame_00003.csv").exists());
//! # Ok::<(), pbf_cli::CliError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bench;
mod builtin;
mod cli;
mod error;
pub mod formats;
mod frame;
#[doc(hidden)]
pub mod fuzzing;
mod output;
mod progress;
mod render;
pub mod scene;
mod series;
mod simulate;
mod soak;
mod spans;
pub mod surface;
pub mod validate;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

pub use bench::{BenchReport, BenchRun, bench};
pub use builtin::{builtin_scene, default_particles, scene_to_toml};
pub use cli::DEFAULT_STEPS_VAR;
pub use error::{CliError, SceneError};
pub use formats::{Format, frame_file_name};
pub use frame::Frame;
pub use progress::{Progress, ProgressMode};
pub use render::{
    Axis, ColourRange, GifWriter, MIN_WIDTH, Quantity, RangeBasis, Renderer, save_png, speed_colour,
};
pub use scene::{DEFAULT_SCENE, RunLength, Scene, SceneFile};
pub use series::{PVD_FILE_NAME, series_file_name, surface_series_file_name};
pub use simulate::RunSummary;
pub use soak::{SoakCheck, SoakOptions, SoakReport, soak};
use surface::{SurfaceFormat, SurfaceParams};

use cli::{BenchArgs, Cli, Command, InitArgs, RunArgs, SoakArgs, ValidateArgs};
use simulate::{RunPlan, shown, steps_for};

/// What a successful command did.
///
/// ```
/// let outcome = pbf_cli::run(["pbf", "--version"])?;
/// assert!(matches!(outcome, pbf_cli::Outcome::Help));
/// assert_eq!(outcome.exit_code(), std::process::ExitCode::SUCCESS);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
#[derive(Debug)]
pub enum Outcome {
    /// A scene ran.
    Ran(Box<RunSummary>),
    /// The built-in scenes were listed.
    Listed,
    /// `pbf init` wrote this file.
    Initialised(PathBuf),
    /// The benchmark ran.
    Benchmarked(BenchReport),
    /// The validation suite ran and wrote its document.
    Validated(Box<validate::ValidationReport>),
    /// `pbf soak` ran and every check passed.
    Soaked(SoakReport),
    /// Help or version was printed.
    Help,
}

impl Outcome {
    /// The process exit code (success).
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::SUCCESS
    }

    /// The run's summary, if a scene ran.
    pub fn summary(&self) -> Option<&RunSummary> {
        match self {
            Outcome::Ran(s) => Some(s),
            _ => None,
        }
    }
}

/// Runs the command with `args` (the program name first, as in `std::env::args_os`),
/// printing to standard output.
///
/// # Errors
/// Every failure as a [`CliError`]; nothing panics on user input.
///
/// ```
/// let err = pbf_cli::run(["pbf", "run", "no-such-file.toml"]).unwrap_err();
/// assert!(err.to_string().contains("no-such-file.toml"));
/// assert_eq!(err.exit_code(), 1);
/// ```
pub fn run<I, T>(args: I) -> Result<Outcome, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with_output(args, &mut std::io::stdout().lock())
}

/// [`run`], printing to `out` instead of standard output (progress and errors are not
/// printed here: progress goes to standard error, errors are returned).
///
/// # Errors
/// As [`run`].
///
/// ```
/// let mut out = Vec::new();
/// pbf_cli::run_with_output(["pbf", "scenes"], &mut out)?;
/// assert!(String::from_utf8(out).unwrap().contains("dam-break"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn run_with_output<I, T>(args: I, out: &mut dyn Write) -> Result<Outcome, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = write!(out, "{}", e.render());
            return Ok(Outcome::Help);
        }
        Err(e) => return Err(e.into()),
    };
    match cli.command {
        None => run_scene(RunArgs::default_run(), out, true),
        Some(Command::Run(args)) => run_scene(args, out, false),
        Some(Command::Scenes) => list_scenes(out),
        Some(Command::Init(args)) => init(args, out),
        Some(Command::Bench(args)) => run_bench(args, out),
        Some(Command::Validate(args)) => run_validate(args, out),
        Some(Command::Soak(args)) => run_soak(args, out),
    }
}

impl RunArgs {
    /// The arguments of the no-argument run.
    fn default_run() -> Self {
        Self {
            out: PathBuf::from("pbf-out"),
            width: 640,
            ..Default::default()
        }
    }
}

fn run_scene(args: RunArgs, out: &mut dyn Write, no_arguments: bool) -> Result<Outcome, CliError> {
    let (scene, name) = match &args.scene {
        Some(path) => (Scene::load(path)?, path.display().to_string()),
        None => (
            Scene::default_scene()?,
            "dam break (built-in default)".to_owned(),
        ),
    };
    scene.check_fluid()?;
    let solver = scene.build()?;
    let dt = simulate::time_step(&solver);
    let from_env = || -> Result<Option<u64>, CliError> {
        if args.scene.is_some() {
            return Ok(None);
        }
        match std::env::var(DEFAULT_STEPS_VAR) {
            Ok(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| CliError::InvalidArgument {
                    flag: DEFAULT_STEPS_VAR,
                    message: format!("`{v}` is not a number of steps"),
                }),
            Err(_) => Ok(None),
        }
    };
    let steps = match (args.steps, args.duration) {
        (Some(n), _) => n,
        (None, Some(d)) => steps_for(d, dt),
        (None, None) => match (from_env()?, scene.run_length()) {
            (Some(n), _) => n,
            (None, Some(RunLength::Steps(n))) => n,
            (None, Some(RunLength::Duration(d))) => steps_for(d, dt),
            // One simulated second for a scene that does not say.
            (None, None) => steps_for(1.0, dt),
        },
    };
    let params = solver_params(&solver);
    let plan = RunPlan {
        scene: name,
        surface: surface_plan(&args, &params)?,
        solver,
        steps,
        every: args.every.or(scene.every()).unwrap_or(1).max(1),
        out_dir: args.out.clone(),
        overwrite: args.overwrite,
        format: args.format,
        render: args.render,
        gif: args.gif,
        axis: args.axis,
        colour: args.colour,
        width: args.width,
        progress: ProgressMode::detect(args.quiet),
    };
    if !args.quiet {
        let _ = writeln!(
            out,
            "pbf: {} ({}D, {} particles), {} steps of {:.4} s on {} threads",
            plan.scene,
            plan.solver.dimension(),
            plan.solver.len(),
            steps,
            dt,
            args.threads
                .map_or(rayon::current_num_threads(), |t| t as usize),
        );
    }
    let summary = match args.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t as usize)
            .build()
            .map_err(|e| CliError::InvalidArgument {
                flag: "--threads",
                message: e.to_string(),
            })?
            .install(|| simulate::execute(plan))?,
        None => simulate::execute(plan)?,
    };
    if !args.quiet {
        let _ = write!(out, "{}", summary.table());
        if let (Some(first), Some(last)) = (summary.frames.first(), summary.frames.last()) {
            let _ = writeln!(
                out,
                "frames: {} files, {} .. {}",
                summary.frames.len(),
                shown(first),
                shown(last)
            );
        }
        if let (Some(first), Some(last)) = (summary.surfaces.first(), summary.surfaces.last()) {
            let _ = writeln!(
                out,
                "surfaces: {} files, {} .. {}",
                summary.surfaces.len(),
                shown(first),
                shown(last)
            );
        }
        if let Some(series) = &summary.surface_series {
            let _ = writeln!(out, "surface time series: {}", shown(series));
        }
        if let Some(last) = summary.renders.last() {
            let _ = writeln!(
                out,
                "pictures: {} files, up to {}",
                summary.renders.len(),
                shown(last)
            );
        }
        if let Some(gif) = &summary.gif {
            let _ = writeln!(out, "animation: {}", shown(gif));
        }
        let _ = writeln!(
            out,
            "picture of the last frame: {}",
            shown(&summary.picture)
        );
        if no_arguments {
            let _ = writeln!(
                out,
                "next: `pbf scenes` lists the built-in scenes, `pbf init glass` writes one to edit, \
                 `pbf run glass.toml --format vtk --gif` runs it (`pbf --help` for more)"
            );
        }
    }
    Ok(Outcome::Ran(Box::new(summary)))
}

/// The dimension, rest spacing, kernel radius and rest density of a solver.
struct SolverFigures {
    dimension: usize,
    spacing: f32,
    h: f32,
    rest_density: f32,
}

fn solver_params(solver: &pbf_solver::scenes::AnySolver) -> SolverFigures {
    use pbf_solver::scenes::AnySolver;
    let (dimension, spacing, h, rest_density) = match solver {
        AnySolver::Two(s) => (
            2,
            s.params().spacing(),
            s.params().kernel_radius(),
            s.params().rest_density(),
        ),
        AnySolver::Three(s) => (
            3,
            s.params().spacing(),
            s.params().kernel_radius(),
            s.params().rest_density(),
        ),
    };
    SolverFigures {
        dimension,
        spacing,
        h,
        rest_density,
    }
}

/// The surface format and parameters of `--surface` and its overrides, checked against
/// the scene: a 3D scene, a cube size from spacing/10 (finer cells multiply the
/// triangles and the memory without adding detail the particles hold) to h (coarser
/// cells than the kernel miss whole particles).
fn surface_plan(
    args: &RunArgs,
    solver: &SolverFigures,
) -> Result<Option<(SurfaceFormat, SurfaceParams)>, CliError> {
    let Some(format) = args.surface else {
        return Ok(None);
    };
    if solver.dimension != 3 {
        return Err(CliError::InvalidArgument {
            flag: "--surface",
            message: format!(
                "surfaces are reconstructed in 3D scenes only (splashsurf works in 3D), and this scene is {}D",
                solver.dimension
            ),
        });
    }
    let mut params = SurfaceParams::for_scene(solver.spacing, solver.h, solver.rest_density);
    if let Some(cube) = args.surface_cube_size {
        let (min, max) = (f64::from(solver.spacing) / 10.0, f64::from(solver.h));
        if cube < min || cube > max {
            return Err(CliError::InvalidArgument {
                flag: "--surface-cube-size",
                message: format!(
                    "{cube} m is outside the scene's range: it must be from spacing/10 = {} m to the kernel radius h = {} m",
                    micro(min),
                    micro(max)
                ),
            });
        }
        params.cube_size = cube as f32;
    }
    if let Some(iso) = args.surface_iso {
        params.iso = iso as f32;
    }
    Ok(Some((format, params)))
}

/// A length rounded to micrometres for messages (`0.1`, not `0.10000000149011612`).
fn micro(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn list_scenes(out: &mut dyn Write) -> Result<Outcome, CliError> {
    let _ = writeln!(out, "built-in scenes (`pbf init NAME` writes one as TOML):");
    for s in pbf_solver::scenes::SCENES {
        let _ = writeln!(out, "  {:<18} {}D  {}", s.name, s.dimension, s.description);
    }
    let _ = writeln!(
        out,
        "the no-argument run uses the 3D dam-break (embedded default scene)"
    );
    Ok(Outcome::Listed)
}

fn init(args: InitArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let info = pbf_solver::scenes::SCENES
        .iter()
        .find(|s| s.name == args.name)
        .ok_or_else(|| CliError::UnknownScene {
            name: args.name.clone(),
            known: builtin::scene_names(),
        })?;
    let particles = args
        .particles
        .map_or(default_particles(info.dimension), |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        });
    let file = builtin_scene(info.name, particles, 3.0, 3)?;
    let path = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("{}.toml", info.name)));
    if path.exists() && !args.force {
        return Err(CliError::Write {
            path,
            message: "the file exists (use --force to overwrite it)".into(),
        });
    }
    let built = pbf_solver::scenes::build(info.name, particles)?;
    let title = format!(
        "pbf scene `{}` ({}D, {} particles): {}.",
        info.name,
        info.dimension,
        built.len(),
        info.description
    );
    std::fs::write(&path, scene_to_toml(&file, &title)).map_err(|e| CliError::write(&path, e))?;
    let _ = writeln!(
        out,
        "wrote {} ({} particles); run it with `pbf run {}`",
        path.display(),
        built.len(),
        path.display()
    );
    Ok(Outcome::Initialised(path))
}

fn run_soak(args: SoakArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let options = SoakOptions {
        scene: args.scene,
        particles: usize::try_from(args.particles).unwrap_or(usize::MAX),
        steps: args.steps,
        check_every: args.check_every,
        energy_factor: args.energy_factor,
        max_average_density_error: args.max_average_density_error,
        max_density_error: args.max_density_error,
        threads: args.threads.map(|t| t as usize),
        quiet: args.quiet,
    };
    Ok(Outcome::Soaked(soak(&options, out)?))
}

fn run_bench(args: BenchArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let particles = usize::try_from(args.particles).unwrap_or(usize::MAX);
    let report = bench(particles, args.steps)?;
    let _ = write!(out, "{}", report.table());
    Ok(Outcome::Benchmarked(report))
}

fn run_validate(args: ValidateArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let mut command = String::from("pbf validate");
    if args.quick {
        command.push_str(" --quick");
    }
    if !args.only.is_empty() {
        let names: Vec<String> = args
            .only
            .iter()
            .filter_map(|p| clap::ValueEnum::to_possible_value(p).map(|v| v.get_name().to_owned()))
            .collect();
        command.push_str(&format!(" --only {}", names.join(",")));
    }
    let options = validate::ValidateOptions {
        out: args.out,
        quick: args.quick,
        parts: args.only,
        command,
    };
    let report = validate::validate(&options, &mut std::io::stderr().lock())?;
    let _ = writeln!(
        out,
        "wrote {} in {:.1} min",
        report.document.display(),
        report.wall_time.as_secs_f64() / 60.0
    );
    Ok(Outcome::Validated(Box::new(report)))
}
