//! Code shared by the benches (`benches/*.rs`): the passes more than one of them times.
#![deny(missing_docs)]

pub mod machine;
pub mod rng;

use pbf_grid::{CellRange, Grid};
use pbf_kernels::{Kernel, KernelError, Lane, LaneKind, MAX_WIDTH, WithLane};

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

/// The cell-blocked fused density pass on the widest lanes of this CPU
/// ([`LaneKind::widest`]): for each occupied cell, its points in lanes (the last block
/// padded with [`FAR`]) against every candidate of the cell's merged candidate ranges,
/// no neighbour lists. Gives `density[i] = sum_j W(r_ij)` over the sorted points `j`
/// within `h`, `i` itself included (unit mass).
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
    fused_density_on(LaneKind::widest(), grid, kernel, sorted, density)
        .expect("the widest lanes run here");
}

/// [`fused_density`] on the lanes of `kind`: every backend gives the same bits (each
/// point's candidates in order, the scalar reference's operations lane by lane).
///
/// ```
/// use pbf_kernels::{Kernel, LaneKind};
/// let (x, y, z) = ([0.0f32, 0.5, 3.0, 0.2], [0.0f32; 4], [0.1f32, 0.0, 0.0, 0.3]);
/// let mut grid = pbf_grid::Grid::<3>::new();
/// grid.rebuild([&x, &y, &z], 1.0)?;
/// let kernel = Kernel::<3>::new(1.0)?;
/// let run = |kind| {
///     let mut density = [0.0f32; 4];
///     pbf_benches::fused_density_on(kind, &grid, &kernel, [&x, &y, &z], &mut density)
///         .map(|()| density)
/// };
/// let scalar = run(LaneKind::Scalar)?;
/// for kind in LaneKind::ALL {
///     if kind.is_available() {
///         assert_eq!(run(kind)?, scalar, "{}", kind.name());
///     }
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`KernelError::LanesUnavailable`] when this CPU does not run `kind`.
///
/// # Panics
/// As [`fused_density`].
pub fn fused_density_on(
    kind: LaneKind,
    grid: &Grid<3>,
    kernel: &Kernel<3>,
    sorted: [&[f32]; 3],
    density: &mut [f32],
) -> Result<(), KernelError> {
    /// The pass on the lanes the dispatcher hands over.
    struct Pass<'a> {
        grid: &'a Grid<3>,
        kernel: &'a Kernel<3>,
        sorted: [&'a [f32]; 3],
        density: &'a mut [f32],
    }
    impl WithLane for Pass<'_> {
        type Output = ();
        fn run<L: Lane>(self) {
            let Pass {
                grid,
                kernel,
                sorted,
                density,
            } = self;
            grid.par_for_each_cell(density, |cell, out| {
                L::run(
                    #[inline(always)]
                    || cell_density::<L>(grid, kernel, sorted, cell, out),
                )
            })
            .expect("density has one entry per point");
        }
    }
    kind.dispatch(Pass {
        grid,
        kernel,
        sorted,
        density,
    })
}

/// The densities of the points of `cell` into `out`, `L::WIDTH` points at a time.
#[inline(always)]
fn cell_density<L: Lane>(
    grid: &Grid<3>,
    kernel: &Kernel<3>,
    sorted: [&[f32]; 3],
    cell: usize,
    out: &mut [f32],
) {
    let candidates = grid.candidate_ranges(cell);
    let first = grid.cells()[cell].start as usize;
    for (block, out) in out.chunks_mut(L::WIDTH).enumerate() {
        let i0 = first + block * L::WIDTH;
        let own = |v: &[f32]| {
            let mut a = [FAR; MAX_WIDTH];
            a[..out.len()].copy_from_slice(&v[i0..i0 + out.len()]);
            L::from_slice(&a)
        };
        let xi = sorted.map(own);
        let mut sum = L::splat(0.0);
        for &CellRange { start, end } in candidates {
            let (s, e) = (start as usize, end as usize);
            for ((&xj, &yj), &zj) in sorted[0][s..e]
                .iter()
                .zip(&sorted[1][s..e])
                .zip(&sorted[2][s..e])
            {
                let d = [
                    xi[0] - L::splat(xj),
                    xi[1] - L::splat(yj),
                    xi[2] - L::splat(zj),
                ];
                sum += L::poly6(kernel, L::norm2(d));
            }
        }
        let mut lanes = [0.0f32; MAX_WIDTH];
        sum.store(&mut lanes[..L::WIDTH]);
        out.copy_from_slice(&lanes[..out.len()]);
    }
}
