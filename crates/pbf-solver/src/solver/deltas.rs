//! [`Solver::position_deltas`]: one constraint iteration over the current positions,
//! moving nothing.

use super::{Solver, empty, muts, refs};
use crate::boundary::Boundary;
use crate::constraint::{Constraint, WallGradient};
use crate::lists::{NeighbourLists, Neighbourhood, pack, repack_extra};
use crate::{CoreError, Domain};
use pbf_kernels::{Lane, WithLane};

impl<const D: usize> Solver<D> {
    /// One position-delta pass over the current positions without moving anything:
    /// the `dp_i` the next iteration would apply if positions were these (no
    /// collisions). Used to check momentum conservation; costs two neighbour passes.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.5, 0.5], [0.55, 0.5]], None)?;
    /// let dp = s.position_deltas()?;
    /// assert!((dp[0][0] + dp[1][0]).abs() < 1e-6);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn position_deltas(&mut self) -> Result<Vec<[f32; D]>, CoreError> {
        let n = self.len();
        let list_radius = self.list_radius();
        // The grid and the lists below are not the step's any more.
        self.reusable = false;
        self.grid.rebuild(refs(&self.positions), list_radius)?;
        let permutation = self.grid.permutation().to_vec();
        let mut sorted: [Vec<f32>; D] = empty();
        for a in 0..D {
            sorted[a] = permutation
                .iter()
                .map(|&i| self.positions[a][i as usize])
                .collect();
        }
        // An unbounded domain and no colliders: nothing but the constraint moves.
        let free = Domain::new([f32::MIN; D], [f32::MAX; D])?;
        let constraint = Constraint::new(
            &self.params,
            &self.kernel,
            &self.tensile,
            self.relaxation,
            Boundary {
                domain: &free,
                colliders: &[],
                tables: &self.walls,
                corners: None,
            },
        );
        self.lists
            .build(
                &self.grid,
                refs(&sorted),
                list_radius * list_radius,
                self.room(),
            )
            .map_err(|e| {
                self.collapsed(e, self.steps(), self.ids[permutation[e.index] as usize])
            })?;
        // One constraint iteration: the lambda pass, then the delta pass with the
        // neighbours' lambda packed beside their positions.
        fn iteration<L: Lane, const D: usize>(
            constraint: &Constraint<'_, D>,
            lists: &NeighbourLists,
            sorted: [&[f32]; D],
            free: &Domain<D>,
        ) -> [Vec<f32>; D] {
            let n = sorted[0].len();
            let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
            let mut quads = Vec::new();
            pack(&mut quads, sorted, &lambda);
            let nb = Neighbourhood {
                lists,
                quads: &quads,
            };
            let mut wall = WallGradient::<D>::new(n);
            constraint.lambda_pass::<L>(&nb, &mut density, &mut lambda, &mut wall);
            repack_extra::<D>(&mut quads, &lambda);
            let nb = Neighbourhood {
                lists,
                quads: &quads,
            };
            let mut next: [Vec<f32>; D] = core::array::from_fn(|_| vec![0.0; n]);
            constraint.delta_pass::<L>(&nb, &lambda, &wall, muts(&mut next), &[], free, 0.0, None);
            next
        }
        /// One iteration on the lanes the dispatcher picks.
        struct Iteration<'a, const D: usize> {
            constraint: &'a Constraint<'a, D>,
            lists: &'a NeighbourLists,
            sorted: [&'a [f32]; D],
            free: &'a Domain<D>,
        }
        impl<const D: usize> WithLane for Iteration<'_, D> {
            type Output = [Vec<f32>; D];
            fn run<L: Lane>(self) -> Self::Output {
                iteration::<L, D>(self.constraint, self.lists, self.sorted, self.free)
            }
        }
        let pass = Iteration {
            constraint: &constraint,
            lists: &self.lists,
            sorted: refs(&sorted),
            free: &free,
        };
        let next = (self.params.backend().lane_kind().dispatch(pass))
            .unwrap_or_else(|e| unreachable!("{e}: a backend runs only available lanes"));
        let mut out = vec![[0.0; D]; n];
        for (k, &i) in permutation.iter().enumerate() {
            out[i as usize] = core::array::from_fn(|a| next[a][k] - sorted[a][k]);
        }
        Ok(out)
    }
}
