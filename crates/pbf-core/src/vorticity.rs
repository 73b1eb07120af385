//! Vorticity confinement (Macklin & Müller 2013, eqs. 15-16): a force that puts back
//! rotation the solver's damping removes.

use crate::lanes::{Lane, lanes};
use crate::lists::{Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Kernel;

/// `nb.quads` must carry the volumes `m / rho` as their extra value
/// ([`crate::lists::pack_volumes`]).
///
/// For every particle, from the curl `omega` (three components and the magnitude):
/// `eta_i = sum_j (m / rho_j)(|omega_j| - |omega_i|) gradW_ij`, `N = eta / |eta|`, and
/// the confinement acceleration `f_i = eps_v (N x omega_i)`, applied in the next
/// prediction. Where `|eta|` vanishes (uniform vorticity) the force is 0.
#[allow(clippy::too_many_arguments, unsafe_code)]
pub(crate) fn confinement<L: Lane, const D: usize>(
    nb: &Neighbourhood<'_, D>,
    kernel: &Kernel<D>,
    epsilon: f32,
    omega: [&[f32]; 4],
    force: [&mut [f32]; D],
) {
    assert_eq!(omega[3].len(), nb.len(), "a curl for every particle");
    assert!(
        omega.iter().all(|o| o.len() == nb.len()),
        "a curl for every particle"
    );
    for_each_pass_chunk(force, &|start, force| {
        for_each_group::<L>(
            start,
            force[0].len(),
            #[inline(always)]
            |first, width| {
                nb.lists.prefetch_ahead(first, L::WIDTH, omega[3]);
                let members = nb.lists.members(first);
                // SAFETY: the members are particles of the lists, below `nb.len()`, the
                // length of `omega[3]` (asserted above).
                let magnitude_i = unsafe { L::gather(omega[3], members) };
                let members = &members[..width];
                let mut eta = [L::splat(0.0); D];
                nb.for_each_slot::<L>(
                    first,
                    #[inline(always)]
                    |j, x, r2, volume| {
                        // SAFETY: `j` are indices below `nb.len()`, the length of
                        // `omega[3]` (asserted above).
                        let d_magnitude = unsafe { j.gather(omega[3]) } - magnitude_i;
                        let factor = L::gradient_factor(kernel, r2);
                        let grad: [L; D] = core::array::from_fn(|a| factor * x[a]);
                        let t = L::vorticity_gradient(kernel, volume, d_magnitude, grad);
                        for a in 0..D {
                            eta[a] += t[a];
                        }
                    },
                );
                let eta = eta.map(|v| lanes(v, width));
                for (l, &i) in members.iter().enumerate() {
                    let (i, k) = (i as usize, i as usize - start);
                    let eta: [f32; D] = core::array::from_fn(|a| eta[a][l]);
                    let len = pbf_kernels::norm2(eta).sqrt();
                    let f = if len > 0.0 && len.is_finite() {
                        let mut n = [0.0f32; 3];
                        for a in 0..D {
                            n[a] = eta[a] / len;
                        }
                        let w = [omega[0][i], omega[1][i], omega[2][i]];
                        [
                            n[1] * w[2] - n[2] * w[1],
                            n[2] * w[0] - n[0] * w[2],
                            n[0] * w[1] - n[1] * w[0],
                        ]
                    } else {
                        [0.0; 3]
                    };
                    for a in 0..D {
                        force[a][k] = epsilon * f[a];
                    }
                }
            },
        );
    });
}
