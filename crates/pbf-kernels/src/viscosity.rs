//! The pair term of physical viscosity: the SPH Laplacian of the velocity in the form
//! of Monaghan (2005) and Morris et al. (1997), with a kinematic viscosity `nu` in
//! m^2/s.

use crate::{Kernel, SimdF32};

impl<const D: usize> Kernel<D> {
    /// The acceleration particle `j` gives particle `i` through a kinematic viscosity
    /// `nu` (m^2/s): `2 (D + 2) nu V_j (v_ij . x_ij) / (r^2 + 0.01 h^2) gradW_ij`, with
    /// `volume = V_j = m / rho_j`, `dv = v_i - v_j`, `x = x_i - x_j`, `r2 = |x|^2` and
    /// `factor` the spiky gradient factor at `r2` (`gradW_ij = factor x`). The
    /// `0.01 h^2` keeps the term finite as `r` goes to 0. It opposes the particles'
    /// approach and separation along `x` and is antisymmetric: `j`'s term on `i` is
    /// minus `i`'s on `j` for equal volumes, so a pass conserves momentum.
    ///
    /// ```
    /// use pbf_kernels::{Kernel, norm2};
    /// let k = Kernel::<2>::new(0.1)?;
    /// let (x, dv) = ([0.05, 0.0], [-1.0, 0.0]); // i right of j, moving towards it
    /// let f = k.spiky_gradient_factor(norm2(x));
    /// let a = k.viscosity_term(1e-3, 2.5e-3, dv, x, norm2(x), f);
    /// assert!(a[0] > 0.0 && a[1] == 0.0); // slows the approach
    /// let b = k.viscosity_term(1e-3, 2.5e-3, [1.0, 0.0], [-0.05, 0.0], norm2(x), f);
    /// assert_eq!(b[0], -a[0]); // and j feels the opposite
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn viscosity_term(
        &self,
        nu: f32,
        volume: f32,
        dv: [f32; D],
        x: [f32; D],
        r2: f32,
        factor: f32,
    ) -> [f32; D] {
        let scale = (2 * (D + 2)) as f32 * nu;
        let mut projection = dv[0] * x[0];
        for a in 1..D {
            projection += dv[a] * x[a];
        }
        let q = scale * volume * projection / (r2 + 0.01 * self.h2()) * factor;
        x.map(|c| q * c)
    }

    /// Lanes version of [`viscosity_term`](Self::viscosity_term), the same operations
    /// in the same order.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, f32x8, norm2};
    /// let k = Kernel::<2>::new(0.1)?;
    /// let s = f32x8::splat;
    /// let (x, dv) = ([0.05, 0.0], [-1.0, 0.0]);
    /// let f = k.spiky_gradient_factor(norm2(x));
    /// let lanes = k.viscosity_term_lanes(1e-3, s(2.5e-3), dv.map(s), x.map(s), s(norm2(x)), s(f));
    /// let one = k.viscosity_term(1e-3, 2.5e-3, dv, x, norm2(x), f);
    /// assert_eq!(lanes[0].to_array(), [one[0]; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn viscosity_term_lanes<V: SimdF32>(
        &self,
        nu: f32,
        volume: V,
        dv: [V; D],
        x: [V; D],
        r2: V,
        factor: V,
    ) -> [V; D] {
        let scale = V::splat((2 * (D + 2)) as f32 * nu);
        let mut projection = dv[0] * x[0];
        for a in 1..D {
            projection += dv[a] * x[a];
        }
        let q = scale * volume * projection / (r2 + V::splat(0.01 * self.h2())) * factor;
        x.map(|c| q * c)
    }
}
