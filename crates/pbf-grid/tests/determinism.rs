//! The same input gives bit-identical results for any number of threads.

use crate::common;

use common::uniform;
use pbf_grid::{CellRange, Grid, NeighbourList};

/// Everything a grid and its list hand out, flattened for comparison.
#[derive(Debug, PartialEq)]
struct Snapshot {
    permutation: Vec<u32>,
    cells: Vec<CellRange>,
    keys: Vec<u64>,
    cell_of: Vec<u32>,
    candidates: Vec<CellRange>,
    offsets: Vec<u32>,
    indices: Vec<u32>,
    sorted_x: Vec<u32>,
}

/// Builds the grid and list on `threads` threads after `steps` solver steps (move
/// every point a little, rebuild the same grid, reorder), which take the re-sort
/// path of the rebuild.
fn snapshot<const D: usize>(threads: usize, cloud: &common::Cloud<D>, steps: usize) -> Snapshot {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut grid = Grid::<D>::new();
        grid.rebuild(cloud.view(), cloud.h).unwrap();
        let mut sorted = cloud.clone();
        let mut scratch = Vec::new();
        for a in 0..D {
            grid.reorder(&mut sorted.axes[a], &mut scratch).unwrap();
        }
        let mut rng = common::Rng(5);
        for _ in 0..steps {
            for axis in sorted.axes.iter_mut() {
                for x in axis.iter_mut() {
                    *x += (rng.unit() - 0.5) * 0.05 * cloud.h;
                }
            }
            grid.rebuild(sorted.view(), sorted.h).unwrap();
            for a in 0..D {
                grid.reorder(&mut sorted.axes[a], &mut scratch).unwrap();
            }
        }
        let mut list = NeighbourList::new();
        grid.neighbour_list(sorted.view(), &mut list).unwrap();
        Snapshot {
            permutation: grid.permutation().to_vec(),
            cells: grid.cells().to_vec(),
            keys: grid.cell_keys().to_vec(),
            cell_of: grid.cell_of().to_vec(),
            candidates: (0..grid.cells().len())
                .flat_map(|c| grid.candidate_ranges(c).to_vec())
                .collect(),
            offsets: list.offsets().to_vec(),
            indices: list.indices().to_vec(),
            sorted_x: sorted.axes[0].iter().map(|x| x.to_bits()).collect(),
        }
    })
}

#[test]
fn same_results_for_one_two_and_three_threads() {
    // Large enough for several chunks in every parallel pass.
    let cloud3 = uniform::<3>(120_000, 50.0, 1.6, 21);
    for steps in [0, 3] {
        let one = snapshot(1, &cloud3, steps);
        assert!(one.indices.len() > 1_000_000, "{}", one.indices.len());
        assert_eq!(one, snapshot(2, &cloud3, steps));
        assert_eq!(one, snapshot(3, &cloud3, steps));
    }
    // Nine threads: the re-sort's key pass would take 72 chunks, more than its merge
    // has parts; it takes 64.
    assert_eq!(snapshot(1, &cloud3, 3), snapshot(9, &cloud3, 3));

    let cloud2 = uniform::<2>(120_000, 350.0, 1.5, 22);
    for steps in [0, 3] {
        let one = snapshot(1, &cloud2, steps);
        assert_eq!(one, snapshot(2, &cloud2, steps));
        assert_eq!(one, snapshot(3, &cloud2, steps));
    }
}
