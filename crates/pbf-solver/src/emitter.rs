//! Emitters: sources that add particles while the simulation runs.

use crate::CoreError;

/// The most layers an emitter may emit in one time step (`speed * dt / spacing`).
pub const MAX_LAYERS_PER_STEP: u32 = 1 << 22;

/// The most points the layer of one emitter may hold, counted on the square (3D) or
/// segment (2D) of lattice points that encloses the nozzle: `(2 floor(r / s) + 1)^(D-1)`
/// for a nozzle of radius `r` at spacing `s`. A nozzle may be at most 511 spacings in
/// radius in 3D (a layer of ~820,000 particles) and 524,287 in 2D.
///
/// The layer is kept in memory (one offset per point), so without this bound a valid
/// nozzle in a domain wide enough to hold it could ask for gigabytes before the
/// first step: the `checkpoint_load` fuzz target found one of ~3e8 points, below
/// [`MAX_PARTICLES`](crate::MAX_PARTICLES). At the bound the layer takes 12 MB.
///
/// ```
/// use pbf_solver::{CoreError, Domain, Emitter, Params, Solver, MAX_LAYER_PARTICLES};
/// let mut s = Solver::new(Params::<2>::builder(1.0).build()?, Domain::new([0.0; 2], [1e7; 2])?)?;
/// let wide = Emitter::new([5e6; 2], [0.0, -1.0], 1.0, MAX_LAYER_PARTICLES as f32, 0.0, 1.0)?;
/// assert!(matches!(s.add_emitter(wide), Err(CoreError::InvalidEmitter { field: "radius", .. })));
/// # Ok::<(), CoreError>(())
/// ```
pub const MAX_LAYER_PARTICLES: usize = 1 << 20;

/// A nozzle that emits a disc (3D) or a segment (2D) of particles at the rest
/// spacing, perpendicular to `direction`, moving at `speed`, from time `start` to
/// `stop`. A new layer leaves the nozzle each time the previous one has travelled one
/// spacing, so the jet has the rest density.
///
/// ```
/// use pbf_solver::Emitter;
/// let e = Emitter::new([0.5, 1.0, 0.5], [0.0, -1.0, 0.0], 1.0, 0.1, 0.0, 2.0)?;
/// assert_eq!(e.speed(), 1.0);
/// assert!(Emitter::new([0.0; 3], [0.0; 3], 1.0, 0.1, 0.0, 1.0).is_err());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Emitter<const D: usize> {
    pub(crate) origin: [f32; D],
    pub(crate) direction: [f32; D],
    pub(crate) speed: f32,
    pub(crate) radius: f32,
    pub(crate) start: f32,
    pub(crate) stop: f32,
    /// How far the newest layer has travelled since it was emitted.
    pub(crate) travelled: f32,
    /// Layer offsets from `origin`, computed for the solver's spacing.
    pub(crate) layer: Vec<[f32; D]>,
}

impl<const D: usize> Emitter<D> {
    /// A nozzle at `origin` pointing along `direction` (normalised here), emitting at
    /// `speed` (> 0) within `radius` (> 0) of its axis from time `start` to `stop`.
    ///
    /// # Errors
    /// [`CoreError::InvalidEmitter`] naming the field.
    ///
    /// ```
    /// use pbf_solver::{CoreError, Emitter};
    /// let e = Emitter::new([0.0; 2], [1.0, 0.0], -1.0, 0.1, 0.0, 1.0);
    /// assert!(matches!(e, Err(CoreError::InvalidEmitter { field: "speed", .. })));
    /// ```
    pub fn new(
        origin: [f32; D],
        direction: [f32; D],
        speed: f32,
        radius: f32,
        start: f32,
        stop: f32,
    ) -> Result<Self, CoreError> {
        let bad = |field, value: f32, reason| {
            Err(CoreError::InvalidEmitter {
                field,
                value: value.into(),
                reason,
            })
        };
        if let Some(v) = origin.iter().find(|v| !v.is_finite()) {
            return bad("origin", *v, "must be finite");
        }
        if let Some(v) = direction.iter().find(|v| !v.is_finite()) {
            return bad("direction", *v, "must be finite");
        }
        let len = direction.iter().map(|c| c * c).sum::<f32>().sqrt();
        if !(len > 0.0) {
            return bad("direction", len, "must be non-zero");
        }
        if !(speed.is_finite() && speed > 0.0) {
            return bad("speed", speed, "must be > 0 and finite");
        }
        if !(radius.is_finite() && radius > 0.0) {
            return bad("radius", radius, "must be > 0 and finite");
        }
        if !(start.is_finite() && start >= 0.0) {
            return bad("start", start, "must be >= 0 and finite");
        }
        if !(stop.is_finite() && stop > start) {
            return bad("stop", stop, "must be finite and greater than start");
        }
        Ok(Self {
            origin,
            direction: direction.map(|c| c / len),
            speed,
            radius,
            start,
            stop,
            travelled: f32::INFINITY,
            layer: Vec::new(),
        })
    }

    /// The emission speed.
    ///
    /// ```
    /// let e = pbf_solver::Emitter::new([0.0; 2], [0.0, -1.0], 2.0, 0.1, 0.0, 1.0)?;
    /// assert_eq!(e.speed(), 2.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn speed(&self) -> f32 {
        self.speed
    }

    /// Checks that one step of `dt` emits a bounded number of layers: at most
    /// [`MAX_LAYERS_PER_STEP`], and at most [`MAX_PARTICLES`](crate::MAX_PARTICLES)
    /// particles (call after [`prepare`](Self::prepare)). Beyond the first bound the
    /// distance travelled, an `f32`, could no longer count layers of one spacing.
    pub(crate) fn check_rate(&self, dt: f32, spacing: f32) -> Result<(), CoreError> {
        let layers = f64::from(self.speed) * f64::from(dt) / f64::from(spacing) + 1.0;
        if !(layers <= MAX_LAYERS_PER_STEP as f64)
            || layers * self.layer.len() as f64 > crate::MAX_PARTICLES as f64
        {
            return Err(CoreError::InvalidEmitter {
                field: "speed",
                value: self.speed.into(),
                reason: "emits more than 2^22 layers or the particle limit in one time step",
            });
        }
        Ok(())
    }

    /// Checks, before [`prepare`](Self::prepare) allocates it, that the layer of one
    /// emission holds at most [`MAX_LAYER_PARTICLES`] points, counted on the lattice
    /// square (3D) or segment (2D) that encloses the nozzle, so that the check needs
    /// nothing but the radius.
    pub(crate) fn check_layer(&self, spacing: f32) -> Result<(), CoreError> {
        // The same `steps` as `prepare` computes (in f32, so the two cannot disagree).
        let steps = f64::from((self.radius / spacing).floor());
        let across = 2.0 * steps + 1.0;
        let points = if D == 2 { across } else { across * across };
        if !(points <= MAX_LAYER_PARTICLES as f64) {
            return Err(CoreError::InvalidEmitter {
                field: "radius",
                value: self.radius.into(),
                reason: "the nozzle's layer would hold more than MAX_LAYER_PARTICLES (2^20) points",
            });
        }
        Ok(())
    }

    /// The nozzle's radius.
    ///
    /// ```
    /// let e = pbf_solver::Emitter::new([0.0; 2], [0.0, -1.0], 2.0, 0.1, 0.0, 1.0)?;
    /// assert_eq!(e.radius(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// Computes the layer's offsets for particles at `spacing`.
    pub(crate) fn prepare(&mut self, spacing: f32) {
        // An orthonormal basis of the plane perpendicular to the direction.
        let d = self.direction;
        let mut basis: Vec<[f32; D]> = Vec::new();
        for axis in 0..D {
            let mut e = [0.0; D];
            e[axis] = 1.0;
            // Gram-Schmidt against the direction and the vectors found so far.
            let mut v = e;
            for b in std::iter::once(&d).chain(basis.iter()) {
                let dot: f32 = (0..D).map(|k| v[k] * b[k]).sum();
                for k in 0..D {
                    v[k] -= dot * b[k];
                }
            }
            let len = v.iter().map(|c| c * c).sum::<f32>().sqrt();
            if len > 1e-3 && basis.len() < D - 1 {
                basis.push(v.map(|c| c / len));
            }
        }
        let steps = (self.radius / spacing).floor() as i32;
        self.layer.clear();
        let mut push = |coords: &[i32]| {
            let mut p = [0.0; D];
            let mut r2 = 0.0;
            for (b, &c) in basis.iter().zip(coords) {
                let t = c as f32 * spacing;
                r2 += t * t;
                for k in 0..D {
                    p[k] += t * b[k];
                }
            }
            if r2 <= self.radius * self.radius {
                self.layer.push(p);
            }
        };
        if D == 2 {
            for a in -steps..=steps {
                push(&[a]);
            }
        } else {
            for a in -steps..=steps {
                for b in -steps..=steps {
                    push(&[a, b]);
                }
            }
        }
    }

    /// Advances the emitter over the step from `time` to `time + dt` and appends the
    /// layers that leave the nozzle to `out` (position, velocity).
    pub(crate) fn emit(
        &mut self,
        time: f32,
        dt: f32,
        spacing: f32,
        out: &mut Vec<([f32; D], [f32; D])>,
    ) {
        if time + dt <= self.start || time >= self.stop {
            return;
        }
        if !self.travelled.is_finite() {
            // The first layer leaves at once.
            self.travelled = spacing;
        } else {
            self.travelled += self.speed * dt;
        }
        let velocity = self.direction.map(|c| c * self.speed);
        while self.travelled >= spacing {
            self.travelled -= spacing;
            let ahead = self.travelled;
            for offset in &self.layer {
                let p = core::array::from_fn(|k| {
                    self.origin[k] + offset[k] + ahead * self.direction[k]
                });
                out.push((p, velocity));
            }
        }
    }
}
