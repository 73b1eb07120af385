//! A block in a box settles at rest with a small density error.

mod common;
use pbf_core::scenes::block_at_rest;

fn check<const D: usize>(particles: usize, steps: usize) {
    let mut s = block_at_rest::<D>(particles).unwrap();
    let h = s.kernel().h();
    let dt = s.params().time_step();
    let d = common::run(&mut s, steps);
    common::assert_contained(&s);
    assert!(
        d.average_density_error < 0.01,
        "{D}D average density error {}",
        d.average_density_error
    );
    assert!(
        d.max_density_error < 0.03,
        "{D}D max density error {}",
        d.max_density_error
    );
    assert!(
        d.max_speed * dt < 0.05 * h,
        "{D}D max speed {} per step vs h {h}",
        d.max_speed * dt
    );
}

#[test]
fn block_settles_in_3d() {
    check::<3>(1000, 600);
}

#[test]
fn block_settles_in_2d() {
    check::<2>(400, 600);
}
