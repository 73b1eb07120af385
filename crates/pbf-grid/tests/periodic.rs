//! Lists with periodic axes against an O(N^2) brute-force minimum-image search: the
//! same neighbours for every point, ascending, in 2D and 3D; and the passes' offsets
//! are the minimum images.

use crate::common;

use common::{Cloud, Rng, build};
use pbf_grid::lists::{NeighbourLists, densities};
use pbf_grid::{Periodic, within};

/// The reference: every `j != i` whose minimum-image offset is within `r`.
fn brute<const D: usize>(cloud: &Cloud<D>, periodic: &Periodic, r2: f32, i: usize) -> Vec<u32> {
    (0..cloud.len())
        .filter(|&j| {
            j != i
                && within(
                    pbf_kernels::norm2(periodic.offset(cloud.point(i), cloud.point(j))),
                    r2,
                )
        })
        .map(|j| j as u32)
        .collect()
}

/// `n` points in the box `0..side` on every axis, some of them in the layers along
/// the faces and on the faces' lattice (exact distances across a face).
fn boxed<const D: usize>(n: usize, side: f32, r: f32, seed: u64) -> Cloud<D> {
    let mut rng = Rng(seed);
    let mut axes: [Vec<f32>; D] = core::array::from_fn(|_| Vec::with_capacity(n));
    for k in 0..n {
        for axis in axes.iter_mut() {
            let u = rng.unit();
            let v = match k % 4 {
                // Near one face or the other.
                0 => u * r,
                1 => side - u * r,
                // On a lattice of step r / 4, exact distances to the other side.
                2 => (rng.below((4.0 * side / r) as usize) as f32) * r * 0.25,
                _ => u * side,
            };
            axis.push(v.min(side * (1.0 - f32::EPSILON)));
        }
    }
    Cloud { axes, h: r }
}

fn check<const D: usize>(cloud: &Cloud<D>, axes: [bool; D], side: f32) {
    let (grid, sorted) = build(cloud);
    let periodic = Periodic::new([0.0; D], [side; D], axes).unwrap();
    let mut lists = NeighbourLists::default();
    lists.set_periodic(periodic);
    let r2 = cloud.h * cloud.h;
    lists.build(&grid, sorted.view(), r2, 8).unwrap();
    let mut pairs = 0;
    for i in 0..sorted.len() {
        let want = brute(&sorted, &periodic, r2, i);
        assert_eq!(
            lists.of(i),
            want,
            "point {i} at {:?}, {axes:?}",
            sorted.point(i)
        );
        pairs += want.len() as u64;
    }
    assert_eq!(lists.pairs(), pairs);
}

#[test]
fn periodic_lists_are_the_brute_force_minimum_image_neighbours() {
    for (seed, side, r) in [(1u64, 4.0f32, 1.0f32), (2, 3.05, 1.0), (3, 10.0, 0.7)] {
        let two = boxed::<2>(900, side, r, seed);
        for axes in [[true, false], [false, true], [true, true]] {
            check(&two, axes, side);
        }
        let three = boxed::<3>(1500, side, r, seed + 10);
        for axes in [
            [true, false, false],
            [false, true, true],
            [true, true, true],
        ] {
            check(&three, axes, side);
        }
    }
}

#[test]
fn lists_without_periodic_axes_are_the_plain_ones() {
    let cloud = boxed::<3>(1200, 4.0, 1.0, 7);
    let (grid, sorted) = build(&cloud);
    let mut plain = NeighbourLists::default();
    plain.build(&grid, sorted.view(), 1.0, 8).unwrap();
    let mut none = NeighbourLists::default();
    none.set_periodic(Periodic::new([0.0; 3], [4.0; 3], [false; 3]).unwrap());
    none.build(&grid, sorted.view(), 1.0, 8).unwrap();
    for i in 0..sorted.len() {
        assert_eq!(plain.of(i), none.of(i));
    }
}

/// The density pass over periodic lists sums the kernel of the minimum-image
/// distances: a lattice filling a periodic box has the same density everywhere, the
/// faces' points included.
#[test]
fn a_pass_sees_minimum_image_offsets() {
    let (n, s) = (12usize, 0.25f32);
    let side = n as f32 * s;
    let mut axes: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
    for i in 0..n {
        for j in 0..n {
            axes[0].push((i as f32 + 0.5) * s);
            axes[1].push((j as f32 + 0.5) * s);
        }
    }
    let h = 2.5 * s;
    let cloud = Cloud { axes, h };
    let (grid, sorted) = build(&cloud);
    let mut lists = NeighbourLists::default();
    lists.set_periodic(Periodic::new([0.0; 2], [side; 2], [true, true]).unwrap());
    lists.build(&grid, sorted.view(), h * h, 8).unwrap();
    let kernel = pbf_kernels::Kernel::<2>::new(h).unwrap();
    for kind in pbf_kernels::LaneKind::ALL {
        if !kind.is_available() {
            continue;
        }
        let mut rho = vec![0.0; sorted.len()];
        densities(kind, &lists, sorted.view(), &kernel, 1.0, &mut rho).unwrap();
        let first = rho[0];
        for (i, r) in rho.iter().enumerate() {
            assert!(
                (r - first).abs() <= 1e-4 * first,
                "{kind:?}: particle {i}: {r} against {first}"
            );
        }
    }
}
