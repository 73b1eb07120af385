//! Runs the parts of the suite and writes `VALIDATION.md` with its plots.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use image::Rgb;
use pbf_solver::Iterations;

use super::conservation::{
    EnergyTrace, MomentumTrace, ScaleInvariance, energy_in_a_closed_box, momentum_without_walls,
    scale_invariance,
};
use super::dam_break::{
    DamBreakSpec, Deviation, FrontCurve, deviation, martin_moyce, run_dam_break,
};
use super::incompressibility::{ColumnResult, ColumnSpec, run_column};
use super::plot::{HeatMap, LinePlot, PALETTE, Series, Style};
use super::stability::{
    ENERGY_TOLERANCE, GLASS_HEIGHT, MAX_DENSITY_ERROR, MAX_EXTRA_SETTLE, StabilityResult,
    StabilityTiming, UNSTABLE_SPEED_OVER_H, run_stability_cell, stability_grid,
};
use crate::error::CliError;
use crate::render::save_png;

/// A part of the suite.
///
/// ```
/// assert_eq!(pbf_cli::validate::Part::ALL.len(), 4);
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
}

impl Part {
    /// Every part, in the document's order.
    pub const ALL: [Part; 4] = [
        Part::Stability,
        Part::Incompressibility,
        Part::DamBreak,
        Part::Conservation,
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
    /// A reduced grid and shorter runs (minutes instead of most of an hour).
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
    /// The column under each fixed iteration count, then the adaptive mode.
    pub columns: Vec<ColumnResult>,
    /// Dam-break front curves with their deviation from the published points.
    pub dam_breaks: Vec<(FrontCurve, Deviation)>,
    /// Closed-box energy traces.
    pub energy: Vec<EnergyTrace>,
    /// Momentum traces.
    pub momentum: Vec<MomentumTrace>,
    /// The scale experiment.
    pub scale: Option<ScaleInvariance>,
    /// The document written.
    pub document: PathBuf,
    /// Wall-clock time of the whole run.
    pub wall_time: Duration,
}

const G_OVER_H: [f32; 2] = [98.1, 196.2];
const TIME_STEPS: [f32; 4] = [1.0 / 240.0, 1.0 / 120.0, 1.0 / 60.0, 1.0 / 30.0];

fn time_step_label(dt: f32) -> String {
    format!("1/{}", (1.0 / dt).round())
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
        let mut cells = if quick {
            stability_grid(&[4000], &TIME_STEPS, &G_OVER_H[..1], &[2, 8])
        } else {
            // The whole grid: 72 cells at the library's defaults.
            stability_grid(&[4000, 8000, 64000], &TIME_STEPS, &G_OVER_H, &[2, 4, 8])
        };
        // The largest cells last, so that the small ones show progress first.
        cells.sort_by_key(|c| c.particles);
        let timing = stability_timing(quick);
        for (k, cell) in cells.iter().enumerate() {
            let r = run_stability_cell(cell, timing)?;
            let _ = writeln!(
                log,
                "stability {}/{}: {} particles, dt {}, g/h {}, {} iterations: measured from {:.2} s, |v|/h {:.3}, max density error {:.1}%, escaped {}, energy rise {:.1e} M g b, highest rise {:.2} b, {} ({:.1} s)",
                k + 1,
                cells.len(),
                r.particles,
                time_step_label(cell.time_step),
                cell.gravity_over_h,
                cell.iterations,
                r.settle_time,
                r.average_speed_over_h,
                100.0 * r.max_density_error,
                r.escaped,
                r.energy_rise,
                r.highest_rise,
                if r.stable() { "stable" } else { "UNSTABLE" },
                r.wall_time.as_secs_f64()
            );
            report.stability.push(r);
        }
    }
    if options.runs(Part::Incompressibility) {
        let (spec, counts): (ColumnSpec, &[u32]) = if quick {
            (
                ColumnSpec {
                    width: 6,
                    height: 20,
                    time_step: 1.0 / 120.0,
                    settle: 1.0,
                    measure: 0.5,
                },
                &[2, 8, 32],
            )
        } else {
            (ColumnSpec::FULL, &[1, 2, 4, 8, 16, 32])
        };
        let modes = counts
            .iter()
            .map(|k| Iterations::Fixed(*k))
            .chain([Iterations::Adaptive {
                max_density_error_percent: 0.1,
                min: 1,
                max: 200,
            }]);
        for mode in modes {
            let t = Instant::now();
            let r = run_column(&spec, mode)?;
            let _ = writeln!(
                log,
                "column ({} particles), {}: average density error {:.3}%, max {:.2}%, {:.1} iterations ({:.1} s)",
                r.particles,
                mode_label(mode),
                100.0 * r.average_density_error,
                100.0 * r.max_density_error,
                r.mean_iterations,
                t.elapsed().as_secs_f64()
            );
            report.columns.push(r);
        }
    }
    if options.runs(Part::DamBreak) {
        let reference = martin_moyce();
        let runs: &[(usize, usize)] = if quick {
            &[(2, 12), (2, 25), (3, 8), (3, 12)]
        } else {
            &[(2, 25), (2, 50), (3, 12), (3, 24)]
        };
        for &(d, w) in runs {
            let t = Instant::now();
            let curve = run_dam_break(&DamBreakSpec::new(d, w))?;
            let dev = deviation(&curve, &reference);
            let _ = writeln!(
                log,
                "dam break {d}D, a = {w} particles ({} particles): deviation mean {:.3} a, max {:.3} a ({:.1} s)",
                curve.particles,
                dev.mean,
                dev.max,
                t.elapsed().as_secs_f64()
            );
            report.dam_breaks.push((curve, dev));
        }
    }
    if options.runs(Part::Conservation) {
        let energy_runs: &[(usize, usize, u32, f32)] = if quick {
            &[(2, 8, 1, 0.1), (2, 8, 4, 0.1), (2, 8, 64, 0.1)]
        } else {
            &[
                (2, 12, 1, 0.1),
                (2, 12, 2, 0.1),
                (2, 12, 4, 0.1),
                (2, 12, 16, 0.1),
                (2, 12, 64, 0.1),
                (3, 10, 1, 0.1),
                (3, 10, 4, 0.1),
                (3, 10, 64, 0.1),
            ]
        };
        let seconds = if quick { 1.5 } else { 3.0 };
        for &(d, w, k, sk) in energy_runs {
            let e = energy_in_a_closed_box(d, w, k, sk, seconds)?;
            let _ = writeln!(
                log,
                "energy {d}D, {k} iterations, s_corr k {sk}: largest rise {:.2e} M g a",
                e.largest_rise
            );
            report.energy.push(e);
        }
        let (w2, w3) = if quick { (6, 4) } else { (10, 6) };
        for (d, w) in [(2, w2), (3, w3)] {
            for vorticity in [0.0, 0.1] {
                let m = momentum_without_walls(d, w, 1.0, vorticity)?;
                let _ = writeln!(
                    log,
                    "momentum {d}D, vorticity {vorticity}: largest drift {:.2e}",
                    m.largest_drift
                );
                report.momentum.push(m);
            }
        }
        let s = scale_invariance(
            if quick { 8 } else { 16 },
            if quick { 3.0 } else { 9.5 },
            &[0.01, 1.0, 100.0],
        )?;
        let _ = writeln!(
            log,
            "scale: largest difference {:.2e} a",
            s.largest_difference
        );
        report.scale = Some(s);
    }
    report.wall_time = start.elapsed();
    report.document = options.out.join("VALIDATION.md");
    let text = document(options, &report, &plots)?;
    std::fs::write(&report.document, text).map_err(|e| CliError::write(&report.document, e))?;
    Ok(report)
}

/// A column whose average density error is above 100% has collapsed into clumps.
fn collapsed(c: &ColumnResult) -> bool {
    c.average_density_error > 1.0 || c.average_density_error.is_nan()
}

fn stability_timing(quick: bool) -> StabilityTiming {
    if quick {
        StabilityTiming {
            settle: 1.0,
            measure: 0.5,
        }
    } else {
        StabilityTiming::FULL
    }
}

fn mode_label(mode: Iterations) -> String {
    match mode {
        Iterations::Fixed(k) => format!("{k} iterations"),
        Iterations::Adaptive {
            max_density_error_percent,
            ..
        } => format!("adaptive ({max_density_error_percent}% target)"),
    }
}

/// `YYYY-MM-DD` (UTC) of `t`.
fn date(t: SystemTime) -> String {
    let days = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Gregorian, eras of 400 years).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "{cpu}, {threads} hardware threads, {} rayon threads",
        rayon::current_num_threads()
    )
}

fn save(img: &image::RgbImage, dir: &Path, name: &str) -> Result<String, CliError> {
    save_png(img, &dir.join(name))?;
    Ok(format!("validation/{name}"))
}

fn document(
    options: &ValidateOptions,
    r: &ValidationReport,
    plots: &Path,
) -> Result<String, CliError> {
    let mut md = String::new();
    let _ = writeln!(md, "# Validation\n");
    let _ = writeln!(
        md,
        "Regenerated by `{}` on {} ({}); wall time {:.1} min{}. Every figure below comes from \
         that run; the tests in `crates/pbf-cli/tests/validation.rs` assert the key claims at \
         small sizes.\n",
        options.command,
        date(SystemTime::now()),
        machine(),
        r.wall_time.as_secs_f64() / 60.0,
        if options.quick {
            ", reduced grid (`--quick`)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "All runs use the library's defaults (spacing s = 0.05, h = 2 s = 0.1, rest density \
         1000, XSPH c = 0.01 per 1/120 s whatever the time step (`xsph_period`), vorticity 0.1, s_corr k = 0.1, n = 4, |dq| = 0.2 h, unilateral \
         constraint, frictionless inelastic walls) unless a section says otherwise.\n"
    );
    if !r.stability.is_empty() {
        stability_section(&mut md, r, stability_timing(options.quick), plots)?;
    }
    if !r.columns.is_empty() {
        column_section(&mut md, r, plots)?;
    }
    if !r.dam_breaks.is_empty() {
        dam_break_section(&mut md, r, plots)?;
    }
    if !r.energy.is_empty() || r.scale.is_some() {
        conservation_section(&mut md, r, plots)?;
    }
    Ok(md)
}

/// Whether `cells` hold every combination of the particle counts, time steps,
/// gravities and iteration counts found among them.
fn coverage_is_complete(cells: &[StabilityResult]) -> bool {
    fn distinct<T: PartialEq>(
        cells: &[StabilityResult],
        key: impl Fn(&super::StabilityCell) -> T,
    ) -> usize {
        let mut seen: Vec<T> = Vec::new();
        for c in cells {
            let k = key(&c.cell);
            if !seen.contains(&k) {
                seen.push(k);
            }
        }
        seen.len()
    }
    let combinations = distinct(cells, |c| c.particles)
        * distinct(cells, |c| c.time_step.to_bits())
        * distinct(cells, |c| c.gravity_over_h.to_bits())
        * distinct(cells, |c| c.iterations);
    let unique = distinct(cells, |c| {
        (
            c.particles,
            c.time_step.to_bits(),
            c.gravity_over_h.to_bits(),
            c.iterations,
        )
    });
    unique == combinations
}

fn stability_section(
    md: &mut String,
    r: &ValidationReport,
    timing: StabilityTiming,
    plots: &Path,
) -> Result<(), CliError> {
    let _ = writeln!(md, "## 1. Stability: fluid dropped into a glass\n");
    let _ = writeln!(
        md,
        "The experiment of the \"Game Development Reference\" (Game Physics Pearls ch. 6): a \
         cube of fluid held a quarter of its side above the floor of a glass (a hollow \
         cylinder collider, `ColliderKind::Container`, inner radius 0.75 b + 2 s for a cube of \
         side b, rim {GLASS_HEIGHT} b above the floor, open top) falls, splashes and comes to \
         rest: the measurement starts after at least {:.1} s, once the mean kinetic energy of \
         the last quarter second is within 10% of the quarter second before or below it (at \
         most {:.1} s later; the \"measured from\" column), and lasts {:.1} s. Fixed \
         iteration counts, the library's defaults otherwise; gravity g = (g/h) h.\n\n\
         The criteria, fixed before the run; a cell is stable only if all five hold: \
         (a) the average relative speed |v|/h (mean over particles and measured steps) is \
         at most {} per second (the project's choice: the source names the measure, not a \
         bound); (b) no measured step's maximum density error is above {:.0}%; (c) nothing \
         becomes NaN; (d) no particle ever leaves the glass (beyond its wall, below its floor \
         or above its rim), at any step of the run; (e) the total energy (kinetic + \
         potential from the floor) never stands more than {} M g b above its value at the \
         drop: nothing flows in.\n",
        timing.settle,
        timing.settle + MAX_EXTRA_SETTLE,
        timing.measure,
        UNSTABLE_SPEED_OVER_H,
        100.0 * MAX_DENSITY_ERROR,
        ENERGY_TOLERANCE
    );
    let _ = writeln!(
        md,
        "The glass walls are at least eight spacings thick (six times the distance the \
         fastest falling particle moves in a step). Colliders sweep every move of a \
         particle from where it was, outside the solid, and stop it on its own side, so no \
         particle passes through a wall of any thickness however fast it moves \
         (`crates/pbf-solver/tests/colliders.rs`). The \"highest rise\" column is the highest \
         any particle got above the floor during the run, in cube sides b.\n"
    );
    let stable = r.stability.iter().filter(|c| c.stable()).count();
    let _ = writeln!(
        md,
        "**At the library's defaults: {stable} of {} cells stable.**\n",
        r.stability.len()
    );
    let _ = writeln!(md, "### 1.1 At the library's defaults\n");
    stability_group(md, &r.stability, plots)?;
    Ok(())
}

/// The table, heat map (`stability.png`) and settling traces (`stability_settling.png`).
fn stability_group(
    md: &mut String,
    cells: &[StabilityResult],
    plots: &Path,
) -> Result<(), CliError> {
    let stable = cells.iter().filter(|c| c.stable()).count();
    let mut coverage = Vec::new();
    let mut counts: Vec<usize> = cells.iter().map(|c| c.particles).collect();
    counts.dedup();
    for n in counts {
        let of_n: Vec<&StabilityResult> = cells.iter().filter(|c| c.particles == n).collect();
        let mut dts: Vec<u32> = of_n
            .iter()
            .map(|c| (1.0 / c.cell.time_step).round() as u32)
            .collect();
        dts.sort_unstable_by(|a, b| b.cmp(a));
        dts.dedup();
        let mut gs: Vec<u32> = of_n
            .iter()
            .map(|c| (c.cell.gravity_over_h * 10.0).round() as u32)
            .collect();
        gs.sort_unstable();
        gs.dedup();
        coverage.push(format!(
            "{n} particles: dt {}, g/h {}",
            dts.iter()
                .map(|d| format!("1/{d}"))
                .collect::<Vec<_>>()
                .join(", "),
            gs.iter()
                .map(|g| format!("{}", f64::from(*g) / 10.0))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let _ = writeln!(
        md,
        "Cells run (every iteration count each): {}. {}\n",
        coverage.join("; "),
        if coverage_is_complete(cells) {
            "That is every combination of these values."
        } else {
            "The grey cells of the heat map were not run."
        }
    );
    let _ = writeln!(md, "**{stable} of {} cells stable.**\n", cells.len());
    let _ = writeln!(
        md,
        "| particles | dt (s) | g/h (1/s^2) | iterations | measured from (s) | (a) avg \\|v\\|/h (1/s) | (b) max density error | (d) escaped | (e) energy rise (M g b) | highest rise (b) | stable |"
    );
    let _ = writeln!(
        md,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|"
    );
    let mut sorted: Vec<&StabilityResult> = cells.iter().collect();
    sorted.sort_by_key(|c| {
        (
            std::cmp::Reverse((1.0 / c.cell.time_step).round() as u32),
            c.particles,
            (c.cell.gravity_over_h * 10.0).round() as u32,
            c.cell.iterations,
        )
    });
    for c in &sorted {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.2} | {} | {:.1}% | {} | {:.1e} | {} | {} |",
            c.particles,
            time_step_label(c.cell.time_step),
            c.cell.gravity_over_h,
            c.cell.iterations,
            c.settle_time,
            if c.diverged {
                "(c) NaN".into()
            } else {
                format!("{:.3}", c.average_speed_over_h)
            },
            100.0 * c.max_density_error,
            c.escaped,
            c.energy_rise,
            if c.highest_rise.is_finite() {
                format!("{:.2}", c.highest_rise)
            } else {
                "-".into()
            },
            if c.stable() { "yes" } else { "**no**" }
        );
    }
    // Heat map: rows particles x g/h, columns dt x iterations.
    let mut rows: Vec<(usize, u32)> = cells
        .iter()
        .map(|c| (c.particles, (c.cell.gravity_over_h * 10.0).round() as u32))
        .collect();
    rows.sort_unstable();
    rows.dedup();
    let mut columns: Vec<(u32, u32)> = cells
        .iter()
        .map(|c| ((1.0 / c.cell.time_step).round() as u32, c.cell.iterations))
        .collect();
    columns.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    columns.dedup();
    let mut values = vec![vec![f64::NAN; columns.len()]; rows.len()];
    let mut flagged = vec![vec![false; columns.len()]; rows.len()];
    let mut missing = vec![vec![true; columns.len()]; rows.len()];
    for c in cells {
        let row = rows
            .iter()
            .position(|x| *x == (c.particles, (c.cell.gravity_over_h * 10.0).round() as u32));
        let col = columns
            .iter()
            .position(|x| *x == ((1.0 / c.cell.time_step).round() as u32, c.cell.iterations));
        if let (Some(i), Some(j)) = (row, col) {
            values[i][j] = c.average_speed_over_h;
            flagged[i][j] = !c.stable();
            missing[i][j] = false;
        }
    }
    let map = HeatMap {
        title: "STABILITY: AVG |V|/H OVER 1 S AFTER SETTLING".into(),
        row_title: "PARTICLES, G/H".into(),
        column_title: "DT, ITERATIONS".into(),
        row_labels: rows
            .iter()
            .map(|(n, g)| format!("{n} G/H {:.0}", f64::from(*g) / 10.0))
            .collect(),
        column_labels: columns
            .iter()
            .map(|(dt, k)| format!("1/{dt} K{k}"))
            .collect(),
        values,
        flagged,
        missing: missing.clone(),
        range: (0.01, 100.0),
        colour_label: "AVG |V|/H PER S (LOG), X = UNSTABLE".into(),
    };
    let path = save(&map.render((44, 34)), plots, "stability.png")?;
    let _ = writeln!(
        md,
        "\n![stability heat map]({path})\n\nColour: average |v|/h on a log scale; a cross marks \
         an unstable cell{}.\n",
        if missing.iter().flatten().any(|m| *m) {
            "; grey cells were not run"
        } else {
            ""
        }
    );
    // Settling traces of the largest cells.
    let largest = cells.iter().map(|c| c.particles).max().unwrap_or(0);
    let g0 = cells
        .iter()
        .map(|c| c.cell.gravity_over_h)
        .fold(f32::MAX, f32::min);
    let mut series = Vec::new();
    for c in cells
        .iter()
        .filter(|c| c.particles == largest && c.cell.gravity_over_h == g0 && c.cell.iterations == 4)
        .chain(cells.iter().filter(|c| {
            c.particles == largest
                && c.cell.gravity_over_h == g0
                && c.cell.iterations != 4
                && c.cell.time_step == 1.0 / 30.0
        }))
    {
        series.push(Series {
            label: format!(
                "DT {} K{}",
                time_step_label(c.cell.time_step),
                c.cell.iterations
            ),
            points: c.speed_trace.clone(),
            colour: PALETTE[series.len() % PALETTE.len()],
            style: if c.cell.iterations == 4 {
                Style::Line
            } else {
                Style::Dashed
            },
        });
    }
    if !series.is_empty() {
        let plot = LinePlot {
            title: format!("SETTLING IN THE GLASS, {largest} PARTICLES, G/H {g0}"),
            x_label: "TIME (S)".into(),
            y_label: "MEAN |V|/H (1/S)".into(),
            log_y: true,
            series,
            ..Default::default()
        };
        let path = save(&plot.render(900, 520), plots, "stability_settling.png")?;
        let _ = writeln!(
            md,
            "![settling traces]({path})\n\nMean |v|/h after every step for the largest cells \
             at g/h = {g0}: every time step at 4 iterations, and dt = 1/30 at the other counts.\n"
        );
    }
    // The caveat on the sizes of the glasses.
    let _ = writeln!(
        md,
        "A caveat: the spacing is fixed (h = 0.1), so more particles make a larger glass \
         (the 64,000-particle cube is 2 m on a side). Sloshing in a glass of size b has a \
         natural speed of order sqrt(g b) and a period of order 2 pi sqrt(b / g), both \
         growing with b: at 64,000 particles the first is tens of h per second and the \
         second longer than the settling time, so the |v|/h criterion alone does not \
         separate slow large-scale sloshing from instability there. Particles leaving the \
         glass, and density errors far above those of the smaller glasses at the same \
         time step, are failures at any size.\n"
    );
    let unstable: Vec<&&StabilityResult> = sorted.iter().filter(|c| !c.stable()).collect();
    if !unstable.is_empty() {
        let _ = writeln!(
            md,
            "Unstable cells: {}.\n",
            unstable
                .iter()
                .map(|c| format!(
                    "{} particles at dt {}, g/h {}, {} iterations ({})",
                    c.particles,
                    time_step_label(c.cell.time_step),
                    c.cell.gravity_over_h,
                    c.cell.iterations,
                    c.failures().join(", ")
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(())
}

fn column_section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let first = &r.columns[0];
    let _ = writeln!(md, "## 2. Incompressibility: a water column at rest\n");
    let _ = writeln!(
        md,
        "A 3D column of {} particles that exactly fills the bottom of a box of its width \
         (`pbf_solver::scenes::block_at_rest` with a taller column), stepped at 1/120 s; the \
         statistics are the mean over the measured second of each step's average density \
         error (compression only) and the largest maximum, after 2 s of settling. The density \
         error is that of a step's final positions (its last pass, after the last correction).\n",
        first.particles
    );
    let _ = writeln!(
        md,
        "| iterations | avg density error | max density error | mean iterations |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|");
    for c in &r.columns {
        let _ = writeln!(
            md,
            "| {} | {:.3}% | {:.2}% | {:.1} (max {}) |",
            mode_label(c.iterations),
            100.0 * c.average_density_error,
            100.0 * c.max_density_error,
            c.mean_iterations,
            c.max_iterations
        );
    }
    let fixed: Vec<&ColumnResult> = r
        .columns
        .iter()
        .filter(|c| matches!(c.iterations, Iterations::Fixed(_)) && !collapsed(c))
        .collect();
    let fallen: Vec<String> = r
        .columns
        .iter()
        .filter(|c| collapsed(c))
        .map(|c| mode_label(c.iterations))
        .collect();
    if !fallen.is_empty() {
        let _ = writeln!(
            md,
            "\nWith {} the column collapses: the average density error is above 100%, \
             particles pile into clumps many times denser than water, which the spiky \
             gradient (zero at r = 0) does not pull apart again. The plots leave such runs \
             out.",
            fallen.join(" and ")
        );
    }
    let plot = LinePlot {
        title: "DENSITY ERROR OF A COLUMN AT REST".into(),
        x_label: "ITERATIONS".into(),
        y_label: "DENSITY ERROR (%)".into(),
        log_x: true,
        log_y: true,
        series: vec![
            Series {
                label: "AVERAGE".into(),
                points: fixed
                    .iter()
                    .map(|c| (c.mean_iterations, 100.0 * c.average_density_error))
                    .collect(),
                colour: PALETTE[0],
                style: Style::LineMarkers,
            },
            Series {
                label: "MAXIMUM".into(),
                points: fixed
                    .iter()
                    .map(|c| (c.mean_iterations, 100.0 * c.max_density_error))
                    .collect(),
                colour: PALETTE[1],
                style: Style::LineMarkers,
            },
        ],
        ..Default::default()
    };
    let path = save(
        &plot.render(800, 520),
        plots,
        "density_error_vs_iterations.png",
    )?;
    let _ = writeln!(md, "\n![density error against iterations]({path})\n");
    let depth = LinePlot {
        title: "DENSITY AGAINST DEPTH".into(),
        x_label: "DEPTH BELOW THE SURFACE (SPACINGS)".into(),
        y_label: "RHO/RHO0 - 1 (%)".into(),
        series: r
            .columns
            .iter()
            .filter(|c| !collapsed(c))
            .enumerate()
            .map(|(k, c)| Series {
                label: mode_label(c.iterations).to_uppercase(),
                points: c
                    .density_by_depth
                    .iter()
                    .map(|(d, rho)| (*d, 100.0 * (rho - 1.0)))
                    .collect(),
                colour: PALETTE[k % PALETTE.len()],
                style: if matches!(c.iterations, Iterations::Adaptive { .. }) {
                    Style::Dashed
                } else {
                    Style::Line
                },
            })
            .collect(),
        ..Default::default()
    };
    let path = save(&depth.render(900, 560), plots, "density_vs_depth.png")?;
    let _ = writeln!(
        md,
        "![density against depth]({path})\n\nMean rho/rho0 - 1 per layer one spacing thick, \
         depth counted from the highest particle. The top layers lack neighbours above them \
         (their kernel sums fall short of the rest density; the unilateral constraint leaves \
         them alone); below them the compression grows with depth under few iterations.\n"
    );
    Ok(())
}

fn dam_break_section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let reference = martin_moyce();
    let _ = writeln!(md, "## 3. Dam break: Martin & Moyce (1952)\n");
    let _ = writeln!(
        md,
        "A column of width a and height 2a against the left wall of a tank 16 a long (3D: \
         a/2 deep between frictionless walls) collapses at t = 0; the front z is the largest \
         particle x plus half a spacing. Time step 1/240 s, 6 iterations. The published points \
         (J. C. Martin and W. J. Moyce, Phil. Trans. R. Soc. Lond. A 244, 312-324, 1952, fig. \
         3; shipped with their source in `crates/pbf-cli/data/martin_moyce_1952.csv`) are \
         compared with our Z at the same T, interpolated linearly.\n"
    );
    let _ = writeln!(
        md,
        "| run | particles | mean \\|dZ\\| | max \\|dZ\\| | mean relative | points |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|");
    let mut series = Vec::new();
    for (k, (c, d)) in r.dam_breaks.iter().enumerate() {
        let label = format!("{}D, a = {} particles", c.spec.dimension, c.spec.width);
        let _ = writeln!(
            md,
            "| {label} | {} | {:.3} a | {:.3} a | {:.1}% | {} |",
            c.particles,
            d.mean,
            d.max,
            100.0 * d.mean_relative,
            d.points
        );
        series.push(Series {
            label: label.to_uppercase(),
            points: c.points.clone(),
            colour: PALETTE[k % PALETTE.len()],
            style: if c.spec.dimension == 2 {
                Style::Line
            } else {
                Style::Dashed
            },
        });
    }
    for (k, name) in ["a=1.125in", "a=2.25in"].iter().enumerate() {
        series.push(Series {
            label: format!("MARTIN-MOYCE {}", name.replace("a=", "A = ")),
            points: reference
                .iter()
                .filter(|p| p.series == *name)
                .map(|p| (p.t, p.z))
                .collect(),
            colour: if k == 0 { Rgb([0, 0, 0]) } else { PALETTE[7] },
            style: Style::Markers,
        });
    }
    let plot = LinePlot {
        title: "COLLAPSE OF A WATER COLUMN: SURGE FRONT".into(),
        x_label: "T = T SQRT(2G/A)".into(),
        y_label: "Z/A".into(),
        x_range: Some((0.0, 10.0)),
        y_range: Some((0.0, 15.0)),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(900, 600), plots, "dam_break.png")?;
    let _ = writeln!(md, "\n![surge front against time]({path})\n");
    Ok(())
}

fn conservation_section(
    md: &mut String,
    r: &ValidationReport,
    plots: &Path,
) -> Result<(), CliError> {
    let _ = writeln!(md, "## 4. Conservation and scale\n");
    if !r.energy.is_empty() {
        let _ = writeln!(
            md,
            "**Energy.** A column a wide and 2a high, first relaxed for 1 s in a box of its own \
             width and put at rest, collapses in a closed box 3a x 3a (walls on every side, \
             gravity, the library's defaults with vorticity confinement and s_corr on). Total \
             energy = kinetic + potential (from the floor), in units of M g a. The criterion, \
             from physics (nothing flows in): the total never stands more than 0.001 M g a \
             above its start; \"largest rise\" is the most it ever stood above its start, \
             \"largest rise after 0.1 s\" the most it rose above its lowest earlier value after \
             the release (single steps at impacts).\n"
        );
        let _ = writeln!(
            md,
            "| run | particles | iterations | s_corr k | final / initial total | largest rise | largest rise after 0.1 s | at most start + 0.001 |"
        );
        let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|:---|");
        let mut series = Vec::new();
        for (k, e) in r.energy.iter().enumerate() {
            let total = |p: &(f64, f64, f64)| p.1 + p.2;
            let (first, last) = (e.points.first(), e.points.last());
            let ratio = match (first, last) {
                (Some(a), Some(b)) => total(b) / total(a),
                _ => f64::NAN,
            };
            let (mut lowest, mut later) = (f64::INFINITY, 0.0f64);
            for p in e.points.iter().filter(|p| p.0 > 0.1) {
                later = later.max(total(p) - lowest);
                lowest = lowest.min(total(p));
            }
            let _ = writeln!(
                md,
                "| {}D | {} | {} | {} | {:.3} | {:.2e} M g a | {:.2e} M g a | {} |",
                e.dimension,
                e.particles,
                e.iterations,
                e.s_corr_k,
                ratio,
                e.largest_rise,
                later,
                if e.largest_rise <= 1e-3 {
                    "yes"
                } else {
                    "**no**"
                }
            );
            series.push(Series {
                label: format!("{}D K{} SCORR {}", e.dimension, e.iterations, e.s_corr_k),
                points: e.points.iter().map(|p| (p.0, total(p))).collect(),
                colour: PALETTE[k % PALETTE.len()],
                style: if e.s_corr_k > 0.0 {
                    Style::Line
                } else {
                    Style::Dashed
                },
            });
        }
        let plot = LinePlot {
            title: "TOTAL ENERGY IN A CLOSED BOX".into(),
            x_label: "TIME (S)".into(),
            y_label: "(KINETIC + POTENTIAL) / (M G A)".into(),
            series,
            ..Default::default()
        };
        let path = save(&plot.render(900, 540), plots, "energy.png")?;
        let _ = writeln!(
            md,
            "\n![total energy]({path})\n\nThe total falls overall: XSPH, the inelastic walls \
             and the position projection dissipate. The coarse density correction keeps the \
             relaxed column incompressible at every iteration count, so no compression is stored \
             to be given back as motion at the release; the tensile term vanishes at the rest \
             spacing, so a fluid at rest feels none of it.\n"
        );
    }
    if !r.momentum.is_empty() {
        let _ = writeln!(
            md,
            "**Linear momentum.** Two blocks collide head-on, off-centre, at 2 m/s each, with no \
             gravity and no wall within reach, for 1 s. Drift = |P(t) - P(0)| / sum m|v(0)|, the \
             largest over every step.\n"
        );
        let _ = writeln!(md, "| run | particles | vorticity | largest drift |");
        let _ = writeln!(md, "|---|---:|---:|---:|");
        for m in &r.momentum {
            let _ = writeln!(
                md,
                "| {}D | {} | {} | {:.1e} |",
                m.dimension, m.particles, m.vorticity_rel, m.largest_drift
            );
        }
        let _ = writeln!(
            md,
            "\nVorticity confinement is an external force with no reaction, so it moves the total \
             momentum a little; XSPH's pair terms weigh each side by its own neighbour's density, \
             so they are not exactly antisymmetric either.\n"
        );
    }
    if let Some(s) = &r.scale {
        let _ = writeln!(
            md,
            "**Scale.** The 2D dam break (section 3's scene) with every length and gravity \
             multiplied by 0.01, 1 and 100, time step and iterations unchanged: the largest \
             difference of Z(T) from the scale-1 curve over every step is **{:.1e} a**.\n",
            s.largest_difference
        );
        let plot = LinePlot {
            title: "ONE DAM BREAK AT THREE SCALES".into(),
            x_label: "T = T SQRT(2G/A)".into(),
            y_label: "Z/A".into(),
            series: s
                .curves
                .iter()
                .enumerate()
                .map(|(k, (scale, points))| Series {
                    label: format!("SCALE {scale}"),
                    points: points.clone(),
                    colour: PALETTE[k % PALETTE.len()],
                    style: if k == 1 { Style::Line } else { Style::Dashed },
                })
                .collect(),
            ..Default::default()
        };
        let path = save(&plot.render(800, 500), plots, "scale.png")?;
        let _ = writeln!(md, "![three scales]({path})\n");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(
            date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29"
        );
        assert_eq!(
            date(UNIX_EPOCH + Duration::from_secs(1_767_225_600)),
            "2026-01-01"
        );
    }
}
