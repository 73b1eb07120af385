//! A block of fluid falling freely keeps its density and its shape.
//!
//! In free fall nothing acts on the fluid but uniform gravity, so a block that starts
//! at rest at the rest density has nothing to correct: in its own frame it must stay
//! as it is. The criterion, fixed before the run: over 0.5 s at the library's
//! defaults, the median density stays within 1% of the rest density and the volume of
//! the particles' bounding box within 2% of its start.

use pbf_solver::{Domain, Params, Solver};

fn bounding_volume<const D: usize>(s: &Solver<D>) -> f64 {
    s.positions()
        .iter()
        .map(|axis| {
            let lo = axis.iter().fold(f32::INFINITY, |m, &v| m.min(v));
            let hi = axis.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            f64::from(hi - lo)
        })
        .product()
}

fn median(values: &[f32]) -> f32 {
    let mut v = values.to_vec();
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

fn falls_as_a_block<const D: usize>(side: usize) {
    let params = Params::<D>::builder(0.05).build().unwrap();
    let (steps, rest) = (
        (0.5 / params.time_step()).round() as usize,
        params.rest_density(),
    );
    let b = side as f32 * params.spacing();
    let mut s = Solver::new(params, Domain::new([-100.0; D], [100.0; D]).unwrap()).unwrap();
    s.add_block([0.0; D], [b; D], [0.0; D]).unwrap();
    let start = bounding_volume(&s);
    for step in 0..steps {
        s.step().unwrap();
        let density = median(s.densities());
        assert!(
            (density / rest - 1.0).abs() <= 0.01,
            "{D}D step {step}: median density {density}"
        );
        let volume = bounding_volume(&s) / start;
        assert!(
            (volume - 1.0).abs() <= 0.02,
            "{D}D step {step}: bounding volume {volume} of its start"
        );
    }
    // It did fall: about g t^2 / 2.
    let lowest = s.positions()[1]
        .iter()
        .fold(f32::INFINITY, |m, &v| m.min(v));
    assert!(lowest < -1.0, "{D}D lowest point {lowest}");
}

#[test]
fn a_falling_block_keeps_its_density_and_shape_in_3d() {
    falls_as_a_block::<3>(16);
}

#[test]
fn a_falling_block_keeps_its_density_and_shape_in_2d() {
    falls_as_a_block::<2>(30);
}
