//! The fluid's reconstructed surface in a picture: its triangles projected along the
//! view axis like the particles, the faces turned away from the eye left out, the rest
//! drawn far to near (painter's order by the depth of their centres), each shaded flat
//! by the Lambert cosine between its normal and a light from the upper left front, and
//! coloured by the quantity interpolated to its vertices (one fluid colour when the mesh
//! carries none).

use tiny_skia::{FillRule, PathBuilder, Pixmap, Stroke, Transform};

use super::colour::{ColourRange, speed_colour};
use super::{Renderer, paint_of, project, rgb_f};
use crate::surface::SurfaceMesh;

/// The colour of a surface whose vertices carry no quantity: a water blue.
pub(super) const FLUID: [f32; 3] = [0.30, 0.58, 0.86];

/// The share of a face's colour that reaches the eye without light: faces edge-on to
/// the light stay readable.
const AMBIENT: f32 = 0.35;

/// The direction towards the light in view coordinates (right, up, towards the eye),
/// of unit length: from the upper left and in front, as the particles' highlights.
const LIGHT: [f32; 3] = [-0.371_390_7, 0.557_086, 0.742_781_4];

/// The width in pixels of the anti-aliased stroke around each face. Faces are filled
/// without anti-aliasing, so that neighbours that share an edge leave no seam of the
/// background between them (anti-aliased fills of two triangles that each cover half a
/// pixel let the background through); the stroke then smooths the silhouette.
const EDGE: f32 = 1.0;

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The brightness of a face of unit normal `n` (view coordinates), from [`AMBIENT`] to 1.
fn lambert(n: [f32; 3]) -> f32 {
    let cosine = n[0] * LIGHT[0] + n[1] * LIGHT[1] + n[2] * LIGHT[2];
    AMBIENT + (1.0 - AMBIENT) * cosine.max(0.0)
}

impl Renderer {
    /// Draws the faces of `mesh` that face the eye, far to near, clipped to the domain's
    /// box.
    pub(super) fn draw_mesh(&self, pix: &mut Pixmap, mesh: &SurfaceMesh, range: ColourRange) {
        // Projection along an axis is a rotation, so the cross product of projected
        // edges is the projected normal, with the outward orientation of the triangles.
        let projected: Vec<[f32; 3]> = mesh
            .vertices
            .iter()
            .map(|p| {
                let (right, up, depth) = project(self.axis, *p);
                [right, up, depth]
            })
            .collect();
        let values: Option<Vec<f32>> = mesh.has_data().then(|| {
            mesh.velocities
                .iter()
                .zip(&mesh.densities)
                .map(|(v, d)| self.quantity.of(*v, *d))
                .collect()
        });
        // (depth of the centre, triangle, brightness) of each face towards the eye.
        let mut faces: Vec<(f32, usize, f32)> = Vec::with_capacity(mesh.triangles.len() / 2);
        for (k, t) in mesh.triangles.iter().enumerate() {
            let Some([a, b, c]) = vertices_of(&projected, *t) else {
                continue;
            };
            let n = cross(sub(b, a), sub(c, a));
            let length = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            if !(length > 0.0 && length.is_finite()) || n[2] <= 0.0 {
                continue;
            }
            let unit = n.map(|x| x / length);
            faces.push((a[2] + b[2] + c[2], k, lambert(unit)));
        }
        faces.sort_by(|x, y| x.0.total_cmp(&y.0));
        let stroke = Stroke {
            width: EDGE,
            ..Stroke::default()
        };
        for (_, k, brightness) in faces {
            let t = mesh.triangles[k];
            let base = match &values {
                Some(v) => {
                    let mean = (v[t[0]] + v[t[1]] + v[t[2]]) / 3.0;
                    speed_colour(range.position(mean))
                }
                None => FLUID,
            };
            let mut path = PathBuilder::new();
            for (i, &vertex) in t.iter().enumerate() {
                let [right, up, _] = projected[vertex];
                let (x, y) = self.to_pixel(right, up);
                if i == 0 {
                    path.move_to(x, y);
                } else {
                    path.line_to(x, y);
                }
            }
            path.close();
            let Some(path) = path.finish() else {
                continue;
            };
            let mut paint = paint_of(rgb_f(base.map(|c| c * brightness)));
            paint.anti_alias = false;
            pix.fill_path(
                &path,
                &paint,
                FillRule::Winding,
                Transform::identity(),
                self.clip.as_ref(),
            );
            paint.anti_alias = true;
            pix.stroke_path(
                &path,
                &paint,
                &stroke,
                Transform::identity(),
                self.clip.as_ref(),
            );
        }
    }
}

/// The projected corners of triangle `t`, or `None` when an index is out of range or a
/// corner is not finite.
fn vertices_of(projected: &[[f32; 3]], t: [usize; 3]) -> Option<[[f32; 3]; 3]> {
    let corner = |i: usize| {
        projected
            .get(i)
            .copied()
            .filter(|p| p.iter().all(|x| x.is_finite()))
    };
    Some([corner(t[0])?, corner(t[1])?, corner(t[2])?])
}

#[cfg(test)]
mod tests {
    use super::super::{Axis, DOMAIN};
    use super::*;
    use pbf_solver::scenes::AnySolver;

    #[test]
    fn a_box_covers_its_projection_in_its_front_face_colour() {
        let solver = pbf_solver::scenes::build("dam-break", 1000).expect("scene");
        let AnySolver::Three(s) = &solver else {
            panic!("a 3D scene");
        };
        let (lo, hi) = (s.domain().lo(), s.domain().hi());
        let at = |f: f32, a: usize| lo[a] + f * (hi[a] - lo[a]);
        let (blo, bhi) = (
            [at(0.3, 0), at(0.2, 1), at(0.3, 2)],
            [at(0.6, 0), at(0.7, 1), at(0.8, 2)],
        );
        let mut mesh = SurfaceMesh::cuboid(blo, bhi);
        let range = ColourRange {
            lo: 0.0,
            hi: 1.0,
            basis: super::super::RangeBasis::Frame,
        };
        let r = Renderer::new(&solver, Axis::Z, 400);
        // The front face (normal +z, towards the eye) in the fluid colour, every pixel
        // of it: the two triangles leave no seam between them.
        let plain = r.render_surface(&mesh, 0.0, range);
        let (x0, y0) = r.to_pixel(blo[0], bhi[1]);
        let (x1, y1) = r.to_pixel(bhi[0], blo[1]);
        let expected =
            |base: [f32; 3]| base.map(|c| (c * lambert([0.0, 0.0, 1.0]) * 255.0).round() as u8);
        let front = expected(FLUID);
        // Where anti-aliased edges of one colour overlap, 8-bit blending rounds by a unit
        // or two; a seam would let the domain's far darker colour through.
        let close = |p: [u8; 3], q: [u8; 3]| (0..3).all(|c| p[c].abs_diff(q[c]) <= 2);
        for y in (y0.ceil() as u32 + 1)..(y1.floor() as u32 - 1) {
            for x in (x0.ceil() as u32 + 1)..(x1.floor() as u32 - 1) {
                let p = plain.get_pixel(x, y).0;
                assert!(close(p, front), "({x}, {y}): {p:?}, not {front:?}");
            }
        }
        // Outside the box's projection, the domain is bare.
        for (x, y) in [
            (x0 - 3.0, 0.5 * (y0 + y1)),
            (x1 + 3.0, y0 + 2.0),
            (x0 + 2.0, y1 + 3.0),
        ] {
            assert_eq!(plain.get_pixel(x as u32, y as u32).0, DOMAIN, "({x}, {y})");
        }
        // With data, the faces take the colour map's colour of the quantity.
        mesh.velocities = vec![[0.0, 1.0, 0.0]; 8];
        mesh.densities = vec![1000.0; 8];
        let coloured = r.render_surface(&mesh, 0.0, range);
        let centre = coloured.get_pixel((0.5 * (x0 + x1)) as u32, (0.5 * (y0 + y1)) as u32);
        assert!(close(centre.0, expected(speed_colour(1.0))), "{centre:?}");
        assert_ne!(plain, coloured);
    }

    #[test]
    fn faces_towards_the_light_are_brightest() {
        let towards = lambert(LIGHT);
        let edge_on = lambert([1.0, 0.0, 0.0]);
        let away = lambert(LIGHT.map(|x| -x));
        assert!((towards - 1.0).abs() < 1e-5, "{towards}");
        assert!((away - AMBIENT).abs() < 1e-6, "{away}");
        assert!(away <= edge_on && edge_on < towards);
        let length = LIGHT.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((length - 1.0).abs() < 1e-5, "{length}");
    }

    #[test]
    fn bad_indices_and_non_finite_corners_are_skipped() {
        let p = [[0.0; 3], [1.0, 0.0, 0.0], [f32::NAN, 0.0, 0.0]];
        assert!(vertices_of(&p, [0, 1, 0]).is_some());
        assert!(vertices_of(&p, [0, 1, 2]).is_none());
        assert!(vertices_of(&p, [0, 1, 3]).is_none());
    }
}
