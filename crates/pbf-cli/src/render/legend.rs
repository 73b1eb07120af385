//! The legend of a picture: the simulated time and the colour scale in words along the
//! top, and the colour bar with its ticks, end values, quantity and unit on the right.

use tiny_skia::{
    GradientStop, LinearGradient, Paint, PathBuilder, Pixmap, Point, Rect, Shader, SpreadMode,
    Stroke, Transform,
};

use super::axes::{format_tick, format_value, nice_ticks, tick_step};
use super::colour::{ColourRange, Quantity, RangeBasis, speed_colour};
use super::text::Align;
use super::{FAINT_INK, INK, OUTLINE, Renderer, paint_of, rgb, rgb_f};

/// What a picture draws, as its legend states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Subject {
    /// Particles coloured by the quantity.
    Particles,
    /// The reconstructed surface coloured by the quantity interpolated to its vertices.
    Surface,
    /// The reconstructed surface in one colour: its vertices carry no quantity.
    PlainSurface,
}

impl Renderer {
    /// The simulated time at the top left, the colour scale in words at the top
    /// right (for a surface in one colour, that it is the surface).
    pub(super) fn draw_titles(
        &self,
        pix: &mut Pixmap,
        time: f64,
        range: ColourRange,
        subject: Subject,
    ) {
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
        let room = self.width as f32 - 1.2 * fs - self.text_width_sized(&time, large) - 1.5 * fs;
        let what = match subject {
            Subject::Particles => "colour",
            Subject::Surface => "surface colour",
            Subject::PlainSurface => {
                let statement = "surface (no data at its vertices)";
                if self.text_width(statement) <= room {
                    let x = self.width as f32 - 0.6 * fs;
                    self.draw_text(pix, statement, x, baseline, Align::Right, FAINT_INK);
                }
                return;
            }
        };
        let long = format!(
            "{what}: {} {} – {} {unit} ({basis})",
            self.quantity.name(),
            format_value(range.lo, step),
            format_value(range.hi, step),
        );
        let short = format!(
            "{} – {} {unit}",
            format_value(range.lo, step),
            format_value(range.hi, step)
        );
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
    pub(super) fn draw_colour_bar(&self, pix: &mut Pixmap, range: ColourRange) {
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
}
