//! The dam-break part: Martin & Moyce's collapsing column in 2D and 3D and section 3
//! of the document, its table and the surge front against the published points.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use image::Rgb;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::dam_break::{DamBreakSpec, deviation, martin_moyce, run_dam_break};
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};

/// Runs the dam breaks into `report.dam_breaks`, each with its deviation from the
/// published points.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
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
    Ok(())
}

/// Section 3: the front curves against Martin & Moyce's.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
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
