//! Chebyshev semi-iteration over the Jacobi passes (`Acceleration::Chebyshev`): less
//! density error at the same iteration count, stable from step to step, and only
//! with the settings its weights are computed for.

use pbf_solver::{Acceleration, CoreError, Domain, Iterations, Params, Relaxation, Solver};

/// A column 8 x 40 x 8 spacings at rest in a box of its own width, `iterations` per
/// step, settled for `steps` steps: the average density error of the last step and
/// the largest speed over the last half.
fn column(acceleration: Acceleration, iterations: u32, steps: usize) -> (f32, f32) {
    let s = 0.05;
    // The Jacobi passes alone: the coarse correction would take most of the column's
    // compression before them.
    let params = Params::<3>::builder(s)
        .iterations(Iterations::Fixed(iterations))
        .acceleration(acceleration)
        .coarse_correction(false)
        .build()
        .unwrap();
    let (w, h) = (8.0 * s, 40.0 * s);
    let mut solver = Solver::new(params, Domain::new([0.0; 3], [w, 1.5 * h, w]).unwrap()).unwrap();
    solver.add_block([0.0; 3], [w, h, w], [0.0; 3]).unwrap();
    let (mut last, mut fastest) = (0.0, 0.0f32);
    for k in 0..steps {
        let d = solver.step().unwrap();
        last = d.average_density_error;
        if k >= steps / 2 {
            fastest = fastest.max(d.max_speed);
        }
    }
    (last, fastest)
}

#[test]
fn a_deep_column_is_less_compressed_at_the_same_iteration_count() {
    // Over 2 s at 1/120 s, Chebyshev's weights leave the column markedly less
    // compressed than plain Jacobi at the same iteration count, and settle it without
    // boiling its surface.
    for (iterations, ratio) in [(4, 0.6), (8, 0.4)] {
        let (plain, plain_speed) = column(Acceleration::None, iterations, 240);
        let (fast, fast_speed) = column(Acceleration::Chebyshev, iterations, 240);
        assert!(
            fast < ratio * plain,
            "{iterations} iterations: Chebyshev {fast}, plain {plain}"
        );
        // Settling, not boiling: within twice plain Jacobi's fastest particle.
        assert!(
            fast_speed < 2.0 * plain_speed,
            "{iterations} iterations: max speed {fast_speed} / {plain_speed} m/s"
        );
    }
}

#[test]
fn one_iteration_per_step_does_not_blow_up_a_block_without_gravity() {
    // The case that blows up without the relaxation (`tests/rest.rs`): at one
    // iteration the weights only damp further: the fastest particle over 120 steps
    // is the lattice's over-density relaxing at the surface, with either.
    let fastest = |acceleration| {
        let s = 0.05;
        let params = Params::<3>::builder(s)
            .gravity([0.0; 3])
            .iterations(Iterations::Fixed(1))
            .acceleration(acceleration)
            .build()
            .unwrap();
        let (w, h) = (10.0 * s, 20.0 * s);
        let mut solver =
            Solver::new(params, Domain::new([0.0; 3], [w, 2.0 * h, w]).unwrap()).unwrap();
        solver.add_block([0.0; 3], [w, h, w], [0.0; 3]).unwrap();
        (0..120)
            .map(|_| solver.step().unwrap().max_speed)
            .fold(0.0f32, f32::max)
    };
    let (plain, fast) = (
        fastest(Acceleration::None),
        fastest(Acceleration::Chebyshev),
    );
    assert!(fast <= 1.1 * plain, "{fast} m/s against {plain} m/s");
}

#[test]
fn chebyshev_needs_a_fixed_count_and_the_auto_relaxation() {
    let b = || Params::<2>::builder(0.05).acceleration(Acceleration::Chebyshev);
    let field = |r: Result<Params<2>, CoreError>| match r {
        Err(CoreError::InvalidParameter { field, reason, .. }) => (field, reason),
        other => panic!("{other:?}"),
    };
    let adaptive = Iterations::Adaptive {
        max_density_error_percent: 1.0,
        min: 1,
        max: 10,
    };
    let (f, why) = field(b().iterations(adaptive).build());
    assert_eq!(f, "acceleration");
    assert!(why.contains("Iterations::Fixed"), "{why}");
    let (f, why) = field(b().relaxation(Relaxation::Fixed(1.0)).build());
    assert_eq!(f, "acceleration");
    assert!(why.contains("Relaxation::Auto"), "{why}");
    assert!(b().iterations(Iterations::Fixed(3)).build().is_ok());
}
