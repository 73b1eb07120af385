//! Checkpoints: the whole state of a [`Solver`](crate::Solver) as bytes, restored so that
//! the run continues bit for bit as if it had never stopped (feature `serde`).
//!
//! # Format (version 8)
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
//! restored run chooses its skins as this build does. Version 7 appended the
//! domain's periodic axes ([`Domain::with_periodic`](crate::Domain::with_periodic)),
//! one flag an axis, or an empty sequence when no axis is periodic; an older file
//! loads with none, as it ran. Version 8 appended the velocities of the domain's
//! faces ([`Domain::with_wall_velocity`](crate::Domain::with_wall_velocity)), or an
//! empty sequence when every face is at rest; an older file loads with every face
//! at rest, as it ran.
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
//!
//! One concept a file: the header, the hash and the versions in `format.rs`;
//! [`CheckpointError`] in `error.rs`; the serialised records of the payload in
//! `state.rs`; saving (`Solver::checkpoint`) in `save.rs`; loading, with the upgrade
//! of an older version's payload (`Solver::from_checkpoint`), in `load.rs`.

mod error;
mod format;
#[cfg(feature = "serde")]
mod load;
#[cfg(feature = "serde")]
mod save;
#[cfg(feature = "serde")]
mod state;

pub use error::CheckpointError;
#[cfg(feature = "serde")]
pub(crate) use format::header;
pub use format::{CHECKPOINT_MAGIC, CHECKPOINT_VERSION, HEADER_LEN, OLDEST_CHECKPOINT_VERSION};
