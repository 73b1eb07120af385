//! A 5 x 7 pixel bitmap font for the plots' labels: digits, capital letters (small
//! letters are drawn as capitals) and the punctuation that numbers and units need.
//! Each glyph is seven rows of five bits, the leftmost pixel in bit 4.

use image::{Rgb, RgbImage};

/// Glyph width and height in font pixels; glyphs advance by one more column.
pub(crate) const GLYPH: (u32, u32) = (5, 7);

fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x0A, 0x04, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        '-' => [0x00, 0x00, 0x00, 0x0E, 0x00, 0x00, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '[' => [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E],
        ']' => [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '|' => [0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        '<' => [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        '^' => [0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00],
        '*' => [0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        ' ' => [0; 7],
        _ => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04], // '?'
    }
}

/// The size in pixels of `text` drawn at `scale` pixels per font pixel.
pub(crate) fn text_size(text: &str, scale: u32) -> (u32, u32) {
    let n = text.chars().count() as u32;
    let width = if n == 0 { 0 } else { n * (GLYPH.0 + 1) - 1 };
    (width * scale, GLYPH.1 * scale)
}

/// Draws `text` with its top-left corner at `(x, y)`; pixels outside the image are
/// skipped.
pub(crate) fn draw_text(
    img: &mut RgbImage,
    x: i64,
    y: i64,
    text: &str,
    scale: u32,
    colour: Rgb<u8>,
) {
    let s = i64::from(scale);
    for (k, c) in text.chars().enumerate() {
        let left = x + k as i64 * i64::from(GLYPH.0 + 1) * s;
        for (row, bits) in glyph(c).iter().enumerate() {
            for col in 0..GLYPH.0 {
                if bits & (0x10 >> col) == 0 {
                    continue;
                }
                for dy in 0..s {
                    for dx in 0..s {
                        let px = left + i64::from(col) * s + dx;
                        let py = y + row as i64 * s + dy;
                        if px >= 0
                            && py >= 0
                            && (px as u64) < u64::from(img.width())
                            && (py as u64) < u64::from(img.height())
                        {
                            img.put_pixel(px as u32, py as u32, colour);
                        }
                    }
                }
            }
        }
    }
}

/// Draws `text` turned a quarter left (reading upwards), its bounding box's top-left
/// corner at `(x, y)`: for vertical axis labels.
pub(crate) fn draw_text_up(
    img: &mut RgbImage,
    x: i64,
    y: i64,
    text: &str,
    scale: u32,
    colour: Rgb<u8>,
) {
    let (w, h) = text_size(text, scale);
    let mut flat = RgbImage::from_pixel(w.max(1), h.max(1), Rgb([0, 0, 0]));
    draw_text(&mut flat, 0, 0, text, scale, Rgb([255, 255, 255]));
    for (fx, fy, p) in flat.enumerate_pixels() {
        if p.0[0] == 0 {
            continue;
        }
        // Turning left: the text's x runs up the image, its y to the right.
        let px = x + i64::from(fy);
        let py = y + i64::from(w) - 1 - i64::from(fx);
        if px >= 0
            && py >= 0
            && (px as u64) < u64::from(img.width())
            && (py as u64) < u64::from(img.height())
        {
            img.put_pixel(px as u32, py as u32, colour);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(img: &RgbImage) -> usize {
        img.pixels().filter(|p| p.0 != [0, 0, 0]).count()
    }

    #[test]
    fn every_glyph_in_use_is_distinct_and_fits_five_columns() {
        let chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,-+/%=()[]:|<>^*_";
        let mut seen = std::collections::HashSet::new();
        for c in chars.chars() {
            let g = glyph(c);
            assert!(g.iter().all(|row| *row < 0x20), "{c} is wider than 5");
            assert!(g.iter().any(|row| *row != 0), "{c} is blank");
            assert!(seen.insert(g), "{c} looks like another glyph");
        }
        assert_eq!(glyph('a'), glyph('A'));
        assert_eq!(glyph(' '), [0; 7]);
    }

    #[test]
    fn text_is_drawn_inside_its_measured_box() {
        let (w, h) = text_size("T=1.5", 2);
        assert_eq!((w, h), ((5 * 6 - 1) * 2, 14));
        let mut img = RgbImage::new(w + 4, h + 4);
        draw_text(&mut img, 2, 2, "T=1.5", 2, Rgb([255, 255, 255]));
        assert!(lit(&img) > 50);
        for (x, y, p) in img.enumerate_pixels() {
            if p.0 != [0, 0, 0] {
                assert!((2..2 + w).contains(&x) && (2..2 + h).contains(&y));
            }
        }
        // Half off the image: no panic, fewer pixels.
        let mut edge = RgbImage::new(w, h);
        draw_text(
            &mut edge,
            -(w as i64) / 2,
            0,
            "T=1.5",
            2,
            Rgb([255, 255, 255]),
        );
        assert!(lit(&edge) < lit(&img));
    }

    #[test]
    fn turned_text_swaps_width_and_height() {
        let (w, h) = text_size("Z/A", 1);
        let mut img = RgbImage::new(h, w);
        draw_text_up(&mut img, 0, 0, "Z/A", 1, Rgb([255, 0, 0]));
        let mut flat = RgbImage::new(w, h);
        draw_text(&mut flat, 0, 0, "Z/A", 1, Rgb([255, 0, 0]));
        assert_eq!(lit(&img), lit(&flat));
    }
}
