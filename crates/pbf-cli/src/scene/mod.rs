//! Scene files: the TOML schema, loading with positioned errors, and building a
//! solver from a scene.
//!
//! ```toml
//! dimension = 3                      # 2 or 3; every array below has this many entries
//!
//! [solver]                           # only `spacing` is required
//! spacing = 0.05                     # particle rest spacing s (m); h = kernel_radius_rel * s
//! kernel_radius_rel = 2.0
//! rest_density = 1000.0
//! time_step = 0.016666668
//! iterations = 4                     # or: adaptive = { max_density_error_percent = 0.1, min = 2, max = 20 }
//! gravity = [0.0, -9.81, 0.0]
//! cfm_rel = 1.0
//! s_corr_k = 0.1
//! s_corr_n = 4
//! s_corr_dq_rel = 0.2
//! xsph_c = 0.01
//! xsph_period = 0.008333334         # seconds over which xsph_c blends, or "step" (per step)
//! vorticity_rel = 0.1
//! viscosity = 0.0                    # kinematic viscosity nu (m^2/s); water 1e-6, honey 5e-3
//! unilateral = true
//! relaxation = "auto"                # or a Jacobi relaxation omega in (0, 1]; 1 = unrelaxed
//! backend = "lanes"                  # or "lanes8", "scalar"
//! acceleration = "none"              # or "chebyshev" (needs `iterations` and relaxation "auto")
//! coarse_correction = true           # a Poisson solve on 2h cells before the passes
//! keep_lists = true                  # keep valid neighbour lists between steps; false: search every step
//!
//! [domain]
//! lo = [0.0, 0.0, 0.0]
//! hi = [2.0, 1.0, 0.5]
//! friction = 0.0                     # optional
//! restitution = 0.0                  # optional
//! wall = "free-slip"                 # optional: or "no-slip" (needs viscosity > 0), or
//!                                    # per axis [lo face, hi face]: [["free-slip", "free-slip"], ["no-slip", "no-slip"], ...]
//! periodic = [false, false, false]   # optional, one flag an axis: a periodic axis has no
//!                                    # walls and a length of at least three kernel radii
//!
//! [[collider]]                       # any number
//! shape = "sphere"                   # plane: point, normal; box: center, half_extents;
//! center = [1.2, 0.2, 0.25]          # sphere: center, radius; capsule: a, b, radius;
//! radius = 0.15                      # cylinder: base, radius, height
//! container = { wall_thickness = 0.1, open_top = true }   # optional: hollow
//! friction = 0.0                     # optional
//! restitution = 0.0                  # optional
//! wall = "free-slip"                 # optional: or "no-slip" (needs viscosity > 0)
//!
//! [[block]]                          # any number: a lattice of fluid at rest spacing
//! lo = [0.0, 0.0, 0.0]
//! hi = [0.5, 0.5, 0.5]
//! velocity = [0.0, 0.0, 0.0]         # optional
//!
//! [[emitter]]                        # any number
//! origin = [1.0, 0.9, 0.25]
//! direction = [0.0, -1.0, 0.0]
//! speed = 1.0
//! radius = 0.1
//! start = 0.0                        # optional
//! stop = 1.0
//!
//! [run]                              # optional; the command line overrides it
//! duration = 2.0                     # or: steps = 120
//! every = 2                          # write a frame every 2 steps
//! ```
//!
//! One concept per file: the scene as a whole, its loading and parsing here; the
//! `[solver]` table and the parameters it builds in `params`; the domain, colliders,
//! blocks and emitters in `objects`; the checks serde cannot make in `check`; the
//! solver a scene builds in `build`; and errors positioned in the file in `errors`.

mod build;
mod check;
mod errors;
mod objects;
mod params;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) use objects::VECTOR_FIELDS;
pub use objects::{
    BlockSpec, ColliderSpec, ContainerSpec, DomainSpec, EmitterSpec, ShapeName, WallName, WallSpec,
};
pub use params::{
    AccelerationName, AdaptiveSpec, BackendName, RelaxationSpec, SolverSpec, XsphPeriodSpec,
};

use crate::error::{CliError, SceneError};
use crate::spans::{KeyPath, Spans};

/// The display name of the embedded default scene in messages.
pub const DEFAULT_SCENE_NAME: &str = "<built-in default>";

/// The embedded default scene: the 3D dam break the no-argument run simulates.
pub const DEFAULT_SCENE: &str = include_str!("../../scenes/default.toml");

/// A scene file, as written in TOML. See the [module documentation](self) for an
/// example of every field.
///
/// ```
/// let scene: pbf_cli::SceneFile = toml::from_str(pbf_cli::DEFAULT_SCENE)?;
/// assert_eq!(scene.dimension, 3);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// 2 or 3.
    pub dimension: u32,
    /// Solver parameters.
    pub solver: SolverSpec,
    /// The box that contains the simulation.
    pub domain: DomainSpec,
    /// Static colliders (`[[collider]]`).
    #[serde(default, rename = "collider", skip_serializing_if = "Vec::is_empty")]
    pub colliders: Vec<ColliderSpec>,
    /// Fluid blocks (`[[block]]`).
    #[serde(default, rename = "block", skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockSpec>,
    /// Emitters (`[[emitter]]`).
    #[serde(default, rename = "emitter", skip_serializing_if = "Vec::is_empty")]
    pub emitters: Vec<EmitterSpec>,
    /// How long to run and how often to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSpec>,
}

/// `[run]`: the length of the run (`steps` or `duration` in simulated seconds) and the
/// frame interval `every` (in steps).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RunSpec {
    pub steps: Option<u64>,
    pub duration: Option<f64>,
    pub every: Option<u64>,
}

/// How long a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunLength {
    /// A number of steps.
    Steps(u64),
    /// Simulated seconds (rounded up to whole steps).
    Duration(f64),
}

/// A parsed and checked scene file, ready to [`build`](Self::build).
///
/// ```
/// let scene = pbf_cli::Scene::parse(pbf_cli::DEFAULT_SCENE, "default.toml")?;
/// let solver = scene.build()?;
/// assert_eq!(solver.dimension(), 3);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Scene {
    /// The scene as written.
    pub file: SceneFile,
    /// Where it came from (for messages).
    pub path: PathBuf,
    text: String,
}

impl Scene {
    /// Reads and parses the scene file at `path`.
    ///
    /// # Errors
    /// [`CliError::Read`] naming the path when it cannot be read; [`CliError::Scene`]
    /// with line, column and field when it is malformed.
    ///
    /// ```
    /// let err = pbf_cli::Scene::load("no/such/scene.toml").unwrap_err();
    /// assert!(err.to_string().contains("no/such/scene.toml"));
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self, CliError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// The embedded default scene (the 3D dam break).
    ///
    /// # Errors
    /// None in practice: the embedded text is checked by the tests.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Scene::default_scene()?.file.dimension, 3);
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn default_scene() -> Result<Self, CliError> {
        Self::parse(DEFAULT_SCENE, DEFAULT_SCENE_NAME)
    }

    /// Parses scene text; `path` names it in messages.
    ///
    /// # Errors
    /// [`CliError::Scene`] for a TOML syntax error, an unknown or missing field, a
    /// value of the wrong type, or an array whose length is not `dimension`.
    ///
    /// ```
    /// let err = pbf_cli::Scene::parse("dimension = 3\n[solver]\nspacing = 0.1\nfoo = 1\n", "s.toml");
    /// let msg = err.unwrap_err().to_string();
    /// assert!(msg.starts_with("s.toml:4:1: `solver.foo`"), "{msg}");
    /// ```
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Self, CliError> {
        let path = path.as_ref().to_owned();
        let file: SceneFile = match toml::from_str(text) {
            Ok(f) => f,
            Err(e) => {
                let spans = Spans::new(text);
                let span = e.span().unwrap_or(0..0);
                let (line, column) = spans.line_column(span.start);
                // A missing field's error spans the table that lacks it: name the field
                // in that table, not an entry that happens to start where it does.
                let missing = e
                    .message()
                    .strip_prefix("missing field `")
                    .and_then(|rest| rest.split('`').next());
                let entry = match missing {
                    Some(name) => spans.table_at(span).map(|table| table.key(name)),
                    None => spans.path_at(span.start),
                };
                let field = entry.filter(|p| !p.is_root()).map(|p| p.to_string());
                let message = e.message().trim().replace('\n', "; ");
                return Err(SceneError {
                    path,
                    line,
                    column,
                    field,
                    message,
                }
                .into());
            }
        };
        let scene = Self {
            file,
            path,
            text: text.to_owned(),
        };
        scene.check_shape()?;
        Ok(scene)
    }

    /// The run length the file asks for, if any.
    ///
    /// # Errors
    /// Never after [`parse`](Self::parse), which checks that at most one is given.
    ///
    /// ```
    /// use pbf_cli::{RunLength, Scene};
    /// let s = Scene::parse("dimension = 2\n[solver]\nspacing = 0.1\n[domain]\nlo = [0, 0]\nhi = [1, 1]\n[run]\nsteps = 5\n", "s")?;
    /// assert_eq!(s.run_length(), Some(RunLength::Steps(5)));
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn run_length(&self) -> Option<RunLength> {
        let run = self.file.run.as_ref()?;
        match (run.steps, run.duration) {
            (Some(n), _) => Some(RunLength::Steps(n)),
            (None, Some(d)) => Some(RunLength::Duration(d)),
            (None, None) => None,
        }
    }

    /// The frame interval the file asks for, if any.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Scene::default_scene()?.every(), Some(5));
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn every(&self) -> Option<u64> {
        self.file.run.as_ref().and_then(|r| r.every)
    }

    /// Checks that the scene has fluid to simulate: at least one `[[block]]` (a block
    /// always holds particles: pbf-solver rejects one too small for the spacing) or one
    /// `[[emitter]]`.
    ///
    /// # Errors
    /// [`CliError::Scene`] saying what is missing.
    ///
    /// ```
    /// let s = pbf_cli::Scene::parse("dimension = 2\n[solver]\nspacing = 0.1\n[domain]\nlo = [0, 0]\nhi = [1, 1]\n", "s.toml")?;
    /// let msg = s.check_fluid().unwrap_err().to_string();
    /// assert!(msg.contains("no [[block]]") && msg.contains("no [[emitter]]"), "{msg}");
    /// assert!(pbf_cli::Scene::default_scene()?.check_fluid().is_ok());
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn check_fluid(&self) -> Result<(), CliError> {
        if self.file.blocks.is_empty() && self.file.emitters.is_empty() {
            return Err(self.error_at(
                &KeyPath::root(),
                "the scene has no particles to simulate: it has no [[block]] of fluid and no \
                 [[emitter]]; add one (`pbf init dam-break` writes a scene to start from)",
            ));
        }
        Ok(())
    }
}

/// The f32 array of a length-checked field.
fn vector<const D: usize>(v: &[f64]) -> [f32; D] {
    core::array::from_fn(|a| v.get(a).copied().unwrap_or(0.0) as f32)
}
