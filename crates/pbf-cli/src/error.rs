//! The error type of the command.

use std::path::PathBuf;

use pbf_solver::CoreError;

/// Where in a scene file something went wrong, and what.
///
/// `line` and `column` count from 1 (columns in characters); `field` is the dotted
/// key path of the offending entry (`solver.time_step`, `collider[0].radius`) when one
/// can be named.
///
/// ```
/// use pbf_cli::SceneError;
/// let e = SceneError {
///     path: "tank.toml".into(),
///     line: 7,
///     column: 10,
///     field: Some("collider[0].radius".into()),
///     message: "-1 is invalid: must be > 0 and finite".into(),
/// };
/// assert_eq!(
///     e.to_string(),
///     "tank.toml:7:10: `collider[0].radius`: -1 is invalid: must be > 0 and finite"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneError {
    /// The scene file (`<built-in default>` for the embedded scene).
    pub path: PathBuf,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
    /// The key path of the field concerned, if any.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: ", self.path.display(), self.line, self.column)?;
        if let Some(field) = &self.field {
            write!(f, "`{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SceneError {}

/// Everything the `pbf` command can fail with. `main` prints `error: {self}` and exits
/// with [`exit_code`](Self::exit_code).
///
/// ```
/// use pbf_cli::CliError;
/// let e = CliError::Read { path: "missing.toml".into(), source: std::io::ErrorKind::NotFound.into() };
/// assert!(e.to_string().contains("missing.toml"));
/// assert_eq!(e.exit_code(), 1);
/// ```
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line could not be parsed (clap's message, with usage).
    #[error("{0}")]
    Usage(#[from] clap::Error),
    /// A file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file or directory could not be written.
    #[error("cannot write `{path}`: {message}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A scene file is malformed or describes an invalid scene: nothing ran.
    #[error("{0}")]
    Scene(#[from] SceneError),
    /// `pbf init` was given a name that is not a built-in scene.
    #[error("unknown scene `{name}`; the built-in scenes are: {known}")]
    UnknownScene {
        /// The name given.
        name: String,
        /// The names that exist, comma separated.
        known: String,
    },
    /// A command-line value that clap accepted but the run cannot use.
    #[error("invalid value for `{flag}`: {message}")]
    InvalidArgument {
        /// The flag, e.g. `--threads`.
        flag: &'static str,
        /// Why.
        message: String,
    },
    /// The solver failed while running (for instance it diverged).
    #[error("the simulation failed: {0}")]
    Simulation(#[from] CoreError),
    /// A check of `pbf soak` failed.
    #[error("soak check failed at step {step}: {message}")]
    Soak {
        /// The step whose check failed.
        step: u64,
        /// What failed, with the values.
        message: String,
    },
    /// The output directory holds the frames of an earlier run, which the run would
    /// mix with its own: nothing ran.
    #[error(
        "`{}` already holds frame files of an earlier run ({count} files, such as `{example}`): pass --overwrite to delete them and run, or choose another directory with --output",
        dir.display()
    )]
    OutputExists {
        /// The output directory.
        dir: PathBuf,
        /// One of the files (its name).
        example: String,
        /// How many files of frame series it holds.
        count: usize,
    },
    /// splashsurf could not reconstruct a frame's surface.
    #[error("surface reconstruction failed: {message}")]
    Surface {
        /// splashsurf's error, with its causes.
        message: String,
    },
    /// A file read back for checking does not have the expected content.
    #[error("`{path}` is not a valid {format} particle file: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// The format's name.
        format: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl CliError {
    /// The process exit code for this error: 2 for command-line usage errors (as clap
    /// does), 1 for everything else.
    ///
    /// ```
    /// use pbf_cli::CliError;
    /// let e = CliError::InvalidArgument { flag: "--threads", message: "0".into() };
    /// assert_eq!(e.exit_code(), 1);
    /// ```
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }

    pub(crate) fn write(path: impl Into<PathBuf>, error: impl std::fmt::Display) -> Self {
        CliError::Write {
            path: path.into(),
            message: error.to_string(),
        }
    }
}
