//! The error type of this crate.

/// Why a [`Kernel`](crate::Kernel) or [`TensileCorrection`](crate::TensileCorrection)
/// could not be built. Every variant names the offending field and its value.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// The dimension is neither 2 nor 3.
    #[error("dimension {dim} is not supported: use 2 or 3")]
    UnsupportedDimension {
        /// The requested dimension.
        dim: usize,
    },
    /// The kernel radius `h` is not a positive finite number.
    #[error("kernel radius h must be positive and finite, got {value}")]
    InvalidRadius {
        /// The rejected radius.
        value: f32,
    },
    /// The kernel radius is so small or so large that a kernel constant (such as
    /// `315 / (64 pi h^9)`) overflows or underflows single precision.
    #[error(
        "kernel radius h = {value} is outside the range where the kernel constants fit in f32 (about 1e-4 to 1e4 in 3D)"
    )]
    RadiusOutOfRange {
        /// The rejected radius.
        value: f32,
    },
    /// A parameter of the tensile-instability term is out of range.
    #[error("tensile correction parameter `{field}` = {value} is invalid: {reason}")]
    InvalidTensileParameter {
        /// The field name: `k`, `n` or `dq_rel`.
        field: &'static str,
        /// The rejected value.
        value: f64,
        /// What the field must satisfy.
        reason: &'static str,
    },
    /// A lane backend this CPU does not run was asked for.
    #[error("the {lanes} lanes are not available on this CPU")]
    LanesUnavailable {
        /// The backend's name ([`LaneKind::name`](crate::LaneKind::name)).
        lanes: &'static str,
    },
}
