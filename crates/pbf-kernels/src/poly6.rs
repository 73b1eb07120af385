//! The poly6 kernel `W(r) = c (h^2 - r^2)^3` (density and every weighted average).

use crate::Kernel;
use crate::SimdF32;

impl<const D: usize> Kernel<D> {
    /// poly6 at squared distance `r2`: `315/(64 pi h^9) (h^2 - r2)^3` in 3D,
    /// `4/(pi h^8) (h^2 - r2)^3` in 2D, and 0 unless `r2 < h^2`.
    ///
    /// This is the scalar reference, the specification of
    /// [`poly6_lanes`](Self::poly6_lanes).
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let k = Kernel::<3>::new(1.0)?;
    /// let w0 = 315.0 / (64.0 * std::f32::consts::PI);
    /// assert!((k.poly6(0.0) - w0).abs() < 1e-6);
    /// assert_eq!(k.poly6(1.0), 0.0);
    /// assert_eq!(k.poly6(4.0), 0.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn poly6(&self, r2: f32) -> f32 {
        if r2 < self.h2 {
            let d = self.h2 - r2;
            self.poly6_coef * (d * d * d)
        } else {
            0.0
        }
    }

    /// poly6 on eight squared distances at once; lanes with `!(r2 < h^2)` (outside
    /// the support, or NaN) are 0. Bit-identical to [`poly6`](Self::poly6) lane by lane.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8};
    /// let k = Kernel::<3>::new(1.0)?;
    /// let r2 = f32x8::from([0.0, 0.25, 0.5, 0.99, 1.0, 2.0, 0.1, 0.7]);
    /// let w = k.poly6_lanes(r2).to_array();
    /// for (lane, r2) in r2.to_array().iter().enumerate() {
    ///     assert_eq!(w[lane].to_bits(), k.poly6(*r2).to_bits());
    /// }
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn poly6_lanes<V: SimdF32>(&self, r2: V) -> V {
        let h2 = V::splat(self.h2);
        let d = h2 - r2;
        let w = V::splat(self.poly6_coef) * (d * d * d);
        V::select(r2.lt(h2), w, V::splat(0.0))
    }
}
