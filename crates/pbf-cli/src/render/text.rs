//! Text in pictures: DejaVu Sans embedded in the binary, laid out with `ab_glyph` (with
//! kerning) and blended into the picture with each pixel's coverage.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use tiny_skia::Pixmap;

use super::Renderer;

/// Text alignment about the anchor's x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    Left,
    Centre,
    Right,
}

/// The embedded font: DejaVu Sans, which the `dejavu` crate ships.
pub(super) fn font() -> FontRef<'static> {
    // The font is a constant of the build, not input: it parses or no picture could
    // ever have been drawn (a unit test parses it).
    FontRef::try_from_slice(dejavu::sans::regular()).expect("the embedded DejaVu Sans parses")
}

impl Renderer {
    /// The advance of `text` in pixels.
    pub(super) fn text_width(&self, text: &str) -> f32 {
        self.text_width_sized(text, self.text)
    }

    /// The advance of `text` in pixels at text height `size`.
    pub(super) fn text_width_sized(&self, text: &str, size: f32) -> f32 {
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
    pub(super) fn draw_text(
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
    pub(super) fn draw_text_sized(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_parses_and_has_the_glyphs_the_pictures_use() {
        let font = font();
        for c in "t = 0.123456789 s speed (m/s) density kg/m³ kg/m² −– xyz".chars() {
            assert_ne!(font.glyph_id(c).0, 0, "{c:?}");
        }
    }
}
