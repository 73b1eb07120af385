//! Pictures of a frame: particles as discs coloured by speed, in an orthographic view
//! along a chosen axis (2D scenes as they are), drawn far to near; the domain's
//! outline and a cross-section of the colliders through the middle of the domain
//! behind them. Animated GIFs of a run.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Rgb, RgbImage};
use pbf_core::Solver;
use pbf_core::scenes::AnySolver;

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

/// A collider's signed distance at a 3D point (2D colliders ignore z).
type Distance = Box<dyn Fn([f32; 3]) -> f32 + Send + Sync>;

/// Draws frames of one scene at a fixed size and scale.
///
/// ```
/// let solver = pbf_core::scenes::build("dam-break-2d", 200)?;
/// let renderer = pbf_cli::Renderer::new(&solver, pbf_cli::Axis::Z, 320);
/// let image = renderer.render(&pbf_cli::Frame::from_solver(&solver));
/// assert_eq!(image.width(), 320);
/// # Ok::<(), pbf_core::CoreError>(())
/// ```
pub struct Renderer {
    dimension: usize,
    axis: Axis,
    width: u32,
    height: u32,
    /// Lower corner of the view in (right, up) coordinates.
    view_lo: [f32; 2],
    /// Pixels per metre.
    scale: f32,
    /// Pixels left of the view and below it.
    left: f32,
    margin: f32,
    radius: f32,
    /// The speed at the top of the colour map.
    speed_scale: Option<f32>,
    /// Depth of the collider cross-section (the middle of the domain).
    mid_depth: f32,
    colliders: Vec<Distance>,
    /// The background with the domain and the colliders, drawn once.
    background: RgbImage,
}

const BACKGROUND: Rgb<u8> = Rgb([24, 26, 32]);
const OUTLINE: Rgb<u8> = Rgb([120, 124, 136]);
const SOLID: Rgb<u8> = Rgb([78, 82, 94]);

impl Renderer {
    /// A renderer for `solver`'s scene, `width` pixels wide (at least 16); the height
    /// follows the domain's aspect ratio.
    ///
    /// ```
    /// let s = pbf_core::scenes::build("dam-break", 1000)?;
    /// let r = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Y, 200);
    /// assert_eq!(r.size().0, 200);
    /// # Ok::<(), pbf_core::CoreError>(())
    /// ```
    pub fn new(solver: &AnySolver, axis: Axis, width: u32) -> Self {
        match solver {
            AnySolver::Two(s) => Self::for_solver(s, axis, width),
            AnySolver::Three(s) => Self::for_solver(s, axis, width),
        }
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
        let width = width.max(16);
        let margin = 8.0f32.min(width as f32 / 8.0);
        // Fit the width, unless that makes the picture taller than 4 widths (or 8192
        // pixels): then fit the height and centre the view.
        let max_height = (4 * width).min(8192) as f32;
        let scale = ((width as f32 - 2.0 * margin) / extent[0])
            .min((max_height - 2.0 * margin) / extent[1]);
        let height =
            ((extent[1] * scale + 2.0 * margin).round() as u32).clamp(16, max_height as u32);
        let left = 0.5 * (width as f32 - extent[0] * scale);
        let g = s.params().gravity();
        let g_norm = g.iter().map(|c| c * c).sum::<f32>().sqrt();
        let fall = (hi[1] - lo[1]).max(0.0);
        // A particle falling the domain's height reaches the top of the colour map.
        let speed_scale = (g_norm > 0.0).then(|| (2.0 * g_norm * fall).sqrt().max(1e-6));
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
        let mut r = Self {
            dimension: D,
            axis,
            width,
            height,
            view_lo,
            scale,
            left,
            margin,
            radius: (0.5 * s.params().spacing() * scale).max(1.0),
            speed_scale,
            mid_depth: project(axis, mid).2,
            colliders,
            background: RgbImage::new(1, 1),
        };
        r.background = r.draw_background(view_lo, view_hi);
        r
    }

    /// `(width, height)` in pixels.
    ///
    /// ```
    /// let s = pbf_core::scenes::build("block-at-rest-2d", 100)?;
    /// let (w, h) = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Z, 100).size();
    /// assert!(w == 100 && h > 100); // the box is twice as high as wide
    /// # Ok::<(), pbf_core::CoreError>(())
    /// ```
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Pixel coordinates of view coordinates.
    fn to_pixel(&self, right: f32, up: f32) -> (f32, f32) {
        let x = self.left + (right - self.view_lo[0]) * self.scale;
        let y = self.height as f32 - (self.margin + (up - self.view_lo[1]) * self.scale);
        (x, y)
    }

    /// The 3D point at a pixel centre on the cross-section plane.
    fn unproject(&self, px: u32, py: u32) -> [f32; 3] {
        let right = (px as f32 + 0.5 - self.left) / self.scale + self.view_lo[0];
        let up =
            (self.height as f32 - (py as f32 + 0.5) - self.margin) / self.scale + self.view_lo[1];
        let depth = self.mid_depth;
        match self.axis {
            Axis::Z => [right, up, depth],
            Axis::X => [-depth, up, right],
            Axis::Y => [right, depth, -up],
        }
    }

    fn draw_background(&self, view_lo: [f32; 2], view_hi: [f32; 2]) -> RgbImage {
        let mut img = RgbImage::from_pixel(self.width, self.height, BACKGROUND);
        if !self.colliders.is_empty() {
            for py in 0..self.height {
                for px in 0..self.width {
                    let p = self.unproject(px, py);
                    if self.colliders.iter().any(|d| d(p) < 0.0) {
                        img.put_pixel(px, py, SOLID);
                    }
                }
            }
        }
        let (x0, y1) = self.to_pixel(view_lo[0], view_lo[1]);
        let (x1, y0) = self.to_pixel(view_hi[0], view_hi[1]);
        let (x0, x1) = (x0.round() as i64 - 1, x1.round() as i64);
        let (y0, y1) = (y0.round() as i64 - 1, y1.round() as i64);
        let mut put = |x: i64, y: i64| {
            if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
                img.put_pixel(x as u32, y as u32, OUTLINE);
            }
        };
        for x in x0..=x1 {
            put(x, y0);
            put(x, y1);
        }
        for y in y0..=y1 {
            put(x0, y);
            put(x1, y);
        }
        img
    }

    /// Draws a frame.
    ///
    /// ```
    /// let s = pbf_core::scenes::build("dam-break", 1000)?;
    /// let r = pbf_cli::Renderer::new(&s, pbf_cli::Axis::Z, 160);
    /// let img = r.render(&pbf_cli::Frame::from_solver(&s));
    /// assert_eq!((img.width(), img.height()), r.size());
    /// # Ok::<(), pbf_core::CoreError>(())
    /// ```
    pub fn render(&self, frame: &Frame) -> RgbImage {
        let mut img = self.background.clone();
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
        let speed = |i: usize| {
            let v = frame.velocities.get(i).copied().unwrap_or([0.0; 3]);
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
        };
        let scale = self
            .speed_scale
            .unwrap_or_else(|| (0..n).map(speed).fold(1e-6, f32::max));
        let (depth_lo, depth_hi) = projected
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p.2), hi.max(p.2))
            });
        let depth_range = (depth_hi - depth_lo).max(1e-12);
        for i in order {
            let i = i as usize;
            let (right, up, depth) = projected[i];
            let colour = speed_colour(speed(i) / scale);
            // Nearer particles are brighter, for a sense of depth in 3D views.
            let shade = if self.dimension == 3 {
                0.65 + 0.35 * (depth - depth_lo) / depth_range
            } else {
                1.0
            };
            let (cx, cy) = self.to_pixel(right, up);
            self.disc(&mut img, cx, cy, colour, shade);
        }
        img
    }

    fn disc(&self, img: &mut RgbImage, cx: f32, cy: f32, colour: [f32; 3], shade: f32) {
        let r = self.radius;
        let (w, h) = (self.width as i64, self.height as i64);
        let x0 = ((cx - r).floor() as i64).max(0);
        let x1 = ((cx + r).ceil() as i64).min(w - 1);
        let y0 = ((cy - r).floor() as i64).max(0);
        let y1 = ((cy + r).ceil() as i64).min(h - 1);
        let rim = (r - 1.0).max(0.0);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let dx = x as f32 + 0.5 - cx;
                let dy = y as f32 + 0.5 - cy;
                let d = (dx * dx + dy * dy).sqrt();
                if d > r {
                    continue;
                }
                // A darker rim separates neighbouring discs.
                let s = if r >= 2.5 && d > rim {
                    shade * 0.7
                } else {
                    shade
                };
                let c = colour.map(|c| (c * s * 255.0).round().clamp(0.0, 255.0) as u8);
                img.put_pixel(x as u32, y as u32, Rgb(c));
            }
        }
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
    fn particles_are_drawn_where_they_are() {
        let solver = pbf_core::scenes::build("block-at-rest-2d", 100).expect("scene");
        let r = Renderer::new(&solver, Axis::Z, 200);
        let frame = Frame {
            positions: vec![[0.25, 0.25, 0.0]],
            velocities: vec![[0.0; 3]],
            densities: vec![1000.0],
            ids: vec![0],
        };
        let img = r.render(&frame);
        let (x, y) = r.to_pixel(0.25, 0.25);
        let p = img.get_pixel(x as u32, y as u32);
        let slow = speed_colour(0.0).map(|c| (c * 255.0).round() as u8);
        assert_eq!(p.0, slow);
        assert_eq!(img.get_pixel(r.width / 2, 2).0, BACKGROUND.0);
    }

    #[test]
    fn each_axis_sees_the_domain_from_its_side() {
        let s = pbf_core::scenes::build("dam-break", 1000).expect("scene");
        // The tank is 4a x 1.5a x a.
        let (wz, hz) = Renderer::new(&s, Axis::Z, 400).size();
        let (wx, hx) = Renderer::new(&s, Axis::X, 400).size();
        let (wy, hy) = Renderer::new(&s, Axis::Y, 400).size();
        assert!(hz < wz / 2, "{wz}x{hz}");
        assert!(hx > wx, "{wx}x{hx}");
        assert!(hy < wy / 2, "{wy}x{hy}");
    }

    #[test]
    fn tall_scenes_fit_in_four_widths() {
        let s = pbf_core::scenes::build("block-at-rest-2d", 100).expect("scene");
        // A 1:2 box fits the width; a 1:20 box is limited to 4 widths and centred.
        let r = Renderer::new(&s, Axis::Z, 100);
        assert!(r.height > r.width);
        let tall = pbf_core::Solver::new(
            pbf_core::Params::<2>::builder(0.05)
                .build()
                .expect("params"),
            pbf_core::Domain::new([0.0; 2], [1.0, 20.0]).expect("domain"),
        )
        .expect("solver");
        let r = Renderer::new(&AnySolver::Two(tall), Axis::Z, 100);
        assert_eq!((r.width, r.height), (100, 400));
        let (x0, y0) = r.to_pixel(0.0, 0.0);
        let (x1, y1) = r.to_pixel(1.0, 20.0);
        assert!(x0 > 40.0 && x1 < 60.0, "{x0} {x1}");
        assert!(
            (y0 - 392.0).abs() < 1.0 && (y1 - 8.0).abs() < 1.0,
            "{y0} {y1}"
        );
    }

    #[test]
    fn colliders_show_in_cross_section() {
        let s = pbf_core::scenes::build("glass-2d", 500).expect("scene");
        let r = Renderer::new(&s, Axis::Z, 300);
        let solid = r.background.pixels().filter(|p| **p == SOLID).count();
        assert!(solid > 100, "{solid}");
    }
}
