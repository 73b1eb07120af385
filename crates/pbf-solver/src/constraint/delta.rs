//! The position-delta pass: every particle moved by its delta, then kept out of the
//! colliders and in the domain (and given the Chebyshev step) in the pass's epilogue.

use super::{ChebyshevStep, Constraint, WallGradient};
use crate::collide::{Collider, Domain, confine_block};
use crate::lanes::lanes;
use crate::lists::{GROUP, Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Lane;

impl<const D: usize> Constraint<'_, D> {
    /// `nb.quads` must carry `lambda` as their extra value ([`crate::lists::pack`]),
    /// and `walls` be the lambda pass's at the same positions (the gradient read for
    /// the groups it marks near walls alone, as the lambda pass writes it).
    ///
    /// For every particle: `p_next = p + dp` with
    /// `dp_i = (m / rho0) sum_j (lambda_i + lambda_j + s_corr_ij) gradW_ij + lambda_i
    /// gradC_walls`, then kept
    /// out of the colliders on the side the particle was on (`Collider::project_from`)
    /// and clamped into the domain.
    ///
    /// With a [`ChebyshevStep`], `p_next` then takes its step, kept out of the solids
    /// and in the domain from `p`'s side the same way: the pass writes the step's
    /// result, with the bits a separate pass over `p_next` would give, without reading
    /// and writing the positions once more.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn delta_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        lambda: &[f32],
        walls: &WallGradient<D>,
        next: [&mut [f32]; D],
        colliders: &[Collider<D>],
        domain: &Domain<D>,
        margin: f32,
        chebyshev: Option<ChebyshevStep<'_, D>>,
    ) {
        let kernel = self.kernel;
        let scale = self.mass / self.rest_density;
        assert_eq!(lambda.len(), nb.len(), "a lambda for every particle");
        assert_eq!(walls.near.len(), nb.len(), "a wall mark for every particle");
        let wall_gradient = &walls.gradient;
        for_each_pass_chunk(next, &|start, next| {
            for_each_group::<L>(
                start,
                next[0].len(),
                #[inline(always)]
                |first, width| {
                    let all = nb.lists.members(first);
                    let members = &all[..width];
                    // The quads carry lambda (the caller's contract): the group's own
                    // quads give its lanes' lambda with their positions, in one
                    // transpose instead of sixteen more loads.
                    let own = nb.own::<L>(first);
                    let lambda_i = own[D];
                    debug_assert!(members.iter().all(
                        |&i| nb.quads[i as usize][D].to_bits() == lambda[i as usize].to_bits()
                    ));
                    let mut dp = [L::splat(0.0); D];
                    nb.for_each_slot_ahead::<L>(
                        first,
                        own,
                        #[inline(always)]
                        |_, x, r2, lambda_j| {
                            let w = L::poly6(kernel, r2);
                            let s_corr = L::s_corr(self.tensile, w);
                            let factor = L::gradient_factor(kernel, r2);
                            let lambda_sum = lambda_i + lambda_j;
                            let term =
                                L::position_delta(kernel, 1.0, lambda_sum, s_corr, factor, x);
                            for a in 0..D {
                                dp[a] += term[a];
                            }
                        },
                    );
                    // The lambda pass's test of the group at these positions.
                    let near_walls = walls.near[members[0] as usize] != 0;
                    debug_assert_eq!(near_walls, self.near_walls(nb.quads, members));
                    let zero = L::splat(0.0);
                    let wall: [L; D] = if near_walls {
                        core::array::from_fn(|a| nb.gather_own::<L>(&wall_gradient[a], first))
                    } else {
                        [zero; D]
                    };
                    let moved: [L; D] = core::array::from_fn(|a| {
                        own[a] + L::splat(scale) * dp[a] + lambda_i * wall[a]
                    });
                    let to = confine_lanes(
                        moved,
                        own,
                        members,
                        (colliders, domain, margin),
                        chebyshev.as_ref(),
                    );
                    for (l, &i) in members.iter().enumerate() {
                        for a in 0..D {
                            next[a][i as usize - start] = to[a][l];
                        }
                    }
                },
            );
        });
    }
}

/// The delta pass's closing of a group: the lanes' moved positions `moved`, kept out
/// of the colliders from their positions before (`own`, which are outside every
/// solid) and in the domain, as [`confine_block`] keeps them, then given the
/// Chebyshev step when there is one and confined again; lane `l` is particle
/// `members[l]`.
///
/// Without colliders or a Chebyshev step, a group whose moves all lie in the shrunk
/// box is left as it is by the clamp; that is tested on the lanes, exactly: the
/// clamp's bounds are `p >= lo + margin` and `p <= hi - margin`, and `p - b >= 0`
/// holds exactly when `p >= b` (a NaN fails, and its group takes the clamp). Only the
/// other groups are taken apart particle by particle. A test holds the result to
/// `confine_block`'s for every width.
#[inline(always)]
fn confine_lanes<L: Lane, const D: usize>(
    moved: [L; D],
    own: [L; 4],
    members: &[u32],
    (colliders, domain, margin): (&[Collider<D>], &Domain<D>, f32),
    chebyshev: Option<&ChebyshevStep<'_, D>>,
) -> [[f32; GROUP]; D] {
    let width = members.len();
    let mut to: [[f32; GROUP]; D] = moved.map(|m| lanes(m, width));
    if colliders.is_empty() && chebyshev.is_none() {
        // The clamp's bounds, with its operations.
        let (lo, hi) = (domain.walls_lo(), domain.walls_hi());
        let lo: [f32; D] = core::array::from_fn(|a| lo[a] + margin);
        let hi: [f32; D] = core::array::from_fn(|a| hi[a] - margin);
        if L::clear_of_faces(moved, width, lo, hi, 0.0) {
            return to;
        }
    }
    let mut from = [[0.0f32; D]; GROUP];
    let mut points = [[0.0f32; D]; GROUP];
    let own = own.map(|o| lanes(o, width));
    for l in 0..width {
        from[l] = core::array::from_fn(|a| own[a][l]);
        points[l] = core::array::from_fn(|a| to[a][l]);
    }
    // From the current position, which is outside every solid: a correction never
    // carries a particle through a wall.
    let confine = |points: &mut [[f32; D]; GROUP]| {
        confine_block(
            colliders,
            domain,
            &from[..width],
            &mut points[..width],
            margin,
        );
    };
    confine(&mut points);
    if let Some(step) = chebyshev {
        for (l, &i) in members.iter().enumerate() {
            points[l] = step.apply(points[l], from[l], i as usize);
        }
        confine(&mut points);
    }
    for (l, p) in points[..width].iter().enumerate() {
        for a in 0..D {
            to[a][l] = p[a];
        }
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraint::tests::lanes_of;

    /// The domain of `confine_lanes`' test: bounds whose sums with the margin round.
    const LO: f32 = 0.3;
    const HI: f32 = 1.7;

    /// A coordinate for `confine_lanes`' test: inside the domain, exactly on or just
    /// past a bound of the domain shrunk by `margin`, far out, or not finite.
    fn coordinate(kind: u8, t: f32, margin: f32) -> f32 {
        let (lo, hi) = (LO + margin, HI - margin);
        match kind % 9 {
            0..=2 => lo + t * (hi - lo),
            3 => lo,
            4 => hi,
            5 => f32::from_bits(lo.to_bits() - 1),
            6 => f32::from_bits(hi.to_bits() + 1),
            7 => -2.0 + 5.0 * t,
            _ => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][(t * 2.99) as usize],
        }
    }

    /// `confine_lanes` gives `confine_block`'s positions (and the Chebyshev step's
    /// between two of them) bit for bit, at `L`'s width.
    fn confines_as_the_block<L: Lane>(
        moved: &[[f32; GROUP]; 3],
        own: &[[f32; GROUP]; 3],
        width: usize,
        collider: bool,
        chebyshev: bool,
    ) {
        let width = width.clamp(1, L::WIDTH);
        let margin = 0.01;
        let domain = Domain::new([LO; 3], [HI; 3]).unwrap();
        let colliders = if collider {
            vec![
                Collider::new(
                    crate::Shape::Sphere {
                        center: [1.0; 3],
                        radius: 0.3,
                    },
                    crate::ColliderKind::Solid,
                )
                .unwrap(),
            ]
        } else {
            Vec::new()
        };
        let before: [Vec<f32>; 3] =
            core::array::from_fn(|a| own[a].iter().map(|c| c * 0.99 + 0.01).collect());
        let step = chebyshev.then(|| ChebyshevStep {
            weight: 1.3,
            gamma: 0.9,
            before: [&before[0][..], &before[1][..], &before[2][..]],
        });
        let members: Vec<u32> = (0..width as u32).collect();
        let moved_lanes: [L; 3] = core::array::from_fn(|a| lanes_of(&moved[a]));
        let own_lanes: [L; 4] = core::array::from_fn(|a| {
            if a < 3 {
                lanes_of(&own[a])
            } else {
                L::splat(0.0)
            }
        });
        let got = confine_lanes(
            moved_lanes,
            own_lanes,
            &members,
            (&colliders, &domain, margin),
            step.as_ref(),
        );
        let from: Vec<[f32; 3]> = (0..width)
            .map(|l| core::array::from_fn(|a| own[a][l]))
            .collect();
        let mut want: Vec<[f32; 3]> = (0..width)
            .map(|l| core::array::from_fn(|a| moved[a][l]))
            .collect();
        confine_block(&colliders, &domain, &from, &mut want, margin);
        if let Some(step) = &step {
            for l in 0..width {
                want[l] = step.apply(want[l], from[l], l);
            }
            confine_block(&colliders, &domain, &from, &mut want, margin);
        }
        for l in 0..width {
            for a in 0..3 {
                assert_eq!(
                    got[a][l].to_bits(),
                    want[l][a].to_bits(),
                    "lane {l} axis {a}: {} against {}",
                    got[a][l],
                    want[l][a]
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn lanes_confine_a_group_as_the_block_does(
            kinds in proptest::collection::vec(0u8..9, 3 * GROUP),
            all_inside in proptest::bool::ANY,
            ts in proptest::collection::vec(0.0f32..1.0, 3 * GROUP),
            inside in proptest::collection::vec(0.35f32..0.6, 3 * GROUP),
            width in 1usize..=GROUP,
            collider in proptest::bool::ANY,
            chebyshev in proptest::bool::ANY,
        ) {
            let margin = 0.01;
            // Half the cases with every move inside the shrunk domain or on its
            // bounds, which take the test on the lanes.
            let kind = |k: usize| if all_inside { kinds[k] % 5 } else { kinds[k] };
            let moved: [[f32; GROUP]; 3] = core::array::from_fn(|a| {
                core::array::from_fn(|l| coordinate(kind(a * GROUP + l), ts[a * GROUP + l], margin))
            });
            // The positions before: inside the domain and outside the sphere.
            let own: [[f32; GROUP]; 3] =
                core::array::from_fn(|a| core::array::from_fn(|l| inside[a * GROUP + l]));
            pbf_kernels::for_each_lane! {
                let moved: &'a [[f32; GROUP]; 3] = &moved;
                let own: &'a [[f32; GROUP]; 3] = &own;
                let width: usize = width;
                let collider: bool = collider;
                let chebyshev: bool = chebyshev;
                |L| {
                    L::run(|| confines_as_the_block::<L>(moved, own, width, collider, chebyshev));
                }
            }
        }
    }
}
