//! The colliders in a picture: their cross-section through the middle of the domain,
//! filled, and its outline, traced by marching squares on the pixel corners.

use tiny_skia::{PathBuilder, Pixmap};

use super::{Renderer, SOLID};

impl Renderer {
    /// Fills the colliders' cross-section and returns its outline: the zero contour
    /// of the distance, traced by marching squares on the pixel corners.
    pub(super) fn draw_colliders(&self, pix: &mut Pixmap) -> Option<tiny_skia::Path> {
        if self.colliders.is_empty() {
            return None;
        }
        let [l, t, r, b] = self.frame_box.map(|v| v.round() as i64);
        let (nx, ny) = ((r - l).max(1) as usize, (b - t).max(1) as usize);
        let corner = |i: usize, j: usize| -> f32 {
            let p = self.unproject((l + i as i64) as f32, (t + j as i64) as f32);
            self.colliders
                .iter()
                .map(|d| d(p))
                .fold(f32::INFINITY, f32::min)
        };
        let mut grid = vec![0.0f32; (nx + 1) * (ny + 1)];
        for j in 0..=ny {
            for i in 0..=nx {
                grid[j * (nx + 1) + i] = corner(i, j);
            }
        }
        let at = |i: usize, j: usize| grid[j * (nx + 1) + i];
        let (w, h) = (self.width as i64, self.height as i64);
        let data = pix.data_mut();
        let mut path = PathBuilder::new();
        for j in 0..ny {
            for i in 0..nx {
                let c = [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)];
                let (px, py) = (l + i as i64, t + j as i64);
                if c.iter().sum::<f32>() < 0.0 && (0..w).contains(&px) && (0..h).contains(&py) {
                    let k = 4 * (py * w + px) as usize;
                    data[k..k + 3].copy_from_slice(&SOLID);
                }
                // The corners in order around the cell, and where the contour crosses
                // each edge whose ends differ in sign.
                let pos = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
                let mut crossings = [(0.0f32, 0.0f32); 4];
                let mut n = 0;
                for e in 0..4 {
                    let (a, bb) = (c[e], c[(e + 1) % 4]);
                    if (a < 0.0) != (bb < 0.0) {
                        let f = a / (a - bb);
                        let (p0, p1) = (pos[e], pos[(e + 1) % 4]);
                        crossings[n] = (
                            px as f32 + p0.0 + f * (p1.0 - p0.0),
                            py as f32 + p0.1 + f * (p1.1 - p0.1),
                        );
                        n += 1;
                    }
                }
                for pair in crossings[..n].chunks_exact(2) {
                    path.move_to(pair[0].0, pair[0].1);
                    path.line_to(pair[1].0, pair[1].1);
                }
            }
        }
        path.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::frame::Frame;

    #[test]
    fn colliders_show_in_cross_section_with_an_outline() {
        let s = pbf_solver::scenes::build("glass-2d", 500).expect("scene");
        let r = Renderer::new(&s, Axis::Z, 300);
        let solid = r
            .background
            .pixels()
            .iter()
            .filter(|p| [p.red(), p.green(), p.blue()] == SOLID)
            .count();
        assert!(solid > 100, "{solid}");
        let outline = r.outlines.as_ref().expect("an outline");
        let bounds = outline.bounds();
        let [l, t, rt, b] = r.domain_box();
        assert!(bounds.left() >= l - 1.0 && bounds.right() <= rt + 1.0);
        assert!(bounds.top() >= t - 1.0 && bounds.bottom() <= b + 1.0);
        let img = r.render(&Frame::default(), 0.0);
        let edge = img
            .pixels()
            .filter(|p| p.0[0] > 200 && p.0[2] > 200)
            .count();
        assert!(edge > 50, "{edge}");
    }
}
