//! The conservation part: energy in a closed box, momentum without walls, one dam
//! break at three scales, and section 4 of the document.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::conservation::{
    energy_in_a_closed_box, momentum_without_walls, scale_invariance,
};
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};

/// Runs the energy, momentum and scale experiments into `report.energy`,
/// `report.momentum` and `report.scale`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
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
    Ok(())
}

/// Section 4: the energy and momentum tables and the scale experiment.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
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
