//! The one error type of the crate.

/// What can go wrong when building or querying a [`Grid`](crate::Grid).
///
/// Every fallible call checks its input before it changes anything, so a call that
/// returns an error leaves the grid (or neighbour list) as it was.
///
/// ```
/// use pbf_grid::{Grid, GridError};
///
/// let mut grid = Grid::<2>::new();
/// let x = [0.0, 1.0, f32::INFINITY];
/// let y = [0.0, f32::NAN, 2.0];
/// // The first bad point is index 1 (axis 1), even though index 2 is bad too.
/// assert!(matches!(
///     grid.rebuild([&x, &y], 1.0),
///     Err(GridError::NonFinitePosition { index: 1, axis: 1, .. })
/// ));
/// assert_eq!(
///     grid.rebuild([&x[..1], &y[..1]], -1.0),
///     Err(GridError::InvalidRadius { value: -1.0 })
/// );
/// ```
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GridError {
    /// A position coordinate is NaN or infinite. `index` is the smallest such point
    /// index and `axis` the smallest bad axis of that point.
    #[error("position {index} has the non-finite coordinate {value} on axis {axis}")]
    NonFinitePosition {
        /// Index of the point in the arrays given to the call.
        index: usize,
        /// Axis (0 = x, 1 = y, 2 = z) of the bad coordinate.
        axis: usize,
        /// The bad value.
        value: f32,
    },
    /// The radius `h` is not a positive finite number whose square is a positive
    /// finite `f32`.
    #[error("radius h = {value} is invalid: it must be positive and finite, and so must h * h")]
    InvalidRadius {
        /// The radius that was given.
        value: f32,
    },
    /// The coordinate arrays of one point set do not all have the same length.
    #[error("coordinate array of axis {axis} has {found} entries, expected {expected}")]
    LengthMismatch {
        /// The axis whose array has the wrong length.
        axis: usize,
        /// The length of the reference (axis 0 for a rebuild, the grid's point count
        /// for queries).
        expected: usize,
        /// The length that was found.
        found: usize,
    },
    /// The points span more cells along `axis` than a Morton key can hold.
    #[error(
        "the points span {cells} cells along axis {axis}, more than the Morton key's {} cells",
        *max as u64 + 1
    )]
    OutOfRange {
        /// The axis along which the extent is too large.
        axis: usize,
        /// The number of cells that would be needed along that axis.
        cells: f64,
        /// The largest cell coordinate a key can hold ([`MAX_COORD3`](crate::morton::MAX_COORD3)
        /// or [`MAX_COORD2`](crate::morton::MAX_COORD2)).
        max: u32,
    },
    /// The grid's dimension is neither 2 nor 3.
    #[error("dimension {dim} is not supported: the grid works in 2 or 3 dimensions")]
    UnsupportedDimension {
        /// The dimension that was asked for.
        dim: usize,
    },
    /// More points than a `u32` index can name (at most `u32::MAX - 1`).
    #[error("{count} points are too many: at most {} are supported", u32::MAX - 1)]
    TooManyParticles {
        /// The number of points that was given.
        count: usize,
    },
    /// A per-point array passed to a reorder has the wrong length.
    #[error("per-point array has {found} entries, the grid has {expected} points")]
    DataLength {
        /// The grid's point count.
        expected: usize,
        /// The array's length.
        found: usize,
    },
    /// A query point has a NaN or infinite coordinate.
    #[error("query point has the non-finite coordinate {value} on axis {axis}")]
    NonFiniteQuery {
        /// Axis of the bad coordinate.
        axis: usize,
        /// The bad value.
        value: f32,
    },
    /// A neighbour list would hold more entries than its `u32` offsets can count.
    #[error("the neighbour list would hold {count} entries, more than u32 offsets can count")]
    TooManyNeighbours {
        /// The number of entries (a lower bound when it is counted per chunk).
        count: u64,
    },
    /// A periodic axis whose bounds are not finite or whose period `hi - lo` is not a
    /// positive finite `f32` (see [`Periodic::new`](crate::Periodic::new)).
    #[error("periodic axis {axis}: the period {value} is not a positive finite number")]
    InvalidPeriod {
        /// The axis.
        axis: usize,
        /// Its period `hi - lo`.
        value: f32,
    },
    /// A saved cell origin (see [`Grid::with_cell_origin`](crate::Grid::with_cell_origin))
    /// is not a finite whole number of cells.
    #[error("cell origin {value} on axis {axis} is not a finite whole number of cells")]
    InvalidOrigin {
        /// The axis of the bad coordinate.
        axis: usize,
        /// The bad value.
        value: f64,
    },
}
