//! The quantity that colours a picture, the range of values its colour map spans and
//! the colour map itself.

use super::Renderer;
use crate::frame::Frame;

/// The quantity that colours the particles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Quantity {
    /// Speed in m/s, from 0 to the frame's 99th percentile (the default).
    #[default]
    Speed,
    /// Density in kg/m³ (kg/m² in 2D), from the frame's 1st to its 99th percentile.
    Density,
}

impl Quantity {
    /// The quantity's name, as the colour bar shows it.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Quantity::Speed.name(), "speed");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Speed => "speed",
            Quantity::Density => "density",
        }
    }

    /// The unit of the quantity in a scene of `dimension` 2 or 3.
    ///
    /// ```
    /// use pbf_cli::Quantity;
    /// assert_eq!(Quantity::Speed.unit(3), "m/s");
    /// assert_eq!(Quantity::Density.unit(2), "kg/m²");
    /// ```
    pub fn unit(self, dimension: usize) -> &'static str {
        match (self, dimension) {
            (Quantity::Speed, _) => "m/s",
            (Quantity::Density, 2) => "kg/m²",
            (Quantity::Density, _) => "kg/m³",
        }
    }

    /// The value of particle `i` (0 where the frame lacks the data).
    pub(super) fn value(self, frame: &Frame, i: usize) -> f32 {
        self.of(
            frame.velocities.get(i).copied().unwrap_or([0.0; 3]),
            frame.densities.get(i).copied().unwrap_or(0.0),
        )
    }

    /// The quantity of fluid moving at `velocity` with `density`.
    pub(super) fn of(self, velocity: [f32; 3], density: f32) -> f32 {
        match self {
            Quantity::Speed => {
                let v = velocity;
                (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
            }
            Quantity::Density => density,
        }
    }
}

/// What a colour range was taken from, as the picture states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeBasis {
    /// The percentiles of the frame drawn.
    Frame,
    /// The widest percentiles of the run's frames so far (a sequence of pictures
    /// keeps one growing scale, so that colours compare between frames).
    RunSoFar,
}

/// The values at the two ends of the colour map.
///
/// ```
/// use pbf_cli::{ColourRange, RangeBasis};
/// let a = ColourRange { lo: 0.0, hi: 1.0, basis: RangeBasis::Frame };
/// let b = ColourRange { lo: 0.0, hi: 2.0, basis: RangeBasis::Frame };
/// let run = a.widened(b);
/// assert_eq!((run.lo, run.hi, run.basis), (0.0, 2.0, RangeBasis::RunSoFar));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourRange {
    /// The value at the dark end.
    pub lo: f32,
    /// The value at the bright end.
    pub hi: f32,
    /// Where the range comes from.
    pub basis: RangeBasis,
}

impl ColourRange {
    /// The range that covers both, for a run's sequence of pictures.
    pub fn widened(self, other: ColourRange) -> ColourRange {
        ColourRange {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            basis: RangeBasis::RunSoFar,
        }
    }

    /// Where `value` falls in the range, from 0 to 1 (clamped; NaN gives 0).
    pub(super) fn position(self, value: f32) -> f32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) }
    }
}

/// The `q` quantile (0 to 1) of `values`, which it reorders; `None` when empty.
fn percentile(values: &mut [f32], q: f32) -> Option<f32> {
    if values.is_empty() {
        return None;
    }
    let k = ((values.len() - 1) as f32 * q).round() as usize;
    let (_, v, _) = values.select_nth_unstable_by(k, f32::total_cmp);
    Some(*v)
}

/// A viridis-like colour map: dark blue (slow) through teal and green to yellow (fast).
/// `t` is clamped to `[0, 1]`.
///
/// ```
/// let slow = pbf_cli::speed_colour(0.0);
/// let fast = pbf_cli::speed_colour(1.0);
/// assert!(slow[2] > slow[0] && fast[0] > fast[2]);
/// ```
pub fn speed_colour(t: f32) -> [f32; 3] {
    // Samples of matplotlib's viridis at t = 0, 1/8, ..., 1.
    const STOPS: [[f32; 3]; 9] = [
        [0.267, 0.005, 0.329],
        [0.283, 0.157, 0.471],
        [0.243, 0.286, 0.537],
        [0.192, 0.408, 0.557],
        [0.149, 0.510, 0.557],
        [0.122, 0.620, 0.537],
        [0.208, 0.718, 0.475],
        [0.431, 0.808, 0.345],
        [0.993, 0.906, 0.144],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * 8.0;
    let i = (x.floor() as usize).min(7);
    let f = x - i as f32;
    core::array::from_fn(|c| STOPS[i][c] + (STOPS[i + 1][c] - STOPS[i][c]) * f)
}

impl Renderer {
    /// The values at the ends of the colour map for `frame`: speed from 0 to its 99th
    /// percentile, density from its 1st to its 99th percentile. A range that would be
    /// empty (a fluid at rest) is widened a little, so that it still reads.
    ///
    /// ```
    /// use pbf_cli::{Axis, Frame, Renderer};
    /// let s = pbf_solver::scenes::build("dam-break-2d", 200)?;
    /// let r = Renderer::new(&s, Axis::Z, 300);
    /// let mut frame = Frame::from_solver(&s);
    /// for (i, v) in frame.velocities.iter_mut().enumerate() {
    ///     *v = [i as f32 / 100.0, 0.0, 0.0];
    /// }
    /// let range = r.colour_range(&frame);
    /// assert_eq!(range.lo, 0.0);
    /// assert!(range.hi > 1.0 && range.hi < frame.len() as f32 / 100.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn colour_range(&self, frame: &Frame) -> ColourRange {
        let mut values: Vec<f32> = (0..frame.len())
            .map(|i| self.quantity.value(frame, i))
            .filter(|v| v.is_finite())
            .collect();
        let (lo, hi) = match self.quantity {
            Quantity::Speed => {
                let hi = percentile(&mut values, 0.99).unwrap_or(0.0);
                (0.0, hi.max(1e-3))
            }
            Quantity::Density => {
                let lo = percentile(&mut values, 0.01).unwrap_or(0.0);
                let hi = percentile(&mut values, 0.99).unwrap_or(0.0);
                let pad = (1e-3 * hi.abs()).max(1e-3);
                if hi - lo < pad {
                    (lo - pad, hi + pad)
                } else {
                    (lo, hi)
                }
            }
        };
        ColourRange {
            lo,
            hi,
            basis: RangeBasis::Frame,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_map_runs_from_dark_to_bright() {
        let lum = |c: [f32; 3]| 0.2 * c[0] + 0.7 * c[1] + 0.1 * c[2];
        let mut last = -1.0;
        for k in 0..=16 {
            let l = lum(speed_colour(k as f32 / 16.0));
            assert!(l > last, "{k}");
            last = l;
        }
        assert_eq!(speed_colour(f32::NAN), speed_colour(0.0));
        assert_eq!(speed_colour(7.0), speed_colour(1.0));
    }

    #[test]
    fn percentiles_ignore_the_fastest_hundredth() {
        let mut v: Vec<f32> = (0..=1000).map(|i| i as f32).collect();
        v.reverse();
        assert_eq!(percentile(&mut v, 0.99), Some(990.0));
        assert_eq!(percentile(&mut v, 0.0), Some(0.0));
        assert_eq!(percentile(&mut [], 0.5), None);
    }
}
