//! Vorticity confinement (Macklin & Müller 2013, eqs. 15-16): a force that puts back
//! rotation the solver's damping removes.

use crate::lanes::lanes;
use crate::lists::{Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Kernel;
use pbf_kernels::Lane;

/// `nb.quads` must carry the curls' magnitudes `|omega|` as their extra value
/// ([`crate::lists::repack_extra`] with `omega[3]`).
///
/// For every particle, from the curl `omega` (three components and the magnitude):
/// `eta_i = sum_j (|omega_j| - |omega_i|) gradW_ij`, `N = eta / |eta|`, and the
/// confinement acceleration `f_i = eps_v (N x omega_i)`, applied in the next
/// prediction. Where `|eta|` vanishes (uniform vorticity) the force is 0.
///
/// `eta_i` is the SPH gradient of `|omega|` in Monaghan's difference form,
/// `(m / rho_i) sum_j (|omega_j| - |omega_i|) gradW_ij`, without its positive factor
/// `m / rho_i`, which `N` does not see: every neighbour's weight is the kernel's
/// alone, so the magnitudes ride in the quads with the positions (one load a
/// neighbour). The form with the neighbours' volumes `m / rho_j` would gather the
/// magnitudes apart, sixteen scalar loads a slot; both vanish exactly for a uniform
/// `|omega|`.
#[allow(clippy::too_many_arguments)]
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
    debug_assert!(
        (0..nb.len()).all(|i| nb.quads[i][D].to_bits() == omega[3][i].to_bits()),
        "the quads carry the magnitudes"
    );
    for_each_pass_chunk(force, &|start, force| {
        for_each_group::<L>(
            start,
            force[0].len(),
            #[inline(always)]
            |first, width| {
                nb.lists.prefetch_ahead(first, L::WIDTH, omega[3]);
                let members = nb.lists.members(first);
                let magnitude_i = nb.gather_own::<L>(omega[3], first);
                let members = &members[..width];
                let mut eta = [L::splat(0.0); D];
                nb.for_each_slot::<L>(
                    first,
                    #[inline(always)]
                    |_, x, r2, magnitude_j| {
                        let f = (magnitude_j - magnitude_i) * L::gradient_factor(kernel, r2);
                        for a in 0..D {
                            eta[a] += f * x[a];
                        }
                    },
                );
                // `|eta|` and `N = eta / |eta|` on the lanes (a square root and D
                // divisions for the group, where each particle took its own); then
                // `eps (N x omega_i)` particle by particle, 0 where `|eta|` is 0 or not
                // finite.
                let len = L::norm2(eta).square_root();
                let n = eta.map(|e| lanes(e / len, width));
                let len = lanes(len, width);
                for (l, &i) in members.iter().enumerate() {
                    let (i, k) = (i as usize, i as usize - start);
                    let f = if len[l] > 0.0 && len[l].is_finite() {
                        let n: [f32; 3] =
                            core::array::from_fn(|a| if a < D { n[a][l] } else { 0.0 });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lists::{NeighbourLists, pack};

    /// The confinement force of every particle of a 9^3 lattice (spacing `s`, centred
    /// on the origin) whose curl is `(0, 0, magnitude(x))`, at `L`'s width; and the
    /// positions, in the lattice's Morton order.
    fn forces<L: Lane>(magnitude: impl Fn([f32; 3]) -> f32) -> ([Vec<f32>; 3], [Vec<f32>; 3]) {
        let s = 0.05f32;
        let h = 2.0 * s;
        let (pos, grid) = crate::xsph::tests::lattice(s);
        let count = pos[0].len();
        let mut lists = NeighbourLists::default();
        let positions = [&pos[0][..], &pos[1][..], &pos[2][..]];
        lists.build(&grid, positions, h * h, 0).unwrap();
        let omega_z: Vec<f32> = (0..count)
            .map(|i| magnitude([pos[0][i], pos[1][i], pos[2][i]]))
            .collect();
        let zero = vec![0.0f32; count];
        let mut quads = Vec::new();
        pack(&mut quads, positions, &omega_z);
        let nb = Neighbourhood {
            lists: &lists,
            quads: &quads,
        };
        let kernel = Kernel::<3>::new(h).unwrap();
        let mut force: [Vec<f32>; 3] = core::array::from_fn(|_| vec![f32::NAN; count]);
        {
            let [f0, f1, f2] = &mut force;
            confinement::<L, 3>(
                &nb,
                &kernel,
                0.5,
                [&zero, &zero, &omega_z, &omega_z],
                [f0, f1, f2],
            );
        }
        (pos, force)
    }

    /// Every width available here.
    fn all_widths(magnitude: impl Fn([f32; 3]) -> f32 + Copy) -> Vec<[Vec<f32>; 3]> {
        let mut out = Vec::new();
        pbf_kernels::for_each_lane! {
            let out: &'a mut Vec<[Vec<f32>; 3]> = &mut out;
            let magnitude: &'a dyn Fn([f32; 3]) -> f32 = &magnitude;
            |L| {
                out.push(forces::<L>(magnitude).1);
            }
        }
        out
    }

    /// A curl `(0, 0, w)` whose magnitude grows along x: `N` is +x wherever the
    /// lattice is symmetric about the particle's x axis, so the force
    /// `eps N x omega` is `-eps w` along y; off that axis, at the lattice's faces,
    /// `N` tilts, but keeps `|N| = 1`. Every width gives the same bits.
    #[test]
    fn the_force_turns_the_curl_towards_its_growth() {
        let magnitude = |p: [f32; 3]| 2.0 + 3.0 * p[0];
        let (pos, _) = forces::<f32>(magnitude);
        let widths = all_widths(magnitude);
        for f in &widths[1..] {
            for a in 0..3 {
                assert!(
                    f[a].iter()
                        .zip(&widths[0][a])
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "a width differs from the scalar path"
                );
            }
        }
        let f = &widths[0];
        for i in 0..pos[0].len() {
            let p = [pos[0][i], pos[1][i], pos[2][i]];
            let w = magnitude(p);
            assert!(f.iter().all(|c| c[i].is_finite()), "force {i}");
            // No component along the curl.
            assert_eq!(f[2][i], 0.0, "z at {p:?}");
            let interior = p[1].abs() < 1e-6 && p[2].abs() < 1e-6;
            if interior {
                assert!(
                    (f[1][i] + 0.5 * w).abs() <= 1e-5 * w,
                    "y at {p:?}: {}",
                    f[1][i]
                );
                assert!(f[0][i].abs() <= 1e-5 * w, "x at {p:?}: {}", f[0][i]);
            }
            // |N| = 1: the force's size is eps |omega| |N x z|, which is eps |omega|
            // where N has no z component (the plane z = 0, by symmetry), less beyond.
            let size = (f[0][i].powi(2) + f[1][i].powi(2)).sqrt();
            assert!(size <= 0.5 * w * (1.0 + 1e-5), "size at {p:?}: {size}");
            if p[2].abs() < 1e-6 {
                assert!((size - 0.5 * w).abs() <= 1e-5 * w, "size at {p:?}: {size}");
            }
        }
    }

    /// A uniform magnitude has no gradient: `eta` is exactly zero (every term
    /// `|omega_j| - |omega_i|` is), and so is the force, at every width, including at
    /// the lattice's faces where the kernel's gradients do not cancel.
    #[test]
    fn a_uniform_curl_gets_no_force() {
        for f in all_widths(|_| 1.7) {
            for c in &f {
                assert!(c.iter().all(|v| *v == 0.0), "a force from a uniform curl");
            }
        }
    }
}
