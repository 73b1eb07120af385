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
    /// on the lanes ([`Lane::faces`]), then the colliders lane by lane.
    #[inline(always)]
    pub(crate) fn lanes<L: Lane>(&self, p: [L; D]) -> (L, [L; D]) {
        let (lo, hi) = (self.domain.walls_lo(), self.domain.walls_hi());
        let (share, grad) = L::faces(self.tables, lo, hi, p);
        if self.colliders.is_empty() {
            return (share, grad);
        }
        let mut at = [[0.0f32; MAX_WIDTH]; D];
        let (mut phi, mut g) = ([0.0f32; MAX_WIDTH], [[0.0f32; MAX_WIDTH]; D]);
        share.store(&mut phi[..L::WIDTH]);
        for a in 0..D {
            p[a].store(&mut at[a][..L::WIDTH]);
            grad[a].store(&mut g[a][..L::WIDTH]);
        }
        for l in 0..L::WIDTH {
            let mut gl: [f32; D] = core::array::from_fn(|a| g[a][l]);
            self.add_colliders(core::array::from_fn(|a| at[a][l]), &mut phi[l], &mut gl);
            for a in 0..D {
                g[a][l] = gl[a];
            }
        }
        (L::from_slice(&phi), g.map(|c| L::from_slice(&c)))
    }
}
