//! Adding and removing particles, colliders and emitters.

use super::{MAX_PARTICLES, Solver};
use crate::emitter::Emitter;
use crate::{Collider, CoreError};
use core::ops::Range;

impl<const D: usize> Solver<D> {
    /// Adds a static collider.
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] with the index the collider would have had, and
    /// naming `wall` for a no-slip collider ([`Wall::NoSlip`](crate::Wall::NoSlip))
    /// when the viscosity is 0.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Domain, Params, Shape, Solver};
    /// let mut s = Solver::new(Params::<3>::builder(0.05).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// s.add_collider(Collider::new(Shape::Sphere { center: [0.5; 3], radius: 0.2 }, ColliderKind::Solid)?)?;
    /// assert_eq!(s.colliders().len(), 1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_collider(&mut self, collider: Collider<D>) -> Result<(), CoreError> {
        collider.validate(self.colliders.len())?;
        if collider.wall() == crate::Wall::NoSlip && self.params.viscosity() == 0.0 {
            return Err(CoreError::InvalidCollider {
                index: self.colliders.len(),
                field: "wall",
                value: 0.0,
                reason: "a no-slip collider acts through the viscosity: set viscosity > 0",
            });
        }
        self.colliders.push(collider);
        Ok(())
    }

    /// Adds an emitter. Its nozzle (every point of the emitted layer) must lie inside
    /// the domain.
    ///
    /// # Errors
    /// [`CoreError::InvalidEmitter`] when (`radius`) its layer would hold more than
    /// [`MAX_LAYER_PARTICLES`](crate::MAX_LAYER_PARTICLES) points (checked from the
    /// radius, before the layer is allocated), when (`origin`) the nozzle leaves the
    /// domain, or (`speed`)
    /// when one step would emit more than
    /// [`MAX_LAYERS_PER_STEP`](crate::MAX_LAYERS_PER_STEP) layers or more
    /// particles than [`MAX_PARTICLES`].
    ///
    /// ```
    /// use pbf_solver::{Domain, Emitter, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_emitter(Emitter::new([0.5, 0.8], [0.0, -1.0], 1.0, 0.1, 0.0, 1.0)?)?;
    /// s.step()?;
    /// assert_eq!(s.len(), 5);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_emitter(&mut self, mut emitter: Emitter<D>) -> Result<(), CoreError> {
        // Bound the layer before building it: a huge nozzle would exhaust memory, even
        // one that fits a wide enough domain
        // (`tests/errors.rs::an_emitter_layer_too_large_for_memory_is_rejected`).
        emitter.check_layer(self.params.spacing())?;
        emitter.prepare(self.params.spacing());
        emitter.check_rate(self.params.time_step(), self.params.spacing())?;
        for offset in &emitter.layer {
            let p: [f32; D] = core::array::from_fn(|k| emitter.origin[k] + offset[k]);
            if !self.domain.contains(p) {
                return Err(CoreError::InvalidEmitter {
                    field: "origin",
                    value: f64::from(p[0]),
                    reason: "the nozzle must lie inside the domain",
                });
            }
        }
        self.emitters.push(emitter);
        Ok(())
    }

    /// Adds particles with the given velocities (`None`: at rest) and returns the
    /// range of ids they received. Nothing is added when an error is returned.
    ///
    /// # Errors
    /// [`CoreError::LengthMismatch`], [`CoreError::NonFiniteParticle`],
    /// [`CoreError::OutsideDomain`] and [`CoreError::TooManyParticles`].
    ///
    /// ```
    /// use pbf_solver::{CoreError, Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// let ids = s.add_particles(&[[0.5, 0.5], [0.55, 0.5]], None)?;
    /// assert_eq!(ids, 0..2);
    /// let err = s.add_particles(&[[f32::NAN, 0.0]], None).unwrap_err();
    /// assert!(matches!(err, CoreError::NonFiniteParticle { index: 0, axis: 0, .. }));
    /// assert_eq!(s.len(), 2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_particles(
        &mut self,
        positions: &[[f32; D]],
        velocities: Option<&[[f32; D]]>,
    ) -> Result<Range<u64>, CoreError> {
        if let Some(v) = velocities
            && v.len() != positions.len()
        {
            return Err(CoreError::LengthMismatch {
                field: "velocities",
                expected: positions.len(),
                found: v.len(),
            });
        }
        let total = self.len() + positions.len();
        if total > MAX_PARTICLES {
            return Err(CoreError::TooManyParticles {
                count: total,
                max: MAX_PARTICLES,
            });
        }
        for (index, p) in positions.iter().enumerate() {
            if let Some(axis) = p.iter().position(|c| !c.is_finite()) {
                return Err(CoreError::NonFiniteParticle {
                    index,
                    field: "position",
                    axis,
                    value: p[axis],
                });
            }
            if !self.domain.contains(*p) {
                return Err(CoreError::OutsideDomain {
                    index,
                    position: p.to_vec(),
                    lo: self.domain.lo().to_vec(),
                    hi: self.domain.hi().to_vec(),
                });
            }
            if let Some(v) = velocities
                && let Some(axis) = v[index].iter().position(|c| !c.is_finite())
            {
                return Err(CoreError::NonFiniteParticle {
                    index,
                    field: "velocity",
                    axis,
                    value: v[index][axis],
                });
            }
        }
        self.append(
            positions
                .iter()
                .enumerate()
                .map(|(i, p)| (*p, velocities.map_or([0.0; D], |v| v[i]))),
        );
        let first = self.next_id - positions.len() as u64;
        Ok(first..self.next_id)
    }

    fn append(&mut self, particles: impl Iterator<Item = ([f32; D], [f32; D])>) {
        for (p, v) in particles {
            self.reusable = false;
            for a in 0..D {
                self.positions[a].push(p[a]);
                self.velocities[a].push(v[a]);
                self.force[a].push(0.0);
            }
            self.density.push(self.params.rest_density());
            if self.keep_pressures {
                self.pressure.push(0.0);
            }
            self.ids.push(self.next_id);
            self.next_id += 1;
        }
    }

    /// Fills the box `lo..hi` with particles on a lattice at the rest spacing (the
    /// first layer half a spacing inside `lo`), all with `velocity`.
    ///
    /// # Errors
    /// As [`add_particles`](Self::add_particles); also [`CoreError::InvalidParameter`]
    /// (`block`) when the box is not finite or holds no lattice point.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// assert_eq!(s.len(), 15);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_block(
        &mut self,
        lo: [f32; D],
        hi: [f32; D],
        velocity: [f32; D],
    ) -> Result<Range<u64>, CoreError> {
        let s = self.params.spacing();
        let mut counts = [0usize; D];
        for a in 0..D {
            let extent = f64::from(hi[a]) - f64::from(lo[a]);
            if !(extent.is_finite() && extent >= f64::from(s)) {
                return Err(CoreError::InvalidParameter {
                    field: "block",
                    value: extent,
                    reason: "every side must be finite and at least one spacing long",
                });
            }
            counts[a] = (extent / f64::from(s) + 1e-4).floor() as usize;
        }
        // A huge block overflows the product: saturate, it is rejected either way.
        let total = counts
            .iter()
            .try_fold(1usize, |acc, &c| acc.checked_mul(c))
            .unwrap_or(usize::MAX);
        if self.len().saturating_add(total) > MAX_PARTICLES {
            return Err(CoreError::TooManyParticles {
                count: self.len().saturating_add(total),
                max: MAX_PARTICLES,
            });
        }
        let mut points = Vec::with_capacity(total);
        for flat in 0..total {
            let mut rest = flat;
            let p = core::array::from_fn(|a| {
                let k = rest % counts[a];
                rest /= counts[a];
                lo[a] + (k as f32 + 0.5) * s
            });
            points.push(p);
        }
        let velocities = vec![velocity; total];
        self.add_particles(&points, Some(&velocities))
    }

    /// Removes the particles whose id is in `ids` and returns how many were removed
    /// (ids not present are not counted).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// assert_eq!(s.remove_particles(&[0, 3, 99]), 2);
    /// assert_eq!(s.len(), 13);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn remove_particles(&mut self, ids: &[u64]) -> usize {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        self.retain_particles(|id, _, _| sorted.binary_search(&id).is_err())
    }

    /// Keeps the particles for which `keep(id, position, velocity)` is true and
    /// returns how many were removed. The survivors keep their order.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// let removed = s.retain_particles(|_, p, _| p[0] < 0.2);
    /// assert_eq!((removed, s.len()), (9, 6));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn retain_particles(
        &mut self,
        mut keep: impl FnMut(u64, [f32; D], [f32; D]) -> bool,
    ) -> usize {
        let n = self.len();
        let mut w = 0;
        for r in 0..n {
            let p = core::array::from_fn(|a| self.positions[a][r]);
            let v = core::array::from_fn(|a| self.velocities[a][r]);
            if keep(self.ids[r], p, v) {
                for a in 0..D {
                    self.positions[a][w] = self.positions[a][r];
                    self.velocities[a][w] = self.velocities[a][r];
                    self.force[a][w] = self.force[a][r];
                }
                self.density[w] = self.density[r];
                if self.keep_pressures {
                    self.pressure[w] = self.pressure[r];
                }
                self.ids[w] = self.ids[r];
                w += 1;
            }
        }
        for a in 0..D {
            self.positions[a].truncate(w);
            self.velocities[a].truncate(w);
            self.force[a].truncate(w);
        }
        self.density.truncate(w);
        self.pressure.truncate(w);
        self.ids.truncate(w);
        if w < n {
            self.reusable = false;
        }
        n - w
    }

    /// Adds the particles the emitters emit in this step (those inside the domain, up
    /// to [`MAX_PARTICLES`]).
    pub(super) fn emit(&mut self) {
        if self.emitters.is_empty() {
            return;
        }
        let (time, dt, spacing) = (
            self.time as f32,
            self.params.time_step(),
            self.params.spacing(),
        );
        let mut emitted = core::mem::take(&mut self.emitted);
        emitted.clear();
        for e in &mut self.emitters {
            e.emit(time, dt, spacing, &mut emitted);
        }
        let room = MAX_PARTICLES.saturating_sub(self.len());
        emitted.truncate(room);
        let domain = self.domain;
        self.append(emitted.iter().filter(|(p, _)| domain.contains(*p)).copied());
        self.emitted = emitted;
    }
}
