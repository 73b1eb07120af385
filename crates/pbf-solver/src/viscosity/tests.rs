//! The discrete operator against analytic Laplacians on a lattice.

use super::*;
use pbf_grid::Grid;

/// A `side x side` 2D lattice of spacing `s` from `(s/2, s/2)`, in the grid's order.
fn lattice(side: usize, s: f32, h: f32) -> ([Vec<f32>; 2], Grid<2>) {
    let mut pos: [Vec<f32>; 2] = Default::default();
    for j in 0..side {
        for i in 0..side {
            pos[0].push((i as f32 + 0.5) * s);
            pos[1].push((j as f32 + 0.5) * s);
        }
    }
    let mut grid = Grid::<2>::new();
    grid.rebuild([&pos[0], &pos[1]], h).unwrap();
    let mut scratch = Vec::new();
    for a in pos.iter_mut() {
        grid.reorder(a, &mut scratch).unwrap();
    }
    (pos, grid)
}

/// A lattice of `side x side` particles at spacing `s` in a square domain with the
/// given walls across y, its lists and its packed positions.
struct Setup {
    pos: [Vec<f32>; 2],
    lists: crate::lists::NeighbourLists,
    quads: Vec<[f32; 4]>,
    kernel: Kernel<2>,
    domain: Domain<2>,
    s: f32,
}

fn setup(side: usize, wall: Wall) -> Setup {
    let s = 0.01f32;
    let h = 2.0 * s;
    let kernel = Kernel::<2>::new(h).unwrap();
    let (pos, grid) = lattice(side, s, h);
    let n = pos[0].len();
    let mut lists = crate::lists::NeighbourLists::default();
    lists.build(&grid, [&pos[0], &pos[1]], h * h, 0).unwrap();
    let mut quads = Vec::new();
    crate::lists::pack(&mut quads, [&pos[0], &pos[1]], &vec![0.0; n]);
    let extent = side as f32 * s;
    let domain = Domain::new([0.0; 2], [extent; 2])
        .unwrap()
        .with_walls([[Wall::FreeSlip; 2], [wall; 2]]);
    Setup {
        pos,
        lists,
        quads,
        kernel,
        domain,
        s,
    }
}

/// `nu L u - W u` at every particle, for the velocity field `u`.
fn acceleration(setup: &Setup, nu: f32, u: &[Vec<f32>; 2]) -> [Vec<f32>; 2] {
    let n = setup.pos[0].len();
    let nb = Neighbourhood {
        lists: &setup.lists,
        quads: &setup.quads,
    };
    let s = setup.s;
    let mut viscosity = Viscosity::new(&setup.kernel, nu, s, s * s);
    let with_walls = viscosity.wall_shares(&nb, (&setup.domain, &[]));
    let system = System {
        kernel: &setup.kernel,
        nu: viscosity.nu,
        volume: viscosity.volume,
        dt: 1.0,
        walls: with_walls.then_some(viscosity.walls.as_slice()),
    };
    let mut packed = Vec::new();
    pack_vectors(&mut packed, refs(u));
    let mut out: [Vec<f32>; 2] = core::array::from_fn(|_| vec![0.0; n]);
    pass::apply::<f32, 2>(&nb, &system, refs(u), &packed, muts(&mut out));
    core::array::from_fn(|a| (0..n).map(|i| u[a][i] - out[a][i]).collect())
}

/// Inside the lattice (h from every face) the calibrated operator gives the
/// Laplacian of the shear flow `u = (y^2, 0)`, `(2 nu, 0)`, to rounding.
#[test]
fn the_operator_gives_the_laplacian_of_a_shear_flow_inside_the_lattice() {
    let setup = setup(24, Wall::FreeSlip);
    let nu = 1e-3;
    let u = [
        setup.pos[1].iter().map(|&y| y * y).collect(),
        vec![0.0; setup.pos[0].len()],
    ];
    let a = acceleration(&setup, nu, &u);
    let (h, extent) = (2.0 * setup.s, 24.0 * setup.s);
    let inside = |c: f32| c > h && c < extent - h;
    let mut checked = 0;
    for i in 0..a[0].len() {
        if inside(setup.pos[0][i]) && inside(setup.pos[1][i]) {
            assert!(
                (a[0][i] / (2.0 * nu) - 1.0).abs() < 1e-3,
                "particle {i}: {}",
                a[0][i]
            );
            assert!(a[1][i].abs() < 1e-3 * nu, "particle {i}: {}", a[1][i]);
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked} particles inside");
}

/// A solve keeps every component's sum (the momentum) without no-slip walls, and
/// lowers the kinetic energy with and without them, at any `nu dt`.
#[test]
fn a_solve_keeps_momentum_and_only_dissipates() {
    for wall in [Wall::FreeSlip, Wall::NoSlip] {
        for nu_dt in [1e-6f32, 1e-4, 1e-2] {
            let setup = setup(16, wall);
            let n = setup.pos[0].len();
            let mut seed = 0x9e37_79b9_7f4a_7c15u64;
            let mut random = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            };
            let mut v: [Vec<f32>; 2] = core::array::from_fn(|_| (0..n).map(|_| random()).collect());
            let before = v.clone();
            let nb = Neighbourhood {
                lists: &setup.lists,
                quads: &setup.quads,
            };
            let s = setup.s;
            let mut viscosity = Viscosity::new(&setup.kernel, nu_dt, s, s * s);
            let walls = (&setup.domain, &[][..]);
            let iterations = viscosity.solve::<f32>(&nb, &setup.kernel, 1.0, walls, muts(&mut v));
            assert!(iterations > 0 && iterations <= MAX_ITERATIONS);
            let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
            let energy = |v: &[Vec<f32>; 2]| -> f64 {
                v.iter().flatten().map(|&x| f64::from(x).powi(2)).sum()
            };
            if wall == Wall::FreeSlip {
                for a in 0..2 {
                    let (was, is) = (sum(&before[a]), sum(&v[a]));
                    assert!(
                        (was - is).abs() < 1e-4,
                        "{wall:?} nu dt {nu_dt}: axis {a} {was} -> {is}"
                    );
                }
            }
            assert!(
                energy(&v) < energy(&before),
                "{wall:?} nu dt {nu_dt}: energy rose"
            );
        }
    }
}
