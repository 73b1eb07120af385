//! Saving: a solver's state encoded as a checkpoint ([`Solver::checkpoint`]).

use super::CheckpointError;
use super::format::header;
use super::state::{
    ColliderState, EmitterState, IterationsState, ParamsState, ShapeState, SolverState,
};
use crate::{
    Acceleration, Backend, ColliderKind, CoreError, Iterations, Relaxation, Shape, Solver,
};

fn encode<const D: usize>(solver: &Solver<D>) -> Result<Vec<u8>, CoreError> {
    let p = solver.params();
    let params = ParamsState {
        spacing: p.spacing,
        kernel_radius_rel: p.kernel_radius_rel,
        rest_density: p.rest_density,
        time_step: p.time_step,
        iterations: match p.iterations {
            Iterations::Fixed(n) => IterationsState::Fixed(n),
            Iterations::Adaptive {
                max_density_error_percent,
                min,
                max,
            } => IterationsState::Adaptive {
                max_density_error_percent,
                min,
                max,
            },
        },
        gravity: p.gravity.to_vec(),
        cfm_rel: p.cfm_rel,
        s_corr_k: p.s_corr_k,
        s_corr_n: p.s_corr_n,
        s_corr_dq_rel: p.s_corr_dq_rel,
        xsph_c: p.xsph_c,
        vorticity_rel: p.vorticity_rel,
        unilateral: p.unilateral,
        scalar_backend: p.backend == Backend::Scalar,
        relaxation: match p.relaxation {
            Relaxation::Auto => None,
            Relaxation::Fixed(w) => Some(w),
        },
    };
    let colliders = solver
        .colliders()
        .iter()
        .map(|c| {
            let shape = match *c.shape() {
                Shape::Plane { point, normal } => ShapeState::Plane {
                    point: point.to_vec(),
                    normal: normal.to_vec(),
                },
                Shape::Box {
                    center,
                    half_extents,
                } => ShapeState::Box {
                    center: center.to_vec(),
                    half_extents: half_extents.to_vec(),
                },
                Shape::Sphere { center, radius } => ShapeState::Sphere {
                    center: center.to_vec(),
                    radius,
                },
                Shape::Capsule { a, b, radius } => ShapeState::Capsule {
                    a: a.to_vec(),
                    b: b.to_vec(),
                    radius,
                },
                Shape::Cylinder {
                    base,
                    radius,
                    height,
                } => ShapeState::Cylinder {
                    base: base.to_vec(),
                    radius,
                    height,
                },
            };
            let container = match c.kind() {
                ColliderKind::Solid => None,
                ColliderKind::Container {
                    wall_thickness,
                    open_top,
                } => Some((wall_thickness, open_top)),
            };
            let (friction, restitution) = c.response();
            ColliderState {
                shape,
                container,
                friction,
                restitution,
            }
        })
        .collect();
    let dynamic = solver.dynamic_state();
    let emitters = dynamic
        .emitters
        .iter()
        .map(|e| EmitterState {
            origin: e.origin.to_vec(),
            direction: e.direction.to_vec(),
            speed: e.speed,
            radius: e.radius,
            start: e.start,
            stop: e.stop,
            travelled: e.travelled,
        })
        .collect();
    let domain = solver.domain();
    let (domain_friction, domain_restitution) = domain.response();
    let state = SolverState {
        params,
        domain_lo: domain.lo().to_vec(),
        domain_hi: domain.hi().to_vec(),
        domain_friction,
        domain_restitution,
        colliders,
        emitters,
        positions: dynamic.positions.iter().map(|a| a.to_vec()).collect(),
        velocities: dynamic.velocities.iter().map(|a| a.to_vec()).collect(),
        force: dynamic.force.iter().map(|a| a.to_vec()).collect(),
        density: dynamic.density.to_vec(),
        ids: dynamic.ids.to_vec(),
        next_id: dynamic.next_id,
        step: dynamic.step,
        time: dynamic.time,
        grid_origin: dynamic.grid_origin.map(|(h, o)| (h, o.to_vec())),
        xsph_period: solver.params().xsph_period(),
        chebyshev: solver.params().acceleration() == Acceleration::Chebyshev,
        coarse_correction: solver.params().coarse_correction(),
        keep_lists: solver.params().keep_lists(),
        lists_built: dynamic
            .built
            .map(|b| b.iter().map(|a| a.to_vec()).collect()),
        list_skins: dynamic.skins,
        lists_step: dynamic.built_step,
        viscosity: p.viscosity,
        domain_no_slip: if solver.domain().has_no_slip() {
            solver
                .domain()
                .walls()
                .iter()
                .flatten()
                .map(|w| *w == crate::Wall::NoSlip)
                .collect()
        } else {
            Vec::new()
        },
        colliders_no_slip: if solver
            .colliders()
            .iter()
            .any(|c| c.wall() == crate::Wall::NoSlip)
        {
            solver
                .colliders()
                .iter()
                .map(|c| c.wall() == crate::Wall::NoSlip)
                .collect()
        } else {
            Vec::new()
        },
        // None without a periodic axis: the payload of such a solver is version 6's
        // with one byte more.
        domain_periodic: if domain.periodic().contains(&true) {
            domain.periodic().to_vec()
        } else {
            Vec::new()
        },
        domain_wall_velocities: if domain.has_moving_wall() {
            (0..D)
                .flat_map(|a| (0..2).flat_map(move |side| domain.wall_velocity(a, side)))
                .collect()
        } else {
            Vec::new()
        },
    };
    let payload = postcard::to_allocvec(&state).map_err(|e| CheckpointError::Encode {
        reason: e.to_string(),
    })?;
    let mut out = Vec::with_capacity(super::HEADER_LEN + payload.len());
    out.extend_from_slice(&header(D, &payload));
    out.extend_from_slice(&payload);
    Ok(out)
}

impl<const D: usize> Solver<D> {
    /// The whole state of the solver as a checkpoint (see the
    /// [module docs](crate::checkpoint) for the format).
    /// [`from_checkpoint`](Self::from_checkpoint) gives back a solver whose steps are
    /// bit-identical to this one's.
    ///
    /// # Errors
    /// [`CheckpointError::Encode`] if the encoder fails (it has no known cause).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut a = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// a.add_block([0.0, 0.0], [0.3, 0.3], [0.0; 2])?;
    /// a.step()?;
    /// let bytes = a.checkpoint()?;
    /// let mut b = Solver::<2>::from_checkpoint(&bytes)?;
    /// a.step()?;
    /// b.step()?;
    /// assert_eq!(a.positions(), b.positions());
    /// assert_eq!(a.steps(), b.steps());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn checkpoint(&self) -> Result<Vec<u8>, CoreError> {
        encode(self)
    }
}
