//! The cells' free volumes: the weight a rest lattice puts on each cell from its
//! points inside the domain and outside the solids.

use super::{CoarseGrid, Scene};

/// The most rest-lattice points along one axis of a cell's support (`2 cell / s + 1`,
/// with `cell` below `4 h` on a periodic axis, `2 h` elsewhere, and `h <= 8 s`).
const MAX_POINTS: usize = 66;

impl<const D: usize> CoarseGrid<D> {
    /// The weight that the rest lattice's points outside the solids and inside the
    /// domain put on cell `k` (see `correct`, step 2), and the fraction of the points
    /// of a full cell that lie in the cell itself and inside the domain.
    pub(super) fn free_volume(&self, k: usize, scene: &Scene<'_, D>) -> (f64, f64) {
        let (lo, hi) = (scene.domain.lo(), scene.domain.hi());
        let s = scene.spacing;
        let mut points = [[(0.0f32, 0.0f32); MAX_POINTS]; D];
        let mut counts = [0usize; D];
        let mut rest = k;
        let mut centre = [0.0f32; D];
        for a in 0..D {
            let ka = rest % self.dims[a];
            rest /= self.dims[a];
            let cell = self.cell[a];
            centre[a] = self.origin[a] + (ka as f32 + 0.5) * cell;
            // On a periodic axis the lattice carries on past the faces, as the
            // particles' images do, and a point is taken at its place in the domain.
            let periodic = self.periodic.is_periodic(a);
            let mut first = ((centre[a] - cell - lo[a]) / s - 0.5).ceil();
            if !periodic {
                first = first.max(0.0);
            }
            let mut m = first as i64;
            loop {
                let x = lo[a] + (m as f32 + 0.5) * s;
                if (x > hi[a] && !periodic) || x >= centre[a] + cell || counts[a] == MAX_POINTS {
                    break;
                }
                let w = 1.0 - (x - centre[a]).abs() / cell;
                if w > 0.0 {
                    points[a][counts[a]] = (self.periodic.wrap(a, x).0, w);
                    counts[a] += 1;
                }
                m += 1;
            }
        }
        let widest = self.cell.iter().fold(0.0f32, |m, &c| m.max(c));
        let reach = widest * (D as f32).sqrt();
        // The points with a weight above 1/2 lie in the cell's own box.
        let full: f64 = self
            .cell
            .iter()
            .map(|&c| f64::from((c / s).round()))
            .product();
        let own: f64 = (0..D)
            .map(|a| points[a][..counts[a]].iter().filter(|p| p.1 > 0.5).count() as f64)
            .product();
        let colliders_near = scene.colliders.iter().any(|c| c.distance(centre) < reach);
        if !colliders_near {
            let mut product = 1.0f64;
            for a in 0..D {
                product *= points[a][..counts[a]]
                    .iter()
                    .map(|p| f64::from(p.1))
                    .sum::<f64>();
            }
            return (product, own / full);
        }
        let total: usize = counts.iter().product();
        let mut sum = 0.0f64;
        for index in 0..total {
            let mut rest = index;
            let mut w = 1.0f32;
            let p: [f32; D] = core::array::from_fn(|a| {
                let (x, wa) = points[a][rest % counts[a]];
                rest /= counts[a];
                w *= wa;
                x
            });
            if scene.colliders.iter().all(|c| c.distance(p) >= 0.0) {
                sum += f64::from(w);
            }
        }
        (sum, own / full)
    }
}
