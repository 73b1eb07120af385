//! The viscosity part: shear waves at two resolutions between free-slip and no-slip
//! walls, and section 5 of the document.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use pbf_solver::Wall;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};
use crate::validate::viscosity::{DECAY_TOLERANCE, shear_decay};

/// Runs the shear waves into `report.shear`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
    let rows: &[usize] = if quick { &[16] } else { &[16, 32] };
    for wall in [Wall::FreeSlip, Wall::NoSlip] {
        for &n in rows {
            let r = shear_decay(n, wall, 60).map_err(CliError::Simulation)?;
            let _ = writeln!(
                log,
                "shear wave {wall:?}, H = {n} s: decay rate {:.4} /s against {:.4} /s ({:+.1}%)",
                r.measured,
                r.analytic,
                100.0 * r.error()
            );
            report.shear.push(r);
        }
    }
    Ok(())
}

/// Section 5: the table of decay rates and the plot of the amplitudes.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(md, "## 5. Physical viscosity: decaying shear waves\n");
    let _ = writeln!(
        md,
        "A shear flow `v_x = A f(y)` fills a 2D channel `8 H` long (free-slip ends) between \
         two walls `H` apart, with no gravity, XSPH or vorticity confinement, and a kinematic \
         viscosity `nu` (`ParamsBuilder::viscosity`, solved implicitly). By the diffusion \
         equation its amplitude decays as `exp(-nu k^2 t)`: between free-slip walls the mode \
         `cos(pi y / H)`, between no-slip walls (`Wall::NoSlip`) `sin(2 pi y / H)`. Each run \
         has `nu k^2 dt = 0.01` at 1/120 s (60 steps, the amplitude about halves) and a \
         Reynolds number `A / (nu k)` of 1; the amplitude is fitted in the channel's middle \
         fifth. The criterion, stated before the run: the measured rate within {:.0}% of \
         `nu k^2`.\n",
        100.0 * DECAY_TOLERANCE
    );
    let _ = writeln!(
        md,
        "| walls | H (spacings) | particles | nu k^2 (1/s) | measured (1/s) | deviation | CG iterations (most a step) | within {:.0}% |",
        100.0 * DECAY_TOLERANCE
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|:---|");
    for s in &r.shear {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4} | {:+.1}% | {} | {} |",
            wall_name(s.wall),
            s.rows,
            s.particles,
            s.analytic,
            s.measured,
            100.0 * s.error(),
            s.most_iterations,
            if s.error().abs() <= DECAY_TOLERANCE {
                "yes"
            } else {
                "**no**"
            }
        );
    }
    let mut series = Vec::new();
    for (k, s) in r.shear.iter().enumerate() {
        series.push(Series {
            label: format!("{} H {}", wall_name(s.wall).to_uppercase(), s.rows),
            points: s.trace.clone(),
            colour: PALETTE[k % PALETTE.len()],
            style: Style::Line,
        });
    }
    if let Some(s) = r.shear.first() {
        let end = s.trace.last().map_or(0.0, |p| p.0);
        series.push(Series {
            label: "EXP(-NU K^2 T)".into(),
            points: (0..=60)
                .map(|i| {
                    let t = end * f64::from(i) / 60.0;
                    (t, (-s.analytic * t).exp())
                })
                .collect(),
            colour: PALETTE[r.shear.len() % PALETTE.len()],
            style: Style::Dashed,
        });
    }
    let plot = LinePlot {
        title: "SHEAR WAVE AMPLITUDE".into(),
        x_label: "TIME (S)".into(),
        y_label: "A(T) / A(0)".into(),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(800, 500), plots, "shear_waves.png")?;
    let _ = writeln!(
        md,
        "\n![shear waves]({path})\n\nAll runs have the same `nu k^2`, so one analytic curve \
         serves them all.\n"
    );
    Ok(())
}

fn wall_name(wall: Wall) -> &'static str {
    match wall {
        Wall::FreeSlip => "free-slip",
        Wall::NoSlip => "no-slip",
    }
}
