//! The start of a step: room in the work arrays, external forces, the prediction
//! `p* = x + dt v` and the collisions of the predicted moves.

use super::{Solver, muts, refs};
use crate::collide::{confine_block, for_each_block};
use crate::lists::GROUP;
use crate::parallel::{MIN_CHUNK, for_each_chunk, stretches};

impl<const D: usize> Solver<D> {
    /// Sizes the work arrays for the particles of this step (after emission).
    pub(super) fn prepare(&mut self) {
        let n = self.len();
        for buffer in [&mut self.predicted, &mut self.next] {
            for a in buffer.iter_mut() {
                a.resize(n, 0.0);
            }
        }
        for b in [&mut self.lambda, &mut self.count] {
            b.resize(n, 0.0);
        }
        self.wall_gradient.resize(n);
        if self.keep_pressures {
            self.pressure.resize(n, 0.0);
        }
        for b in self.omega.iter_mut() {
            b.resize(n, 0.0);
        }
        // Room for the per-chunk sums of the adaptive iterations and the lists' check,
        // which may first run many steps later.
        let chunks = n.div_ceil(MIN_CHUNK);
        self.partials
            .reserve(chunks.saturating_sub(self.partials.len()));
        self.drift.reserve(chunks.saturating_sub(self.drift.len()));
    }

    /// Phases 1-2 of a step: every velocity takes gravity and the vorticity force of
    /// the last step, and the predicted positions `p* = x + dt v` are kept in the
    /// domain and out of the colliders (each move swept from `x`).
    pub(super) fn predict(&mut self) {
        let dt = self.params.time_step();
        let margin = self.margin();
        let gravity = self.params.gravity();
        let (positions, force) = (refs(&self.positions), refs(&self.force));
        let (colliders, domain) = (&self.colliders, &self.domain);
        for_each_chunk(
            (muts(&mut self.velocities), muts(&mut self.predicted)),
            &|start, (v, p)| {
                let range = start..start + v[0].len();
                let positions = stretches(positions, range.clone());
                let force = stretches(force, range);
                for_each_block(v[0].len(), |block, width| {
                    let mut from = [[0.0f32; D]; GROUP];
                    let mut to = [[0.0f32; D]; GROUP];
                    for l in 0..width {
                        let k = block + l;
                        for a in 0..D {
                            v[a][k] += dt * (gravity[a] + force[a][k]);
                            from[l][a] = positions[a][k];
                            to[l][a] = positions[a][k] + dt * v[a][k];
                        }
                    }
                    confine_block(colliders, domain, &from[..width], &mut to[..width], margin);
                    for (l, q) in to[..width].iter().enumerate() {
                        for a in 0..D {
                            p[a][block + l] = q[a];
                        }
                    }
                });
            },
        );
    }
}
