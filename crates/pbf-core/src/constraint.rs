//! The density constraint (Macklin & Müller 2013, eqs. 1-14): the lambda pass and the
//! position-delta pass of each solver iteration.

use crate::boundary::Boundary;
use crate::collide::{Collider, Domain};
use crate::lanes::{Lane, norm2};
use crate::lists::Neighbourhood;
use crate::parallel::for_each_chunk;
use pbf_kernels::{Kernel, TensileCorrection};

/// The constants of the constraint passes.
pub(crate) struct Constraint<'a, const D: usize> {
    pub(crate) kernel: &'a Kernel<D>,
    pub(crate) tensile: &'a TensileCorrection,
    pub(crate) mass: f32,
    pub(crate) rest_density: f32,
    pub(crate) epsilon: f32,
    pub(crate) unilateral: bool,
    /// The walls, which add density and constraint gradient near them.
    pub(crate) boundary: Boundary<'a, D>,
}

impl<'a, const D: usize> Constraint<'a, D> {
    /// The constants of the passes for `params`, with these walls.
    pub(crate) fn new(
        params: &crate::Params<D>,
        kernel: &'a Kernel<D>,
        tensile: &'a TensileCorrection,
        boundary: Boundary<'a, D>,
    ) -> Self {
        Self {
            kernel,
            tensile,
            mass: params.mass(),
            rest_density: params.rest_density(),
            epsilon: params.cfm_epsilon(),
            unilateral: params.unilateral(),
            boundary,
        }
    }

    /// For every particle: the density `rho_i = m sum_j W_ij + rho0 Phi(walls)` (j = i
    /// included, as `W(0)`; see [`crate::boundary`] for the walls' share), the
    /// multiplier `lambda_i = -C_i / (sum_k |grad_k C_i|^2 + eps)` with
    /// `C_i = rho_i / rho0 - 1` (clamped at 0 when unilateral), and the number of
    /// particles within h (itself included).
    pub(crate) fn lambda_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        density: &mut [f32],
        lambda: &mut [f32],
        count: &mut [f32],
    ) {
        let (kernel, h2) = (self.kernel, self.kernel.h2());
        let scale = self.mass / self.rest_density;
        let self_weight = kernel.poly6(0.0);
        for_each_chunk(
            [density, lambda, count],
            &|start, [density, lambda, count]| {
                for k in 0..density.len() {
                    let i = start + k;
                    let mut w_sum = L::splat(0.0);
                    let mut grad_sum = [L::splat(0.0); D];
                    let mut grad_sq = L::splat(0.0);
                    let mut within = L::splat(0.0);
                    nb.for_each_block::<L>(i, |_, x, r2| {
                        w_sum += L::poly6(kernel, r2);
                        let factor = L::gradient_factor(kernel, r2);
                        let g: [L; D] = core::array::from_fn(|a| factor * x[a]);
                        for a in 0..D {
                            grad_sum[a] += g[a];
                        }
                        grad_sq += norm2(g);
                        within += L::indicator(r2, h2);
                    });
                    let p: [f32; D] = core::array::from_fn(|a| nb.positions[a][i]);
                    let (wall_share, wall_grad) = self.boundary.density_and_gradient(p);
                    let rho =
                        self.mass * (self_weight + w_sum.sum()) + self.rest_density * wall_share;
                    let mut c = rho / self.rest_density - 1.0;
                    if self.unilateral {
                        c = c.max(0.0);
                    }
                    let grad_i: [f32; D] =
                        core::array::from_fn(|a| scale * grad_sum[a].sum() + wall_grad[a]);
                    let denominator =
                        pbf_kernels::norm2(grad_i) + scale * scale * grad_sq.sum() + self.epsilon;
                    density[k] = rho;
                    lambda[k] = -c / denominator;
                    count[k] = 1.0 + within.sum();
                }
            },
        );
    }

    /// For every particle: `p_next = p + dp` with
    /// `dp_i = (m / rho0) sum_j (lambda_i + lambda_j + s_corr_ij) gradW_ij`, then kept
    /// out of the colliders on the side the particle was on (`Collider::project_from`)
    /// and clamped into the domain.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn delta_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        lambda: &[f32],
        next: [&mut [f32]; D],
        colliders: &[Collider<D>],
        domain: &Domain<D>,
        margin: f32,
    ) {
        let kernel = self.kernel;
        let scale = self.mass / self.rest_density;
        for_each_chunk(next, &|start, next| {
            for k in 0..next[0].len() {
                let i = start + k;
                let lambda_i = L::splat(lambda[i]);
                let mut dp = [L::splat(0.0); D];
                nb.for_each_block::<L>(i, |j, x, r2| {
                    let w = L::poly6(kernel, r2);
                    let s_corr = L::s_corr(self.tensile, w);
                    let factor = L::gradient_factor(kernel, r2);
                    let lambda_sum = lambda_i + L::gather(lambda, j);
                    let term = L::position_delta(kernel, 1.0, lambda_sum, s_corr, factor, x);
                    for a in 0..D {
                        dp[a] += term[a];
                    }
                });
                let x: [f32; D] = core::array::from_fn(|a| nb.positions[a][i]);
                let (_, wall_grad) = self.boundary.density_and_gradient(x);
                let mut p: [f32; D] =
                    core::array::from_fn(|a| x[a] + scale * dp[a].sum() + lambda[i] * wall_grad[a]);
                // From the current position, which is outside every solid: a correction
                // never carries a particle through a wall.
                for c in colliders {
                    c.project_from(&mut p, x, margin);
                }
                domain.clamp(&mut p, margin);
                for a in 0..D {
                    next[a][k] = p[a];
                }
            }
        });
    }
}
