//! The command line, parsed by clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::formats::Format;
use crate::render::{Axis, MIN_WIDTH, Quantity};
use crate::surface::SurfaceFormat;

/// The name of the environment variable that shortens the default scene's run.
pub const DEFAULT_STEPS_VAR: &str = "PBF_DEFAULT_STEPS";

/// `pbf`: Position Based Fluids from the command line.
#[derive(Debug, Parser)]
#[command(
    name = "pbf",
    version,
    about = "Position Based Fluids: run scenes, write frames for ParaView, Houdini and Blender, draw pictures",
    long_about = "Position Based Fluids (Macklin & Müller 2013) from the command line.\n\n\
        With no arguments, runs the built-in 3D dam break for a few seconds, prints a summary \
        and writes a picture of the last frame to pbf-out/last_frame.png.",
    after_help = "Examples:\n  \
        pbf                                   run the built-in dam break\n  \
        pbf scenes                            list the built-in scenes\n  \
        pbf init glass                        write glass.toml to edit\n  \
        pbf run glass.toml --format vtk --every 2 --render --gif\n  \
        pbf bench                             particle-iterations per second, 1 and all threads\n  \
        pbf validate --quick --only dam-break   the validation suite, written to docs/\n\n\
        pbf soak                              100,000 steps of a small scene, checked every 1,000\n\n\
        Environment: PBF_DEFAULT_STEPS=N runs the built-in default scene for N steps \
        (when no --steps or --duration is given)."
)]
pub struct Cli {
    /// What to do (default: run the built-in dam break).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scene file (or the built-in dam break) and write frames and pictures.
    Run(RunArgs),
    /// List the built-in scenes.
    Scenes,
    /// Write a built-in scene as an editable TOML scene file.
    Init(InitArgs),
    /// Time the 3D dam break on one thread and on all of them.
    Bench(BenchArgs),
    /// Run the validation suite and write docs/VALIDATION.md with its plots.
    Validate(ValidateArgs),
    /// Run a small scene for a long time, checking the state every so many steps
    /// (finite, inside the domain, energy and density error bounded); exits non-zero
    /// at the first failed check.
    Soak(SoakArgs),
}

/// `pbf validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A reduced grid and shorter runs (a few minutes).
    #[arg(long)]
    pub quick: bool,
    /// Run only these parts (repeat or separate with commas; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<crate::validate::Part>,
    /// The directory of VALIDATION.md (plots go to its validation/ folder).
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "out",
        value_name = "DIR",
        default_value = "docs"
    )]
    pub out: PathBuf,
}

/// `pbf soak`.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// The built-in scene (see `pbf scenes`).
    #[arg(long, default_value = "dam-break-2d")]
    pub scene: String,
    /// About this many particles.
    #[arg(long, default_value_t = 1200, value_parser = between(8u64, 10_000_000))]
    pub particles: u64,
    /// Steps to run.
    #[arg(long, default_value_t = 100_000)]
    pub steps: u64,
    /// Steps between checks (the last step is always checked).
    #[arg(long, default_value_t = 1000, value_parser = at_least(1u64))]
    pub check_every: u64,
    /// Fail when the mean specific mechanical energy exceeds this factor times its
    /// reference (the smaller of the start's and the last check's).
    #[arg(long, default_value_t = 1.1)]
    pub energy_factor: f64,
    /// Fail when a checked step's average density error exceeds this fraction.
    #[arg(long, default_value_t = 0.05)]
    pub max_average_density_error: f32,
    /// Fail when a checked step's largest density error exceeds this fraction.
    #[arg(long, default_value_t = 0.5)]
    pub max_density_error: f32,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = between(1u32, 4096))]
    pub threads: Option<u32>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `pbf run`.
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// The scene file (TOML); the built-in 3D dam break when left out.
    pub scene: Option<PathBuf>,
    /// Number of steps (overrides the scene's [run]).
    #[arg(long, conflicts_with = "duration")]
    pub steps: Option<u64>,
    /// Simulated seconds, rounded up to whole steps (overrides the scene's [run]).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<f64>,
    /// Output directory for frames and pictures.
    #[arg(
        long = "output",
        short = 'o',
        visible_alias = "out",
        value_name = "DIR",
        default_value = "pbf-out"
    )]
    pub out: PathBuf,
    /// Delete the files an earlier run wrote in the output directory (frames,
    /// frames.pvd, frames.EXT.series, surface meshes, surfaces.EXT.series, pictures),
    /// then run; without it, a directory that holds frames is an error.
    #[arg(long)]
    pub overwrite: bool,
    /// Write a frame file every `--every` steps in this format (frame_00000.vtk, ...),
    /// with frames.EXT.series (and frames.pvd for vtk) listing each frame's time.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Reconstruct the fluid's surface at every frame (3D scenes) and write it in this
    /// format (surface_00000.obj, ...) with splashsurf: particle radius and cube size
    /// spacing/2, kernel support h, iso-surface 0.6. PLY and VTK carry the velocity and
    /// density at each vertex; surfaces.EXT.series lists each mesh's time. Pictures
    /// (--render, --gif, last_frame.png) then draw the surface instead of the particles.
    #[arg(long, value_enum)]
    pub surface: Option<SurfaceFormat>,
    /// The marching-cubes cell of --surface in metres (default: spacing/2; from
    /// spacing/10 to h).
    #[arg(long, value_name = "METRES", requires = "surface", allow_negative_numbers = true, value_parser = positive_metres)]
    pub surface_cube_size: Option<f64>,
    /// The iso-surface threshold of --surface, between 0 and 1 (default 0.6): the
    /// fraction of the interior's colour field where the surface lies; lower grows the
    /// fluid, higher shrinks it.
    #[arg(long, value_name = "THRESHOLD", requires = "surface", allow_negative_numbers = true, value_parser = iso_threshold)]
    pub surface_iso: Option<f64>,
    /// Steps between frames (default: the scene's [run] every, else 1).
    #[arg(long, value_parser = at_least(1u64))]
    pub every: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = between(1u32, 4096))]
    pub threads: Option<u32>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Write a PNG of every frame (frame_00000.png, ...): the particles, or with
    /// --surface the reconstructed surface, shaded and coloured by --colour.
    #[arg(long)]
    pub render: bool,
    /// Write an animated GIF of the frames (animation.gif).
    #[arg(long)]
    pub gif: bool,
    /// The axis 3D scenes are viewed along in pictures.
    #[arg(long, value_enum, default_value_t = Axis::Z)]
    pub axis: Axis,
    /// The quantity that colours the particles (or the surface) in pictures: speed
    /// (m/s, from 0 to the frame's 99th percentile) or density (from its 1st to its
    /// 99th percentile).
    #[arg(long, value_enum, default_value_t = Quantity::Speed, visible_alias = "color")]
    pub colour: Quantity,
    /// Picture width in pixels (room for the axes, the time and the colour bar
    /// included).
    #[arg(long, default_value_t = 640, value_parser = between(MIN_WIDTH, 4096))]
    pub width: u32,
}

/// `pbf init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The built-in scene (see `pbf scenes`).
    pub name: String,
    /// About this many particles (default 8000 in 3D, 2000 in 2D).
    #[arg(long, value_parser = between(8u64, 100_000_000))]
    pub particles: Option<u64>,
    /// The file to write (default NAME.toml).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the file if it exists.
    #[arg(long, visible_alias = "overwrite")]
    pub force: bool,
}

/// `pbf bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// About this many particles.
    #[arg(long, default_value_t = 50_000, value_parser = between(8u64, 100_000_000))]
    pub particles: u64,
    /// Timed steps per configuration.
    #[arg(long, default_value_t = 20, value_parser = at_least(1u64))]
    pub steps: u64,
}

/// The value parser of a whole number of at least `min`: its errors say so in words
/// (clap's own range parser prints the range as `1..18446744073709551615`).
pub(crate) fn at_least<T: Whole>(
    min: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| whole(s, min, None)
}

/// The value parser of a whole number in `min..=max`, with errors in words.
pub(crate) fn between<T: Whole>(
    min: T,
    max: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| whole(s, min, Some(max))
}

/// The integer types of counted flags.
pub(crate) trait Whole:
    std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static
{
}
impl Whole for u32 {}
impl Whole for u64 {}

fn whole<T: Whole>(s: &str, min: T, max: Option<T>) -> Result<T, String> {
    let range = || match max {
        Some(max) => format!("must be between {min} and {max}"),
        None => format!("must be at least {min}"),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let t = s.trim();
    let Ok(n) = t.parse::<T>() else {
        return Err(if digits(t.strip_prefix('-').unwrap_or("")) {
            format!("{t} is negative: it {}", range())
        } else if digits(t) {
            format!("{t} is too large: it {}", range())
        } else {
            format!("`{s}` is not a whole number: it {}", range())
        });
    };
    if n < min || max.is_some_and(|max| n > max) {
        Err(range())
    } else {
        Ok(n)
    }
}

/// A length in metres: a finite number above 0.
fn positive_metres(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of metres"))?;
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(format!(
            "{s} is invalid: it must be a finite length above 0 metres"
        ))
    }
}

/// An iso-surface threshold: a number strictly between 0 and 1 (the colour field is
/// about 1 inside the fluid and 0 outside, so no surface lies at 0 or 1).
fn iso_threshold(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(format!("{s} is invalid: it must be above 0 and below 1"))
    }
}

fn parse_duration(s: &str) -> Result<f64, String> {
    let d: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if d.is_finite() && d >= 0.0 {
        Ok(d)
    } else {
        Err(format!("`{s}` must be a finite number of seconds >= 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_errors_are_in_words() {
        let every = at_least(1u64);
        assert_eq!(every("0"), Err("must be at least 1".to_owned()));
        assert_eq!(every("7"), Ok(7));
        assert_eq!(
            every("-2"),
            Err("-2 is negative: it must be at least 1".to_owned())
        );
        assert_eq!(
            every("lots"),
            Err("`lots` is not a whole number: it must be at least 1".to_owned())
        );
        assert!(
            every("99999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
        let threads = between(1u32, 4096);
        assert_eq!(
            threads("4097"),
            Err("must be between 1 and 4096".to_owned())
        );
        assert_eq!(threads("4096"), Ok(4096));
    }

    #[test]
    fn surface_values_are_checked_in_words() {
        assert_eq!(positive_metres("0.01"), Ok(0.01));
        for bad in ["0", "-0.1", "inf", "NaN"] {
            let e = positive_metres(bad).unwrap_err();
            assert!(e.contains("above 0 metres"), "{bad}: {e}");
        }
        assert!(positive_metres("big").unwrap_err().contains("not a number"));
        assert_eq!(iso_threshold("0.6"), Ok(0.6));
        for bad in ["0", "1", "1.5", "-0.2", "NaN"] {
            let e = iso_threshold(bad).unwrap_err();
            assert!(e.contains("above 0 and below 1"), "{bad}: {e}");
        }
    }
}
