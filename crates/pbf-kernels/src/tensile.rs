//! The tensile-instability correction `s_corr = -k (W(r) / W(dq))^n` (Macklin & Müller 2013, eq. 13).

use crate::SimdF32;
use crate::{Kernel, KernelError};
use core::ops::Mul;

/// The artificial-pressure term that keeps particles from clumping at the free
/// surface: `s_corr(r) = -k (W(r) / W(|dq|))^n` with the poly6 `W`.
///
/// Defaults from the source: `k = 0.1`, `n = 4`, `|dq| = 0.2 h`
/// (the paper gives `|dq|` in `0.1 h ..= 0.3 h`).
///
/// ```
/// use pbf_kernels::{Kernel, TensileCorrection};
/// let kernel = Kernel::<3>::new(1.0)?;
/// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
/// // At |dq| the term is -k (to the rounding of the ratio, see `s_corr_from_poly6`).
/// assert!((s.s_corr(&kernel, 0.2f32 * 0.2) + 0.1).abs() <= 1e-6);
/// assert_eq!(s.s_corr(&kernel, 1.0), 0.0);
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensileCorrection {
    k: f32,
    n: u32,
    w_dq: f32,
    /// `1 / W(|dq|)`: the ratio is a multiplication (see `s_corr_from_poly6`).
    inverse_w_dq: f32,
    /// `(W(r_0) / W(|dq|))^n` for the distance `r_0` beyond which the term vanishes
    /// ([`TensileCorrection::vanishing_beyond`]); 0 for the paper's form.
    offset: f32,
}

impl TensileCorrection {
    /// Builds the term for `kernel` with strength `k >= 0`, exponent `n` in `1..=16`
    /// and `|dq| = dq_rel * h` with `dq_rel` in `(0, 1)`.
    ///
    /// # Errors
    /// [`KernelError::InvalidTensileParameter`] naming `k`, `n` or `dq_rel`, also when
    /// the term would overflow at `r = 0`, where it is largest: `dq_rel` when
    /// `(W(0) / W(|dq|))^n` is not a finite `f32`, `k` when `k` times it is not.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection, KernelError};
    /// let kernel = Kernel::<2>::new(1.0)?;
    /// assert!(TensileCorrection::new(&kernel, 0.1, 4, 0.2).is_ok());
    /// assert!(matches!(
    ///     TensileCorrection::new(&kernel, 0.1, 4, 1.5),
    ///     Err(KernelError::InvalidTensileParameter { field: "dq_rel", .. })
    /// ));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    pub fn new<const D: usize>(
        kernel: &Kernel<D>,
        k: f32,
        n: u32,
        dq_rel: f32,
    ) -> Result<Self, KernelError> {
        if !(k.is_finite() && k >= 0.0) {
            return Err(KernelError::InvalidTensileParameter {
                field: "k",
                value: f64::from(k),
                reason: "must be finite and >= 0",
            });
        }
        if !(1..=16).contains(&n) {
            return Err(KernelError::InvalidTensileParameter {
                field: "n",
                value: f64::from(n),
                reason: "must be in 1..=16",
            });
        }
        if !(dq_rel.is_finite() && dq_rel > 0.0 && dq_rel < 1.0) {
            return Err(KernelError::InvalidTensileParameter {
                field: "dq_rel",
                value: f64::from(dq_rel),
                reason: "must be in (0, 1): |dq| is a fraction of h",
            });
        }
        let dq = dq_rel * kernel.h();
        let w_dq = kernel.poly6(dq * dq);
        if !w_dq.is_normal() {
            return Err(KernelError::InvalidTensileParameter {
                field: "dq_rel",
                value: f64::from(dq_rel),
                reason: "W(|dq|) underflows f32 for this kernel radius",
            });
        }
        // Normal too: `W(|dq|)` is at most `W(0)`, which `Kernel::new` keeps below about
        // 1e13 (its coefficient must be a normal `f32`), and at least the smallest
        // normal `f32` (above).
        let inverse_w_dq = 1.0 / w_dq;
        debug_assert!(inverse_w_dq.is_normal(), "1 / {w_dq}");
        // Coincident particles must get a finite term: an infinite one would give them an
        // infinite position delta, or NaN where the gradient is zero.
        let unit = Self {
            k: 1.0,
            n,
            w_dq,
            inverse_w_dq,
            offset: 0.0,
        };
        if !unit.s_corr(kernel, 0.0).is_finite() {
            return Err(KernelError::InvalidTensileParameter {
                field: "dq_rel",
                value: f64::from(dq_rel),
                reason: "(W(0) / W(|dq|))^n overflows f32: use a smaller dq_rel or n",
            });
        }
        let correction = Self {
            k,
            n,
            w_dq,
            inverse_w_dq,
            offset: 0.0,
        };
        if !correction.s_corr(kernel, 0.0).is_finite() {
            return Err(KernelError::InvalidTensileParameter {
                field: "k",
                value: f64::from(k),
                reason: "k (W(0) / W(|dq|))^n overflows f32",
            });
        }
        Ok(correction)
    }

    /// The same term shifted to vanish at and beyond the distance `r0`:
    /// `s_corr(r) = -k max((W(r) / W(|dq|))^n - (W(r0) / W(|dq|))^n, 0)`.
    ///
    /// The paper's term pushes every pair within h apart, also a pair at the rest
    /// spacing. Against a constraint that only corrects compression, nothing pulls
    /// back, so the paper's term keeps pushing a fluid at rest apart in every
    /// iteration and adds energy. With `r0` the rest spacing, a lattice at rest feels
    /// no term at all and only pairs closer than the rest spacing are pushed apart,
    /// as far as the rest spacing: the term keeps particles from clumping without
    /// pumping a free surface outwards.
    ///
    /// # Errors
    /// [`KernelError::InvalidTensileParameter`] naming `r0` unless `0 < r0 <= h`.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?.vanishing_beyond(&kernel, 0.5)?;
    /// assert_eq!(s.s_corr(&kernel, 0.5 * 0.5), 0.0);
    /// assert_eq!(s.s_corr(&kernel, 0.7 * 0.7), 0.0);
    /// assert!(s.s_corr(&kernel, 0.2 * 0.2) < 0.0 && s.s_corr(&kernel, 0.2 * 0.2) > -0.1);
    /// assert!(s.s_corr(&kernel, 0.1 * 0.1) < s.s_corr(&kernel, 0.2 * 0.2));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    pub fn vanishing_beyond<const D: usize>(
        self,
        kernel: &Kernel<D>,
        r0: f32,
    ) -> Result<Self, KernelError> {
        if !(r0.is_finite() && r0 > 0.0 && r0 <= kernel.h()) {
            return Err(KernelError::InvalidTensileParameter {
                field: "r0",
                value: f64::from(r0),
                reason: "must be in (0, h]",
            });
        }
        let offset = power(kernel.poly6(r0 * r0) * self.inverse_w_dq, self.n);
        Ok(Self { offset, ..self })
    }

    /// The strength `k`.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// # let kernel = Kernel::<3>::new(1.0)?;
    /// assert_eq!(TensileCorrection::new(&kernel, 0.1, 4, 0.2)?.k(), 0.1);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    pub fn k(&self) -> f32 {
        self.k
    }

    /// The exponent `n`.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// # let kernel = Kernel::<3>::new(1.0)?;
    /// assert_eq!(TensileCorrection::new(&kernel, 0.1, 4, 0.2)?.n(), 4);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    pub fn n(&self) -> u32 {
        self.n
    }

    /// `W(|dq|)`, the poly6 value the ratio is taken against.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// assert_eq!(s.w_dq(), kernel.poly6(0.2f32 * 0.2));
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    pub fn w_dq(&self) -> f32 {
        self.w_dq
    }

    /// `s_corr` at squared distance `r2`: `-k (W(r2) / W(|dq|))^n`, 0 outside the
    /// support (less the value at `r0` and never positive, after
    /// [`vanishing_beyond`](Self::vanishing_beyond)).
    /// The scalar reference.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// assert!(s.s_corr(&kernel, 0.0) < -0.1); // closer than |dq|: stronger
    /// assert!(s.s_corr(&kernel, 0.5) > -0.1);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn s_corr<const D: usize>(&self, kernel: &Kernel<D>, r2: f32) -> f32 {
        self.s_corr_from_poly6(kernel.poly6(r2))
    }

    /// `s_corr` from an already computed poly6 value `w = W(r)`, so a pass that needs
    /// `W` anyway evaluates it once: `-k * (w * (1 / W(|dq|)))^n`, the power taken by
    /// repeated squaring (the one order of multiplications for the scalar reference and
    /// every lane width).
    ///
    /// The ratio is a multiplication by the rounded inverse, not a division: the
    /// division was one of the three a pair cost in the solver's delta pass (with the
    /// gradient's square root and division), all on one unit of the core. So the ratio
    /// carries up to about one ulp more than `w / W(|dq|)`, and at `|dq|` the term
    /// is `-k` to within about `2 n` ulps rather than exactly.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// assert!((s.s_corr_from_poly6(s.w_dq()) + 0.1).abs() <= 1e-6);
    /// assert_eq!(s.s_corr_from_poly6(0.0), -0.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn s_corr_from_poly6(&self, w: f32) -> f32 {
        let excess = power(w * self.inverse_w_dq, self.n) - self.offset;
        -self.k * if excess > 0.0 { excess } else { 0.0 }
    }

    /// [`s_corr`](Self::s_corr) on eight squared distances; bit-identical lane by lane.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection, f32x8};
    /// let kernel = Kernel::<2>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// let r2 = f32x8::from([0.0, 0.04, 0.1, 0.3, 0.6, 0.9, 1.0, 5.0]);
    /// let lanes = s.s_corr_lanes(&kernel, r2).to_array();
    /// for (lane, r2) in r2.to_array().iter().enumerate() {
    ///     assert_eq!(lanes[lane].to_bits(), s.s_corr(&kernel, *r2).to_bits());
    /// }
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn s_corr_lanes<V: SimdF32, const D: usize>(&self, kernel: &Kernel<D>, r2: V) -> V {
        self.s_corr_from_poly6_lanes(kernel.poly6_lanes(r2))
    }

    /// [`s_corr_from_poly6`](Self::s_corr_from_poly6) on eight poly6 values.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection, f32x8};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// let w = s.s_corr_from_poly6_lanes(f32x8::splat(s.w_dq()));
    /// assert_eq!(w.to_array(), [-0.1; 8]);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline(always)]
    pub fn s_corr_from_poly6_lanes<V: SimdF32>(&self, w: V) -> V {
        let excess = power(w * V::splat(self.inverse_w_dq), self.n) - V::splat(self.offset);
        let zero = V::splat(0.0);
        -V::splat(self.k) * V::select(excess.gt(zero), excess, zero)
    }
}

/// `x^n` for `n >= 1` by repeated squaring, the one order of multiplications for the
/// scalar reference and every lane width, so that they agree bit for bit:
/// `floor(log2 n) + popcount(n) - 1` multiplications (two for the default `n = 4`,
/// `(x x)(x x)`, where the left-to-right product took three in a row).
#[inline(always)]
pub(crate) fn power<T: Copy + Mul<Output = T>>(x: T, n: u32) -> T {
    debug_assert!(n >= 1, "a power of at least one");
    // The default exponent without the loop's branches.
    if n == 4 {
        let square = x * x;
        return square * square;
    }
    let (mut base, mut e, mut product) = (x, n, None::<T>);
    loop {
        if e & 1 == 1 {
            product = Some(product.map_or(base, |p| p * base));
        }
        e >>= 1;
        if e == 0 {
            return product.unwrap_or(x);
        }
        base = base * base;
    }
}

#[cfg(test)]
mod tests {
    use super::power;

    /// Every exponent of the allowed range gives the power, by the squarings the
    /// documentation counts.
    #[test]
    fn power_squares_its_way_up() {
        for n in 1..=16u32 {
            assert_eq!(power(2.0f32, n), 2.0f32.powi(n as i32), "2^{n}");
            assert_eq!(power(-1.0f32, n), if n % 2 == 0 { 1.0 } else { -1.0 });
        }
        assert_eq!(power(1.5f32, 3), 1.5 * 2.25);
        // (x x)(x x), not ((x x) x) x, at every x where the two orders differ.
        let mut differ = 0;
        for k in 0..1000 {
            let x = 1.0 + k as f32 * 1.0e-3;
            assert_eq!(power(x, 4).to_bits(), ((x * x) * (x * x)).to_bits());
            differ += usize::from(((x * x) * x * x).to_bits() != power(x, 4).to_bits());
        }
        assert!(
            differ > 0,
            "the orders never differed: the test shows nothing"
        );
    }
}
