//! The `checkpoint_load` fuzzer's seeds: the checkpoints of small running scenes,
//! committed as `seed-*` in its corpus.

use crate::{
    Acceleration, Backend, Collider, ColliderKind, Domain, Emitter, Iterations, Params, Relaxation,
    Shape, Solver, Wall,
};

/// Valid `checkpoint_load` inputs, named: the states of small running scenes (at most
/// [`MAX_PARTICLES`](super::MAX_PARTICLES) particles, small emitters, so that the harness steps them with
/// their twin), between them 2D and 3D, every collider shape solid and hollow, an
/// emitter, kept lists, adaptive iterations, Chebyshev steps, the coarse correction,
/// an XSPH period, a physical viscosity with a no-slip wall, periodic axes, a fixed
/// relaxation and the scalar backend. Each is the harness's
/// first byte then the payload alone (re-sealed by the harness, so that mutations
/// reach the decoder and the validation), and one 2D state is also there whole with
/// its header. They are the fuzzer's seeds, committed as `seed-*` in the corpus: a
/// fuzzer that starts without a loadable checkpoint rarely makes one, and then tests
/// the decoder's refusals alone.
///
/// # Panics
/// If a scene cannot be built, stepped or saved (a bug, not an input).
pub fn checkpoint_seeds() -> Vec<(&'static str, Vec<u8>)> {
    use crate::checkpoint::HEADER_LEN;
    // Bit 0: 3D; bit 1: re-seal the payload; bit 2: step with the twin; bit 3: a
    // scalar state's twin runs eight lanes.
    let input = |flags: u8, bytes: &[u8]| {
        let mut v = vec![flags];
        v.extend_from_slice(bytes);
        v
    };
    let a = seed_2d(false).checkpoint().expect("the 2D seed saves");
    let b = seed_2d(true).checkpoint().expect("the 2D seed saves");
    let c = seed_3d(false).checkpoint().expect("the 3D seed saves");
    let d = seed_3d(true).checkpoint().expect("the 3D seed saves");
    let e = seed_periodic()
        .checkpoint()
        .expect("the periodic seed saves");
    vec![
        ("2d-lists-kept", input(0b0110, &a[HEADER_LEN..])),
        ("2d-lists-kept-whole", input(0b0100, &a)),
        ("2d-chebyshev-coarse", input(0b0110, &b[HEADER_LEN..])),
        ("3d-adaptive", input(0b0111, &c[HEADER_LEN..])),
        ("3d-scalar-twin-lanes8", input(0b1111, &d[HEADER_LEN..])),
        ("3d-periodic-viscous", input(0b0111, &e[HEADER_LEN..])),
    ]
}

/// A 3D seed with periodic axes: a layer of fluid 96 particles strong flowing along
/// x over a no-slip floor, in a domain periodic along x and z, without the coarse
/// correction, with a physical viscosity and a solid sphere it flows around.
fn seed_periodic() -> Solver<3> {
    let params = Params::<3>::builder(0.1)
        .coarse_correction(false)
        .viscosity(1e-3)
        .build()
        .expect("the seed's parameters");
    let domain = Domain::new([0.0; 3], [0.8, 0.8, 0.6])
        .and_then(|d| d.with_periodic([true, false, true]))
        .map(|d| {
            d.with_walls([
                [Wall::FreeSlip; 2],
                [Wall::NoSlip, Wall::FreeSlip],
                [Wall::FreeSlip; 2],
            ])
        })
        .expect("the seed's domain");
    let mut s = Solver::new(params, domain).expect("the seed's solver");
    let sphere = Collider::new(
        Shape::Sphere {
            center: [0.4, 0.45, 0.3],
            radius: 0.1,
        },
        ColliderKind::Solid,
    )
    .expect("the seed's sphere");
    s.add_collider(sphere).expect("the seed's sphere fits");
    s.add_block([0.0; 3], [0.8, 0.2, 0.6], [0.5, 0.0, 0.0])
        .expect("the seed's block");
    for _ in 0..3 {
        s.step().expect("the seed steps");
    }
    s
}

/// A 2D seed: a block with an emitter above it in a bowl, beside a solid box, a
/// capsule and a cylinder; with `chebyshev`, Chebyshev steps, the coarse correction,
/// an XSPH period, a physical viscosity, a no-slip floor and a no-slip capsule
/// instead of kept lists.
fn seed_2d(chebyshev: bool) -> Solver<2> {
    let b = Params::<2>::builder(0.03).xsph_c(0.02).vorticity_rel(0.2);
    let b = if chebyshev {
        b.acceleration(Acceleration::Chebyshev)
            .coarse_correction(true)
            .xsph_period(Some(0.05))
            .viscosity(1e-3)
    } else {
        b.keep_lists(true)
    };
    let floor = if chebyshev {
        crate::Wall::NoSlip
    } else {
        crate::Wall::FreeSlip
    };
    let domain = Domain::new([0.0; 2], [1.0, 0.8])
        .and_then(|d| d.with_response(0.1, 0.1))
        .map(|d| d.with_walls([[crate::Wall::FreeSlip; 2], [floor, crate::Wall::FreeSlip]]))
        .expect("the seed's domain");
    let mut s =
        Solver::new(b.build().expect("the seed's parameters"), domain).expect("the seed's solver");
    let hollow = ColliderKind::Container {
        wall_thickness: 0.03,
        open_top: true,
    };
    let colliders = [
        (
            Shape::Sphere {
                center: [0.3, 0.3],
                radius: 0.25,
            },
            hollow,
        ),
        (
            Shape::Box {
                center: [0.75, 0.1],
                half_extents: [0.05, 0.1],
            },
            ColliderKind::Solid,
        ),
        (
            Shape::Capsule {
                a: [0.65, 0.5],
                b: [0.9, 0.55],
                radius: 0.03,
            },
            ColliderKind::Solid,
        ),
        (
            Shape::Cylinder {
                base: [0.9, 0.0],
                radius: 0.04,
                height: 0.2,
            },
            hollow,
        ),
    ];
    for (k, (shape, kind)) in colliders.into_iter().enumerate() {
        // With the viscosity, the capsule is no-slip.
        let wall = if chebyshev && k == 2 {
            crate::Wall::NoSlip
        } else {
            crate::Wall::FreeSlip
        };
        let collider = Collider::new(shape, kind)
            .and_then(|c| c.with_response(0.2, 0.1))
            .map(|c| c.with_wall(wall))
            .expect("the seed's collider");
        s.add_collider(collider).expect("the seed's collider fits");
    }
    s.add_emitter(
        Emitter::new([0.3, 0.45], [0.0, -1.0], 0.5, 0.06, 0.0, 1.0).expect("the seed's emitter"),
    )
    .expect("the seed's emitter fits");
    s.add_block([0.15, 0.12], [0.45, 0.3], [0.2, 0.0])
        .expect("the seed's block");
    for _ in 0..3 {
        s.step().expect("the seed steps");
    }
    s
}

/// A 3D seed: a block in a hollow box with a solid sphere, a plane, a capsule and a
/// cylinder; adaptive iterations, or with `scalar` the scalar backend, a fixed
/// relaxation and unilateral constraints.
fn seed_3d(scalar: bool) -> Solver<3> {
    let b = Params::<3>::builder(0.1).xsph_c(0.02).vorticity_rel(0.2);
    let b = if scalar {
        b.backend(Backend::Scalar)
            .relaxation(Relaxation::Fixed(0.8))
            .unilateral(true)
    } else {
        b.iterations(Iterations::Adaptive {
            max_density_error_percent: 1.0,
            min: 2,
            max: 8,
        })
    };
    let domain = Domain::new([0.0; 3], [1.0, 1.0, 0.6]).expect("the seed's domain");
    let mut s =
        Solver::new(b.build().expect("the seed's parameters"), domain).expect("the seed's solver");
    let colliders = [
        (
            Shape::Box {
                center: [0.5, 0.5, 0.3],
                half_extents: [0.45, 0.45, 0.28],
            },
            ColliderKind::Container {
                wall_thickness: 0.05,
                open_top: true,
            },
        ),
        (
            Shape::Sphere {
                center: [0.7, 0.3, 0.3],
                radius: 0.08,
            },
            ColliderKind::Solid,
        ),
        (
            Shape::Plane {
                point: [0.0, 0.06, 0.0],
                normal: [0.0, 1.0, 0.0],
            },
            ColliderKind::Solid,
        ),
        (
            Shape::Capsule {
                a: [0.2, 0.6, 0.1],
                b: [0.2, 0.6, 0.5],
                radius: 0.04,
            },
            ColliderKind::Solid,
        ),
        (
            Shape::Cylinder {
                base: [0.8, 0.1, 0.45],
                radius: 0.05,
                height: 0.3,
            },
            ColliderKind::Solid,
        ),
    ];
    for (shape, kind) in colliders {
        let collider = Collider::new(shape, kind).expect("the seed's collider");
        s.add_collider(collider).expect("the seed's collider fits");
    }
    s.add_block([0.12, 0.12, 0.12], [0.52, 0.52, 0.42], [0.0, 0.0, 0.5])
        .expect("the seed's block");
    for _ in 0..3 {
        s.step().expect("the seed steps");
    }
    s
}
