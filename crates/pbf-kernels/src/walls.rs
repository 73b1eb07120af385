//! Walls as rest fluid: the share of a kernel that lies behind a plane.
//!
//! A particle closer than `h` to a wall lacks the neighbours the wall hides. Treating
//! the wall locally as a plane with rest fluid behind it, the wall adds `rho0 Phi(d)`
//! to the density of a particle at distance `d` (`Phi` is the share of the poly6
//! kernel behind the plane, 1/2 at `d = 0`) and `-A(d) n` to the constraint gradient
//! (`A` is the plane integral of the spiky kernel, the derivative of its share behind
//! the plane), where `n` is the surface normal into the fluid. [`WallTables`] samples
//! both on `0..=h` once and interpolates them.

use crate::Kernel;

/// Samples of each table on `0..=h`.
pub const SAMPLES: usize = 128;

/// `Phi(d)` and `A(d)` sampled on `0..=h`.
#[derive(Debug, Clone, PartialEq)]
pub struct WallTables {
    h: f32,
    density: [f32; SAMPLES],
    gradient: [f32; SAMPLES],
}

impl WallTables {
    /// The tables of `kernel`'s poly6 and spiky kernels, by numerical integration.
    pub fn new<const D: usize>(kernel: &Kernel<D>) -> Self {
        let h = f64::from(kernel.h());
        let poly6 = |r: f64| f64::from(kernel.poly6((r * r) as f32));
        let spiky = |r: f64| f64::from(kernel.spiky((r * r) as f32));
        // The integral of a radial function over the plane at distance z.
        let plane = |f: &dyn Fn(f64) -> f64, z: f64| -> f64 {
            let reach = (h * h - z * z).max(0.0).sqrt();
            let steps = 256;
            let dt = reach / steps as f64;
            (0..steps)
                .map(|k| {
                    let t = (k as f64 + 0.5) * dt;
                    let r = (z * z + t * t).sqrt();
                    if D == 3 {
                        2.0 * core::f64::consts::PI * f(r) * t * dt
                    } else {
                        2.0 * f(r) * dt
                    }
                })
                .sum()
        };
        let mut density = [0.0f32; SAMPLES];
        let mut gradient = [0.0f32; SAMPLES];
        // Phi(d) = integral of the plane integrals beyond d, accumulated from h down.
        let dz = h / (SAMPLES - 1) as f64;
        let mut phi = 0.0f64;
        for k in (0..SAMPLES).rev() {
            let z = k as f64 * dz;
            if k + 1 < SAMPLES {
                // Trapezoid between z and z + dz.
                phi += 0.5 * (plane(&poly6, z) + plane(&poly6, z + dz)) * dz;
            }
            density[k] = phi as f32;
            gradient[k] = plane(&spiky, z) as f32;
        }
        Self {
            h: kernel.h(),
            density,
            gradient,
        }
    }

    /// The radius the tables span.
    #[inline(always)]
    pub fn h(&self) -> f32 {
        self.h
    }

    /// The samples of `Phi` and of `A`, `k h / (SAMPLES - 1)` apart: for a lane
    /// backend's own interpolation, which repeats [`Self::at`]'s operations.
    #[inline(always)]
    pub fn samples(&self) -> (&[f32; SAMPLES], &[f32; SAMPLES]) {
        (&self.density, &self.gradient)
    }

    /// `(Phi(d), A(d))`, linearly interpolated; `d <= 0` reads the wall's surface,
    /// `d >= h` gives zeros.
    #[inline]
    pub fn at(&self, d: f32) -> (f32, f32) {
        if !(d < self.h) {
            return (0.0, 0.0);
        }
        let t = (d.max(0.0) / self.h) * (SAMPLES - 1) as f32;
        let k = (t as usize).min(SAMPLES - 2);
        let f = t - k as f32;
        let lerp = |a: &[f32; SAMPLES]| a[k] + f * (a[k + 1] - a[k]);
        (lerp(&self.density), lerp(&self.gradient))
    }

    /// The density share `sum Phi(d)` (to be multiplied by `rho0`) and the constraint
    /// gradient `sum -A(d) n` of the faces of the box `lo..=hi` at `p`, a point inside
    /// it: each face within `h` of `p` adds its share, axis by axis, lower face first.
    ///
    /// ```
    /// use pbf_kernels::{Kernel, WallTables};
    /// let tables = WallTables::new(&Kernel::<2>::new(0.1)?);
    /// // On the floor of a box: half the kernel behind it, pushed up.
    /// let (share, grad) = tables.faces([0.0, 0.0], [1.0, 1.0], [0.5, 0.0]);
    /// assert!((share - 0.5).abs() < 0.005);
    /// assert!(grad[1] < 0.0 && grad[0] == 0.0);
    /// // Far from every face: nothing.
    /// assert_eq!(tables.faces([0.0, 0.0], [1.0, 1.0], [0.5, 0.5]), (0.0, [0.0; 2]));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn faces<const D: usize>(
        &self,
        lo: [f32; D],
        hi: [f32; D],
        p: [f32; D],
    ) -> (f32, [f32; D]) {
        let mut phi = 0.0f32;
        let mut grad = [0.0f32; D];
        let h = self.h;
        for a in 0..D {
            let (below, above) = (p[a] - lo[a], hi[a] - p[a]);
            // `-A(d) n` with `n` the face's normal into the box (`+1` on the lower
            // face, `-1` on the upper): the other axes' components are zeros, which
            // change no sum.
            if below < h {
                let (share, slope) = self.at(below);
                phi += share;
                grad[a] -= slope;
            }
            if above < h {
                let (share, slope) = self.at(above);
                phi += share;
                grad[a] += slope;
            }
        }
        (phi, grad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_the_kernel_lies_behind_a_wall_at_distance_zero() {
        for h in [0.1f32, 2.0] {
            let t3 = WallTables::new(&Kernel::<3>::new(h).unwrap());
            let t2 = WallTables::new(&Kernel::<2>::new(h).unwrap());
            for t in [&t3, &t2] {
                let (phi, slope) = t.at(0.0);
                assert!((phi - 0.5).abs() < 0.005, "Phi(0) = {phi}");
                assert!(slope > 0.0);
                assert_eq!(t.at(h), (0.0, 0.0));
                // Phi decreases with distance, and its slope is the plane integral of
                // the (poly6) kernel: compare A of spiky only in sign and support.
                let mut last = 1.0;
                for k in 0..=20 {
                    let (p, a) = t.at(h * k as f32 / 20.0);
                    assert!(p <= last + 1e-6 && a >= 0.0);
                    last = p;
                }
            }
        }
    }

    #[test]
    fn the_spiky_gradient_table_is_the_slope_of_the_spiky_share() {
        // A(d) must equal -d/dd of the spiky kernel's share behind the wall: check by
        // integrating A from d to h and comparing to a direct half-space integral of
        // spiky at one distance (d = 0: half of the kernel, 1/2).
        let h = 1.0f32;
        let t = WallTables::new(&Kernel::<3>::new(h).unwrap());
        let steps = 2000;
        let share: f64 = (0..steps)
            .map(|k| f64::from(t.at((k as f32 + 0.5) / steps as f32).1) / steps as f64)
            .sum();
        assert!(
            (share - 0.5).abs() < 0.01,
            "spiky share behind the wall {share}"
        );
    }
}
