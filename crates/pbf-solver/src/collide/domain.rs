//! The [`Domain`]: the axis-aligned box that no particle ever leaves, with walls on
//! its faces or periodic axes.

use super::bounds::Free;
use super::response::check_response;
use crate::CoreError;

/// The axis-aligned box that contains the simulation. Particles are clamped to it
/// (one particle radius inside), so none ever leaves. An axis made periodic
/// ([`with_periodic`](Self::with_periodic)) has no walls: a particle leaving through
/// one of its faces comes back through the other.
///
/// ```
/// use pbf_solver::Domain;
/// let d = Domain::new([0.0, 0.0, 0.0], [1.0, 2.0, 1.0])?;
/// assert_eq!(d.hi(), [1.0, 2.0, 1.0]);
/// assert!(Domain::new([0.0, 0.0], [0.0, 1.0]).is_err());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain<const D: usize> {
    lo: [f32; D],
    hi: [f32; D],
    friction: f32,
    restitution: f32,
    /// The condition of each face: `walls[axis][0]` at `lo`, `[1]` at `hi`.
    walls: [[Wall; 2]; D],
    /// The velocity of each face, `[axis][side]` as `walls`: zero but on no-slip
    /// faces, and along the face.
    velocities: [[[f32; D]; 2]; D],
    periodic: [bool; D],
}

/// What a wall of the domain does to the fluid's velocity along it.
///
/// ```
/// use pbf_solver::{Domain, Wall};
/// let d = Domain::new([0.0; 2], [1.0; 2])?.with_wall(Wall::NoSlip);
/// assert_eq!(d.walls(), [[Wall::NoSlip; 2]; 2]);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wall {
    /// The fluid slides along the wall freely (no shear stress): the wall only keeps
    /// it inside.
    #[default]
    FreeSlip,
    /// The fluid at the wall moves with the wall (at rest, or at the velocity
    /// [`Domain::with_wall_velocity`] gives a face): the wall's velocity is
    /// imposed on the fluid next to it through the physical viscosity
    /// ([`ParamsBuilder::viscosity`](crate::ParamsBuilder::viscosity)), as the
    /// velocity of a mirrored fluid beyond it (Morris et al. 1997). A solver with a
    /// no-slip wall needs a viscosity above 0.
    NoSlip,
}

impl<const D: usize> Domain<D> {
    /// The box `lo..hi` with frictionless, inelastic walls.
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] (index `usize::MAX`) when a bound is not finite or
    /// `lo >= hi` on some axis.
    ///
    /// ```
    /// assert!(pbf_solver::Domain::new([0.0; 3], [1.0; 3]).is_ok());
    /// ```
    pub fn new(lo: [f32; D], hi: [f32; D]) -> Result<Self, CoreError> {
        for a in 0..D {
            for (field, v) in [("domain.lo", lo[a]), ("domain.hi", hi[a])] {
                if !v.is_finite() {
                    return Err(CoreError::InvalidCollider {
                        index: usize::MAX,
                        field,
                        value: v.into(),
                        reason: "must be finite",
                    });
                }
            }
            if lo[a] >= hi[a] {
                return Err(CoreError::InvalidCollider {
                    index: usize::MAX,
                    field: "domain.hi",
                    value: hi[a].into(),
                    reason: "must be greater than domain.lo on every axis",
                });
            }
        }
        Ok(Self {
            lo,
            hi,
            friction: 0.0,
            restitution: 0.0,
            walls: [[Wall::FreeSlip; 2]; D],
            velocities: [[[0.0; D]; 2]; D],
            periodic: [false; D],
        })
    }

    /// Sets every face's [`Wall`].
    ///
    /// ```
    /// use pbf_solver::{Domain, Wall};
    /// let d = Domain::new([0.0; 3], [1.0; 3])?.with_wall(Wall::NoSlip);
    /// assert!(d.walls().iter().flatten().all(|w| *w == Wall::NoSlip));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_wall(self, wall: Wall) -> Self {
        self.with_walls([[wall; 2]; D])
    }

    /// Sets each face's [`Wall`]: `walls[axis][0]` for the face at `lo[axis]`,
    /// `walls[axis][1]` for the one at `hi[axis]`.
    ///
    /// ```
    /// use pbf_solver::{Domain, Wall};
    /// // A channel along x: no-slip floor and ceiling, free-slip ends.
    /// let walls = [[Wall::FreeSlip; 2], [Wall::NoSlip; 2]];
    /// let d = Domain::new([0.0; 2], [4.0, 1.0])?.with_walls(walls);
    /// assert_eq!(d.walls()[1][0], Wall::NoSlip);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_walls(mut self, walls: [[Wall; 2]; D]) -> Self {
        self.walls = walls;
        for (faces, velocities) in walls.iter().zip(&mut self.velocities) {
            for (wall, velocity) in faces.iter().zip(velocities) {
                if *wall == Wall::FreeSlip {
                    *velocity = [0.0; D];
                }
            }
        }
        self
    }

    /// Sets the velocity of a no-slip face (`side` 0 the face at `lo[axis]`, 1 the
    /// one at `hi[axis]`): the face stays where it is and slides along itself, as the
    /// plates of Couette flow or the lid of a driven cavity. The fluid next to it is
    /// dragged along through the physical viscosity (the mirrored fluid beyond the
    /// face moves so that the velocity at the face is the face's). The contact
    /// response ([`with_response`](Self::with_response)) stays that of a wall at
    /// rest. Making the face free-slip again ([`with_walls`](Self::with_walls))
    /// sets its velocity back to zero: a free-slip face exerts no shear.
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] (index `usize::MAX`, field
    /// `domain.wall_velocity`) when `axis` or `side` is out of range, the axis is
    /// periodic (it has no faces), the face is not no-slip, a component is not
    /// finite, or the velocity has a component along the face's normal; the domain
    /// is then as it was.
    ///
    /// ```
    /// use pbf_solver::{Domain, Wall};
    /// // Couette flow: a channel periodic in x, the top plate moving at 0.1 m/s.
    /// let d = Domain::new([0.0; 2], [1.0, 0.2])?
    ///     .with_walls([[Wall::FreeSlip; 2], [Wall::NoSlip; 2]])
    ///     .with_periodic([true, false])?
    ///     .with_wall_velocity(1, 1, [0.1, 0.0])?;
    /// assert_eq!(d.wall_velocity(1, 1), [0.1, 0.0]);
    /// assert!(d.with_wall_velocity(1, 1, [0.0, 0.1]).is_err()); // along the normal
    /// assert!(d.with_wall_velocity(0, 0, [0.0, 0.1]).is_err()); // periodic axis
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_wall_velocity(
        mut self,
        axis: usize,
        side: usize,
        velocity: [f32; D],
    ) -> Result<Self, CoreError> {
        let refuse = |value: f32, reason: &'static str| CoreError::InvalidCollider {
            index: usize::MAX,
            field: "domain.wall_velocity",
            value: value.into(),
            reason,
        };
        if axis >= D || side > 1 {
            return Err(refuse(
                axis.max(side) as f32,
                "axis must be below the dimension and side 0 (lo) or 1 (hi)",
            ));
        }
        if self.periodic[axis] {
            return Err(refuse(axis as f32, "a periodic axis has no faces to move"));
        }
        if self.walls[axis][side] != Wall::NoSlip {
            return Err(refuse(
                axis as f32,
                "only a no-slip face drags the fluid: make it Wall::NoSlip first",
            ));
        }
        if let Some(c) = velocity.iter().find(|c| !c.is_finite()) {
            return Err(refuse(*c, "every component must be finite"));
        }
        if velocity[axis] != 0.0 {
            return Err(refuse(
                velocity[axis],
                "a face slides along itself: the component along its normal must be 0",
            ));
        }
        self.velocities[axis][side] = velocity;
        Ok(self)
    }

    /// The velocity of a face (`side` 0 at `lo[axis]`, 1 at `hi[axis]`; see
    /// [`with_wall_velocity`](Self::with_wall_velocity)); zero for a face at rest.
    ///
    /// # Panics
    /// When `axis >= D` or `side > 1`.
    pub fn wall_velocity(&self, axis: usize, side: usize) -> [f32; D] {
        self.velocities[axis][side]
    }

    /// Whether some face moves.
    pub(crate) fn has_moving_wall(&self) -> bool {
        (0..D)
            .filter(|&a| !self.periodic[a])
            .any(|a| self.velocities[a].iter().flatten().any(|&c| c != 0.0))
    }

    /// Each face's [`Wall`] (`[axis][0]` at `lo`, `[axis][1]` at `hi`).
    pub fn walls(&self) -> [[Wall; 2]; D] {
        self.walls
    }

    /// Whether some face is [`Wall::NoSlip`] (a periodic axis has no faces: its
    /// walls' conditions are not read).
    pub fn has_no_slip(&self) -> bool {
        (0..D).any(|a| !self.periodic[a] && self.walls[a].contains(&Wall::NoSlip))
    }

    /// Sets the walls' friction (>= 0) and restitution (in [0, 1]).
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] naming `friction` or `restitution`.
    ///
    /// ```
    /// let d = pbf_solver::Domain::new([0.0; 2], [1.0; 2])?.with_response(0.3, 0.1)?;
    /// assert_eq!(d.response(), (0.3, 0.1));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_response(mut self, friction: f32, restitution: f32) -> Result<Self, CoreError> {
        check_response(usize::MAX, friction, restitution)?;
        self.friction = friction;
        self.restitution = restitution;
        Ok(self)
    }

    /// Makes the axes `periodic[a]` periodic: a particle leaving through one face of
    /// such an axis comes back through the opposite one, and particles near one face
    /// are the neighbours of those near the other (minimum image). A periodic axis has
    /// no walls: no collision with its faces, no wall density, no contact response
    /// (its faces' [`Wall`]s and velocities are not read).
    /// The other axes keep their walls.
    ///
    /// A periodic axis must be at least three kernel radii long:
    /// [`Solver::new`](crate::Solver::new) checks it, where h is known. The coarse
    /// density correction ([`ParamsBuilder::coarse_correction`](crate::ParamsBuilder::coarse_correction))
    /// wraps around a periodic axis too: its grid divides the period into whole cells
    /// at least `2 h` wide. Without it the Jacobi passes alone hold the fluid, and
    /// they move information about one kernel radius a pass: fluid many kernel radii
    /// deep under gravity then needs
    /// [`Iterations::Adaptive`](crate::Iterations::Adaptive) (a few fixed iterations
    /// leave it compressed, and a deep enough column collapses).
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] (index `usize::MAX`, field `domain.periodic`)
    /// when the period `hi - lo` of a periodic axis overflows `f32`; the domain is
    /// then as it was.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// // A channel periodic in x, with walls at the bottom and the top.
    /// let domain = Domain::new([0.0, 0.0], [1.0, 0.5])?.with_periodic([true, false])?;
    /// assert_eq!(domain.periodic(), [true, false]);
    /// let params = Params::<2>::builder(0.02).build()?;
    /// let mut solver = Solver::new(params, domain)?;
    /// // A particle moving right through the face x = 1 comes back at x = 0.
    /// solver.add_particles(&[[0.995, 0.25]], Some(&[[1.0, 0.0]]))?;
    /// for _ in 0..5 {
    ///     solver.step()?;
    /// }
    /// let x = solver.positions()[0][0];
    /// assert!((0.0..0.1).contains(&x), "{x}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_periodic(mut self, periodic: [bool; D]) -> Result<Self, CoreError> {
        if let Err(e) = pbf_grid::Periodic::new(self.lo, self.hi, periodic) {
            let value = match e {
                pbf_grid::GridError::InvalidPeriod { value, .. } => value,
                _ => f32::NAN,
            };
            return Err(CoreError::InvalidCollider {
                index: usize::MAX,
                field: "domain.periodic",
                value: value.into(),
                reason: "the period hi - lo of a periodic axis must be a finite f32",
            });
        }
        self.periodic = periodic;
        Ok(self)
    }

    /// Which axes are periodic (see [`with_periodic`](Self::with_periodic)).
    ///
    /// ```
    /// assert_eq!(pbf_solver::Domain::new([0.0; 2], [1.0; 2])?.periodic(), [false; 2]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn periodic(&self) -> [bool; D] {
        self.periodic
    }

    /// The periodic axes as the neighbour search takes them.
    pub(crate) fn periodicity(&self) -> pbf_grid::Periodic {
        pbf_grid::Periodic::new(self.lo, self.hi, self.periodic)
            .unwrap_or_else(|e| unreachable!("{e}: checked by with_periodic"))
    }

    /// Whether at least two axes have walls, so that faces meet at edges.
    #[inline]
    pub(crate) fn has_edges(&self) -> bool {
        self.periodic.iter().filter(|&&p| !p).count() >= 2
    }

    /// The walls' lower corner: `lo`, with `-inf` on the periodic axes (no wall).
    #[inline]
    pub(crate) fn walls_lo(&self) -> [f32; D] {
        core::array::from_fn(|a| {
            if self.periodic[a] {
                f32::NEG_INFINITY
            } else {
                self.lo[a]
            }
        })
    }

    /// The walls' upper corner: `hi`, with `+inf` on the periodic axes (no wall).
    #[inline]
    pub(crate) fn walls_hi(&self) -> [f32; D] {
        core::array::from_fn(|a| {
            if self.periodic[a] {
                f32::INFINITY
            } else {
                self.hi[a]
            }
        })
    }

    /// The lower corner.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Domain::new([0.0; 2], [1.0; 2])?.lo(), [0.0; 2]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn lo(&self) -> [f32; D] {
        self.lo
    }

    /// The upper corner.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Domain::new([0.0; 2], [1.0; 2])?.hi(), [1.0; 2]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn hi(&self) -> [f32; D] {
        self.hi
    }

    /// `(friction, restitution)` of the walls.
    ///
    /// ```
    /// assert_eq!(pbf_solver::Domain::new([0.0; 2], [1.0; 2])?.response(), (0.0, 0.0));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn response(&self) -> (f32, f32) {
        (self.friction, self.restitution)
    }

    /// Whether `p` lies inside the box (bounds included).
    ///
    /// ```
    /// let d = pbf_solver::Domain::new([0.0; 2], [1.0; 2])?;
    /// assert!(d.contains([0.5, 1.0]) && !d.contains([0.5, 1.5]));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn contains(&self, p: [f32; D]) -> bool {
        (0..D).all(|a| p[a] >= self.lo[a] && p[a] <= self.hi[a])
    }

    /// Whether the box `lo..=hi` lies inside the domain shrunk by `margin`, where
    /// [`clamp`](Self::clamp) leaves every point as it is.
    #[inline]
    pub(crate) fn holds_box(&self, lo: [f32; D], hi: [f32; D], margin: f32) -> bool {
        // The domain is a free box, as a box container's cavity is.
        Free::Box {
            lo: self.walls_lo(),
            hi: self.walls_hi(),
        }
        .holds_box(lo, hi, margin)
    }

    /// Clamps `p` to the box shrunk by `margin` (to its centre where the box is
    /// thinner than `2 margin`), on the axes with walls.
    #[inline]
    pub(crate) fn clamp(&self, p: &mut [f32; D], margin: f32) {
        for a in (0..D).filter(|&a| !self.periodic[a]) {
            let (lo, hi) = (self.lo[a] + margin, self.hi[a] - margin);
            p[a] = if lo <= hi {
                p[a].clamp(lo, hi)
            } else {
                0.5 * (self.lo[a] + self.hi[a])
            };
        }
    }

    /// Walls the point touches within `margin`, as (outward normal into the fluid):
    /// none on a periodic axis.
    #[inline]
    pub(crate) fn contacts(&self, p: [f32; D], margin: f32, mut f: impl FnMut([f32; D], f32)) {
        for a in (0..D).filter(|&a| !self.periodic[a]) {
            let d = p[a] - self.lo[a];
            if d <= margin {
                let mut n = [0.0; D];
                n[a] = 1.0;
                f(n, d);
            }
            let d = self.hi[a] - p[a];
            if d <= margin {
                let mut n = [0.0; D];
                n[a] = -1.0;
                f(n, d);
            }
        }
    }
}
