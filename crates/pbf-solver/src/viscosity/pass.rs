//! The product of the implicit viscosity system with a velocity field: one pass over
//! the neighbour lists on the lanes.

use crate::lanes::lanes;
use crate::lists::{GROUP, Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::{Kernel, Lane};

/// The coefficients of the system `(I - dt nu L + dt W) u = b` that a product needs.
#[derive(Clone, Copy)]
pub(crate) struct System<'a, const D: usize> {
    /// The kernel of the lists.
    pub(crate) kernel: &'a Kernel<D>,
    /// The calibrated kinematic viscosity (the user's `nu` times the lattice
    /// calibration).
    pub(crate) nu: f32,
    /// The rest volume `m / rho0` of every neighbour: one volume for all keeps the
    /// system symmetric.
    pub(crate) volume: f32,
    /// The time step.
    pub(crate) dt: f32,
    /// The no-slip walls' share `W_i` of every particle's viscosity (`None`: no
    /// no-slip wall).
    pub(crate) walls: Option<&'a [f32]>,
}

/// `out_i = u_i - dt sum_j a_ij(u) + dt W_i u_i` for every particle, with `a_ij` the
/// viscosity term of pair `(i, j)` ([`Kernel::viscosity_term`]) at the positions of
/// `nb`; `packed` holds `u` as quads ([`crate::lists::pack_vectors`]). Every lane
/// adds its particle's terms in list order: every backend gives the bits of the
/// scalar path.
pub(crate) fn apply<L: Lane, const D: usize>(
    nb: &Neighbourhood<'_, D>,
    system: &System<'_, D>,
    u: [&[f32]; D],
    packed: &[[f32; 4]],
    out: [&mut [f32]; D],
) {
    assert_eq!(packed.len(), nb.len(), "a velocity for every particle");
    let System {
        kernel,
        nu,
        volume,
        dt,
        walls,
    } = *system;
    for_each_pass_chunk(out, &|start, mut out: [&mut [f32]; D]| {
        for_each_group::<L>(
            start,
            out[0].len(),
            #[inline(always)]
            |first, width| {
                let ui: [L; D] = core::array::from_fn(|a| nb.gather_own::<L>(u[a], first));
                let zero = L::splat(0.0);
                let mut sum = [zero; D];
                let own = nb.own::<L>(first);
                nb.for_each_slot_from::<L>(
                    first,
                    own,
                    #[inline(always)]
                    |j, _, r2, _| {
                        let uj = j.gather4(packed);
                        let dv: [L; D] = core::array::from_fn(|a| ui[a] - uj[a]);
                        let factor = L::gradient_factor(kernel, r2);
                        let t = kernel.viscosity_term_lanes(nu, L::splat(volume), dv, r2, factor);
                        for a in 0..D {
                            sum[a] += t[a];
                        }
                    },
                );
                let step = L::splat(dt);
                let next: [[f32; GROUP]; D] =
                    core::array::from_fn(|a| lanes(ui[a] - step * sum[a], width));
                let members = &nb.lists.members(first)[..width];
                for (l, &i) in members.iter().enumerate() {
                    let (i, k) = (i as usize, i as usize - start);
                    let wall = walls.map_or(0.0, |w| dt * w[i]);
                    for a in 0..D {
                        out[a][k] = next[a][l] + wall * u[a][i];
                    }
                }
            },
        )
    });
}
