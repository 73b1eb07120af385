//! The serialised state: the serde records a checkpoint's payload holds, field by
//! field in the order postcard encodes them.

use serde::{Deserialize, Serialize};

/// The one skin of the neighbour lists, relative to h, of the builds that wrote
/// versions 2 to 5.
pub(super) const LEGACY_SKIN: f32 = 0.1;

#[derive(Serialize, Deserialize)]
pub(super) enum IterationsState {
    Fixed(u32),
    Adaptive {
        max_density_error_percent: f32,
        min: u32,
        max: u32,
    },
}

#[derive(Serialize, Deserialize)]
pub(super) struct ParamsState {
    pub(super) spacing: f32,
    pub(super) kernel_radius_rel: f32,
    pub(super) rest_density: f32,
    pub(super) time_step: f32,
    pub(super) iterations: IterationsState,
    pub(super) gravity: Vec<f32>,
    pub(super) cfm_rel: f32,
    pub(super) s_corr_k: f32,
    pub(super) s_corr_n: u32,
    pub(super) s_corr_dq_rel: f32,
    pub(super) xsph_c: f32,
    pub(super) vorticity_rel: f32,
    pub(super) unilateral: bool,
    pub(super) scalar_backend: bool,
    /// `None`: [`Relaxation::Auto`](crate::Relaxation::Auto) (resolved again on
    /// loading, to the same bits); `Some(w)`:
    /// [`Relaxation::Fixed`](crate::Relaxation::Fixed). Added in version 2.
    pub(super) relaxation: Option<f32>,
}

#[derive(Serialize, Deserialize)]
pub(super) enum ShapeState {
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
pub(super) struct ColliderState {
    pub(super) shape: ShapeState,
    /// `None`: solid; `Some((wall_thickness, open_top))`: a container.
    pub(super) container: Option<(f32, bool)>,
    pub(super) friction: f32,
    pub(super) restitution: f32,
}

#[derive(Serialize, Deserialize)]
pub(super) struct EmitterState {
    pub(super) origin: Vec<f32>,
    pub(super) direction: Vec<f32>,
    pub(super) speed: f32,
    pub(super) radius: f32,
    pub(super) start: f32,
    pub(super) stop: f32,
    pub(super) travelled: f32,
}

#[derive(Serialize, Deserialize)]
pub(super) struct SolverState {
    pub(super) params: ParamsState,
    pub(super) domain_lo: Vec<f32>,
    pub(super) domain_hi: Vec<f32>,
    pub(super) domain_friction: f32,
    pub(super) domain_restitution: f32,
    pub(super) colliders: Vec<ColliderState>,
    pub(super) emitters: Vec<EmitterState>,
    pub(super) positions: Vec<Vec<f32>>,
    pub(super) velocities: Vec<Vec<f32>>,
    pub(super) force: Vec<Vec<f32>>,
    pub(super) density: Vec<f32>,
    pub(super) ids: Vec<u64>,
    pub(super) next_id: u64,
    pub(super) step: u64,
    pub(super) time: f64,
    pub(super) grid_origin: Option<(f32, Vec<f64>)>,
    /// [`Params::xsph_period`](crate::Params::xsph_period). Added in version 3, last
    /// so that a version 2 payload with two more bytes (postcard's `None` and
    /// `false`) decodes as version 3.
    pub(super) xsph_period: Option<f32>,
    /// [`Acceleration::Chebyshev`](crate::Acceleration::Chebyshev). Added in version 3.
    pub(super) chebyshev: bool,
    /// [`Params::coarse_correction`](crate::Params::coarse_correction). Added in
    /// version 4, last, so that a version 3 payload with one more byte (postcard's
    /// `false`) decodes as version 4.
    pub(super) coarse_correction: bool,
    /// [`Params::keep_lists`](crate::Params::keep_lists). Added in version 5.
    pub(super) keep_lists: bool,
    /// The predicted positions the neighbour lists were built from, when the next
    /// step may keep the lists (see the module docs). Added in version 5, last:
    /// an older payload with two more bytes (postcard's `false` and `None`)
    /// decodes as version 5.
    pub(super) lists_built: Option<Vec<Vec<f32>>>,
    /// The skin of the last neighbour search and of the next one, relative to h.
    /// Added in version 6: an older payload with the two skins it ran with
    /// (postcard's four bytes each for 0.1) and a byte 0 decodes as version 6.
    pub(super) list_skins: (f32, f32),
    /// The steps completed when the search that built the lists ran. Added in
    /// version 6: 0 for an older file (lists of the first step, or long past).
    pub(super) lists_step: u64,
    /// [`Params::viscosity`](crate::Params::viscosity). Added in version 7: an
    /// older file ran without one (postcard's four bytes 0 for 0.0).
    pub(super) viscosity: f32,
    /// Whether each face of the domain is no-slip (`[axis][lo, hi]` flattened), or
    /// empty when every face is free-slip. Added in version 7: an older file had
    /// free-slip walls (postcard's one byte 0 for an empty list).
    pub(super) domain_no_slip: Vec<bool>,
    /// Whether each collider is no-slip, in order, or empty when none is. Added in
    /// version 7 (one byte 0 for an older file).
    pub(super) colliders_no_slip: Vec<bool>,
    /// [`Domain::periodic`](crate::Domain::periodic): one flag an axis, or none
    /// (no periodic axis). Added in version 7.
    pub(super) domain_periodic: Vec<bool>,
    /// [`Domain::wall_velocity`](crate::Domain::wall_velocity) of every face
    /// (`[axis][lo, hi][component]` flattened), or empty when every face is at rest.
    /// Added in version 8, last: an older payload with one more byte 0 (postcard's
    /// empty sequence) decodes as version 8.
    pub(super) domain_wall_velocities: Vec<f32>,
}
