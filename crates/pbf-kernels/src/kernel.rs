//! The [`Kernel`] value: a kernel radius and the constants that depend only on it.

use crate::KernelError;
use core::f64::consts::PI;

/// A smoothing kernel of radius `h` in `D` dimensions (`D` = 2 or 3), with every
/// constant that depends only on `h` computed once.
///
/// The constants are computed in `f64` and rounded once to `f32`, so the scalar and
/// lane versions of every term share exactly the same inputs.
///
/// Support: a pair at squared distance `r2` is inside the support when
/// `r2 < h * h` (strict, see [`within`](crate::within)); every term is zero outside.
///
/// ```
/// use pbf_kernels::Kernel;
/// let k = Kernel::<3>::new(0.1)?;
/// assert_eq!(k.h(), 0.1);
/// assert!(k.poly6(0.0) > 0.0);
/// assert_eq!(k.poly6(0.1 * 0.1), 0.0); // r = h is outside the support
/// # Ok::<(), pbf_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kernel<const D: usize> {
    pub(crate) h: f32,
    pub(crate) h2: f32,
    /// poly6: W(r) = poly6_coef * (h^2 - r^2)^3.
    pub(crate) poly6_coef: f32,
    /// spiky: W(r) = spiky_coef * (h - r)^3.
    pub(crate) spiky_coef: f32,
    /// spiky gradient: gradW(x) = spiky_grad_coef * (h - r)^2 * x / r (negative).
    pub(crate) spiky_grad_coef: f32,
}

impl<const D: usize> Kernel<D> {
    /// Builds the kernel of radius `h`.
    ///
    /// # Errors
    /// [`KernelError::UnsupportedDimension`] unless `D` is 2 or 3,
    /// [`KernelError::InvalidRadius`] for `h <= 0`, NaN or infinite, and
    /// [`KernelError::RadiusOutOfRange`] when a constant would not be a finite,
    /// normal `f32` (the supported range includes `1e-4 <= h <= 1e4`).
    ///
    /// ```
    /// use pbf_kernels::{Kernel, KernelError};
    /// assert!(Kernel::<2>::new(1.0).is_ok());
    /// assert_eq!(
    ///     Kernel::<3>::new(-1.0),
    ///     Err(KernelError::InvalidRadius { value: -1.0 })
    /// );
    /// assert!(matches!(
    ///     Kernel::<4>::new(1.0),
    ///     Err(KernelError::UnsupportedDimension { dim: 4 })
    /// ));
    /// ```
    pub fn new(h: f32) -> Result<Self, KernelError> {
        if !(h.is_finite() && h > 0.0) {
            return Err(KernelError::InvalidRadius { value: h });
        }
        let hd = f64::from(h);
        let (poly6, spiky) = match D {
            // 315 / (64 pi h^9) and 15 / (pi h^6)
            3 => (315.0 / (64.0 * PI * hd.powi(9)), 15.0 / (PI * hd.powi(6))),
            // 4 / (pi h^8) and 10 / (pi h^5)
            2 => (4.0 / (PI * hd.powi(8)), 10.0 / (PI * hd.powi(5))),
            dim => return Err(KernelError::UnsupportedDimension { dim }),
        };
        // d/dr (h - r)^3 = -3 (h - r)^2
        let spiky_grad = -3.0 * spiky;
        let h2 = h * h;
        let constants = [poly6 as f32, spiky as f32, spiky_grad as f32, h2];
        if !constants.iter().all(|c| c.is_normal()) {
            return Err(KernelError::RadiusOutOfRange { value: h });
        }
        // The largest value a term takes is poly6(0) = coef * h^6: it must be finite too.
        let peak = f64::from(constants[0]) * f64::from(h2).powi(3);
        if !(peak.is_finite() && peak < f64::from(f32::MAX) && peak > f64::from(f32::MIN_POSITIVE))
        {
            return Err(KernelError::RadiusOutOfRange { value: h });
        }
        Ok(Self {
            h,
            h2,
            poly6_coef: constants[0],
            spiky_coef: constants[1],
            spiky_grad_coef: constants[2],
        })
    }

    /// The kernel radius `h`.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// assert_eq!(Kernel::<3>::new(2.0)?.h(), 2.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn h(&self) -> f32 {
        self.h
    }

    /// `h * h` rounded to `f32`: the bound of the support test `r2 < h2`.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// assert_eq!(Kernel::<3>::new(2.0)?.h2(), 4.0);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn h2(&self) -> f32 {
        self.h2
    }

    /// The constant of poly6: `315 / (64 pi h^9)` in 3D, `4 / (pi h^8)` in 2D.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let c = Kernel::<3>::new(1.0)?.poly6_coefficient();
    /// assert!((c - 315.0 / (64.0 * std::f32::consts::PI)).abs() < 1e-6);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn poly6_coefficient(&self) -> f32 {
        self.poly6_coef
    }

    /// The constant of the spiky gradient: `-45 / (pi h^6)` in 3D, `-30 / (pi h^5)` in 2D.
    ///
    /// ```
    /// # use pbf_kernels::Kernel;
    /// let c = Kernel::<2>::new(1.0)?.spiky_gradient_coefficient();
    /// assert!((c + 30.0 / std::f32::consts::PI).abs() < 1e-6);
    /// # Ok::<(), pbf_kernels::KernelError>(())
    /// ```
    #[inline]
    pub fn spiky_gradient_coefficient(&self) -> f32 {
        self.spiky_grad_coef
    }
}
