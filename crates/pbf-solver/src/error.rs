//! The error type of the solver crate.

use crate::CheckpointError;
use pbf_grid::GridError;
use pbf_kernels::KernelError;

/// Everything that can go wrong when building or stepping a solver. Each variant names
/// the field or particle concerned and the value that was rejected; a call that
/// returns an error leaves the solver as it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoreError {
    /// A parameter is out of its documented range.
    #[error("parameter `{field}` = {value} is invalid: {reason}")]
    InvalidParameter {
        /// The parameter's name, as in [`ParamsBuilder`](crate::ParamsBuilder).
        field: &'static str,
        /// The rejected value.
        value: f64,
        /// The range it must lie in.
        reason: &'static str,
    },
    /// A particle's position or velocity is NaN or infinite.
    #[error("particle {index}: `{field}` component {axis} is not finite ({value})")]
    NonFiniteParticle {
        /// The index in the array that was passed in.
        index: usize,
        /// `position` or `velocity`.
        field: &'static str,
        /// The axis (0 = x).
        axis: usize,
        /// The rejected value.
        value: f32,
    },
    /// A particle lies outside the simulation domain.
    #[error("particle {index}: position {position:?} lies outside the domain {lo:?}..{hi:?}")]
    OutsideDomain {
        /// The index in the array that was passed in.
        index: usize,
        /// Its position.
        position: Vec<f32>,
        /// The domain's lower corner.
        lo: Vec<f32>,
        /// The domain's upper corner.
        hi: Vec<f32>,
    },
    /// Arrays passed together have different lengths.
    #[error("`{field}` has {found} entries, expected {expected}")]
    LengthMismatch {
        /// The array's name.
        field: &'static str,
        /// The required length.
        expected: usize,
        /// The length passed.
        found: usize,
    },
    /// More particles than the 32-bit indices of the neighbour search can address.
    #[error("{count} particles exceed the supported maximum of {max}")]
    TooManyParticles {
        /// The particle count asked for.
        count: usize,
        /// The maximum.
        max: usize,
    },
    /// A collider or the domain has a degenerate or non-finite size.
    #[error("collider {index}: `{field}` = {value} is invalid: {reason}")]
    InvalidCollider {
        /// The collider's index (`usize::MAX` for the domain).
        index: usize,
        /// The field's name.
        field: &'static str,
        /// The rejected value.
        value: f64,
        /// What it must satisfy.
        reason: &'static str,
    },
    /// An emitter's description is invalid.
    #[error("emitter: `{field}` = {value} is invalid: {reason}")]
    InvalidEmitter {
        /// The field's name.
        field: &'static str,
        /// The rejected value.
        value: f64,
        /// What it must satisfy.
        reason: &'static str,
    },
    /// The simulation became unstable: a velocity is no longer finite. The state is
    /// the one the step produced, kept for inspection.
    #[error(
        "step {step}: the simulation diverged (particle id {id} has a non-finite velocity); reduce the time step or raise the iteration count"
    )]
    Diverged {
        /// The step that diverged.
        step: u64,
        /// The id of the first particle with a non-finite velocity.
        id: u64,
    },
    /// The fluid collapsed into clumps: the particles around one reached sixteen times
    /// the rest density, where PBF holds it within a few percent. This is a diverging
    /// run (typically a time step too large for the flow's speed); the step stops
    /// before the neighbour lists, whose memory grows with the square of a clump, take
    /// it all. The state is the one the step had reached (predicted and sorted), kept
    /// for inspection.
    #[error(
        "step {step}: the fluid collapsed around particle id {id} ({candidates} particles in the cells around it, {limit} allowed = 16 times the rest density); reduce the time step or raise the iteration count"
    )]
    Collapsed {
        /// The step that stopped.
        step: u64,
        /// The id of the particle with the most crowded neighbourhood found first.
        id: u64,
        /// The particles in the `3^D` search cells around it.
        candidates: u64,
        /// The most allowed (16 times their number at rest density).
        limit: u64,
    },
    /// The neighbour search rejected the positions.
    #[error("neighbour search: {0}")]
    Grid(#[from] GridError),
    /// The kernel rejected the parameters.
    #[error("kernel: {0}")]
    Kernel(#[from] KernelError),
    /// Bytes given as a checkpoint are not one this build can load (truncated,
    /// corrupted, another version or dimension). Bad values inside a well-formed
    /// checkpoint get the variant the same value gets from the API.
    #[error("checkpoint: {0}")]
    Checkpoint(Box<CheckpointError>),
}
