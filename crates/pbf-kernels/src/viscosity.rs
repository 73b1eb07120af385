//! The pair term of physical viscosity: the SPH Laplacian of the velocity in the
//! component-wise form of Morris et al. (1997), with a kinematic viscosity `nu` in
//! m^2/s.
//!
//! The form differentiates each velocity component along the pair's offset with a
//! scalar weight. Its error on a quadratic field is the kernel's second moment over
//! the neighbours, which barely changes as layers of particles slide past each other
//! (a few percent at h = 2 spacings); Monaghan's (2005) projected form depends on a
//! mixed fourth moment that changes by a quarter, and a shear flow would see a
//! viscosity that depends on how its layers happen to be offset.

use crate::{Kernel, SimdF32};

impl<const D: usize> Kernel<D> {
    /// The acceleration particle `j` gives particle `i` through a kinematic viscosity
    /// `nu` (m^2/s): `2 nu V_j (x_ij . gradW_ij) / (r^2 + 0.01 h^2) v_ij`, with
    /// `volume = V_j = m / rho_j`, `dv = v_ij = v_i - v_j`, `r2 = |x_ij|^2` and
    /// `factor` the spiky gradient factor at `r2` (`gradW_ij = factor x_ij`, so
    /// `x_ij . gradW_ij = factor r2`). The `0.01 h^2` keeps the term finite as `r` goes to 0.
    /// It is zero (not NaN) at `r2 = +inf` with `factor = 0`. It pulls `v_i`
    /// towards `v_j`, component by component, and is antisymmetric:
    /// `j`'s term on `i` is minus `i`'s on `j` for equal volumes, so a pass conserves
    /// momentum.
    ///
    /// ```
    /// use pbf_kernels::{Kernel, norm2};
    /// let k = Kernel::<2>::new(0.1)?;
    /// let (x, dv) = ([0.05, 0.0], [0.0, 1.0]); // i right of j, sliding up past it
    /// let f = k.spiky_gradient_factor(norm2(x));
    /// let a = k.viscosity_term(1e-3, 2.5e-3, dv, norm2(x), f);
    /// assert!(a[1] < 0.0 && a[0] == 0.0); // slows the sliding
    /// let b = k.viscosity_term(1e-3, 2.5e-3, [0.0, -1.0], norm2(x), f);
    /// assert_eq!(b[1], -a[1]); // and j feels the opposite
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn viscosity_term(
        &self,
        nu: f32,
        volume: f32,
        dv: [f32; D],
        r2: f32,
        factor: f32,
    ) -> [f32; D] {
        // r2 / (r2 + e) as 1 - e / (r2 + e): the lists' padding lanes carry
        // r2 = +inf (with factor 0), where the quotient of the two would be NaN.
        let e = 0.01 * self.h2();
        let q = 2.0 * nu * volume * (1.0 - e / (r2 + e)) * factor;
        dv.map(|c| q * c)
    }

    /// Lanes version of [`viscosity_term`](Self::viscosity_term), the same operations
    /// in the same order.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8, norm2};
    /// let k = Kernel::<2>::new(0.1)?;
    /// let s = f32x8::splat;
    /// let (x, dv) = ([0.05, 0.0], [-1.0, 0.5]);
    /// let f = k.spiky_gradient_factor(norm2(x));
    /// let lanes = k.viscosity_term_lanes(1e-3, s(2.5e-3), dv.map(s), s(norm2(x)), s(f));
    /// let one = k.viscosity_term(1e-3, 2.5e-3, dv, norm2(x), f);
    /// assert_eq!(lanes[0].to_array(), [one[0]; 8]);
    /// assert_eq!(lanes[1].to_array(), [one[1]; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn viscosity_term_lanes<V: SimdF32>(
        &self,
        nu: f32,
        volume: V,
        dv: [V; D],
        r2: V,
        factor: V,
    ) -> [V; D] {
        let e = V::splat(0.01 * self.h2());
        let q = V::splat(2.0 * nu) * volume * (V::splat(1.0) - e / (r2 + e)) * factor;
        dv.map(|c| q * c)
    }
}
