//! Runs the parts of the suite and writes `VALIDATION.md` with its plots.
//!
//! One concept per file: the parts, the options, the report and the run as a whole
//! here; the document's opening in `header`; each part's runs and section in
//! `stability` and `splash`, `incompressibility`, `dam_break`, `conservation`, `viscosity` and
//! `hydrostatic`.

mod conservation;
mod dam_break;
mod header;
mod hydrostatic;
mod incompressibility;
mod splash;
mod stability;
mod viscosity;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::conservation::{EnergyTrace, MomentumTrace, ScaleInvariance};
use super::dam_break::{Deviation, FrontCurve};
use super::hydrostatic::HydrostaticRun;
use super::incompressibility::ColumnResult;
use super::splash::SplashRun;
use super::stability::StabilityResult;
use super::viscosity::{CouetteRun, PoiseuilleRun, ShearDecay};
use crate::error::CliError;
use crate::render::save_png;

/// A part of the suite.
///
/// ```
/// assert_eq!(pbf_cli::validate::Part::ALL.len(), 6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The seed's stability table: fluid dropped into a glass.
    Stability,
    /// Density error against iterations in a column at rest.
    Incompressibility,
    /// Martin & Moyce's collapsing column.
    DamBreak,
    /// Energy, momentum and scale.
    Conservation,
    /// Physical viscosity: decaying shear waves.
    Viscosity,
    /// The pressure of a settled column against depth.
    Hydrostatic,
}

impl Part {
    /// Every part, in the document's order.
    pub const ALL: [Part; 6] = [
        Part::Stability,
        Part::Incompressibility,
        Part::DamBreak,
        Part::Conservation,
        Part::Viscosity,
        Part::Hydrostatic,
    ];
}

/// What to run and where to write.
///
/// ```
/// let o = pbf_cli::validate::ValidateOptions::new("docs");
/// assert!(!o.quick);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateOptions {
    /// The directory of `VALIDATION.md`; plots go to its `validation/` folder.
    pub out: PathBuf,
    /// A reduced grid and shorter runs.
    pub quick: bool,
    /// The parts to run (all when empty).
    pub parts: Vec<Part>,
    /// The command line to print in the document.
    pub command: String,
}

impl ValidateOptions {
    /// The full suite into `out`.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Self {
            out: out.into(),
            quick: false,
            parts: Vec::new(),
            command: "pbf validate".into(),
        }
    }

    fn runs(&self, part: Part) -> bool {
        self.parts.is_empty() || self.parts.contains(&part)
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub struct ValidationReport {
    /// The stability cells.
    pub stability: Vec<StabilityResult>,
    /// One glass of one size at several resolutions, correction on then off.
    pub splash: Vec<SplashRun>,
    /// The column under each fixed iteration count, then the adaptive mode.
    pub columns: Vec<ColumnResult>,
    /// Dam-break front curves with their deviation from the published points.
    pub dam_breaks: Vec<(FrontCurve, Deviation)>,
    /// The dam break's sensitivity runs at one width: what each varies, and its curve.
    pub dam_break_sensitivity: Vec<(String, FrontCurve)>,
    /// Closed-box energy traces.
    pub energy: Vec<EnergyTrace>,
    /// Momentum traces.
    pub momentum: Vec<MomentumTrace>,
    /// The scale experiment.
    pub scale: Option<ScaleInvariance>,
    /// The shear waves.
    pub shear: Vec<ShearDecay>,
    /// The Poiseuille flows.
    pub poiseuille: Vec<PoiseuilleRun>,
    /// The Couette start-ups.
    pub couette: Vec<CouetteRun>,
    /// The settled columns' pressures, 2D then 3D.
    pub hydrostatic: Vec<HydrostaticRun>,
    /// The document written.
    pub document: PathBuf,
    /// Wall-clock time of the whole run.
    pub wall_time: Duration,
}

/// Runs the suite and writes the document; progress lines go to `log`.
///
/// # Errors
/// [`CliError::Simulation`] when a run fails other than by diverging (a stability cell
/// that diverges is a result), [`CliError::Write`] when the files cannot be written.
///
/// ```
/// use pbf_cli::validate::{validate, Part, ValidateOptions};
/// let dir = tempfile::tempdir().unwrap();
/// let mut options = ValidateOptions::new(dir.path());
/// options.quick = true;
/// options.parts = vec![Part::Conservation];
/// let report = validate(&options, &mut std::io::sink())?;
/// assert!(report.scale.is_some() && report.stability.is_empty());
/// assert!(dir.path().join("VALIDATION.md").exists());
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn validate(
    options: &ValidateOptions,
    log: &mut dyn Write,
) -> Result<ValidationReport, CliError> {
    let start = Instant::now();
    let plots = options.out.join("validation");
    std::fs::create_dir_all(&plots).map_err(|e| CliError::write(&plots, e))?;
    let mut report = ValidationReport::default();
    let quick = options.quick;
    if options.runs(Part::Stability) {
        stability::run(quick, log, &mut report)?;
        splash::run(quick, log, &mut report)?;
    }
    if options.runs(Part::Incompressibility) {
        incompressibility::run(quick, log, &mut report)?;
    }
    if options.runs(Part::DamBreak) {
        dam_break::run(quick, log, &mut report)?;
    }
    if options.runs(Part::Conservation) {
        conservation::run(quick, log, &mut report)?;
    }
    if options.runs(Part::Viscosity) {
        viscosity::run(quick, log, &mut report)?;
    }
    if options.runs(Part::Hydrostatic) {
        hydrostatic::run(quick, log, &mut report)?;
    }
    report.wall_time = start.elapsed();
    report.document = options.out.join("VALIDATION.md");
    let text = document(options, &report, &plots)?;
    std::fs::write(&report.document, text).map_err(|e| CliError::write(&report.document, e))?;
    Ok(report)
}

/// Saves a plot into `dir` and returns its path as the document links it.
fn save(img: &image::RgbImage, dir: &Path, name: &str) -> Result<String, CliError> {
    save_png(img, &dir.join(name))?;
    Ok(format!("validation/{name}"))
}

/// The document: its opening, then the section of every part that ran.
fn document(
    options: &ValidateOptions,
    r: &ValidationReport,
    plots: &Path,
) -> Result<String, CliError> {
    let mut md = String::new();
    header::write(&mut md, options, r);
    if !r.stability.is_empty() {
        stability::section(&mut md, r, stability::timing(options.quick), plots)?;
    }
    if !r.splash.is_empty() {
        splash::section(&mut md, r, plots)?;
    }
    if !r.columns.is_empty() {
        incompressibility::section(&mut md, r, plots)?;
    }
    if !r.dam_breaks.is_empty() {
        dam_break::section(&mut md, r, plots)?;
    }
    if !r.energy.is_empty() || r.scale.is_some() {
        conservation::section(&mut md, r, plots)?;
    }
    if !r.shear.is_empty() {
        viscosity::section(&mut md, r, plots)?;
    }
    if !r.hydrostatic.is_empty() {
        hydrostatic::section(&mut md, r, plots)?;
    }
    Ok(md)
}
