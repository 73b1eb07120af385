//! The scalar backend: one particle at a time through the scalar reference of every
//! term; the specification the other backends are held to.

use super::{Index, Lane};
use crate::{Kernel, TensileCorrection, WallTables};

impl Lane for f32 {
    const WIDTH: usize = 1;
    #[inline(always)]
    fn clear_of_faces<const D: usize>(
        p: [Self; D],
        _width: usize,
        lo: [f32; D],
        hi: [f32; D],
        h: f32,
    ) -> bool {
        (0..D).all(|a| p[a] - lo[a] >= h && hi[a] - p[a] >= h)
    }
    #[inline(always)]
    fn faces<const D: usize>(
        tables: &WallTables,
        lo: [f32; D],
        hi: [f32; D],
        p: [Self; D],
    ) -> (Self, [Self; D]) {
        tables.faces(lo, hi, p)
    }
    #[inline(always)]
    fn from_slice(s: &[f32]) -> Self {
        s[0]
    }
    #[inline(always)]
    unsafe fn gather_unchecked<I: Index>(s: &[f32], indices: &[I]) -> Self {
        // The scalar path keeps its bounds check.
        s[indices[0].at()]
    }
    #[inline(always)]
    unsafe fn gather4_unchecked<I: Index>(quads: &[[f32; 4]], indices: &[I]) -> [Self; 4] {
        quads[indices[0].at()]
    }
    #[inline(always)]
    fn counts(counts: &[u32]) -> Self {
        counts[0] as f32
    }
    #[inline(always)]
    fn mask_counts(r2: Self, counts: Self, slot: Self) -> Self {
        if counts > slot { r2 } else { f32::INFINITY }
    }
    #[inline(always)]
    fn store(self, out: &mut [f32]) {
        if let Some(o) = out.first_mut() {
            *o = self;
        }
    }
    #[inline(always)]
    fn square_root(self) -> Self {
        self.sqrt()
    }
    #[inline(always)]
    fn select_gt(self, other: Self, yes: Self, no: Self) -> Self {
        if self > other { yes } else { no }
    }
    #[inline(always)]
    fn indicator(r2: Self, h2: f32) -> Self {
        if crate::within(r2, h2) { 1.0 } else { 0.0 }
    }
    #[inline(always)]
    fn poly6<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
        k.poly6(r2)
    }
    #[inline(always)]
    fn gradient_factor<const D: usize>(k: &Kernel<D>, r2: Self) -> Self {
        k.spiky_gradient_factor(r2)
    }
    #[inline(always)]
    fn gradient_factor_and_slope<const D: usize>(k: &Kernel<D>, r2: Self) -> (Self, Self) {
        k.spiky_gradient_factor_and_slope(r2)
    }
    #[inline(always)]
    fn s_corr(t: &TensileCorrection, w: Self) -> Self {
        t.s_corr_from_poly6(w)
    }
    #[inline(always)]
    fn position_delta<const D: usize>(
        k: &Kernel<D>,
        scale: f32,
        lambda_sum: Self,
        s_corr: Self,
        factor: Self,
        x: [Self; D],
    ) -> [Self; D] {
        k.position_delta_term(scale, lambda_sum, s_corr, factor, x)
    }
    #[inline(always)]
    fn xsph<const D: usize>(k: &Kernel<D>, volume: Self, dv: [Self; D], w: Self) -> [Self; D] {
        k.xsph_term(volume, dv, w)
    }
    #[inline(always)]
    fn curl<const D: usize>(
        k: &Kernel<D>,
        volume: Self,
        dv: [Self; D],
        grad: [Self; D],
    ) -> [Self; 3] {
        k.vorticity_term(volume, dv, grad)
    }
}
