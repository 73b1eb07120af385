//! Building the solver a scene describes: parameters, domain, colliders, fluid blocks
//! and emitters, each rejection of pbf-solver's mapped back to its key.

use pbf_solver::scenes::AnySolver;
use pbf_solver::{Collider, Domain, Emitter, Solver};

use super::errors::Context;
use super::{Scene, WallName, vector};
use crate::error::CliError;

impl Scene {
    /// Builds the solver the scene describes: parameters, domain, colliders, fluid
    /// blocks and emitters.
    ///
    /// # Errors
    /// [`CliError::Scene`] at the offending key when pbf-solver rejects a value (a
    /// negative radius, a block outside the domain, ...).
    ///
    /// ```
    /// let s = pbf_cli::Scene::parse(
    ///     "dimension = 2\n[solver]\nspacing = 0.1\n[domain]\nlo = [0, 0]\nhi = [1, 1]\n[[block]]\nlo = [0, 0]\nhi = [0.5, 0.5]\n",
    ///     "s.toml",
    /// )?;
    /// assert_eq!(s.build()?.len(), 25);
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn build(&self) -> Result<AnySolver, CliError> {
        match self.file.dimension {
            2 => Ok(AnySolver::Two(self.build_in::<2>()?)),
            _ => Ok(AnySolver::Three(self.build_in::<3>()?)),
        }
    }

    fn build_in<const D: usize>(&self) -> Result<Solver<D>, CliError> {
        let f = &self.file;
        let s = &f.solver;
        let params = s
            .builder::<D>()
            .build()
            .map_err(|e| self.core_error(e, Context::Solver))?;
        let domain_spec = &f.domain;
        let domain = Domain::new(vector(&domain_spec.lo), vector(&domain_spec.hi))
            .and_then(|d| {
                d.with_response(
                    domain_spec.friction.unwrap_or(0.0) as f32,
                    domain_spec.restitution.unwrap_or(0.0) as f32,
                )
            })
            .map(|d| match &domain_spec.wall {
                Some(wall) => d.with_walls(wall.walls::<D>()),
                None => d,
            })
            .and_then(|d| match &domain_spec.periodic {
                // `check_shape` held the length to the dimension.
                Some(p) => d.with_periodic(core::array::from_fn(|a| p[a])),
                None => Ok(d),
            })
            .and_then(|d| wall_velocities(d, domain_spec.wall_velocity.as_deref()))
            .map_err(|e| self.core_error(e, Context::Domain))?;
        let mut solver =
            Solver::new(params, domain).map_err(|e| self.core_error(e, Context::Solver))?;
        for (i, c) in f.colliders.iter().enumerate() {
            let collider = Collider::new(c.shape::<D>(), c.kind())
                .and_then(|c2| {
                    c2.with_response(
                        c.friction.unwrap_or(0.0) as f32,
                        c.restitution.unwrap_or(0.0) as f32,
                    )
                })
                .map(|c2| c2.with_wall(c.wall.map_or(pbf_solver::Wall::FreeSlip, WallName::wall)))
                .and_then(|c2| solver.add_collider(c2))
                .map_err(|e| self.core_error(e, Context::Collider(i)));
            collider?;
        }
        for (i, block) in f.blocks.iter().enumerate() {
            let velocity = block.velocity.as_deref().map_or([0.0; D], vector);
            solver
                .add_block(vector(&block.lo), vector(&block.hi), velocity)
                .map_err(|e| self.core_error(e, Context::Block(i)))?;
        }
        for (i, e) in f.emitters.iter().enumerate() {
            Emitter::new(
                vector(&e.origin),
                vector(&e.direction),
                e.speed as f32,
                e.radius as f32,
                e.start.unwrap_or(0.0) as f32,
                e.stop as f32,
            )
            .and_then(|emitter| solver.add_emitter(emitter))
            .map_err(|err| self.core_error(err, Context::Emitter(i)))?;
        }
        Ok(solver)
    }
}

/// `domain` with the faces' velocities of `[domain] wall_velocity` (`check_shape` held
/// its lengths to the dimension); the faces given zero stay at rest.
fn wall_velocities<const D: usize>(
    mut domain: Domain<D>,
    faces: Option<&[[Vec<f64>; 2]]>,
) -> Result<Domain<D>, pbf_solver::CoreError> {
    for (axis, pair) in faces.unwrap_or_default().iter().enumerate() {
        for (side, v) in pair.iter().enumerate() {
            let velocity: [f32; D] = vector(v);
            if velocity.iter().any(|&c| c != 0.0) {
                domain = domain.with_wall_velocity(axis, side, velocity)?;
            }
        }
    }
    Ok(domain)
}
