//! Continuous collision: a move swept against a collider's signed distance (sphere
//! tracing), sliding along the surface at a contact, so that no particle crosses a
//! solid; and the push out of a particle that starts inside one.

use super::collider::Collider;
use super::vector::{dot, norm, sub};

impl<const D: usize> Collider<D> {
    /// Where a particle moving from `from` towards `to` ends when this collider is the
    /// only obstacle, kept `margin` (> 0) off its surface: `to` itself when the way is
    /// free; otherwise a point on the side of the solid it came from (never through a
    /// wall), sliding along the surface. The solver applies this to every particle in
    /// the prediction and after each constraint iteration (with `margin` = half the
    /// spacing). When `from` is inside the solid, the point is pushed out through the
    /// nearest surface instead.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let glass = Collider::new(
    ///     Shape::Cylinder { base: [0.0, 0.0, 0.0], radius: 0.5, height: 1.0 },
    ///     ColliderKind::Container { wall_thickness: 0.02, open_top: true },
    /// )?;
    /// // From inside the glass, straight through its side wall, 5 wall thicknesses:
    /// let end = glass.resolve_motion([0.4, 0.5, 0.0], [0.6, 0.5, 0.0], 0.01);
    /// assert!((end[0] - 0.48).abs() < 1e-5, "{end:?}"); // stays inside, 0.01 off the wall
    /// // A free path is not touched.
    /// assert_eq!(glass.resolve_motion([0.0, 0.5, 0.0], [0.1, 0.6, 0.0], 0.01), [0.1, 0.6, 0.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn resolve_motion(&self, from: [f32; D], to: [f32; D], margin: f32) -> [f32; D] {
        let mut p = to;
        self.project_from(&mut p, from, margin);
        p
    }

    /// Moves `p`, where a particle at `from` is headed, to where it may go without
    /// crossing the solid: at least `margin` (> 0) from the solid when it can, always
    /// outside it, and reachable from `from` along a straight segment that does not
    /// touch the solid. Returns whether `p` moved. A `from` inside the solid has no side:
    /// `p` is then pushed out through the nearest surface.
    ///
    /// The segment `from..p` is swept against the signed distance (see [`Collider`]);
    /// at a contact, `p` is projected onto the plane `margin` off the surface there
    /// (it keeps its tangential motion: frictionless sliding, as the projection of a
    /// resting particle) and the segment is swept again, up to [`MAX_SLIDES`] times; a
    /// segment that still enters the solid ends at its last contact.
    #[inline]
    pub(crate) fn project_from(&self, p: &mut [f32; D], from: [f32; D], margin: f32) -> bool {
        // The common case, away from every surface: the whole way is clear by the
        // bounds alone (what the sweep below would find, at a fraction of its cost).
        // (A target that is not finite, from iterations that diverged, takes the
        // sweep, which leaves it to the step's divergence check.)
        if p.iter().all(|c| c.is_finite()) && self.bounds.clear_between(from, *p, margin) {
            return false;
        }
        // A move in a box container's cavity, the other common case (the particles
        // along a tank's floor and walls): a clamp.
        if let Some(end) = self.clamp_in_cavity(*p, from, margin) {
            let moved = end != *p;
            *p = end;
            return moved;
        }
        self.project_from_near(p, from, margin)
    }

    /// [`project_from`](Self::project_from) where the bounds cannot show the way clear.
    #[inline(never)]
    pub(super) fn project_from_near(&self, p: &mut [f32; D], from: [f32; D], margin: f32) -> bool {
        // The distance at `from`, where every sweep below starts.
        let at_from = self.distance_and_normal(from);
        let start = at_from.0;
        if !(start >= 0.0) {
            return self.project(p, margin);
        }
        // No point within `|p - from| + margin` of `from` is in the solid or within the
        // margin of it: nothing to do (the common case, away from every surface).
        if start >= norm(sub(*p, from)) + margin {
            return false;
        }
        let contact = CONTACT_FRACTION * margin;
        let mut target = *p;
        let mut slides = 0;
        let end = loop {
            match self.sweep(from, at_from, target, contact) {
                Sweep::Clear => break target,
                Sweep::Hit {
                    at,
                    distance,
                    normal,
                } => {
                    slides += 1;
                    if slides > MAX_SLIDES {
                        break at;
                    }
                    let gap = dot(sub(target, at), normal) + distance;
                    for k in 0..D {
                        target[k] += (margin - gap) * normal[k];
                    }
                }
                Sweep::Stopped { at } => break at,
            }
        };
        // Within the margin (at a stop, or a free move that ends near the surface):
        // off the nearest surface to the margin, unless that way enters the solid (a
        // gap narrower than two margins): then stay.
        let (d, n) = self.distance_and_normal(end);
        let end = if d < margin {
            let pushed: [f32; D] = core::array::from_fn(|k| end[k] + (margin - d) * n[k]);
            if matches!(self.sweep(from, at_from, pushed, contact), Sweep::Clear) {
                pushed
            } else {
                end
            }
        } else {
            end
        };
        let moved = end != *p;
        *p = end;
        moved
    }

    /// Sphere tracing from `from` (outside the solid) towards `to`: the first point of
    /// the segment where the distance falls below `contact`, or `Clear` when every
    /// point of it stays at least `contact / 2` from the solid. Each step advances by
    /// the distance minus `contact / 2`, which no 1-Lipschitz distance can overshoot.
    /// `at_from` is [`distance_and_normal`](Self::distance_and_normal) at `from`, which
    /// the caller has already evaluated.
    fn sweep(
        &self,
        from: [f32; D],
        at_from: (f32, [f32; D]),
        to: [f32; D],
        contact: f32,
    ) -> Sweep<D> {
        let delta = sub(to, from);
        let length = norm(delta);
        let mut t = 0.0f32;
        for i in 0..MAX_SWEEP_STEPS {
            let at: [f32; D] = core::array::from_fn(|k| from[k] + t * delta[k]);
            let (distance, normal) = if i == 0 {
                at_from
            } else {
                self.distance_and_normal(at)
            };
            if !(distance.is_finite()) {
                return Sweep::Stopped { at };
            }
            let mut step = distance - 0.5 * contact;
            if distance < contact {
                if dot(delta, normal) < 0.0 {
                    return Sweep::Hit {
                        at,
                        distance,
                        normal,
                    };
                }
                // Touching but leaving: creep out (a step of `contact / 2` keeps
                // the distance above 0).
                step = 0.5 * contact;
            }
            let remaining = (1.0 - t) * length;
            if step >= remaining {
                return Sweep::Clear;
            }
            if !(step > 0.0) {
                return Sweep::Stopped { at };
            }
            t += step / length;
        }
        Sweep::Stopped {
            at: core::array::from_fn(|k| from[k] + t * delta[k]),
        }
    }

    /// Moves `p` out of the solid through the nearest surface so that it lies at least
    /// `margin` from it; returns whether it moved. Only for points that were never
    /// outside (see [`project_from`](Self::project_from)).
    #[inline]
    pub(crate) fn project(&self, p: &mut [f32; D], margin: f32) -> bool {
        let (d, n) = self.distance_and_normal(*p);
        if d < margin {
            let push = margin - d;
            for k in 0..D {
                p[k] += push * n[k];
            }
            true
        } else {
            false
        }
    }
}

/// The contact distance of the sweeps, as a fraction of the margin: a sweep stops
/// where the distance falls below it, at least half of it from the solid.
const CONTACT_FRACTION: f32 = 0.01;

/// How many contacts a projection slides along before it stops at the last one
/// (a corner between two faces needs two).
pub(crate) const MAX_SLIDES: usize = 4;

/// The most sphere-tracing steps of one sweep; a sweep that needs more (one grazing a
/// surface for many margins) ends where it got to, which is outside the solid.
const MAX_SWEEP_STEPS: usize = 256;

/// The outcome of [`Collider::sweep`].
enum Sweep<const D: usize> {
    /// The segment stays outside the solid.
    Clear,
    /// The segment enters the solid (moves against the normal) at `at`.
    Hit {
        at: [f32; D],
        distance: f32,
        normal: [f32; D],
    },
    /// The sweep ran out of steps at `at` (outside the solid).
    Stopped { at: [f32; D] },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{ColliderKind, Shape};

    #[test]
    fn projection_moves_points_out_to_the_margin() {
        let c = Collider::new(
            Shape::Box {
                center: [0.0, 0.0],
                half_extents: [1.0, 1.0],
            },
            ColliderKind::Solid,
        )
        .unwrap();
        let mut p = [0.2, 0.9];
        assert!(c.project(&mut p, 0.05));
        assert!((p[1] - 1.05).abs() < 1e-6 && p[0] == 0.2);
        assert!(!c.project(&mut p, 0.05 - 1e-6));
    }
}
