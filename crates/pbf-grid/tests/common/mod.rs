//! Shared helpers of the integration tests: point clouds and the brute-force
//! reference.
#![allow(dead_code)]

use pbf_grid::{Grid, distance2, within};
use proptest::prelude::*;

/// A point cloud, one array per axis, and the radius to search it with.
#[derive(Clone, Debug)]
pub struct Cloud<const D: usize> {
    pub axes: [Vec<f32>; D],
    pub h: f32,
}

impl<const D: usize> Cloud<D> {
    pub fn len(&self) -> usize {
        self.axes[0].len()
    }

    pub fn view(&self) -> [&[f32]; D] {
        std::array::from_fn(|a| &self.axes[a][..])
    }

    pub fn point(&self, i: usize) -> [f32; D] {
        std::array::from_fn(|a| self.axes[a][i])
    }
}

/// The reference: every `j` with `within(distance2(p, x_j), h^2)`, O(N) per query.
pub fn brute_query<const D: usize>(cloud: &Cloud<D>, p: [f32; D]) -> Vec<u32> {
    let h2 = cloud.h * cloud.h;
    (0..cloud.len())
        .filter(|&j| within(distance2(p, cloud.point(j)), h2))
        .map(|j| j as u32)
        .collect()
}

/// The reference neighbour sets of every point (self included), O(N^2).
pub fn brute_neighbours<const D: usize>(cloud: &Cloud<D>) -> Vec<Vec<u32>> {
    (0..cloud.len())
        .map(|i| brute_query(cloud, cloud.point(i)))
        .collect()
}

/// A grid built on the cloud and the cloud's positions in the grid's sorted order.
pub fn build<const D: usize>(cloud: &Cloud<D>) -> (Grid<D>, Cloud<D>) {
    let mut grid = Grid::<D>::new();
    grid.rebuild(cloud.view(), cloud.h).expect("valid cloud");
    let mut sorted = cloud.clone();
    let mut scratch = Vec::new();
    for a in 0..D {
        grid.reorder(&mut sorted.axes[a], &mut scratch).unwrap();
    }
    (grid, sorted)
}

/// Small deterministic generator for non-proptest tests (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// `n` points uniform in a cube of side `side`, in random order.
pub fn uniform<const D: usize>(n: usize, side: f32, h: f32, seed: u64) -> Cloud<D> {
    let mut rng = Rng(seed);
    let mut axes: [Vec<f32>; D] = std::array::from_fn(|_| Vec::with_capacity(n));
    for _ in 0..n {
        for axis in axes.iter_mut() {
            axis.push(rng.unit() * side);
        }
    }
    Cloud { axes, h }
}

/// Coordinates that stress the cell mapping: values on a grid of step `h / k`
/// (many exact boundary distances), duplicates, and values near cell boundaries.
fn coordinate(h: f32, offset: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => (-4.0f32..4.0).prop_map(move |u| offset + u * h),
        2 => (-8i32..8, 1i32..4).prop_map(move |(m, k)| offset + m as f32 * h / k as f32),
        1 => Just(offset),
    ]
}

/// A random cloud: uniform, clustered, on a lattice of step `h` (exact boundary
/// distances), all at one spot, on a line, or far from the origin.
pub fn cloud<const D: usize>(max_points: usize) -> impl Strategy<Value = Cloud<D>> {
    let h = prop_oneof![Just(1.0f32), Just(0.1f32), 0.01f32..10.0];
    (h, 0usize..6, 0..=max_points).prop_flat_map(move |(h, kind, n)| {
        let offset = match kind {
            4 => 1.0e6f32, // f32 spacing 0.0625 there
            5 => -3.0e4,
            _ => 0.0,
        };
        let h = if kind == 4 {
            [0.01f32, 0.07, 0.2][n % 3]
        } else {
            h
        };
        let point = match kind {
            // Uniform in a box a few h wide.
            0 | 4 | 5 => proptest::array::uniform::<_, D>(coordinate(h, offset)).boxed(),
            // Clusters much smaller than h, around a few centres.
            1 => (0usize..4, proptest::array::uniform::<_, D>(-0.05f32..0.05))
                .prop_map(move |(c, d)| {
                    std::array::from_fn(|a| (c as f32 * 0.7 + (a as f32) * 0.3) * h + d[a] * h)
                })
                .boxed(),
            // Exact lattice of step h: neighbours at exactly h are excluded.
            2 => proptest::array::uniform::<_, D>(0i32..5)
                .prop_map(move |c| c.map(|v| v as f32 * h))
                .boxed(),
            // All at one spot, or on a line.
            _ => (0i32..3, -2.0f32..2.0)
                .prop_map(move |(k, t)| {
                    std::array::from_fn(|a| {
                        if k == 0 {
                            0.5
                        } else if a == 0 {
                            t * h
                        } else {
                            0.25
                        }
                    })
                })
                .boxed(),
        };
        proptest::collection::vec(point, n).prop_map(move |pts: Vec<[f32; D]>| Cloud {
            axes: std::array::from_fn(|a| pts.iter().map(|p| p[a]).collect()),
            h,
        })
    })
}
