//! Boundaries: the axis-aligned [`Domain`] no particle ever leaves, and static
//! [`Collider`]s described by signed distance functions.
//!
//! Response: positions are projected out of solids during prediction and after every
//! constraint iteration, keeping particle centres one particle radius (`s / 2`) from
//! every surface. After the velocity update, a particle in contact (at that distance
//! or closer) that still moves into the surface has its normal velocity reflected with
//! `restitution` and its tangential velocity reduced by Coulomb friction: `|v_t|`
//! shrinks by `friction * (1 + restitution) * |v_n|`, down to 0. Between that distance
//! and 1% of `h` farther the response fades out linearly, so that the velocity is a
//! continuous function of the position.
//!
//! Cost: most particles are far from every collider most of the time, so each
//! collider keeps bounds computed once from its shape (a box around its solid part,
//! and the convex region it leaves free: a container's cavity, a plane's front side).
//! A point, a move or a whole block of particles that the bounds show clear skips the
//! signed distance and the sweep; the result is the same bit for bit, because a
//! distance of at least `h` adds nothing to a density and a clear move is left as it
//! is.
//!
//! One concept a file: [`Domain`] in `domain.rs`; [`Shape`] and its signed distances
//! in `shape.rs`; [`Collider`] and [`ColliderKind`] in `collider.rs`; a collider's
//! precomputed bounds in `bounds.rs`; the swept projection (continuous collision) in
//! `sweep.rs`; its shortcut for a box container's cavity in `cavity.rs`; the faces of
//! a cavity that meet at its inner edges, for the walls' density share, in
//! `edges.rs`; blocks of moves confined at once (`confine_block`) in `block.rs`; the
//! velocity response at a contact in `response.rs`; the vector arithmetic they share
//! in `vector.rs`.

mod block;
mod bounds;
mod cavity;
mod collider;
mod domain;
mod edges;
mod response;
mod shape;
mod sweep;
mod vector;

pub(crate) use block::{bounding_box, confine_block, for_each_block};
pub use collider::{Collider, ColliderKind};
pub use domain::{Domain, Wall};
pub(crate) use response::{contact_weight, respond};
pub use shape::Shape;
