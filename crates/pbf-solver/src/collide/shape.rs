//! [`Shape`]: the signed distance of a plane, box, sphere, capsule or cylinder and its
//! gradient, the outward normal.

use super::vector::{dot, norm, sub, unit_or_up};
use crate::CoreError;

/// A shape, by its signed distance (negative inside). Axis 1 (y) is "up": cylinders
/// stand along it and open containers are open towards +y.
///
/// ```
/// use pbf_solver::Shape;
/// let s = Shape::Sphere { center: [0.0, 0.0, 0.0], radius: 1.0 };
/// assert_eq!(s.distance([2.0, 0.0, 0.0]), 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape<const D: usize> {
    /// The half-space behind a plane: solid where `(p - point) . normal < 0`.
    Plane {
        /// A point on the plane.
        point: [f32; D],
        /// The normal pointing out of the solid (normalised on use; must be non-zero).
        normal: [f32; D],
    },
    /// An axis-aligned box.
    Box {
        /// Its centre.
        center: [f32; D],
        /// Half its size along each axis (> 0).
        half_extents: [f32; D],
    },
    /// A sphere (a disc in 2D).
    Sphere {
        /// Its centre.
        center: [f32; D],
        /// Its radius (> 0).
        radius: f32,
    },
    /// The points within `radius` of the segment `a..b`.
    Capsule {
        /// One end of the axis.
        a: [f32; D],
        /// The other end.
        b: [f32; D],
        /// Its radius (> 0).
        radius: f32,
    },
    /// A cylinder standing on the y axis (a rectangle in 2D).
    Cylinder {
        /// The centre of its bottom face.
        base: [f32; D],
        /// Its radius (> 0).
        radius: f32,
        /// Its height along +y (> 0).
        height: f32,
    },
}

impl<const D: usize> Shape<D> {
    /// The signed distance from `p` to the surface (negative inside).
    ///
    /// ```
    /// use pbf_solver::Shape;
    /// let b = Shape::Box { center: [0.0, 0.0], half_extents: [1.0, 2.0] };
    /// assert_eq!(b.distance([0.0, 0.0]), -1.0);
    /// assert_eq!(b.distance([3.0, 0.0]), 2.0);
    /// ```
    pub fn distance(&self, p: [f32; D]) -> f32 {
        self.distance_and_normal(p, false).0
    }

    /// The signed distance and the outward unit normal (the distance's gradient). With
    /// `open_top`, boxes and cylinders have no top face (they extend upwards without
    /// end), which is what an open container's shell is cut from.
    #[inline]
    pub(crate) fn distance_and_normal(&self, p: [f32; D], open_top: bool) -> (f32, [f32; D]) {
        match *self {
            Shape::Plane { point, normal } => {
                let len = norm(normal);
                let n = normal.map(|c| c / len);
                (dot(sub(p, point), n), n)
            }
            Shape::Sphere { center, radius } => {
                let d = sub(p, center);
                let r = norm(d);
                (r - radius, unit_or_up(d, r))
            }
            Shape::Capsule { a, b, radius } => {
                let ab = sub(b, a);
                let len2 = dot(ab, ab);
                let t = if len2 > 0.0 {
                    (dot(sub(p, a), ab) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let closest: [f32; D] = core::array::from_fn(|k| a[k] + t * ab[k]);
                let d = sub(p, closest);
                let r = norm(d);
                (r - radius, unit_or_up(d, r))
            }
            Shape::Box {
                center,
                half_extents,
            } => {
                let mut q = [0.0; D];
                let mut sign = [1.0; D];
                for k in 0..D {
                    let rel = p[k] - center[k];
                    sign[k] = if rel < 0.0 { -1.0 } else { 1.0 };
                    q[k] = rel.abs() - half_extents[k];
                }
                if open_top && D >= 2 {
                    // No top face: the box extends upwards without end, and only its
                    // bottom face bounds it along y. (Exact, so a 1-Lipschitz bound
                    // for the sweeps of `Collider::project_from`.)
                    q[1] = center[1] - half_extents[1] - p[1];
                    sign[1] = -1.0;
                }
                box_distance(q, sign)
            }
            Shape::Cylinder {
                base,
                radius,
                height,
            } => {
                // A 2D box in (radial distance, height) coordinates.
                let mut radial = [0.0; D];
                for k in (0..D).filter(|&k| k != 1) {
                    radial[k] = p[k] - base[k];
                }
                let rho = norm(radial);
                let mid = base[1] + 0.5 * height;
                let rel_y = p[1] - mid;
                let q_r = rho - radius;
                // Open: no top face, only the bottom bounds it along y (exact, as for
                // the box).
                let (q_y, sign_y) = if open_top {
                    (base[1] - p[1], -1.0)
                } else {
                    (
                        rel_y.abs() - 0.5 * height,
                        if rel_y < 0.0 { -1.0 } else { 1.0 },
                    )
                };
                let (dist, n2) = box_distance([q_r, q_y], [1.0, sign_y]);
                let mut n = unit_or_up(radial, rho).map(|c| c * n2[0]);
                n[1] = n2[1];
                if D == 2 {
                    // In 2D the "radial" axis is x with its sign.
                    n[0] = if radial[0] < 0.0 { -n2[0] } else { n2[0] };
                }
                (dist, n)
            }
        }
    }

    /// The topmost y of the shape, where an open container's rim is cut.
    #[inline]
    pub(super) fn top(&self) -> f32 {
        match *self {
            Shape::Plane { .. } => f32::INFINITY,
            Shape::Box {
                center,
                half_extents,
            } => center[1] + half_extents[1],
            Shape::Sphere { center, .. } => center[1],
            Shape::Capsule { a, b, .. } => 0.5 * (a[1] + b[1]),
            Shape::Cylinder { base, height, .. } => base[1] + height,
        }
    }

    pub(super) fn validate(&self, index: usize) -> Result<(), CoreError> {
        let bad = |field, value: f32, reason| {
            Err(CoreError::InvalidCollider {
                index,
                field,
                value: value.into(),
                reason,
            })
        };
        let finite = |field, v: &[f32]| match v.iter().find(|c| !c.is_finite()) {
            Some(c) => bad(field, *c, "must be finite"),
            None => Ok(()),
        };
        match self {
            Shape::Plane { point, normal } => {
                finite("point", point)?;
                finite("normal", normal)?;
                if !(norm(*normal) > 0.0) {
                    return bad("normal", 0.0, "must be non-zero");
                }
            }
            Shape::Box {
                center,
                half_extents,
            } => {
                finite("center", center)?;
                finite("half_extents", half_extents)?;
                if let Some(e) = half_extents.iter().find(|e| !(**e > 0.0)) {
                    return bad("half_extents", *e, "must be > 0");
                }
            }
            Shape::Sphere { center, radius } => {
                finite("center", center)?;
                if !(radius.is_finite() && *radius > 0.0) {
                    return bad("radius", *radius, "must be > 0 and finite");
                }
            }
            Shape::Capsule { a, b, radius } => {
                finite("a", a)?;
                finite("b", b)?;
                if !(radius.is_finite() && *radius > 0.0) {
                    return bad("radius", *radius, "must be > 0 and finite");
                }
            }
            Shape::Cylinder {
                base,
                radius,
                height,
            } => {
                finite("base", base)?;
                if !(radius.is_finite() && *radius > 0.0) {
                    return bad("radius", *radius, "must be > 0 and finite");
                }
                if !(height.is_finite() && *height > 0.0) {
                    return bad("height", *height, "must be > 0 and finite");
                }
            }
        }
        Ok(())
    }
}

#[inline]
fn box_distance<const D: usize>(q: [f32; D], sign: [f32; D]) -> (f32, [f32; D]) {
    let outside: [f32; D] = q.map(|c| c.max(0.0));
    let out_len = norm(outside);
    if out_len > 0.0 {
        let n = core::array::from_fn(|k| outside[k] / out_len * sign[k]);
        (out_len, n)
    } else {
        let mut axis = 0;
        for k in 1..D {
            if q[k] > q[axis] {
                axis = k;
            }
        }
        let mut n = [0.0; D];
        n[axis] = sign[axis];
        (q[axis], n)
    }
}
