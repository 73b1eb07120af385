//! The operations the lane versions of the kernels are written in, so that one formula
//! serves every width: `f32` (one lane), [`f32x8`], and the x86-64 backends' eight and
//! sixteen lanes (see [`Lane`](crate::Lane)).

use core::ops::{Add, AddAssign, BitAnd, Div, Mul, MulAssign, Neg, Sub};
use wide::f32x8;

/// A vector of `f32` lanes with correctly rounded IEEE-754 arithmetic, lane by lane.
///
/// Implementations must compute `+ - * /`, negation and [`sqrt`](Self::sqrt) exactly
/// as the scalar `f32` operations do on each lane (no fused multiply-add, no
/// approximate reciprocal or square root), so that every `_lanes` formula of this
/// crate stays bit-identical to its scalar reference at any width.
///
/// ```
/// use pbf_kernels::{SimdF32, f32x8};
/// fn cube<V: SimdF32>(x: V) -> V {
///     x * x * x
/// }
/// assert_eq!(cube(f32x8::splat(2.0)).to_array(), [8.0; 8]);
/// let m = <f32x8 as SimdF32>::lt(f32x8::splat(1.0), f32x8::splat(2.0));
/// assert_eq!(f32x8::select(m, f32x8::splat(3.0), f32x8::ZERO).to_array(), [3.0; 8]);
/// ```
pub trait SimdF32:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + MulAssign
{
    /// A per-lane condition, the result of a comparison.
    type Mask: Copy + BitAnd<Output = Self::Mask>;
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// The correctly rounded square root of every lane.
    fn sqrt(self) -> Self;
    /// `self < other`, lane by lane (false where either is NaN).
    fn lt(self, other: Self) -> Self::Mask;
    /// `self >= other`, lane by lane (false where either is NaN).
    fn ge(self, other: Self) -> Self::Mask;
    /// `self > other`, lane by lane (false where either is NaN).
    fn gt(self, other: Self) -> Self::Mask;
    /// `yes` in the lanes where `mask` holds, else `no`.
    fn select(mask: Self::Mask, yes: Self, no: Self) -> Self;
}

impl SimdF32 for f32x8 {
    type Mask = f32x8;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        f32x8::splat(v)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32x8::sqrt(self)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> Self::Mask {
        self.simd_lt(other)
    }
    #[inline(always)]
    fn ge(self, other: Self) -> Self::Mask {
        self.simd_ge(other)
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Self::Mask {
        self.simd_gt(other)
    }
    #[inline(always)]
    fn select(mask: Self::Mask, yes: Self, no: Self) -> Self {
        mask.select(yes, no)
    }
}

/// One lane: the scalar operations themselves, so that a formula written over
/// [`SimdF32`] also runs one particle at a time.
impl SimdF32 for f32 {
    type Mask = bool;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn lt(self, other: Self) -> bool {
        self < other
    }
    #[inline(always)]
    fn ge(self, other: Self) -> bool {
        self >= other
    }
    #[inline(always)]
    fn gt(self, other: Self) -> bool {
        self > other
    }
    #[inline(always)]
    fn select(mask: bool, yes: Self, no: Self) -> Self {
        if mask { yes } else { no }
    }
}
