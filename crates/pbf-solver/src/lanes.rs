//! The solver's side of the lanes of `pbf-kernels`: a group's lanes as an array, and
//! the walls (the domain's faces and the colliders) at a group's positions.

use crate::boundary::Boundary;
use crate::lists::GROUP;
use pbf_kernels::{Lane, MAX_WIDTH};

/// The first `width` lanes of `v` (the rest 0).
#[inline(always)]
pub(crate) fn lanes<L: Lane>(v: L, width: usize) -> [f32; GROUP] {
    let mut out = [0.0; GROUP];
    v.store(&mut out[..width]);
    out
}

impl<const D: usize> Boundary<'_, D> {
    /// The walls' density share and constraint gradient at the lanes' positions `p`:
    /// lane by lane the bits of [`Boundary::density_and_gradient`]. The domain's faces
    /// on the lanes ([`Lane::faces`]), then lane by lane the domain's edges and the
    /// colliders, when a lane is within h of an edge or there are colliders.
    #[inline(always)]
    pub(crate) fn lanes<L: Lane>(&self, p: [L; D]) -> (L, [L; D]) {
        let (lo, hi) = (self.domain.walls_lo(), self.domain.walls_hi());
        let (share, grad) = L::faces(self.tables, lo, hi, p);
        let edges = self.corners.is_some();
        if self.colliders.is_empty() && !edges {
            return (share, grad);
        }
        let mut at = [[0.0f32; MAX_WIDTH]; D];
        for a in 0..D {
            p[a].store(&mut at[a][..L::WIDTH]);
        }
        let h = self.tables.h();
        let near_edge = |l: usize| {
            (0..D)
                .filter(|&a| at[a][l] - lo[a] < h || hi[a] - at[a][l] < h)
                .count()
                >= 2
        };
        if self.colliders.is_empty() && !(edges && (0..L::WIDTH).any(near_edge)) {
            return (share, grad);
        }
        let (mut phi, mut g) = ([0.0f32; MAX_WIDTH], [[0.0f32; MAX_WIDTH]; D]);
        share.store(&mut phi[..L::WIDTH]);
        for a in 0..D {
            grad[a].store(&mut g[a][..L::WIDTH]);
        }
        for l in 0..L::WIDTH {
            let pl: [f32; D] = core::array::from_fn(|a| at[a][l]);
            let mut gl: [f32; D] = core::array::from_fn(|a| g[a][l]);
            self.add_domain_edges(pl, &mut phi[l], &mut gl);
            self.add_colliders(pl, &mut phi[l], &mut gl);
            for a in 0..D {
                g[a][l] = gl[a];
            }
        }
        (L::from_slice(&phi), g.map(|c| L::from_slice(&c)))
    }
}
