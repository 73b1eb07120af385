//! The kernel behind two perpendicular walls at once: the share a particle near an
//! edge (of a domain's box, or the inner edge of a container) would count twice if it
//! summed the walls' shares of [`WallTables`](crate::WallTables).
//!
//! For a particle at distance `d1` from one wall and `d2` from a perpendicular one,
//! the kernel's share behind the two is `Phi(d1) + Phi(d2) - Psi(d1, d2)`, with `Psi`
//! the share behind both (the quadrant beyond the edge). Its constraint gradient is
//! `-(A(d1) - B(d1, d2)) n1 - (A(d2) - B(d2, d1)) n2`: `B(d1, d2)` is the part of the
//! first wall's plane integral `A(d1)` that lies beyond the second wall.

use crate::Kernel;

/// Samples of each table along each distance, on `0..=h`.
pub const CORNER_SAMPLES: usize = 48;

/// Fine cells per sample interval in the quadrature.
const REFINE: usize = 4;
/// Samples of the kernels' line integrals over `0..=h`.
const LINE_SAMPLES: usize = 1024;

/// `Psi(d1, d2)` and `B(d1, d2)` sampled on `0..=h` along each distance.
///
/// ```
/// use pbf_kernels::{CornerTables, Kernel, WallTables};
/// let kernel = Kernel::<3>::new(0.1)?;
/// let (corner, walls) = (CornerTables::new(&kernel), WallTables::new(&kernel));
/// // At the edge itself a quarter of the kernel lies behind both walls.
/// let (behind_both, _, _) = corner.at(0.0, 0.0);
/// assert!((behind_both - 0.25).abs() < 0.005);
/// // On the second wall's plane, half of the first wall's share lies beyond it.
/// let d = 0.03;
/// let (behind_both, beyond, _) = corner.at(d, 0.0);
/// let (share, slope) = walls.at(d);
/// assert!((behind_both - 0.5 * share).abs() < 0.005);
/// assert!((beyond - 0.5 * slope).abs() < 0.01 * slope);
/// // Nothing once either wall is h away.
/// assert_eq!(corner.at(0.1, 0.0), (0.0, 0.0, 0.0));
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CornerTables {
    h: f32,
    /// `Psi` at `(k1, k2)`, row `k1`.
    behind_both: Vec<f32>,
    /// `B` at `(k1, k2)`, row `k1`.
    beyond: Vec<f32>,
}

impl CornerTables {
    /// The tables of `kernel`'s poly6 (`Psi`) and spiky (`B`) kernels, by numerical
    /// integration.
    pub fn new<const D: usize>(kernel: &Kernel<D>) -> Self {
        let h = f64::from(kernel.h());
        let poly6 = |r: f64| f64::from(kernel.poly6((r * r) as f32));
        let spiky = |r: f64| f64::from(kernel.spiky((r * r) as f32));
        let poly6_line = line_integrals::<D>(h, &poly6);
        let spiky_line = line_integrals::<D>(h, &spiky);
        let n = CORNER_SAMPLES;
        let m = (n - 1) * REFINE;
        let dx = h / m as f64;
        // Psi: the poly6 line integral summed over the fine cells beyond both walls,
        // as suffix sums from the far corner of the quadrant.
        let mut suffix = vec![0.0f64; (m + 1) * (m + 1)];
        for i in (0..m).rev() {
            for j in (0..m).rev() {
                let (x, y) = ((i as f64 + 0.5) * dx, (j as f64 + 0.5) * dx);
                let cell = lookup(&poly6_line, h, (x * x + y * y).sqrt()) * dx * dx;
                suffix[i * (m + 1) + j] =
                    cell + suffix[(i + 1) * (m + 1) + j] + suffix[i * (m + 1) + j + 1]
                        - suffix[(i + 1) * (m + 1) + j + 1];
            }
        }
        let mut behind_both = vec![0.0f32; n * n];
        let mut beyond = vec![0.0f32; n * n];
        for k1 in 0..n {
            let d1 = (k1 * REFINE) as f64 * dx;
            // B(d1, d2): the spiky line integral along the first wall's plane, summed
            // from the far end down to d2.
            let mut tail = 0.0f64;
            let mut tails = vec![0.0f64; m + 1];
            for j in (0..m).rev() {
                let y = (j as f64 + 0.5) * dx;
                tail += lookup(&spiky_line, h, (d1 * d1 + y * y).sqrt()) * dx;
                tails[j] = tail;
            }
            for k2 in 0..n {
                let j = k2 * REFINE;
                behind_both[k1 * n + k2] = suffix[k1 * REFINE * (m + 1) + j] as f32;
                beyond[k1 * n + k2] = tails[j] as f32;
            }
        }
        Self {
            h: kernel.h(),
            behind_both,
            beyond,
        }
    }

    /// The radius the tables span.
    pub fn h(&self) -> f32 {
        self.h
    }

    /// `(Psi(d1, d2), B(d1, d2), B(d2, d1))`, bilinearly interpolated; a distance
    /// `<= 0` reads the wall's surface, and either distance `>= h` (or NaN) gives
    /// zeros.
    pub fn at(&self, d1: f32, d2: f32) -> (f32, f32, f32) {
        if !(d1 < self.h && d2 < self.h) {
            return (0.0, 0.0, 0.0);
        }
        let n = CORNER_SAMPLES;
        let split = |d: f32| {
            let t = (d.max(0.0) / self.h) * (n - 1) as f32;
            let k = (t as usize).min(n - 2);
            (k, t - k as f32)
        };
        let ((k1, f1), (k2, f2)) = (split(d1), split(d2));
        let bilinear = |table: &[f32], a: usize, fa: f32, b: usize, fb: f32| {
            let at = |i: usize, j: usize| table[i * n + j];
            let low = at(a, b) + fb * (at(a, b + 1) - at(a, b));
            let high = at(a + 1, b) + fb * (at(a + 1, b + 1) - at(a + 1, b));
            low + fa * (high - low)
        };
        (
            bilinear(&self.behind_both, k1, f1, k2, f2),
            bilinear(&self.beyond, k1, f1, k2, f2),
            bilinear(&self.beyond, k2, f2, k1, f1),
        )
    }
}

/// The integral of the radial function `f` along a line at distance `rho` from the
/// kernel's centre, perpendicular to both walls' normals, sampled at
/// [`LINE_SAMPLES`] distances on `0..=h`: in 2D there is no such line and it is
/// `f(rho)` itself.
fn line_integrals<const D: usize>(h: f64, f: &dyn Fn(f64) -> f64) -> Vec<f64> {
    (0..LINE_SAMPLES)
        .map(|k| {
            let rho = h * k as f64 / (LINE_SAMPLES - 1) as f64;
            if D == 2 {
                return if rho < h { f(rho) } else { 0.0 };
            }
            let reach = (h * h - rho * rho).max(0.0).sqrt();
            let steps = 128;
            let dz = reach / steps as f64;
            (0..steps)
                .map(|i| {
                    let z = (i as f64 + 0.5) * dz;
                    2.0 * f((rho * rho + z * z).sqrt()) * dz
                })
                .sum()
        })
        .collect()
}

/// A line integral of [`line_integrals`] at `rho` (linear between samples; zero from
/// `h` on).
fn lookup(samples: &[f64], h: f64, rho: f64) -> f64 {
    if rho >= h {
        return 0.0;
    }
    let t = rho / h * (LINE_SAMPLES - 1) as f64;
    let k = (t as usize).min(LINE_SAMPLES - 2);
    let f = t - k as f64;
    samples[k] + f * (samples[k + 1] - samples[k])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WallTables;

    /// In 2D and 3D: a quarter of the kernel behind both walls at the edge; on the
    /// second wall's plane, half of each wall table; zeros once a wall is h away; and
    /// the share behind both falls with either distance.
    #[test]
    fn the_corner_tables_agree_with_the_wall_tables_where_they_must() {
        fn check<const D: usize>(h: f32) {
            let kernel = Kernel::<D>::new(h).unwrap();
            let (corner, walls) = (CornerTables::new(&kernel), WallTables::new(&kernel));
            let (psi, b12, b21) = corner.at(0.0, 0.0);
            assert!((psi - 0.25).abs() < 0.005, "{D}D Psi(0, 0) = {psi}");
            assert_eq!(b12, b21);
            // The gradient tables' scale: the plane integral at the wall.
            let peak = walls.at(0.0).1;
            for k in 0..10 {
                let d = h * k as f32 / 10.0;
                let (share, slope) = walls.at(d);
                let (psi, beyond, _) = corner.at(d, 0.0);
                assert!(
                    (psi - 0.5 * share).abs() < 0.004,
                    "{D}D d {d}: {psi} {share}"
                );
                assert!(
                    (beyond - 0.5 * slope).abs() <= 0.002 * peak,
                    "{D}D d {d}: {beyond} {slope}"
                );
                let (symmetric, _, _) = corner.at(0.0, d);
                assert!((symmetric - psi).abs() < 1e-4, "{D}D: {symmetric} {psi}");
                let (further, _, _) = corner.at(d + 0.05 * h, d);
                assert!(further <= psi + 1e-6);
            }
            assert_eq!(corner.at(h, 0.0), (0.0, 0.0, 0.0));
            assert_eq!(corner.at(0.0, f32::NAN), (0.0, 0.0, 0.0));
            // Beyond the kernel's reach along the diagonal: nothing behind both.
            let far = 0.75 * h;
            assert!(corner.at(far, far).0.abs() < 1e-6);
        }
        for h in [0.1f32, 2.0] {
            check::<2>(h);
            check::<3>(h);
        }
    }
}
