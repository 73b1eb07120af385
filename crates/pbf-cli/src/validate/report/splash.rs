//! The splash part of section 1: one glass of one size at several resolutions, its
//! table, its plot and the criterion's verdict.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::{ValidationReport, save};
use crate::error::CliError;
use crate::validate::plot::{LinePlot, PALETTE, Series, Style};
use crate::validate::splash::{
    SPLASH_CONVERGED, SPLASH_CUBE_SIDE, SPLASH_DURATION, SPLASH_GRAVITY, SPLASH_ITERATIONS,
    SPLASH_RIM, SPLASH_STEP_SPEED, SplashRun, SplashSpec, run_splash, splash_settles,
};
use crate::validate::stability::GLASS_HEIGHT;

/// Particles along the cube's side: the full run's and the quick run's.
const SIDES: [usize; 5] = [10, 16, 24, 32, 40];
const QUICK_SIDES: [usize; 3] = [6, 8, 12];

/// Runs every resolution with the coarse correction on (the default) and off, into
/// `report.splash`.
pub(super) fn run(
    quick: bool,
    log: &mut dyn Write,
    report: &mut ValidationReport,
) -> Result<(), CliError> {
    let sides: &[usize] = if quick { &QUICK_SIDES } else { &SIDES };
    for coarse_correction in [true, false] {
        for &side_particles in sides {
            let r = run_splash(&SplashSpec {
                side_particles,
                coarse_correction,
            })?;
            let _ = writeln!(
                log,
                "splash: {side_particles} particles a side, coarse correction {}: highest rise {:.2} b at {:.2} s ({:.1} s)",
                if coarse_correction { "on" } else { "off" },
                r.highest_rise,
                r.time_of_highest,
                r.wall_time.as_secs_f64()
            );
            report.splash.push(r);
        }
    }
    Ok(())
}

/// Section 1.2: the table, the plot (`splash.png`) and the verdict.
pub(super) fn section(md: &mut String, r: &ValidationReport, plots: &Path) -> Result<(), CliError> {
    let _ = writeln!(md, "### 1.2 The splash under refinement\n");
    let _ = writeln!(
        md,
        "In the grid above the spacing is fixed, so more particles make a larger glass and \
         also resolve its flow more finely: the cube is 16, 20 and 40 spacings on a side at \
         4,096, 8,000 and 64,000 particles. Here one glass of one size (a cube of side b = \
         {SPLASH_CUBE_SIDE} m, g = {SPLASH_GRAVITY} m/s^2: the 8,000-particle glass) is run \
         with its cube resolved by more and more particles, the time step shrinking with the \
         spacing (dt = s / {SPLASH_STEP_SPEED} m/s, 1/240 s at 16 a side), \
         {SPLASH_ITERATIONS} iterations, and the rim {SPLASH_RIM} b above the floor so that \
         no splash is cut off, for {SPLASH_DURATION} s after the drop. The criterion, fixed \
         before the run: a splash height that the solver resolves changes by at most \
         {:.0}% between the two finest resolutions at the library's defaults (coarse \
         correction on).\n",
        100.0 * SPLASH_CONVERGED
    );
    let _ = writeln!(
        md,
        "| particles a side | particles | spacing (m) | dt (s) | highest rise, correction on (b) | at (s) | highest rise, correction off (b) | at (s) |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut sides: Vec<usize> = r.splash.iter().map(|s| s.spec.side_particles).collect();
    sides.sort_unstable();
    sides.dedup();
    let find = |side: usize, on: bool| {
        r.splash
            .iter()
            .find(|s| s.spec.side_particles == side && s.spec.coarse_correction == on)
    };
    let cell = |run: Option<&SplashRun>| match run {
        Some(s) if s.escaped > 0 => format!("> {:.2} | {:.2}", s.highest_rise, s.time_of_highest),
        Some(s) => format!("{:.2} | {:.2}", s.highest_rise, s.time_of_highest),
        None => "- | -".into(),
    };
    for &side in &sides {
        let spec = SplashSpec {
            side_particles: side,
            coarse_correction: true,
        };
        let particles = find(side, true)
            .or(find(side, false))
            .map_or(0, |s| s.particles);
        let _ = writeln!(
            md,
            "| {side} | {particles} | {:.4} | 1/{:.0} | {} | {} |",
            spec.spacing(),
            1.0 / spec.time_step(),
            cell(find(side, true)),
            cell(find(side, false))
        );
    }
    let mut series = Vec::new();
    for (on, label) in [(true, "CORRECTION ON"), (false, "CORRECTION OFF")] {
        let points: Vec<(f64, f64)> = sides
            .iter()
            .filter_map(|&side| find(side, on))
            .map(|s| (s.spec.side_particles as f64, f64::from(s.highest_rise)))
            .collect();
        if !points.is_empty() {
            series.push(Series {
                label: label.into(),
                points,
                colour: PALETTE[series.len() % PALETTE.len()],
                style: Style::Line,
            });
        }
    }
    if let (Some(&first), Some(&last)) = (sides.first(), sides.last()) {
        series.push(Series {
            label: "RIM OF THE STABILITY GRID".into(),
            points: vec![
                (first as f64, f64::from(GLASS_HEIGHT)),
                (last as f64, f64::from(GLASS_HEIGHT)),
            ],
            colour: PALETTE[series.len() % PALETTE.len()],
            style: Style::Dashed,
        });
    }
    let plot = LinePlot {
        title: "THE SPLASH OF ONE GLASS UNDER REFINEMENT".into(),
        x_label: "PARTICLES ALONG THE CUBE'S SIDE".into(),
        y_label: "HIGHEST RISE ABOVE THE FLOOR (CUBE SIDES)".into(),
        series,
        ..Default::default()
    };
    let path = save(&plot.render(900, 520), plots, "splash.png")?;
    let _ = writeln!(md, "\n![the splash under refinement]({path})\n");
    verdict(md, r);
    Ok(())
}

/// The criterion's verdict and what the figures say about criterion (d).
fn verdict(md: &mut String, r: &ValidationReport) {
    let mut on: Vec<&SplashRun> = r
        .splash
        .iter()
        .filter(|s| s.spec.coarse_correction)
        .collect();
    on.sort_by_key(|s| s.spec.side_particles);
    let Some(settles) = splash_settles(&r.splash) else {
        let _ = writeln!(md, "Fewer than two resolutions ran: no verdict.\n");
        return;
    };
    let (coarser, finer) = (on[on.len() - 2], on[on.len() - 1]);
    // Relative to the finer run, as the criterion measures it.
    let change = 100.0 * (finer.highest_rise - coarser.highest_rise) / finer.highest_rise;
    let _ = writeln!(
        md,
        "**The splash height {}: from {} to {} particles a side it changes by {change:+.0}% \
         (criterion {:.0}%).**\n",
        if settles {
            "settles"
        } else {
            "does not settle"
        },
        coarser.spec.side_particles,
        finer.spec.side_particles,
        100.0 * SPLASH_CONVERGED
    );
    let rising = |on: bool| {
        let mut runs: Vec<&SplashRun> = r
            .splash
            .iter()
            .filter(|s| s.spec.coarse_correction == on)
            .collect();
        runs.sort_by_key(|s| s.spec.side_particles);
        runs.len() > 1
            && runs
                .windows(2)
                .all(|w| w[1].highest_rise > w[0].highest_rise)
    };
    let growth = match (rising(true), rising(false)) {
        (true, true) => {
            "With the coarse correction and without it, the highest rise grows with every \
             refinement."
                .to_owned()
        }
        (with, without) => {
            let grows = |yes: bool| {
                if yes {
                    "grows with every refinement"
                } else {
                    "does not grow with every refinement"
                }
            };
            format!(
                "With the coarse correction the highest rise {}; without it, it {}.",
                grows(with),
                grows(without)
            )
        }
    };
    let _ = writeln!(
        md,
        "{growth} What rises are \
         thin sheets that the landing throws up the glass's wall. A flat face of an inviscid \
         fluid landing on a floor is a singular impact: in the pressure-impulse theory of \
         liquid impact (Cooker & Peregrine 1995) the slip velocity along the wall is \
         unbounded, logarithmically, towards the line where the free surface meets it \
         (Philippi, Antkowiak & Lagrée 2016), where such sheets start, so their speed \
         depends on how near that line the flow is resolved. Water's surface tension and \
         viscosity and the air beneath the falling face limit them in a real glass; the \
         model has none of them at its defaults.\n"
    );
    // The coarsest resolution from which every finer one splashes above the rim.
    let above = on.len()
        - on.iter()
            .rev()
            .take_while(|s| s.highest_rise > GLASS_HEIGHT)
            .count();
    let Some(first) = on.get(above) else {
        let _ = writeln!(
            md,
            "The finest resolution's splash stays below the grid's {GLASS_HEIGHT} b rim.\n"
        );
        return;
    };
    let _ = write!(
        md,
        "From {} particles a side on, the splash rises above the grid's {GLASS_HEIGHT} b rim \
         ({:.2} b at {}).",
        first.spec.side_particles, finer.highest_rise, finer.spec.side_particles
    );
    // The grid's glasses whose cube's resolution the runs span from `first` on.
    let spanned: Vec<String> = [("4,096", 16), ("8,000", 20), ("64,000", 40)]
        .iter()
        .filter(|(_, side)| (first.spec.side_particles..=finer.spec.side_particles).contains(side))
        .map(|(particles, side)| format!("{particles}-particle glass ({side} a side)"))
        .collect();
    if !spanned.is_empty() {
        let _ = write!(
            md,
            " The grid's {} resolves its cube as finely: criterion (d) fails there on a \
             splash that the model, resolved, throws over that rim, not on a solver that \
             diverges.",
            spanned.join(" and ")
        );
    }
    let _ = writeln!(md, "\n");
}
