//! XSPH viscosity (Macklin & Müller 2013, eq. 17), fused with the curl that vorticity
//! confinement needs, since both read the same neighbours and velocities.

use crate::constraint::Constraint;
use crate::lanes::lanes;
use crate::lists::{GROUP, Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Lane;

/// `nb.quads` must carry the volumes `m / rho` as their extra value
/// ([`crate::lists::pack_volumes`]);
/// `packed` is scratch that keeps its capacity between calls (the velocities are packed
/// into it as quads, one load per neighbour).
///
/// One pass over the neighbours: `v_next_i = v_i + c sum_j (m / rho_j)(v_j - v_i) W_ij`
/// and, when `omega` is given, the curl
/// `omega_i = sum_j (m / rho_j) gradW_ij x (v_j - v_i)` and its magnitude. From the
/// same kernel sums, every particle's density and count of particles within h (itself
/// included) into `densities`, as the lambda pass of `constraint` computes them at
/// these positions (the same bits): the solver runs this pass at the step's final
/// positions instead of one more lambda pass, and weighs the neighbours by the volumes
/// of its last lambda pass (one position delta earlier with a fixed count).
#[allow(clippy::too_many_arguments)]
pub(crate) fn xsph_and_curl<L: Lane, const D: usize>(
    nb: &Neighbourhood<'_, D>,
    constraint: &Constraint<'_, D>,
    c: f32,
    velocity: [&[f32]; D],
    packed: &mut Vec<[f32; 4]>,
    next: [&mut [f32]; D],
    densities: [&mut [f32]; 2],
    omega: Option<[&mut [f32]; 4]>,
) {
    crate::lists::pack_vectors(packed, velocity);
    let packed: &[[f32; 4]] = packed;
    assert_eq!(packed.len(), nb.len(), "a velocity for every particle");
    assert!(
        velocity.iter().all(|v| v.len() == nb.len()),
        "a velocity for every particle"
    );
    let (kernel, h2) = (constraint.kernel, constraint.kernel.h2());
    let body = |start: usize,
                next: &mut [&mut [f32]; D],
                [density, count]: &mut [&mut [f32]; 2],
                mut omega: Option<&mut [&mut [f32]; 4]>| {
        for_each_group::<L>(
            start,
            next[0].len(),
            #[inline(always)]
            |first, width| {
                nb.lists.prefetch_ahead(first, L::WIDTH, packed);
                let members = nb.lists.members(first);
                let vi: [L; D] = core::array::from_fn(|a| nb.gather_own::<L>(velocity[a], first));
                let members = &members[..width];
                let zero = L::splat(0.0);
                let mut xsph = [zero; D];
                let mut curl = [zero; 3];
                let (mut w_sum, mut within) = (zero, zero);
                let want_curl = omega.is_some();
                let own = nb.own::<L>(first);
                nb.for_each_slot_from::<L>(
                    first,
                    own,
                    #[inline(always)]
                    |j, x, r2, volume| {
                        let vj = j.gather4(packed);
                        let dv: [L; D] = core::array::from_fn(|a| vj[a] - vi[a]);
                        let w = L::poly6(kernel, r2);
                        w_sum += w;
                        within += L::indicator(r2, h2);
                        let t = L::xsph(kernel, volume, dv, w);
                        for a in 0..D {
                            xsph[a] += t[a];
                        }
                        if want_curl {
                            // The volume joins the factor before it scales the offset:
                            // one multiplication where scaling the gradient took D.
                            let factor = volume * L::gradient_factor(kernel, r2);
                            let grad: [L; D] = core::array::from_fn(|a| factor * x[a]);
                            let t = L::curl(kernel, L::splat(1.0), dv, grad);
                            for a in 0..3 {
                                curl[a] += t[a];
                            }
                        }
                    },
                );
                let near_walls = constraint.near_walls_of(own, width, nb.quads, members);
                debug_assert_eq!(near_walls, constraint.near_walls(nb.quads, members));
                let (share, _) = constraint.walls_lanes::<L>(own, near_walls);
                // The closing arithmetic on the lanes too, then stored lane by lane.
                let rho = lanes(constraint.densities_of(w_sum, share), width);
                let count_lanes = lanes(L::splat(1.0) + within, width);
                let next_v: [[f32; GROUP]; D] =
                    core::array::from_fn(|a| lanes(vi[a] + L::splat(c) * xsph[a], width));
                let magnitude = if want_curl {
                    lanes(L::norm2(curl).square_root(), width)
                } else {
                    [0.0; GROUP]
                };
                let curl = curl.map(|v| lanes(v, width));
                for (l, &i) in members.iter().enumerate() {
                    let k = i as usize - start;
                    density[k] = rho[l];
                    count[k] = count_lanes[l];
                    for a in 0..D {
                        next[a][k] = next_v[a][l];
                    }
                    if let Some(omega) = omega.as_deref_mut() {
                        for a in 0..3 {
                            omega[a][k] = curl[a][l];
                        }
                        omega[3][k] = magnitude[l];
                    }
                }
            },
        )
    };
    match omega {
        Some(omega) => for_each_pass_chunk(((next, densities), omega), &|start,
                                                                         (
            (mut next, mut densities),
            mut omega,
        )| {
            body(start, &mut next, &mut densities, Some(&mut omega))
        }),
        None => for_each_pass_chunk((next, densities), &|start, (mut next, mut densities)| {
            body(start, &mut next, &mut densities, None)
        }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pbf_grid::Grid;
    use pbf_kernels::f32x8;

    /// A 9^3 lattice of spacing `s` centred on the origin, in the Morton order of
    /// its grid of cells `2 s` wide (the kernel radius of these tests), with the grid.
    pub(crate) fn lattice(s: f32) -> ([Vec<f32>; 3], Grid<3>) {
        let n = 9;
        let mut pos: [Vec<f32>; 3] = Default::default();
        for flat in 0..n * n * n {
            let idx = [flat % n, (flat / n) % n, flat / (n * n)];
            for a in 0..3 {
                pos[a].push((idx[a] as f32 - 4.0) * s);
            }
        }
        let mut grid = Grid::<3>::new();
        grid.rebuild([&pos[0], &pos[1], &pos[2]], 2.0 * s).unwrap();
        let mut scratch = Vec::new();
        for a in pos.iter_mut() {
            grid.reorder(a, &mut scratch).unwrap();
        }
        (pos, grid)
    }

    /// On a lattice moving as a rigid rotation `v = Omega x r`, the SPH curl of an
    /// interior particle is `2 Omega` (within the lattice's discretisation error), and
    /// XSPH leaves a linear field unchanged there.
    fn rigid_rotation<L: Lane>() {
        let s = 0.05f32;
        let h = 2.0 * s;
        let mass = 1000.0 * s * s * s;
        let omega = [0.3f32, -0.7, 1.1];
        let (pos, grid) = lattice(s);
        let count = pos[0].len();
        let mut vel: [Vec<f32>; 3] = Default::default();
        for i in 0..count {
            let r = [pos[0][i], pos[1][i], pos[2][i]];
            let v = [
                omega[1] * r[2] - omega[2] * r[1],
                omega[2] * r[0] - omega[0] * r[2],
                omega[0] * r[1] - omega[1] * r[0],
            ];
            for a in 0..3 {
                vel[a].push(v[a]);
            }
        }
        let kernel = pbf_kernels::Kernel::<3>::new(h).unwrap();
        // Densities from the lattice itself.
        let mut lists = crate::lists::NeighbourLists::default();
        lists
            .build(&grid, [&pos[0], &pos[1], &pos[2]], h * h, 0)
            .unwrap();
        let mut density = vec![0.0f32; count];
        for (i, d) in density.iter_mut().enumerate() {
            grid.for_each_neighbour([&pos[0], &pos[1], &pos[2]], i, |j| {
                let r2: f32 = (0..3).map(|a| (pos[a][i] - pos[a][j]).powi(2)).sum();
                *d += mass * kernel.poly6(r2);
            });
        }
        let mut quads = Vec::new();
        crate::lists::pack_volumes(&mut quads, [&pos[0], &pos[1], &pos[2]], &density, mass);
        let nb = Neighbourhood {
            lists: &lists,
            quads: &quads,
        };
        let mut next: [Vec<f32>; 3] = core::array::from_fn(|_| vec![0.0; count]);
        let mut w: [Vec<f32>; 4] = core::array::from_fn(|_| vec![0.0; count]);
        {
            let [n0, n1, n2] = &mut next;
            let [w0, w1, w2, w3] = &mut w;
            let params = crate::Params::<3>::builder(s).build().unwrap();
            let tensile = pbf_kernels::TensileCorrection::new(&kernel, 0.1, 4, 0.2).unwrap();
            let tables = pbf_kernels::WallTables::new(&kernel);
            let corners = pbf_kernels::CornerTables::new(&kernel);
            let domain = crate::Domain::new([-1.0; 3], [1.0; 3]).unwrap();
            let boundary = crate::boundary::Boundary {
                domain: &domain,
                colliders: &[],
                tables: &tables,
                corners: Some(&corners),
            };
            let constraint = Constraint::new(&params, &kernel, &tensile, 1.0, boundary);
            let (mut d, mut c) = (vec![0.0; count], vec![0.0; count]);
            xsph_and_curl::<L, 3>(
                &nb,
                &constraint,
                0.5,
                [&vel[0], &vel[1], &vel[2]],
                &mut Vec::new(),
                [n0, n1, n2],
                [&mut d, &mut c],
                Some([w0, w1, w2, w3]),
            );
        }
        let centre = (0..count)
            .find(|&i| (0..3).all(|a| pos[a][i].abs() < 1e-6))
            .unwrap();
        for a in 0..3 {
            let got = w[a][centre];
            assert!(
                (got - 2.0 * omega[a]).abs() < 0.05 * 2.0 * 1.4,
                "axis {a}: curl {got}, expected {}",
                2.0 * omega[a]
            );
            assert!(
                (next[a][centre] - vel[a][centre]).abs() < 1e-4,
                "XSPH changed a linear field"
            );
        }
        let magnitude = (0..3).map(|a| w[a][centre].powi(2)).sum::<f32>().sqrt();
        assert!((w[3][centre] - magnitude).abs() < 1e-5);
    }

    #[test]
    fn curl_of_a_rigid_rotation_is_twice_its_angular_velocity_lanes() {
        rigid_rotation::<f32x8>();
    }

    #[test]
    fn curl_of_a_rigid_rotation_is_twice_its_angular_velocity_scalar() {
        rigid_rotation::<f32>();
    }
}
