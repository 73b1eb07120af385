//! Periodic axes of the domain: particles leaving through a face come back through
//! the opposite one with their velocity, a fluid filling a periodic box stays at rest
//! and keeps its momentum along the periodic axis, the bits are those of one thread
//! and of the scalar path, checkpoints keep the axes, and bad settings are errors.

use crate::common;

use pbf_solver::{Backend, CoreError, Domain, Params, ParamsBuilder, Solver};

/// The library's default parameters, the coarse correction (which wraps around the
/// periodic axes) included.
fn builder<const D: usize>(spacing: f32) -> ParamsBuilder<D> {
    Params::<D>::builder(spacing)
}

#[test]
fn a_particle_leaving_through_a_periodic_face_comes_back_with_its_velocity() {
    let params = builder::<2>(0.02).gravity([0.0; 2]).build().unwrap();
    let domain = Domain::new([0.0; 2], [1.0, 0.5])
        .unwrap()
        .with_periodic([true, false])
        .unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    let dt = s.params().time_step();
    // Rightwards through x = 1, and leftwards through x = 0.
    s.add_particles(
        &[[0.99, 0.2], [0.01, 0.3]],
        Some(&[[2.0, 0.0], [-2.0, 0.0]]),
    )
    .unwrap();
    let steps = (0.05 / (2.0 * dt)).ceil() as usize;
    common::run(&mut s, steps);
    let moved = steps as f32 * 2.0 * dt;
    for (i, &id) in s.ids().iter().enumerate() {
        let (x, v) = (s.positions()[0][i], s.velocities()[0][i]);
        let (want, speed) = if id == 0 {
            (0.99 + moved - 1.0, 2.0)
        } else {
            (0.01 - moved + 1.0, -2.0)
        };
        assert!((0.0..1.0).contains(&x), "particle {id} at {x}");
        assert!(
            (x - want).abs() < 1e-4,
            "particle {id} at {x}, expected {want}"
        );
        assert!((v - speed).abs() < 1e-3, "particle {id}: velocity {v}");
        assert_eq!(s.velocities()[1][i], 0.0);
    }

    // In 3D along z, a wall-less axis among walls.
    let params = builder::<3>(0.05).gravity([0.0; 3]).build().unwrap();
    let domain = Domain::new([0.0; 3], [1.0; 3])
        .unwrap()
        .with_periodic([false, false, true])
        .unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    s.add_particles(&[[0.5, 0.5, 0.98]], Some(&[[0.0, 0.0, 1.0]]))
        .unwrap();
    common::run(&mut s, 10);
    let z = s.positions()[2][0];
    assert!((0.0..0.2).contains(&z), "{z}");
    assert!((s.velocities()[2][0] - 1.0).abs() < 1e-3);
}

/// A block of `depth` spacings filling the box along x (and z in 3D), which is
/// periodic there (`periodic`) or walled, with `vx` given to every particle.
fn channel<const D: usize>(periodic: bool, vx: f32, backend: Backend) -> Solver<D> {
    let s = 0.05;
    let params = builder::<D>(s).backend(backend).build().unwrap();
    let mut hi = [0.8f32; D];
    hi[1] = 0.6;
    let mut axes = [periodic; D];
    axes[1] = false;
    let domain = Domain::new([0.0; D], hi)
        .unwrap()
        .with_periodic(axes)
        .unwrap();
    let mut solver = Solver::new(params, domain).unwrap();
    let mut top = hi;
    top[1] = 0.3;
    let mut v = [0.0; D];
    v[0] = vx;
    solver.add_block([0.0; D], top, v).unwrap();
    solver
}

fn rest_in_a_periodic_box<const D: usize>(steps: usize) {
    let mut walled = channel::<D>(false, 0.0, Backend::Lanes);
    let mut periodic = channel::<D>(true, 0.0, Backend::Lanes);
    let n = periodic.len();
    let start = common::by_id(&periodic);
    let (w, p) = (
        common::run(&mut walled, steps),
        common::run(&mut periodic, steps),
    );
    common::assert_contained(&periodic);
    assert_eq!(periodic.len(), n, "no particle lost");
    assert!(
        p.max_density_error <= w.max_density_error + 0.005,
        "{D}D: periodic {} against walled {}",
        p.max_density_error,
        w.max_density_error
    );
    assert!(p.max_density_error < 0.03, "{D}D: {}", p.max_density_error);
    assert!(p.max_speed < 0.05, "{D}D: at rest, {} m/s", p.max_speed);
    // Nothing distinguishes a column from another along the periodic axes: the
    // particles of a layer (one height at the start) stay at one height, those at the
    // faces as those inside.
    let end = common::by_id(&periodic);
    let mut layers: std::collections::BTreeMap<i64, (f32, f32)> = Default::default();
    for (a, b) in start.iter().zip(&end) {
        let layer = layers
            .entry((a[1] * 1e4).round() as i64)
            .or_insert((f32::INFINITY, f32::NEG_INFINITY));
        *layer = (layer.0.min(b[1]), layer.1.max(b[1]));
    }
    for (y0, (lo, hi)) in layers {
        assert!(hi - lo < 2e-3, "{D}D: the layer at {y0} spans {lo}..{hi}");
    }
}

#[test]
fn a_block_filling_a_periodic_box_stays_at_rest_in_2d() {
    rest_in_a_periodic_box::<2>(150);
}

#[test]
fn a_block_filling_a_periodic_box_stays_at_rest_in_3d() {
    rest_in_a_periodic_box::<3>(60);
}

fn momentum_along_x<const D: usize>(s: &Solver<D>) -> f64 {
    s.velocities()[0].iter().map(|&v| f64::from(v)).sum::<f64>() / s.len() as f64
}

/// A uniform horizontal velocity is kept: the fluid moves as a whole, through the
/// periodic faces, with no wall to slow it.
fn horizontal_flow<const D: usize>(steps: usize) {
    let vx = 1.0;
    let mut s = channel::<D>(true, vx, Backend::Lanes);
    let n = s.len();
    let start = common::by_id(&s);
    let d = common::run(&mut s, steps);
    common::assert_contained(&s);
    assert_eq!(s.len(), n);
    let mean = momentum_along_x(&s);
    assert!(
        (mean - f64::from(vx)).abs() < 2e-3 * f64::from(vx),
        "{D}D: {mean}"
    );
    assert!(d.max_density_error < 0.03, "{D}D: {}", d.max_density_error);
    // The fluid went through the face: every particle moved the same way round.
    let travelled = f64::from(vx) * steps as f64 * f64::from(s.params().time_step());
    assert!(
        travelled > 0.8,
        "through the face at least once: {travelled}"
    );
    let end = common::by_id(&s);
    for (a, b) in start.iter().zip(&end) {
        let along = f64::from(b[0] - a[0]) - travelled;
        let turns = (along / 0.8).round();
        assert!((along - 0.8 * turns).abs() < 0.02, "{D}D: {a:?} -> {b:?}");
    }
}

#[test]
fn a_horizontal_velocity_is_kept_along_the_periodic_axis_in_2d() {
    horizontal_flow::<2>(150);
}

#[test]
fn a_horizontal_velocity_is_kept_along_the_periodic_axis_in_3d() {
    horizontal_flow::<3>(100);
}

/// A flow with shear across the periodic faces: every particle's bits.
fn sheared<const D: usize>(backend: Backend) -> Solver<D> {
    let block = channel::<D>(true, 0.0, backend);
    let p = block.positions();
    let mut points = Vec::new();
    let mut velocities = Vec::new();
    for i in 0..block.len() {
        let q: [f32; D] = core::array::from_fn(|a| p[a][i]);
        let mut v = [0.0; D];
        v[0] = 2.0 * q[1] - 0.3 + 0.1 * (7.0 * q[0]).sin();
        v[D - 1] += 0.2 * (5.0 * q[1]).cos();
        points.push(q);
        velocities.push(v);
    }
    let mut s = Solver::new(block.params().clone(), *block.domain()).unwrap();
    s.add_particles(&points, Some(&velocities)).unwrap();
    s
}

fn bits<const D: usize>(s: &Solver<D>) -> Vec<u32> {
    let mut out = Vec::new();
    for a in 0..D {
        out.extend(s.positions()[a].iter().map(|v| v.to_bits()));
        out.extend(s.velocities()[a].iter().map(|v| v.to_bits()));
    }
    out.extend(s.densities().iter().map(|v| v.to_bits()));
    out
}

fn on_threads<const D: usize>(threads: usize, steps: usize) -> Vec<u32> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut s = sheared::<D>(Backend::Lanes);
        common::run(&mut s, steps);
        bits(&s)
    })
}

#[test]
fn periodic_runs_give_the_same_bits_on_one_and_two_threads() {
    assert_eq!(on_threads::<2>(1, 80), on_threads::<2>(2, 80));
    assert_eq!(on_threads::<3>(1, 40), on_threads::<3>(2, 40));
}

#[test]
fn periodic_runs_give_the_scalar_paths_bits_on_every_backend() {
    fn same<const D: usize>(steps: usize) {
        for backend in [Backend::Lanes, Backend::Lanes8] {
            let mut wide = sheared::<D>(backend);
            let mut scalar = sheared::<D>(Backend::Scalar);
            for step in 1..=steps {
                wide.step().unwrap();
                scalar.step().unwrap();
                assert!(
                    bits(&wide) == bits(&scalar),
                    "{D}D {backend:?}: step {step}"
                );
            }
        }
    }
    same::<2>(60);
    same::<3>(30);
}

#[test]
fn a_checkpoint_keeps_the_periodic_axes_and_continues_bit_for_bit() {
    let mut s = sheared::<2>(Backend::Lanes);
    common::run(&mut s, 20);
    let bytes = s.checkpoint().unwrap();
    let mut back = Solver::<2>::from_checkpoint(&bytes).unwrap();
    assert_eq!(back.domain().periodic(), [true, false]);
    common::run(&mut s, 20);
    common::run(&mut back, 20);
    assert_eq!(bits(&s), bits(&back));
}

#[test]
fn bad_periodic_settings_are_errors() {
    let domain = Domain::new([0.0; 2], [0.25, 1.0]).unwrap();
    let periodic = domain.with_periodic([true, false]).unwrap();
    // h = 0.1: a period of 0.25 is shorter than three kernel radii.
    let short = Solver::new(builder::<2>(0.05).build().unwrap(), periodic);
    assert!(
        matches!(
            short,
            Err(CoreError::InvalidCollider { field: "domain.periodic", value, .. }) if value == 0.25f32 as f64
        ),
        "{short:?}"
    );
    // The same box walled is fine, and so is a period of three radii.
    assert!(Solver::new(builder::<2>(0.05).build().unwrap(), domain).is_ok());
    let three = Domain::new([0.0; 2], [0.3, 1.0])
        .unwrap()
        .with_periodic([true, false])
        .unwrap();
    assert!(Solver::new(builder::<2>(0.05).build().unwrap(), three).is_ok());
    // A period that overflows f32.
    let huge = Domain::new([-3e38, 0.0], [3e38, 1.0]).unwrap();
    assert!(matches!(
        huge.with_periodic([true, false]),
        Err(CoreError::InvalidCollider {
            field: "domain.periodic",
            ..
        })
    ));
    assert_eq!(huge.periodic(), [false; 2]);
    assert!(huge.with_periodic([false, true]).is_ok());
}

/// The first particle whose density (the step's last pass) is off by more than 1e-4
/// of the brute-force sum over every pair within h by minimum image, with both.
fn density_off_minimum_image(s: &Solver<3>, period: f32) -> Option<(usize, f64, f64)> {
    common::density_off(s, |x| x - period * (x / period).round())
}

/// A jittered lattice filling a box periodic on every axis (no wall anywhere), with
/// random velocities: particles cross the faces, the lists are kept, mended or built
/// again, and every step's densities are the brute-force minimum-image sums.
#[test]
fn lists_across_periodic_faces_miss_no_pair_within_h() {
    let mut uniform = common::uniform(0x2545_f491_4f6c_dd1d);
    let (spacing, side) = (0.1f32, 9);
    let period = side as f32 * spacing;
    let params = builder::<3>(spacing).gravity([0.0; 3]).build().unwrap();
    let domain = Domain::new([0.0; 3], [period; 3])
        .unwrap()
        .with_periodic([true; 3])
        .unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    let mut points = Vec::new();
    for flat in 0..side * side * side {
        let k = [flat % side, (flat / side) % side, flat / (side * side)];
        points.push(k.map(|k| (k as f32 + 0.5 + 0.1 * uniform()) * spacing));
    }
    let per_step = 0.03 * s.kernel().h() / s.params().time_step();
    let velocities: Vec<[f32; 3]> = points
        .iter()
        .map(|_| [(); 3].map(|_| per_step * uniform()))
        .collect();
    s.add_particles(&points, Some(&velocities)).unwrap();
    let start = common::by_id(&s);
    let (mut kept, mut searched) = (0, 0);
    for step in 0..40 {
        let d = s.step().unwrap();
        if d.searches == 0 {
            kept += 1;
        } else if step > 0 {
            searched += 1;
        }
        let wrong = density_off_minimum_image(&s, period);
        assert!(
            wrong.is_none(),
            "step {step}: particle, density, brute force {wrong:?}"
        );
    }
    assert!(kept >= 3, "{kept} steps kept their lists");
    assert!(searched >= 3, "{searched} steps after the first searched");
    // Some particles went through a face.
    let end = common::by_id(&s);
    let crossed = start
        .iter()
        .zip(&end)
        .filter(|(a, b)| (0..3).any(|k| (a[k] - b[k]).abs() > 0.5 * period))
        .count();
    assert!(crossed > 0, "no particle crossed a face");
}
