//! Colliders never let a particle through: any shape, solid or hollow, any placement,
//! any displacement (many wall thicknesses in one move), and a fast jet into a
//! thin-walled glass.

use pbf_solver::{Collider, ColliderKind, Domain, Emitter, Params, Shape, Solver};
use proptest::prelude::*;

/// Every shape kind, placed and sized from `v` (eight numbers in 0..1).
fn shape(kind: usize, v: [f32; 8]) -> Shape<3> {
    let c = [v[0] - 0.5, v[1] - 0.5, v[2] - 0.5];
    let size = 0.1 + 0.6 * v[3];
    match kind {
        0 => Shape::Plane {
            point: c,
            normal: [v[4] - 0.5, v[5] - 0.5 + 0.01, v[6] - 0.5],
        },
        1 => Shape::Box {
            center: c,
            half_extents: [size, 0.1 + 0.6 * v[4], 0.1 + 0.6 * v[5]],
        },
        2 => Shape::Sphere {
            center: c,
            radius: size,
        },
        3 => Shape::Capsule {
            a: c,
            b: [v[4] - 0.5, v[5] - 0.5, v[6] - 0.5],
            radius: 0.05 + 0.3 * v[3],
        },
        _ => Shape::Cylinder {
            base: c,
            radius: size,
            height: 0.1 + v[4],
        },
    }
}

/// The kinds: solid, closed container, open container (planes are only solid).
fn collider(kind: usize, hollow: usize, thickness: f32, v: [f32; 8]) -> Collider<3> {
    let kind_of = match (kind, hollow) {
        (0, _) | (_, 0) => ColliderKind::Solid,
        (_, h) => ColliderKind::Container {
            wall_thickness: thickness,
            open_top: h == 2,
        },
    };
    Collider::new(shape(kind, v), kind_of).unwrap()
}

fn lerp(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    core::array::from_fn(|k| a[k] + t * (b[k] - a[k]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A particle outside the solid, moved anywhere (up to 2 m, a hundred wall
    /// thicknesses), ends outside the solid on its own side: the straight segment from
    /// where it started to where it ends never enters the solid (checked at 4,000
    /// points, finer than the thinnest wall). A move that keeps a margin off the solid is left alone.
    #[test]
    fn a_particle_outside_a_solid_never_crosses_it(
        kind in 0usize..5,
        hollow in 0usize..3,
        thickness in 0.02f32..0.3,
        v in prop::array::uniform8(0.0f32..1.0),
        from in prop::array::uniform3(-1.0f32..1.0),
        to in prop::array::uniform3(-1.0f32..1.0),
        margin in 0.02f32..0.05,
    ) {
        let c = collider(kind, hollow, thickness, v);
        prop_assume!(c.distance(from) >= 0.0);
        let end = c.resolve_motion(from, to, margin);
        prop_assert!(end.iter().all(|x| x.is_finite()));
        prop_assert!(c.distance(end) >= 0.0, "ends inside: {:?} (distance {})", end, c.distance(end));
        for k in 0..=4000 {
            let p = lerp(from, end, k as f32 / 4000.0);
            prop_assert!(c.distance(p) > -1e-5, "the path {:?} -> {:?} enters the solid at {:?}", from, end, p);
        }
        // A move that stays a margin off the solid all the way is left alone.
        let clear = (0..=4000).all(|k| c.distance(lerp(from, to, k as f32 / 4000.0)) >= margin);
        if clear {
            prop_assert_eq!(end, to);
        }
    }
}

#[test]
fn a_particle_pushed_into_a_wall_stops_a_margin_off_it_on_its_own_side() {
    let wall = 0.02;
    for open_top in [false, true] {
        let glass = Collider::new(
            Shape::Box {
                center: [0.0, 0.5, 0.0],
                half_extents: [0.5, 0.5, 0.5],
            },
            ColliderKind::Container {
                wall_thickness: wall,
                open_top,
            },
        )
        .unwrap();
        // The inner face of the +x wall is at x = 0.49, the outer one at 0.51.
        for travel in [0.085, 0.1, 0.3, 3.0] {
            let inside = glass.resolve_motion([0.4, 0.5, 0.1], [0.4 + travel, 0.45, 0.1], 0.01);
            assert!((inside[0] - 0.48).abs() < 1e-4, "{travel}: {inside:?}");
            assert!(
                (inside[1] - 0.45).abs() < 1e-4,
                "slides along the wall: {inside:?}"
            );
            let outside = glass.resolve_motion([0.6, 0.5, 0.1], [0.6 - travel, 0.5, 0.1], 0.01);
            assert!((outside[0] - 0.52).abs() < 1e-4, "{travel}: {outside:?}");
        }
    }
}

#[test]
fn a_fast_jet_into_a_thin_walled_glass_loses_no_particle() {
    // A glass with walls one spacing thick; a jet at 12 m/s moves 0.1 m, four wall
    // thicknesses, per step, into the floor next to the wall and into the wall itself.
    // The rim is above the domain: nothing may leave over it either.
    let s = 0.025;
    let params = Params::<3>::builder(s)
        .time_step(1.0 / 120.0)
        .iterations(pbf_solver::Iterations::Fixed(2))
        .build()
        .unwrap();
    let mut solver = Solver::new(params, Domain::new([0.0; 3], [1.0, 1.2, 1.0]).unwrap()).unwrap();
    let (c, radius, wall, floor) = (0.5, 0.25, s, 0.1);
    solver
        .add_collider(
            Collider::new(
                Shape::Cylinder {
                    base: [c, floor - 0.5 * wall, c],
                    radius: radius + 0.5 * wall,
                    height: 1.3,
                },
                ColliderKind::Container {
                    wall_thickness: wall,
                    open_top: true,
                },
            )
            .unwrap(),
        )
        .unwrap();
    for (origin, direction) in [
        ([c, 0.6, c], [0.6, -1.0, 0.2]),
        ([c, 0.3, c], [1.0, -0.3, 0.0]),
    ] {
        solver
            .add_emitter(Emitter::new(origin, direction, 12.0, 0.04, 0.0, 0.3).unwrap())
            .unwrap();
    }
    let inside = |p: [f32; 3]| {
        let (dx, dz) = (p[0] - c, p[2] - c);
        (dx * dx + dz * dz).sqrt() < radius && p[1] > floor
    };
    let mut most = 0;
    for _ in 0..90 {
        solver.step().unwrap();
        let mut out = Vec::new();
        solver.positions_interleaved(&mut out);
        most = most.max(out.len());
        let lost: Vec<_> = out.iter().filter(|p| !inside(**p)).collect();
        assert!(
            lost.is_empty(),
            "{} of {} outside: {:?}",
            lost.len(),
            out.len(),
            &lost[..lost.len().min(5)]
        );
    }
    assert!(most > 500, "only {most} particles emitted");
    let fastest = solver.last_diagnostics().max_speed;
    assert!(fastest.is_finite());
}
