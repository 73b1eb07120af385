//! Built-in scenes, as library functions: each returns a ready [`Solver`] with about
//! the requested number of particles (the fluid blocks are whole lattices, so the
//! count is rounded).
//!
//! All scenes use a particle spacing of 0.05 (h = 0.1, rest density 1000, g = 9.81),
//! so more particles make a larger scene, as in the dam-break literature.

use crate::{
    Collider, ColliderKind, CoreError, Domain, Iterations, Params, Shape, Solver, StepDiagnostics,
};

/// The particle spacing of every built-in scene.
pub const SPACING: f32 = 0.05;

/// A solver in 2D or 3D, for programs that pick the scene at run time.
///
/// ```
/// let mut s = pbf_solver::scenes::build("dam-break-2d", 500)?;
/// assert_eq!(s.dimension(), 2);
/// s.step()?;
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone)]
// The 3D solver's few hundred bytes more (one more axis of each buffer's handle) are
// not worth a box on every access: a program holds one or two of these.
#[allow(clippy::large_enum_variant)]
pub enum AnySolver {
    /// A 2D solver.
    Two(Solver<2>),
    /// A 3D solver.
    Three(Solver<3>),
}

impl AnySolver {
    /// 2 or 3.
    ///
    /// ```
    /// assert_eq!(pbf_solver::scenes::build("dam-break", 1000)?.dimension(), 3);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn dimension(&self) -> usize {
        match self {
            AnySolver::Two(_) => 2,
            AnySolver::Three(_) => 3,
        }
    }

    /// Advances one step.
    ///
    /// # Errors
    /// As [`Solver::step`].
    ///
    /// ```
    /// let mut s = pbf_solver::scenes::build("block-at-rest-2d", 100)?;
    /// assert_eq!(s.step()?.step, 1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn step(&mut self) -> Result<StepDiagnostics, CoreError> {
        match self {
            AnySolver::Two(s) => s.step(),
            AnySolver::Three(s) => s.step(),
        }
    }

    /// Switches the implementation of the neighbour passes ([`Solver::set_backend`]).
    ///
    /// ```
    /// let mut s = pbf_solver::scenes::build("dam-break-2d", 500)?;
    /// s.set_backend(pbf_solver::Backend::Lanes8);
    /// s.step()?;
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn set_backend(&mut self, backend: crate::Backend) {
        match self {
            AnySolver::Two(s) => s.set_backend(backend),
            AnySolver::Three(s) => s.set_backend(backend),
        }
    }

    /// Number of particles.
    ///
    /// ```
    /// assert!(pbf_solver::scenes::build("dam-break", 1000)?.len() > 900);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        match self {
            AnySolver::Two(s) => s.len(),
            AnySolver::Three(s) => s.len(),
        }
    }

    /// Whether there are no particles.
    ///
    /// ```
    /// assert!(!pbf_solver::scenes::build("dam-break", 1000)?.is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Simulated time.
    ///
    /// ```
    /// assert_eq!(pbf_solver::scenes::build("dam-break", 1000)?.time(), 0.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn time(&self) -> f64 {
        match self {
            AnySolver::Two(s) => s.time(),
            AnySolver::Three(s) => s.time(),
        }
    }
}

/// A built-in scene's name, dimension and description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SceneInfo {
    /// The name [`build`] takes.
    pub name: &'static str,
    /// 2 or 3.
    pub dimension: usize,
    /// One line.
    pub description: &'static str,
}

/// Every built-in scene.
///
/// ```
/// assert!(pbf_solver::scenes::SCENES.iter().any(|s| s.name == "dam-break"));
/// ```
pub const SCENES: &[SceneInfo] = &[
    SceneInfo {
        name: "dam-break",
        dimension: 3,
        description: "a cube of water collapses along a tank 4x its width",
    },
    SceneInfo {
        name: "dam-break-2d",
        dimension: 2,
        description: "a column of width a and height 2a collapses along a tank (Martin & Moyce)",
    },
    SceneInfo {
        name: "double-dam-break",
        dimension: 3,
        description: "two blocks in opposite corners collapse and collide",
    },
    SceneInfo {
        name: "block-at-rest",
        dimension: 3,
        description: "a block filling the bottom of a box settles at rest",
    },
    SceneInfo {
        name: "block-at-rest-2d",
        dimension: 2,
        description: "the 2D block at rest",
    },
    SceneInfo {
        name: "glass",
        dimension: 3,
        description: "a block of water dropped into a glass (hollow cylinder, open top)",
    },
    SceneInfo {
        name: "glass-2d",
        dimension: 2,
        description: "a block of water dropped into a 2D cup",
    },
    SceneInfo {
        name: "poiseuille-2d",
        dimension: 2,
        description: "a viscous channel, periodic along x, driven by a body force between no-slip plates",
    },
    SceneInfo {
        name: "couette-2d",
        dimension: 2,
        description: "a viscous channel, periodic along x, dragged by its sliding top plate",
    },
];

/// Builds the scene called `name` with about `particles` particles.
///
/// # Errors
/// [`CoreError::InvalidParameter`] (`scene`) for an unknown name (the message lists
/// none; see [`SCENES`]) or a particle count below 8.
///
/// ```
/// assert!(pbf_solver::scenes::build("no-such-scene", 100).is_err());
/// ```
pub fn build(name: &str, particles: usize) -> Result<AnySolver, CoreError> {
    if particles < 8 {
        return Err(CoreError::InvalidParameter {
            field: "particles",
            value: particles as f64,
            reason: "a scene needs at least 8 particles",
        });
    }
    Ok(match name {
        "dam-break" => AnySolver::Three(dam_break_3d(particles)?),
        "dam-break-2d" => AnySolver::Two(dam_break_2d(particles)?),
        "double-dam-break" => AnySolver::Three(double_dam_break_3d(particles)?),
        "block-at-rest" => AnySolver::Three(block_at_rest::<3>(particles)?),
        "block-at-rest-2d" => AnySolver::Two(block_at_rest::<2>(particles)?),
        "glass" => AnySolver::Three(glass_3d(particles)?),
        "glass-2d" => AnySolver::Two(glass_2d(particles)?),
        "poiseuille-2d" => AnySolver::Two(poiseuille_2d(particles)?),
        "couette-2d" => AnySolver::Two(couette_2d(particles)?),
        _ => {
            return Err(CoreError::InvalidParameter {
                field: "scene",
                value: f64::NAN,
                reason: "unknown scene name (see pbf_solver::scenes::SCENES)",
            });
        }
    })
}

/// The time step of a built-in scene whose fluid collapses or falls from `height`:
/// 1/120 s, or less where the free-fall speed `sqrt(2 |g| height)` would carry a
/// particle more than half a kernel radius `h` in one step (a Courant number of 0.5).
///
/// The scenes keep the spacing and grow with the particle count, so a larger scene
/// is a taller one with faster flow; with a fixed step the largest ones would move
/// particles by more than `h` a step, which no neighbour-based solver follows (the 2D
/// dam break with 100k particles at 1/120 s reached 4000 m/s and 1400% density error).
/// With this bound every size runs at the same Courant number.
///
/// ```
/// use pbf_solver::scenes::scene_time_step;
/// assert_eq!(scene_time_step(1.0, 0.1, 9.81), 1.0 / 120.0);
/// let dt = scene_time_step(22.0, 0.1, 9.81);
/// assert!((dt * (2.0f32 * 9.81 * 22.0).sqrt() - 0.05).abs() < 1e-6);
/// ```
pub fn scene_time_step(height: f32, kernel_radius: f32, gravity: f32) -> f32 {
    let speed = (2.0 * gravity.abs() * height.max(0.0)).sqrt();
    let courant = 0.5 * kernel_radius / speed;
    if courant.is_finite() {
        courant.min(1.0 / 120.0)
    } else {
        1.0 / 120.0
    }
}

/// Default parameters at [`SPACING`] with the time step of [`scene_time_step`] for a
/// fall from `height`.
fn scene_params<const D: usize>(height: f32) -> Result<Params<D>, CoreError> {
    let defaults = Params::<D>::builder(SPACING).build()?;
    let g = defaults.gravity().iter().map(|c| c * c).sum::<f32>().sqrt();
    defaults
        .to_builder()
        .time_step(scene_time_step(height, defaults.kernel_radius(), g))
        .build()
}

fn side(particles: usize, dimension: u32) -> usize {
    ((particles as f64).powf(1.0 / f64::from(dimension)).round() as usize).max(2)
}

/// A cube of `n^3 ~ particles` in the corner of an open tank of `4a x 1.5a x a`
/// (a = n spacings), the scene of the peer comparison in BENCHMARKS.md.
///
/// ```
/// let s = pbf_solver::scenes::dam_break_3d(1000)?;
/// assert_eq!(s.len(), 1000);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn dam_break_3d(particles: usize) -> Result<Solver<3>, CoreError> {
    let n = side(particles, 3);
    let a = n as f32 * SPACING;
    let params = scene_params::<3>(a)?;
    let mut s = Solver::new(params, Domain::new([0.0; 3], [4.0 * a, 1.5 * a, a])?)?;
    s.add_block([0.0; 3], [a, a, a], [0.0; 3])?;
    Ok(s)
}

/// A column of width `a` and height `2a` (`2 n^2 ~ particles`) against the left wall
/// of a tank `5a` long and `2.5a` high: Martin & Moyce's collapse.
///
/// ```
/// let s = pbf_solver::scenes::dam_break_2d(800)?;
/// assert_eq!(s.len(), 800);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn dam_break_2d(particles: usize) -> Result<Solver<2>, CoreError> {
    let n = side(particles / 2, 2);
    let a = n as f32 * SPACING;
    let params = scene_params::<2>(2.0 * a)?;
    let mut s = Solver::new(params, Domain::new([0.0; 2], [5.0 * a, 2.5 * a])?)?;
    s.add_block([0.0; 2], [a, 2.0 * a], [0.0; 2])?;
    Ok(s)
}

/// Two blocks of `a x 1.5a x a/2`... precisely: two `n x n x n/2` blocks in opposite
/// corners of a `3a x 1.5a x a` tank.
///
/// ```
/// let s = pbf_solver::scenes::double_dam_break_3d(2000)?;
/// assert!(s.len() > 1500);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn double_dam_break_3d(particles: usize) -> Result<Solver<3>, CoreError> {
    let n = side(particles, 3);
    let a = n as f32 * SPACING;
    let half = (n / 2).max(1) as f32 * SPACING;
    let params = scene_params::<3>(a)?;
    let mut s = Solver::new(params, Domain::new([0.0; 3], [3.0 * a, 1.5 * a, a])?)?;
    s.add_block([0.0; 3], [a, a, half], [0.0; 3])?;
    s.add_block([2.0 * a, 0.0, a - half], [3.0 * a, a, a], [0.0; 3])?;
    Ok(s)
}

/// A block of `n^D ~ particles` that exactly fills the bottom of a box `n` spacings
/// wide and `2n` high, and settles there. It steps at 1/120 s with adaptive
/// iterations (0.3% average density error, 2 to 50 iterations), the settings under
/// which the rest test holds the density error below 1% on average and 3% at most.
///
/// ```
/// let s = pbf_solver::scenes::block_at_rest::<2>(100)?;
/// assert_eq!(s.len(), 100);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn block_at_rest<const D: usize>(particles: usize) -> Result<Solver<D>, CoreError> {
    let n = side(particles, D as u32);
    let a = n as f32 * SPACING;
    let params = Params::<D>::builder(SPACING)
        .time_step(1.0 / 120.0)
        .iterations(Iterations::Adaptive {
            max_density_error_percent: 0.3,
            min: 2,
            max: 50,
        })
        .build()?;
    let mut hi = [a; D];
    hi[1] = 2.0 * a;
    let mut s = Solver::new(params, Domain::new([0.0; D], hi)?)?;
    s.add_block([0.0; D], [a; D], [0.0; D])?;
    Ok(s)
}

/// A glass (hollow cylinder with an open top, walls four spacings thick) standing in
/// the domain, and a block of `~particles` dropped into it from above.
///
/// ```
/// let s = pbf_solver::scenes::glass_3d(1000)?;
/// assert_eq!(s.colliders().len(), 1);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn glass_3d(particles: usize) -> Result<Solver<3>, CoreError> {
    // The block is n x 2n x n; the glass holds it with room to spare.
    let n = side(particles / 2, 3);
    let b = n as f32 * SPACING;
    let radius = 0.75 * b + 3.0 * SPACING;
    let wall = 4.0 * SPACING;
    let height = 2.5 * b;
    let width = 2.0 * (radius + wall) + 2.0 * SPACING;
    let params = scene_params::<3>(height + b)?;
    let domain = Domain::new([0.0; 3], [width, height + 2.5 * b, width])?;
    let mut s = Solver::new(params, domain)?;
    let c = 0.5 * width;
    s.add_collider(Collider::new(
        Shape::Cylinder {
            base: [c, 0.5 * wall, c],
            radius: radius + 0.5 * wall,
            height,
        },
        ColliderKind::Container {
            wall_thickness: wall,
            open_top: true,
        },
    )?)?;
    let lo = [c - 0.5 * b, height - b, c - 0.5 * b];
    s.add_block(lo, [c + 0.5 * b, height + b, c + 0.5 * b], [0.0; 3])?;
    Ok(s)
}

/// The 2D cup: an open hollow box, and a block of `~particles` dropped into it.
///
/// ```
/// let s = pbf_solver::scenes::glass_2d(500)?;
/// assert!(s.len() > 400);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn glass_2d(particles: usize) -> Result<Solver<2>, CoreError> {
    let n = side(particles / 2, 2);
    let b = n as f32 * SPACING;
    let half_width = 0.75 * b + 3.0 * SPACING;
    let wall = 4.0 * SPACING;
    let height = 2.5 * b;
    let width = 2.0 * (half_width + wall) + 2.0 * SPACING;
    let params = scene_params::<2>(height + b)?;
    let domain = Domain::new([0.0; 2], [width, height + 2.5 * b])?;
    let mut s = Solver::new(params, domain)?;
    let c = 0.5 * width;
    s.add_collider(Collider::new(
        Shape::Box {
            center: [c, 0.5 * wall + 0.5 * height],
            half_extents: [half_width + 0.5 * wall, 0.5 * height],
        },
        ColliderKind::Container {
            wall_thickness: wall,
            open_top: true,
        },
    )?)?;
    s.add_block(
        [c - 0.5 * b, height - b],
        [c + 0.5 * b, height + b],
        [0.0; 2],
    )?;
    Ok(s)
}

/// The time step of the viscous channels: the solve is implicit, so the step follows
/// the flow, not the viscosity.
const CHANNEL_TIME_STEP: f32 = 1.0 / 60.0;

/// The rows across a channel four times as long as it is high of about `particles`
/// particles (at least 8, so that the channel is three kernel radii long).
fn channel_rows(particles: usize) -> usize {
    side(particles / 4, 2).max(8)
}

/// Plane Poiseuille flow ([`flows::Poiseuille`](crate::flows::Poiseuille)) at
/// Reynolds number 1, peak 0.02 m/s: `4 n^2 ~ particles` at rest in a channel
/// `4 H` long between no-slip plates, driven by a body force along x. It settles
/// to the parabola in about `0.6 H^2 / nu`.
///
/// ```
/// let s = pbf_solver::scenes::poiseuille_2d(1600)?;
/// assert_eq!(s.len(), 1600);
/// assert_eq!(s.domain().periodic(), [true, false]);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn poiseuille_2d(particles: usize) -> Result<Solver<2>, CoreError> {
    let rows = channel_rows(particles);
    crate::flows::Poiseuille::new(rows, 1.0, 0.02, CHANNEL_TIME_STEP)
        .channel(crate::Backend::Lanes, 4 * rows)
}

/// Couette flow starting up ([`flows::Couette`](crate::flows::Couette)) at Reynolds
/// number 1: `4 n^2 ~ particles` at rest in a channel `4 H` long whose top plate
/// slides at 0.02 m/s. The velocity diffuses down to the line `U y / H` over about
/// `0.5 H^2 / nu`.
///
/// ```
/// let s = pbf_solver::scenes::couette_2d(1600)?;
/// assert_eq!(s.len(), 1600);
/// assert_eq!(s.domain().wall_velocity(1, 1), [0.02, 0.0]);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub fn couette_2d(particles: usize) -> Result<Solver<2>, CoreError> {
    let rows = channel_rows(particles);
    let flow = crate::flows::Couette {
        time_step: CHANNEL_TIME_STEP,
        ..crate::flows::Couette::new(rows, 1.0, 0.02)
    };
    flow.channel(crate::Backend::Lanes, 4 * rows)
}
