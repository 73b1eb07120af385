//! The pair terms the solver sums over neighbours `j` of particle `i`.
//!
//! Each takes the pieces a pass has already computed for the pair (the offset
//! `x = p_i - p_j`, its squared length, `W` or the gradient factor), so no pass
//! evaluates a square root or a kernel twice. The scalar versions are the
//! specification; the `_lanes` versions do the same operations in the same order on
//! eight pairs and are bit-identical to them.
//!
//! Sign conventions: `gradW_ij = gradW(p_i - p_j)`, which points from `i` towards `j`.
//! The curl is the SPH curl `omega_i = sum_j (m/rho_j) gradW_ij x (v_j - v_i)`, equal to
//! the paper's `sum_j (v_j - v_i) x grad_{p_j} W_ij`: for a rigid rotation with angular
//! velocity `Omega` it gives `2 Omega`.

use crate::Kernel;
use crate::SimdF32;

impl<const D: usize> Kernel<D> {
    /// Density contribution `m W(r)` of a neighbour at squared distance `r2`.
    /// The density sum includes `j = i` (`r2 = 0`, contribution `m W(0)`).
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// assert_eq!(k.density_term(2.0, 0.25), 2.0 * k.poly6(0.25));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn density_term(&self, mass: f32, r2: f32) -> f32 {
        mass * self.poly6(r2)
    }

    /// Lanes version of [`density_term`](Self::density_term).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<3>::new(1.0)?;
    /// let d = k.density_term_lanes(2.0, f32x8::splat(0.25));
    /// assert_eq!(d.to_array()[3], k.density_term(2.0, 0.25));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn density_term_lanes<V: SimdF32>(&self, mass: f32, r2: V) -> V {
        V::splat(mass) * self.poly6_lanes(r2)
    }

    /// The constraint gradient with respect to the neighbour, up to sign:
    /// `(m / rho0) gradW(x)`, given `scale = m / rho0` and `factor =`
    /// [`spiky_gradient_factor`](Self::spiky_gradient_factor)`(r2)`.
    /// The lambda pass sums these (`grad_{p_i} C_i`) and their squared lengths
    /// (`|grad_{p_j} C_i|^2`).
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let x = [0.3, 0.1, -0.2];
    /// let r2 = 0.3f32 * 0.3 + 0.1 * 0.1 + 0.2 * 0.2;
    /// let g = k.constraint_gradient(0.5, k.spiky_gradient_factor(r2), x);
    /// let reference = k.spiky_gradient(x);
    /// assert!((g[0] - 0.5 * reference[0]).abs() < 1e-6);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn constraint_gradient(&self, scale: f32, factor: f32, x: [f32; D]) -> [f32; D] {
        let f = scale * factor;
        x.map(|c| f * c)
    }

    /// Lanes version of [`constraint_gradient`](Self::constraint_gradient).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<2>::new(1.0)?;
    /// let g = k.constraint_gradient_lanes(0.5, f32x8::splat(-3.0), [f32x8::splat(0.2); 2]);
    /// assert_eq!(g[1].to_array()[0], k.constraint_gradient(0.5, -3.0, [0.2; 2])[1]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn constraint_gradient_lanes<V: SimdF32>(
        &self,
        scale: f32,
        factor: V,
        x: [V; D],
    ) -> [V; D] {
        let f = V::splat(scale) * factor;
        x.map(|c| f * c)
    }

    /// Position-delta contribution `(m / rho0) (lambda_i + lambda_j + s_corr) gradW(x)`,
    /// given `scale = m / rho0`, `lambda_sum = lambda_i + lambda_j`, the pair's `s_corr`
    /// and its gradient `factor`.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let d = k.position_delta_term(1.0, -0.5, -0.1, -2.0, [0.1, 0.0, 0.0]);
    /// assert!((d[0] - (-0.6f32 * -2.0 * 0.1)).abs() < 1e-7);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn position_delta_term(
        &self,
        scale: f32,
        lambda_sum: f32,
        s_corr: f32,
        factor: f32,
        x: [f32; D],
    ) -> [f32; D] {
        let f = (lambda_sum + s_corr) * (scale * factor);
        x.map(|c| f * c)
    }

    /// Lanes version of [`position_delta_term`](Self::position_delta_term).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<3>::new(1.0)?;
    /// let s = f32x8::splat;
    /// let d = k.position_delta_term_lanes(1.0, s(-0.5), s(-0.1), s(-2.0), [s(0.1), s(0.0), s(0.3)]);
    /// let reference = k.position_delta_term(1.0, -0.5, -0.1, -2.0, [0.1, 0.0, 0.3]);
    /// assert_eq!(d[2].to_array()[5], reference[2]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn position_delta_term_lanes<V: SimdF32>(
        &self,
        scale: f32,
        lambda_sum: V,
        s_corr: V,
        factor: V,
        x: [V; D],
    ) -> [V; D] {
        let f = (lambda_sum + s_corr) * (V::splat(scale) * factor);
        x.map(|c| f * c)
    }

    /// XSPH viscosity contribution `(m / rho_j) (v_j - v_i) W`, given
    /// `volume = m / rho_j`, `dv = v_j - v_i` and `w = W(r)`. The caller multiplies
    /// the sum by the viscosity constant `c`.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<2>::new(1.0)?;
    /// assert_eq!(k.xsph_term(0.5, [1.0, -2.0], 4.0), [2.0, -4.0]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn xsph_term(&self, volume: f32, dv: [f32; D], w: f32) -> [f32; D] {
        let f = volume * w;
        dv.map(|c| f * c)
    }

    /// Lanes version of [`xsph_term`](Self::xsph_term).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<2>::new(1.0)?;
    /// let t = k.xsph_term_lanes(f32x8::splat(0.5), [f32x8::splat(1.0), f32x8::splat(-2.0)], f32x8::splat(4.0));
    /// assert_eq!(t[1].to_array(), [-4.0; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn xsph_term_lanes<V: SimdF32>(&self, volume: V, dv: [V; D], w: V) -> [V; D] {
        let f = volume * w;
        dv.map(|c| f * c)
    }

    /// Curl contribution `(m / rho_j) gradW_ij x (v_j - v_i)`, given `volume = m / rho_j`,
    /// `dv = v_j - v_i` and `grad = gradW(p_i - p_j)`. Always three components: in 2D
    /// the curl is the scalar in the last one (`[0, 0, g_x dv_y - g_y dv_x]`).
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let c = k.vorticity_term(1.0, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]);
    /// assert_eq!(c, [0.0, 0.0, 1.0]);
    /// let k2 = Kernel::<2>::new(1.0)?;
    /// assert_eq!(k2.vorticity_term(2.0, [0.0, 1.0], [1.0, 0.0]), [0.0, 0.0, 2.0]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn vorticity_term(&self, volume: f32, dv: [f32; D], grad: [f32; D]) -> [f32; 3] {
        let g = grad.map(|c| volume * c);
        let (g, v) = (crate::pad3(g), crate::pad3(dv));
        if D == 3 {
            [
                g[1] * v[2] - g[2] * v[1],
                g[2] * v[0] - g[0] * v[2],
                g[0] * v[1] - g[1] * v[0],
            ]
        } else {
            [0.0, 0.0, g[0] * v[1] - g[1] * v[0]]
        }
    }

    /// Lanes version of [`vorticity_term`](Self::vorticity_term).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<3>::new(1.0)?;
    /// let s = f32x8::splat;
    /// let c = k.vorticity_term_lanes(s(1.0), [s(0.0), s(1.0), s(0.0)], [s(1.0), s(0.0), s(0.0)]);
    /// assert_eq!(c[2].to_array(), [1.0; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn vorticity_term_lanes<V: SimdF32>(&self, volume: V, dv: [V; D], grad: [V; D]) -> [V; 3] {
        let g = grad.map(|c| volume * c);
        let (g, v) = (crate::pad3_lanes(g), crate::pad3_lanes(dv));
        if D == 3 {
            [
                g[1] * v[2] - g[2] * v[1],
                g[2] * v[0] - g[0] * v[2],
                g[0] * v[1] - g[1] * v[0],
            ]
        } else {
            [V::splat(0.0), V::splat(0.0), g[0] * v[1] - g[1] * v[0]]
        }
    }

    /// Contribution to the gradient of the vorticity magnitude,
    /// `eta_i = sum_j (m / rho_j) (|omega_j| - |omega_i|) gradW_ij`, given
    /// `volume = m / rho_j`, `d_magnitude = |omega_j| - |omega_i|` and `grad`.
    /// (The difference form is the SPH gradient; it vanishes where `|omega|` is uniform,
    /// also at a free surface.)
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<2>::new(1.0)?;
    /// assert_eq!(k.vorticity_gradient_term(0.5, 2.0, [-1.0, 0.0]), [-1.0, 0.0]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn vorticity_gradient_term(
        &self,
        volume: f32,
        d_magnitude: f32,
        grad: [f32; D],
    ) -> [f32; D] {
        let f = volume * d_magnitude;
        grad.map(|c| f * c)
    }

    /// Lanes version of [`vorticity_gradient_term`](Self::vorticity_gradient_term).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<2>::new(1.0)?;
    /// let t = k.vorticity_gradient_term_lanes(f32x8::splat(0.5), f32x8::splat(2.0), [f32x8::splat(-1.0), f32x8::ZERO]);
    /// assert_eq!(t[0].to_array(), [-1.0; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn vorticity_gradient_term_lanes<V: SimdF32>(
        &self,
        volume: V,
        d_magnitude: V,
        grad: [V; D],
    ) -> [V; D] {
        let f = volume * d_magnitude;
        grad.map(|c| f * c)
    }
}
