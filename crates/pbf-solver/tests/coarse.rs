//! The coarse density correction (`ParamsBuilder::coarse_correction`): a deep pool at a
//! large time step, where a few Jacobi passes leave the fluid squeezed, between walls
//! and in a domain periodic along x.
use pbf_solver::{CoreError, Domain, Iterations, Params, Solver};

/// A 2D pool 16 particles wide and 64 deep, stepped at 1/30 s with 2 iterations, on the
/// floor of a box (periodic along x when `periodic`): the mean over the last 30 of 90
/// steps of the average density error, or infinity if the solver reports the fluid
/// collapsed into clumps ([`CoreError::Collapsed`]).
fn pool_error(coarse: bool, periodic: bool) -> f64 {
    let s = 0.05;
    let params = Params::<2>::builder(s)
        .time_step(1.0 / 30.0)
        .iterations(Iterations::Fixed(2))
        .coarse_correction(coarse)
        .build()
        .unwrap();
    let (w, d) = (16.0 * s, 64.0 * s);
    let domain = Domain::new([0.0; 2], [w, 2.0 * d])
        .unwrap()
        .with_periodic([periodic, false])
        .unwrap();
    let mut solver = Solver::new(params, domain).unwrap();
    solver.add_block([0.0; 2], [w, d], [0.0; 2]).unwrap();
    let mut sum = 0.0;
    for step in 0..90 {
        let stats = match solver.step() {
            Err(CoreError::Collapsed { .. }) => return f64::INFINITY,
            result => result.unwrap(),
        };
        assert!(stats.max_speed.is_finite());
        if step >= 60 {
            sum += f64::from(stats.average_density_error);
        }
    }
    sum / 30.0
}

#[test]
fn the_coarse_correction_keeps_a_deep_pool_near_rest_density_at_large_steps() {
    let (plain, coarse) = (pool_error(false, false), pool_error(true, false));
    // Without, the pool collapses into clumps (or the solver stops with `Collapsed`,
    // depending on when the lists were rebuilt).
    assert!(
        coarse < 0.05 && coarse < 0.25 * plain,
        "average density error: {coarse} with the correction, {plain} without"
    );
}

#[test]
fn the_coarse_correction_keeps_a_deep_periodic_pool_near_rest_density() {
    let (plain, coarse) = (pool_error(false, true), pool_error(true, true));
    let walled = pool_error(true, false);
    assert!(
        coarse < 0.05 && coarse < 0.25 * plain,
        "average density error: {coarse} with the correction, {plain} without"
    );
    // With no side walls the pool is the same at every x: it is held at least as
    // well as between walls (within a tenth of a percent).
    assert!(
        coarse <= walled + 1e-3,
        "periodic {coarse}, walled {walled}"
    );
}
