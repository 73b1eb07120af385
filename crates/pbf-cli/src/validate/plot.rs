//! Line plots and heat maps drawn with the `image` crate: axes with ticks and labels
//! in the bitmap font, one colour per series, a legend.

use image::{Rgb, RgbImage};

use super::font::{GLYPH, draw_text, draw_text_up, text_size};

const WHITE: Rgb<u8> = Rgb([255, 255, 255]);
const INK: Rgb<u8> = Rgb([30, 30, 30]);
const GRID: Rgb<u8> = Rgb([225, 225, 225]);

/// Distinct colours for series, in order.
pub(crate) const PALETTE: [Rgb<u8>; 8] = [
    Rgb([31, 119, 180]),
    Rgb([214, 39, 40]),
    Rgb([44, 160, 44]),
    Rgb([255, 127, 14]),
    Rgb([148, 103, 189]),
    Rgb([140, 86, 75]),
    Rgb([23, 190, 207]),
    Rgb([127, 127, 127]),
];

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// A polyline through the points.
    Line,
    /// A dashed polyline.
    Dashed,
    /// A marker at each point.
    Markers,
    /// A polyline with a marker at each point.
    LineMarkers,
}

/// One set of points.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub colour: Rgb<u8>,
    pub style: Style,
}

/// An x-y plot.
#[derive(Debug, Clone, Default)]
pub(crate) struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// Fixed ranges; otherwise the data's, with a margin.
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    pub series: Vec<Series>,
}

const SCALE: u32 = 2;

/// Ticks for `lo..hi`: about five round values (1, 2 or 5 times a power of ten), or the
/// powers of ten on a log axis.
pub(crate) fn ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    if log {
        let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        return (a..=b)
            .map(|e| 10f64.powi(e))
            .filter(|t| *t >= lo * 0.999 && *t <= hi * 1.001)
            .collect();
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick value as short text.
pub(crate) fn tick_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        if (m - m.round()).abs() < 1e-9 {
            return format!("{}E{e}", m.round());
        }
        return format!("{m:.1}E{e}");
    }
    let mut s = format!("{v:.4}");
    while s.contains('.') && (s.ends_with('0') || s.ends_with('.')) {
        s.pop();
    }
    s
}

impl LinePlot {
    fn range(&self, axis: usize) -> (f64, f64) {
        let fixed = if axis == 0 {
            self.x_range
        } else {
            self.y_range
        };
        let log = if axis == 0 { self.log_x } else { self.log_y };
        if let Some(r) = fixed {
            return r;
        }
        let values = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .map(|p| if axis == 0 { p.0 } else { p.1 })
            .filter(|v| v.is_finite() && (!log || *v > 0.0));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return if log { (0.1, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            let (a, b) = (lo.log10().floor(), hi.log10().ceil());
            let b = if b <= a { a + 1.0 } else { b };
            return (10f64.powf(a), 10f64.powf(b));
        }
        if hi - lo < 1e-12 * lo.abs().max(1.0) {
            return (lo - 1.0, hi + 1.0);
        }
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    }

    /// Draws the plot at `width x height` pixels.
    pub(crate) fn render(&self, width: u32, height: u32) -> RgbImage {
        let mut img = RgbImage::from_pixel(width, height, WHITE);
        let (x_lo, x_hi) = self.range(0);
        let (y_lo, y_hi) = self.range(1);
        let y_ticks = ticks(y_lo, y_hi, self.log_y);
        let label_w = y_ticks
            .iter()
            .map(|t| text_size(&tick_label(*t), SCALE).0)
            .max()
            .unwrap_or(0);
        let glyph_h = i64::from(GLYPH.1 * SCALE);
        let left = 16 + glyph_h + 10 + i64::from(label_w) + 8;
        let right = i64::from(width) - 20;
        let top = 16 + glyph_h + 14;
        let bottom = i64::from(height) - (16 + 2 * glyph_h + 16);
        let map = |v: f64, lo: f64, hi: f64, log: bool| -> f64 {
            if log {
                (v.max(1e-300).log10() - lo.log10()) / (hi.log10() - lo.log10())
            } else {
                (v - lo) / (hi - lo)
            }
        };
        let px = |x: f64| left as f64 + map(x, x_lo, x_hi, self.log_x) * (right - left) as f64;
        let py = |y: f64| bottom as f64 - map(y, y_lo, y_hi, self.log_y) * (bottom - top) as f64;

        // Grid, ticks and labels.
        for t in ticks(x_lo, x_hi, self.log_x) {
            let x = px(t).round() as i64;
            line(&mut img, (x, top), (x, bottom), GRID);
            line(&mut img, (x, bottom), (x, bottom + 5), INK);
            let label = tick_label(t);
            let w = i64::from(text_size(&label, SCALE).0);
            draw_text(&mut img, x - w / 2, bottom + 9, &label, SCALE, INK);
        }
        for t in &y_ticks {
            let y = py(*t).round() as i64;
            line(&mut img, (left, y), (right, y), GRID);
            line(&mut img, (left - 5, y), (left, y), INK);
            let label = tick_label(*t);
            let w = i64::from(text_size(&label, SCALE).0);
            draw_text(&mut img, left - 8 - w, y - glyph_h / 2, &label, SCALE, INK);
        }
        rectangle(&mut img, (left, top), (right, bottom), INK);
        let (tw, _) = text_size(&self.title, SCALE);
        draw_text(
            &mut img,
            (i64::from(width) - i64::from(tw)) / 2,
            12,
            &self.title,
            SCALE,
            INK,
        );
        let (xw, _) = text_size(&self.x_label, SCALE);
        draw_text(
            &mut img,
            (left + right - i64::from(xw)) / 2,
            i64::from(height) - 12 - glyph_h,
            &self.x_label,
            SCALE,
            INK,
        );
        let (yw, _) = text_size(&self.y_label, SCALE);
        draw_text_up(
            &mut img,
            12,
            (top + bottom - i64::from(yw)) / 2,
            &self.y_label,
            SCALE,
            INK,
        );

        // Data, clipped to the frame.
        let clip = (left, top, right, bottom);
        for s in &self.series {
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|(x, y)| {
                    x.is_finite()
                        && y.is_finite()
                        && (!self.log_x || *x > 0.0)
                        && (!self.log_y || *y > 0.0)
                })
                .map(|(x, y)| (px(*x), py(*y)))
                .collect();
            if matches!(s.style, Style::Line | Style::Dashed | Style::LineMarkers) {
                let mut travelled = 0.0;
                for w in pts.windows(2) {
                    thick_segment(
                        &mut img,
                        w[0],
                        w[1],
                        s.colour,
                        clip,
                        s.style == Style::Dashed,
                        &mut travelled,
                    );
                }
            }
            if matches!(s.style, Style::Markers | Style::LineMarkers) {
                for p in &pts {
                    marker(&mut img, *p, s.colour, clip);
                }
            }
        }

        // Legend, top left inside the frame.
        let mut y = top + 8;
        let row = glyph_h + 6;
        let legend_w = self
            .series
            .iter()
            .map(|s| text_size(&s.label, SCALE).0)
            .max()
            .unwrap_or(0);
        if !self.series.is_empty() {
            let box_right = left + 8 + 30 + 8 + i64::from(legend_w) + 8;
            let box_bottom = y + row * self.series.len() as i64 + 2;
            fill(
                &mut img,
                (left + 4, top + 4),
                (box_right, box_bottom),
                WHITE,
            );
            rectangle(&mut img, (left + 4, top + 4), (box_right, box_bottom), GRID);
        }
        for s in &self.series {
            let mid = (y + glyph_h / 2) as f64;
            let a = ((left + 10) as f64, mid);
            let b = ((left + 36) as f64, mid);
            let full = (0, 0, i64::from(width), i64::from(height));
            if s.style != Style::Markers {
                let mut t = 0.0;
                thick_segment(
                    &mut img,
                    a,
                    b,
                    s.colour,
                    full,
                    s.style == Style::Dashed,
                    &mut t,
                );
            }
            if matches!(s.style, Style::Markers | Style::LineMarkers) {
                marker(&mut img, ((left + 23) as f64, mid), s.colour, full);
            }
            draw_text(&mut img, left + 46, y, &s.label, SCALE, INK);
            y += row;
        }
        img
    }
}

fn put(img: &mut RgbImage, x: i64, y: i64, c: Rgb<u8>) {
    if x >= 0
        && y >= 0
        && (x as u64) < u64::from(img.width())
        && (y as u64) < u64::from(img.height())
    {
        img.put_pixel(x as u32, y as u32, c);
    }
}

fn line(img: &mut RgbImage, a: (i64, i64), b: (i64, i64), c: Rgb<u8>) {
    let n = (b.0 - a.0).abs().max((b.1 - a.1).abs()).max(1);
    for k in 0..=n {
        let x = a.0 + (b.0 - a.0) * k / n;
        let y = a.1 + (b.1 - a.1) * k / n;
        put(img, x, y, c);
    }
}

fn rectangle(img: &mut RgbImage, a: (i64, i64), b: (i64, i64), c: Rgb<u8>) {
    line(img, a, (b.0, a.1), c);
    line(img, (b.0, a.1), b, c);
    line(img, b, (a.0, b.1), c);
    line(img, (a.0, b.1), a, c);
}

fn fill(img: &mut RgbImage, a: (i64, i64), b: (i64, i64), c: Rgb<u8>) {
    for y in a.1..=b.1 {
        for x in a.0..=b.0 {
            put(img, x, y, c);
        }
    }
}

fn inside(p: (f64, f64), clip: (i64, i64, i64, i64)) -> bool {
    p.0 >= clip.0 as f64 && p.0 <= clip.2 as f64 && p.1 >= clip.1 as f64 && p.1 <= clip.3 as f64
}

/// A segment two pixels wide; dashes of 8 on, 5 off along the whole polyline.
fn thick_segment(
    img: &mut RgbImage,
    a: (f64, f64),
    b: (f64, f64),
    c: Rgb<u8>,
    clip: (i64, i64, i64, i64),
    dashed: bool,
    travelled: &mut f64,
) {
    let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
    let n = (len * 2.0).ceil().max(1.0) as usize;
    for k in 0..=n {
        let t = k as f64 / n as f64;
        let p = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
        let along = *travelled + t * len;
        if dashed && along % 13.0 > 8.0 {
            continue;
        }
        if !inside(p, clip) {
            continue;
        }
        let (x, y) = (p.0.round() as i64, p.1.round() as i64);
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            put(img, x + dx, y + dy, c);
        }
    }
    *travelled += len;
}

/// A filled circle of radius 4 with a dark rim.
fn marker(img: &mut RgbImage, p: (f64, f64), c: Rgb<u8>, clip: (i64, i64, i64, i64)) {
    if !inside(p, clip) {
        return;
    }
    let (x, y) = (p.0.round() as i64, p.1.round() as i64);
    for dy in -5i64..=5 {
        for dx in -5i64..=5 {
            let r2 = dx * dx + dy * dy;
            if r2 <= 16 {
                put(img, x + dx, y + dy, c);
            } else if r2 <= 25 {
                put(img, x + dx, y + dy, INK);
            }
        }
    }
}

/// A table of values as coloured cells: rows top to bottom, columns left to right,
/// each cell coloured by its value on a log scale from `range.0` (blue) to `range.1`
/// (red); cells marked `flagged` get a heavy black cross. NaN cells are black,
/// `missing` ones light grey.
#[derive(Debug, Clone)]
pub(crate) struct HeatMap {
    pub title: String,
    pub row_title: String,
    pub column_title: String,
    pub row_labels: Vec<String>,
    pub column_labels: Vec<String>,
    /// `values[row][column]`.
    pub values: Vec<Vec<f64>>,
    pub flagged: Vec<Vec<bool>>,
    /// Cells not measured, drawn grey.
    pub missing: Vec<Vec<bool>>,
    pub range: (f64, f64),
    pub colour_label: String,
}

/// A blue-white-red ramp for `t` in 0..1.
pub(crate) fn ramp(t: f64) -> Rgb<u8> {
    let t = t.clamp(0.0, 1.0);
    let (a, b, u) = if t < 0.5 {
        ([49.0, 104.0, 180.0], [247.0, 247.0, 247.0], t / 0.5)
    } else {
        ([247.0, 247.0, 247.0], [200.0, 30.0, 40.0], (t - 0.5) / 0.5)
    };
    Rgb(core::array::from_fn(|k| {
        (a[k] + u * (b[k] - a[k])).round() as u8
    }))
}

impl HeatMap {
    fn fraction(&self, v: f64) -> f64 {
        let (lo, hi) = (self.range.0.max(1e-300), self.range.1.max(1e-300));
        (v.max(1e-300).log10() - lo.log10()) / (hi.log10() - lo.log10())
    }

    /// Draws the map; `cell` is the cell size in pixels.
    pub(crate) fn render(&self, cell: (u32, u32)) -> RgbImage {
        let glyph_h = i64::from(GLYPH.1 * SCALE);
        let small = 1;
        let row_label_w = self
            .row_labels
            .iter()
            .map(|l| text_size(l, SCALE).0)
            .max()
            .unwrap_or(0);
        let rows = self.row_labels.len() as i64;
        let columns = self.column_labels.len() as i64;
        let column_label_h = self
            .column_labels
            .iter()
            .map(|l| text_size(l, SCALE).0)
            .max()
            .unwrap_or(0);
        let left = 16 + i64::from(row_label_w.max(text_size(&self.row_title, SCALE).0)) + 10;
        let top = 16 + glyph_h + 12 + glyph_h + 10 + i64::from(column_label_h) + 8;
        let (cw, ch) = (i64::from(cell.0), i64::from(cell.1));
        let legend_top = top + rows * ch + 24;
        let width = (left + columns * cw + 20)
            .max(i64::from(text_size(&self.title, SCALE).0) + 40)
            .max(left + i64::from(text_size(&self.colour_label, SCALE).0) + 20)
            .max(left + (columns * cw).clamp(300, 600) + 40);
        let height = legend_top + 20 + glyph_h + 12 + glyph_h + 16;
        let mut img = RgbImage::from_pixel(width as u32, height as u32, WHITE);
        let (tw, _) = text_size(&self.title, SCALE);
        draw_text(
            &mut img,
            (width - i64::from(tw)) / 2,
            12,
            &self.title,
            SCALE,
            INK,
        );
        draw_text(
            &mut img,
            left,
            16 + glyph_h + 12,
            &self.column_title,
            SCALE,
            INK,
        );
        draw_text(&mut img, 16, top - glyph_h - 6, &self.row_title, SCALE, INK);
        for (c, label) in self.column_labels.iter().enumerate() {
            let x = left + c as i64 * cw + (cw - glyph_h) / 2;
            draw_text_up(
                &mut img,
                x,
                top - 6 - i64::from(text_size(label, SCALE).0),
                label,
                SCALE,
                INK,
            );
        }
        for (r, label) in self.row_labels.iter().enumerate() {
            let y = top + r as i64 * ch + (ch - glyph_h) / 2;
            draw_text(&mut img, 16, y, label, SCALE, INK);
        }
        for r in 0..rows {
            for c in 0..columns {
                let v = self.values[r as usize][c as usize];
                let colour = if self.missing[r as usize][c as usize] {
                    GRID
                } else if v.is_finite() {
                    ramp(self.fraction(v))
                } else {
                    INK
                };
                let a = (left + c * cw, top + r * ch);
                let b = (a.0 + cw - 1, a.1 + ch - 1);
                fill(&mut img, a, b, colour);
                rectangle(&mut img, a, b, WHITE);
                if self.flagged[r as usize][c as usize] {
                    for w in -1..=1 {
                        line(
                            &mut img,
                            (a.0 + 4 + w, a.1 + 4),
                            (b.0 - 4 + w, b.1 - 4),
                            INK,
                        );
                        line(
                            &mut img,
                            (a.0 + 4 + w, b.1 - 4),
                            (b.0 - 4 + w, a.1 + 4),
                            INK,
                        );
                    }
                }
            }
        }
        // Colour bar with decade ticks.
        let bar_w = (columns * cw).clamp(300, 600);
        for k in 0..bar_w {
            let t = k as f64 / (bar_w - 1) as f64;
            let c = ramp(t);
            line(
                &mut img,
                (left + k, legend_top),
                (left + k, legend_top + 16),
                c,
            );
        }
        rectangle(
            &mut img,
            (left, legend_top),
            (left + bar_w - 1, legend_top + 16),
            INK,
        );
        for t in ticks(self.range.0, self.range.1, true) {
            let x = left + (self.fraction(t) * (bar_w - 1) as f64).round() as i64;
            line(&mut img, (x, legend_top + 16), (x, legend_top + 21), INK);
            let label = tick_label(t);
            let w = i64::from(text_size(&label, SCALE).0);
            draw_text(&mut img, x - w / 2, legend_top + 24, &label, SCALE, INK);
        }
        draw_text(
            &mut img,
            left,
            legend_top + 24 + glyph_h + 8,
            &self.colour_label,
            SCALE * small,
            INK,
        );
        img
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(ticks(0.0, 10.0, false), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.13, 0.91, false);
        assert!(t.iter().all(|v| (0.13..=0.91).contains(v)));
        assert!(t.len() >= 3 && t.len() <= 8);
        assert_eq!(ticks(0.05, 200.0, true), [0.1, 1.0, 10.0, 100.0]);
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(100.0), "100");
        assert_eq!(tick_label(1e-5), "1E-5");
    }

    #[test]
    fn a_plot_draws_each_series_in_its_colour() {
        let plot = LinePlot {
            title: "TEST".into(),
            x_label: "X".into(),
            y_label: "Y".into(),
            series: vec![
                Series {
                    label: "A".into(),
                    points: vec![(0.0, 0.0), (1.0, 1.0)],
                    colour: PALETTE[0],
                    style: Style::Line,
                },
                Series {
                    label: "B".into(),
                    points: vec![(0.5, 0.2)],
                    colour: PALETTE[1],
                    style: Style::Markers,
                },
            ],
            ..Default::default()
        };
        let img = plot.render(400, 300);
        assert_eq!(img.dimensions(), (400, 300));
        let count = |c: Rgb<u8>| img.pixels().filter(|p| **p == c).count();
        assert!(count(PALETTE[0]) > 300, "line pixels {}", count(PALETTE[0]));
        assert!(count(PALETTE[1]) > 40);
        // A log axis skips non-positive values without panicking.
        let log = LinePlot {
            log_y: true,
            ..plot
        };
        assert_eq!(log.render(300, 200).dimensions(), (300, 200));
    }

    #[test]
    fn a_heat_map_colours_cells_by_value_and_crosses_flagged_ones() {
        let map = HeatMap {
            title: "MAP".into(),
            row_title: "ROWS".into(),
            column_title: "COLUMNS".into(),
            row_labels: vec!["R1".into(), "R2".into()],
            column_labels: vec!["C1".into(), "C2".into()],
            values: vec![vec![0.01, 1.0], vec![100.0, f64::NAN]],
            flagged: vec![vec![false, false], vec![true, true]],
            missing: vec![vec![false, false], vec![false, false]],
            range: (0.01, 100.0),
            colour_label: "V".into(),
        };
        let img = map.render((40, 30));
        let count = |c: Rgb<u8>| img.pixels().filter(|p| **p == c).count();
        assert!(count(ramp(0.0)) > 500, "the low cell is blue");
        assert!(count(ramp(1.0)) > 300, "the high cell is red");
        assert_eq!(ramp(0.5), Rgb([247, 247, 247]));
    }
}
