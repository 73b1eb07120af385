//! The Position Based Fluids solver (Macklin & Müller 2013) in 2D and 3D, assembled
//! from the neighbour search of `pbf-grid` and the kernels of `pbf-kernels`.
//!
//! One step (see [`Solver::step`]): external forces and prediction, collisions,
//! neighbour search on the predicted positions (Morton-sorted cell lists, every
//! per-particle array reordered, then each particle's neighbours within h(1 + skin)
//! sifted into a list that the later passes gather their lanes from, the skin 4-10%
//! of h as the flow allows; checked before every iteration: the pairs that particles
//! moving more than half the skin bring within h are added, or when there are many,
//! the search runs again, so no pair within h is ever missed), `iterations` Jacobi passes of the density constraint
//! (lambda with CFM relaxation, position deltas with the tensile-instability term
//! `s_corr`, collisions inside the loop), velocity update with friction and
//! restitution at contacts, vorticity confinement and XSPH viscosity.
//!
//! - Parameters carry the sources' defaults and are taken relative to the kernel
//!   radius where they carry units ([`Params`]), so a scene scaled by `s` behaves the
//!   same, scaled.
//! - The neighbour passes run on SIMD lanes ([`Backend::Lanes`]: sixteen particles in
//!   one AVX-512 register where the CPU has AVX-512F, checked at run time, else eight
//!   on `f32x8`) or through the scalar reference ([`Backend::Scalar`]); all come from
//!   one generic source and give the same bits. A lane holds one particle, which walks
//!   its neighbour list in order: the lists are stored by columns, sixteen particles'
//!   `k`-th neighbours side by side, and the neighbours' positions are gathered from
//!   packed quads, one sixteen-byte load per neighbour transposed into lanes.
//! - With the `rayon` feature (default) the passes run in parallel; the output is
//!   bit-identical for any thread count. A step allocates nothing once the particle
//!   count is steady (`tests/allocation.rs` counts).
//! - Bad input is a [`CoreError`] naming the field and the value, never a panic or a
//!   silent clamp, and a failed call leaves the solver as it was: the table of every
//!   bad input, its error and its test is `docs/ERRORS.md` in the repository.
//! - With the `serde` feature, `Solver::checkpoint` saves the whole state in a
//!   versioned format ([`checkpoint`]) and `Solver::from_checkpoint` restores it; the
//!   restored run continues bit-identically.
//!
//! # Example
//! ```
//! use pbf_solver::{Collider, ColliderKind, Domain, Params, Shape, Solver};
//!
//! let params = Params::<3>::builder(0.05).build()?; // spacing 5 cm, h = 10 cm
//! let mut solver = Solver::new(params, Domain::new([0.0; 3], [1.0, 1.0, 0.5])?)?;
//! solver.add_collider(Collider::new(
//!     Shape::Sphere { center: [0.7, 0.1, 0.25], radius: 0.1 },
//!     ColliderKind::Solid,
//! )?)?;
//! solver.add_block([0.0; 3], [0.3, 0.5, 0.5], [0.0; 3])?;
//! for _ in 0..5 {
//!     let stats = solver.step()?;
//!     assert!(stats.max_speed.is_finite());
//! }
//! let [x, y, z] = solver.positions();
//! assert_eq!(x.len(), solver.len());
//! assert!(y.iter().all(|y| *y > 0.0) && z.iter().all(|z| *z < 0.5));
//! # Ok::<(), pbf_solver::CoreError>(())
//! ```
#![deny(missing_docs)]
// No `unsafe` here: the SIMD instructions are `pbf-kernels`' alone, and the passes
// gather through `pbf-grid`'s checked views of the lists.
#![forbid(unsafe_code)]

/// The crate README's example, compiled and run as a doc test (the workspace README
/// shows the same example: `tests/readme.rs` holds the two equal).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod boundary;
pub mod checkpoint;
mod coarse;
mod collide;
mod constraint;
mod diagnostics;
mod emitter;
mod error;
pub mod flows;
#[doc(hidden)]
pub mod fuzzing;
mod lanes;
/// The neighbour lists of `pbf-grid`, under the paths the passes use.
mod lists {
    pub(crate) use pbf_grid::lists::*;
}
/// The parallel loops of `pbf-grid`, under the paths the passes use.
mod parallel {
    pub(crate) use pbf_grid::parallel::*;
}
mod params;
pub mod scenes;
mod solver;
mod viscosity;
mod vorticity;
mod xsph;

pub use checkpoint::{CHECKPOINT_VERSION, CheckpointError, OLDEST_CHECKPOINT_VERSION};
pub use collide::{Collider, ColliderKind, Domain, Shape, Wall};
pub use diagnostics::{PhaseTimes, StepDiagnostics};
pub use emitter::{Emitter, MAX_LAYER_PARTICLES, MAX_LAYERS_PER_STEP};
pub use error::CoreError;
pub use params::{
    Acceleration, Backend, Iterations, Params, ParamsBuilder, Relaxation, XSPH_PERIOD,
};
pub use solver::{MAX_PARTICLES, Solver};
