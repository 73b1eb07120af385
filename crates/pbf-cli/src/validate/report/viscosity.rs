//! The viscosity part: shear waves at two resolutions between free-slip and no-slip
//! walls, plane Poiseuille flow and Couette start-up, and section 5 of the document.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use pbf_solver::Wall;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};
use crate::validate::viscosity::{
    COUETTE_TIMES, COUETTE_TOLERANCE, DECAY_TOLERANCE, POISEUILLE_TOLERANCE, ShearDecay, couette,
    poiseuille, shear_decay,
};

/// The shear waves' walls and half waves across the channel: each wall's slowest mode,
/// and between no-slip walls also the slowest without a net flow.
const SHEAR_MODES: [(Wall, u32); 3] = [(Wall::FreeSlip, 1), (Wall::NoSlip, 1), (Wall::NoSlip, 2)];

/// The mode `f(y)` of `half_waves` half waves between `wall`s.
fn mode_name(wall: Wall, half_waves: u32) -> String {
    let k = match half_waves {
        1 => "pi".to_owned(),
        n => format!("{n} pi"),
    };
    match wall {
        Wall::FreeSlip => format!("cos({k} y / H)"),
        Wall::NoSlip => format!("sin({k} y / H)"),
    }
}

/// The mode's wavenumber in kernel radii, `k h = n pi (2 s) / (rows s)`.
fn kh(s: &ShearDecay) -> f64 {
    f64::from(s.half_waves) * std::f64::consts::PI * 2.0 / s.rows as f64
}

/// What the deviations follow: the runs at the same `k h` side by side, free-slip and
/// no-slip.
fn resolution_note(md: &mut String, r: &ValidationReport) {
    let mut pairs = Vec::new();
    for free in r.shear.iter().filter(|s| s.wall == Wall::FreeSlip) {
        for no_slip in r.shear.iter().filter(|s| s.wall == Wall::NoSlip) {
            if (kh(free) - kh(no_slip)).abs() < 1e-9 {
                pairs.push(format!(
                    "{:+.1}% free-slip and {:+.1}% no-slip (`{}`, H = {}) at k h = {:.2}",
                    100.0 * free.error(),
                    100.0 * no_slip.error(),
                    mode_name(no_slip.wall, no_slip.half_waves),
                    no_slip.rows,
                    kh(free)
                ));
            }
        }
    }
    if pairs.is_empty() {
        let _ = writeln!(md);
        return;
    }
    let _ = writeln!(
        md,
        "\nThe sum over the neighbours falls further short of the Laplacian of a shorter \
         wave: the deviation grows with `k h`, the mode's wavenumber in kernel radii. At the \
         same `k h` the walls compare as {}.",
        pairs.join("; ")
    );
}

/// Runs the shear waves into `report.shear`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
    let rows: &[usize] = if quick { &[16] } else { &[16, 32] };
    for (wall, half_waves) in SHEAR_MODES {
        for &n in rows {
            let r = shear_decay(n, wall, half_waves, 60).map_err(CliError::Simulation)?;
            let _ = writeln!(
                log,
                "shear wave {wall:?}, {}, H = {n} s: decay rate {:.4} /s against {:.4} /s ({:+.1}%)",
                mode_name(wall, half_waves),
                r.measured,
                r.analytic,
                100.0 * r.error()
            );
            report.shear.push(r);
        }
    }
    for reynolds in [0.1, 1.0, 10.0] {
        for &n in rows {
            let r = poiseuille(n, reynolds).map_err(CliError::Simulation)?;
            let _ = writeln!(
                log,
                "Poiseuille Re {reynolds}, H = {n} s: L2 deviation {:.2}% of the peak",
                100.0 * r.error
            );
            report.poiseuille.push(r);
        }
    }
    for &n in rows {
        let r = couette(n).map_err(CliError::Simulation)?;
        let _ = writeln!(
            log,
            "Couette, H = {n} s: L2 deviation {:.2}%, {:.2}%, {:.2}% of U at t = {:?} H^2/nu",
            100.0 * r.errors[0],
            100.0 * r.errors[1],
            100.0 * r.errors[2],
            COUETTE_TIMES
        );
        report.couette.push(r);
    }
    Ok(())
}

/// Section 5: the table of decay rates and the plot of the amplitudes.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(
        md,
        "## 5. Physical viscosity: shear waves, Poiseuille and Couette\n"
    );
    let _ = writeln!(
        md,
        "A shear flow `v_x = A f(y)` fills a 2D channel `2 H` long, periodic along x, between \
         two walls `H` apart, with no gravity, XSPH or vorticity confinement, and a kinematic \
         viscosity `nu` (`ParamsBuilder::viscosity`, solved implicitly). By the diffusion \
         equation its amplitude decays as `exp(-nu k^2 t)`: between free-slip walls the mode \
         `cos(pi y / H)`, between no-slip walls (`Wall::NoSlip`) the slowest mode `sin(pi y / \
         H)` and the slowest without a net flow, `sin(2 pi y / H)`. Each run \
         has `nu k^2 dt = 0.01` at 1/120 s (60 steps, the amplitude about halves) and a \
         Reynolds number `A / (nu k)` of 1; the amplitude is fitted over every particle. The \
         criterion, stated before the run: the measured rate within {:.0}% of `nu k^2`.\n",
        100.0 * DECAY_TOLERANCE
    );
    let _ = writeln!(
        md,
        "| walls | mode | H (spacings) | k h | particles | nu k^2 (1/s) | measured (1/s) | deviation | CG iterations (most a step) | within {:.0}% |",
        100.0 * DECAY_TOLERANCE
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|:---|");
    for s in &r.shear {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {:.2} | {} | {:.4} | {:.4} | {:+.1}% | {} | {} |",
            wall_name(s.wall),
            mode_name(s.wall, s.half_waves),
            s.rows,
            kh(s),
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
    resolution_note(md, r);
    let mut series = Vec::new();
    for (k, s) in r.shear.iter().enumerate() {
        series.push(Series {
            label: format!(
                "{} N {} H {}",
                wall_name(s.wall).to_uppercase(),
                s.half_waves,
                s.rows
            ),
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
    if !r.poiseuille.is_empty() {
        poiseuille_section(md, r, plots)?;
    }
    if !r.couette.is_empty() {
        couette_section(md, r, plots)?;
    }
    Ok(())
}

/// The Poiseuille table and the profiles of the finest runs.
fn poiseuille_section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(
        md,
        "**Plane Poiseuille flow.** A 2D channel 16 spacings long, periodic along x, between \
         no-slip plates `H` apart, driven from rest by a body force `g` along x (no XSPH, no \
         vorticity confinement, no coarse correction), settles to `u(y) = g y (H - y) / (2 nu)`. \
         Peak 0.02 m/s, 1/30 s steps, run for `0.6 H^2 / nu` (the slowest transient then below \
         0.3%). The criterion, stated before the run: the L2 deviation over the particles at \
         most {:.0}% of the peak, and falling with resolution.\n",
        100.0 * POISEUILLE_TOLERANCE
    );
    let _ = writeln!(
        md,
        "| Re | H (spacings) | steps | L2 deviation / peak | within {:.0}% |",
        100.0 * POISEUILLE_TOLERANCE
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|:---|");
    for p in &r.poiseuille {
        let within = p.error <= POISEUILLE_TOLERANCE;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2}% | {} |",
            p.reynolds,
            p.rows,
            p.steps,
            100.0 * p.error,
            if within { "yes" } else { "**no**" }
        );
    }
    let finest = r.poiseuille.iter().map(|p| p.rows).max().unwrap_or(0);
    let mut series: Vec<Series> = r
        .poiseuille
        .iter()
        .filter(|p| p.rows == finest)
        .enumerate()
        .map(|(k, p)| Series {
            label: format!("RE {} H {}", p.reynolds, p.rows),
            points: p.profile.iter().map(|&(y, u)| (u, y)).collect(),
            colour: PALETTE[k % PALETTE.len()],
            style: Style::Markers,
        })
        .collect();
    series.push(Series {
        label: "4 Y (1 - Y)".into(),
        points: (0..=50)
            .map(|i| {
                let y = f64::from(i) / 50.0;
                (4.0 * y * (1.0 - y), y)
            })
            .collect(),
        colour: PALETTE[series.len() % PALETTE.len()],
        style: Style::Line,
    });
    let plot = LinePlot {
        title: "POISEUILLE PROFILES".into(),
        x_label: "U / U_PEAK".into(),
        y_label: "Y / H".into(),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(700, 560), plots, "poiseuille.png")?;
    let _ = writeln!(
        md,
        "\n![Poiseuille profiles]({path})\n\nThe fluid's layers slide past each other (at \
         Re 10 by hundreds of spacings). The viscosity term is Morris' component-wise form, \
         whose error on a shear flow is the kernel's second moment over the neighbours: on a \
         lattice whose rows are offset it changes by 1.5% at a quarter spacing and 3% at half \
         (h = 2 s; a unit test of `viscosity/lattice.rs` holds it within 4%). Monaghan's \
         projected form depends on a mixed fourth moment that changes by 13% and 26%.\n"
    );
    Ok(())
}

/// The Couette table and the profiles of the finest run at each time.
fn couette_section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(
        md,
        "**Couette flow starting up.** The same channel, the fluid at rest until the top plate \
         starts sliding along x at `U` = 0.02 m/s (`Domain::with_wall_velocity`), at Reynolds \
         number `U H / nu` = 1 and steps of `0.002 H^2 / nu`. By the diffusion equation \
         `u(y, t) = U y / H - (2 U / pi) sum_n (-1)^(n+1) / n sin(n pi y / H) \
         exp(-n^2 pi^2 nu t / H^2)`. The criterion, stated before the run: at each of the \
         times {:?} `H^2 / nu` the L2 deviation over the particles at most {:.0}% of `U`, and \
         smaller at the finer resolution.\n",
        COUETTE_TIMES,
        100.0 * COUETTE_TOLERANCE
    );
    let _ = writeln!(
        md,
        "| H (spacings) | t = {} | t = {} | t = {} (H^2 / nu) | within {:.0}% |",
        COUETTE_TIMES[0],
        COUETTE_TIMES[1],
        COUETTE_TIMES[2],
        100.0 * COUETTE_TOLERANCE
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|:---|");
    for c in &r.couette {
        let within = c.errors.iter().all(|e| *e <= COUETTE_TOLERANCE);
        let _ = writeln!(
            md,
            "| {} | {:.2}% | {:.2}% | {:.2}% | {} |",
            c.rows,
            100.0 * c.errors[0],
            100.0 * c.errors[1],
            100.0 * c.errors[2],
            if within { "yes" } else { "**no**" }
        );
    }
    if let [coarse, fine, ..] = &r.couette[..] {
        let falling = (0..3).all(|k| fine.errors[k] < coarse.errors[k]);
        let _ = writeln!(
            md,
            "\nFrom H = {} to {} spacings the deviation {} at every time.",
            coarse.rows,
            fine.rows,
            if falling {
                "falls"
            } else {
                "**does not fall**"
            }
        );
    }
    let Some(finest) = r.couette.iter().max_by_key(|c| c.rows) else {
        return Ok(());
    };
    let mut series = Vec::new();
    for (k, time) in COUETTE_TIMES.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        series.push(Series {
            label: format!("T {time} H {}", finest.rows),
            points: finest.profiles[k].clone(),
            colour,
            style: Style::Markers,
        });
        series.push(Series {
            label: format!("SERIES T {time}"),
            points: finest.series[k].clone(),
            colour,
            style: Style::Line,
        });
    }
    let plot = LinePlot {
        title: "COUETTE START-UP".into(),
        x_label: "U / U_PLATE".into(),
        y_label: "Y / H".into(),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(700, 560), plots, "couette.png")?;
    let _ = writeln!(md, "\n![Couette start-up]({path})\n");
    Ok(())
}

fn wall_name(wall: Wall) -> &'static str {
    match wall {
        Wall::FreeSlip => "free-slip",
        Wall::NoSlip => "no-slip",
    }
}
