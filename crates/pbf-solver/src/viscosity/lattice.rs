//! What the viscosity term sums to on the rest lattice: the calibration of the
//! Laplacian, and the share of a no-slip wall's mirrored fluid.

use pbf_kernels::{Kernel, norm2};

/// The samples of a [`WallShare`] table, over distances `0..=h` from the wall.
pub(crate) const WALL_SAMPLES: usize = 65;

/// Calls `f(x)` for the lattice points of spacing `s` within `h` of the origin, the
/// origin excluded, `x` in units of length.
pub(crate) fn for_each_lattice_point<const D: usize>(h: f32, s: f32, mut f: impl FnMut([f32; D])) {
    let reach = (h / s).ceil() as i32;
    let side = (2 * reach + 1) as usize;
    for flat in 0..side.pow(D as u32) {
        let mut rest = flat;
        let x: [f32; D] = core::array::from_fn(|_| {
            let k = (rest % side) as i32 - reach;
            rest /= side;
            k as f32 * s
        });
        if x.iter().any(|c| *c != 0.0) && norm2(x) < h * h {
            f(x);
        }
    }
}

/// The factor by which the viscosity term's sum over a particle's neighbours on the
/// rest lattice of spacing `s` must be scaled to give the Laplacian of a shear flow
/// exactly: `2 / A`, with `A` the sum (at `nu = 1`) for `v = (y^2, 0, ..)`, whose
/// Laplacian is `(2, 0, ..)`. The plain sum falls short where the kernel covers few
/// lattice points (14% in 2D and 7% in 3D at h = 2 s, 8% and 5% at 3 s), and the
/// shortfall would be a smaller viscosity than the user set.
pub(crate) fn laplacian_calibration<const D: usize>(
    kernel: &Kernel<D>,
    s: f32,
    volume: f32,
) -> f64 {
    let mut sum = 0.0f64;
    for_each_lattice_point::<D>(kernel.h(), s, |xj| {
        // Particle i at the origin (v_i = 0), j at xj with v_j = (y_j^2, 0, ..).
        let mut dv = [0.0f32; D];
        dv[0] = -(xj[1] * xj[1]);
        let r2 = norm2(xj);
        let factor = kernel.spiky_gradient_factor(r2);
        sum += f64::from(kernel.viscosity_term(1.0, volume, dv, r2, factor)[0]);
    });
    2.0 / sum
}

/// The share of a no-slip wall in the viscosity of a particle at distance `d` from
/// it, per unit of `nu`: `T(d)` in `a_i += -nu T(d) (v_i - v_wall)`, tabulated over
/// `0..=h`. The viscosity term acts on each velocity component alike, so one share
/// serves along the wall's normal and along the wall.
///
/// The fluid beyond the wall is the rest lattice mirrored in the wall (its layers at
/// `s/2, 3s/2, ..` beyond), moving as Morris et al. (1997) extrapolate it: a particle
/// `b` beyond the wall has `v_b - v_wall = -(b / d) (v_i - v_wall)`, so that the
/// velocity crosses the wall's at the wall; `d` is taken at least `s/2`, which keeps
/// the share finite for a particle at the wall.
#[derive(Debug, Clone)]
pub(crate) struct WallShare {
    h: f32,
    table: [f32; WALL_SAMPLES],
}

impl WallShare {
    /// The table for `kernel` on the lattice of spacing `s`, each term scaled by
    /// `calibration` (see [`laplacian_calibration`]).
    pub(crate) fn new<const D: usize>(
        kernel: &Kernel<D>,
        s: f32,
        volume: f32,
        calibration: f64,
    ) -> Self {
        let h = kernel.h();
        let reach = (h / s).ceil() as i32 + 1;
        let mut table = [0.0; WALL_SAMPLES];
        for (k, share) in table.iter_mut().enumerate() {
            let d = h * k as f32 / (WALL_SAMPLES - 1) as f32;
            let mut sum = 0.0f64;
            // Mirrored layers beyond the wall (normal along axis 1), lateral points
            // aligned with the particle.
            for layer in 0..reach {
                let beyond = (layer as f32 + 0.5) * s;
                let weight = 1.0 + f64::from(beyond) / f64::from(d.max(0.5 * s));
                for_each_lateral::<D>(reach, s, |mut x| {
                    x[1] = d + beyond;
                    let r2 = norm2(x);
                    // The term of a unit velocity difference along axis 0.
                    let mut dv = [0.0f32; D];
                    dv[0] = 1.0;
                    let factor = kernel.spiky_gradient_factor(r2);
                    let term = kernel.viscosity_term(1.0, volume, dv, r2, factor)[0];
                    sum -= calibration * f64::from(term) * weight;
                });
            }
            *share = sum as f32;
        }
        Self { h, table }
    }

    /// The kernel radius: no share from h on.
    pub(crate) fn h(&self) -> f32 {
        self.h
    }

    /// The share at distance `d` from the wall (linear between the samples; zero
    /// from `h` on and for a NaN distance).
    pub(crate) fn at(&self, d: f32) -> f32 {
        if !(d < self.h) {
            return 0.0;
        }
        let u = d.max(0.0) / self.h * (WALL_SAMPLES - 1) as f32;
        let k = (u as usize).min(WALL_SAMPLES - 2);
        let f = u - k as f32;
        self.table[k] + f * (self.table[k + 1] - self.table[k])
    }
}

/// Calls `f(x)` for the lateral offsets of a lattice layer: every axis but 1 at
/// multiples of `s` up to `reach` either way, axis 1 zero.
fn for_each_lateral<const D: usize>(reach: i32, s: f32, mut f: impl FnMut([f32; D])) {
    let side = (2 * reach + 1) as usize;
    for flat in 0..side.pow(D as u32 - 1) {
        let mut rest = flat;
        let mut x = [0.0f32; D];
        for a in (0..D).filter(|&a| a != 1) {
            x[a] = ((rest % side) as i32 - reach) as f32 * s;
            rest /= side;
        }
        f(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain lattice sum falls short of the Laplacian, less so as the kernel
    /// covers more lattice points: the calibration is above 1 and falls with h / s.
    #[test]
    fn the_calibration_makes_the_lattice_laplacian_exact() {
        fn check<const D: usize>() {
            let s = 0.01f32;
            let volume = 0.01f32.powi(D as i32);
            let mut previous = f64::INFINITY;
            for h_rel in [2.0f32, 3.0, 4.0] {
                let kernel = Kernel::<D>::new(h_rel * s).unwrap();
                let c = laplacian_calibration(&kernel, s, volume);
                assert!(
                    c > 1.0 && c < previous,
                    "{D}D h = {h_rel} s: calibration {c}"
                );
                previous = c;
            }
        }
        check::<2>();
        check::<3>();
    }

    /// The calibrated Laplacian of a shear flow `v = (y^2, 0)` stays within 4% of 2
    /// when the lattice's rows slide past each other (row `k` offset by `k delta`
    /// along x): the component-wise term's error is the kernel's second moment,
    /// which the offsets barely change.
    #[test]
    fn sliding_rows_barely_change_the_laplacian_of_a_shear_flow() {
        let s = 0.01f32;
        let kernel = Kernel::<2>::new(2.0 * s).unwrap();
        let volume = s * s;
        let c = laplacian_calibration(&kernel, s, volume);
        for delta in [0.0, 0.125, 0.25, 0.5] {
            let mut sum = 0.0f64;
            for row in -3i32..=3 {
                let shift = (row as f32 * delta).rem_euclid(1.0);
                for column in -4i32..=4 {
                    let xj = [(column as f32 + shift) * s, row as f32 * s];
                    let r2 = norm2(xj);
                    if r2 == 0.0 {
                        continue;
                    }
                    let dv = [-(xj[1] * xj[1]), 0.0];
                    let factor = kernel.spiky_gradient_factor(r2);
                    sum += f64::from(kernel.viscosity_term(1.0, volume, dv, r2, factor)[0]);
                }
            }
            let laplacian = c * sum;
            assert!(
                (laplacian / 2.0 - 1.0).abs() <= 0.04,
                "offset {delta} s: {laplacian}"
            );
        }
    }

    /// The wall's share is positive near the wall, falls with the distance and
    /// vanishes where no mirrored layer is within h (from `h - s/2` on).
    #[test]
    fn the_wall_share_falls_with_distance() {
        let s = 0.01;
        let kernel = Kernel::<2>::new(2.0 * s).unwrap();
        let c = laplacian_calibration(&kernel, s, s * s);
        let wall = WallShare::new(&kernel, s, s * s, c);
        let (near, far) = (wall.at(0.5 * s), wall.at(0.9 * s));
        assert!(near > far && far > 0.0, "{near} {far}");
        assert_eq!(wall.at(1.5 * s), 0.0);
        assert_eq!(wall.at(2.0 * s), 0.0);
        assert_eq!(wall.at(f32::NAN), 0.0);
    }
}
