//! Code shared by the benches (`benches/*.rs`): the passes more than one of them times.
#![deny(missing_docs)]

pub mod density;
pub mod machine;

use pbf_grid::{CellRange, Grid};
use pbf_kernels::{Kernel, LANES, f32x8, norm2_lanes};

/// The library's 3D dam break ([`pbf_solver::scenes::dam_break_3d`]) with its
/// parameters changed by `change`: the same tank and block.
///
/// ```
/// let s = pbf_benches::dam_break_3d_with(1000, |p| p.keep_lists(false));
/// assert!(!s.params().keep_lists());
/// assert_eq!(s.len(), 1000);
/// ```
pub fn dam_break_3d_with(
    particles: usize,
    change: impl FnOnce(pbf_solver::ParamsBuilder<3>) -> pbf_solver::ParamsBuilder<3>,
) -> pbf_solver::Solver<3> {
    let plain = pbf_solver::scenes::dam_break_3d(particles).expect("scene");
    let params = change(plain.params().to_builder()).build().expect("params");
    let (lo, hi) = (plain.domain().lo(), plain.domain().hi());
    let domain = pbf_solver::Domain::new(lo, hi).expect("domain");
    let mut solver = pbf_solver::Solver::new(params, domain).expect("solver");
    // The block is the cube `[0, a]^3` in the corner of a tank `a` deep.
    let a = hi[2] - lo[2];
    solver.add_block([0.0; 3], [a; 3], [0.0; 3]).expect("block");
    assert_eq!(solver.len(), plain.len());
    solver
}

/// Coordinate of padding lanes: far outside every support.
pub const FAR: f32 = 1.0e6;

/// A particle count as the benches name it: whole millions as `1M`, otherwise
/// thousands rounded down (`10648` is `10k`), below a thousand the count itself.
///
/// ```
/// assert_eq!(pbf_benches::size_label(1_000_000), "1M");
/// assert_eq!(pbf_benches::size_label(10_648), "10k");
/// assert_eq!(pbf_benches::size_label(500), "500");
/// ```
pub fn size_label(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// The cell-blocked fused density pass, as the solver runs it: for each occupied cell,
/// its points in `f32x8` lanes (the last block padded with [`FAR`]) against every
/// candidate of the cell's merged candidate ranges, no neighbour lists. Gives
/// `density[i] = sum_j W(r_ij)` over the sorted points `j` within `h`, `i` itself
/// included (unit mass).
///
/// `sorted` are the positions in the grid's order (after
/// [`Grid::reorder_into`]) and `density` has one entry per point. The `grid` bench
/// times it against lists and brute force, the `peers` bench against other crates'
/// neighbour searches.
///
/// ```
/// use pbf_grid::Grid;
/// use pbf_kernels::Kernel;
///
/// let (x, y, z) = ([0.0, 0.5, 3.0], [0.0; 3], [0.0; 3]);
/// let mut grid = Grid::<3>::new();
/// grid.rebuild([&x, &y, &z], 1.0)?;
/// let mut sorted = [[0.0; 3]; 3];
/// for (axis, v) in [x, y, z].iter().enumerate() {
///     grid.reorder_into(v, &mut sorted[axis])?;
/// }
/// let kernel = Kernel::<3>::new(1.0)?;
/// let mut density = [0.0; 3];
/// pbf_benches::fused_density(&grid, &kernel, [&sorted[0], &sorted[1], &sorted[2]], &mut density);
/// // The lone point at x = 3 sees only itself.
/// let lone = sorted[0].iter().position(|&v| v == 3.0).unwrap();
/// assert_eq!(density[lone], kernel.poly6(0.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Panics
/// When `density` or `sorted` do not hold one entry per point of the grid (a bench
/// bug, not input).
pub fn fused_density(grid: &Grid<3>, kernel: &Kernel<3>, sorted: [&[f32]; 3], density: &mut [f32]) {
    let [x, y, z] = sorted;
    grid.par_for_each_cell(density, |cell, out| {
        let candidates = grid.candidate_ranges(cell);
        let first = grid.cells()[cell].start as usize;
        for (block, out) in out.chunks_mut(LANES).enumerate() {
            let i0 = first + block * LANES;
            let lane = |v: &[f32]| {
                let mut a = [FAR; LANES];
                a[..out.len()].copy_from_slice(&v[i0..i0 + out.len()]);
                f32x8::from(a)
            };
            let (xi, yi, zi) = (lane(x), lane(y), lane(z));
            let mut sum = f32x8::ZERO;
            for &CellRange { start, end } in candidates {
                let (s, e) = (start as usize, end as usize);
                for ((&xj, &yj), &zj) in x[s..e].iter().zip(&y[s..e]).zip(&z[s..e]) {
                    let d = [
                        xi - f32x8::splat(xj),
                        yi - f32x8::splat(yj),
                        zi - f32x8::splat(zj),
                    ];
                    sum += kernel.poly6_lanes(norm2_lanes(d));
                }
            }
            out.copy_from_slice(&sum.to_array()[..out.len()]);
        }
    })
    .expect("density has one entry per point");
}
