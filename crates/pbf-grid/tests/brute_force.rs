//! The grid against an O(N^2) brute-force search: the same neighbour sets for every
//! point and every query, in 2D and 3D, on random, clustered and degenerate clouds.

use crate::common;

use common::{Cloud, brute_neighbours, brute_query, build, cloud};
use pbf_grid::{CellRange, Grid, NeighbourList, distance2, morton, within};
use proptest::prelude::*;

/// Checks every neighbour query of a fresh grid against the brute force.
fn check_all<const D: usize>(cloud: &Cloud<D>, queries: &[[f32; D]]) {
    let (grid, sorted) = build(cloud);
    check_grid(&grid, cloud, &sorted, queries);
}

/// Checks every neighbour query of `grid`, last rebuilt on `cloud`, against the
/// brute force; `sorted` is `cloud` in the grid's order.
fn check_grid<const D: usize>(
    grid: &Grid<D>,
    cloud: &Cloud<D>,
    sorted: &Cloud<D>,
    queries: &[[f32; D]],
) {
    let perm = grid.permutation();
    let reference = brute_neighbours(cloud);

    // Exact per-point queries: ascending sorted indices, the same set.
    let mut list = NeighbourList::new();
    grid.neighbour_list(sorted.view(), &mut list).unwrap();
    assert_eq!(list.len(), cloud.len());
    for i in 0..grid.len() {
        let mut found = Vec::new();
        grid.for_each_neighbour(sorted.view(), i, |j| found.push(j as u32));
        assert!(found.windows(2).all(|w| w[0] < w[1]), "not ascending");
        let mut original: Vec<u32> = found.iter().map(|&j| perm[j as usize]).collect();
        original.sort_unstable();
        assert_eq!(
            original, reference[perm[i] as usize],
            "point {i} (input {})",
            perm[i]
        );

        // The CSR list is the same minus the point itself.
        let without_self: Vec<u32> = found.iter().copied().filter(|&j| j as usize != i).collect();
        assert_eq!(list.neighbours(i), &without_self[..]);

        // query() at the point's own position finds the same.
        let mut q = Vec::new();
        grid.query(sorted.view(), sorted.point(i), &mut q).unwrap();
        assert_eq!(q, found);
    }
    assert_eq!(
        list.total(),
        reference.iter().map(|r| r.len() - 1).sum::<usize>()
    );

    // Queries at arbitrary points.
    let mut out = Vec::new();
    for &p in queries {
        grid.query(sorted.view(), p, &mut out).unwrap();
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        let mut original: Vec<u32> = out.iter().map(|&j| perm[j as usize]).collect();
        original.sort_unstable();
        assert_eq!(original, brute_query(cloud, p), "query {p:?}");
        // The ranges around the point: ascending, disjoint, and holding every point
        // the query found, each exactly once.
        let mut ranges = [CellRange::default(); 27];
        let count = grid.ranges_around(p, &mut ranges).unwrap();
        let ranges = &ranges[..count];
        assert!(
            ranges.windows(2).all(|w| w[0].end <= w[1].start),
            "{ranges:?}"
        );
        let around: Vec<u32> = ranges
            .iter()
            .flat_map(|r| r.as_range())
            .map(|j| j as u32)
            .collect();
        let near: Vec<u32> = around
            .iter()
            .copied()
            .filter(|&j| within(distance2(p, sorted.point(j as usize)), sorted.h * sorted.h))
            .collect();
        assert_eq!(near, out, "ranges around {p:?}");
    }

    check_candidates(grid);
}

/// A solver's sequence: rebuild, reorder, move every point by up to `step` (some
/// steps far more), rebuild the same grid, and check it each time.
fn check_steps<const D: usize>(cloud: &Cloud<D>, steps: &[f32], seed: u64) {
    let (mut grid, mut sorted) = build(cloud);
    let mut rng = common::Rng(seed);
    for &step in steps {
        for axis in sorted.axes.iter_mut() {
            for x in axis.iter_mut() {
                *x += (rng.unit() - 0.5) * step * sorted.h;
            }
        }
        grid.rebuild(sorted.view(), sorted.h).unwrap();
        let mut next = sorted.clone();
        for a in 0..D {
            grid.reorder(&mut next.axes[a], &mut Vec::new()).unwrap();
        }
        check_grid(&grid, &sorted, &next, &[]);
        sorted = next;
    }
}

/// Candidate ranges: ascending, disjoint, merged, whole cells, and exactly the
/// occupied cells whose coordinates differ by at most one from the cell's.
fn check_candidates<const D: usize>(grid: &Grid<D>) {
    let cells = grid.cells();
    let coords: Vec<[u32; D]> = grid
        .cell_keys()
        .iter()
        .map(|&k| {
            let c = if D == 3 {
                morton::decode3(k).to_vec()
            } else {
                morton::decode2(k).to_vec()
            };
            std::array::from_fn(|a| c[a])
        })
        .collect();
    for c in 0..cells.len() {
        let ranges = grid.candidate_ranges(c);
        assert!(!ranges.is_empty());
        for w in ranges.windows(2) {
            assert!(
                w[0].end < w[1].start,
                "ranges must be ascending and merged: {ranges:?}"
            );
        }
        let mut expected: Vec<CellRange> = Vec::new();
        for (d, other) in coords.iter().enumerate() {
            if (0..D).all(|a| coords[c][a].abs_diff(other[a]) <= 1) {
                match expected.last_mut() {
                    Some(last) if last.end == cells[d].start => last.end = cells[d].end,
                    _ => expected.push(cells[d]),
                }
            }
        }
        assert_eq!(ranges, &expected[..], "cell {c}");
    }
}

fn queries<const D: usize>(max: usize) -> impl Strategy<Value = Vec<[f32; D]>> {
    proptest::collection::vec(proptest::array::uniform::<_, D>(-12.0f32..12.0), 0..max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn same_neighbours_as_brute_force_3d(cloud in cloud::<3>(160), qs in queries::<3>(12)) {
        // Queries relative to the cloud's scale and position.
        let first = if cloud.len() > 0 { cloud.point(0) } else { [0.0; 3] };
        let qs: Vec<[f32; 3]> = qs.iter().map(|q| std::array::from_fn(|a| first[a] + q[a] * cloud.h * 0.5)).collect();
        check_all(&cloud, &qs);
    }

    #[test]
    fn same_neighbours_as_brute_force_2d(cloud in cloud::<2>(200), qs in queries::<2>(12)) {
        let first = if cloud.len() > 0 { cloud.point(0) } else { [0.0; 2] };
        let qs: Vec<[f32; 2]> = qs.iter().map(|q| std::array::from_fn(|a| first[a] + q[a] * cloud.h * 0.5)).collect();
        check_all(&cloud, &qs);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn same_neighbours_after_steps_3d(cloud in cloud::<3>(250), step in 0.0f32..0.3, seed in any::<u64>()) {
        check_steps(&cloud, &[step, step * 0.1, 3.0 * step, step], seed);
    }

    #[test]
    fn same_neighbours_after_steps_2d(cloud in cloud::<2>(250), step in 0.0f32..0.3, seed in any::<u64>()) {
        check_steps(&cloud, &[step, step * 0.1, 3.0 * step, step], seed);
    }
}

#[test]
fn steady_state_steps_on_a_larger_cloud() {
    // Small steps (the re-sort of the few points that changed cell), then a large
    // one (most points change cell: the full sort), then small again.
    let cloud = common::uniform::<3>(6000, 12.0, 1.0, 8);
    check_steps(&cloud, &[0.02, 0.05, 0.01, 2.0, 0.02, 0.35, 0.0], 9);
    let cloud = common::uniform::<2>(6000, 60.0, 1.0, 10);
    check_steps(&cloud, &[0.02, 0.05, 3.0, 0.02, 0.35], 11);
}

#[test]
fn larger_uniform_clouds() {
    check_all(
        &common::uniform::<3>(3000, 10.0, 0.9, 1),
        &[[5.0, 5.0, 5.0], [-0.5, 3.0, 10.4], [40.0, 0.0, 0.0]],
    );
    check_all(
        &common::uniform::<2>(3000, 30.0, 1.1, 2),
        &[[15.0, 15.0], [-0.5, 30.2]],
    );
}

#[test]
fn exact_boundary_distances_are_excluded() {
    // A lattice with spacing exactly h: no pair is strictly within h.
    let axes: [Vec<f32>; 3] = [
        (0..64).map(|i| (i % 4) as f32 * 0.5).collect(),
        (0..64).map(|i| (i / 4 % 4) as f32 * 0.5).collect(),
        (0..64).map(|i| (i / 16) as f32 * 0.5).collect(),
    ];
    let cloud = Cloud { axes, h: 0.5 };
    let (grid, sorted) = build(&cloud);
    let mut list = NeighbourList::new();
    grid.neighbour_list(sorted.view(), &mut list).unwrap();
    assert_eq!(list.total(), 0);
    check_all(&cloud, &[[0.25, 0.25, 0.25]]);
}

#[test]
fn far_from_the_origin() {
    // 1e6 + k * 0.0625: consecutive f32 values there, all within h = 0.1 of their
    // neighbours; and h = 0.01, where only equal coordinates are neighbours.
    for h in [0.1f32, 0.01, 0.07] {
        let axes: [Vec<f32>; 3] = [
            (0..300).map(|i| 1.0e6 + (i % 7) as f32 * 0.0625).collect(),
            (0..300)
                .map(|i| -1.0e6 + (i / 7 % 5) as f32 * 0.0625)
                .collect(),
            (0..300)
                .map(|i| 2.5e5 + (i % 3) as f32 * 0.015_625)
                .collect(),
        ];
        check_all(&Cloud { axes, h }, &[[1.0e6, -1.0e6, 2.5e5]]);
    }
    // 2D keys hold 2^32 cells per axis: points 2e6 apart with h = 0.1 still fit.
    let axes: [Vec<f32>; 2] = [
        vec![-1.0e6, -1.0e6, 1.0e6, 1.0e6 + 0.0625, 0.0],
        vec![0.0, 0.0625, 0.0, 0.0, 0.0],
    ];
    check_all(&Cloud { axes, h: 0.1 }, &[[1.0e6, 0.0]]);
}
