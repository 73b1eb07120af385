//! The Jacobi relaxation parameter: `Auto` is the default, the rest-lattice value
//! scaled by `1.1 rho0 / rho_i` where a particle is compressed by more than 10%; `Fixed(1.0)` is the
//! unrelaxed pass, with its larger correction per iteration (so less density error at
//! a fixed count) and its instability at one iteration per step.

use pbf_solver::{CoreError, Domain, Iterations, Params, Relaxation, Solver};

/// Every position and velocity, as bits.
fn bits<const D: usize>(s: &Solver<D>) -> Vec<u32> {
    (0..D)
        .flat_map(|a| {
            s.positions()[a]
                .iter()
                .chain(s.velocities()[a])
                .map(|v| v.to_bits())
        })
        .collect()
}

/// A column on the floor of a box, with the Jacobi passes alone (the coarse
/// correction would take most of its compression before them).
fn column_2d(relaxation: Option<Relaxation>) -> Solver<2> {
    let mut b = Params::<2>::builder(0.02).coarse_correction(false);
    if let Some(r) = relaxation {
        b = b.relaxation(r);
    }
    let mut s = Solver::new(
        b.build().unwrap(),
        Domain::new([0.0; 2], [1.0, 1.0]).unwrap(),
    )
    .unwrap();
    s.add_block([0.0; 2], [0.3, 0.6], [0.0; 2]).unwrap();
    s
}

#[test]
fn auto_is_the_default_and_differs_from_fixed_at_its_value_where_compressed() {
    let mut default = column_2d(None);
    let mut auto = column_2d(Some(Relaxation::Auto));
    let omega = default.relaxation();
    // The value `Auto` resolves to at h = 2 s in 2D (the rest lattice's a_max = 2.02).
    assert!((omega - 0.66).abs() < 0.01, "{omega}");
    let mut fixed = column_2d(Some(Relaxation::Fixed(omega)));
    assert_eq!(default.params(), auto.params());
    assert_eq!(auto.relaxation().to_bits(), omega.to_bits());
    assert_eq!(fixed.relaxation().to_bits(), omega.to_bits());
    for _ in 0..30 {
        default.step().unwrap();
        auto.step().unwrap();
        fixed.step().unwrap();
    }
    assert_eq!(bits(&default), bits(&auto));
    // The column lands on the floor compressed by more than 10% at its bottom, where
    // `Auto` scales the relaxation down and `Fixed` does not.
    assert_ne!(bits(&default), bits(&fixed));
    // And another value changes the run: the parameter reaches the passes.
    let mut other = column_2d(Some(Relaxation::Fixed(1.0)));
    for _ in 0..30 {
        other.step().unwrap();
    }
    assert_ne!(bits(&default), bits(&other));
}

/// A 6^3 lattice compressed to 0.9 spacings, without the tensile term, so that the
/// position deltas are linear in the relaxation.
fn compressed(relaxation: Relaxation) -> Solver<3> {
    let s = 0.05;
    let params = Params::<3>::builder(s)
        .s_corr_k(0.0)
        .relaxation(relaxation)
        .build()
        .unwrap();
    let mut solver = Solver::new(params, Domain::new([0.0; 3], [1.0; 3]).unwrap()).unwrap();
    let mut points = Vec::new();
    for i in 0..6 {
        for j in 0..6 {
            for k in 0..6 {
                points.push([i, j, k].map(|c| 0.3 + 0.9 * s * c as f32));
            }
        }
    }
    solver.add_particles(&points, None).unwrap();
    solver
}

#[test]
fn fixed_one_is_the_unrelaxed_pass_and_corrects_one_over_omega_as_much() {
    let mut auto = compressed(Relaxation::Auto);
    let mut unrelaxed = compressed(Relaxation::Fixed(1.0));
    let mut half = compressed(Relaxation::Fixed(0.5));
    let omega = auto.relaxation();
    assert!((omega - 0.505).abs() < 0.01, "{omega}");
    assert_eq!(unrelaxed.relaxation(), 1.0);
    let mut fixed = compressed(Relaxation::Fixed(omega));
    let (d1, dh, df, da) = (
        unrelaxed.position_deltas().unwrap(),
        half.position_deltas().unwrap(),
        fixed.position_deltas().unwrap(),
        auto.position_deltas().unwrap(),
    );
    let largest = d1.iter().flatten().fold(0.0f32, |m, c| m.max(c.abs()));
    // The compressed lattice is corrected by a good fraction of its 10% squeeze.
    assert!(largest > 1e-3 * 0.05, "{largest}");
    let norm = |d: &[[f32; 3]]| d.iter().flatten().map(|c| c * c).sum::<f32>().sqrt();
    assert!(
        norm(&d1) > 1.9 * norm(&df),
        "{} vs {}",
        norm(&d1),
        norm(&df)
    );
    for i in 0..d1.len() {
        for a in 0..3 {
            let tolerance = 1e-4 * largest;
            assert!(
                (df[i][a] - omega * d1[i][a]).abs() < tolerance,
                "particle {i} axis {a}: fixed at omega {} vs omega * unrelaxed {}",
                df[i][a],
                omega * d1[i][a]
            );
            assert!((dh[i][a] - 0.5 * d1[i][a]).abs() < tolerance);
        }
    }
    // `Auto` scales the multiplier of every particle compressed by more than 10% by
    // 1.1 rho0 / rho_i: the lattice is 1 / 0.9^3 = 1.37 times as dense inside (less at
    // its faces), so its deltas are smaller than at the fixed omega.
    let ratio = norm(&da) / norm(&df);
    assert!(
        (0.6..0.95).contains(&ratio),
        "auto / fixed at omega: {ratio}"
    );
}

/// A block without gravity, laid out 0.5% closer than the rest spacing (so about
/// 1.5% over the rest density), at one iteration per step (the case `Auto` was made for,
/// see `tests/rest.rs`), with the Jacobi passes alone: the fastest particle's speed,
/// or `None` if the step diverged.
fn one_iteration_block(relaxation: Relaxation, steps: usize) -> Option<f32> {
    let s = 0.05;
    let params = Params::<3>::builder(s)
        .gravity([0.0; 3])
        .iterations(Iterations::Fixed(1))
        .relaxation(relaxation)
        .coarse_correction(false)
        .build()
        .unwrap();
    let (w, height) = (10.0 * s, 20.0 * s);
    let mut solver =
        Solver::new(params, Domain::new([0.0; 3], [w, 2.0 * height, w]).unwrap()).unwrap();
    let close = 0.995 * s;
    let points: Vec<[f32; 3]> = (0..10 * 20 * 10)
        .map(|k| {
            let (i, j, l) = (k % 10, (k / 10) % 20, k / 200);
            [i, j, l].map(|c| (c as f32 + 0.5) * close)
        })
        .collect();
    solver.add_particles(&points, None).unwrap();
    let mut fastest = 0.0f32;
    for _ in 0..steps {
        match solver.step() {
            Ok(d) => fastest = fastest.max(d.max_speed),
            Err(CoreError::Diverged { .. }) => return None,
            Err(e) => panic!("{e}"),
        }
    }
    Some(fastest)
}

#[test]
fn unrelaxed_one_iteration_per_step_blows_up_where_auto_stays_calm() {
    let (s, dt) = (0.05, 1.0 / 120.0);
    let calm = one_iteration_block(Relaxation::Auto, 60).expect("Auto does not diverge");
    assert!(calm * dt < 0.1 * s, "Auto: {calm} m/s");
    match one_iteration_block(Relaxation::Fixed(1.0), 60) {
        None => {}
        Some(fast) => assert!(fast * dt > s, "Fixed(1.0): only {fast} m/s"),
    }
}

/// Average density error of a 2D column after settling at 4 iterations per step.
fn settled_error(relaxation: Relaxation) -> f32 {
    let mut s = column_2d(Some(relaxation));
    let mut sum = 0.0;
    for k in 0..240 {
        let d = s.step().unwrap();
        if k >= 180 {
            sum += d.average_density_error;
        }
    }
    sum / 60.0
}

#[test]
fn unrelaxed_passes_leave_less_density_error_at_a_fixed_iteration_count() {
    let auto = settled_error(Relaxation::Auto);
    let unrelaxed = settled_error(Relaxation::Fixed(1.0));
    eprintln!("average density error: Auto {auto}, Fixed(1.0) {unrelaxed}");
    assert!(
        unrelaxed < 0.8 * auto,
        "Auto {auto}, Fixed(1.0) {unrelaxed}"
    );
}
