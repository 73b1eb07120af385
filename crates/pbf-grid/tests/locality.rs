//! Morton order keeps neighbours near in memory: a measured figure, asserted loosely.

use crate::common;

use common::{build, uniform};
use pbf_grid::NeighbourList;

/// Mean and median of |i - j| over all neighbour pairs, for the given index of each
/// sorted point.
fn distances(list: &NeighbourList, index_of: impl Fn(usize) -> f64) -> (f64, f64) {
    let mut all = Vec::with_capacity(list.total());
    for i in 0..list.len() {
        for &j in list.neighbours(i) {
            all.push((index_of(i) - index_of(j as usize)).abs());
        }
    }
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    all.sort_by(f64::total_cmp);
    (mean, all[all.len() / 2])
}

#[test]
fn neighbours_are_near_in_memory() {
    for (dim, n) in [(3, 60_000), (2, 60_000)] {
        let (sorted_mean, input_mean) = if dim == 3 {
            // Uniform at ~1 point per unit volume, h = 2: about 33 neighbours.
            let cloud = uniform::<3>(n, (n as f32).cbrt(), 2.0, 11);
            let (grid, sorted) = build(&cloud);
            let mut list = NeighbourList::new();
            grid.neighbour_list(sorted.view(), &mut list).unwrap();
            let perm = grid.permutation();
            (
                distances(&list, |k| k as f64),
                distances(&list, |k| f64::from(perm[k])),
            )
        } else {
            let cloud = uniform::<2>(n, (n as f32).sqrt(), 2.0, 12);
            let (grid, sorted) = build(&cloud);
            let mut list = NeighbourList::new();
            grid.neighbour_list(sorted.view(), &mut list).unwrap();
            let perm = grid.permutation();
            (
                distances(&list, |k| k as f64),
                distances(&list, |k| f64::from(perm[k])),
            )
        };
        println!(
            "{dim}D, {n} points: |i - j| of neighbour pairs, mean / median: Morton order {:.0} / {:.0}, input (random) order {:.0} / {:.0}",
            sorted_mean.0, sorted_mean.1, input_mean.0, input_mean.1
        );
        // Random order gives about n / 3. In Morton order most neighbours sit in the
        // same or an adjacent cell (median of a few dozen slots); the mean is pulled
        // up by pairs across the curve's big jumps (about n / 40 in 3D).
        assert!(
            input_mean.0 > n as f64 / 4.0 && input_mean.1 > n as f64 / 5.0,
            "{input_mean:?}"
        );
        assert!(
            sorted_mean.0 < input_mean.0 / 8.0,
            "Morton {sorted_mean:?} vs random {input_mean:?}"
        );
        assert!(
            sorted_mean.1 < input_mean.1 / 100.0,
            "Morton {sorted_mean:?} vs random {input_mean:?}"
        );
    }
}
