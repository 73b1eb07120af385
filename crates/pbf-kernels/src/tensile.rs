//! The tensile-instability correction `s_corr = -k (W(r) / W(dq))^n` (Macklin & Müller 2013, eq. 13).

use crate::SimdF32;
use crate::{Kernel, KernelError};

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
/// // At |dq| the term is exactly -k.
/// assert_eq!(s.s_corr(&kernel, 0.2f32 * 0.2), -0.1);
/// assert_eq!(s.s_corr(&kernel, 1.0), 0.0);
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensileCorrection {
    k: f32,
    n: u32,
    w_dq: f32,
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
        // Coincident particles must get a finite term: an infinite one would give them an
        // infinite position delta, or NaN where the gradient is zero.
        let unit = Self { k: 1.0, n, w_dq };
        if !unit.s_corr(kernel, 0.0).is_finite() {
            return Err(KernelError::InvalidTensileParameter {
                field: "dq_rel",
                value: f64::from(dq_rel),
                reason: "(W(0) / W(|dq|))^n overflows f32: use a smaller dq_rel or n",
            });
        }
        let correction = Self { k, n, w_dq };
        if !correction.s_corr(kernel, 0.0).is_finite() {
            return Err(KernelError::InvalidTensileParameter {
                field: "k",
                value: f64::from(k),
                reason: "k (W(0) / W(|dq|))^n overflows f32",
            });
        }
        Ok(correction)
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

    /// `s_corr` at squared distance `r2`: `-k (W(r2) / W(|dq|))^n`, 0 outside the support.
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
    /// `W` anyway evaluates it once: `-k * (w / W(|dq|))^n`, the power taken by
    /// `n - 1` multiplications from the left.
    ///
    /// ```
    /// # use pbf_kernels::{Kernel, TensileCorrection};
    /// let kernel = Kernel::<3>::new(1.0)?;
    /// let s = TensileCorrection::new(&kernel, 0.1, 4, 0.2)?;
    /// assert_eq!(s.s_corr_from_poly6(s.w_dq()), -0.1);
    /// assert_eq!(s.s_corr_from_poly6(0.0), -0.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn s_corr_from_poly6(&self, w: f32) -> f32 {
        let ratio = w / self.w_dq;
        let mut power = ratio;
        for _ in 1..self.n {
            power *= ratio;
        }
        -self.k * power
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
        let ratio = w / V::splat(self.w_dq);
        let mut power = ratio;
        for _ in 1..self.n {
            power *= ratio;
        }
        -V::splat(self.k) * power
    }
}
