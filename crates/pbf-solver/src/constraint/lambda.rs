//! The lambda pass: every particle's density, constraint gradient and multiplier
//! `lambda`, and the walls' share of the gradient for the delta pass.

use super::{COMPRESSION_KNEE, Constraint, WallGradient};
use crate::lanes::lanes;
use crate::lists::{GROUP, Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Lane;

impl<const D: usize> Constraint<'_, D> {
    /// The densities and lambdas of a group's lanes from their sums: `rho`
    /// ([`Self::densities_of`]) and `lambda = -omega C / (|gradC_i|^2 + sum_j
    /// |gradC_j|^2 + epsilon)`, `C = rho / rho0 - 1` (at least 0 when unilateral), with
    /// the operations of a particle-by-particle loop (the same bits) on
    /// every lane at once: one division of each kind for sixteen particles, where a
    /// particle-by-particle loop takes two scalar divisions a particle.
    #[inline(always)]
    fn lambdas_of<L: Lane>(
        &self,
        w_sum: L,
        grad_sum: [L; D],
        grad_sq: L,
        share: L,
        walls: [L; D],
    ) -> (L, L) {
        let scale = self.mass / self.rest_density;
        let rho = self.densities_of(w_sum, share);
        let mut c = rho / L::splat(self.rest_density) - L::splat(1.0);
        if self.unilateral {
            c = c.max_zero();
        }
        let grad_i: [L; D] = core::array::from_fn(|a| L::splat(scale) * grad_sum[a] + walls[a]);
        let denominator =
            L::norm2(grad_i) + L::splat(scale * scale) * grad_sq + L::splat(self.epsilon);
        // Compressed, the overshoot grows: scaled down (see `compression_scaled`).
        let knee = COMPRESSION_KNEE * self.rest_density;
        let relaxation = L::splat(self.relaxation);
        let omega = if self.compression_scaled {
            rho.select_gt(
                L::splat(knee),
                relaxation * (L::splat(knee) / rho),
                relaxation,
            )
        } else {
            relaxation
        };
        (rho, -omega * c / denominator)
    }

    /// For every particle: the density `rho_i = m sum_j W_ij + rho0 Phi(walls)` (j = i
    /// included, as `W(0)`; see [`crate::boundary`] for the walls' share), the
    /// multiplier `lambda_i = -omega C_i / (sum_k |grad_k C_i|^2 + eps)` (`omega`: the
    /// resolved [`Relaxation`](crate::Relaxation), by default [`jacobi_relaxation`](super::jacobi_relaxation),
    /// under `Auto` times `k rho0 / rho_i` where `rho_i > k rho0`, `k` the
    /// [`COMPRESSION_KNEE`]) with
    /// `C_i = rho_i / rho0 - 1` (clamped at 0 when unilateral), and the walls' share
    /// of the constraint gradient (`walls`, which the delta pass at the same positions
    /// reads instead of computing it again). That is written only for the groups a
    /// wall may reach ([`Self::near_walls`]), which `walls.near` marks for the delta
    /// pass; elsewhere it is 0, and the delta pass does not read it: in a large fluid
    /// the gradient's arrays stream from memory, and most groups then neither write
    /// nor read them. The
    /// neighbour counts of the step's diagnostics come from the XSPH pass, at the
    /// final positions.
    pub(crate) fn lambda_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        density: &mut [f32],
        lambda: &mut [f32],
        walls: &mut WallGradient<D>,
    ) {
        let kernel = self.kernel;
        let mut gradient = walls.gradient.iter_mut();
        let wall_gradient: [&mut [f32]; D] =
            core::array::from_fn(|_| gradient.next().expect("D").as_mut_slice());
        let outputs = (
            ([density, lambda], wall_gradient),
            [walls.near.as_mut_slice()],
        );
        for_each_pass_chunk(outputs, &|start,
                                       (
            ([density, lambda], mut wall_gradient),
            [near],
        )| {
            for_each_group::<L>(
                start,
                density.len(),
                #[inline(always)]
                |first, width| {
                    let zero = L::splat(0.0);
                    let (mut w_sum, mut grad_sq) = (zero, zero);
                    let mut grad_sum = [zero; D];
                    let own = nb.own::<L>(first);
                    nb.for_each_slot_ahead::<L>(
                        first,
                        own,
                        #[inline(always)]
                        |_, x, r2, _| {
                            w_sum += L::poly6(kernel, r2);
                            // |gradW|^2 is the slope's square: two operations where
                            // |factor x|^2 took six.
                            let (factor, slope) = L::gradient_factor_and_slope(kernel, r2);
                            for a in 0..D {
                                grad_sum[a] += factor * x[a];
                            }
                            grad_sq += slope * slope;
                        },
                    );
                    let members = &nb.lists.members(first)[..width];
                    let near_walls = self.near_walls_of(own, width, nb.quads, members);
                    debug_assert_eq!(near_walls, self.near_walls(nb.quads, members));
                    let (share, walls) = self.walls_lanes::<L>(own, near_walls);
                    let (rho, lambda_lanes) =
                        self.lambdas_of::<L>(w_sum, grad_sum, grad_sq, share, walls);
                    let (rho, lambda_lanes) = (lanes(rho, width), lanes(lambda_lanes, width));
                    let walls = if near_walls {
                        walls.map(|g| lanes(g, width))
                    } else {
                        [[0.0; GROUP]; D]
                    };
                    for (l, &i) in members.iter().enumerate() {
                        let k = i as usize - start;
                        density[k] = rho[l];
                        // Only where a wall may add (elsewhere it is 0): the delta pass
                        // reads it there alone, as `near` tells it.
                        near[k] = u8::from(near_walls);
                        if near_walls {
                            for a in 0..D {
                                wall_gradient[a][k] = walls[a][l];
                            }
                        }
                        lambda[k] = lambda_lanes[l];
                    }
                },
            );
        });
    }
}
