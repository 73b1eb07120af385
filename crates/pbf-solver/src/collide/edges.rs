//! The inner edges of a container's cavity: where two of its faces meet at a right
//! angle (a box's floor and sides, a cylinder's floor and side wall), a particle
//! within `h` of both has fluid behind each face, and the quadrant behind both
//! counted once. One signed distance gives it the nearest face alone: the other
//! face's fluid is missed, and the gradient turns at once where the nearest face
//! changes.

use super::bounds::Free;
use super::collider::{Collider, ColliderKind};
use super::vector::norm;

/// At most this many faces of a cavity lie within `h` of a point: two per axis.
pub(crate) const MAX_FACES: usize = 6;

/// The faces of a cavity within `h` of a point: each one's distance and its unit
/// normal into the cavity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CavityFaces<const D: usize> {
    pub faces: [(f32, [f32; D]); MAX_FACES],
    pub len: usize,
}

impl<const D: usize> CavityFaces<D> {
    fn push(&mut self, d: f32, n: [f32; D]) {
        self.faces[self.len] = (d, n);
        self.len += 1;
    }

    /// The faces found.
    pub fn as_slice(&self) -> &[(f32, [f32; D])] {
        &self.faces[..self.len]
    }
}

impl<const D: usize> Collider<D> {
    /// Whether the collider is a container whose cavity has inner edges: a box or a
    /// cylinder (a sphere's or capsule's is smooth).
    pub(crate) fn has_inner_edges(&self) -> bool {
        matches!(self.bounds.free, Free::Box { .. } | Free::Column { .. })
            && matches!(self.kind, ColliderKind::Container { .. })
    }

    /// The faces of a box or cylinder container's cavity within `h` of `p`, when `p`
    /// is inside the cavity, at least `h` below an open container's rim, and within
    /// `h` of two faces that meet at a right angle; `None` otherwise (one face, a
    /// smooth cavity, a point outside it or near the rim: the nearest surface is the
    /// wall there). Along an axis on which the cavity is narrower than `2 h` both
    /// faces count once a perpendicular face is within `h`, and only the nearer of
    /// them before.
    pub(crate) fn cavity_faces(&self, p: [f32; D], h: f32) -> Option<CavityFaces<D>> {
        let ColliderKind::Container { open_top, .. } = self.kind else {
            return None;
        };
        if D < 2 || (open_top && !(p[1] <= self.shape.top() - h)) {
            return None;
        }
        let mut found = CavityFaces {
            faces: [(0.0, [0.0; D]); MAX_FACES],
            len: 0,
        };
        // Whether two of the faces found meet at a right angle.
        let edge = match self.bounds.free {
            Free::Box { lo, hi } => {
                let mut axes = 0;
                for k in 0..D {
                    let (below, above) = (p[k] - lo[k], hi[k] - p[k]);
                    // (False for NaN.)
                    if !(below >= 0.0 && above >= 0.0) {
                        return None;
                    }
                    let mut near = false;
                    for (d, sign) in [(below, 1.0), (above, -1.0)] {
                        if d < h {
                            let mut n = [0.0; D];
                            n[k] = sign;
                            found.push(d, n);
                            near = true;
                        }
                    }
                    axes += usize::from(near);
                }
                axes >= 2
            }
            Free::Column {
                axis,
                radius,
                lo,
                hi,
            } => {
                let mut radial = [0.0; D];
                for k in (0..D).filter(|&k| k != 1) {
                    radial[k] = p[k] - axis[k];
                }
                let rho = norm(radial);
                let (wall, below, above) = (radius - rho, p[1] - lo, hi - p[1]);
                if !(wall >= 0.0 && below >= 0.0 && above >= 0.0) {
                    return None;
                }
                let side = wall < h && rho > 0.0;
                if side {
                    found.push(wall, radial.map(|c| -c / rho));
                }
                let mut level = false;
                for (d, sign) in [(below, 1.0), (above, -1.0)] {
                    if d < h {
                        let mut n = [0.0; D];
                        n[1] = sign;
                        found.push(d, n);
                        level = true;
                    }
                }
                side && level
            }
            _ => return None,
        };
        edge.then_some(found)
    }
}
