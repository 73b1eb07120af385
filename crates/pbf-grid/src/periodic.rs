//! Periodic axes of a box: the minimum image of an offset, and the images through
//! which the neighbour lists find the pairs across a periodic face.
//!
//! On a periodic axis of period `L` the offset of two points is its minimum image:
//! `x - L` when `x > L / 2`, `x + L` when `x < -L / 2`, `x` otherwise. For points
//! inside the box (offsets shorter than `L`), and for points that strayed less than
//! half a period out of it, that is `x - L round(x / L)`. It is written as two
//! comparisons and selects, with one correctly rounded addition or subtraction, so
//! that every lane backend ([`Periodic::image_lanes`]) gives the scalar bits
//! ([`Periodic::image`]), and the image of `-x` is `-image(x)` exactly: the lists
//! stay symmetric.

use crate::GridError;
use pbf_kernels::Lane;

/// Which axes of a box `lo..hi` are periodic, with their periods `hi - lo`. The
/// default has no periodic axis; so do lists that never [set
/// one](crate::lists::NeighbourLists::set_periodic).
///
/// ```
/// use pbf_grid::Periodic;
///
/// let p = Periodic::new([0.0, 0.0], [4.0, 2.0], [true, false])?;
/// assert_eq!(p.image(0, 3.5), -0.5);
/// assert_eq!(p.image(0, -3.0), 1.0);
/// assert_eq!(p.image(1, 1.5), 1.5);
/// assert_eq!(p.offset([0.25, 1.0], [3.75, 0.5]), [0.5, 0.5]);
/// # Ok::<(), pbf_grid::GridError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Periodic {
    /// Whether each axis is periodic (axes past the dimension are not).
    axes: [bool; 3],
    /// The lower bound of each periodic axis (0 on the others).
    lo: [f32; 3],
    /// The period `hi - lo` of each periodic axis (0 on the others).
    period: [f32; 3],
}

impl Periodic {
    /// The axes `axes` of the box `lo..hi` periodic.
    ///
    /// # Errors
    /// [`GridError::InvalidPeriod`] for the first periodic axis whose bounds are not
    /// finite or whose period `hi - lo` is not a positive finite `f32`.
    pub fn new<const D: usize>(
        lo: [f32; D],
        hi: [f32; D],
        axes: [bool; D],
    ) -> Result<Self, GridError> {
        let mut periodic = Self::default();
        for a in (0..D.min(3)).filter(|&a| axes[a]) {
            let period = hi[a] - lo[a];
            if !(lo[a].is_finite() && hi[a].is_finite() && period.is_finite() && period > 0.0) {
                return Err(GridError::InvalidPeriod {
                    axis: a,
                    value: period,
                });
            }
            periodic.axes[a] = true;
            periodic.lo[a] = lo[a];
            periodic.period[a] = period;
        }
        Ok(periodic)
    }

    /// Whether some axis is periodic.
    pub fn any(&self) -> bool {
        self.axes.iter().any(|&p| p)
    }

    /// Whether axis `a` is periodic.
    pub fn is_periodic(&self, a: usize) -> bool {
        a < 3 && self.axes[a]
    }

    /// The period of axis `a` (0 when it is not periodic).
    pub fn period(&self, a: usize) -> f32 {
        if a < 3 { self.period[a] } else { 0.0 }
    }

    /// The lower bound of the periodic axis `a` (0 when it is not periodic).
    pub fn lo(&self, a: usize) -> f32 {
        if a < 3 { self.lo[a] } else { 0.0 }
    }

    /// The minimum image of the offset `x` along axis `a` (see the module's
    /// comment); `x` itself on an axis that is not periodic.
    #[inline(always)]
    pub fn image(&self, a: usize, x: f32) -> f32 {
        if !self.is_periodic(a) {
            return x;
        }
        let l = self.period[a];
        let half = 0.5 * l;
        let x = if x > half { x - l } else { x };
        if -half > x { x + l } else { x }
    }

    /// [`Self::image`] on lanes, with the scalar bits in every lane.
    #[inline(always)]
    pub fn image_lanes<L: Lane>(&self, a: usize, x: L) -> L {
        if !self.is_periodic(a) {
            return x;
        }
        let l = self.period[a];
        let half = L::splat(0.5 * l);
        let x = x.select_gt(half, x - L::splat(l), x);
        L::splat(-(0.5 * l)).select_gt(x, x + L::splat(l), x)
    }

    /// The offset `p - q` with the minimum image on every periodic axis.
    #[inline(always)]
    pub fn offset<const D: usize>(&self, p: [f32; D], q: [f32; D]) -> [f32; D] {
        core::array::from_fn(|a| self.image(a, p[a] - q[a]))
    }

    /// `x` moved by whole periods into `lo..hi` on the periodic axis `a` (as it is
    /// elsewhere), and the shift added (0 when none): a point one period or less
    /// outside moves by one period; a wrap that rounds onto `hi` gives `lo`. A
    /// non-finite `x` stays as it is.
    #[inline]
    pub fn wrap(&self, a: usize, x: f32) -> (f32, f32) {
        if !self.is_periodic(a) || !x.is_finite() {
            return (x, 0.0);
        }
        let (lo, l) = (self.lo[a], self.period[a]);
        let hi = lo + l;
        if x >= lo && x < hi {
            return (x, 0.0);
        }
        let turns = ((x - lo) / l).floor();
        let shift = -turns * l;
        let mut y = x + shift;
        // Rounding may leave the result a hair outside: the box's own bounds.
        if !(y >= lo && y < hi) {
            y = lo;
        }
        (y, shift)
    }

    /// Calls `f(image)` for every image `p + sum s_a L_a e_a` (each `s_a` in -1, 0, 1,
    /// not all 0, nonzero on periodic axes only) of a point `p` within `reach` of the
    /// face it crosses: `s_a = 1` when `p` is within `reach` of `lo`, `-1` within
    /// `reach` of `hi`. The points within `reach` of `p` across a periodic face lie
    /// near one of them.
    pub fn for_each_image<const D: usize>(
        &self,
        p: [f32; D],
        reach: f32,
        mut f: impl FnMut([f32; D]),
    ) {
        // Each axis' choices: 0 and the shifts its faces allow.
        let choices: [[i8; 3]; D] = core::array::from_fn(|a| {
            let mut c = [0i8, 0, 0];
            if self.is_periodic(a) {
                let (lo, l) = (self.lo[a], self.period[a]);
                if p[a] - lo < reach {
                    c[1] = 1;
                }
                if lo + l - p[a] < reach {
                    c[2] = -1;
                }
            }
            c
        });
        for code in 1..3usize.pow(D as u32) {
            let mut image = p;
            let mut valid = true;
            let mut rest = code;
            for a in 0..D {
                let digit = rest % 3;
                rest /= 3;
                let s = choices[a][digit];
                if digit > 0 && s == 0 {
                    valid = false;
                    break;
                }
                image[a] = p[a] + f32::from(s) * self.period(a);
            }
            if valid {
                f(image);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_is_odd_and_the_lanes_give_the_scalar_bits() {
        let p = Periodic::new([-1.0, 0.0], [2.5, 1.0], [true, false]).unwrap();
        for k in -300..=300 {
            let x = k as f32 * 0.0173;
            let y = p.image(0, x);
            assert!(y.abs() <= 1.75, "{x} -> {y}");
            assert_eq!(p.image(0, -x), -y);
            assert_eq!(p.image_lanes::<f32>(0, x).to_bits(), y.to_bits());
            assert_eq!(p.image(1, x), x);
        }
    }

    #[test]
    fn wrap_puts_points_inside_and_reports_the_shift() {
        let p = Periodic::new([0.0, -1.0], [1.0, 1.0], [true, true]).unwrap();
        for (x, want) in [
            (1.25f32, 0.25f32),
            (-0.25, 0.75),
            (0.5, 0.5),
            (1.0, 0.0),
            (0.0, 0.0),
        ] {
            let (y, shift) = p.wrap(0, x);
            assert!((y - want).abs() < 1e-6, "{x} -> {y}");
            assert!((0.0..1.0).contains(&y));
            assert_eq!(x + shift, y);
        }
        assert_eq!(p.wrap(1, 1.5).0, -0.5);
        assert!(Periodic::new([0.0], [f32::INFINITY], [true]).is_err());
        assert!(Periodic::new([-3e38], [3e38], [true]).is_err());
        assert!(Periodic::new([-3e38], [3e38], [false]).is_ok());
    }

    #[test]
    fn images_cross_only_the_near_faces() {
        let p = Periodic::new([0.0; 3], [1.0; 3], [true, false, true]).unwrap();
        let mut images = Vec::new();
        p.for_each_image([0.05, 0.05, 0.95], 0.1, |q| images.push(q));
        // x near lo: +1; z near hi: -1; y not periodic: (+1, 0), (0, -1), (+1, -1).
        assert_eq!(images.len(), 3);
        assert!(images.contains(&[1.05, 0.05, 0.95]));
        assert!(
            images
                .iter()
                .any(|q| q[0] == 0.05 && (q[2] + 0.05).abs() < 1e-6)
        );
        assert!(
            images
                .iter()
                .any(|q| q[0] == 1.05 && (q[2] + 0.05).abs() < 1e-6)
        );
        p.for_each_image([0.5; 3], 0.1, |_| panic!("no image"));
    }
}
