//! The hydrostatic part: a settled column in 2D and 3D, its pressure against depth,
//! and section 6 of the document.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::hydrostatic::{
    HYDROSTATIC_TOLERANCE, HydrostaticSpec, SETTLED_ENERGY, hydrostatic_column,
};
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};

/// Runs the columns into `report.hydrostatic`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
    for dimension in [2, 3] {
        let spec = if quick {
            HydrostaticSpec::quick(dimension)
        } else {
            HydrostaticSpec::full(dimension)
        };
        let r = hydrostatic_column(&spec).map_err(CliError::Simulation)?;
        let _ = writeln!(
            log,
            "hydrostatic column {dimension}D, {} particles: pressure rises {:.4} times rho0 g with depth ({:+.2}%)",
            r.particles,
            r.slope_ratio,
            100.0 * (r.slope_ratio - 1.0)
        );
        report.hydrostatic.push(r);
    }
    Ok(())
}

/// Section 6: the table of fitted slopes and the plot of pressure against depth.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(md, "## 6. Hydrostatic pressure\n");
    let _ = writeln!(
        md,
        "A column of water `width` particles wide and `depth` deep fills the floor of a closed \
         box of its own width, at the library's defaults (1/120 s, 4 iterations, the coarse \
         correction on), settles from the rest lattice, and is then measured. The pressure is \
         the one the density constraint applied in each step (`Solver::pressures`: the coarse \
         correction's potential and the applied lambdas, `p_i = -(rho0 / dt^2) (phi_i + sum_k \
         c_k lambda_i^k)`, derived in its documentation). Depth is counted from the height the \
         fluid's rest volume fills. The fit is a least-squares line of pressure against depth \
         over every particle of every measured step, leaving out the particles within h of the \
         free surface (their kernels reach past it and the pressure there is the surface's) \
         and within h of the floor (where the wall model, the walls' share of density and \
         gradient, acts). The criteria, stated before the run: the column settled (mean \
         kinetic energy below {SETTLED_ENERGY} `M g H`) and the fitted rise of pressure with \
         depth within {:.0}% of `rho0 g`.\n",
        100.0 * HYDROSTATIC_TOLERANCE
    );
    let _ = writeln!(
        md,
        "| dimension | particles | settled (s) | kinetic energy / M g H | density error | fitted slope (Pa/m) | rho0 g (Pa/m) | slope / rho0 g | zero of the fit (h above the surface) | passes |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|");
    for run in &r.hydrostatic {
        let _ = writeln!(
            md,
            "| {}D | {} | {} | {:.1e} | {:.3}% | {:.0} | {:.0} | {:.4} | {:.2} | {} |",
            run.spec.dimension,
            run.particles,
            run.spec.settle,
            run.kinetic_energy,
            100.0 * run.density_error,
            run.slope,
            run.weight,
            run.slope_ratio,
            -run.zero_depth / run.h,
            if run.passes() { "PASS" } else { "**FAIL**" }
        );
    }
    let mut series = Vec::new();
    for (k, run) in r.hydrostatic.iter().enumerate() {
        series.push(Series {
            label: format!("{}D LAYERS", run.spec.dimension),
            points: run.by_depth.clone(),
            colour: PALETTE[k % PALETTE.len()],
            style: Style::Markers,
        });
    }
    for (k, run) in r.hydrostatic.iter().enumerate() {
        let deepest = run.by_depth.last().map_or(0.0, |p| p.0);
        series.push(Series {
            label: format!("{}D FIT", run.spec.dimension),
            points: [0.0, deepest]
                .map(|d| (d, run.slope * (d - run.zero_depth)))
                .to_vec(),
            colour: PALETTE[k % PALETTE.len()],
            style: Style::Line,
        });
    }
    if let Some(run) = r.hydrostatic.first() {
        let deepest = run.by_depth.last().map_or(0.0, |p| p.0);
        series.push(Series {
            label: "RHO0 G D".into(),
            points: vec![(0.0, 0.0), (deepest, run.weight * deepest)],
            colour: PALETTE[r.hydrostatic.len() % PALETTE.len()],
            style: Style::Dashed,
        });
    }
    let plot = LinePlot {
        title: "PRESSURE AGAINST DEPTH".into(),
        x_label: "DEPTH (M)".into(),
        y_label: "PRESSURE (PA)".into(),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(800, 500), plots, "hydrostatic.png")?;
    let _ = writeln!(
        md,
        "\n![pressure against depth]({path})\n\nThe mean pressure of each layer one spacing \
         thick over the measured steps. Only the rise with depth is the constraint's: the \
         coarse correction's potential is 0 at the centres of its grid's first air cells (a \
         cell is fluid when its particles fill a tenth of it), which lie 0.55 to 1.55 cells \
         (1.1 h to 3.1 h) above the free surface, so the pressure at the surface reads the \
         weight of that much fluid (the last column of the table: where the fitted line, \
         solid, reaches 0). The Jacobi passes alone (the coarse \
         correction off) carry the weight through SPH's symmetric sum, which gives `c` times \
         a linear field's gradient (0.886 on the square rest lattice in 2D at h = 2 s, 0.856 \
         on the hexagonal one, 0.956 on the cubic lattice in 3D): there the pressure rises \
         about `1 / c` times `rho0 g` (`crates/pbf-solver/tests/pressure.rs`).\n"
    );
    Ok(())
}
