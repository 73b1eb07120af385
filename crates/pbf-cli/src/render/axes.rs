//! The axes of a picture: ticks in metres at round values along the bottom and the left
//! of the domain's box, their labels and the axis titles.

use tiny_skia::{PathBuilder, Pixmap, Rect, Stroke, Transform};

use super::text::Align;
use super::{FAINT_INK, INK, OUTLINE, Renderer, ScreenAxis, paint_of, rgb};

impl Renderer {
    /// Ticks in metres along the bottom and the left of the domain's box, their
    /// labels and the axis titles.
    pub(super) fn draw_axes(&self, pix: &mut Pixmap) {
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
}

/// A round step (1, 2 or 5 times a power of ten) that cuts `lo..hi` into about
/// `count` parts.
pub(super) fn tick_step(lo: f32, hi: f32, count: f32) -> f32 {
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
pub(super) fn nice_ticks(lo: f32, hi: f32, count: f32) -> Vec<f32> {
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
pub(super) fn format_tick(value: f32, step: f32) -> String {
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{value:.decimals$}").replace('-', "−")
}

/// A value with one decimal more than a tick of `step` would show, at most 3
/// significant digits past the tens.
pub(super) fn format_value(value: f32, step: f32) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
