//! The SPH density over the neighbour lists: the simplest pass, on any backend of
//! `pbf-kernels`, and the pattern of every other.

use super::{GROUP, NeighbourLists, Neighbourhood, for_each_group, pack};
use pbf_kernels::{Kernel, KernelError, Lane, LaneKind, WithLane};

/// The density `m (W(0) + sum_j W(|x_i - x_j|))` of every particle into `out`, the
/// sum over particle `i`'s list in list order with the poly6 kernel `W`, on the lanes
/// of `kind`: every backend gives the scalar path's bits. `positions` are those the
/// lists index (the sorted order of their build), within the lists' radius of where
/// they were built; pairs beyond the kernel's radius add nothing.
///
/// This is the density the solver computes at the end of a step, for particles clear
/// of its walls (where the walls add their share).
///
/// ```
/// use pbf_grid::Grid;
/// use pbf_grid::lists::{NeighbourLists, densities};
/// use pbf_kernels::{Kernel, LaneKind};
///
/// let (x, y) = (vec![0.0f32, 0.5, 3.0, 0.25], vec![0.0f32, 0.0, 0.0, 0.5]);
/// let kernel = Kernel::<2>::new(1.0)?;
/// let mut grid = Grid::<2>::new();
/// grid.rebuild([&x, &y], kernel.h())?;
/// let mut sorted = [vec![0.0f32; 4], vec![0.0f32; 4]];
/// grid.reorder_into(&x, &mut sorted[0])?;
/// grid.reorder_into(&y, &mut sorted[1])?;
/// let mut lists = NeighbourLists::default();
/// lists.build(&grid, [&sorted[0], &sorted[1]], kernel.h2(), 8)?;
/// let mut rho = vec![0.0f32; x.len()];
/// densities(LaneKind::widest(), &lists, [&sorted[0], &sorted[1]], &kernel, 1.0, &mut rho)?;
/// // The lone particle at x = 3 has only itself.
/// let lone = sorted[0].iter().position(|&v| v == 3.0).unwrap();
/// assert_eq!(rho[lone], kernel.poly6(0.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`KernelError::LanesUnavailable`] when this CPU does not run `kind`.
///
/// # Panics
/// When `positions` or `out` do not have one entry per particle of the lists.
pub fn densities<const D: usize>(
    kind: LaneKind,
    lists: &NeighbourLists,
    positions: [&[f32]; D],
    kernel: &Kernel<D>,
    mass: f32,
    out: &mut [f32],
) -> Result<(), KernelError> {
    assert!(
        out.len() == lists.len() && positions.iter().all(|p| p.len() == lists.len()),
        "densities: a position and a density for every particle of the lists"
    );
    let mut quads = Vec::new();
    pack(&mut quads, positions, &vec![0.0; lists.len()]);
    let pass = Densities {
        nb: Neighbourhood {
            lists,
            quads: &quads,
        },
        kernel,
        mass,
        out,
    };
    kind.dispatch(pass)
}

/// The density pass on the lanes the dispatcher hands over.
struct Densities<'a, const D: usize> {
    nb: Neighbourhood<'a, D>,
    kernel: &'a Kernel<D>,
    mass: f32,
    out: &'a mut [f32],
}

impl<const D: usize> WithLane for Densities<'_, D> {
    type Output = ();
    fn run<L: Lane>(self) {
        let Densities {
            nb,
            kernel,
            mass,
            out,
        } = self;
        for_each_group::<L>(
            0,
            out.len(),
            #[inline(always)]
            |first, width| {
                let mut w_sum = L::splat(0.0);
                nb.for_each_slot::<L>(
                    first,
                    #[inline(always)]
                    |_, _, r2, _| w_sum += L::poly6(kernel, r2),
                );
                let rho = L::splat(mass) * (L::splat(kernel.poly6(0.0)) + w_sum);
                let mut lanes = [0.0f32; GROUP];
                rho.store(&mut lanes[..L::WIDTH]);
                for (l, &i) in nb.lists.members(first)[..width].iter().enumerate() {
                    out[i as usize] = lanes[l];
                }
            },
        );
    }
}
