//! Pictures of a frame: particles as shaded discs coloured by a quantity (speed by
//! default), or the fluid's reconstructed surface as shaded triangles, in an
//! orthographic view along a chosen axis (2D scenes as they are), drawn far to near,
//! with the colliders' outlines through the middle of the domain, axes with ticks in
//! metres, the simulated time and a colour bar whose scale comes from the frame's data.
//! Animated GIFs of a run.
//!
//! Shapes are drawn with `tiny-skia` (anti-aliased paths and gradients) and text with
//! `ab_glyph` from the DejaVu Sans font embedded in the binary: no system font or
//! graphics library is needed.
//!
//! One concept per file: the view and the picture as a whole here, the colour quantity
//! and range in `colour`, the legend in `legend`, axes and ticks in `axes`, colliders in
//! `colliders`, text in `text`, particles in `particles`, surface meshes in `mesh`, and
//! PNG and GIF files in `files`.

mod axes;
mod colliders;
mod colour;
mod files;
mod legend;
mod mesh;
mod particles;
mod text;

use ab_glyph::FontRef;
use image::RgbImage;
use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;
use tiny_skia::{Color, FillRule, Mask, Paint, PathBuilder, Pixmap, Rect, Stroke, Transform};

use crate::frame::Frame;
use crate::surface::SurfaceMesh;

pub use colour::{ColourRange, Quantity, RangeBasis, speed_colour};
pub use files::{GifWriter, save_png};

use legend::Subject;
use text::font;

/// The axis a 3D scene is viewed along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Axis {
    /// From the +x side: z to the right, y up.
    X,
    /// From above: x to the right, -z up.
    Y,
    /// From the +z side: x to the right, y up (the default).
    #[default]
    Z,
}

/// A collider's signed distance at a 3D point (2D colliders ignore z).
type Distance = Box<dyn Fn([f32; 3]) -> f32 + Send + Sync>;

/// The smallest picture width: below it the axes, labels and colour bar do not fit.
pub const MIN_WIDTH: u32 = 200;

/// A screen axis of the view: the world coordinate it shows and its direction.
#[derive(Debug, Clone, Copy)]
struct ScreenAxis {
    /// `x`, `y` or `z`.
    name: char,
    /// +1 when the screen coordinate is the world coordinate, -1 when it is its
    /// negative (the up axis of the view from above is -z).
    sign: f32,
}

/// Draws frames of one scene at a fixed size and scale.
///
/// ```
/// let solver = pbf_solver::scenes::build("dam-break-2d", 200)?;
/// let renderer = pbf_cli::Renderer::new(&solver, pbf_cli::Axis::Z, 320);
/// let image = renderer.render(&pbf_cli::Frame::from_solver(&solver), solver.time());
/// assert_eq!(image.width(), 320);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
pub struct Renderer {
    dimension: usize,
    axis: Axis,
    quantity: Quantity,
    width: u32,
    height: u32,
    /// Lower corner of the view in (right, up) coordinates.
    view_lo: [f32; 2],
    /// Upper corner of the view in (right, up) coordinates.
    view_hi: [f32; 2],
    /// Pixels per metre.
    scale: f32,
    /// The domain's box in pixels: left, top, right, bottom.
    frame_box: [f32; 4],
    radius: f32,
    /// Depth of the collider cross-section (the middle of the domain).
    mid_depth: f32,
    colliders: Vec<Distance>,
    /// The screen axes, right and up.
    screen: [ScreenAxis; 2],
    font: FontRef<'static>,
    /// Text height in pixels.
    text: f32,
    /// The background: domain, collider cross-sections, axes and their labels.
    background: Pixmap,
    /// The colliders' outlines, stroked over the particles.
    outlines: Option<tiny_skia::Path>,
    /// Keeps the particles inside the domain's box.
    clip: Option<Mask>,
}

const BACKGROUND: [u8; 3] = [24, 26, 32];
const DOMAIN: [u8; 3] = [32, 35, 43];
const OUTLINE: [u8; 3] = [120, 124, 136];
const SOLID: [u8; 3] = [70, 74, 86];
const INK: [u8; 3] = [214, 218, 226];
const FAINT_INK: [u8; 3] = [150, 156, 170];
const COLLIDER_EDGE: [u8; 3] = [236, 238, 244];

fn rgb(c: [u8; 3]) -> Color {
    Color::from_rgba8(c[0], c[1], c[2], 255)
}

fn rgb_f(c: [f32; 3]) -> Color {
    Color::from_rgba8(
        (c[0] * 255.0).round().clamp(0.0, 255.0) as u8,
        (c[1] * 255.0).round().clamp(0.0, 255.0) as u8,
        (c[2] * 255.0).round().clamp(0.0, 255.0) as u8,
        255,
    )
}

fn paint_of(colour: Color) -> Paint<'static> {
    let mut paint = Paint::default();
    paint.set_color(colour);
    paint.anti_alias = true;
    paint
}

impl Renderer {
    /// A renderer for `solver`'s scene, `width` pixels wide (at least [`MIN_WIDTH`]);
    /// the height follows the domain's aspect ratio, plus room for the axes, the time
    /// and the colour bar. Particles are coloured by speed ([`Renderer::with_quantity`]
    /// picks another quantity).
    ///
    /// ```
    /// let s = pbf_solver::scenes::build("dam-break", 1000)?;
    /// let r = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Y, 300);
    /// assert_eq!(r.size().0, 300);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn new(solver: &AnySolver, axis: Axis, width: u32) -> Self {
        match solver {
            AnySolver::Two(s) => Self::for_solver(s, axis, width),
            AnySolver::Three(s) => Self::for_solver(s, axis, width),
        }
    }

    /// The same renderer colouring the particles by `quantity`.
    ///
    /// ```
    /// use pbf_cli::{Axis, Frame, Quantity, Renderer};
    /// let s = pbf_solver::scenes::build("dam-break-2d", 200)?;
    /// let r = Renderer::new(&s, Axis::Z, 300).with_quantity(Quantity::Density);
    /// let range = r.colour_range(&Frame::from_solver(&s));
    /// assert!(range.lo < range.hi && range.lo > 0.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn with_quantity(mut self, quantity: Quantity) -> Self {
        self.quantity = quantity;
        self
    }

    fn for_solver<const D: usize>(s: &Solver<D>, axis: Axis, width: u32) -> Self {
        let pad =
            |v: [f32; D]| -> [f32; 3] { core::array::from_fn(|a| if a < D { v[a] } else { 0.0 }) };
        let (lo, hi) = (pad(s.domain().lo()), pad(s.domain().hi()));
        let axis = if D == 2 { Axis::Z } else { axis };
        let corners = [project(axis, lo), project(axis, hi)];
        let view_lo = [
            corners[0].0.min(corners[1].0),
            corners[0].1.min(corners[1].1),
        ];
        let view_hi = [
            corners[0].0.max(corners[1].0),
            corners[0].1.max(corners[1].1),
        ];
        let extent = [
            (view_hi[0] - view_lo[0]).max(1e-12),
            (view_hi[1] - view_lo[1]).max(1e-12),
        ];
        let width = width.max(MIN_WIDTH);
        let w = width as f32;
        // Text grows with the picture: 13 px at the default 640 px.
        let text = (w * 0.021).clamp(9.0, 28.0).round();
        // Bands around the domain's box: the time and the axis titles above, the y
        // tick labels left, the x tick labels and title below, the colour bar right.
        let (top, left, bottom, right) = (3.2 * text, 4.2 * text, 3.4 * text, 6.6 * text);
        let plot_w = w - left - right;
        // Fit the width, unless that makes the picture taller than 4 widths (or 8192
        // pixels): then fit the height and centre the view.
        let max_height = (4 * width).min(8192) as f32;
        let scale = (plot_w / extent[0]).min((max_height - top - bottom) / extent[1]);
        // The colour bar needs some height even beside a flat domain.
        let band = (extent[1] * scale).max(8.0 * text);
        let height = ((band + top + bottom).round() as u32).clamp(16, max_height as u32);
        let box_left = left + 0.5 * (plot_w - extent[0] * scale);
        let box_top = top + 0.5 * (band - extent[1] * scale);
        let frame_box = [
            box_left,
            box_top,
            box_left + extent[0] * scale,
            box_top + extent[1] * scale,
        ];
        let colliders: Vec<Distance> = s
            .colliders()
            .iter()
            .map(|c| {
                let c = *c;
                Box::new(move |p: [f32; 3]| c.distance(core::array::from_fn(|a| p[a]))) as Distance
            })
            .collect();
        let mid = [
            0.5 * (lo[0] + hi[0]),
            0.5 * (lo[1] + hi[1]),
            0.5 * (lo[2] + hi[2]),
        ];
        let screen = match axis {
            Axis::Z => [('x', 1.0), ('y', 1.0)],
            Axis::X => [('z', 1.0), ('y', 1.0)],
            Axis::Y => [('x', 1.0), ('z', -1.0)],
        }
        .map(|(name, sign)| ScreenAxis { name, sign });
        let mut r = Self {
            dimension: D,
            axis,
            quantity: Quantity::Speed,
            width,
            height,
            view_lo,
            view_hi,
            scale,
            frame_box,
            radius: (0.5 * s.params().spacing() * scale).max(0.8),
            mid_depth: project(axis, mid).2,
            colliders,
            screen,
            font: font(),
            text,
            background: Pixmap::new(1, 1).expect("a 1x1 pixmap"),
            outlines: None,
            clip: None,
        };
        r.clip = r.box_mask();
        r.background = r.draw_background();
        r
    }

    /// `(width, height)` in pixels.
    ///
    /// ```
    /// let s = pbf_solver::scenes::build("block-at-rest-2d", 100)?;
    /// let (w, h) = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Z, 300).size();
    /// assert!(w == 300 && h > 300); // the box is twice as high as wide
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The domain's box in pixels: `[left, top, right, bottom]`.
    ///
    /// ```
    /// let s = pbf_solver::scenes::build("dam-break-2d", 200)?;
    /// let r = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Z, 640);
    /// let [l, t, rt, b] = r.domain_box();
    /// assert!(0.0 < l && l < rt && rt < 640.0 && 0.0 < t && t < b);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn domain_box(&self) -> [f32; 4] {
        self.frame_box
    }

    /// Pixel coordinates of view coordinates.
    fn to_pixel(&self, right: f32, up: f32) -> (f32, f32) {
        let x = self.frame_box[0] + (right - self.view_lo[0]) * self.scale;
        let y = self.frame_box[3] - (up - self.view_lo[1]) * self.scale;
        (x, y)
    }

    /// The 3D point at pixel coordinates on the cross-section plane.
    fn unproject(&self, x: f32, y: f32) -> [f32; 3] {
        let right = (x - self.frame_box[0]) / self.scale + self.view_lo[0];
        let up = (self.frame_box[3] - y) / self.scale + self.view_lo[1];
        let depth = self.mid_depth;
        match self.axis {
            Axis::Z => [right, up, depth],
            Axis::X => [-depth, up, right],
            Axis::Y => [right, depth, -up],
        }
    }

    fn box_rect(&self) -> Option<Rect> {
        let [l, t, r, b] = self.frame_box;
        Rect::from_ltrb(l, t, r, b)
    }

    fn box_mask(&self) -> Option<Mask> {
        let mut mask = Mask::new(self.width, self.height)?;
        let path = PathBuilder::from_rect(self.box_rect()?);
        mask.fill_path(&path, FillRule::Winding, false, Transform::identity());
        Some(mask)
    }

    fn draw_background(&mut self) -> Pixmap {
        let mut pix = Pixmap::new(self.width, self.height).expect("a picture of at least 16x16");
        pix.fill(rgb(BACKGROUND));
        if let Some(rect) = self.box_rect() {
            pix.fill_rect(rect, &paint_of(rgb(DOMAIN)), Transform::identity(), None);
        }
        self.outlines = self.draw_colliders(&mut pix);
        self.draw_axes(&mut pix);
        pix
    }

    /// Draws a frame at simulated time `time` (seconds), with the colour scale of
    /// [`Renderer::colour_range`].
    ///
    /// ```
    /// let s = pbf_solver::scenes::build("dam-break", 1000)?;
    /// let r = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Z, 320);
    /// let img = r.render(&pbf_cli::Frame::from_solver(&s), 0.0);
    /// assert_eq!((img.width(), img.height()), r.size());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn render(&self, frame: &Frame, time: f64) -> RgbImage {
        self.render_with(frame, time, self.colour_range(frame))
    }

    /// Draws a frame with a given colour range (a run's pictures share one, see
    /// [`ColourRange::widened`]).
    ///
    /// ```
    /// use pbf_cli::{ColourRange, Frame, RangeBasis, Renderer};
    /// let s = pbf_solver::scenes::build("dam-break-2d", 200)?;
    /// let r = Renderer::new(&s, pbf_cli::Axis::Z, 320);
    /// let range = ColourRange { lo: 0.0, hi: 2.0, basis: RangeBasis::RunSoFar };
    /// let img = r.render_with(&Frame::from_solver(&s), 0.5, range);
    /// assert_eq!(img.width(), 320);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn render_with(&self, frame: &Frame, time: f64, range: ColourRange) -> RgbImage {
        self.picture(time, range, Subject::Particles, |pix| {
            self.draw_particles(pix, frame, range)
        })
    }

    /// Draws the fluid's reconstructed surface (`--surface`) at simulated time `time`
    /// instead of its particles: the triangles that face the eye, far to near, shaded
    /// flat by their normal and coloured by the quantity interpolated to the vertices,
    /// on the scale `range` (take it from the particles, [`Renderer::colour_range`], so
    /// that it matches their pictures). A mesh without interpolated data is drawn in
    /// one fluid colour, without the colour bar. Axes, time and colliders are as in
    /// [`Renderer::render_with`].
    ///
    /// ```
    /// use pbf_cli::surface::{SurfaceMesh, SurfaceParams};
    /// use pbf_cli::{Axis, Frame, Renderer};
    /// use pbf_solver::scenes::AnySolver;
    /// let s = pbf_solver::scenes::build("dam-break", 1000)?;
    /// let AnySolver::Three(three) = &s else { return Ok(()) };
    /// let p = three.params();
    /// let params = SurfaceParams::for_scene(p.spacing(), p.kernel_radius(), p.rest_density());
    /// let frame = Frame::from_solver(&s);
    /// let mesh = SurfaceMesh::reconstruct(&frame, &params)?;
    /// let r = Renderer::new(&s, Axis::Z, 320);
    /// let surface = r.render_surface(&mesh, 0.0, r.colour_range(&frame));
    /// assert_eq!((surface.width(), surface.height()), r.size());
    /// assert_ne!(surface, r.render(&frame, 0.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render_surface(&self, mesh: &SurfaceMesh, time: f64, range: ColourRange) -> RgbImage {
        let subject = if mesh.has_data() {
            Subject::Surface
        } else {
            Subject::PlainSurface
        };
        self.picture(time, range, subject, |pix| self.draw_mesh(pix, mesh, range))
    }

    /// The picture: the background, what `draw` draws over it, the colliders'
    /// outlines, and the legend.
    fn picture(
        &self,
        time: f64,
        range: ColourRange,
        subject: Subject,
        draw: impl FnOnce(&mut Pixmap),
    ) -> RgbImage {
        let mut pix = self.background.clone();
        draw(&mut pix);
        if let Some(outlines) = &self.outlines {
            let mut paint = paint_of(rgb(COLLIDER_EDGE));
            paint.set_color_rgba8(COLLIDER_EDGE[0], COLLIDER_EDGE[1], COLLIDER_EDGE[2], 220);
            let stroke = Stroke {
                width: (self.text / 8.0).max(1.4),
                ..Stroke::default()
            };
            pix.stroke_path(
                outlines,
                &paint,
                &stroke,
                Transform::identity(),
                self.clip.as_ref(),
            );
        }
        self.draw_titles(&mut pix, time, range, subject);
        if subject != Subject::PlainSurface {
            self.draw_colour_bar(&mut pix, range);
        }
        let data = pix.data();
        RgbImage::from_fn(self.width, self.height, |x, y| {
            let k = 4 * (y as usize * self.width as usize + x as usize);
            image::Rgb([data[k], data[k + 1], data[k + 2]])
        })
    }
}

/// `(right, up, depth)` of a point seen along `axis`; larger depth is nearer the eye.
fn project(axis: Axis, p: [f32; 3]) -> (f32, f32, f32) {
    match axis {
        Axis::Z => (p[0], p[1], p[2]),
        Axis::X => (p[2], p[1], -p[0]),
        Axis::Y => (p[0], -p[2], p[1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_axis_sees_the_domain_from_its_side() {
        let s = pbf_solver::scenes::build("dam-break", 1000).expect("scene");
        // The tank is 4a x 1.5a x a.
        let aspect = |axis| {
            let [l, t, r, b] = Renderer::new(&s, axis, 800).domain_box();
            (r - l) / (b - t)
        };
        assert!((aspect(Axis::Z) - 4.0 / 1.5).abs() < 0.05);
        assert!((aspect(Axis::X) - 1.0 / 1.5).abs() < 0.05);
        assert!((aspect(Axis::Y) - 4.0).abs() < 0.05);
    }

    #[test]
    fn tall_scenes_fit_in_four_widths() {
        let tall = pbf_solver::Solver::new(
            pbf_solver::Params::<2>::builder(0.05)
                .build()
                .expect("params"),
            pbf_solver::Domain::new([0.0; 2], [1.0, 20.0]).expect("domain"),
        )
        .expect("solver");
        let r = Renderer::new(&AnySolver::Two(tall), Axis::Z, 300);
        assert_eq!((r.width, r.height), (300, 1200));
        let [l, t, rt, b] = r.domain_box();
        assert!(((b - t) / (rt - l) - 20.0).abs() < 0.1);
        assert!(t > 0.0 && b < 1200.0);
    }
}
