//! [`CheckpointError`]: why bytes are not a checkpoint this build can load.

use super::OLDEST_CHECKPOINT_VERSION;
use crate::CoreError;

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
    /// The file does not start with [`CHECKPOINT_MAGIC`](super::CHECKPOINT_MAGIC).
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

impl From<CheckpointError> for CoreError {
    fn from(e: CheckpointError) -> Self {
        CoreError::Checkpoint(Box::new(e))
    }
}
