//! The free bodies of fluid: the connected bodies no wall touches, whose particles'
//! mean coarse displacement is taken out so that each keeps its centre of mass.

use super::{CELL_IN_H, CoarseGrid, FLUID, NO_BODY, Scene, WALLED};

impl<const D: usize> CoarseGrid<D> {
    /// The free body (index into `shift`) that the particle at `p` belongs to: that
    /// of the first fluid cell of its stencil, if that body touches no wall.
    pub(super) fn body_of(&self, p: [f32; D]) -> Option<usize> {
        if self.shift.is_empty() {
            return None;
        }
        let (base, t) = self.stencil(p);
        (0..1 << D).find_map(|corner| {
            let (c, _) = self.corner(base, t, corner);
            let body = self.body[c];
            (body != NO_BODY).then_some(body as usize)
        })
    }

    /// Labels the fluid cells by the connected bodies of fluid (across faces) that no
    /// wall touches (no cell of theirs within two cells of a domain face or a
    /// collider), in `body`, and sets each such body's `shift` to the mean
    /// displacement of its particles, so that taking it out keeps the body's centre of
    /// mass (every particle has the same mass). A body that touches a wall keeps its
    /// displacement: the wall takes the momentum, as the walls' share of the
    /// constraint does in the passes. Labels, sums and means run in a fixed order.
    pub(super) fn free_bodies(&mut self, scene: &Scene<'_, D>, positions: &[&mut [f32]; D]) {
        let cells = self.kind.len();
        self.body.clear();
        self.body.resize(cells, NO_BODY);
        self.shift.clear();
        let reach = 2.0 * CELL_IN_H * scene.h;
        let (lo, hi) = (scene.domain.lo(), scene.domain.hi());
        let walls: [bool; D] = core::array::from_fn(|a| !self.periodic.is_periodic(a));
        let near_wall = |c: [f32; D]| {
            (0..D).any(|a| walls[a] && (c[a] - lo[a] < reach || hi[a] - c[a] < reach))
                || scene.colliders.iter().any(|w| w.distance(c) < reach)
        };
        let mut bodies = 0u32;
        let mut stack = core::mem::take(&mut self.stack);
        for i in 0..self.fluid.len() {
            let start = self.fluid[i] as usize;
            if self.body[start] != NO_BODY {
                continue;
            }
            // Flood the body from `start` breadth first: `stack` ends up holding it.
            let label = bodies;
            let mut walled = false;
            stack.clear();
            stack.push(start as u32);
            self.body[start] = label;
            let mut next = 0;
            while next < stack.len() {
                let k = stack[next] as usize;
                next += 1;
                walled |= near_wall(self.centre(k));
                for c in self.neighbours(k).into_iter().flatten().flatten() {
                    if self.kind[c] == FLUID && self.body[c] == NO_BODY {
                        self.body[c] = label;
                        stack.push(c as u32);
                    }
                }
            }
            if walled {
                // Marked so that it is not flooded again; unlabelled below.
                for &k in &stack {
                    self.body[k as usize] = WALLED;
                }
            } else {
                bodies += 1;
            }
        }
        self.stack = stack;
        for b in &mut self.body {
            if *b == WALLED {
                *b = NO_BODY;
            }
        }
        if bodies == 0 {
            return;
        }
        let mut sums = core::mem::take(&mut self.sums);
        sums.clear();
        sums.resize(bodies as usize, ([0.0f64; D], 0u64));
        self.shift.resize(bodies as usize, [0.0; D]);
        let n = positions[0].len();
        for i in 0..n {
            let p: [f32; D] = core::array::from_fn(|a| positions[a][i]);
            if let Some(body) = self.body_of(p) {
                let u = self.displacement(p);
                for a in 0..D {
                    sums[body].0[a] += f64::from(u[a]);
                }
                sums[body].1 += 1;
            }
        }
        for (shift, (sum, count)) in self.shift.iter_mut().zip(&sums) {
            if *count > 0 {
                *shift = core::array::from_fn(|a| (sum[a] / *count as f64) as f32);
            }
        }
        self.sums = sums;
    }
}
