//! [`Collider`]: a shape, solid or hollow ([`ColliderKind`]), with friction and
//! restitution; its signed distance, normal and validation.

use super::bounds::Bounds;
use super::response::check_response;
use super::shape::Shape;
use crate::{CoreError, Wall};

/// Whether a collider is a solid body or a container whose walls hold fluid inside.
///
/// ```
/// use pbf_solver::ColliderKind;
/// let glass = ColliderKind::Container { wall_thickness: 0.02, open_top: true };
/// assert_ne!(glass, ColliderKind::Solid);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColliderKind {
    /// The inside of the shape is solid.
    Solid,
    /// A hollow shell of the given wall thickness around the shape's surface. With
    /// `open_top`, boxes and cylinders lose their top face (a tank, a glass), and
    /// spheres and capsules are cut at their middle (a bowl).
    Container {
        /// The wall's thickness (> 0). Any thickness holds the fluid: the solver never
        /// moves a particle through a wall, however far it travels in a step (see
        /// [`Collider`]).
        wall_thickness: f32,
        /// Whether the top is open.
        open_top: bool,
    },
}

/// A static collider: a shape, solid or hollow, with friction and restitution.
///
/// Particles never cross its solid part. The solver moves each particle from a
/// position outside the solid (where it was at the start of the step, or after the
/// last constraint iteration) to a new one; the collider sweeps that segment against
/// its signed distance (sphere tracing, exact because every distance here is
/// 1-Lipschitz). Where the segment enters the solid, the particle stops on the side it
/// came from and slides: its new position is projected onto the plane tangent to the
/// surface at the contact, one margin off it, and swept again. So a particle that
/// would move through a thin wall, or many wall thicknesses in one step, stays on its
/// side; only a particle that starts inside the solid (placed there by the user) is
/// pushed out through the nearest surface.
///
/// ```
/// use pbf_solver::{Collider, ColliderKind, Shape};
/// let glass = Collider::new(
///     Shape::Cylinder { base: [0.0, 0.0, 0.0], radius: 0.3, height: 0.6 },
///     ColliderKind::Container { wall_thickness: 0.05, open_top: true },
/// )?;
/// assert!(glass.distance([0.0, 0.3, 0.0]) > 0.0); // inside the glass is free
/// assert!(glass.distance([0.3, 0.3, 0.0]) < 0.0); // in the wall
/// assert!(glass.distance([0.3, 0.7, 0.0]) > 0.0); // above the rim
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collider<const D: usize> {
    pub(super) shape: Shape<D>,
    pub(super) kind: ColliderKind,
    friction: f32,
    restitution: f32,
    /// The condition at its surface for the fluid's velocity along it.
    wall: Wall,
    /// Where the distance is at least a given radius without evaluating it.
    pub(super) bounds: Bounds<D>,
}

impl<const D: usize> Collider<D> {
    /// A frictionless, inelastic collider.
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] for non-finite or degenerate sizes (index 0; the
    /// solver reports the collider's own index when it is added).
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let bad = Collider::new(Shape::Sphere { center: [0.0; 2], radius: -1.0 }, ColliderKind::Solid);
    /// assert!(bad.is_err());
    /// ```
    pub fn new(shape: Shape<D>, kind: ColliderKind) -> Result<Self, CoreError> {
        let c = Self {
            shape,
            kind,
            friction: 0.0,
            restitution: 0.0,
            wall: Wall::FreeSlip,
            bounds: Bounds::new(&shape, kind),
        };
        c.validate(0)?;
        Ok(c)
    }

    /// Sets friction (>= 0) and restitution (in [0, 1]).
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] naming the field.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let c = Collider::new(Shape::Sphere { center: [0.0; 3], radius: 1.0 }, ColliderKind::Solid)?
    ///     .with_response(0.5, 0.2)?;
    /// assert_eq!(c.response(), (0.5, 0.2));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_response(mut self, friction: f32, restitution: f32) -> Result<Self, CoreError> {
        check_response(0, friction, restitution)?;
        self.friction = friction;
        self.restitution = restitution;
        Ok(self)
    }

    /// Sets the [`Wall`] condition of its surface: free-slip (the default) or
    /// no-slip, the fluid next to it held at rest through the physical viscosity
    /// (the solver then needs a viscosity above 0).
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape, Wall};
    /// let s = Shape::Sphere { center: [0.0; 2], radius: 1.0 };
    /// let c = Collider::new(s, ColliderKind::Solid)?.with_wall(Wall::NoSlip);
    /// assert_eq!(c.wall(), Wall::NoSlip);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_wall(mut self, wall: Wall) -> Self {
        self.wall = wall;
        self
    }

    /// The [`Wall`] condition of its surface.
    pub fn wall(&self) -> Wall {
        self.wall
    }

    /// The shape.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let s = Shape::Sphere { center: [0.0; 2], radius: 1.0 };
    /// assert_eq!(Collider::new(s, ColliderKind::Solid)?.shape(), &s);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn shape(&self) -> &Shape<D> {
        &self.shape
    }

    /// Solid or container.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let s = Shape::Sphere { center: [0.0; 2], radius: 1.0 };
    /// assert_eq!(Collider::new(s, ColliderKind::Solid)?.kind(), ColliderKind::Solid);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn kind(&self) -> ColliderKind {
        self.kind
    }

    /// `(friction, restitution)`.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let s = Shape::Sphere { center: [0.0; 2], radius: 1.0 };
    /// assert_eq!(Collider::new(s, ColliderKind::Solid)?.response(), (0.0, 0.0));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn response(&self) -> (f32, f32) {
        (self.friction, self.restitution)
    }

    /// The signed distance from `p` to the solid part (negative inside the solid).
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Shape};
    /// let ball = Collider::new(Shape::Sphere { center: [0.0; 3], radius: 1.0 }, ColliderKind::Solid)?;
    /// assert_eq!(ball.distance([0.0, 0.0, 0.5]), -0.5);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn distance(&self, p: [f32; D]) -> f32 {
        self.distance_and_normal(p).0
    }

    /// Signed distance to the solid part and the unit normal pointing out of it.
    #[inline]
    pub(crate) fn distance_and_normal(&self, p: [f32; D]) -> (f32, [f32; D]) {
        match self.kind {
            ColliderKind::Solid => self.shape.distance_and_normal(p, false),
            ColliderKind::Container {
                wall_thickness,
                open_top,
            } => {
                let (d, n) = self.shape.distance_and_normal(p, open_top);
                let half = 0.5 * wall_thickness;
                let s = if d < 0.0 { -1.0 } else { 1.0 };
                let shell = (d.abs() - half, n.map(|c| c * s));
                // Open containers are cut at their rim: boxes and cylinders at the top
                // face (their shell was built without it), bowls at their middle.
                if open_top {
                    let above = p[1] - self.shape.top();
                    if above > shell.0 {
                        let mut up = [0.0; D];
                        up[1] = 1.0;
                        return (above, up);
                    }
                }
                shell
            }
        }
    }

    pub(crate) fn validate(&self, index: usize) -> Result<(), CoreError> {
        self.shape.validate(index)?;
        check_response(index, self.friction, self.restitution)?;
        if let ColliderKind::Container { wall_thickness, .. } = self.kind {
            if !(wall_thickness.is_finite() && wall_thickness > 0.0) {
                return Err(CoreError::InvalidCollider {
                    index,
                    field: "wall_thickness",
                    value: wall_thickness.into(),
                    reason: "must be > 0 and finite",
                });
            }
            if matches!(self.shape, Shape::Plane { .. }) {
                return Err(CoreError::InvalidCollider {
                    index,
                    field: "kind",
                    value: f64::NAN,
                    reason: "a plane cannot be a container",
                });
            }
        }
        Ok(())
    }

    /// Whether the distance at `p` is at least `r`, shown by the collider's bounds
    /// alone (false when they cannot show it, and for NaN): a cheap test before
    /// [`distance_and_normal`](Self::distance_and_normal) for the many particles far
    /// from a collider.
    #[inline(always)]
    pub(crate) fn clear_of(&self, p: [f32; D], r: f32) -> bool {
        self.bounds.clear_of(p, r)
    }

    /// [`clear_of`](Self::clear_of) for every point of the box `lo..=hi`.
    #[inline(always)]
    pub(crate) fn clear_of_box(&self, lo: [f32; D], hi: [f32; D], r: f32) -> bool {
        self.bounds.clear_box(lo, hi, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_normal<const D: usize>(c: &Collider<D>, p: [f32; D]) -> [f32; D] {
        let e = 1e-3;
        core::array::from_fn(|k| {
            let (mut a, mut b) = (p, p);
            a[k] += e;
            b[k] -= e;
            (c.distance(a) - c.distance(b)) / (2.0 * e)
        })
    }

    #[test]
    fn normals_are_the_gradient_of_the_distance() {
        let shapes: Vec<Shape<3>> = vec![
            Shape::Plane {
                point: [0.0, 0.1, 0.0],
                normal: [0.0, 2.0, 0.0],
            },
            Shape::Box {
                center: [0.0; 3],
                half_extents: [0.5, 0.3, 0.4],
            },
            Shape::Sphere {
                center: [0.1, 0.0, 0.0],
                radius: 0.4,
            },
            Shape::Capsule {
                a: [0.0; 3],
                b: [0.5, 0.2, 0.0],
                radius: 0.2,
            },
            Shape::Cylinder {
                base: [0.0; 3],
                radius: 0.4,
                height: 0.6,
            },
        ];
        let points = [
            [0.9, 0.35, 0.1],
            [0.05, 0.1, 0.02],
            [-0.7, -0.2, 0.3],
            [0.2, 0.8, -0.1],
        ];
        for shape in shapes {
            for kind in [
                ColliderKind::Solid,
                ColliderKind::Container {
                    wall_thickness: 0.1,
                    open_top: false,
                },
            ] {
                if matches!(shape, Shape::Plane { .. }) && kind != ColliderKind::Solid {
                    continue;
                }
                let c = Collider::new(shape, kind).unwrap();
                for p in points {
                    let (_, n) = c.distance_and_normal(p);
                    let g = numeric_normal(&c, p);
                    for k in 0..3 {
                        assert!(
                            (n[k] - g[k]).abs() < 2e-2,
                            "{shape:?} {kind:?} at {p:?}: {n:?} vs {g:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn open_glass_is_free_inside_and_above() {
        let glass = Collider::new(
            Shape::Cylinder {
                base: [0.0, 0.0, 0.0],
                radius: 0.5,
                height: 1.0,
            },
            ColliderKind::Container {
                wall_thickness: 0.1,
                open_top: true,
            },
        )
        .unwrap();
        for y in [0.1, 0.5, 0.95, 1.0, 1.2] {
            assert!(glass.distance([0.0, y, 0.0]) > 0.0, "inside at y = {y}");
        }
        assert!(glass.distance([0.5, 0.5, 0.0]) < 0.0); // side wall
        assert!(glass.distance([0.5, 1.05, 0.0]) > 0.0); // above the rim of the wall
        assert!(glass.distance([0.5, 0.95, 0.0]) < 0.0); // the wall just below the rim
        assert!(glass.distance([0.0, 0.0, 0.0]) < 0.0); // bottom
        assert!(glass.distance([0.0, -0.2, 0.0]) > 0.0); // below
        let closed = Collider::new(
            Shape::Cylinder {
                base: [0.0, 0.0, 0.0],
                radius: 0.5,
                height: 1.0,
            },
            ColliderKind::Container {
                wall_thickness: 0.1,
                open_top: false,
            },
        )
        .unwrap();
        assert!(closed.distance([0.0, 1.0, 0.0]) < 0.0); // lid
        let bowl = Collider::new(
            Shape::Sphere {
                center: [0.0, 0.0],
                radius: 1.0,
            },
            ColliderKind::Container {
                wall_thickness: 0.1,
                open_top: true,
            },
        )
        .unwrap();
        assert!(bowl.distance([0.0, -1.0]) < 0.0);
        assert!(bowl.distance([0.0, 1.0]) > 0.0);
    }

    #[test]
    fn degenerate_colliders_are_rejected() {
        let bad = |s: Shape<3>| Collider::new(s, ColliderKind::Solid).is_err();
        assert!(bad(Shape::Plane {
            point: [0.0; 3],
            normal: [0.0; 3]
        }));
        assert!(bad(Shape::Box {
            center: [0.0; 3],
            half_extents: [1.0, 0.0, 1.0]
        }));
        assert!(bad(Shape::Sphere {
            center: [f32::NAN, 0.0, 0.0],
            radius: 1.0
        }));
        assert!(bad(Shape::Capsule {
            a: [0.0; 3],
            b: [1.0; 3],
            radius: f32::INFINITY
        }));
        assert!(bad(Shape::Cylinder {
            base: [0.0; 3],
            radius: 1.0,
            height: -1.0
        }));
        let s = Shape::Sphere {
            center: [0.0; 3],
            radius: 1.0,
        };
        assert!(
            Collider::new(
                s,
                ColliderKind::Container {
                    wall_thickness: 0.0,
                    open_top: false
                }
            )
            .is_err()
        );
        assert!(
            Collider::new(s, ColliderKind::Solid)
                .unwrap()
                .with_response(-1.0, 0.0)
                .is_err()
        );
        assert!(
            Collider::new(s, ColliderKind::Solid)
                .unwrap()
                .with_response(0.0, 1.5)
                .is_err()
        );
        let plane = Shape::Plane {
            point: [0.0; 3],
            normal: [0.0, 1.0, 0.0],
        };
        assert!(
            Collider::new(
                plane,
                ColliderKind::Container {
                    wall_thickness: 1.0,
                    open_top: true
                }
            )
            .is_err()
        );
    }
}
