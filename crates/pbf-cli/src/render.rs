//! Pictures of a frame: particles as shaded discs coloured by a quantity (speed by
//! default), in an orthographic view along a chosen axis (2D scenes as they are),
//! drawn far to near, with the colliders' outlines through the middle of the domain,
//! axes with ticks in metres, the simulated time and a colour bar whose scale comes
//! from the frame's data. Animated GIFs of a run.
//!
//! Shapes are drawn with `tiny-skia` (anti-aliased paths and gradients) and text with
//! `ab_glyph` from the DejaVu Sans font embedded in the binary: no system font or
//! graphics library is needed.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, RgbImage};
use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;
use tiny_skia::{
    Color, FillRule, GradientStop, LinearGradient, Mask, Paint, PathBuilder, Pixmap, Point,
    RadialGradient, Rect, Shader, SpreadMode, Stroke, Transform,
};

use crate::error::CliError;
use crate::frame::Frame;

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

/// The quantity that colours the particles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Quantity {
    /// Speed in m/s, from 0 to the frame's 99th percentile (the default).
    #[default]
    Speed,
    /// Density in kg/m³ (kg/m² in 2D), from the frame's 1st to its 99th percentile.
    Density,
}

impl Quantity {
    /// The quantity's name, as the colour bar shows it.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Quantity::Speed.name(), "speed");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Speed => "speed",
            Quantity::Density => "density",
        }
    }

    /// The unit of the quantity in a scene of `dimension` 2 or 3.
    ///
    /// ```
    /// use pbf_cli::Quantity;
    /// assert_eq!(Quantity::Speed.unit(3), "m/s");
    /// assert_eq!(Quantity::Density.unit(2), "kg/m²");
    /// ```
    pub fn unit(self, dimension: usize) -> &'static str {
        match (self, dimension) {
            (Quantity::Speed, _) => "m/s",
            (Quantity::Density, 2) => "kg/m²",
            (Quantity::Density, _) => "kg/m³",
        }
    }

    /// The value of particle `i` (0 where the frame lacks the data).
    fn value(self, frame: &Frame, i: usize) -> f32 {
        match self {
            Quantity::Speed => {
                let v = frame.velocities.get(i).copied().unwrap_or([0.0; 3]);
                (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
            }
            Quantity::Density => frame.densities.get(i).copied().unwrap_or(0.0),
        }
    }
}

/// What a colour range was taken from, as the picture states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeBasis {
    /// The percentiles of the frame drawn.
    Frame,
    /// The widest percentiles of the run's frames so far (a sequence of pictures
    /// keeps one growing scale, so that colours compare between frames).
    RunSoFar,
}

/// The values at the two ends of the colour map.
///
/// ```
/// use pbf_cli::{ColourRange, RangeBasis};
/// let a = ColourRange { lo: 0.0, hi: 1.0, basis: RangeBasis::Frame };
/// let b = ColourRange { lo: 0.0, hi: 2.0, basis: RangeBasis::Frame };
/// let run = a.widened(b);
/// assert_eq!((run.lo, run.hi, run.basis), (0.0, 2.0, RangeBasis::RunSoFar));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColourRange {
    /// The value at the dark end.
    pub lo: f32,
    /// The value at the bright end.
    pub hi: f32,
    /// Where the range comes from.
    pub basis: RangeBasis,
}

impl ColourRange {
    /// The range that covers both, for a run's sequence of pictures.
    pub fn widened(self, other: ColourRange) -> ColourRange {
        ColourRange {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            basis: RangeBasis::RunSoFar,
        }
    }

    /// Where `value` falls in the range, from 0 to 1 (clamped; NaN gives 0).
    fn position(self, value: f32) -> f32 {
        let t = (value - self.lo) / (self.hi - self.lo);
        if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) }
    }
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

/// Text alignment about the anchor's x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Centre,
    Right,
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

/// The embedded font: DejaVu Sans, which the `dejavu` crate ships.
fn font() -> FontRef<'static> {
    // The font is a constant of the build, not input: it parses or no picture could
    // ever have been drawn (a unit test parses it).
    FontRef::try_from_slice(dejavu::sans::regular()).expect("the embedded DejaVu Sans parses")
}

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

    /// Fills the colliders' cross-section and returns its outline: the zero contour
    /// of the distance, traced by marching squares on the pixel corners.
    fn draw_colliders(&self, pix: &mut Pixmap) -> Option<tiny_skia::Path> {
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

    /// Ticks in metres along the bottom and the left of the domain's box, their
    /// labels and the axis titles.
    fn draw_axes(&self, pix: &mut Pixmap) {
        let fs = self.text;
        let [l, t, r, b] = self.frame_box;
        let tick = (0.4 * fs).round();
        let mut ticks = PathBuilder::new();
        // Horizontal: the right axis of the view.
        let ScreenAxis { name, sign } = self.screen[0];
        let (a, bb) = (sign * self.view_lo[0], sign * self.view_hi[0]);
        let count = ((r - l) / (5.0 * fs)).clamp(2.0, 10.0);
        for value in nice_ticks(a.min(bb), a.max(bb), count) {
            let (x, _) = self.to_pixel(sign * value, self.view_lo[1]);
            ticks.move_to(x, b);
            ticks.line_to(x, b + tick);
            let label = format_tick(value, tick_step(a.min(bb), a.max(bb), count));
            self.draw_text(pix, &label, x, b + tick + 1.05 * fs, Align::Centre, INK);
        }
        self.draw_text(
            pix,
            &format!("{name} (m)"),
            0.5 * (l + r),
            b + tick + 2.35 * fs,
            Align::Centre,
            FAINT_INK,
        );
        // Vertical: the up axis of the view.
        let ScreenAxis { name, sign } = self.screen[1];
        let (a, bb) = (sign * self.view_lo[1], sign * self.view_hi[1]);
        let count = ((b - t) / (2.5 * fs)).clamp(2.0, 10.0);
        for value in nice_ticks(a.min(bb), a.max(bb), count) {
            let (_, y) = self.to_pixel(self.view_lo[0], sign * value);
            ticks.move_to(l, y);
            ticks.line_to(l - tick, y);
            let label = format_tick(value, tick_step(a.min(bb), a.max(bb), count));
            self.draw_text(
                pix,
                &label,
                l - tick - 0.3 * fs,
                y + 0.36 * fs,
                Align::Right,
                INK,
            );
        }
        self.draw_text(
            pix,
            &format!("{name} (m)"),
            l - tick - 0.3 * fs,
            t - 0.8 * fs,
            Align::Right,
            FAINT_INK,
        );
        let stroke = Stroke {
            width: 1.0,
            ..Stroke::default()
        };
        if let Some(path) = ticks.finish() {
            pix.stroke_path(
                &path,
                &paint_of(rgb(OUTLINE)),
                &stroke,
                Transform::identity(),
                None,
            );
        }
        // The domain's outline, on the pixel centres just outside the box.
        if let Some(rect) = Rect::from_ltrb(l - 0.5, t - 0.5, r + 0.5, b + 0.5) {
            let path = PathBuilder::from_rect(rect);
            let mut paint = paint_of(rgb(OUTLINE));
            paint.anti_alias = false;
            pix.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
    }

    /// The values at the ends of the colour map for `frame`: speed from 0 to its 99th
    /// percentile, density from its 1st to its 99th percentile. A range that would be
    /// empty (a fluid at rest) is widened a little, so that it still reads.
    ///
    /// ```
    /// use pbf_cli::{Axis, Frame, Renderer};
    /// let s = pbf_solver::scenes::build("dam-break-2d", 200)?;
    /// let r = Renderer::new(&s, Axis::Z, 300);
    /// let mut frame = Frame::from_solver(&s);
    /// for (i, v) in frame.velocities.iter_mut().enumerate() {
    ///     *v = [i as f32 / 100.0, 0.0, 0.0];
    /// }
    /// let range = r.colour_range(&frame);
    /// assert_eq!(range.lo, 0.0);
    /// assert!(range.hi > 1.0 && range.hi < frame.len() as f32 / 100.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn colour_range(&self, frame: &Frame) -> ColourRange {
        let mut values: Vec<f32> = (0..frame.len())
            .map(|i| self.quantity.value(frame, i))
            .filter(|v| v.is_finite())
            .collect();
        let (lo, hi) = match self.quantity {
            Quantity::Speed => {
                let hi = percentile(&mut values, 0.99).unwrap_or(0.0);
                (0.0, hi.max(1e-3))
            }
            Quantity::Density => {
                let lo = percentile(&mut values, 0.01).unwrap_or(0.0);
                let hi = percentile(&mut values, 0.99).unwrap_or(0.0);
                let pad = (1e-3 * hi.abs()).max(1e-3);
                if hi - lo < pad {
                    (lo - pad, hi + pad)
                } else {
                    (lo, hi)
                }
            }
        };
        ColourRange {
            lo,
            hi,
            basis: RangeBasis::Frame,
        }
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
        let mut pix = self.background.clone();
        self.draw_particles(&mut pix, frame, range);
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
        self.draw_titles(&mut pix, time, range);
        self.draw_colour_bar(&mut pix, range);
        let data = pix.data();
        RgbImage::from_fn(self.width, self.height, |x, y| {
            let k = 4 * (y as usize * self.width as usize + x as usize);
            image::Rgb([data[k], data[k + 1], data[k + 2]])
        })
    }

    fn draw_particles(&self, pix: &mut Pixmap, frame: &Frame, range: ColourRange) {
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

    /// The simulated time at the top left, the colour scale in words at the top
    /// right.
    fn draw_titles(&self, pix: &mut Pixmap, time: f64, range: ColourRange) {
        let fs = self.text;
        let baseline = 1.35 * fs;
        let time = format!("t = {time:.2} s");
        let large = 1.3 * fs;
        self.draw_text_sized(pix, &time, (0.6 * fs, baseline), Align::Left, INK, large);
        let unit = self.quantity.unit(self.dimension);
        let basis = match (self.quantity, range.basis) {
            (Quantity::Speed, RangeBasis::Frame) => "99th percentile",
            (Quantity::Speed, RangeBasis::RunSoFar) => "99th percentile, run so far",
            (Quantity::Density, RangeBasis::Frame) => "1st to 99th percentile",
            (Quantity::Density, RangeBasis::RunSoFar) => "1st to 99th percentile, run so far",
        };
        let step = tick_step(range.lo, range.hi, 5.0);
        let long = format!(
            "colour: {} {} – {} {unit} ({basis})",
            self.quantity.name(),
            format_value(range.lo, step),
            format_value(range.hi, step),
        );
        let short = format!(
            "{} – {} {unit}",
            format_value(range.lo, step),
            format_value(range.hi, step)
        );
        let room = self.width as f32 - 1.2 * fs - self.text_width_sized(&time, large) - 1.5 * fs;
        let statement = [long, short]
            .into_iter()
            .find(|s| self.text_width(s) <= room);
        if let Some(statement) = statement {
            let x = self.width as f32 - 0.6 * fs;
            self.draw_text(pix, &statement, x, baseline, Align::Right, FAINT_INK);
        }
    }

    /// The colour bar right of the domain: the colour map from the range's low end
    /// (bottom) to its high end (top), ticks, the end values and the quantity with its
    /// unit above.
    fn draw_colour_bar(&self, pix: &mut Pixmap, range: ColourRange) {
        let fs = self.text;
        let x0 = self.width as f32 - 6.6 * fs + 1.0 * fs;
        let x1 = x0 + 1.1 * fs;
        let band_top = 3.2 * fs;
        let band_bottom = self.height as f32 - 3.4 * fs;
        let (y0, y1) = (band_top + 0.2 * fs, band_bottom);
        let Some(rect) = Rect::from_ltrb(x0, y0, x1, y1) else {
            return;
        };
        let stops = (0..=16)
            .map(|k| {
                let t = k as f32 / 16.0;
                GradientStop::new(t, rgb_f(speed_colour(t)))
            })
            .collect();
        let paint = Paint {
            shader: LinearGradient::new(
                Point::from_xy(0.0, y1),
                Point::from_xy(0.0, y0),
                stops,
                SpreadMode::Pad,
                Transform::identity(),
            )
            .unwrap_or(Shader::SolidColor(rgb(INK))),
            ..Paint::default()
        };
        pix.fill_rect(rect, &paint, Transform::identity(), None);
        let stroke = Stroke {
            width: 1.0,
            ..Stroke::default()
        };
        let mut frame_paint = paint_of(rgb(OUTLINE));
        frame_paint.anti_alias = false;
        if let Some(outline) = Rect::from_ltrb(x0 - 0.5, y0 - 0.5, x1 + 0.5, y1 + 0.5) {
            pix.stroke_path(
                &PathBuilder::from_rect(outline),
                &frame_paint,
                &stroke,
                Transform::identity(),
                None,
            );
        }
        let y_of = |v: f32| y1 - range.position(v) * (y1 - y0);
        let tick = 0.3 * fs;
        let mut ticks = PathBuilder::new();
        let count = ((y1 - y0) / (2.2 * fs)).clamp(2.0, 8.0);
        let step = tick_step(range.lo, range.hi, count);
        let mut label = |pix: &mut Pixmap, v: f32, text: String, ink| {
            let y = y_of(v);
            ticks.move_to(x1, y);
            ticks.line_to(x1 + tick, y);
            self.draw_text(
                pix,
                &text,
                x1 + tick + 0.3 * fs,
                y + 0.36 * fs,
                Align::Left,
                ink,
            );
        };
        // The exact ends, then the round values between that keep clear of them.
        let ends = tick_step(range.lo, range.hi, 5.0);
        label(pix, range.lo, format_value(range.lo, ends), INK);
        label(pix, range.hi, format_value(range.hi, ends), INK);
        for v in nice_ticks(range.lo, range.hi, count) {
            let y = y_of(v);
            if (y - y0).abs() > 1.2 * fs && (y - y1).abs() > 1.2 * fs {
                label(pix, v, format_tick(v, step), FAINT_INK);
            }
        }
        if let Some(path) = ticks.finish() {
            pix.stroke_path(&path, &frame_paint, &stroke, Transform::identity(), None);
        }
        let title = format!(
            "{} ({})",
            self.quantity.name(),
            self.quantity.unit(self.dimension)
        );
        self.draw_text(
            pix,
            &title,
            self.width as f32 - 0.6 * fs,
            band_top - 0.8 * fs,
            Align::Right,
            FAINT_INK,
        );
    }

    /// The advance of `text` in pixels.
    fn text_width(&self, text: &str) -> f32 {
        self.text_width_sized(text, self.text)
    }

    /// The advance of `text` in pixels at text height `size`.
    fn text_width_sized(&self, text: &str, size: f32) -> f32 {
        let font = self.font.as_scaled(PxScale::from(size));
        let mut width = 0.0;
        let mut last = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(prev) = last {
                width += font.kern(prev, id);
            }
            width += font.h_advance(id);
            last = Some(id);
        }
        width
    }

    /// Draws `text` with its baseline at `baseline`, aligned about `x`.
    fn draw_text(
        &self,
        pix: &mut Pixmap,
        text: &str,
        x: f32,
        baseline: f32,
        align: Align,
        ink: [u8; 3],
    ) {
        self.draw_text_sized(pix, text, (x, baseline), align, ink, self.text);
    }

    /// Draws `text` at text height `size`, its baseline at `(x, baseline)`.
    fn draw_text_sized(
        &self,
        pix: &mut Pixmap,
        text: &str,
        (x, baseline): (f32, f32),
        align: Align,
        ink: [u8; 3],
        size: f32,
    ) {
        let font = self.font.as_scaled(PxScale::from(size));
        let mut caret = match align {
            Align::Left => x,
            Align::Centre => x - 0.5 * self.text_width_sized(text, size),
            Align::Right => x - self.text_width_sized(text, size),
        }
        .round();
        let baseline = baseline.round();
        let (w, h) = (self.width as i64, self.height as i64);
        let data = pix.data_mut();
        let mut last = None;
        for c in text.chars() {
            let mut glyph = font.scaled_glyph(c);
            if let Some(prev) = last {
                caret += font.kern(prev, glyph.id);
            }
            glyph.position = point(caret, baseline);
            caret += font.h_advance(glyph.id);
            last = Some(glyph.id);
            let Some(outlined) = self.font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outlined.px_bounds();
            outlined.draw(|gx, gy, coverage| {
                let px = bounds.min.x as i64 + i64::from(gx);
                let py = bounds.min.y as i64 + i64::from(gy);
                if !((0..w).contains(&px) && (0..h).contains(&py)) {
                    return;
                }
                let k = 4 * (py * w + px) as usize;
                let a = coverage.clamp(0.0, 1.0);
                for (channel, ink) in data[k..k + 3].iter_mut().zip(ink) {
                    *channel = (f32::from(*channel) * (1.0 - a) + f32::from(ink) * a).round() as u8;
                }
            });
        }
    }
}

/// The `q` quantile (0 to 1) of `values`, which it reorders; `None` when empty.
fn percentile(values: &mut [f32], q: f32) -> Option<f32> {
    if values.is_empty() {
        return None;
    }
    let k = ((values.len() - 1) as f32 * q).round() as usize;
    let (_, v, _) = values.select_nth_unstable_by(k, f32::total_cmp);
    Some(*v)
}

/// A round step (1, 2 or 5 times a power of ten) that cuts `lo..hi` into about
/// `count` parts.
fn tick_step(lo: f32, hi: f32, count: f32) -> f32 {
    let raw = ((hi - lo) / count.max(1.0)).max(1e-9);
    let power = 10f32.powf(raw.log10().floor());
    let m = raw / power;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// The multiples of [`tick_step`] within `lo..=hi`.
fn nice_ticks(lo: f32, hi: f32, count: f32) -> Vec<f32> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return Vec::new();
    }
    let step = tick_step(lo, hi, count);
    let first = (lo / step - 1e-4).ceil() as i64;
    let last = (hi / step + 1e-4).floor() as i64;
    (first..=last.min(first + 100))
        .map(|k| {
            let v = k as f32 * step;
            // No "-0".
            if v == 0.0 { 0.0 } else { v }
        })
        .collect()
}

/// A tick value with the decimals its step needs.
fn format_tick(value: f32, step: f32) -> String {
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{value:.decimals$}").replace('-', "−")
}

/// A value with one decimal more than a tick of `step` would show, at most 3
/// significant digits past the tens.
fn format_value(value: f32, step: f32) -> String {
    let decimals = (-(step.abs().max(1e-9)).log10().floor() + 1.0).clamp(0.0, 6.0) as usize;
    let decimals = if value.abs() >= 100.0 {
        0
    } else {
        decimals.min(3)
    };
    let s = format!("{value:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_owned()
    } else {
        s.replace('-', "−")
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

/// A viridis-like colour map: dark blue (slow) through teal and green to yellow (fast).
/// `t` is clamped to `[0, 1]`.
///
/// ```
/// let slow = pbf_cli::speed_colour(0.0);
/// let fast = pbf_cli::speed_colour(1.0);
/// assert!(slow[2] > slow[0] && fast[0] > fast[2]);
/// ```
pub fn speed_colour(t: f32) -> [f32; 3] {
    // Samples of matplotlib's viridis at t = 0, 1/8, ..., 1.
    const STOPS: [[f32; 3]; 9] = [
        [0.267, 0.005, 0.329],
        [0.283, 0.157, 0.471],
        [0.243, 0.286, 0.537],
        [0.192, 0.408, 0.557],
        [0.149, 0.510, 0.557],
        [0.122, 0.620, 0.537],
        [0.208, 0.718, 0.475],
        [0.431, 0.808, 0.345],
        [0.993, 0.906, 0.144],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * 8.0;
    let i = (x.floor() as usize).min(7);
    let f = x - i as f32;
    core::array::from_fn(|c| STOPS[i][c] + (STOPS[i + 1][c] - STOPS[i][c]) * f)
}

/// Saves an image as PNG.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.png");
/// pbf_cli::save_png(&image::RgbImage::new(4, 4), &path)?;
/// assert!(path.exists());
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn save_png(img: &RgbImage, path: &Path) -> Result<(), CliError> {
    img.save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| CliError::write(path, e))
}

/// An animated GIF written frame by frame, looping forever.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("a.gif");
/// let mut gif = pbf_cli::GifWriter::create(&path, 50)?;
/// gif.push(&image::RgbImage::new(8, 8))?;
/// gif.push(&image::RgbImage::from_pixel(8, 8, image::Rgb([255, 0, 0])))?;
/// gif.finish()?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"GIF89a"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub struct GifWriter {
    encoder: Option<GifEncoder<BufWriter<File>>>,
    path: PathBuf,
    delay: Delay,
}

impl GifWriter {
    /// Starts a GIF at `path` showing each frame for `delay_ms` milliseconds (rounded
    /// to the format's 10 ms and at least 20 ms, the least browsers honour).
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn create(path: &Path, delay_ms: u32) -> Result<Self, CliError> {
        let file = File::create(path).map_err(|e| CliError::write(path, e))?;
        // Speed 10 of 30: NeuQuant quantisation, a fair trade of time against colour.
        let mut encoder = GifEncoder::new_with_speed(BufWriter::new(file), 10);
        encoder
            .set_repeat(Repeat::Infinite)
            .map_err(|e| CliError::write(path, e))?;
        let delay_ms = (delay_ms.max(20) + 5) / 10 * 10;
        Ok(Self {
            encoder: Some(encoder),
            path: path.to_owned(),
            delay: Delay::from_numer_denom_ms(delay_ms, 1),
        })
    }

    /// Appends a frame.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn push(&mut self, img: &RgbImage) -> Result<(), CliError> {
        let Some(encoder) = self.encoder.as_mut() else {
            return Ok(());
        };
        let rgba = image::DynamicImage::ImageRgb8(img.clone()).into_rgba8();
        encoder
            .encode_frame(image::Frame::from_parts(rgba, 0, 0, self.delay))
            .map_err(|e| CliError::write(&self.path, e))
    }

    /// Flushes and closes the file.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    pub fn finish(mut self) -> Result<(), CliError> {
        // Dropping the encoder writes the GIF trailer; flush errors surface here.
        if let Some(encoder) = self.encoder.take() {
            drop(encoder);
        }
        std::fs::metadata(&self.path)
            .map(|_| ())
            .map_err(|e| CliError::write(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_map_runs_from_dark_to_bright() {
        let lum = |c: [f32; 3]| 0.2 * c[0] + 0.7 * c[1] + 0.1 * c[2];
        let mut last = -1.0;
        for k in 0..=16 {
            let l = lum(speed_colour(k as f32 / 16.0));
            assert!(l > last, "{k}");
            last = l;
        }
        assert_eq!(speed_colour(f32::NAN), speed_colour(0.0));
        assert_eq!(speed_colour(7.0), speed_colour(1.0));
    }

    #[test]
    fn the_embedded_font_parses_and_has_the_glyphs_the_pictures_use() {
        let font = font();
        for c in "t = 0.123456789 s speed (m/s) density kg/m³ kg/m² −– xyz".chars() {
            assert_ne!(font.glyph_id(c).0, 0, "{c:?}");
        }
    }

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

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(tick_step(0.0, 1.0, 5.0), 0.2);
        assert_eq!(tick_step(0.0, 2.41, 5.0), 0.5);
        let close = |a: Vec<f32>, b: &[f32]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
        };
        assert!(close(
            nice_ticks(0.0, 1.0, 5.0),
            &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        ));
        assert!(close(nice_ticks(0.0, 1.0, 4.0), &[0.0, 0.5, 1.0]));
        assert!(close(nice_ticks(-0.3, 0.0, 3.0), &[-0.3, -0.2, -0.1, 0.0]));
        assert_eq!(format_tick(0.5, 0.5), "0.5");
        assert_eq!(format_tick(-0.25, 0.05), "−0.25");
        assert_eq!(format_tick(2.0, 1.0), "2");
        assert_eq!(format_value(2.4137, 0.5), "2.41");
        assert_eq!(format_value(1012.4, 5.0), "1012");
        assert!(nice_ticks(f32::NAN, 1.0, 3.0).is_empty());
    }

    #[test]
    fn percentiles_ignore_the_fastest_hundredth() {
        let mut v: Vec<f32> = (0..=1000).map(|i| i as f32).collect();
        v.reverse();
        assert_eq!(percentile(&mut v, 0.99), Some(990.0));
        assert_eq!(percentile(&mut v, 0.0), Some(0.0));
        assert_eq!(percentile(&mut [], 0.5), None);
    }
}
