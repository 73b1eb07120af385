//! Dam breaks over 2000 steps: nothing escapes, nothing enters a solid, no NaN.

use crate::common;
use pbf_solver::{Collider, ColliderKind, Shape, scenes};

#[test]
fn dam_break_3d_with_an_obstacle_stays_contained_for_2000_steps() {
    let mut s = scenes::dam_break_3d(1000).unwrap();
    let hi = s.domain().hi();
    s.add_collider(
        Collider::new(
            Shape::Sphere {
                center: [0.6 * hi[0], 0.0, 0.5 * hi[2]],
                radius: 0.2 * hi[2],
            },
            ColliderKind::Solid,
        )
        .unwrap(),
    )
    .unwrap();
    s.add_collider(
        Collider::new(
            Shape::Box {
                center: [0.85 * hi[0], 0.1 * hi[1], 0.5 * hi[2]],
                half_extents: [0.05 * hi[0], 0.1 * hi[1], 0.2 * hi[2]],
            },
            ColliderKind::Solid,
        )
        .unwrap(),
    )
    .unwrap();
    let n = s.len();
    for step in 0..2000 {
        let d = s.step().unwrap_or_else(|e| panic!("step {step}: {e}"));
        assert_eq!(d.particles, n);
        if step % 100 == 99 {
            common::assert_contained(&s);
        }
    }
    common::assert_contained(&s);
}

#[test]
fn dam_break_2d_stays_contained_for_2000_steps() {
    let mut s = scenes::dam_break_2d(800).unwrap();
    for step in 0..2000 {
        s.step().unwrap_or_else(|e| panic!("step {step}: {e}"));
    }
    common::assert_contained(&s);
}

#[test]
fn glass_holds_the_fluid_dropped_into_it() {
    let mut s = scenes::glass_3d(1000).unwrap();
    common::run(&mut s, 300);
    common::assert_contained(&s);
    // Everything ends up inside the glass: below its rim and within its radius.
    let glass = *s.colliders()[0].shape();
    let Shape::Cylinder {
        base,
        radius,
        height,
    } = glass
    else {
        unreachable!()
    };
    let p = s.positions();
    for i in 0..s.len() {
        let r = ((p[0][i] - base[0]).powi(2) + (p[2][i] - base[2]).powi(2)).sqrt();
        assert!(
            r < radius && p[1][i] < base[1] + height,
            "particle {i} outside the glass"
        );
    }
}
