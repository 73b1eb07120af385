//! Tests of the passes together: the lambda pass, the delta pass and the XSPH pass
//! over one lattice.

use super::{Constraint, WallGradient};
use crate::Params;
use crate::boundary::Boundary;
use crate::collide::Domain;
use crate::lists::{GROUP, Neighbourhood};
use pbf_kernels::{Kernel, Lane, TensileCorrection};

/// A lattice of `side^3` particles from 0.03 at `spacing`, each coordinate moved by
/// a call of `jitter`, in Morton order with its lists, in the box `[0, hi]^3`, for
/// the passes at rest spacing 0.05 (h = 0.1).
struct Lattice {
    params: Params<3>,
    kernel: Kernel<3>,
    tensile: TensileCorrection,
    tables: pbf_kernels::WallTables,
    corners: pbf_kernels::CornerTables,
    domain: Domain<3>,
    p: [Vec<f32>; 3],
    lists: crate::lists::NeighbourLists,
}

impl Lattice {
    fn new(side: usize, spacing: f32, hi: f32, mut jitter: impl FnMut() -> f32) -> Self {
        let params = Params::<3>::builder(0.05).build().unwrap();
        let h = params.kernel_radius();
        let kernel = Kernel::<3>::new(h).unwrap();
        let tensile = TensileCorrection::new(&kernel, 0.1, 4, 0.2).unwrap();
        let tables = pbf_kernels::WallTables::new(&kernel);
        let corners = pbf_kernels::CornerTables::new(&kernel);
        let domain = Domain::new([0.0; 3], [hi; 3]).unwrap();
        let mut p: [Vec<f32>; 3] = Default::default();
        for flat in 0..side * side * side {
            let idx = [flat % side, (flat / side) % side, flat / (side * side)];
            for a in 0..3 {
                p[a].push(0.03 + spacing * idx[a] as f32 + jitter());
            }
        }
        let mut grid = pbf_grid::Grid::<3>::new();
        grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
        let mut scratch = Vec::new();
        for a in p.iter_mut() {
            grid.reorder(a, &mut scratch).unwrap();
        }
        let mut lists = crate::lists::NeighbourLists::default();
        lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 0).unwrap();
        Lattice {
            params,
            kernel,
            tensile,
            tables,
            corners,
            domain,
            p,
            lists,
        }
    }

    fn at(&self) -> [&[f32]; 3] {
        [&self.p[0], &self.p[1], &self.p[2]]
    }

    /// The passes with the box's walls, relaxation 0.5.
    fn constraint(&self) -> Constraint<'_, 3> {
        let boundary = Boundary {
            domain: &self.domain,
            colliders: &[],
            tables: &self.tables,
            corners: Some(&self.corners),
        };
        Constraint::new(&self.params, &self.kernel, &self.tensile, 0.5, boundary)
    }

    /// The lambda pass at the lattice's positions, the walls' gradient arrays
    /// filled with `fill` before: the quads it read, the densities, the lambdas
    /// and the gradients.
    fn lambda_pass<L: Lane>(
        &self,
        fill: f32,
    ) -> (Vec<[f32; 4]>, Vec<f32>, Vec<f32>, WallGradient<3>) {
        let n = self.p[0].len();
        let mut quads = Vec::new();
        crate::lists::pack(&mut quads, self.at(), &vec![0.0; n]);
        let nb = Neighbourhood {
            lists: &self.lists,
            quads: &quads,
        };
        let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
        let mut wall = WallGradient::<3>::new(n);
        for g in &mut wall.gradient {
            g.fill(fill);
        }
        self.constraint()
            .lambda_pass::<L>(&nb, &mut density, &mut lambda, &mut wall);
        (quads, density, lambda, wall)
    }
}

/// The XSPH pass gives the lambda pass's densities at the same positions, bit for
/// bit (the solver's last pass of a step computes them), and the number of
/// particles within h of each (itself included).
fn xsph_densities_match<L: Lane>() {
    use crate::lists::pack_volumes;
    // A jittered lattice touching the walls, so that their share counts too.
    let mut state = 12345u64;
    let lattice = Lattice::new(10, 0.05, 0.6, || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
        ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.02
    });
    let (constraint, params, lists) = (lattice.constraint(), &lattice.params, &lattice.lists);
    let (at, h) = (lattice.at(), params.kernel_radius());
    let n = at[0].len();
    let (mut quads, density, lambda, wall) = lattice.lambda_pass::<L>(0.0);
    // XSPH weighs by other volumes (here half the true ones) and velocities: the
    // densities come from the kernel sums alone.
    let halved: Vec<f32> = density.iter().map(|d| 2.0 * d).collect();
    pack_volumes(&mut quads, at, &halved, params.mass());
    let nb = Neighbourhood {
        lists,
        quads: &quads,
    };
    let velocity: [Vec<f32>; 3] =
        core::array::from_fn(|a| (0..n).map(|i| (i * (a + 2) % 7) as f32).collect());
    let mut next: [Vec<f32>; 3] = core::array::from_fn(|_| vec![0.0; n]);
    let (mut xsph_density, mut xsph_count) = (vec![0.0; n], vec![0.0; n]);
    let [n0, n1, n2] = &mut next;
    crate::xsph::xsph_and_curl::<L, 3>(
        &nb,
        &constraint,
        0.5,
        [&velocity[0], &velocity[1], &velocity[2]],
        &mut Vec::new(),
        [n0, n1, n2],
        [&mut xsph_density, &mut xsph_count],
        None,
    );
    // Inside the box of the walls: particles within h of a face see its share.
    assert!(wall.gradient.iter().flatten().any(|&g| g != 0.0));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&xsph_density), bits(&density));
    let within = |i: usize| {
        (0..n)
            .filter(|&j| {
                let d: [f32; 3] = core::array::from_fn(|a| at[a][i] - at[a][j]);
                pbf_kernels::within(pbf_kernels::norm2(d), h * h)
            })
            .count() as f32
    };
    let count: Vec<f32> = (0..n).map(within).collect();
    assert_eq!(bits(&xsph_count), bits(&count));
    assert!(
        count.iter().any(|&c| c > 20.0),
        "a particle with its neighbours"
    );
    assert!(
        lambda.iter().any(|&l| l != 0.0),
        "the scene has no compressed particle"
    );
    assert!(density.iter().all(|&d| d > 0.0));
    assert!(next[0] != velocity[0], "XSPH changed no velocity");
}

#[test]
fn the_xsph_pass_gives_the_lambda_passes_densities() {
    pbf_kernels::for_each_lane!(|L| {
        xsph_densities_match::<L>();
    });
}

/// The lambda pass writes a particle's wall gradient only in groups a wall may
/// reach, and the delta pass reads it only there: with the gradients' arrays
/// filled with NaN beforehand, a lattice whose one corner touches the walls and
/// whose other groups are far from them gives the positions of arrays filled
/// with zeros, bit for bit.
fn wall_gradients_are_read_where_written<L: Lane>() {
    use crate::lists::repack_extra;
    // 12^3 particles, slightly compressed, from 0.03 to 0.47 in a box 2 wide: the
    // groups of the corner at the origin are within h of three walls, the rest
    // are not.
    let lattice = Lattice::new(12, 0.04, 2.0, || 0.0);
    let (constraint, lists, domain) = (lattice.constraint(), &lattice.lists, &lattice.domain);
    let n = lattice.p[0].len();
    let iteration = |fill: f32| {
        let (mut quads, _, lambda, wall) = lattice.lambda_pass::<L>(fill);
        repack_extra::<3>(&mut quads, &lambda);
        let nb = Neighbourhood {
            lists,
            quads: &quads,
        };
        let mut next: [Vec<f32>; 3] = core::array::from_fn(|_| vec![0.0; n]);
        let [n0, n1, n2] = &mut next;
        constraint.delta_pass::<L>(&nb, &lambda, &wall, [n0, n1, n2], &[], domain, 0.0, None);
        (next, wall, lambda)
    };
    let (zeros, written, lambda) = iteration(0.0);
    let (nans, unwritten, _) = iteration(f32::NAN);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for a in 0..3 {
        assert_eq!(bits(&nans[a]), bits(&zeros[a]), "axis {a}");
    }
    // Both kinds of group are there: walls that add, and groups left alone.
    assert!(
        written.gradient.iter().flatten().any(|&g| g != 0.0),
        "no wall adds"
    );
    assert!(
        unwritten.gradient[0].iter().any(|g| g.is_nan()),
        "every group near a wall"
    );
    // The marks are the groups' own tests, and the gradient is written where marked.
    assert_eq!(written.near, unwritten.near);
    for (i, &near) in unwritten.near.iter().enumerate() {
        assert_eq!(
            near == 1,
            !unwritten.gradient[0][i].is_nan(),
            "particle {i}"
        );
    }
    assert!(lambda.iter().any(|&l| l != 0.0), "nothing compressed");
}

#[test]
fn wall_gradients_are_read_only_where_the_lambda_pass_wrote_them() {
    pbf_kernels::for_each_lane!(|L| {
        wall_gradients_are_read_where_written::<L>();
    });
}

/// Lanes from the first values of `values` (as many as the width holds).
pub(super) fn lanes_of<L: Lane>(values: &[f32; GROUP]) -> L {
    L::from_slice(values)
}
