//! Checkpoints: the whole state of a [`Solver`](crate::Solver) as bytes, restored so that
//! the run continues bit for bit as if it had never stopped (feature `serde`).
//!
//! # Format (version 6)
//!
//! | bytes | content |
//! |---|---|
//! | 0..8 | magic `PBFCKPT\0` |
//! | 8..12 | format version, `u32` little-endian (this build writes [`CHECKPOINT_VERSION`] and reads [`OLDEST_CHECKPOINT_VERSION`] to it) |
//! | 12..16 | dimension `D`, `u32` little-endian |
//! | 16..24 | payload length in bytes, `u64` little-endian |
//! | 24..32 | FNV-1a 64 hash of the payload, `u64` little-endian |
//! | 32.. | payload: the state, encoded with serde in the `postcard` format |
//!
//! Version 2 added the Jacobi relaxation ([`Relaxation`](crate::Relaxation)) to the
//! parameters; a version 1 file is refused with
//! [`CheckpointError::UnsupportedVersion`] (postcard is not self-describing, so its
//! payload would not decode as version 2). Version 3 appended the period of the XSPH
//! blend ([`ParamsBuilder::xsph_period`](crate::ParamsBuilder::xsph_period)) to the
//! end of the payload, then the [`Acceleration`](crate::Acceleration); a version 2
//! file loads with the period `None` and no acceleration, the per-step blend and plain
//! Jacobi it was written with, and continues as it would have. Version 4 appended
//! [`ParamsBuilder::coarse_correction`](crate::ParamsBuilder::coarse_correction); a
//! version 2 or 3 file loads with it off, as it ran. Version 5 appended
//! [`ParamsBuilder::keep_lists`](crate::ParamsBuilder::keep_lists) and the positions
//! the neighbour lists were built from, present when the next step may keep the lists
//! instead of searching: loading builds the same lists from them, so the restored run
//! keeps or replaces its lists where the saved one would have. An older file loads
//! with `keep_lists` off: it searches at every step, as it ran. Version 6 appended
//! the skins of the neighbour lists, relative to h: that of the last search (the
//! grid's cells and the lists were built with it) and the one the next search takes
//! (see [`StepDiagnostics::list_skin`](crate::StepDiagnostics::list_skin)). An older
//! file loads with both at 0.1, the one skin it ran with; from its next step on, the
//! restored run chooses its skins as this build does.
//!
//! The payload holds the parameters, the domain and its response, the colliders, the
//! emitters (with how far their newest layer has travelled), every per-particle array
//! (positions, velocities, the vorticity acceleration carried to the next step,
//! densities, ids, in the solver's current order), the next id, the step counter, the
//! simulated time, the origin of the neighbour grid's cells (the grid keeps it from
//! step to step, and the particle order, hence the summation order, depends on it) and
//! the positions the lists were built from, when the next step may keep them, and the
//! lists' skins. Everything else (kernel constants, work arrays) is derived from these. The
//! statistics of the last step ([`Solver::last_diagnostics`](crate::Solver::last_diagnostics))
//! are not saved: a restored solver reports the default until it steps.
//!
//! Loading checks the header, the length and the hash before decoding, then rebuilds
//! the solver through the same validating constructors as user input ([`Params`](crate::Params)
//! builder, [`Domain::new`](crate::Domain::new), [`Collider::new`](crate::Collider::new), [`Emitter::new`](crate::Emitter::new)), and checks every
//! particle (finite, inside the domain, unique ids below the next id). A truncated,
//! corrupted, wrong-version or inconsistent file is an error, never a panic.

use crate::CoreError;

/// The checkpoint format version this build writes and reads.
pub const CHECKPOINT_VERSION: u32 = 6;

/// The oldest checkpoint format version this build reads.
pub const OLDEST_CHECKPOINT_VERSION: u32 = 2;

/// The first eight bytes of every checkpoint.
pub const CHECKPOINT_MAGIC: [u8; 8] = *b"PBFCKPT\0";

/// Length of the fixed header before the payload.
pub const HEADER_LEN: usize = 32;

/// Why bytes are not a checkpoint this build can load. Errors in the content (a
/// parameter out of range, a particle outside the domain) are reported with the
/// [`CoreError`] variant that the same bad value gets from the API.
///
/// ```
/// use pbf_solver::{CheckpointError, CoreError};
/// let err = CoreError::from(CheckpointError::Truncated { expected: 32, found: 3 });
/// assert_eq!(err.to_string(), "checkpoint: truncated: 3 bytes, expected at least 32");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// The file does not start with [`CHECKPOINT_MAGIC`].
    #[error("not a pbf checkpoint: the first bytes are {found:02x?}, expected \"PBFCKPT\\0\"")]
    NotACheckpoint {
        /// The first bytes found (up to eight).
        found: Vec<u8>,
    },
    /// The file was written in another format version.
    #[error(
        "checkpoint format version {found} is not supported (this build reads versions {} to {supported})",
        OLDEST_CHECKPOINT_VERSION
    )]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The file holds a solver of another dimension.
    #[error("checkpoint holds a {found}D solver, expected {expected}D")]
    WrongDimension {
        /// The dimension in the file.
        found: u32,
        /// The dimension asked for.
        expected: usize,
    },
    /// The file is shorter than its header says.
    #[error("truncated: {found} bytes, expected at least {expected}")]
    Truncated {
        /// Bytes the header promises (or the header's own length).
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The file is longer than its header says.
    #[error("{extra} unexpected bytes after the payload")]
    TrailingBytes {
        /// Bytes beyond the payload.
        extra: u64,
    },
    /// The payload's hash differs from the one in the header: the file is corrupted.
    #[error("corrupted: payload hash {computed:#018x} does not match the header's {stored:#018x}")]
    Corrupted {
        /// The hash in the header.
        stored: u64,
        /// The hash of the payload found.
        computed: u64,
    },
    /// The payload does not decode as a solver state.
    #[error("the payload does not decode: {reason}")]
    Decode {
        /// The decoder's message.
        reason: String,
    },
    /// The decoded state contradicts itself.
    #[error("`{field}` is inconsistent: {reason}")]
    Inconsistent {
        /// The field concerned.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Encoding failed (no known cause: reported rather than panicking).
    #[error("the state does not encode: {reason}")]
    Encode {
        /// The encoder's message.
        reason: String,
    },
}

/// FNV-1a, 64 bits: a checksum against truncation and bit flips (not against
/// deliberate tampering).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Parses the header and returns `(dimension, payload)`.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
/// The format version, the dimension and the payload of a checkpoint whose header,
/// length and hash check out.
pub(crate) fn split_header(bytes: &[u8]) -> Result<(u32, u32, &[u8]), CheckpointError> {
    let magic_len = bytes.len().min(8);
    if bytes[..magic_len] != CHECKPOINT_MAGIC[..magic_len] {
        return Err(CheckpointError::NotACheckpoint {
            found: bytes[..magic_len].to_vec(),
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(CheckpointError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let u32_at = |k: usize| u32::from_le_bytes(bytes[k..k + 4].try_into().expect("4 bytes"));
    let u64_at = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if !(OLDEST_CHECKPOINT_VERSION..=CHECKPOINT_VERSION).contains(&version) {
        return Err(CheckpointError::UnsupportedVersion {
            found: version,
            supported: CHECKPOINT_VERSION,
        });
    }
    let dimension = u32_at(12);
    let length = u64_at(16);
    let stored = u64_at(24);
    let found = (bytes.len() - HEADER_LEN) as u64;
    if found < length {
        return Err(CheckpointError::Truncated {
            // Saturating: a corrupted length may be near u64::MAX (found by the
            // `checkpoint_load` fuzz target; see `a_huge_length_is_truncation`).
            expected: (HEADER_LEN as u64).saturating_add(length),
            found: bytes.len() as u64,
        });
    }
    if found > length {
        return Err(CheckpointError::TrailingBytes {
            extra: found - length,
        });
    }
    let payload = &bytes[HEADER_LEN..];
    let computed = fnv1a(payload);
    if computed != stored {
        return Err(CheckpointError::Corrupted { stored, computed });
    }
    Ok((version, dimension, payload))
}

/// The header for a payload.
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) fn header(dimension: usize, payload: &[u8]) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&CHECKPOINT_MAGIC);
    h[8..12].copy_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(dimension as u32).to_le_bytes());
    h[16..24].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    h[24..32].copy_from_slice(&fnv1a(payload).to_le_bytes());
    h
}

impl From<CheckpointError> for CoreError {
    fn from(e: CheckpointError) -> Self {
        CoreError::Checkpoint(Box::new(e))
    }
}

#[cfg(feature = "serde")]
mod state {
    use serde::{Deserialize, Serialize};

    use super::{CheckpointError, header, split_header};
    use crate::solver::RestoredState;

    /// The one skin of the neighbour lists, relative to h, of the builds that wrote
    /// versions 2 to 5.
    pub(super) const LEGACY_SKIN: f32 = 0.1;
    use crate::{
        Acceleration, Backend, Collider, ColliderKind, CoreError, Domain, Emitter, Iterations,
        Params, Relaxation, Shape, Solver,
    };

    #[derive(Serialize, Deserialize)]
    enum IterationsState {
        Fixed(u32),
        Adaptive {
            max_density_error_percent: f32,
            min: u32,
            max: u32,
        },
    }

    #[derive(Serialize, Deserialize)]
    struct ParamsState {
        spacing: f32,
        kernel_radius_rel: f32,
        rest_density: f32,
        time_step: f32,
        iterations: IterationsState,
        gravity: Vec<f32>,
        cfm_rel: f32,
        s_corr_k: f32,
        s_corr_n: u32,
        s_corr_dq_rel: f32,
        xsph_c: f32,
        vorticity_rel: f32,
        unilateral: bool,
        scalar_backend: bool,
        /// `None`: [`Relaxation::Auto`] (resolved again on loading, to the same bits);
        /// `Some(w)`: [`Relaxation::Fixed`]. Added in version 2.
        relaxation: Option<f32>,
    }

    #[derive(Serialize, Deserialize)]
    enum ShapeState {
        Plane {
            point: Vec<f32>,
            normal: Vec<f32>,
        },
        Box {
            center: Vec<f32>,
            half_extents: Vec<f32>,
        },
        Sphere {
            center: Vec<f32>,
            radius: f32,
        },
        Capsule {
            a: Vec<f32>,
            b: Vec<f32>,
            radius: f32,
        },
        Cylinder {
            base: Vec<f32>,
            radius: f32,
            height: f32,
        },
    }

    #[derive(Serialize, Deserialize)]
    struct ColliderState {
        shape: ShapeState,
        /// `None`: solid; `Some((wall_thickness, open_top))`: a container.
        container: Option<(f32, bool)>,
        friction: f32,
        restitution: f32,
    }

    #[derive(Serialize, Deserialize)]
    struct EmitterState {
        origin: Vec<f32>,
        direction: Vec<f32>,
        speed: f32,
        radius: f32,
        start: f32,
        stop: f32,
        travelled: f32,
    }

    #[derive(Serialize, Deserialize)]
    struct SolverState {
        params: ParamsState,
        domain_lo: Vec<f32>,
        domain_hi: Vec<f32>,
        domain_friction: f32,
        domain_restitution: f32,
        colliders: Vec<ColliderState>,
        emitters: Vec<EmitterState>,
        positions: Vec<Vec<f32>>,
        velocities: Vec<Vec<f32>>,
        force: Vec<Vec<f32>>,
        density: Vec<f32>,
        ids: Vec<u64>,
        next_id: u64,
        step: u64,
        time: f64,
        grid_origin: Option<(f32, Vec<f64>)>,
        /// [`Params::xsph_period`]. Added in version 3, last so that a version 2
        /// payload with two more bytes (postcard's `None` and `false`) decodes as
        /// version 3.
        xsph_period: Option<f32>,
        /// [`Acceleration::Chebyshev`]. Added in version 3.
        chebyshev: bool,
        /// [`Params::coarse_correction`]. Added in version 4, last, so that a version
        /// 3 payload with one more byte (postcard's `false`) decodes as version 4.
        coarse_correction: bool,
        /// [`Params::keep_lists`]. Added in version 5.
        keep_lists: bool,
        /// The predicted positions the neighbour lists were built from, when the next
        /// step may keep the lists (see the module docs). Added in version 5, last:
        /// an older payload with two more bytes (postcard's `false` and `None`)
        /// decodes as version 5.
        lists_built: Option<Vec<Vec<f32>>>,
        /// The skin of the last neighbour search and of the next one, relative to h.
        /// Added in version 6: an older payload with the two skins it ran with
        /// (postcard's four bytes each for 0.1) and a byte 0 decodes as version 6.
        list_skins: (f32, f32),
        /// The steps completed when the search that built the lists ran. Added in
        /// version 6, last: 0 for an older file (lists of the first step, or long
        /// past).
        lists_step: u64,
    }

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

    pub(crate) fn encode<const D: usize>(solver: &Solver<D>) -> Result<Vec<u8>, CoreError> {
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
        };
        let payload = postcard::to_allocvec(&state).map_err(|e| CheckpointError::Encode {
            reason: e.to_string(),
        })?;
        let mut out = Vec::with_capacity(super::HEADER_LEN + payload.len());
        out.extend_from_slice(&header(D, &payload));
        out.extend_from_slice(&payload);
        Ok(out)
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

    pub(crate) fn decode<const D: usize>(bytes: &[u8]) -> Result<Solver<D>, CoreError> {
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
        let upgraded;
        let payload = match version {
            2..=5 => {
                let zeros = match version {
                    2 => 5,
                    3 => 3,
                    4 => 2,
                    _ => 0,
                };
                upgraded = [payload, &[0u8; 5][..zeros], &skins].concat();
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
        .with_response(state.domain_friction, state.domain_restitution)?;
        let mut solver = Solver::new(params, domain)?;
        for c in &state.colliders {
            let kind = match c.container {
                None => ColliderKind::Solid,
                Some((wall_thickness, open_top)) => ColliderKind::Container {
                    wall_thickness,
                    open_top,
                },
            };
            let collider =
                Collider::new(shape(&c.shape)?, kind)?.with_response(c.friction, c.restitution)?;
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
}

#[cfg(feature = "serde")]
impl<const D: usize> crate::Solver<D> {
    /// The whole state of the solver as a checkpoint (see the [module docs](self) for
    /// the format). [`from_checkpoint`](Self::from_checkpoint) gives back a solver
    /// whose steps are bit-identical to this one's.
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
        state::encode(self)
    }

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
        state::decode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_are_typed() {
        assert!(matches!(
            split_header(b"PBF"),
            Err(CheckpointError::Truncated {
                expected: 32,
                found: 3
            })
        ));
        assert!(matches!(
            split_header(b"hello world, this is not a checkpoint"),
            Err(CheckpointError::NotACheckpoint { .. })
        ));
        let payload = [1u8, 2, 3];
        let mut file = header(2, &payload).to_vec();
        file.extend_from_slice(&payload);
        assert_eq!(
            split_header(&file),
            Ok((CHECKPOINT_VERSION, 2, &payload[..]))
        );
        let mut second = file.clone();
        second[8] = 2;
        assert_eq!(split_header(&second), Ok((2, 2, &payload[..])));
        let mut flipped = file.clone();
        flipped[33] ^= 4;
        assert!(matches!(
            split_header(&flipped),
            Err(CheckpointError::Corrupted { .. })
        ));
        for other in [1, 7] {
            let mut file = file.clone();
            file[8] = other;
            assert_eq!(
                split_header(&file),
                Err(CheckpointError::UnsupportedVersion {
                    found: u32::from(other),
                    supported: CHECKPOINT_VERSION
                })
            );
        }
        assert_eq!(
            split_header(&file[..34]),
            Err(CheckpointError::Truncated {
                expected: 35,
                found: 34
            })
        );
        file.push(0);
        assert_eq!(
            split_header(&file),
            Err(CheckpointError::TrailingBytes { extra: 1 })
        );
    }

    #[cfg(feature = "serde")]
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
        let v6 = solver.checkpoint().unwrap();
        // The payload without the lists' two skins and step (a byte: below 128), which
        // end it.
        assert!(solver.steps() < 128);
        let payload = &v6[HEADER_LEN..v6.len() - 9];
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
        let skin = state::LEGACY_SKIN.to_le_bytes();
        let mut wide = with_version(6, &[payload, &skin, &skin, &[0]].concat());
        assert_eq!(wide.positions(), solver.positions());
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
    fn a_huge_length_is_truncation() {
        // Regression (fuzz target `checkpoint_load`): a length field near u64::MAX
        // overflowed `HEADER_LEN + length` while the error was built.
        let mut file = header(3, &[]).to_vec();
        file[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        file.extend_from_slice(&[0; 10]);
        assert_eq!(
            split_header(&file),
            Err(CheckpointError::Truncated {
                expected: u64::MAX,
                found: 42
            })
        );
    }
}
