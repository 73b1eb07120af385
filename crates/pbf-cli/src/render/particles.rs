//! Particles in a picture: shaded spheres drawn far to near in 3D views, flat discs with
//! a darker rim in 2D, coloured by the picture's quantity.

use tiny_skia::{
    FillRule, GradientStop, Paint, PathBuilder, Pixmap, Point, RadialGradient, Shader, SpreadMode,
    Transform,
};

use super::colour::{ColourRange, speed_colour};
use super::{Renderer, project, rgb_f};
use crate::frame::Frame;

impl Renderer {
    pub(super) fn draw_particles(&self, pix: &mut Pixmap, frame: &Frame, range: ColourRange) {
        let n = frame.len();
        let projected: Vec<(f32, f32, f32)> = frame
            .positions
            .iter()
            .map(|p| project(self.axis, *p))
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        if self.dimension == 3 {
            // Painter's order: far (small depth) first.
            order.sort_by(|a, b| {
                projected[*a as usize]
                    .2
                    .total_cmp(&projected[*b as usize].2)
            });
        }
        let (depth_lo, depth_hi) = projected
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.2), hi.max(p.2))
            });
        let depth_range = (depth_hi - depth_lo).max(1e-12);
        let r = self.radius;
        for i in order {
            let i = i as usize;
            let (right, up, depth) = projected[i];
            let (cx, cy) = self.to_pixel(right, up);
            if !(cx.is_finite() && cy.is_finite()) {
                continue;
            }
            let colour = speed_colour(range.position(self.quantity.value(frame, i)));
            let Some(path) = PathBuilder::from_circle(cx, cy, r) else {
                continue;
            };
            let mut paint = Paint {
                anti_alias: true,
                ..Paint::default()
            };
            paint.shader = if self.dimension == 3 {
                // A sphere lit from the upper left: a highlight off the centre, the
                // colour itself, a dark limb; nearer particles are brighter, for a
                // sense of depth.
                let shade = 0.62 + 0.38 * (depth - depth_lo) / depth_range;
                let tone = |k: f32, white: f32| {
                    rgb_f(colour.map(|c| (c * k + white * (1.0 - c * k)) * shade))
                };
                RadialGradient::new(
                    Point::from_xy(cx - 0.38 * r, cy - 0.38 * r),
                    0.0,
                    Point::from_xy(cx, cy),
                    r,
                    vec![
                        GradientStop::new(0.0, tone(1.0, 0.55)),
                        GradientStop::new(0.45, tone(1.0, 0.0)),
                        GradientStop::new(1.0, tone(0.45, 0.0)),
                    ],
                    SpreadMode::Pad,
                    Transform::identity(),
                )
                .unwrap_or(Shader::SolidColor(rgb_f(colour)))
            } else {
                // Flat discs with a darker rim that separates neighbours.
                RadialGradient::new(
                    Point::from_xy(cx, cy),
                    0.0,
                    Point::from_xy(cx, cy),
                    r,
                    vec![
                        GradientStop::new(0.0, rgb_f(colour)),
                        GradientStop::new(0.7, rgb_f(colour)),
                        GradientStop::new(1.0, rgb_f(colour.map(|c| c * 0.72))),
                    ],
                    SpreadMode::Pad,
                    Transform::identity(),
                )
                .unwrap_or(Shader::SolidColor(rgb_f(colour)))
            };
            pix.fill_path(
                &path,
                &paint,
                FillRule::Winding,
                Transform::identity(),
                self.clip.as_ref(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::colour::speed_colour;
    use super::super::*;

    #[test]
    fn particles_are_drawn_where_they_are() {
        let solver = pbf_solver::scenes::build("block-at-rest-2d", 100).expect("scene");
        let r = Renderer::new(&solver, Axis::Z, 400);
        let frame = Frame {
            positions: vec![[0.25, 0.25, 0.0]],
            velocities: vec![[0.0; 3]],
            densities: vec![1000.0],
            ids: vec![0],
        };
        let img = r.render(&frame, 0.0);
        let (x, y) = r.to_pixel(0.25, 0.25);
        let p = img.get_pixel(x as u32, y as u32).0;
        let slow = speed_colour(0.0).map(|c| (c * 255.0).round() as u8);
        for c in 0..3 {
            assert!(p[c].abs_diff(slow[c]) <= 2, "{p:?} {slow:?}");
        }
        // Inside the domain, away from the particle: the domain's colour.
        let (x, y) = r.to_pixel(0.4, 0.8);
        assert_eq!(img.get_pixel(x as u32, y as u32).0, DOMAIN);
    }
}
