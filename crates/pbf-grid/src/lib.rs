//! Morton-sorted cell lists for fixed-radius neighbour search in 2D and 3D.
//!
//! [`Grid`] bins points into cells of side `h`, sorts them into Morton (Z-curve)
//! order of their cells with a parallel radix sort, and records for every occupied
//! cell its contiguous range of sorted points and the merged ranges of its `3^D`
//! neighbour cells. It rebuilds from scratch every step (a few milliseconds per
//! million points), reusing all its buffers, and gives neighbours three ways:
//!
//! - per cell, the candidate ranges ([`Grid::candidate_ranges`]) for cell-blocked
//!   SIMD passes that test every candidate themselves;
//! - per point, exact queries ([`Grid::for_each_neighbour`], and [`Grid::query`] for
//!   arbitrary points);
//! - as a CSR neighbour list ([`Grid::neighbour_list`], [`NeighbourList`]).
//!
//! # One neighbour predicate
//!
//! A point `j` is a neighbour of `i` when `within(r2, h * h)` holds, where `r2` is
//! [`distance2`] of the two points: **strictly** `r^2 < h^2`. The smoothing kernels are
//! zero at `r = h`, so the boundary case changes nothing there, and the grid, the
//! brute-force reference of the tests and the kernels all use this one function.
//!
//! # Layout and guarantees
//!
//! - No allocation in steady state: a rebuild reserves every buffer, once per point
//!   count, for the most that many points can need (one cell per point, every
//!   neighbour cell a separate candidate range, every point of a chunk changing cell),
//!   so that rebuilding with as many points never allocates, however the points move.
//!   That is up to about 330 bytes per point in 3D of reserved capacity, most of it
//!   address space that stays untouched (pages become resident when first written).
//! - Only occupied cells are stored; a cell is found by its Morton key in a table
//!   sized from the occupied-cell count, so memory follows the number of points, not
//!   the volume of the bounding box (two points a kilometre apart with `h` = 1 mm
//!   cost as much as two points side by side).
//! - Cells are `h (1 + 2^-12)` wide: the tiny slack absorbs the rounding of the `f32`
//!   predicate and the `f64` cell mapping, so two points within `h` are never more
//!   than one cell apart, even far from the origin.
//! - Parallel with rayon, gather-only (no atomics, no locks, no per-point `Vec`) and
//!   deterministic: the same input gives the same permutation, cells and lists for
//!   any number of threads.
//! - No `unsafe`: parallel writers get disjoint `&mut` slices.
//! - Bad input (NaN or infinite coordinates, a bad radius, mismatched lengths, an
//!   extent beyond the Morton range) is a [`GridError`], never a panic or a wrapped key.
//!
//! # What a rebuild does
//!
//! 1. One parallel pass finds the bounding box and the first non-finite coordinate
//!    (`frame.rs`); the cell origin snaps to whole cells and is kept from the last
//!    rebuild while the points stay near it, so that cells stay put between steps.
//! 2. Morton keys of all points, vectorised, from table look-ups (`keys.rs`).
//! 3. The sort into (key, index) order. When the input is the last rebuild's sorted
//!    order and at most 1 in 4 points changed cell (a simulation step), only those
//!    points are sorted and merged into the others (`resort.rs`); otherwise a
//!    parallel LSD radix sort over the key bits in use (`sort.rs`). Both give the one
//!    stable order.
//! 4. The permutation, the cells and each point's cell in one pass (`cells.rs`).
//! 5. The cell table (`cell_table.rs`) and every cell's merged candidate ranges,
//!    visited in Morton order without sorting (`candidates.rs`).
//!
//! # Example
//!
//! ```
//! use pbf_grid::{Grid, NeighbourList, within};
//!
//! // Points of a 2D lattice with spacing 1, in no particular order.
//! let mut x: Vec<f32> = (0..100).map(|i| ((i * 37) % 100 % 10) as f32).collect();
//! let mut y: Vec<f32> = (0..100).map(|i| ((i * 37) % 100 / 10) as f32).collect();
//! let h = 1.5; // sees the 4 edge and 4 diagonal lattice neighbours
//!
//! let mut grid = Grid::<2>::new();
//! grid.rebuild([&x, &y], h)?;
//! // Put the positions (and any other per-point array) into Morton order.
//! let mut scratch = Vec::new();
//! grid.reorder(&mut x, &mut scratch)?;
//! grid.reorder(&mut y, &mut scratch)?;
//!
//! // A cell-blocked pass: every point of a cell tests the same candidates.
//! let mut interior = 0;
//! for (cell, points) in grid.cells().iter().enumerate() {
//!     for i in points.as_range() {
//!         let mut count = 0;
//!         for range in grid.candidate_ranges(cell) {
//!             for j in range.as_range() {
//!                 let r2 = pbf_grid::distance2([x[i], y[i]], [x[j], y[j]]);
//!                 count += usize::from(within(r2, h * h) && j != i);
//!             }
//!         }
//!         interior += usize::from(count == 8);
//!     }
//! }
//! assert_eq!(interior, 64); // the 8 x 8 points off the border
//!
//! // The same neighbours as a CSR list.
//! let mut list = NeighbourList::new();
//! grid.neighbour_list([&x, &y], &mut list)?;
//! assert_eq!(list.total(), 2 * (2 * 9 * 10 + 2 * 9 * 9)); // edges + diagonals, both ways
//! # Ok::<(), pbf_grid::GridError>(())
//! ```
#![deny(missing_docs)]
// No `unsafe`: the SIMD instructions and the unchecked loads live in `pbf-kernels`;
// the lists gather through indices checked once a group (`pbf_kernels::Bounded`).
#![forbid(unsafe_code)]

/// The README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod candidates;
mod cell_table;
mod cells;
mod error;
mod frame;
#[doc(hidden)]
pub mod fuzzing;
mod grid;
mod keys;
pub mod lists;
pub mod morton;
mod neighbour_list;
pub mod parallel;
mod parts;
mod periodic;
mod resort;
mod sort;

pub use cells::CellRange;
pub use error::GridError;
pub use grid::Grid;
pub use neighbour_list::NeighbourList;
pub use periodic::Periodic;

/// The one support predicate and the one squared distance of the project, defined in
/// `pbf-kernels` and used by the grid, the neighbour lists and the brute-force
/// references alike: a pair interacts when `distance2 < h^2`, strictly.
pub use pbf_kernels::{distance2, within};
