//! The stability part: the glass cells it runs and section 1 of the document, the
//! table, heat map and settling traces.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::plot::{HeatMap, LinePlot, PALETTE, Series, Style};
use crate::validate::stability::{
    ENERGY_TOLERANCE, GLASS_HEIGHT, MAX_DENSITY_ERROR, MAX_EXTRA_SETTLE, StabilityCell,
    StabilityResult, StabilityTiming, UNSTABLE_SPEED_OVER_H, run_stability_cell, stability_grid,
};

const G_OVER_H: [f32; 2] = [98.1, 196.2];
const TIME_STEPS: [f32; 4] = [1.0 / 240.0, 1.0 / 120.0, 1.0 / 60.0, 1.0 / 30.0];

/// A time step as the document writes it: `1/240`.
fn time_step_label(dt: f32) -> String {
    format!("1/{}", (1.0 / dt).round())
}

/// Runs the stability cells, the smallest first, into `report.stability`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
    let mut cells = if quick {
        stability_grid(&[4000], &TIME_STEPS, &G_OVER_H[..1], &[2, 8])
    } else {
        // The whole grid: 72 cells at the library's defaults.
        stability_grid(&[4000, 8000, 64000], &TIME_STEPS, &G_OVER_H, &[2, 4, 8])
    };
    // The largest cells last, so that the small ones show progress first.
    cells.sort_by_key(|c| c.particles);
    let timing = timing(quick);
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
    Ok(())
}

/// How long the cells settle and are measured.
pub(super) fn timing(quick: bool) -> StabilityTiming {
    if quick {
        StabilityTiming {
            settle: 1.0,
            measure: 0.5,
        }
    } else {
        StabilityTiming::FULL
    }
}

/// Whether `cells` hold every combination of the particle counts, time steps,
/// gravities and iteration counts found among them.
fn coverage_is_complete(cells: &[StabilityResult]) -> bool {
    fn distinct<T: PartialEq>(
        cells: &[StabilityResult],
        key: impl Fn(&StabilityCell) -> T,
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

/// Section 1: the experiment, its criteria and the cells at the library's defaults.
pub(super) fn section(
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
