//! The spiky kernel `W(r) = c (h - r)^3` and its gradient (pressure-like forces).

use crate::Kernel;
use crate::SimdF32;

impl<const D: usize> Kernel<D> {
    /// The spiky kernel itself: `15/(pi h^6) (h - r)^3` in 3D, `10/(pi h^5) (h - r)^3`
    /// in 2D, 0 unless `r2 < h^2`. The solver uses only its gradient; the value is
    /// here so that tests can check the gradient against its derivative.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<2>::new(1.0)?;
    /// assert!((k.spiky(0.0) - 10.0 / std::f32::consts::PI).abs() < 1e-6);
    /// assert_eq!(k.spiky(1.0), 0.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn spiky(&self, r2: f32) -> f32 {
        if r2 < self.h2 {
            let d = self.h - r2.sqrt();
            self.spiky_coef * (d * d * d)
        } else {
            0.0
        }
    }

    /// The factor `s(r2)` with `gradW(x) = s(|x|^2) x`: `-45/(pi h^6) (h - r)^2 / r` in
    /// 3D, `-30/(pi h^5) (h - r)^2 / r` in 2D; 0 unless `f32::MIN_POSITIVE <= r2 < h^2`.
    /// So gradW(0) = 0, and a subnormal `r2` (particles about 1e-19 apart or closer)
    /// counts as `r = 0`: there `r` has lost its precision and, for small `h`, the
    /// factor would overflow to infinity (and `0 * inf` give a NaN component).
    ///
    /// The solver computes `r2` once per pair and scales the offset by this factor.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let s = k.spiky_gradient_factor(0.25); // r = 0.5
    /// let expected = -45.0 / std::f32::consts::PI * 0.25 / 0.5;
    /// assert!((s - expected).abs() < 1e-5);
    /// assert_eq!(k.spiky_gradient_factor(0.0), 0.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn spiky_gradient_factor(&self, r2: f32) -> f32 {
        self.spiky_gradient_factor_and_slope(r2).0
    }

    /// The spiky gradient `gradW(x) = -45/(pi h^6) (h - r)^2 x / r` (3D) or
    /// `-30/(pi h^5) (h - r)^2 x / r` (2D) at offset `x = p_i - p_j`; zero for `r = 0`
    /// and outside the support. It points from `p_i` towards `p_j`.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let g = k.spiky_gradient([0.5, 0.0, 0.0]);
    /// assert!(g[0] < 0.0 && g[1] == 0.0 && g[2] == 0.0);
    /// assert_eq!(k.spiky_gradient([0.0; 3]), [0.0; 3]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn spiky_gradient(&self, x: [f32; D]) -> [f32; D] {
        let s = self.spiky_gradient_factor(crate::norm2(x));
        x.map(|c| s * c)
    }

    /// [`spiky_gradient_factor`](Self::spiky_gradient_factor) on eight squared distances;
    /// bit-identical to the scalar reference lane by lane.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<3>::new(1.0)?;
    /// let r2 = f32x8::from([0.0, 0.01, 0.25, 0.5, 0.999, 1.0, 3.0, 1e-30]);
    /// let s = k.spiky_gradient_factor_lanes(r2).to_array();
    /// for (lane, r2) in r2.to_array().iter().enumerate() {
    ///     assert_eq!(s[lane].to_bits(), k.spiky_gradient_factor(*r2).to_bits());
    /// }
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn spiky_gradient_factor_lanes<V: SimdF32>(&self, r2: V) -> V {
        // The slope's select is dead here and left out by the compiler.
        self.spiky_gradient_factor_and_slope_lanes(r2).0
    }

    /// [`spiky_gradient_factor`](Self::spiky_gradient_factor) together with the slope
    /// `dW/dr = -45/(pi h^6) (h - r)^2` (3D; `-30/(pi h^5) (h - r)^2` in 2D) it divides
    /// by `r`: `(factor, slope)`, both 0 where the factor is. The factor is
    /// `spiky_gradient_factor`, which takes it from here, and `|gradW(x)| = |slope|`: a pass that sums
    /// `|gradW|^2` (the lambda pass's denominator) takes `slope * slope`, two
    /// operations where `|factor x|^2` took six.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let x = [0.3f32, -0.2, 0.4];
    /// let (factor, slope) = k.spiky_gradient_factor_and_slope(pbf_kernels::norm2(x));
    /// assert_eq!(factor, k.spiky_gradient_factor(pbf_kernels::norm2(x)));
    /// let g = k.spiky_gradient(x);
    /// assert!((pbf_kernels::norm2(g) - slope * slope).abs() <= 1e-5 * slope * slope);
    /// assert_eq!(k.spiky_gradient_factor_and_slope(0.0), (0.0, 0.0));
    /// assert_eq!(k.spiky_gradient_factor_and_slope(1.0), (0.0, 0.0));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn spiky_gradient_factor_and_slope(&self, r2: f32) -> (f32, f32) {
        if r2 < self.h2 && r2 >= f32::MIN_POSITIVE {
            let r = r2.sqrt();
            let d = self.h - r;
            let slope = self.spiky_grad_coef * (d * d);
            (slope / r, slope)
        } else {
            (0.0, 0.0)
        }
    }

    /// [`spiky_gradient_factor_and_slope`](Self::spiky_gradient_factor_and_slope) on
    /// eight squared distances, bit-identical to it lane by lane.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<2>::new(1.0)?;
    /// let r2 = f32x8::from([0.0, 0.01, 0.25, 0.5, 0.999, 1.0, 3.0, 1e-30]);
    /// let (factor, slope) = k.spiky_gradient_factor_and_slope_lanes(r2);
    /// for (lane, r2) in r2.to_array().iter().enumerate() {
    ///     let (f, s) = k.spiky_gradient_factor_and_slope(*r2);
    ///     assert_eq!(factor.to_array()[lane].to_bits(), f.to_bits());
    ///     assert_eq!(slope.to_array()[lane].to_bits(), s.to_bits());
    /// }
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn spiky_gradient_factor_and_slope_lanes<V: SimdF32>(&self, r2: V) -> (V, V) {
        let h2 = V::splat(self.h2);
        let r = r2.sqrt();
        let d = V::splat(self.h) - r;
        let slope = V::splat(self.spiky_grad_coef) * (d * d);
        let inside = r2.lt(h2) & r2.ge(V::splat(f32::MIN_POSITIVE));
        let zero = V::splat(0.0);
        (
            V::select(inside, slope / r, zero),
            V::select(inside, slope, zero),
        )
    }

    /// [`spiky_gradient`](Self::spiky_gradient) on eight offsets in SoA form
    /// (`x[axis]` holds the eight offsets' components along `axis`).
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<2>::new(1.0)?;
    /// let x = [f32x8::splat(0.3), f32x8::splat(-0.4)];
    /// let g = k.spiky_gradient_lanes(x);
    /// let reference = k.spiky_gradient([0.3, -0.4]);
    /// assert_eq!(g[0].to_array()[0], reference[0]);
    /// assert_eq!(g[1].to_array()[7], reference[1]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn spiky_gradient_lanes<V: SimdF32>(&self, x: [V; D]) -> [V; D] {
        let s = self.spiky_gradient_factor_lanes(crate::norm2_lanes(x));
        x.map(|c| s * c)
    }
}
