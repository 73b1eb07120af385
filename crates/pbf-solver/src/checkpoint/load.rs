//! Loading: a checkpoint checked, decoded (an older version's payload upgraded to
//! this version's first) and rebuilt through the validating constructors
//! ([`Solver::from_checkpoint`]).

use super::CheckpointError;
use super::format::split_header;
use super::state::{IterationsState, LEGACY_SKIN, ShapeState, SolverState};
use crate::solver::RestoredState;
use crate::{
    Acceleration, Backend, Collider, ColliderKind, CoreError, Domain, Emitter, Iterations, Params,
    Relaxation, Shape, Solver, Wall,
};

fn inconsistent(field: &'static str, reason: impl Into<String>) -> CoreError {
    CheckpointError::Inconsistent {
        field,
        reason: reason.into(),
    }
    .into()
}

fn array<const D: usize, T: Copy>(field: &'static str, v: &[T]) -> Result<[T; D], CoreError> {
    v.try_into()
        .map_err(|_| inconsistent(field, format!("{} components, expected {D}", v.len())))
}

fn shape<const D: usize>(s: &ShapeState) -> Result<Shape<D>, CoreError> {
    Ok(match s {
        ShapeState::Plane { point, normal } => Shape::Plane {
            point: array("collider.point", point)?,
            normal: array("collider.normal", normal)?,
        },
        ShapeState::Box {
            center,
            half_extents,
        } => Shape::Box {
            center: array("collider.center", center)?,
            half_extents: array("collider.half_extents", half_extents)?,
        },
        ShapeState::Sphere { center, radius } => Shape::Sphere {
            center: array("collider.center", center)?,
            radius: *radius,
        },
        ShapeState::Capsule { a, b, radius } => Shape::Capsule {
            a: array("collider.a", a)?,
            b: array("collider.b", b)?,
            radius: *radius,
        },
        ShapeState::Cylinder {
            base,
            radius,
            height,
        } => Shape::Cylinder {
            base: array("collider.base", base)?,
            radius: *radius,
            height: *height,
        },
    })
}

/// Per-axis arrays of `n` values each.
fn axes<const D: usize>(
    field: &'static str,
    v: Vec<Vec<f32>>,
    n: usize,
) -> Result<[Vec<f32>; D], CoreError> {
    if v.len() != D {
        return Err(inconsistent(
            field,
            format!("{} axes, expected {D}", v.len()),
        ));
    }
    let mut it = v.into_iter();
    let out: [Vec<f32>; D] = core::array::from_fn(|_| it.next().expect("D axes"));
    if let Some(axis) = out.iter().position(|a| a.len() != n) {
        return Err(CoreError::LengthMismatch {
            field,
            expected: n,
            found: out[axis].len(),
        });
    }
    Ok(out)
}

fn decode<const D: usize>(bytes: &[u8]) -> Result<Solver<D>, CoreError> {
    let (version, dimension, payload) = split_header(bytes)?;
    if dimension as usize != D {
        return Err(CheckpointError::WrongDimension {
            found: dimension,
            expected: D,
        }
        .into());
    }
    // Version 2 ran the per-step XSPH blend and plain Jacobi: its payload ends
    // before the period and the acceleration, which postcard encodes as one byte 0
    // each for `None` and `false`. Versions 2 and 3 ran without the coarse
    // correction: one more byte 0, `false`.
    // Versions 2 to 4 searched at every step and kept no lists: two more bytes
    // 0, `false` and `None`. Versions 2 to 5 built every list with the skin 0.1:
    // its four bytes twice, then the step of the lists, 0 (one byte 0).
    let skins = [
        &LEGACY_SKIN.to_le_bytes()[..],
        &LEGACY_SKIN.to_le_bytes(),
        &[0],
    ]
    .concat();
    // Versions 2 to 6 ran without physical viscosity, with free-slip walls and
    // without periodic axes: four bytes 0 (0.0), then one each for the domain's and
    // the colliders' no-slip flags and the periodic axes (empty sequences).
    let version_7 = [0u8; 7];
    // Versions 2 to 7 had every face at rest: one byte 0 (an empty sequence).
    let version_8 = [0u8; 1];
    let upgraded;
    let payload = match version {
        2..=5 => {
            let zeros = match version {
                2 => 5,
                3 => 3,
                4 => 2,
                _ => 0,
            };
            upgraded = [payload, &[0u8; 5][..zeros], &skins, &version_7, &version_8].concat();
            &upgraded[..]
        }
        6 => {
            upgraded = [payload, &version_7, &version_8].concat();
            &upgraded[..]
        }
        7 => {
            upgraded = [payload, &version_8].concat();
            &upgraded[..]
        }
        _ => payload,
    };
    let (state, rest): (SolverState, &[u8]) =
        postcard::take_from_bytes(payload).map_err(|e| CheckpointError::Decode {
            reason: e.to_string(),
        })?;
    if !rest.is_empty() {
        return Err(CheckpointError::TrailingBytes {
            extra: rest.len() as u64,
        }
        .into());
    }
    let p = &state.params;
    let params = Params::<D>::builder(p.spacing)
        .kernel_radius_rel(p.kernel_radius_rel)
        .rest_density(p.rest_density)
        .time_step(p.time_step)
        .iterations(match p.iterations {
            IterationsState::Fixed(n) => Iterations::Fixed(n),
            IterationsState::Adaptive {
                max_density_error_percent,
                min,
                max,
            } => Iterations::Adaptive {
                max_density_error_percent,
                min,
                max,
            },
        })
        .gravity(array("gravity", &p.gravity)?)
        .cfm_rel(p.cfm_rel)
        .s_corr_k(p.s_corr_k)
        .s_corr_n(p.s_corr_n)
        .s_corr_dq_rel(p.s_corr_dq_rel)
        .xsph_c(p.xsph_c)
        .xsph_period(state.xsph_period)
        .acceleration(if state.chebyshev {
            Acceleration::Chebyshev
        } else {
            Acceleration::None
        })
        .coarse_correction(state.coarse_correction)
        .keep_lists(state.keep_lists)
        .vorticity_rel(p.vorticity_rel)
        .viscosity(state.viscosity)
        .unilateral(p.unilateral)
        .relaxation(p.relaxation.map_or(Relaxation::Auto, Relaxation::Fixed))
        .backend(if p.scalar_backend {
            Backend::Scalar
        } else {
            Backend::Lanes
        })
        .build()?;
    let domain = Domain::new(
        array("domain.lo", &state.domain_lo)?,
        array("domain.hi", &state.domain_hi)?,
    )?
    .with_response(state.domain_friction, state.domain_restitution)?
    .with_walls(walls::<D>(&state.domain_no_slip)?);
    let domain = if state.domain_periodic.is_empty() {
        domain
    } else {
        domain.with_periodic(array("domain.periodic", &state.domain_periodic)?)?
    };
    let domain = wall_velocities(domain, &state.domain_wall_velocities)?;
    let mut solver = Solver::new(params, domain)?;
    if !state.colliders_no_slip.is_empty() && state.colliders_no_slip.len() != state.colliders.len()
    {
        return Err(CheckpointError::Decode {
            reason: format!(
                "collider walls: {} flags for {} colliders",
                state.colliders_no_slip.len(),
                state.colliders.len()
            ),
        }
        .into());
    }
    for (k, c) in state.colliders.iter().enumerate() {
        let kind = match c.container {
            None => ColliderKind::Solid,
            Some((wall_thickness, open_top)) => ColliderKind::Container {
                wall_thickness,
                open_top,
            },
        };
        let wall = if state.colliders_no_slip.get(k) == Some(&true) {
            Wall::NoSlip
        } else {
            Wall::FreeSlip
        };
        let collider = Collider::new(shape(&c.shape)?, kind)?
            .with_response(c.friction, c.restitution)?
            .with_wall(wall);
        solver.add_collider(collider)?;
    }
    for e in &state.emitters {
        let direction = array::<D, f32>("emitter.direction", &e.direction)?;
        let mut emitter = Emitter::new(
            array("emitter.origin", &e.origin)?,
            direction,
            e.speed,
            e.radius,
            e.start,
            e.stop,
        )?;
        // The saved direction was normalised when the emitter was made: keep its
        // exact bits (normalising again may round differently).
        emitter.direction = direction;
        // Between steps the newest layer has travelled less than one spacing
        // (infinite before the first layer). A larger value would make the next
        // step emit a layer per spacing of it: found by the `checkpoint_load` fuzz
        // target (1e30 exhausted memory), input
        // `fuzz/corpus/checkpoint_load/regression-emitter-travelled`.
        let spacing = solver.params().spacing();
        if !(e.travelled == f32::INFINITY || (0.0..spacing).contains(&e.travelled)) {
            return Err(CoreError::InvalidEmitter {
                field: "travelled",
                value: e.travelled.into(),
                reason: "must be in [0, spacing), or infinite before the first layer",
            });
        }
        emitter.travelled = e.travelled;
        solver.add_emitter(emitter)?;
    }
    let n = state.ids.len();
    if n > crate::MAX_PARTICLES {
        return Err(CoreError::TooManyParticles {
            count: n,
            max: crate::MAX_PARTICLES,
        });
    }
    let positions = axes::<D>("positions", state.positions, n)?;
    let velocities = axes::<D>("velocities", state.velocities, n)?;
    let force = axes::<D>("force", state.force, n)?;
    let built = match state.lists_built {
        None => None,
        Some(b) => Some(axes::<D>("lists_built", b, n)?),
    };
    if state.density.len() != n {
        return Err(CoreError::LengthMismatch {
            field: "density",
            expected: n,
            found: state.density.len(),
        });
    }
    for index in 0..n {
        let saved = [
            ("position", &positions),
            ("velocity", &velocities),
            ("force", &force),
        ];
        for (field, arrays) in saved
            .into_iter()
            .chain(built.as_ref().map(|b| ("lists_built", b)))
        {
            if let Some(axis) = (0..D).find(|&a| !arrays[a][index].is_finite()) {
                return Err(CoreError::NonFiniteParticle {
                    index,
                    field,
                    axis,
                    value: arrays[axis][index],
                });
            }
        }
        let p: [f32; D] = core::array::from_fn(|a| positions[a][index]);
        if !solver.domain().contains(p) {
            return Err(CoreError::OutsideDomain {
                index,
                position: p.to_vec(),
                lo: solver.domain().lo().to_vec(),
                hi: solver.domain().hi().to_vec(),
            });
        }
    }
    if let Some(index) = state.density.iter().position(|d| !d.is_finite()) {
        return Err(CoreError::NonFiniteParticle {
            index,
            field: "density",
            axis: 0,
            value: state.density[index],
        });
    }
    let mut sorted = state.ids.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(inconsistent("ids", format!("id {} appears twice", w[0])));
    }
    if let Some(&max) = sorted.last()
        && max >= state.next_id
    {
        return Err(inconsistent(
            "next_id",
            format!("{} is not above the largest id {max}", state.next_id),
        ));
    }
    if !(state.time.is_finite() && state.time >= 0.0) {
        return Err(inconsistent(
            "time",
            format!("{} must be >= 0 and finite", state.time),
        ));
    }
    let (skin, next_skin) = state.list_skins;
    for (field, value) in [("list_skins.0", skin), ("list_skins.1", next_skin)] {
        if !crate::solver::SKINS
            .iter()
            .any(|s| s.to_bits() == value.to_bits())
        {
            return Err(inconsistent(
                field,
                format!(
                    "{value} is not one of the lists' skins {:?}",
                    crate::solver::SKINS
                ),
            ));
        }
    }
    if state.lists_step > state.step {
        return Err(inconsistent(
            "lists_step",
            format!(
                "lists built after {} steps, but only {} have run",
                state.lists_step, state.step
            ),
        ));
    }
    // The grid is binned at the last search's radius, h plus the lists' skin.
    let h = solver.radius_of(skin);
    let grid = match &state.grid_origin {
        None => pbf_grid::Grid::new(),
        Some((saved_h, origin)) => {
            if saved_h.to_bits() != h.to_bits() {
                return Err(inconsistent(
                    "grid_origin",
                    format!("saved for radius {saved_h}, the parameters' search radius is {h}"),
                ));
            }
            pbf_grid::Grid::with_cell_origin(h, array("grid_origin", origin)?)?
        }
    };
    solver.restore_dynamic(RestoredState {
        positions,
        velocities,
        force,
        density: state.density,
        ids: state.ids,
        next_id: state.next_id,
        step: state.step,
        time: state.time,
        grid,
        built,
        skins: (skin, next_skin),
        built_step: state.lists_step,
    })?;
    Ok(solver)
}

impl<const D: usize> Solver<D> {
    /// Restores a solver from [`checkpoint`](Self::checkpoint) bytes.
    ///
    /// # Errors
    /// [`CoreError::Checkpoint`] for bytes that are not a checkpoint of this version
    /// and dimension (truncated, corrupted, ...); for a well-formed checkpoint with a
    /// bad value, the error the API gives that value
    /// ([`CoreError::InvalidParameter`], [`CoreError::OutsideDomain`], ...).
    ///
    /// ```
    /// use pbf_solver::{CheckpointError, CoreError, Solver};
    /// let err = Solver::<3>::from_checkpoint(b"PBFCKPT\0").unwrap_err();
    /// assert!(matches!(err, CoreError::Checkpoint(e) if matches!(*e, CheckpointError::Truncated { .. })));
    /// ```
    pub fn from_checkpoint(bytes: &[u8]) -> Result<Self, CoreError> {
        decode(bytes)
    }
}

/// The domain's walls from their no-slip flags (`[axis][lo, hi]` flattened; empty:
/// all free-slip).
/// `domain` with the faces' velocities `flat` (`[axis][lo, hi][component]`
/// flattened; empty: every face at rest).
fn wall_velocities<const D: usize>(
    mut domain: Domain<D>,
    flat: &[f32],
) -> Result<Domain<D>, CoreError> {
    if flat.is_empty() {
        return Ok(domain);
    }
    if flat.len() != 2 * D * D {
        return Err(CheckpointError::Decode {
            reason: format!(
                "domain wall velocities: {} values for {} faces in {D}D",
                flat.len(),
                2 * D
            ),
        }
        .into());
    }
    for (face, velocity) in flat.chunks_exact(D).enumerate() {
        let velocity: [f32; D] = core::array::from_fn(|a| velocity[a]);
        if velocity.iter().any(|&c| c != 0.0) {
            domain = domain.with_wall_velocity(face / 2, face % 2, velocity)?;
        }
    }
    Ok(domain)
}

fn walls<const D: usize>(no_slip: &[bool]) -> Result<[[Wall; 2]; D], CoreError> {
    if no_slip.is_empty() {
        return Ok([[Wall::FreeSlip; 2]; D]);
    }
    if no_slip.len() != 2 * D {
        return Err(CheckpointError::Decode {
            reason: format!(
                "domain walls: {} flags, expected {} (two faces per axis)",
                no_slip.len(),
                2 * D
            ),
        }
        .into());
    }
    let wall = |flag: bool| if flag { Wall::NoSlip } else { Wall::FreeSlip };
    Ok(core::array::from_fn(|a| {
        [wall(no_slip[2 * a]), wall(no_slip[2 * a + 1])]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{HEADER_LEN, header};

    #[test]
    fn older_versions_continue_with_the_options_and_the_skin_they_ran_with() {
        use crate::{Domain, Params, Solver};
        // A version 2 payload is a version 3 payload without its last field, the XSPH
        // period; version 2 blended per step, which is `None`.
        // Versions 2 to 4 searched at every step: `keep_lists` off.
        // Versions 2 and 3 had no coarse correction: off.
        let params = Params::<2>::builder(0.05)
            .time_step(1.0 / 30.0)
            .xsph_period(None)
            .keep_lists(false)
            .coarse_correction(false)
            .build()
            .unwrap();
        let mut solver = Solver::new(params, Domain::new([0.0; 2], [1.0; 2]).unwrap()).unwrap();
        solver.add_block([0.0; 2], [0.4, 0.4], [0.0; 2]).unwrap();
        for _ in 0..3 {
            solver.step().unwrap();
        }
        let v8 = solver.checkpoint().unwrap();
        // The payload without the lists' two skins and step (a byte: below 128), the
        // viscosity (four bytes 0), the walls (one byte 0 each for the domain and the
        // colliders), the periodic axes (none: a byte 0) and the faces' velocities
        // (none: a byte 0), which end it.
        assert!(solver.steps() < 128);
        assert_eq!(
            v8[v8.len() - 8..],
            [0; 8],
            "no viscosity, free-slip, not periodic, faces at rest"
        );
        let payload = &v8[HEADER_LEN..v8.len() - 17];
        assert_eq!(
            payload[payload.len() - 5..],
            [0, 0, 0, 0, 0],
            "None, false, false, false and None, one byte 0 each, last"
        );
        let with_version = |version: u32, payload: &[u8]| {
            let mut bytes = header(2, payload).to_vec();
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            bytes.extend_from_slice(payload);
            Solver::<2>::from_checkpoint(&bytes).unwrap()
        };
        // Versions 2 to 5 built every list with the skin 0.1: the solver a version 6
        // file with that skin for the last search and the next, and lists of no step,
        // gives.
        let skin = LEGACY_SKIN.to_le_bytes();
        let mut wide = with_version(6, &[payload, &skin, &skin, &[0]].concat());
        assert_eq!(wide.positions(), solver.positions());
        assert_eq!(wide.domain().periodic(), [false; 2]);
        // Version 6 had no viscosity, free-slip walls and no periodic axes: the same
        // as version 7 with none.
        let seven = with_version(7, &[payload, &skin, &skin, &[0], &[0; 7]].concat());
        assert_eq!(seven.checkpoint().unwrap(), wide.checkpoint().unwrap());
        // Version 7 had every face at rest: the same as version 8 with none.
        let eight = with_version(8, &[payload, &skin, &skin, &[0], &[0; 8]].concat());
        assert_eq!(eight.checkpoint().unwrap(), wide.checkpoint().unwrap());
        // The bytes of an older version: the payload without its last `cut` bytes.
        let older =
            |version: u32, cut: usize| with_version(version, &payload[..payload.len() - cut]);
        // Version 5: the same without the skins.
        let from_v5 = older(5, 0);
        assert!(!from_v5.params().keep_lists());
        assert_eq!(from_v5.positions(), solver.positions());
        // Version 4: also without the lists' two bytes.
        let from_v4 = older(4, 2);
        assert!(!from_v4.params().keep_lists());
        assert_eq!(from_v4.positions(), solver.positions());
        // Version 3: also without the coarse correction's byte.
        let from_v3 = older(3, 3);
        assert!(!from_v3.params().coarse_correction());
        assert_eq!(from_v3.positions(), solver.positions());
        let mut restored = older(2, 5);
        assert_eq!(restored.params().xsph_period(), None);
        assert_eq!(restored.params().acceleration(), crate::Acceleration::None);
        for _ in 0..5 {
            wide.step().unwrap();
            restored.step().unwrap();
        }
        for a in 0..2 {
            let (x, y) = (wide.positions()[a], restored.positions()[a]);
            assert!(x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()));
        }
        // The same bytes as version 3 with `Some`: the period decodes as written.
        let default = Solver::new(
            Params::<2>::builder(0.05).build().unwrap(),
            Domain::new([0.0; 2], [1.0; 2]).unwrap(),
        )
        .unwrap();
        let bytes = default.checkpoint().unwrap();
        let back = Solver::<2>::from_checkpoint(&bytes).unwrap();
        assert_eq!(back.params().xsph_period(), Some(crate::XSPH_PERIOD));
        // And the coarse correction, when on, is kept.
        let coarse = Solver::new(
            Params::<2>::builder(0.05)
                .coarse_correction(true)
                .build()
                .unwrap(),
            Domain::new([0.0; 2], [1.0; 2]).unwrap(),
        )
        .unwrap();
        let back = Solver::<2>::from_checkpoint(&coarse.checkpoint().unwrap()).unwrap();
        assert!(back.params().coarse_correction());
    }

    #[test]
    fn the_viscosity_and_the_walls_round_trip() {
        use crate::{Domain, Params, Solver, Wall};
        let params = Params::<3>::builder(0.05).viscosity(2e-3).build().unwrap();
        let walls = [
            [Wall::FreeSlip, Wall::NoSlip],
            [Wall::NoSlip, Wall::FreeSlip],
            [Wall::FreeSlip; 2],
        ];
        let domain = Domain::new([0.0; 3], [1.0; 3])
            .unwrap()
            .with_walls(walls)
            .with_wall_velocity(0, 1, [0.0, 0.05, -0.02])
            .unwrap();
        let mut solver = Solver::new(params, domain).unwrap();
        for wall in [Wall::FreeSlip, Wall::NoSlip] {
            let ball = crate::Shape::Sphere {
                center: [0.7; 3],
                radius: 0.1,
            };
            let c = crate::Collider::new(ball, crate::ColliderKind::Solid).unwrap();
            solver.add_collider(c.with_wall(wall)).unwrap();
        }
        solver
            .add_block([0.0; 3], [0.3; 3], [0.1, 0.0, 0.0])
            .unwrap();
        solver.step().unwrap();
        let mut back = Solver::<3>::from_checkpoint(&solver.checkpoint().unwrap()).unwrap();
        assert_eq!(back.params().viscosity(), 2e-3);
        assert_eq!(back.domain().walls(), walls);
        assert_eq!(back.domain().wall_velocity(0, 1), [0.0, 0.05, -0.02]);
        assert_eq!(back.domain().wall_velocity(1, 0), [0.0; 3]);
        let kept: Vec<Wall> = back.colliders().iter().map(|c| c.wall()).collect();
        assert_eq!(kept, [Wall::FreeSlip, Wall::NoSlip]);
        for _ in 0..3 {
            solver.step().unwrap();
            back.step().unwrap();
        }
        for a in 0..3 {
            let (x, y) = (solver.velocities()[a], back.velocities()[a]);
            assert!(x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()));
        }
        // Wrong count of wall flags or velocities: an error, never a panic.
        assert!(walls_of::<3>(&[true; 4]).is_err());
        assert!(super::wall_velocities(*solver.domain(), &[0.1; 5]).is_err());
    }

    fn walls_of<const D: usize>(flags: &[bool]) -> Result<[[Wall; 2]; D], CoreError> {
        super::walls::<D>(flags)
    }
}
