//! The density constraint (Macklin & Müller 2013, eqs. 1-14): the constants of the
//! passes and the walls' share of the gradients here; the lambda pass
//! (`lambda.rs`), the position-delta pass with its collisions (`delta.rs`), the
//! Jacobi relaxation (`relaxation.rs`) and the Chebyshev acceleration
//! (`chebyshev.rs`) in files of their own.

use crate::boundary::Boundary;
use pbf_kernels::Lane;
use pbf_kernels::{Kernel, TensileCorrection};

mod chebyshev;
mod delta;
mod lambda;
mod relaxation;
#[cfg(test)]
mod tests;

pub(crate) use chebyshev::{Chebyshev, ChebyshevStep};
pub(crate) use relaxation::{COMPRESSION_KNEE, jacobi_relaxation};

/// The walls' share of the constraint gradients as a lambda pass leaves it for the
/// delta pass at the same positions: written only for the groups a wall may reach
/// ([`Constraint::near_walls`]), which `near` marks (1) for every particle of such a
/// group, so that the delta pass does not test the group's bounds again.
#[derive(Debug, Clone)]
pub(crate) struct WallGradient<const D: usize> {
    /// The gradient's components, of the marked particles.
    pub(crate) gradient: [Vec<f32>; D],
    /// 1 for a particle of a group a wall may reach, else 0.
    pub(crate) near: Vec<u8>,
}

impl<const D: usize> WallGradient<D> {
    /// Room for `n` particles (none written).
    pub(crate) fn new(n: usize) -> Self {
        Self {
            gradient: core::array::from_fn(|_| vec![0.0; n]),
            near: vec![0; n],
        }
    }

    /// `n` particles; the values are those of the next lambda pass.
    pub(crate) fn resize(&mut self, n: usize) {
        for g in &mut self.gradient {
            g.resize(n, 0.0);
        }
        self.near.resize(n, 0);
    }
}

/// The constants of the constraint passes.
pub(crate) struct Constraint<'a, const D: usize> {
    pub(crate) kernel: &'a Kernel<D>,
    pub(crate) tensile: &'a TensileCorrection,
    pub(crate) mass: f32,
    pub(crate) rest_density: f32,
    pub(crate) epsilon: f32,
    pub(crate) unilateral: bool,
    /// The Jacobi relaxation `omega` that scales every lambda (the parameters'
    /// [`Relaxation`](crate::Relaxation); `Auto` is [`jacobi_relaxation`]).
    pub(crate) relaxation: f32,
    /// Whether the relaxation shrinks where the fluid is compressed: under
    /// [`Relaxation::Auto`](crate::Relaxation::Auto) a particle of density
    /// `rho_i > k rho0` ([`COMPRESSION_KNEE`] `k`) uses `omega k rho0 / rho_i`.
    pub(crate) compression_scaled: bool,
    /// The walls, which add density and constraint gradient near them.
    pub(crate) boundary: Boundary<'a, D>,
}

impl<'a, const D: usize> Constraint<'a, D> {
    /// The constants of the passes for `params`, with these walls.
    pub(crate) fn new(
        params: &crate::Params<D>,
        kernel: &'a Kernel<D>,
        tensile: &'a TensileCorrection,
        relaxation: f32,
        boundary: Boundary<'a, D>,
    ) -> Self {
        Self {
            kernel,
            tensile,
            mass: params.mass(),
            rest_density: params.rest_density(),
            epsilon: params.cfm_epsilon(),
            unilateral: params.unilateral(),
            relaxation,
            compression_scaled: params.relaxation() == crate::Relaxation::Auto,
            boundary,
        }
    }

    /// The densities of a group's lanes whose neighbours within h add up `w_sum` of
    /// poly6 (themselves not included) and whose walls' share is `wall_share` (from
    /// [`Self::walls_lanes`]): `m (W(0) + w_sum) + rho0 Phi(walls)`. The lambda pass
    /// and the XSPH pass ([`crate::xsph::xsph_and_curl`]) both end with it, so
    /// that the same sums give the same bits.
    #[inline(always)]
    pub(crate) fn densities_of<L: Lane>(&self, w_sum: L, wall_share: L) -> L {
        let self_weight = self.kernel.poly6(0.0);
        L::splat(self.mass) * (L::splat(self_weight) + w_sum)
            + L::splat(self.rest_density) * wall_share
    }

    /// The walls' density share and constraint gradient of the lanes of a group whose
    /// own quads are `own` ([`Neighbourhood::own`](crate::lists::Neighbourhood::own)),
    /// by [`Boundary::lanes`]: zeros when `near_walls` is false (every particle of the
    /// group clear of the walls, by [`Constraint::near_walls`]), where the walls add
    /// nothing.
    #[inline(always)]
    pub(crate) fn walls_lanes<L: Lane>(&self, own: [L; 4], near_walls: bool) -> (L, [L; D]) {
        if !near_walls {
            return (L::splat(0.0), [L::splat(0.0); D]);
        }
        self.boundary.lanes::<L>(core::array::from_fn(|a| own[a]))
    }

    /// [`Self::near_walls`] of the group whose own quads are `own`
    /// ([`Neighbourhood::own`](crate::lists::Neighbourhood::own)): the same answer. The domain's faces are tested on
    /// the lanes, in registers ([`Lane::clear_of_faces`]); only a group clear of
    /// them, in a domain with colliders, takes its bounding box for theirs, so that a
    /// domain without colliders never pays for the bounding box.
    #[inline(always)]
    pub(crate) fn near_walls_of<L: Lane>(
        &self,
        own: [L; 4],
        width: usize,
        quads: &[[f32; 4]],
        members: &[u32],
    ) -> bool {
        let (domain, h) = (self.boundary.domain, self.boundary.tables.h());
        let p = core::array::from_fn(|a| own[a]);
        if !L::clear_of_faces(p, width, domain.walls_lo(), domain.walls_hi(), h) {
            return true;
        }
        !self.boundary.colliders.is_empty() && self.near_walls(quads, members)
    }

    /// Whether a wall may add to the density of a particle of the group `members`
    /// (whose positions are the quads'): one test of their bounding box.
    #[inline]
    pub(crate) fn near_walls(&self, quads: &[[f32; 4]], members: &[u32]) -> bool {
        // Whole quads, four lanes at a time (the fourth, not a coordinate, is left
        // out at the end); `q * 0` is 0 for a finite coordinate and NaN otherwise.
        // This is `collide::bounding_box` written for the quads' layout, so that the
        // positions need not be taken out of the quads first (which costs more than
        // this loop).
        let (mut lo, mut hi, mut finite) =
            ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4], [0.0f32; 4]);
        for &i in members {
            let q = &quads[i as usize];
            for c in 0..4 {
                lo[c] = if q[c] < lo[c] { q[c] } else { lo[c] };
                hi[c] = if q[c] > hi[c] { q[c] } else { hi[c] };
                finite[c] += q[c] * 0.0;
            }
        }
        let bounds = (0..D).all(|a| finite[a] == 0.0).then(|| {
            (
                core::array::from_fn(|a| lo[a]),
                core::array::from_fn(|a| hi[a]),
            )
        });
        !self.boundary.clear_box(bounds)
    }
}
