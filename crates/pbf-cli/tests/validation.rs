//! The validation suite's key claims at small sizes (docs/VALIDATION.md has the full
//! figures): the Martin & Moyce deviation, energy, momentum, scale invariance, stable
//! glass cells, the hydrostatic pressure, and the `pbf validate` command itself.

use crate::common;

use pbf_cli::validate::{
    DamBreakSpec, ENERGY_TOLERANCE, GLASS_HEIGHT, HYDROSTATIC_TOLERANCE, HydrostaticSpec,
    RITTER_FRONT_SPEED, SETTLED_ENERGY, SPLASH_RIM, SplashSpec, StabilityCell, StabilityTiming,
    deviation, energy_in_a_closed_box, hydrostatic_column, late_front_speed, martin_moyce,
    momentum_without_walls, run_dam_break, run_splash, run_stability_cell, scale_invariance,
    splash_settles,
};

/// The collapse of the relaxed column under refinement converges towards the
/// inviscid, frictionless limit: the front's late speed rises towards Ritter's
/// shallow-water `dZ/dT = 2` as `a` grows, and does not pass it by more than 2%.
/// The front starts at the column's side and only advances.
#[test]
fn the_2d_dam_break_front_converges_towards_the_shallow_water_speed() {
    let curves = [12, 25].map(|a| run_dam_break(&DamBreakSpec::refinement(2, a)).unwrap());
    let speeds = curves.each_ref().map(|c| late_front_speed(c).unwrap());
    assert!(
        speeds[1] > speeds[0] && speeds[1] <= 1.02 * RITTER_FRONT_SPEED,
        "late front speeds at a = 12, 25: {speeds:?}"
    );
    for curve in &curves {
        let d = deviation(curve, &martin_moyce());
        assert_eq!(d.points, 25, "every published point is inside the run");
        let start = curve.points[0].1;
        assert!((start - 1.0).abs() <= 0.05, "start {start}");
        let last = curve.points.last().unwrap();
        assert!(last.0 >= 9.5 && last.1 > 10.0, "end {last:?}");
    }
}

#[test]
fn total_energy_in_a_closed_box_never_rises_above_its_start() {
    // Nothing flows into a closed box: at the library's defaults (s_corr and vorticity
    // confinement on) the total of kinetic and potential energy never stands more than
    // 0.001 M g a above its start, at any iteration count.
    for iterations in [1, 2, 4, 16, 64] {
        let e = energy_in_a_closed_box(2, 8, iterations, 0.1, 2.0).unwrap();
        assert!(
            e.largest_rise <= 1e-3,
            "{iterations} iterations: rise {} M g a above the start",
            e.largest_rise
        );
        let total: Vec<f64> = e.points.iter().map(|p| p.1 + p.2).collect();
        let (first, last) = (total[0], *total.last().unwrap());
        assert!(
            last < 0.9 * first,
            "{iterations} iterations: {first} -> {last}: nothing dissipated"
        );
    }
}

#[test]
fn linear_momentum_is_kept_without_walls_and_gravity() {
    for (d, w) in [(2, 6), (3, 4)] {
        for vorticity in [0.0, 0.1] {
            let m = momentum_without_walls(d, w, 1.0, vorticity).unwrap();
            assert!(
                m.largest_drift < 1e-4,
                "{d}D vorticity {vorticity}: drift {}",
                m.largest_drift
            );
            assert_eq!(m.points.len(), 121);
        }
    }
}

#[test]
fn one_dam_break_at_three_scales_gives_one_dimensionless_front() {
    let r = scale_invariance(8, 3.0, &[0.01, 1.0, 100.0]).unwrap();
    assert_eq!(r.curves.len(), 3);
    assert!(r.curves.iter().all(|c| c.1.len() == r.curves[0].1.len()));
    assert!(
        r.largest_difference < 1e-2,
        "largest difference {} a",
        r.largest_difference
    );
}

#[test]
fn glass_cells_at_small_time_steps_are_stable_and_no_cell_gains_energy() {
    // At the library's defaults the 4096-particle glass meets all five criteria of
    // `StabilityResult::stable` at 1/240 s and 1/120 s (`pbf validate`: every such
    // cell); at the larger time steps its densest step is compressed by more than 10%
    // or a jet leaves over the rim, but nothing becomes NaN and the energy never rises.
    let timing = StabilityTiming {
        settle: 1.5,
        measure: 0.5,
    };
    for (dt, gravity_over_h, iterations) in [
        (1.0 / 240.0, 196.2, 2),
        (1.0 / 120.0, 98.1, 2),
        (1.0 / 120.0, 196.2, 4),
        (1.0 / 60.0, 196.2, 2),
        (1.0 / 30.0, 196.2, 2),
    ] {
        let cell = StabilityCell {
            particles: 4000,
            time_step: dt,
            gravity_over_h,
            iterations,
            coarse_correction: true,
        };
        let r = run_stability_cell(&cell, timing).unwrap();
        assert_eq!(r.particles, 4096);
        let summary = format!(
            "dt {dt}, g/h {gravity_over_h}, {iterations} iterations: |v|/h {}, max density \
             error {}, escaped {}, energy rise {}, diverged {}",
            r.average_speed_over_h, r.max_density_error, r.escaped, r.energy_rise, r.diverged
        );
        assert!(
            !r.diverged && r.energy_rise <= ENERGY_TOLERANCE,
            "{summary}"
        );
        if dt <= 1.0 / 120.0 + 1e-6 {
            assert!(r.stable(), "{summary}");
        }
    }
}

#[test]
fn the_coarse_correction_settles_the_boiling_glass() {
    // 4096 particles at dt 1/30 s, g/h 196.2 and 2 iterations boil with the defaults
    // (docs/VALIDATION.md: |v|/h 13.0, max density error 310%); with the coarse
    // correction the same cell measured |v|/h 2.3.
    let timing = StabilityTiming {
        settle: 1.5,
        measure: 0.5,
    };
    let cell = |coarse_correction| StabilityCell {
        particles: 4000,
        time_step: 1.0 / 30.0,
        gravity_over_h: 196.2,
        iterations: 2,
        coarse_correction,
    };
    let plain = run_stability_cell(&cell(false), timing).unwrap();
    let corrected = run_stability_cell(&cell(true), timing).unwrap();
    assert!(
        !corrected.diverged && corrected.escaped == 0,
        "|v|/h {}, escaped {}, diverged {}",
        corrected.average_speed_over_h,
        corrected.escaped,
        corrected.diverged
    );
    assert!(
        corrected.average_speed_over_h < 0.5 * plain.average_speed_over_h,
        "|v|/h {} with the correction, {} without",
        corrected.average_speed_over_h,
        plain.average_speed_over_h
    );
    assert!(
        corrected.max_density_error < 0.5 * plain.max_density_error,
        "max density error {} with the correction, {} without",
        corrected.max_density_error,
        plain.max_density_error
    );
    assert!(corrected.highest_rise > 0.0 && corrected.highest_rise < GLASS_HEIGHT);
}

#[test]
fn pbf_validate_writes_the_document_and_its_plots() {
    let dir = tempfile::tempdir().unwrap();
    let (result, out) = common::run(&[
        "validate",
        "--quick",
        "--only",
        "conservation",
        "--out",
        common::arg(dir.path()),
    ]);
    let outcome = result.unwrap();
    assert!(out.contains("VALIDATION.md"), "{out}");
    let pbf_cli::Outcome::Validated(report) = outcome else {
        panic!("not a validation outcome");
    };
    assert!(report.stability.is_empty() && report.scale.is_some());
    let text = std::fs::read_to_string(dir.path().join("VALIDATION.md")).unwrap();
    assert!(text.contains("pbf validate --quick --only conservation"));
    assert!(text.contains("## 4. Conservation and scale"));
    assert!(!text.contains("## 1. Stability"));
    for png in ["energy.png", "scale.png"] {
        let bytes = std::fs::read(dir.path().join("validation").join(png)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{png}");
    }
    let (err, _) = common::run(&["validate", "--only", "everything"]);
    assert_eq!(err.unwrap_err().exit_code(), 2);
}

/// The dam-break section reports the refinement runs and, at one width, what else
/// the front depends on: the time step, the tensile correction and a viscous floor,
/// each run's figures in its table.
#[test]
fn pbf_validate_reports_what_else_the_dam_break_front_depends_on() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::run(&[
        "validate",
        "--quick",
        "--only",
        "dam-break",
        "--out",
        common::arg(dir.path()),
    ]);
    let pbf_cli::Outcome::Validated(report) = result.unwrap() else {
        panic!("not a validation outcome");
    };
    let runs = &report.dam_break_sensitivity;
    assert_eq!(runs.len(), 10);
    let base = runs[0].1.spec;
    assert_eq!((base.dimension, base.width), (2, 12));
    // The time steps halve, the tensile correction goes off, the floor turns viscous.
    assert_eq!(runs[3].1.spec.time_step, base.time_step / 8.0);
    assert!(!runs[4].1.spec.tensile && runs[4].1.spec.viscosity == 0.0);
    assert_eq!(runs[7].1.spec.time_step, base.time_step / 8.0);
    assert!(runs[8].1.spec.tensile && runs[8].1.spec.viscosity > 0.0);
    let text = std::fs::read_to_string(dir.path().join("VALIDATION.md")).unwrap();
    assert!(text.contains("What else the front depends on"), "{text}");
    assert!(text.contains("At the time step and a half"), "{text}");
    for (label, curve) in runs {
        let mean = deviation(curve, &martin_moyce()).mean;
        assert!(mean.is_finite(), "{label}: {mean}");
        let row = format!(
            "| {label} | {:.2} ms | {mean:.3} a |",
            1e3 * curve.spec.time_step
        );
        assert!(text.contains(&row), "{row} in {text}");
    }
}

/// Every particle of the built-in 3D glass, at every step of `seconds`, stays within
/// the glass's inner radius and above its floor, and from one second on (once the
/// block, which starts with its middle at the rim, has fallen in) below its rim:
/// nothing leaves the glass.
fn stays_in_the_glass(mut s: pbf_solver::Solver<3>, seconds: f64) {
    let pbf_solver::Shape::Cylinder {
        base,
        radius,
        height,
    } = *s.colliders()[0].shape()
    else {
        panic!("the glass is a cylinder");
    };
    let (floor, rim) = (base[1], base[1] + height);
    let steps = (seconds / f64::from(s.params().time_step())).round() as usize;
    for step in 0..steps {
        s.step().unwrap();
        let p = s.positions();
        for (i, &x) in p[0].iter().enumerate() {
            let across = ((x - base[0]).powi(2) + (p[2][i] - base[2]).powi(2)).sqrt();
            assert!(
                across < radius && p[1][i] > floor,
                "step {step}: particle {i} out of the glass at {:?}",
                [x, p[1][i], p[2][i]]
            );
            assert!(
                s.time() < 1.0 || p[1][i] < rim,
                "step {step}: particle {i} above the rim at height {}",
                p[1][i]
            );
        }
    }
}

/// The 3D glass holds its fluid. (The 2D glass does not yet: a jet up its wall leaves
/// over the rim within the first two seconds.)
#[test]
fn nothing_leaves_the_built_in_3d_glass_in_five_seconds() {
    stays_in_the_glass(pbf_solver::scenes::glass_3d(1000).unwrap(), 5.0);
}

/// `pbf validate --only viscosity` writes section 5 with its plots, and its tables
/// mark a run within the stated tolerance exactly when its deviation is (the
/// criteria met are asserted in pbf-solver's tests).
#[test]
fn pbf_validate_writes_the_shear_wave_section() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::run(&[
        "validate",
        "--quick",
        "--only",
        "viscosity",
        "--out",
        common::arg(dir.path()),
    ]);
    let pbf_cli::Outcome::Validated(report) = result.unwrap() else {
        panic!("not a validation outcome");
    };
    let modes: Vec<_> = report
        .shear
        .iter()
        .map(|r| (r.wall, r.half_waves))
        .collect();
    assert_eq!(
        modes,
        [
            (pbf_solver::Wall::FreeSlip, 1),
            (pbf_solver::Wall::NoSlip, 1),
            (pbf_solver::Wall::NoSlip, 2)
        ],
        "each wall's slowest mode, and the no-slip one without a net flow"
    );
    let text = std::fs::read_to_string(dir.path().join("VALIDATION.md")).unwrap();
    assert!(text.contains("## 5. Physical viscosity"));
    for r in &report.shear {
        assert!(r.most_iterations > 0 && r.trace.len() == 61);
        assert!(r.measured.is_finite() && r.measured > 0.0);
        let within = r.error().abs() <= pbf_cli::validate::DECAY_TOLERANCE;
        let row = format!(
            "{:+.1}% | {} | {} |",
            100.0 * r.error(),
            r.most_iterations,
            if within { "yes" } else { "**no**" }
        );
        assert!(text.contains(&row), "{row} in\n{text}");
    }
    assert_eq!(report.poiseuille.len(), 3, "Re 0.1, 1 and 10");
    for p in &report.poiseuille {
        let within = p.error <= pbf_cli::validate::POISEUILLE_TOLERANCE;
        let row = format!(
            "| {} | {} | {} | {:.2}% | {} |",
            p.reynolds,
            p.rows,
            p.steps,
            100.0 * p.error,
            if within { "yes" } else { "**no**" }
        );
        assert!(text.contains(&row), "{row} in\n{text}");
    }
    for png in ["shear_waves.png", "poiseuille.png"] {
        let bytes = std::fs::read(dir.path().join("validation").join(png)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{png}");
    }
}

#[test]
fn a_settled_columns_pressure_rises_with_depth_by_its_weight() {
    // The criterion of `pbf validate`'s hydrostatic part, on a smaller 2D column:
    // settled, and the pressure the constraint applies rising within 2% of rho0 g
    // with depth between the surface's and the floor's layers.
    let spec = HydrostaticSpec {
        dimension: 2,
        width: 16,
        depth: 24,
        spacing: 0.01,
        settle: 2.0,
        measure: 0.25,
    };
    let r = hydrostatic_column(&spec).unwrap();
    assert!(
        r.kinetic_energy < SETTLED_ENERGY,
        "not settled: kinetic energy {} M g H",
        r.kinetic_energy
    );
    assert!(
        (r.slope_ratio - 1.0).abs() <= HYDROSTATIC_TOLERANCE,
        "the pressure rises {} times rho0 g with depth",
        r.slope_ratio
    );
    assert!(r.passes());
    // The layers' pressures rise with depth all the way down.
    let rising = r.by_depth.windows(2).filter(|w| w[1].1 > w[0].1).count();
    assert!(
        rising + 2 >= r.by_depth.len() - 1,
        "pressures by depth {:?}",
        r.by_depth
    );
}

/// The stability section reports one glass of one size under refinement, with the
/// coarse correction on and off: every run's highest rise in its row, the plot, and
/// the verdict of the criterion the figures give.
#[test]
fn pbf_validate_reports_the_splash_of_one_glass_under_refinement() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = common::run(&[
        "validate",
        "--quick",
        "--only",
        "stability",
        "--out",
        common::arg(dir.path()),
    ]);
    let pbf_cli::Outcome::Validated(report) = result.unwrap() else {
        panic!("not a validation outcome");
    };
    let runs = &report.splash;
    let sides: Vec<(usize, bool)> = runs
        .iter()
        .map(|r| (r.spec.side_particles, r.spec.coarse_correction))
        .collect();
    assert_eq!(
        sides,
        [
            (6, true),
            (8, true),
            (12, true),
            (6, false),
            (8, false),
            (12, false)
        ]
    );
    let text = std::fs::read_to_string(dir.path().join("VALIDATION.md")).unwrap();
    assert!(
        text.contains("### 1.2 The splash under refinement"),
        "{text}"
    );
    for r in runs {
        let n = r.spec.side_particles;
        assert_eq!(r.particles, n * n * n);
        // Nothing reaches the tall glass's rim, and the highest rise after the landing
        // is at least as high as the cube's top layer then.
        assert_eq!(r.escaped, 0, "{n} a side");
        assert!(r.highest_rise > 0.8 && r.highest_rise < SPLASH_RIM, "{r:?}");
        let figure = format!("{:.2} | {:.2} |", r.highest_rise, r.time_of_highest);
        assert!(text.contains(&figure), "{figure} in {text}");
    }
    let verdict = if splash_settles(runs).unwrap() {
        "**The splash height settles"
    } else {
        "**The splash height does not settle"
    };
    assert!(text.contains(verdict), "{verdict} in {text}");
    let png = std::fs::read(dir.path().join("validation").join("splash.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    assert!(
        run_splash(&SplashSpec {
            side_particles: 1,
            coarse_correction: true
        })
        .is_err()
    );
}
