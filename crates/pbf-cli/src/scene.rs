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
//!
//! [[collider]]                       # any number
//! shape = "sphere"                   # plane: point, normal; box: center, half_extents;
//! center = [1.2, 0.2, 0.25]          # sphere: center, radius; capsule: a, b, radius;
//! radius = 0.15                      # cylinder: base, radius, height
//! container = { wall_thickness = 0.1, open_top = true }   # optional: hollow
//! friction = 0.0                     # optional
//! restitution = 0.0                  # optional
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

use std::path::{Path, PathBuf};

use pbf_solver::scenes::AnySolver;
use pbf_solver::{
    Acceleration, Backend, Collider, ColliderKind, CoreError, Domain, Emitter, Iterations, Params,
    Relaxation, Shape, Solver,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{CliError, SceneError};
use crate::spans::{KeyPath, Spans};

/// The display name of the embedded default scene in messages.
pub const DEFAULT_SCENE_NAME: &str = "<built-in default>";

/// The embedded default scene: the 3D dam break the no-argument run simulates.
pub const DEFAULT_SCENE: &str = include_str!("../scenes/default.toml");

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

/// `[solver]`: every field but `spacing` is optional and defaults as in
/// [`pbf_solver::Params::builder`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // The fields are the builder's, documented there.
pub struct SolverSpec {
    pub spacing: f64,
    pub kernel_radius_rel: Option<f64>,
    pub rest_density: Option<f64>,
    pub time_step: Option<f64>,
    /// A fixed number of constraint iterations per step (exclusive with `adaptive`).
    pub iterations: Option<u32>,
    /// Adaptive iteration count (exclusive with `iterations`).
    pub adaptive: Option<AdaptiveSpec>,
    pub gravity: Option<Vec<f64>>,
    pub cfm_rel: Option<f64>,
    pub s_corr_k: Option<f64>,
    pub s_corr_n: Option<u32>,
    pub s_corr_dq_rel: Option<f64>,
    pub xsph_c: Option<f64>,
    pub xsph_period: Option<XsphPeriodSpec>,
    pub vorticity_rel: Option<f64>,
    pub unilateral: Option<bool>,
    pub relaxation: Option<RelaxationSpec>,
    pub backend: Option<BackendName>,
    pub acceleration: Option<AccelerationName>,
    pub coarse_correction: Option<bool>,
    pub keep_lists: Option<bool>,
}

/// `adaptive = { max_density_error_percent, min, max }`: see
/// [`pbf_solver::Iterations::Adaptive`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AdaptiveSpec {
    pub max_density_error_percent: f64,
    pub min: u32,
    pub max: u32,
}

/// `relaxation = "auto"` or a number: the Jacobi relaxation of the constraint passes,
/// [`pbf_solver::Relaxation`] (the library checks that a number is in `(0, 1]`).
///
/// ```
/// use pbf_cli::scene::RelaxationSpec;
/// #[derive(serde::Deserialize)]
/// struct T { relaxation: RelaxationSpec }
/// let t: T = toml::from_str("relaxation = \"auto\"").unwrap();
/// assert_eq!(t.relaxation, RelaxationSpec::Auto);
/// let t: T = toml::from_str("relaxation = 1").unwrap();
/// assert_eq!(t.relaxation, RelaxationSpec::Fixed(1.0));
/// assert!(toml::from_str::<T>("relaxation = \"none\"").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RelaxationSpec {
    /// `"auto"`: [`pbf_solver::Relaxation::Auto`].
    Auto,
    /// A number: [`pbf_solver::Relaxation::Fixed`].
    Fixed(f64),
}

impl Serialize for RelaxationSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            RelaxationSpec::Auto => serializer.serialize_str("auto"),
            RelaxationSpec::Fixed(w) => serializer.serialize_f64(w),
        }
    }
}

impl<'de> Deserialize<'de> for RelaxationSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match word_or_number(deserializer, "auto", "\"auto\" or a number in (0, 1]")? {
                None => RelaxationSpec::Auto,
                Some(w) => RelaxationSpec::Fixed(w),
            },
        )
    }
}

/// `xsph_period = "step"` or a number of seconds: the time over which `xsph_c` blends,
/// [`pbf_solver::ParamsBuilder::xsph_period`] (the library checks that a number is finite
/// and positive).
///
/// ```
/// use pbf_cli::scene::XsphPeriodSpec;
/// #[derive(serde::Deserialize)]
/// struct T { xsph_period: XsphPeriodSpec }
/// let t: T = toml::from_str("xsph_period = \"step\"").unwrap();
/// assert_eq!(t.xsph_period, XsphPeriodSpec::Step);
/// let t: T = toml::from_str("xsph_period = 0.01").unwrap();
/// assert_eq!(t.xsph_period, XsphPeriodSpec::Seconds(0.01));
/// assert!(toml::from_str::<T>("xsph_period = \"frame\"").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XsphPeriodSpec {
    /// `"step"`: the paper's per-step blend (`None`).
    Step,
    /// A number: the blend `xsph_c` per this many seconds.
    Seconds(f64),
}

impl Serialize for XsphPeriodSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            XsphPeriodSpec::Step => serializer.serialize_str("step"),
            XsphPeriodSpec::Seconds(t) => serializer.serialize_f64(t),
        }
    }
}

impl<'de> Deserialize<'de> for XsphPeriodSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match word_or_number(deserializer, "step", "\"step\" or a number of seconds")? {
                None => XsphPeriodSpec::Step,
                Some(t) => XsphPeriodSpec::Seconds(t),
            },
        )
    }
}

/// A TOML value that is either the string `word` (`None`) or a number.
fn word_or_number<'de, D: Deserializer<'de>>(
    deserializer: D,
    word: &'static str,
    expecting: &'static str,
) -> Result<Option<f64>, D::Error> {
    struct Visitor {
        word: &'static str,
        expecting: &'static str,
    }
    impl serde::de::Visitor<'_> for Visitor {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            if v == self.word {
                Ok(None)
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
    }
    deserializer.deserialize_any(Visitor { word, expecting })
}

/// `backend = "lanes" | "lanes8" | "scalar"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendName {
    /// SIMD lanes, the widest the CPU runs (the default).
    Lanes,
    /// Eight SIMD lanes on every CPU (the same results as `lanes`).
    Lanes8,
    /// The scalar reference.
    Scalar,
}

/// `acceleration = "none" | "chebyshev"`: [`pbf_solver::Acceleration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccelerationName {
    /// Plain (relaxed) Jacobi iterations (the default).
    None,
    /// Chebyshev semi-iteration over them.
    Chebyshev,
}

/// `[domain]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct DomainSpec {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub friction: Option<f64>,
    pub restitution: Option<f64>,
}

/// The `shape` of a collider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ShapeName {
    Plane,
    Box,
    Sphere,
    Capsule,
    Cylinder,
}

impl ShapeName {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ShapeName::Plane => "plane",
            ShapeName::Box => "box",
            ShapeName::Sphere => "sphere",
            ShapeName::Capsule => "capsule",
            ShapeName::Cylinder => "cylinder",
        }
    }

    /// The fields this shape takes, vectors first.
    fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            ShapeName::Plane => (&["point", "normal"], &[]),
            ShapeName::Box => (&["center", "half_extents"], &[]),
            ShapeName::Sphere => (&["center"], &["radius"]),
            ShapeName::Capsule => (&["a", "b"], &["radius"]),
            ShapeName::Cylinder => (&["base"], &["radius", "height"]),
        }
    }
}

/// `[[collider]]`: a shape with the fields it takes (see [`pbf_solver::Shape`]), an
/// optional `container` making it hollow, friction and restitution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ColliderSpec {
    pub shape: ShapeName,
    pub point: Option<Vec<f64>>,
    pub normal: Option<Vec<f64>>,
    pub center: Option<Vec<f64>>,
    pub half_extents: Option<Vec<f64>>,
    pub a: Option<Vec<f64>>,
    pub b: Option<Vec<f64>>,
    pub base: Option<Vec<f64>>,
    pub radius: Option<f64>,
    pub height: Option<f64>,
    pub container: Option<ContainerSpec>,
    pub friction: Option<f64>,
    pub restitution: Option<f64>,
}

/// The names of every shape's vector fields, in the order scene files list them.
pub(crate) const VECTOR_FIELDS: [&str; 7] = [
    "point",
    "normal",
    "center",
    "half_extents",
    "a",
    "b",
    "base",
];

impl ColliderSpec {
    pub(crate) fn vector_field(&self, name: &str) -> Option<&Vec<f64>> {
        match name {
            "point" => self.point.as_ref(),
            "normal" => self.normal.as_ref(),
            "center" => self.center.as_ref(),
            "half_extents" => self.half_extents.as_ref(),
            "a" => self.a.as_ref(),
            "b" => self.b.as_ref(),
            "base" => self.base.as_ref(),
            _ => None,
        }
    }

    fn scalar_field(&self, name: &str) -> Option<f64> {
        match name {
            "radius" => self.radius,
            "height" => self.height,
            _ => None,
        }
    }
}

/// `container = { wall_thickness, open_top }`: see [`pbf_solver::ColliderKind::Container`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ContainerSpec {
    pub wall_thickness: f64,
    #[serde(default)]
    pub open_top: bool,
}

/// `[[block]]`: a box filled with fluid on a lattice at the rest spacing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BlockSpec {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub velocity: Option<Vec<f64>>,
}

/// `[[emitter]]`: see [`pbf_solver::Emitter::new`]; `start` defaults to 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct EmitterSpec {
    pub origin: Vec<f64>,
    pub direction: Vec<f64>,
    pub speed: f64,
    pub radius: f64,
    pub start: Option<f64>,
    pub stop: f64,
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

    /// An error at the entry `path` names (its key): for a key that conflicts with
    /// another or does not belong where it is.
    pub(crate) fn error_at(&self, path: &KeyPath, message: impl Into<String>) -> CliError {
        let spans = Spans::new(&self.text);
        self.error_at_span(&spans, spans.locate(path), path, message)
    }

    /// An error about the value at `path`: positioned at the value (`-1` in
    /// `radius = -1`), where the entry has one in the file.
    pub(crate) fn error_at_value(&self, path: &KeyPath, message: impl Into<String>) -> CliError {
        let spans = Spans::new(&self.text);
        self.error_at_span(&spans, spans.locate_value(path), path, message)
    }

    fn error_at_span(
        &self,
        spans: &Spans<'_>,
        span: std::ops::Range<usize>,
        path: &KeyPath,
        message: impl Into<String>,
    ) -> CliError {
        let (line, column) = spans.line_column(span.start);
        SceneError {
            path: self.path.clone(),
            line,
            column,
            field: (!path.is_root()).then(|| path.to_string()),
            message: message.into(),
        }
        .into()
    }

    /// Checks what serde cannot: the dimension, array lengths, fields given together
    /// that exclude each other, and the fields each collider shape takes.
    fn check_shape(&self) -> Result<(), CliError> {
        let f = &self.file;
        let root = KeyPath::root();
        if f.dimension != 2 && f.dimension != 3 {
            return Err(self.error_at_value(
                &root.key("dimension"),
                format!("must be 2 or 3, not {}", f.dimension),
            ));
        }
        let d = f.dimension as usize;
        let check = |path: KeyPath, v: &[f64]| -> Result<(), CliError> {
            if v.len() == d {
                Ok(())
            } else {
                Err(self.error_at_value(
                    &path,
                    format!("has {} entries, expected {d} (dimension = {d})", v.len()),
                ))
            }
        };
        let solver = root.key("solver");
        if let Some(g) = &f.solver.gravity {
            check(solver.key("gravity"), g)?;
        }
        if f.solver.iterations.is_some() && f.solver.adaptive.is_some() {
            return Err(self.error_at(
                &solver.key("adaptive"),
                "give either `iterations` or `adaptive`, not both",
            ));
        }
        let domain = root.key("domain");
        check(domain.key("lo"), &f.domain.lo)?;
        check(domain.key("hi"), &f.domain.hi)?;
        for (i, c) in f.colliders.iter().enumerate() {
            let here = root.key("collider").index(i);
            let (vectors, scalars) = c.shape.fields();
            for name in VECTOR_FIELDS {
                match (c.vector_field(name), vectors.contains(&name)) {
                    (Some(v), true) => check(here.key(name), v)?,
                    (None, true) => {
                        return Err(
                            self.error_at(&here, format!("a {} needs `{name}`", c.shape.name()))
                        );
                    }
                    (Some(_), false) => {
                        return Err(self.error_at(
                            &here.key(name),
                            format!(
                                "a {} takes no `{name}` (it takes {})",
                                c.shape.name(),
                                takes(c.shape)
                            ),
                        ));
                    }
                    (None, false) => {}
                }
            }
            for name in ["radius", "height"] {
                match (c.scalar_field(name), scalars.contains(&name)) {
                    (None, true) => {
                        return Err(
                            self.error_at(&here, format!("a {} needs `{name}`", c.shape.name()))
                        );
                    }
                    (Some(_), false) => {
                        return Err(self.error_at(
                            &here.key(name),
                            format!(
                                "a {} takes no `{name}` (it takes {})",
                                c.shape.name(),
                                takes(c.shape)
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        for (i, b) in f.blocks.iter().enumerate() {
            let here = root.key("block").index(i);
            check(here.key("lo"), &b.lo)?;
            check(here.key("hi"), &b.hi)?;
            if let Some(v) = &b.velocity {
                check(here.key("velocity"), v)?;
            }
        }
        for (i, e) in f.emitters.iter().enumerate() {
            let here = root.key("emitter").index(i);
            check(here.key("origin"), &e.origin)?;
            check(here.key("direction"), &e.direction)?;
        }
        if let Some(run) = &f.run {
            let here = root.key("run");
            if run.steps.is_some() && run.duration.is_some() {
                return Err(self.error_at(
                    &here.key("duration"),
                    "give either `steps` or `duration`, not both",
                ));
            }
            if let Some(d) = run.duration
                && !(d.is_finite() && d >= 0.0)
            {
                return Err(self.error_at_value(
                    &here.key("duration"),
                    format!("{d} is invalid: must be >= 0 and finite"),
                ));
            }
            if run.every == Some(0) {
                return Err(self.error_at_value(&here.key("every"), "must be at least 1"));
            }
        }
        Ok(())
    }

    /// Builds the solver the scene describes: parameters, domain, colliders, fluid
    /// blocks and emitters.
    ///
    /// # Errors
    /// [`CliError::Scene`] at the offending key when pbf-solver rejects a value (a
    /// negative radius, a block outside the domain, ...).
    ///
    /// ```
    /// let s = pbf_cli::Scene::parse(
    ///     "dimension = 2\n[solver]\nspacing = 0.1\n[domain]\nlo = [0, 0]\nhi = [1, 1]\n[[block]]\nlo = [0, 0]\nhi = [0.5, 0.5]\n",
    ///     "s.toml",
    /// )?;
    /// assert_eq!(s.build()?.len(), 25);
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn build(&self) -> Result<AnySolver, CliError> {
        match self.file.dimension {
            2 => Ok(AnySolver::Two(self.build_in::<2>()?)),
            _ => Ok(AnySolver::Three(self.build_in::<3>()?)),
        }
    }

    fn build_in<const D: usize>(&self) -> Result<Solver<D>, CliError> {
        let f = &self.file;
        let s = &f.solver;
        let mut b = Params::<D>::builder(s.spacing as f32);
        if let Some(v) = s.kernel_radius_rel {
            b = b.kernel_radius_rel(v as f32);
        }
        if let Some(v) = s.rest_density {
            b = b.rest_density(v as f32);
        }
        if let Some(v) = s.time_step {
            b = b.time_step(v as f32);
        }
        if let Some(n) = s.iterations {
            b = b.iterations(Iterations::Fixed(n));
        }
        if let Some(a) = &s.adaptive {
            b = b.iterations(Iterations::Adaptive {
                max_density_error_percent: a.max_density_error_percent as f32,
                min: a.min,
                max: a.max,
            });
        }
        if let Some(g) = &s.gravity {
            b = b.gravity(vector(g));
        }
        if let Some(v) = s.cfm_rel {
            b = b.cfm_rel(v as f32);
        }
        if let Some(v) = s.s_corr_k {
            b = b.s_corr_k(v as f32);
        }
        if let Some(v) = s.s_corr_n {
            b = b.s_corr_n(v);
        }
        if let Some(v) = s.s_corr_dq_rel {
            b = b.s_corr_dq_rel(v as f32);
        }
        if let Some(v) = s.xsph_c {
            b = b.xsph_c(v as f32);
        }
        if let Some(v) = s.xsph_period {
            b = b.xsph_period(match v {
                XsphPeriodSpec::Step => None,
                XsphPeriodSpec::Seconds(t) => Some(t as f32),
            });
        }
        if let Some(v) = s.vorticity_rel {
            b = b.vorticity_rel(v as f32);
        }
        if let Some(v) = s.unilateral {
            b = b.unilateral(v);
        }
        if let Some(v) = s.relaxation {
            b = b.relaxation(match v {
                RelaxationSpec::Auto => Relaxation::Auto,
                RelaxationSpec::Fixed(w) => Relaxation::Fixed(w as f32),
            });
        }
        if let Some(v) = s.acceleration {
            b = b.acceleration(match v {
                AccelerationName::None => Acceleration::None,
                AccelerationName::Chebyshev => Acceleration::Chebyshev,
            });
        }
        if let Some(v) = s.coarse_correction {
            b = b.coarse_correction(v);
        }
        if let Some(v) = s.keep_lists {
            b = b.keep_lists(v);
        }
        if let Some(v) = s.backend {
            b = b.backend(match v {
                BackendName::Lanes => Backend::Lanes,
                BackendName::Lanes8 => Backend::Lanes8,
                BackendName::Scalar => Backend::Scalar,
            });
        }
        let params = b.build().map_err(|e| self.core_error(e, Context::Solver))?;
        let domain_spec = &f.domain;
        let domain = Domain::new(vector(&domain_spec.lo), vector(&domain_spec.hi))
            .and_then(|d| {
                d.with_response(
                    domain_spec.friction.unwrap_or(0.0) as f32,
                    domain_spec.restitution.unwrap_or(0.0) as f32,
                )
            })
            .map_err(|e| self.core_error(e, Context::Domain))?;
        let mut solver =
            Solver::new(params, domain).map_err(|e| self.core_error(e, Context::Solver))?;
        for (i, c) in f.colliders.iter().enumerate() {
            let v = |name: &str| {
                c.vector_field(name)
                    .map(|v| vector::<D>(v))
                    .unwrap_or([0.0; D])
            };
            let x = |name: &str| c.scalar_field(name).unwrap_or(0.0) as f32;
            let shape = match c.shape {
                ShapeName::Plane => Shape::Plane {
                    point: v("point"),
                    normal: v("normal"),
                },
                ShapeName::Box => Shape::Box {
                    center: v("center"),
                    half_extents: v("half_extents"),
                },
                ShapeName::Sphere => Shape::Sphere {
                    center: v("center"),
                    radius: x("radius"),
                },
                ShapeName::Capsule => Shape::Capsule {
                    a: v("a"),
                    b: v("b"),
                    radius: x("radius"),
                },
                ShapeName::Cylinder => Shape::Cylinder {
                    base: v("base"),
                    radius: x("radius"),
                    height: x("height"),
                },
            };
            let kind = match &c.container {
                None => ColliderKind::Solid,
                Some(k) => ColliderKind::Container {
                    wall_thickness: k.wall_thickness as f32,
                    open_top: k.open_top,
                },
            };
            let collider = Collider::new(shape, kind)
                .and_then(|c2| {
                    c2.with_response(
                        c.friction.unwrap_or(0.0) as f32,
                        c.restitution.unwrap_or(0.0) as f32,
                    )
                })
                .and_then(|c2| solver.add_collider(c2))
                .map_err(|e| self.core_error(e, Context::Collider(i)));
            collider?;
        }
        for (i, block) in f.blocks.iter().enumerate() {
            let velocity = block.velocity.as_deref().map_or([0.0; D], vector);
            solver
                .add_block(vector(&block.lo), vector(&block.hi), velocity)
                .map_err(|e| self.core_error(e, Context::Block(i)))?;
        }
        for (i, e) in f.emitters.iter().enumerate() {
            Emitter::new(
                vector(&e.origin),
                vector(&e.direction),
                e.speed as f32,
                e.radius as f32,
                e.start.unwrap_or(0.0) as f32,
                e.stop as f32,
            )
            .and_then(|emitter| solver.add_emitter(emitter))
            .map_err(|err| self.core_error(err, Context::Emitter(i)))?;
        }
        Ok(solver)
    }

    /// Maps an error of pbf-solver back to the key it concerns.
    fn core_error(&self, e: CoreError, context: Context) -> CliError {
        let root = KeyPath::root();
        let solver = root.key("solver");
        let (path, message) = match (&e, context) {
            (
                CoreError::InvalidParameter {
                    field,
                    value,
                    reason,
                },
                Context::Solver,
            ) => {
                let path = match *field {
                    "dimension" => root.key("dimension"),
                    "max_density_error_percent" => {
                        solver.key("adaptive").key("max_density_error_percent")
                    }
                    "iterations.min" => solver.key("adaptive").key("min"),
                    "iterations.max" => solver.key("adaptive").key("max"),
                    "iterations" if self.file.solver.adaptive.is_some() => solver.key("adaptive"),
                    other => solver.key(other),
                };
                (path, invalid(*value, reason))
            }
            (
                CoreError::InvalidCollider {
                    field,
                    value,
                    reason,
                    ..
                },
                Context::Solver | Context::Domain,
            ) => {
                let key = field.strip_prefix("domain.").unwrap_or(field);
                (root.key("domain").key(key), invalid(*value, reason))
            }
            (
                CoreError::InvalidCollider {
                    field,
                    value,
                    reason,
                    ..
                },
                Context::Collider(i),
            ) => {
                let here = root.key("collider").index(i);
                let path = match *field {
                    "wall_thickness" => here.key("container").key("wall_thickness"),
                    "kind" => here.key("container"),
                    other => here.key(other),
                };
                (path, invalid(*value, reason))
            }
            (
                CoreError::InvalidEmitter {
                    field,
                    value,
                    reason,
                },
                Context::Emitter(i),
            ) => (
                root.key("emitter").index(i).key(field),
                invalid(*value, reason),
            ),
            (CoreError::InvalidParameter { value, reason, .. }, Context::Block(i)) => (
                root.key("block").index(i).key("hi"),
                format!("the side hi - lo = {} is invalid: {reason}", short(*value)),
            ),
            (CoreError::Kernel(_), _) => (solver.key("spacing"), e.to_string()),
            (_, Context::Block(i)) => (root.key("block").index(i), e.to_string()),
            (_, Context::Collider(i)) => (root.key("collider").index(i), e.to_string()),
            (_, Context::Emitter(i)) => (root.key("emitter").index(i), e.to_string()),
            (_, Context::Domain) => (root.key("domain"), e.to_string()),
            (_, Context::Solver) => (solver, e.to_string()),
        };
        self.error_at_value(&path, message)
    }
}

/// What was being built when pbf-solver returned an error.
#[derive(Debug, Clone, Copy)]
enum Context {
    Solver,
    Domain,
    Collider(usize),
    Block(usize),
    Emitter(usize),
}

fn invalid(value: f64, reason: &str) -> String {
    if value.is_nan() {
        reason.to_owned()
    } else {
        // pbf-solver reports f32 values widened to f64: print the f32.
        format!("{} is invalid: {reason}", value as f32)
    }
}

/// A computed value to six decimals, trailing zeros dropped: `-0.2`, not `-0.19999999`.
fn short(value: f64) -> String {
    let s = format!("{value:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

fn takes(shape: ShapeName) -> String {
    let (v, s) = shape.fields();
    v.iter()
        .chain(s)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The f32 array of a length-checked field.
fn vector<const D: usize>(v: &[f64]) -> [f32; D] {
    core::array::from_fn(|a| v.get(a).copied().unwrap_or(0.0) as f32)
}
