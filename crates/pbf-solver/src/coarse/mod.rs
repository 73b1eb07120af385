//! The coarse density correction: a Poisson solve on a grid of cells `2 h` wide that
//! removes the long-wave part of the fluid's compression in one shot.
//!
//! Jacobi passes of the density constraint move information about one kernel radius
//! per pass, so a compression spread over a pool many kernel radii deep (the weight of
//! the fluid at a large time step) needs many passes. The correction treats it as the
//! grid problem it is at that scale:
//!
//! 1. Every particle spreads its volume `s^D` (spacing `s`) to the centres of the
//!    `2^D` nearest cells with linear weights. A cell's free volume is the integral
//!    of the same weight over the space outside the solids and inside the domain
//!    (sampled for cells near them), and its compression `C = max(V_particles /
//!    V_free - 1, 0)`: a volume ratio, linear in how much the fluid must expand
//!    (SPH densities are not: coincident particles count `W(0)` each, and a
//!    correction from them overshot and threw the fluid about in the first tries).
//!    A limit: the solve's faces are whole cells' faces, so in a cell that a wall
//!    cuts, the flux carries about `V_cell / V_free` times the volume the step
//!    brought (4/3 for a cell a quarter inside a floor), and the fluid there is
//!    lifted by that factor times the shift. At rest the over-lift helps the
//!    passes with the layer against the wall; at a landing that moves the fluid
//!    more than a cell can see, it throws the fluid back off the floor faster than
//!    it came, and the step gains energy.
//! 2. A cell is solid when less than 5% of it is free (of its free volume, or of
//!    its own box inside the domain: a cell beyond the domain's walls that the
//!    fluid's weights reach into is solid), fluid when its particles fill at least a
//!    tenth of its free volume, air otherwise.
//! 3. `lap phi = C` on the fluid cells, `phi = 0` in air (the free surface), no flux
//!    into solids, by conjugate gradients (Jacobi preconditioner, in `f64`).
//! 4. Each particle moves by `grad phi` interpolated from the cells with the same
//!    weights (next to a wall, the displacement of the fluid cell against it carried
//!    into the wall unchanged: the compression there sits at the wall), less the
//!    mean of that displacement over its body of fluid where no wall touches the
//!    body (so a free body keeps its centre of mass), then is kept out of the solids
//!    and inside the domain. To first order that displacement field `u` changes the
//!    volume by `div u = C`: it undoes the coarse compression, pushing the fluid away
//!    from the walls and up towards its free surface in one step, where Jacobi
//!    passes need a pass per kernel radius. A solid cell that touches fluid only
//!    across an edge or a vertex keeps a displacement of 0, so in the corners of the
//!    fluid the lift tapers over a cell.
//!
//! The Jacobi passes that follow correct what the coarse grid cannot see. The grid is
//! anchored at the domain's lower corner and sized in units of `h`, so a scaled scene
//! gets the scaled grid. The weights are spread from fixed particle ranges (set by the
//! particle count alone) into one copy of the grid each, summed in order; every other
//! loop is sequential or writes one particle or cell per index. So the result does not
//! depend on the thread count.

use crate::collide::{Collider, Domain};
use crate::parallel::{for_each_block, for_each_chunk};

mod bodies;
mod free_volume;
#[cfg(test)]
mod tests;

/// Cell width in kernel radii.
pub(crate) const CELL_IN_H: f32 = 2.0;
/// A cell with less than this fraction of a full cell's particle weight is not fluid.
const FLUID_FILL: f64 = 0.1;
/// Particles per range of the parallel weight spreading (step 1 of `correct`).
const SCATTER_CHUNK: usize = 8192;
/// At most this many ranges (and copies of the grid).
const MAX_SCATTER_CHUNKS: usize = 8;
/// Cells per parallel block when the free volumes are computed.
const FREE_BLOCK: usize = 64;
/// The most grid cells a particle (beyond [`MIN_CELL_BUDGET`]) before a step goes
/// without the correction: a fluid body has about one cell per `2^D (h/s)^D`
/// particles, so only a scene dominated by scattered spray comes near it.
const MAX_CELLS_PER_PARTICLE: usize = 8;
/// Cells any scene may use whatever its particle count.
const MIN_CELL_BUDGET: usize = 1 << 16;
/// Relative residual at which the conjugate gradients stop.
const TOLERANCE: f64 = 1e-4;

/// No free body: air, solid, or fluid that a wall touches.
const NO_BODY: u32 = u32::MAX;
/// A body being flooded that turned out to touch a wall.
const WALLED: u32 = u32::MAX - 1;

const AIR: u8 = 0;
const FLUID: u8 = 1;
const SOLID: u8 = 2;

/// What the cells' free volumes depend on: the grid's origin, dimensions and cell
/// widths, and the count of colliders.
type Layout<const D: usize> = ([f32; D], [usize; D], [f32; D], usize);

/// The grid and the solver's work arrays, kept between steps.
#[derive(Debug, Clone)]
pub(crate) struct CoarseGrid<const D: usize> {
    dims: [usize; D],
    /// The lower corner of cell 0.
    origin: [f32; D],
    /// The cells' width along each axis: `2 h`, or on a periodic axis the period
    /// divided into whole cells at least `2 h` wide.
    cell: [f32; D],
    /// The domain's periodic axes, around which the grid wraps.
    periodic: pbf_grid::Periodic,
    weight: Vec<f64>,
    /// One copy of `weight` per particle range while the weights are spread.
    partial: Vec<f64>,
    /// The fluid cells, in index order: the unknowns of the solve.
    fluid: Vec<u32>,
    compression: Vec<f64>,
    kind: Vec<u8>,
    phi: Vec<f64>,
    residual: Vec<f64>,
    direction: Vec<f64>,
    product: Vec<f64>,
    /// The Jacobi preconditioner, `1 / (A_kk + shift)` on fluid cells, 0 elsewhere.
    preconditioner: Vec<f64>,
    /// `A_kk + shift` on fluid cells: the faces that are not solid.
    diagonal: Vec<f64>,
    gradient: [Vec<f32>; D],
    /// Each cell's free body of fluid ([`NO_BODY`] where none), and each free body's
    /// mean displacement (see `free_bodies`).
    body: Vec<u32>,
    shift: Vec<[f32; D]>,
    /// The flood fill's work list, and the free bodies' displacement sums.
    stack: Vec<u32>,
    sums: Vec<([f64; D], u64)>,
    /// Every cell's free volume and the free fraction of its own box, and the layout
    /// (origin, dims, colliders) they are for.
    free: Vec<(f64, f64)>,
    free_for: Option<Layout<D>>,
    /// Conjugate-gradient iterations of the last solve.
    pub(crate) iterations: usize,
}

/// What the correction needs from the solver.
pub(crate) struct Scene<'a, const D: usize> {
    pub h: f32,
    pub spacing: f32,
    pub margin: f32,
    pub domain: &'a Domain<D>,
    pub colliders: &'a [Collider<D>],
}

impl<const D: usize> Default for CoarseGrid<D> {
    fn default() -> Self {
        Self {
            dims: [0; D],
            origin: [0.0; D],
            cell: [0.0; D],
            periodic: pbf_grid::Periodic::default(),
            weight: Vec::new(),
            partial: Vec::new(),
            fluid: Vec::new(),
            compression: Vec::new(),
            kind: Vec::new(),
            phi: Vec::new(),
            residual: Vec::new(),
            direction: Vec::new(),
            product: Vec::new(),
            preconditioner: Vec::new(),
            diagonal: Vec::new(),
            gradient: core::array::from_fn(|_| Vec::new()),
            body: Vec::new(),
            shift: Vec::new(),
            stack: Vec::new(),
            sums: Vec::new(),
            free: Vec::new(),
            free_for: None,
            iterations: 0,
        }
    }
}

impl<const D: usize> CoarseGrid<D> {
    fn index(&self, k: [usize; D]) -> usize {
        let mut i = 0;
        for a in (0..D).rev() {
            i = i * self.dims[a] + k[a];
        }
        i
    }

    fn stride(&self, a: usize) -> usize {
        self.dims[..a].iter().product()
    }

    /// The cell of the lower corner of `p`'s interpolation stencil and the weights'
    /// fractions: `p` sits at `base + t` in units of cells from the first cell centre.
    /// On a periodic axis `p` is first wrapped into the domain, and a stencil below
    /// the first cell centre has its lower corner in the last cell.
    fn stencil(&self, p: [f32; D]) -> ([usize; D], [f32; D]) {
        let mut base = [0; D];
        let mut t = [0.0; D];
        for a in 0..D {
            let n = self.dims[a];
            if self.periodic.is_periodic(a) {
                let x = (self.periodic.wrap(a, p[a]).0 - self.origin[a]) / self.cell[a] - 0.5;
                let f = x.floor().clamp(-1.0, (n - 1) as f32);
                base[a] = if f < 0.0 { n - 1 } else { f as usize };
                t[a] = (x - f).clamp(0.0, 1.0);
            } else {
                let x = (p[a] - self.origin[a]) / self.cell[a] - 0.5;
                let f = x.floor().clamp(0.0, (n - 2) as f32);
                base[a] = f as usize;
                t[a] = (x - f).clamp(0.0, 1.0);
            }
        }
        (base, t)
    }

    /// Corner `corner` (bit `a` = upper neighbour along axis `a`, the first cell past
    /// the last on a periodic axis) of the stencil.
    fn corner(&self, base: [usize; D], t: [f32; D], corner: usize) -> (usize, f32) {
        let mut k = base;
        let mut w = 1.0;
        for a in 0..D {
            if corner >> a & 1 == 1 {
                k[a] += 1;
                if k[a] == self.dims[a] {
                    k[a] = 0;
                }
                w *= t[a];
            } else {
                w *= 1.0 - t[a];
            }
        }
        (self.index(k), w)
    }

    /// Moves `positions` by the coarse correction of the compression their weights on
    /// the grid show. With `potential`, each particle's `phi` at its position before
    /// the move is written there ([`Self::potential_at`]; 0 where the step goes
    /// without the correction): the particle moves by `grad phi`, except within a cell
    /// of a wall, where the displacement is the open face's difference carried into
    /// the wall and `phi` is carried into it flat.
    pub(crate) fn correct(
        &mut self,
        scene: &Scene<'_, D>,
        positions: [&mut [f32]; D],
        potential: Option<&mut [f32]>,
    ) {
        let n = positions[0].len();
        if n == 0 {
            return;
        }
        let (lo, hi) = (scene.domain.lo(), scene.domain.hi());
        let periodic = scene.domain.periodicity();
        self.periodic = periodic;
        // A periodic axis holds a whole number of cells, so that the last wraps onto
        // the first: as many as fit at `2 h` or wider.
        self.cell = core::array::from_fn(|a| {
            let cell = CELL_IN_H * scene.h;
            if periodic.is_periodic(a) {
                let period = hi[a] - lo[a];
                period / (period / cell).floor().max(1.0)
            } else {
                cell
            }
        });
        // The grid, on the lattice of cells anchored at the domain's lower corner with
        // two cells of padding on each side of an axis with walls (the weights reach
        // one cell out, so the outer ring holds no particles) and none on a periodic
        // axis: the whole domain's where that is within the budget below, so the grid,
        // its arrays and the cells' free volumes stay the same from step to step; else
        // the particles' bounding box on the axes with walls.
        let budget = (MAX_CELLS_PER_PARTICLE * n + MIN_CELL_BUDGET) as f64;
        let span = |min: f32, max: f32, a: usize| {
            if periodic.is_periodic(a) {
                return (0.0, ((hi[a] - lo[a]) / self.cell[a]).round() - 1.0);
            }
            let first = ((min - lo[a]) / self.cell[a]).floor() - 2.0;
            let last = ((max - lo[a]) / self.cell[a]).floor() + 2.0;
            (first, last)
        };
        let count = |spans: &[(f32, f32); D]| -> f64 {
            spans
                .iter()
                .map(|(first, last)| f64::from(last - first) + 1.0)
                .product()
        };
        let mut spans: [(f32, f32); D] = core::array::from_fn(|a| span(lo[a], hi[a], a));
        if count(&spans) > budget {
            spans = core::array::from_fn(|a| {
                let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
                for &x in positions[a].iter() {
                    min = min.min(x);
                    max = max.max(x);
                }
                span(min, max, a)
            });
        }
        // Spray far from the fluid would stretch the grid over empty space: past
        // `MAX_CELLS_PER_PARTICLE` cells a particle the step goes without the correction
        // (the Jacobi passes still hold every particle), and says so
        // (`iterations` is 0).
        if count(&spans) > budget {
            self.iterations = 0;
            if let Some(potential) = potential {
                potential.fill(0.0);
            }
            return;
        }
        let mut dims = [0; D];
        for a in 0..D {
            let (first, last) = spans[a];
            self.origin[a] = lo[a] + first * self.cell[a];
            dims[a] = (last - first) as usize + 1;
        }
        self.dims = dims;
        let cells: usize = dims.iter().product();
        // Room for every cell in the lists that hold some of them, so that a step on an
        // unchanged grid allocates nothing.
        for list in [&mut self.fluid, &mut self.stack] {
            list.reserve(cells.saturating_sub(list.len()));
        }
        self.shift.reserve(cells.saturating_sub(self.shift.len()));
        self.sums.reserve(cells.saturating_sub(self.sums.len()));
        for v in [
            &mut self.weight,
            &mut self.compression,
            &mut self.phi,
            &mut self.residual,
            &mut self.direction,
            &mut self.product,
            &mut self.preconditioner,
            &mut self.diagonal,
        ] {
            v.clear();
            v.resize(cells, 0.0);
        }
        self.kind.clear();
        self.kind.resize(cells, AIR);

        // 1. Spread the particles' weights: a fixed number of particle ranges (set by
        // `n` alone) each into its own copy of the grid, in parallel, then the copies
        // summed in order, so the sums do not depend on the thread count.
        let chunks = (n / SCATTER_CHUNK).clamp(1, MAX_SCATTER_CHUNKS);
        let per_chunk = n.div_ceil(chunks);
        let mut partial = core::mem::take(&mut self.partial);
        partial.clear();
        partial.resize(chunks * cells, 0.0);
        {
            let xs: [&[f32]; D] = core::array::from_fn(|a| &*positions[a]);
            let grid = &*self;
            for_each_block(&mut partial, cells, &|c, weight| {
                for i in c * per_chunk..((c + 1) * per_chunk).min(n) {
                    let (base, t) = grid.stencil(core::array::from_fn(|a| xs[a][i]));
                    for corner in 0..1 << D {
                        let (k, w) = grid.corner(base, t, corner);
                        weight[k] += f64::from(w);
                    }
                }
            });
        }
        for (k, w) in self.weight.iter_mut().enumerate() {
            *w = (0..chunks).map(|c| partial[c * cells + k]).sum();
        }
        self.partial = partial;
        // 2. Classify. A cell's free volume is the weight that a rest lattice aligned
        // with the domain (points at `lo + (m + 1/2) s`, as `Solver::add_block` lays
        // them) puts on it from the points inside the domain and outside the solids:
        // so a block at rest reads no compression at the walls either. A cell whose own
        // box lies (nearly) all beyond the domain's walls is solid whatever weight
        // reaches it: as fluid, with the unit faces of the solve, it would move the
        // no-flux wall a cell out and read the weight the fluid pressed against the
        // wall puts on it as the compression of a whole cell. (Near a collider the
        // particles spread weight into cells mostly inside it; those stay fluid, and
        // carry that weight.) Colliders are static and only ever added, so the volumes
        // are kept while the layout stays.
        let cell_volume: f64 = self.cell.iter().map(|&c| f64::from(c)).product();
        let particle_volume = f64::from(scene.spacing).powi(D as i32);
        let layout = (self.origin, dims, self.cell, scene.colliders.len());
        if self.free_for != Some(layout) {
            let mut free = core::mem::take(&mut self.free);
            free.clear();
            free.resize(cells, (0.0, 0.0));
            let grid = &*self;
            for_each_block(&mut free, FREE_BLOCK, &|c, out| {
                for (j, f) in out.iter_mut().enumerate() {
                    let (volume, own) = grid.free_volume(c * FREE_BLOCK + j, scene);
                    *f = (volume * particle_volume, own);
                }
            });
            self.free = free;
            self.free_for = Some(layout);
        }
        self.fluid.clear();
        for k in 0..cells {
            let (free, own) = self.free[k];
            let filled = self.weight[k] * particle_volume;
            if free < 0.05 * cell_volume || own < 0.05 {
                self.kind[k] = SOLID;
                self.compression[k] = 0.0;
            } else if filled >= FLUID_FILL * free
                // The weights reach one cell out from the particles and the grid has two
                // cells of padding, so no weight lands on the grid's edge; the check
                // keeps the solve's neighbour indices in the grid even if rounding
                // put one there (that cell stays air).
                && self.neighbours(k).iter().flatten().all(Option::is_some)
            {
                self.kind[k] = FLUID;
                self.compression[k] = (filled / free - 1.0).max(0.0);
                debug_assert!(u32::try_from(k).is_ok());
                self.fluid.push(k as u32);
            } else {
                self.compression[k] = 0.0;
            }
        }
        // 3. Solve.
        self.solve(scene.h);
        // 4. The displacement at the cells' centres.
        self.gradients(cells);
        // 5. A body of fluid that no wall touches must keep its centre of mass: its
        // particles' mean displacement is taken out (see `free_bodies`).
        self.free_bodies(scene, &positions);
        if let Some(potential) = potential {
            let grid = &*self;
            let xs: [&[f32]; D] = core::array::from_fn(|a| &*positions[a]);
            for_each_chunk([potential], &|start, [out]| {
                for (k, phi) in out.iter_mut().enumerate() {
                    *phi = grid.potential_at(core::array::from_fn(|a| xs[a][start + k]));
                }
            });
        }
        // 6. Move the particles, kept out of the solids and inside the domain.
        let grid = &*self;
        let (colliders, domain, margin) = (scene.colliders, scene.domain, scene.margin);
        for_each_chunk(positions, &|_, x| {
            for k in 0..x[0].len() {
                let from: [f32; D] = core::array::from_fn(|a| x[a][k]);
                let mut u = grid.displacement(from);
                if let Some(body) = grid.body_of(from) {
                    for a in 0..D {
                        u[a] -= grid.shift[body][a];
                    }
                }
                let mut q: [f32; D] = core::array::from_fn(|a| from[a] + u[a]);
                for c in colliders {
                    c.project_from(&mut q, from, margin);
                }
                domain.clamp(&mut q, margin);
                for a in 0..D {
                    x[a][k] = q[a];
                }
            }
        });
    }

    /// The displacement `grad phi` at the centres of the cells that are not solid,
    /// from the differences across their faces between fluid and fluid or air (a
    /// face to a solid carries no flux and is left out): the mean of those a cell
    /// has along each axis. An air cell next to fluid gets the surface's value,
    /// carried half a cell out to the particles near it. A fluid cell against a
    /// wall gets the flux through its open face, all its compression pushed away
    /// from the wall, and the solid cells next to fluid get their fluid neighbours'
    /// mean ([`Self::extend_into_walls`]).
    fn gradients(&mut self, cells: usize) {
        for a in 0..D {
            let g = &mut self.gradient[a];
            g.clear();
            g.resize(cells, 0.0);
        }
        let inv: [f64; D] = core::array::from_fn(|a| 1.0 / f64::from(self.cell[a]));
        for k in 0..cells {
            if self.kind[k] == SOLID {
                continue;
            }
            for (a, [up, down]) in self.neighbours(k).into_iter().enumerate() {
                let (mut sum, mut faces) = (0.0, 0);
                for (lo, hi) in [(Some(k), up), (down, Some(k))] {
                    let (Some(lo), Some(hi)) = (lo, hi) else {
                        continue;
                    };
                    let (kl, kh) = (self.kind[lo], self.kind[hi]);
                    if kl == SOLID || kh == SOLID || (kl != FLUID && kh != FLUID) {
                        continue;
                    }
                    sum += self.phi[hi] - self.phi[lo];
                    faces += 1;
                }
                if faces > 0 {
                    self.gradient[a][k] = (sum / f64::from(faces) * inv[a]) as f32;
                }
            }
        }
        self.extend_into_walls(cells);
    }

    /// Gives each solid cell next to fluid the mean displacement of its fluid
    /// neighbours. The compression of a cell against a wall sits mostly at the wall:
    /// gravity, or a landing, carries the fluid into it, and the collisions stop the
    /// particles there. Interpolating towards zero inside the wall would leave the
    /// particles near it with a fraction of the displacement of those above them,
    /// and the compression between them for the Jacobi passes; carried into the wall
    /// unchanged, the displacement lifts the fluid near the wall as one.
    fn extend_into_walls(&mut self, cells: usize) {
        for k in 0..cells {
            if self.kind[k] != SOLID {
                continue;
            }
            let (mut sum, mut count) = ([0.0f32; D], 0u32);
            for j in self.neighbours(k).into_iter().flatten().flatten() {
                if self.kind[j] == FLUID {
                    for a in 0..D {
                        sum[a] += self.gradient[a][j];
                    }
                    count += 1;
                }
            }
            if count > 0 {
                for a in 0..D {
                    self.gradient[a][k] = sum[a] / count as f32;
                }
            }
        }
    }

    /// `A x` on the `fluid` cells for the negative Laplacian with `phi = 0` in air and no
    /// flux into solids, times the square of a `2 h` cell, plus the solve's small
    /// shift; `x` is zero outside the fluid cells and `out` is only written on them.
    /// With `diagonal[k]` the weights of the faces of `k` that are not solid (plus
    /// the shift), `(A x)_k = diagonal[k] x_k - sum of x over the six (four)
    /// neighbours, each times its face's weight`: air and solid neighbours hold zero.
    fn apply(&self, fluid: &[u32], faces: [f64; D], x: &[f64], out: &mut [f64]) {
        if self.periodic.any() {
            for &k in fluid {
                let k = k as usize;
                let mut sum = 0.0;
                for (a, pair) in self.neighbours(k).into_iter().enumerate() {
                    let [up, down] = pair.map(|j| j.map_or(0.0, |j| x[j]));
                    sum += faces[a] * (up + down);
                }
                out[k] = self.diagonal[k] * x[k] - sum;
            }
            return;
        }
        // Without a periodic axis every face weighs 1, and a fluid cell is never on
        // the grid's edge: its neighbours are at fixed strides.
        let strides: [usize; D] = core::array::from_fn(|a| self.stride(a));
        for &k in fluid {
            let k = k as usize;
            let mut sum = 0.0;
            for s in strides {
                sum += x[k + s] + x[k - s];
            }
            out[k] = self.diagonal[k] * x[k] - sum;
        }
    }

    /// The displacement `grad phi` interpolated at `p`.
    fn displacement(&self, p: [f32; D]) -> [f32; D] {
        let (base, t) = self.stencil(p);
        let mut u = [0.0f32; D];
        for corner in 0..1 << D {
            let (c, w) = self.corner(base, t, corner);
            for a in 0..D {
                u[a] += w * self.gradient[a][c];
            }
        }
        u
    }

    /// `phi` interpolated at `p` with the weights of [`Self::displacement`], over the
    /// cells that are not solid alone (renormalised): `phi` carries into a solid
    /// unchanged (no flux), where the solve holds 0. Air cells hold 0, the free
    /// surface's value.
    fn potential_at(&self, p: [f32; D]) -> f32 {
        let (base, t) = self.stencil(p);
        let (mut sum, mut weights) = (0.0f64, 0.0f64);
        for corner in 0..1 << D {
            let (c, w) = self.corner(base, t, corner);
            if self.kind[c] != SOLID {
                sum += f64::from(w) * self.phi[c];
                weights += f64::from(w);
            }
        }
        if weights > 0.0 {
            (sum / weights) as f32
        } else {
            0.0
        }
    }

    /// The centre of cell `k`.
    fn centre(&self, k: usize) -> [f32; D] {
        let mut rest = k;
        core::array::from_fn(|a| {
            let ka = rest % self.dims[a];
            rest /= self.dims[a];
            self.origin[a] + (ka as f32 + 0.5) * self.cell[a]
        })
    }

    /// The neighbours of cell `k` along each axis, upper then lower: `None` past the
    /// grid's edge on an axis with walls; on a periodic axis the last cell's upper
    /// neighbour is the first, and the first's lower is the last.
    fn neighbours(&self, k: usize) -> [[Option<usize>; 2]; D] {
        let mut rest = k;
        core::array::from_fn(|a| {
            let n = self.dims[a];
            let ka = rest % n;
            rest /= n;
            let s = self.stride(a);
            if self.periodic.is_periodic(a) {
                let up = if ka + 1 < n { k + s } else { k - (n - 1) * s };
                let down = if ka > 0 { k - s } else { k + (n - 1) * s };
                [Some(up), Some(down)]
            } else {
                [(ka + 1 < n).then_some(k + s), (ka > 0).then(|| k - s)]
            }
        })
    }

    /// The weight of a face across axis `a` in the solve's Laplacian, scaled by the
    /// square of a `2 h` cell: 1 on the axes with walls, less on a periodic axis whose
    /// cells are wider.
    fn face_weight(&self, a: usize, h: f32) -> f64 {
        let ratio = f64::from(CELL_IN_H * h) / f64::from(self.cell[a]);
        ratio * ratio
    }

    /// Conjugate gradients for `-lap phi = -C` (scaled by the square of a `2 h` cell), Jacobi
    /// preconditioned; a fluid region walled in on every side has no air to relieve
    /// its compression, and a small diagonal shift keeps its system regular.
    fn solve(&mut self, h: f32) {
        let cell = f64::from(CELL_IN_H * h);
        let h2 = cell * cell;
        let faces: [f64; D] = core::array::from_fn(|a| self.face_weight(a, h));
        const SHIFT: f64 = 1e-3;
        let mut rz = 0.0;
        let mut norm_b = 0.0;
        // Every work array is zero outside the fluid cells (`correct` clears them), and
        // the loops below only touch the fluid cells.
        for &k in &self.fluid {
            let k = k as usize;
            let mut diagonal = 0.0;
            for (a, pair) in self.neighbours(k).into_iter().enumerate() {
                for j in pair.into_iter().flatten() {
                    if self.kind[j] != SOLID {
                        diagonal += faces[a];
                    }
                }
            }
            self.diagonal[k] = diagonal + SHIFT;
            self.preconditioner[k] = 1.0 / self.diagonal[k];
            let b = -self.compression[k] * h2;
            self.residual[k] = b;
            norm_b += b * b;
            let z = b * self.preconditioner[k];
            self.direction[k] = z;
            rz += b * z;
        }
        self.iterations = 0;
        if norm_b == 0.0 {
            return;
        }
        let max_iterations = 4 * self.dims.iter().sum::<usize>() + 20;
        let stop = TOLERANCE * TOLERANCE * norm_b;
        let mut product = core::mem::take(&mut self.product);
        let fluid = core::mem::take(&mut self.fluid);
        while self.iterations < max_iterations {
            self.iterations += 1;
            self.apply(&fluid, faces, &self.direction, &mut product);
            let mut pap = 0.0;
            for &k in &fluid {
                let k = k as usize;
                pap += self.direction[k] * product[k];
            }
            if pap <= 0.0 {
                break;
            }
            let alpha = rz / pap;
            let (mut rr, mut rz_next) = (0.0, 0.0);
            for &k in &fluid {
                let k = k as usize;
                self.phi[k] += alpha * self.direction[k];
                let r = self.residual[k] - alpha * product[k];
                self.residual[k] = r;
                rr += r * r;
                rz_next += r * r * self.preconditioner[k];
            }
            if rr <= stop {
                break;
            }
            let beta = rz_next / rz;
            rz = rz_next;
            for &k in &fluid {
                let k = k as usize;
                self.direction[k] =
                    self.residual[k] * self.preconditioner[k] + beta * self.direction[k];
            }
        }
        self.fluid = fluid;
        self.product = product;
    }
}
