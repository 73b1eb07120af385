//! Bad input gives errors (and leaves the grid as it was); edge cases work.

use crate::common;

use pbf_grid::{CellRange, Grid, GridError, NeighbourList, morton};

fn xyz(points: &[[f32; 3]]) -> [Vec<f32>; 3] {
    std::array::from_fn(|a| points.iter().map(|p| p[a]).collect())
}

fn view(axes: &[Vec<f32>; 3]) -> [&[f32]; 3] {
    [&axes[0], &axes[1], &axes[2]]
}

#[test]
fn non_finite_coordinates_name_the_first_bad_point() {
    let mut grid = Grid::<3>::new();
    let n = 100_000;
    for (index, axis, value) in [
        (0, 0, f32::NAN),
        (77_777, 2, f32::INFINITY),
        (n - 1, 1, f32::NEG_INFINITY),
    ] {
        let mut axes = [vec![1.0f32; n], vec![2.0; n], vec![3.0; n]];
        axes[axis][index] = value;
        // A later bad value on a lower axis does not hide the first bad point.
        if index + 1 < n {
            axes[0][index + 1] = f32::NAN;
        }
        match grid.rebuild(view(&axes), 1.0) {
            Err(GridError::NonFinitePosition {
                index: i,
                axis: a,
                value: v,
            }) => {
                assert_eq!((i, a), (index, axis));
                assert_eq!(v.to_bits(), value.to_bits());
            }
            other => panic!("expected NonFinitePosition, got {other:?}"),
        }
    }
    let err = GridError::NonFinitePosition {
        index: 5,
        axis: 1,
        value: f32::NAN,
    };
    assert!(
        err.to_string().contains("position 5") && err.to_string().contains("axis 1"),
        "{err}"
    );
}

#[test]
fn bad_radius() {
    let axes = xyz(&[[0.0; 3], [1.0; 3]]);
    let mut grid = Grid::<3>::new();
    for h in [0.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, 1e-30, 1e30] {
        assert_eq!(
            grid.rebuild(view(&axes), h),
            Err(GridError::InvalidRadius { value: h }),
            "h = {h}"
        );
    }
    assert!(
        matches!(grid.rebuild(view(&axes), f32::NAN), Err(GridError::InvalidRadius { value }) if value.is_nan())
    );
}

#[test]
fn length_mismatch_between_axes() {
    let mut grid = Grid::<3>::new();
    let (a, b) = (vec![0.0f32; 5], vec![0.0f32; 4]);
    assert_eq!(
        grid.rebuild([&a, &a, &b], 1.0),
        Err(GridError::LengthMismatch {
            axis: 2,
            expected: 5,
            found: 4
        })
    );
    let mut grid2 = Grid::<2>::new();
    assert_eq!(
        grid2.rebuild([&a, &b], 1.0),
        Err(GridError::LengthMismatch {
            axis: 1,
            expected: 5,
            found: 4
        })
    );
}

#[test]
fn extent_beyond_the_morton_range() {
    let mut grid = Grid::<3>::new();
    // 3D: 2^21 cells per axis. 3e6 cells along y.
    let axes = xyz(&[[0.0, 0.0, 0.0], [0.0, 3.0e6, 0.0]]);
    match grid.rebuild(view(&axes), 1.0) {
        Err(GridError::OutOfRange {
            axis: 1,
            cells,
            max,
        }) => {
            assert_eq!(max, morton::MAX_COORD3);
            assert!((2.9e6..3.1e6).contains(&cells), "{cells}");
        }
        other => panic!("expected OutOfRange, got {other:?}"),
    }
    // Large offsets relative to h: a kilometre apart with h = 1 mm fits (1e6 cells).
    let axes = xyz(&[[0.0, 0.0, 0.0], [1000.0, 0.0, 0.0]]);
    grid.rebuild(view(&axes), 1e-3).unwrap();
    assert_eq!(grid.cells().len(), 2);
    // 2D keys have 32 bits per axis: 1e9 cells fit, 1e10 do not.
    let mut grid2 = Grid::<2>::new();
    grid2
        .rebuild([&[-5.0e5, 5.0e5], &[0.0, 0.0]], 1e-3)
        .unwrap();
    assert_eq!(grid2.cells().len(), 2);
    assert!(matches!(
        grid2.rebuild([&[-5.0e6, 5.0e6], &[0.0, 0.0]], 1e-3),
        Err(GridError::OutOfRange {
            axis: 0,
            max: u32::MAX,
            ..
        })
    ));
}

#[test]
fn unsupported_dimensions() {
    let a = [0.0f32; 3];
    assert_eq!(
        Grid::<1>::new().rebuild([&a], 1.0),
        Err(GridError::UnsupportedDimension { dim: 1 })
    );
    assert_eq!(
        Grid::<4>::new().rebuild([&a, &a, &a, &a], 1.0),
        Err(GridError::UnsupportedDimension { dim: 4 })
    );
}

#[test]
fn an_error_leaves_the_grid_unchanged() {
    let axes = xyz(&[[0.0; 3], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]]);
    let mut grid = Grid::<3>::new();
    grid.rebuild(view(&axes), 1.0).unwrap();
    let before = (
        grid.permutation().to_vec(),
        grid.cells().to_vec(),
        grid.radius(),
    );
    let mut bad = axes.clone();
    bad[1][2] = f32::NAN;
    assert!(grid.rebuild(view(&bad), 2.0).is_err());
    assert!(grid.rebuild(view(&axes), -2.0).is_err());
    assert_eq!(
        (
            grid.permutation().to_vec(),
            grid.cells().to_vec(),
            grid.radius()
        ),
        before
    );
}

#[test]
fn wrong_lengths_for_reorder_and_queries() {
    let axes = xyz(&[[0.0; 3], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]]);
    let mut grid = Grid::<3>::new();
    grid.rebuild(view(&axes), 1.0).unwrap();
    let mut short = vec![0u8; 2];
    assert_eq!(
        grid.reorder(&mut short, &mut Vec::new()),
        Err(GridError::DataLength {
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        grid.reorder_into(&[1, 2, 3], &mut [0; 4]),
        Err(GridError::DataLength {
            expected: 3,
            found: 4
        })
    );
    assert_eq!(
        grid.reorder_into(&[1, 2], &mut [0; 3]),
        Err(GridError::DataLength {
            expected: 3,
            found: 2
        })
    );
    assert_eq!(
        grid.reorder_bytes(&[0; 12], &mut [0; 11], 4),
        Err(GridError::DataLength {
            expected: 3,
            found: 2
        })
    );
    assert!(grid.par_for_each_cell(&mut [0; 5], |_, _| {}).is_err());

    let sorted = view(&axes);
    let mut out = vec![7];
    assert_eq!(
        grid.query([sorted[0], &sorted[1][..2], sorted[2]], [0.0; 3], &mut out),
        Err(GridError::LengthMismatch {
            axis: 1,
            expected: 3,
            found: 2
        })
    );
    assert_eq!(out, [7], "unchanged on error");
    assert_eq!(
        grid.query(sorted, [0.0, f32::NAN, 0.0], &mut out)
            .map_err(|e| matches!(e, GridError::NonFiniteQuery { axis: 1, .. })),
        Err(true)
    );
    assert_eq!(
        grid.query(sorted, [0.0, 0.0, f32::INFINITY], &mut out),
        Err(GridError::NonFiniteQuery {
            axis: 2,
            value: f32::INFINITY
        })
    );
    assert_eq!(
        grid.ranges_around(
            [f32::NEG_INFINITY, 0.0, 0.0],
            &mut [pbf_grid::CellRange::default(); 27]
        ),
        Err(GridError::NonFiniteQuery {
            axis: 0,
            value: f32::NEG_INFINITY
        })
    );
    let mut list = NeighbourList::new();
    assert_eq!(
        grid.neighbour_list([sorted[0], sorted[1], &[]], &mut list),
        Err(GridError::LengthMismatch {
            axis: 2,
            expected: 3,
            found: 0
        })
    );
    assert!(list.is_empty());
}

#[test]
fn empty_set() {
    let mut grid = Grid::<3>::new();
    grid.rebuild([&[], &[], &[]], 1.0).unwrap();
    assert!(grid.is_empty());
    assert!(grid.cells().is_empty() && grid.permutation().is_empty() && grid.cell_of().is_empty());
    assert!(grid.permutation_is_identity());
    let mut out = vec![1];
    grid.query([&[], &[], &[]], [0.0; 3], &mut out).unwrap();
    assert!(out.is_empty());
    let mut list = NeighbourList::new();
    grid.neighbour_list([&[], &[], &[]], &mut list).unwrap();
    assert_eq!(list.offsets(), &[0]);
    assert_eq!(list.total(), 0);
    grid.reorder(&mut Vec::<f32>::new(), &mut Vec::new())
        .unwrap();
    // And after a non-empty build, back to empty.
    grid.rebuild([&[1.0], &[1.0], &[1.0]], 1.0).unwrap();
    grid.rebuild([&[], &[], &[]], 1.0).unwrap();
    assert!(grid.is_empty() && grid.cells().is_empty());
}

#[test]
fn single_point() {
    let mut grid = Grid::<2>::new();
    grid.rebuild([&[-7.5], &[1e9]], 0.5).unwrap();
    assert_eq!(grid.permutation(), &[0]);
    assert_eq!(grid.cells(), &[CellRange { start: 0, end: 1 }]);
    assert_eq!(grid.candidate_ranges(0), &[CellRange { start: 0, end: 1 }]);
    let mut seen = Vec::new();
    grid.for_each_neighbour([&[-7.5], &[1e9]], 0, |j| seen.push(j));
    assert_eq!(seen, [0]);
    let mut list = NeighbourList::new();
    grid.neighbour_list([&[-7.5], &[1e9]], &mut list).unwrap();
    assert_eq!(list.offsets(), &[0, 0]);
}

#[test]
fn all_points_at_one_spot() {
    let n = 200_000;
    let axes = [vec![0.25f32; n], vec![-3.0; n], vec![1e5; n]];
    let mut grid = Grid::<3>::new();
    grid.rebuild(view(&axes), 0.01).unwrap();
    assert_eq!(
        grid.cells(),
        &[CellRange {
            start: 0,
            end: n as u32
        }]
    );
    assert_eq!(
        grid.candidate_ranges(0),
        &[CellRange {
            start: 0,
            end: n as u32
        }]
    );
    assert!(grid.permutation_is_identity());
    // Linear memory, no n^2 anywhere in the grid. The capacity is reserved for the
    // most cells and candidate ranges n points can have (so that rebuilding with n
    // points never allocates): a few hundred bytes per point of address space, of
    // which only what is written becomes resident.
    assert!(grid.heap_bytes() < 400 * n, "{} bytes", grid.heap_bytes());
    let mut count = 0;
    grid.for_each_neighbour(view(&axes), n / 2, |_| count += 1);
    assert_eq!(count, n);
    // The list itself is quadratic by nature: check it on a smaller set.
    let small = [vec![0.25f32; 1500], vec![-3.0; 1500], vec![1e5; 1500]];
    grid.rebuild(view(&small), 0.01).unwrap();
    let mut list = NeighbourList::new();
    grid.neighbour_list(view(&small), &mut list).unwrap();
    assert_eq!(list.total(), 1500 * 1499);
    assert!(
        (0..1500)
            .all(|i| list.neighbours(i).len() == 1499 && !list.neighbours(i).contains(&(i as u32)))
    );
}

#[test]
fn sparse_domains_use_memory_per_point_not_per_volume() {
    // Clusters at the corners of a box 2^20 cells wide: a dense grid would need
    // 2^60 cells; the grid holds tens of bytes per point.
    let mut rng = common::Rng(99);
    let mut points = Vec::new();
    for corner in 0..8 {
        for _ in 0..2000 {
            points.push(std::array::from_fn(|a| {
                let far = if (corner >> a) & 1 == 1 { 1.0e6 } else { 0.0 };
                far + rng.unit() * 20.0
            }));
        }
    }
    let axes = xyz(&points);
    let mut grid = Grid::<3>::new();
    grid.rebuild(view(&axes), 1.0).unwrap();
    assert!(grid.cells().len() > 8 * 1000);
    // Reserved for the worst case at this point count: see `all_points_at_one_spot`.
    assert!(
        grid.heap_bytes() < 400 * points.len(),
        "{} bytes for {} points",
        grid.heap_bytes(),
        points.len()
    );
    let cloud = common::Cloud { axes, h: 1.0 };
    let (grid, sorted) = common::build(&cloud);
    // Spot-check neighbours against the brute force.
    for i in (0..grid.len()).step_by(97) {
        let mut found = Vec::new();
        grid.for_each_neighbour(sorted.view(), i, |j| found.push(grid.permutation()[j]));
        found.sort_unstable();
        assert_eq!(found, common::brute_query(&cloud, sorted.point(i)));
    }
}
