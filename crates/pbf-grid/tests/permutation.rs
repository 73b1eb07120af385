//! The permutation and the cells: a bijection, consistent with the keys, applied the
//! same way by every reorder flavour.

use crate::common;

use common::{Cloud, Rng, cloud, uniform};
use pbf_grid::{Grid, morton};
use proptest::prelude::*;

fn check_structure<const D: usize>(cloud: &Cloud<D>) {
    let mut grid = Grid::<D>::new();
    grid.rebuild(cloud.view(), cloud.h).unwrap();
    let n = cloud.len();
    assert_eq!(grid.len(), n);

    // A bijection of 0..n.
    let mut seen = vec![false; n];
    for &p in grid.permutation() {
        assert!(!seen[p as usize], "index {p} placed twice");
        seen[p as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
    let identity = grid
        .permutation()
        .iter()
        .enumerate()
        .all(|(k, &p)| k == p as usize);
    assert_eq!(grid.permutation_is_identity(), identity);

    // Cells tile 0..n in order, keys strictly ascending, cell_of consistent.
    let cells = grid.cells();
    assert_eq!(cells.len(), grid.cell_keys().len());
    let mut next = 0;
    for (c, r) in cells.iter().enumerate() {
        assert_eq!(r.start, next);
        assert!(!r.is_empty());
        next = r.end;
        assert!(
            grid.cell_of()[r.as_range()]
                .iter()
                .all(|&x| x as usize == c)
        );
        // Points of one cell keep their input order (a stable sort).
        assert!(
            grid.permutation()[r.as_range()]
                .windows(2)
                .all(|w| w[0] < w[1])
        );
    }
    assert_eq!(next as usize, n);
    assert!(grid.cell_keys().windows(2).all(|w| w[0] < w[1]));

    // Cell coordinates are monotone in position on every axis, and a cell is about h
    // wide: points whose cells are k apart on an axis are more than (k - 1) h apart.
    let decode = |k: u64| -> [u32; D] {
        let c = if D == 3 {
            morton::decode3(k).to_vec()
        } else {
            morton::decode2(k).to_vec()
        };
        std::array::from_fn(|a| c[a])
    };
    let coords: Vec<[u32; D]> = (0..n)
        .map(|k| decode(grid.cell_keys()[grid.cell_of()[k] as usize]))
        .collect();
    for (a, axis) in cloud.axes.iter().enumerate() {
        let mut by_axis: Vec<(f32, u32)> = coords
            .iter()
            .zip(grid.permutation())
            .map(|(c, &p)| (axis[p as usize], c[a]))
            .collect();
        by_axis.sort_by(|x, y| x.0.total_cmp(&y.0));
        assert!(
            by_axis.windows(2).all(|w| w[0].1 <= w[1].1),
            "cell coordinates must be monotone in position"
        );
        if let (Some(first), Some(last)) = (by_axis.first(), by_axis.last()) {
            let cells = f64::from(last.1 - first.1);
            let span = f64::from(last.0) - f64::from(first.0);
            let h = f64::from(cloud.h);
            assert!(
                span > (cells - 1.0) * h && span < (cells + 1.0) * h * 1.001,
                "{span} over {cells} cells of {h}"
            );
        }
    }

    // Every reorder flavour applies the same gather.
    let values: Vec<u64> = (0..n as u64).map(|i| i * 1000 + 7).collect();
    let expected: Vec<u64> = grid
        .permutation()
        .iter()
        .map(|&p| values[p as usize])
        .collect();
    let mut in_place = values.clone();
    grid.reorder(&mut in_place, &mut Vec::new()).unwrap();
    assert_eq!(in_place, expected);
    let mut into = vec![0u64; n];
    grid.reorder_into(&values, &mut into).unwrap();
    assert_eq!(into, expected);
    let records: Vec<[u16; 3]> = values
        .iter()
        .map(|&v| [v as u16, (v >> 16) as u16, 1])
        .collect();
    let mut out = vec![[0u16; 3]; n];
    grid.reorder_bytes(
        bytemuck::cast_slice(&records),
        bytemuck::cast_slice_mut(&mut out),
        6,
    )
    .unwrap();
    let expected_records: Vec<[u16; 3]> = grid
        .permutation()
        .iter()
        .map(|&p| records[p as usize])
        .collect();
    assert_eq!(out, expected_records);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn permutation_is_a_bijection_3d(cloud in cloud::<3>(300)) {
        check_structure(&cloud);
    }

    #[test]
    fn permutation_is_a_bijection_2d(cloud in cloud::<2>(300)) {
        check_structure(&cloud);
    }

    #[test]
    fn morton_round_trip(x in 0..=morton::MAX_COORD3, y in 0..=morton::MAX_COORD3, z in 0..=morton::MAX_COORD3,
                         u in any::<u32>(), v in any::<u32>()) {
        prop_assert_eq!(morton::decode3(morton::encode3([x, y, z])), [x, y, z]);
        prop_assert_eq!(morton::decode2(morton::encode2([u, v])), [u, v]);
        // Keys are monotone along each axis.
        if x < morton::MAX_COORD3 {
            prop_assert!(morton::encode3([x + 1, y, z]) > morton::encode3([x, y, z]));
        }
        if v < u32::MAX {
            prop_assert!(morton::encode2([u, v + 1]) > morton::encode2([u, v]));
        }
    }

    #[test]
    fn morton_keys_round_trip(k in 0u64..(1 << 63), k2 in any::<u64>()) {
        prop_assert_eq!(morton::encode3(morton::decode3(k)), k);
        prop_assert_eq!(morton::encode2(morton::decode2(k2)), k2);
    }
}

#[test]
fn large_clouds_have_a_consistent_structure() {
    // Big enough for several sort chunks, extraction chunks and candidate buffers.
    check_structure(&uniform::<3>(150_000, 40.0, 1.0, 3));
    check_structure(&uniform::<2>(150_000, 300.0, 1.0, 4));
}

#[test]
fn sorted_input_gives_the_identity() {
    let cloud = uniform::<3>(20_000, 20.0, 1.0, 5);
    let mut grid = Grid::<3>::new();
    grid.rebuild(cloud.view(), cloud.h).unwrap();
    assert!(!grid.permutation_is_identity());
    let mut sorted = cloud.clone();
    for a in 0..3 {
        grid.reorder(&mut sorted.axes[a], &mut Vec::new()).unwrap();
    }
    grid.rebuild(sorted.view(), sorted.h).unwrap();
    assert!(grid.permutation_is_identity());
    // reorder is then a no-op that keeps the data.
    let mut data = sorted.axes[0].clone();
    grid.reorder(&mut data, &mut Vec::new()).unwrap();
    assert_eq!(data, sorted.axes[0]);
}

#[test]
fn slightly_moved_points_stay_nearly_in_place() {
    // The steady state: last step's sorted order, every point moved by up to 5 % of h.
    // The same grid is rebuilt, as a solver does.
    let cloud = uniform::<3>(50_000, 30.0, 1.0, 6);
    let (mut grid, mut sorted) = common::build(&cloud);
    let mut rng = Rng(7);
    for a in 0..3 {
        for x in &mut sorted.axes[a] {
            *x += (rng.unit() - 0.5) * 0.1;
        }
    }
    grid.rebuild(sorted.view(), sorted.h).unwrap();
    let moved = grid
        .permutation()
        .iter()
        .enumerate()
        .filter(|&(k, &p)| k != p as usize)
        .count();
    let mean_shift: f64 = grid
        .permutation()
        .iter()
        .enumerate()
        .map(|(k, &p)| (k as f64 - f64::from(p)).abs())
        .sum::<f64>()
        / cloud.len() as f64;
    println!(
        "{moved} of {} points moved, by {mean_shift:.1} slots on average",
        cloud.len()
    );
    // About 3 x 2.5 % of the points change cell; the others shift a little with them.
    assert!(mean_shift < 200.0, "mean shift {mean_shift}, moved {moved}");
}

#[test]
fn a_rebuild_after_a_step_orders_as_a_fresh_grid_whatever_moved() {
    // The last rebuild's sorted order with 5 %, 16 % and 35 % of the points moved by one
    // cell on one axis: below, between and above the fractions the re-sort merges
    // (at most a quarter) or leaves to the full sort. Every path gives the one order a
    // fresh grid with the same cell origin gives.
    for (fraction, seed) in [(0.05f32, 11), (0.16, 12), (0.35, 13)] {
        let cloud = uniform::<3>(60_000, 30.0, 1.0, seed);
        let (mut grid, mut sorted) = common::build(&cloud);
        let mut rng = Rng(seed + 100);
        let mut moved = 0;
        for k in 0..cloud.len() {
            if rng.unit() < fraction {
                let a = rng.below(3);
                let x = &mut sorted.axes[a][k];
                *x += if *x < 15.0 { 1.0 } else { -1.0 };
                moved += 1;
            }
        }
        grid.rebuild(sorted.view(), sorted.h).unwrap();
        let (h, origin) = grid.cell_origin().unwrap();
        let mut fresh = Grid::<3>::with_cell_origin(h, origin).unwrap();
        fresh.rebuild(sorted.view(), sorted.h).unwrap();
        assert_eq!(fresh.cell_origin(), grid.cell_origin());
        assert_eq!(grid.permutation(), fresh.permutation(), "{moved} moved");
        assert_eq!(grid.cell_keys(), fresh.cell_keys(), "{moved} moved");
        assert_eq!(grid.cell_of(), fresh.cell_of(), "{moved} moved");
        assert!(!grid.permutation_is_identity());
    }
}
