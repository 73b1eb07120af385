//! From positions to integer cell coordinates: the bounding box, the validation of
//! the coordinates, and the mapping `x -> cell` shared by the rebuild and the
//! queries.
//!
//! # Why the cells are a hair larger than `h`
//!
//! The neighbour predicate [`within`](crate::within) is evaluated in `f32`, the cell
//! coordinates in `f64`. Rounding can make the `f32` test accept a pair whose exact
//! distance exceeds `h` by a few parts in 10^7, and the `f64` mapping can be off by
//! a few parts in 10^16 of the coordinate. Cells of side `h (1 + 2^-12)` leave a
//! margin of 2.4e-4 cells for both, so two points that pass the predicate can never
//! land more than one cell apart on any axis. (Beyond about 10^12 cells from zero
//! the `f64` error grows past the margin, but there adjacent `f32` values are already
//! thousands of cells apart, so only equal coordinates can be neighbours, and equal
//! coordinates always get equal cells.) The larger cells cost 0.07 % more candidates.

use rayon::prelude::*;

use crate::GridError;
use crate::morton;

/// Relative amount by which a cell is larger than the search radius.
const CELL_MARGIN: f64 = 1.0 / 4096.0;

/// Points per parallel task in the bounding-box pass.
const BOUNDS_CHUNK: usize = 1 << 15;

/// `1 / cell side` for radius `h`: the one formula, so that a frame restored from a
/// saved origin compares equal to the one that was saved.
pub(crate) fn inverse_cell(h: f32) -> f64 {
    1.0 / (f64::from(h) * (1.0 + CELL_MARGIN))
}

/// How positions map to integer cell coordinates.
///
/// Cell coordinate on `axis` of `x`: `trunc(x as f64 * inv_cell - base[axis])`, where
/// `base` is a whole number of cells at or below `floor(min as f64 * inv_cell)`.
///
/// Morton order is not translation invariant: moving the origin by one cell reorders
/// nearly every point. So the origin is snapped to whole cells (an unchanged point
/// keeps its cell when the bounding box moves), placed a few cells below the box
/// when it has to move (`extent / 16`, at least 1), and kept from the previous
/// rebuild while the box stays above it and not too far (`extent / 8`, at least 2
/// cells). A fluid whose lowest point jitters about a wall then keeps one origin,
/// and its order changes only where points really change cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CellFrame<const D: usize> {
    /// `1 / (h (1 + CELL_MARGIN))`; 0 for a frame that holds no point.
    pub inv_cell: f64,
    /// The origin, in whole cells, per axis.
    pub base: [f64; D],
    /// The largest occupied cell coordinate per axis.
    pub extent: [u32; D],
}

impl<const D: usize> Default for CellFrame<D> {
    fn default() -> Self {
        Self {
            inv_cell: 0.0,
            base: [0.0; D],
            extent: [0; D],
        }
    }
}

impl<const D: usize> CellFrame<D> {
    /// The frame for points with the given per-axis `(min, max)` and radius `h`,
    /// keeping `previous`'s origin where it still fits. Errors when the extent
    /// exceeds what a Morton key can hold.
    pub fn new(bounds: [(f32, f32); D], h: f32, previous: &Self) -> Result<Self, GridError> {
        let inv_cell = inverse_cell(h);
        let same_size = previous.inv_cell == inv_cell;
        let mut base = [0.0; D];
        let mut extent = [0; D];
        let limit = f64::from(morton::max_coord::<D>()) + 1.0;
        for axis in 0..D {
            let (lo, hi) = bounds[axis];
            let lo_cell = (f64::from(lo) * inv_cell).floor();
            let hi_scaled = f64::from(hi) * inv_cell;
            let top = hi_scaled - lo_cell;
            if top >= limit {
                return Err(GridError::OutOfRange {
                    axis,
                    cells: top.floor() + 1.0,
                    max: morton::max_coord::<D>(),
                });
            }
            let span = top.floor();
            let old = previous.base[axis];
            let keep = same_size
                && old <= lo_cell
                && lo_cell - old <= (span / 8.0).floor().max(2.0)
                && hi_scaled - old < limit;
            base[axis] = if keep {
                old
            } else {
                let below = lo_cell - (span / 16.0).floor().max(1.0);
                if hi_scaled - below < limit {
                    below
                } else {
                    lo_cell
                }
            };
            extent[axis] = (hi_scaled - base[axis]) as u32;
        }
        Ok(Self {
            inv_cell,
            base,
            extent,
        })
    }

    /// Cell coordinate on `axis` of a coordinate inside the bounding box the frame
    /// was made from. Truncation equals floor here because the value is >= 0.
    #[inline(always)]
    pub fn coord(&self, axis: usize, x: f32) -> u32 {
        (f64::from(x) * self.inv_cell - self.base[axis]) as u32
    }

    /// Cell coordinate of any finite coordinate, possibly outside the box (negative
    /// or beyond `extent`); saturates far away, which is still outside.
    #[inline]
    pub fn coord_signed(&self, axis: usize, x: f32) -> i64 {
        (f64::from(x) * self.inv_cell - self.base[axis]).floor() as i64
    }

    /// The number of low key bits any occupied cell can use.
    pub fn key_bits(&self) -> u32 {
        64 - morton::encode::<D>(self.extent).leading_zeros()
    }
}

/// Minimum and maximum of a slice, and whether it holds a NaN or an infinity.
///
/// Eight independent accumulators let the compiler keep them in SIMD registers.
/// `x * 0` is 0 for finite `x` and NaN otherwise, so summing it flags any bad value
/// without a branch per element.
fn min_max_finite(xs: &[f32]) -> (f32, f32, bool) {
    const L: usize = 8;
    let mut lo = [f32::INFINITY; L];
    let mut hi = [f32::NEG_INFINITY; L];
    let mut poison = [0.0f32; L];
    let mut chunks = xs.chunks_exact(L);
    for c in &mut chunks {
        for k in 0..L {
            let x = c[k];
            lo[k] = if x < lo[k] { x } else { lo[k] };
            hi[k] = if x > hi[k] { x } else { hi[k] };
            poison[k] += x * 0.0;
        }
    }
    for (k, &x) in chunks.remainder().iter().enumerate() {
        lo[k] = if x < lo[k] { x } else { lo[k] };
        hi[k] = if x > hi[k] { x } else { hi[k] };
        poison[k] += x * 0.0;
    }
    let lo = lo.iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let hi = hi.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let bad = poison.iter().any(|p| p.is_nan());
    (lo, hi, bad)
}

/// Per-axis `(min, max)` of a non-empty point set, or the error naming the first
/// point (smallest index, then smallest axis) with a non-finite coordinate.
pub(crate) fn bounds<const D: usize>(
    positions: &[&[f32]; D],
) -> Result<[(f32, f32); D], GridError> {
    let mut out = [(0.0, 0.0); D];
    let mut any_bad = false;
    for axis in 0..D {
        let (lo, hi, bad) = positions[axis]
            .par_chunks(BOUNDS_CHUNK)
            .map(min_max_finite)
            .reduce(
                || (f32::INFINITY, f32::NEG_INFINITY, false),
                |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 | b.2),
            );
        out[axis] = (lo, hi);
        any_bad |= bad;
    }
    if any_bad {
        return Err(first_non_finite(positions));
    }
    Ok(out)
}

/// The error for the first point with a non-finite coordinate. Only called when
/// there is one.
fn first_non_finite<const D: usize>(positions: &[&[f32]; D]) -> GridError {
    let n = positions[0].len();
    let index = (0..n)
        .into_par_iter()
        .with_min_len(BOUNDS_CHUNK)
        .find_first(|&i| positions.iter().any(|p| !p[i].is_finite()))
        .unwrap_or(0);
    let axis = (0..D)
        .find(|&a| !positions[a][index].is_finite())
        .unwrap_or(0);
    GridError::NonFinitePosition {
        index,
        axis,
        value: positions[axis][index],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_and_poison() {
        let xs: Vec<f32> = (0..37).map(|i| (i as f32 - 11.5) * 0.25).collect();
        assert_eq!(min_max_finite(&xs), (-2.875, 6.125, false));
        let mut ys = xs.clone();
        ys[33] = f32::NEG_INFINITY;
        assert!(min_max_finite(&ys).2);
        ys[33] = f32::NAN;
        assert!(min_max_finite(&ys).2);
        assert_eq!(
            min_max_finite(&[]),
            (f32::INFINITY, f32::NEG_INFINITY, false)
        );
    }

    #[test]
    fn first_bad_point_wins() {
        let x = [0.0, 1.0, 2.0, f32::NAN];
        let y = [0.0, 1.0, f32::INFINITY, 0.0];
        assert_eq!(
            bounds(&[&x[..], &y[..]]).unwrap_err(),
            GridError::NonFinitePosition {
                index: 2,
                axis: 1,
                value: f32::INFINITY
            }
        );
        assert_eq!(
            bounds(&[&x[..3], &x[..3]]).unwrap(),
            [(0.0, 2.0), (0.0, 2.0)]
        );
    }

    #[test]
    fn cells_are_snapped_and_slightly_larger_than_h() {
        let frame =
            CellFrame::<2>::new([(0.5, 10.0), (-3.0, -3.0)], 1.0, &CellFrame::default()).unwrap();
        // One cell of room below the box.
        assert_eq!(frame.base, [-1.0, -4.0]);
        // 9.999 < 10 (1 + 2^-12): cell 9 + 1, where a cell of exactly h would give 10 + 1.
        assert_eq!(frame.coord(0, 10.0), 10);
        assert_eq!(frame.coord(0, 0.5), 1);
        assert_eq!(frame.extent, [10, 1]);
        assert_eq!(frame.coord_signed(0, -1.5), -1);
        assert_eq!(frame.coord_signed(1, 1e30), i64::MAX);
    }

    #[test]
    fn the_origin_is_kept_while_it_fits() {
        let none = CellFrame::<3>::default();
        let first =
            CellFrame::<3>::new([(0.0, 100.0), (0.0, 100.0), (0.0, 100.0)], 1.0, &none).unwrap();
        assert_eq!(first.base, [-6.0; 3]);
        // Jitter around the old minimum, or a box that grew a little: same origin.
        for lo in [-3.0, -0.01, 0.3, 4.0] {
            let next =
                CellFrame::<3>::new([(lo, 100.2), (0.0, 99.0), (0.0, 120.0)], 1.0, &first).unwrap();
            assert_eq!(next.base, first.base, "lo = {lo}");
        }
        // Below the origin, or far above it, or another radius: a new origin.
        let below =
            CellFrame::<3>::new([(-7.5, 100.0), (0.0, 100.0), (0.0, 100.0)], 1.0, &first).unwrap();
        assert_eq!(below.base[0], -8.0 - 6.0);
        let above =
            CellFrame::<3>::new([(50.0, 100.0), (0.0, 100.0), (0.0, 100.0)], 1.0, &first).unwrap();
        assert_eq!(above.base[0], 49.0 - 3.0);
        let other_h =
            CellFrame::<3>::new([(0.0, 100.0), (0.0, 100.0), (0.0, 100.0)], 2.0, &first).unwrap();
        assert_eq!(other_h.base, [-3.0; 3]);
    }

    #[test]
    fn extent_beyond_the_key_is_an_error() {
        let none = CellFrame::<3>::default();
        let err =
            CellFrame::<3>::new([(0.0, 1.0), (0.0, 3.0e6), (0.0, 1.0)], 1.0, &none).unwrap_err();
        match err {
            GridError::OutOfRange {
                axis: 1,
                cells,
                max,
            } => {
                assert_eq!(max, morton::MAX_COORD3);
                assert!(cells > 2.9e6 && cells < 3.1e6, "{cells}");
            }
            other => panic!("unexpected {other:?}"),
        }
        // 2^21 cells fit exactly, one more does not.
        let h = 1.0f32;
        let c = f64::from(h) * (1.0 + CELL_MARGIN);
        let fits = ((f64::from(morton::MAX_COORD3) + 0.5) * c) as f32;
        let frame = CellFrame::<3>::new([(0.0, fits), (0.0, 0.0), (0.0, 0.0)], h, &none).unwrap();
        // No room for slack below the box here.
        assert_eq!(frame.base[0], 0.0);
        assert_eq!(frame.extent[0], morton::MAX_COORD3);
        let too_far = ((f64::from(morton::MAX_COORD3) + 1.5) * c) as f32;
        assert!(CellFrame::<3>::new([(0.0, too_far), (0.0, 0.0), (0.0, 0.0)], h, &none).is_err());
    }

    #[test]
    fn key_bits_cover_the_extent() {
        let frame = CellFrame::<3> {
            inv_cell: 1.0,
            base: [0.0; 3],
            extent: [50, 50, 50],
        };
        assert_eq!(frame.key_bits(), 18);
        let frame = CellFrame::<3> {
            inv_cell: 1.0,
            base: [0.0; 3],
            extent: [0, 0, 1],
        };
        assert_eq!(frame.key_bits(), 3);
        let frame = CellFrame::<2> {
            inv_cell: 1.0,
            base: [0.0; 2],
            extent: [0, 0],
        };
        assert_eq!(frame.key_bits(), 0);
    }
}
