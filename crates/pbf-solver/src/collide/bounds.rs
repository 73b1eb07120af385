//! Bounds of a collider's distance, computed once from its shape: where the distance
//! is at least a given radius without evaluating it.

use super::collider::ColliderKind;
use super::shape::Shape;
use super::vector::{dot, norm, sub};

/// Where a collider's distance can be bounded from below without evaluating it (most
/// particles, most of the time, are far from every collider): outside a box around its
/// solid part, or inside a convex region that the solid leaves free (a container's
/// cavity, a plane's front). Computed once, from the shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bounds<const D: usize> {
    /// The solid part lies within `lo..=hi` (infinite for a plane).
    lo: [f32; D],
    /// See `lo`.
    hi: [f32; D],
    /// The convex free region, if the collider has one.
    pub(super) free: Free<D>,
    /// Added to every radius, for the rounding of the distance itself: 1e-5 of the
    /// bounds' magnitude, about a hundred times the rounding of a coordinate there.
    slack: f32,
}

/// A convex region where the collider's distance is at least the distance to the
/// region's own boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Free<const D: usize> {
    /// None is known.
    Nowhere,
    /// The box `lo..=hi` (a box container's cavity; `hi[1]` infinite when open).
    Box { lo: [f32; D], hi: [f32; D] },
    /// The ball around `center` (a spherical container's cavity).
    Ball { center: [f32; D], radius: f32 },
    /// Within `radius` of the vertical axis through `axis`, between `lo` and `hi` in
    /// y (a cylindrical container's cavity).
    Column {
        axis: [f32; D],
        radius: f32,
        lo: f32,
        hi: f32,
    },
    /// In front of a plane (`normal` is the unit normal the distance uses).
    HalfSpace { point: [f32; D], normal: [f32; D] },
}

impl<const D: usize> Free<D> {
    /// Whether `p` lies at least `r` inside the region: the box of one point.
    #[inline(always)]
    fn holds(&self, p: [f32; D], r: f32) -> bool {
        self.holds_box(p, p, r)
    }

    /// Whether every point of the box `lo..=hi` lies at least `r` inside the region:
    /// the box's farthest corner from the axis or centre, or its nearest corner to
    /// the plane, does.
    #[inline(always)]
    pub(super) fn holds_box(&self, lo: [f32; D], hi: [f32; D], r: f32) -> bool {
        let far = |k: usize, c: f32| (lo[k] - c).abs().max((hi[k] - c).abs());
        match *self {
            Free::Nowhere => false,
            Free::Box { lo: l, hi: h } => (0..D).all(|k| lo[k] >= l[k] + r && hi[k] <= h[k] - r),
            Free::Ball { center, radius } => {
                let q = radius - r;
                let d2: f32 = (0..D).map(|k| far(k, center[k]) * far(k, center[k])).sum();
                q > 0.0 && d2 <= q * q
            }
            Free::Column {
                axis,
                radius,
                lo: y_lo,
                hi: y_hi,
            } => {
                let q = radius - r;
                let rho2: f32 = (0..D)
                    .filter(|&k| k != 1)
                    .map(|k| far(k, axis[k]) * far(k, axis[k]))
                    .sum();
                q > 0.0 && rho2 <= q * q && lo[1] >= y_lo + r && hi[1] <= y_hi - r
            }
            Free::HalfSpace { point, normal } => {
                let near: [f32; D] =
                    core::array::from_fn(|k| if normal[k] >= 0.0 { lo[k] } else { hi[k] });
                dot(sub(near, point), normal) >= r
            }
        }
    }
}

impl<const D: usize> Bounds<D> {
    pub(super) fn new(shape: &Shape<D>, kind: ColliderKind) -> Self {
        let inf = f32::INFINITY;
        let (mut lo, mut hi) = match *shape {
            Shape::Plane { .. } => ([-inf; D], [inf; D]),
            Shape::Box {
                center,
                half_extents,
            } => (
                core::array::from_fn(|k| center[k] - half_extents[k]),
                core::array::from_fn(|k| center[k] + half_extents[k]),
            ),
            Shape::Sphere { center, radius } => {
                (center.map(|c| c - radius), center.map(|c| c + radius))
            }
            Shape::Capsule { a, b, radius } => (
                core::array::from_fn(|k| a[k].min(b[k]) - radius),
                core::array::from_fn(|k| a[k].max(b[k]) + radius),
            ),
            Shape::Cylinder {
                base,
                radius,
                height,
            } => (
                core::array::from_fn(|k| if k == 1 { base[1] } else { base[k] - radius }),
                core::array::from_fn(|k| {
                    if k == 1 {
                        base[1] + height
                    } else {
                        base[k] + radius
                    }
                }),
            ),
        };
        let free = match (kind, *shape) {
            (ColliderKind::Solid, Shape::Plane { point, normal }) => {
                // The unit normal exactly as the distance computes it.
                let len = norm(normal);
                Free::HalfSpace {
                    point,
                    normal: normal.map(|c| c / len),
                }
            }
            (ColliderKind::Solid, _) => Free::Nowhere,
            (
                ColliderKind::Container {
                    wall_thickness,
                    open_top,
                },
                shape,
            ) => {
                let half = 0.5 * wall_thickness;
                // The shell reaches half a wall beyond the surface; an open one is cut
                // at the rim, above which the distance is at least the height over it.
                for k in 0..D {
                    lo[k] -= half;
                    hi[k] += half;
                }
                if open_top && D >= 2 {
                    hi[1] = hi[1].min(shape.top());
                }
                match shape {
                    Shape::Box {
                        center,
                        half_extents,
                    } => Free::Box {
                        lo: core::array::from_fn(|k| center[k] - half_extents[k] + half),
                        hi: core::array::from_fn(|k| {
                            if open_top && k == 1 {
                                inf
                            } else {
                                center[k] + half_extents[k] - half
                            }
                        }),
                    },
                    Shape::Sphere { center, radius } => Free::Ball {
                        center,
                        radius: radius - half,
                    },
                    Shape::Cylinder {
                        base,
                        radius,
                        height,
                    } if D >= 2 => Free::Column {
                        axis: base,
                        radius: radius - half,
                        lo: base[1] + half,
                        hi: if open_top {
                            inf
                        } else {
                            base[1] + height - half
                        },
                    },
                    _ => Free::Nowhere,
                }
            }
        };
        let mut magnitude = lo
            .iter()
            .chain(hi.iter())
            .filter(|c| c.is_finite())
            .fold(0.0f32, |m, c| m.max(c.abs()));
        if let Shape::Plane { point, .. } = *shape {
            magnitude = point.iter().fold(magnitude, |m, c| m.max(c.abs()));
        }
        if let ColliderKind::Container { wall_thickness, .. } = kind {
            magnitude += wall_thickness;
        }
        Self {
            lo,
            hi,
            free,
            slack: 1e-5 * magnitude,
        }
    }

    /// The radius `r` with the slack for rounding.
    #[inline(always)]
    fn padded(&self, r: f32) -> f32 {
        r + 1e-5 * r.abs() + self.slack
    }

    /// Whether the collider's distance at `p` is at least `r`: true only where a
    /// bound shows it (false when unsure, and for NaN).
    #[inline(always)]
    pub(super) fn clear_of(&self, p: [f32; D], r: f32) -> bool {
        self.clear_box(p, p, r)
    }

    /// Whether every point of the box `lo..=hi` is at least `r` from the solid: the
    /// box lies beyond one side of the box around the solid, or in the free region.
    #[inline(always)]
    pub(super) fn clear_box(&self, lo: [f32; D], hi: [f32; D], r: f32) -> bool {
        let r = self.padded(r);
        (0..D).any(|k| hi[k] < self.lo[k] - r || lo[k] > self.hi[k] + r)
            || self.free.holds_box(lo, hi, r)
    }

    /// Whether every point of the segment `a..b` is at least `r` from the solid: both
    /// ends in one convex region that shows it (one side of the box around the solid,
    /// or the free region).
    #[inline(always)]
    pub(super) fn clear_between(&self, a: [f32; D], b: [f32; D], r: f32) -> bool {
        let r = self.padded(r);
        (0..D).any(|k| {
            let below = self.lo[k] - r;
            let above = self.hi[k] + r;
            (a[k] < below && b[k] < below) || (a[k] > above && b[k] > above)
        }) || (self.free.holds(a, r) && self.free.holds(b, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{Collider, bounding_box};

    /// A shape from numbers in `0..1`: `pick` chooses plane, box, sphere, capsule or
    /// cylinder; `u` places and sizes it within about `-1..1`.
    fn any_shape<const D: usize>(pick: usize, u: &[f32]) -> Shape<D> {
        let at = |o: usize| -> [f32; D] { core::array::from_fn(|k| 2.0 * u[o + k] - 1.0) };
        let size = |o: usize| 0.1 + 1.4 * u[o];
        match pick % 5 {
            0 => Shape::Plane {
                point: at(0),
                normal: core::array::from_fn(|k| {
                    if k == 1 {
                        0.5 + u[3 + k]
                    } else {
                        u[3 + k] - 0.5
                    }
                }),
            },
            1 => Shape::Box {
                center: at(0),
                half_extents: core::array::from_fn(|k| size(3 + k)),
            },
            2 => Shape::Sphere {
                center: at(0),
                radius: size(3),
            },
            3 => Shape::Capsule {
                a: at(0),
                b: at(3),
                radius: size(6),
            },
            _ => Shape::Cylinder {
                base: at(0),
                radius: size(3),
                height: size(4),
            },
        }
    }

    /// The bounds' claims hold against the distance itself: a point they call clear of
    /// `r` is at least `r` from the solid, a segment they call clear is at least `r`
    /// from it all along (so `project_from`'s shortcut gives what the sweep gives).
    fn bounds_hold<const D: usize>(
        c: &Collider<D>,
        a: [f32; D],
        b: [f32; D],
        r: f32,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        use proptest::prop_assert;
        if c.clear_of(a, r) {
            prop_assert!(
                c.distance(a) >= r,
                "{c:?} at {a:?}: {} < {r}",
                c.distance(a)
            );
        }
        if c.bounds.clear_between(a, b, r) {
            for k in 0..=32 {
                let t = k as f32 / 32.0;
                let q: [f32; D] = core::array::from_fn(|i| a[i] + t * (b[i] - a[i]));
                prop_assert!(c.distance(q) >= r, "{c:?} on {a:?}..{b:?} at {q:?}");
            }
            let mut p = b;
            prop_assert!(
                !c.project_from_near(&mut p, a, r) && p == b,
                "{c:?}: {a:?}..{b:?}"
            );
        }
        // The box with corners a and b: clear means every point of it, the corners and
        // a lattice through it, is at least r away.
        let (lo, hi) = bounding_box(&[&[a, b]]).expect("finite");
        if c.clear_of_box(lo, hi, r) {
            for k in 0..5usize.pow(D as u32) {
                let q: [f32; D] = core::array::from_fn(|i| {
                    let t = ((k / 5usize.pow(i as u32)) % 5) as f32 / 4.0;
                    lo[i] + t * (hi[i] - lo[i])
                });
                prop_assert!(c.distance(q) >= r, "{c:?} in {lo:?}..{hi:?} at {q:?}");
            }
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn bounds_never_call_a_point_clear_that_is_not(
            pick in 0usize..15,
            u in proptest::collection::vec(0.0f32..1.0, 9),
            a in proptest::collection::vec(-2.5f32..2.5, 3),
            b in proptest::collection::vec(-2.5f32..2.5, 3),
            r in 0.05f32..0.5,
        ) {
            // 0..5: solid; 5..10: closed container; 10..15: open container.
            let kind = match pick / 5 {
                0 => ColliderKind::Solid,
                k => ColliderKind::Container { wall_thickness: 0.05 + 0.3 * u[8], open_top: k == 2 },
            };
            let s3 = any_shape::<3>(pick, &u);
            if let Ok(c) = Collider::new(s3, kind) {
                bounds_hold(&c, [a[0], a[1], a[2]], [b[0], b[1], b[2]], r)?;
            }
            let s2 = any_shape::<2>(pick, &u);
            if let Ok(c) = Collider::new(s2, kind) {
                bounds_hold(&c, [a[0], a[1]], [b[0], b[1]], r)?;
            }
        }
    }

    /// The bounds show what they are for: a tank's cavity, the space around it and
    /// above its rim are clear without evaluating the distance; the walls are not.
    #[test]
    fn bounds_show_a_tank_clear_away_from_its_walls() {
        let tank = Collider::new(
            Shape::Box {
                center: [2.0, 0.75, 0.5],
                half_extents: [2.0, 0.75, 0.5],
            },
            ColliderKind::Container {
                wall_thickness: 0.2,
                open_top: true,
            },
        )
        .unwrap();
        let h = 0.1;
        for p in [
            [2.0, 0.75, 0.5],   // the middle
            [0.25, 0.25, 0.25], // a corner of the cavity, more than h from the walls
            [2.0, 5.0, 0.5],    // high above the open top
            [2.0, 1.65, -0.2],  // above the rim of the wall
            [-1.0, 0.5, 0.5],   // outside
        ] {
            assert!(tank.clear_of(p, h), "{p:?}");
            assert!(tank.distance(p) >= h);
        }
        for p in [[0.15, 0.5, 0.5], [2.0, 0.12, 0.5], [4.05, 1.0, 0.5]] {
            assert!(!tank.clear_of(p, h), "{p:?}");
        }
        // A move within the cavity is clear as a segment; one through a wall is not.
        assert!(
            tank.bounds
                .clear_between([0.5, 0.5, 0.5], [3.5, 1.2, 0.5], h)
        );
        assert!(
            !tank
                .bounds
                .clear_between([3.5, 0.5, 0.5], [4.5, 0.5, 0.5], h)
        );
        // Points on opposite sides outside the tank are clear each, not as a segment.
        assert!(tank.clear_of([-1.0, 0.5, 0.5], h) && tank.clear_of([5.0, 0.5, 0.5], h));
        assert!(
            !tank
                .bounds
                .clear_between([-1.0, 0.5, 0.5], [5.0, 0.5, 0.5], h)
        );
    }
}
