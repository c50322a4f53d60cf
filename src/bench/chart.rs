//! What the bench, sweep and reproduce plots share about colour and legends:
//!
//! - [`SCHEME_COLOURS`]: a colour means a scheme, in every plot of every report (series index =
//!   scheme index). Nothing else is drawn in these colours.
//! - [`measure_style`]: bars of measures that are not schemes (mean/p95/p99, read/write/peak,
//!   one mutex each) get grey shades with hatching instead, so they are never read as schemes.
//! - [`draw_legend`]: the legend is drawn beside or below the plot, in its own area, so it
//!   never covers a bar, a value or a line (and the axes need no headroom for it).
//! - [`desc_font`]: an axis description shrinks to fit the axis it labels (never cut off).
//!
//! Drawing here is in pixels of a plotters drawing area. Bounds: one element per legend entry,
//! a few hatch lines per bar.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Result;

use super::plot::plot_error;

/// The scheme colours (Tableau 10), by scheme index: the same index, the same colour in every
/// plot of a report.
pub const SCHEME_COLOURS: &[RGBColor] = &[
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The colour of scheme `index`.
#[must_use]
pub fn scheme_colour(index: usize) -> RGBColor {
    SCHEME_COLOURS[index % SCHEME_COLOURS.len()]
}

/// The grey shades of measure bars, light to dark (none of them a [`SCHEME_COLOURS`] grey).
pub const MEASURE_SHADES: &[RGBColor] = &[
    RGBColor(0xe4, 0xe4, 0xe4),
    RGBColor(0xa8, 0xa8, 0xa8),
    RGBColor(0x55, 0x55, 0x55),
    RGBColor(0x26, 0x26, 0x26),
];

/// A fill pattern drawn over a bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hatch {
    /// Plain fill.
    None,
    /// Rising diagonals.
    Slash,
    /// Falling diagonals.
    Backslash,
    /// Both diagonals.
    Cross,
    /// Horizontal lines.
    Horizontal,
}

/// The hatch patterns of measure bars, in order.
const HATCHES: &[Hatch] = &[
    Hatch::None,
    Hatch::Slash,
    Hatch::Backslash,
    Hatch::Cross,
    Hatch::Horizontal,
];

/// How a bar is drawn: its fill and the pattern over it (outlined in black).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarStyle {
    /// Fill colour.
    pub fill: RGBColor,
    /// Pattern over the fill.
    pub hatch: Hatch,
}

/// The style of measure series `index` (a bar series that is not a scheme): shade and hatch
/// both change with the index, so the first 20 series differ from each other.
#[must_use]
pub fn measure_style(index: usize) -> BarStyle {
    BarStyle {
        fill: MEASURE_SHADES[index % MEASURE_SHADES.len()],
        hatch: HATCHES[index % HATCHES.len()],
    }
}

/// Pixels between hatch lines.
const HATCH_SPACING: i32 = 6;

/// Black on a light fill, white on a dark one.
fn ink_on(fill: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = fill;
    let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
    if luma > 110.0 { BLACK } else { WHITE }
}

/// The hatch lines of `hatch` inside the pixel rectangle `(x0, y0)..(x1, y1)` (x0 < x1,
/// y0 < y1), each clipped to it.
fn hatch_lines(hatch: Hatch, (x0, y0): (i32, i32), (x1, y1): (i32, i32)) -> Vec<[(i32, i32); 2]> {
    let mut lines = Vec::new();
    let rising = |lines: &mut Vec<[(i32, i32); 2]>| {
        // x + y = c.
        let mut c = x0 + y0 + HATCH_SPACING;
        while c < x1 + y1 {
            let from = x0.max(c - y1);
            let to = x1.min(c - y0);
            if from < to {
                lines.push([(from, c - from), (to, c - to)]);
            }
            c += HATCH_SPACING;
        }
    };
    let falling = |lines: &mut Vec<[(i32, i32); 2]>| {
        // y = x + c.
        let mut c = y0 - x1 + HATCH_SPACING;
        while c < y1 - x0 {
            let from = x0.max(y0 - c);
            let to = x1.min(y1 - c);
            if from < to {
                lines.push([(from, from + c), (to, to + c)]);
            }
            c += HATCH_SPACING;
        }
    };
    match hatch {
        Hatch::None => {}
        Hatch::Slash => rising(&mut lines),
        Hatch::Backslash => falling(&mut lines),
        Hatch::Cross => {
            rising(&mut lines);
            falling(&mut lines);
        }
        Hatch::Horizontal => {
            let mut y = y0 + HATCH_SPACING / 2;
            while y < y1 {
                lines.push([(x0, y), (x1, y)]);
                y += HATCH_SPACING;
            }
        }
    }
    lines
}

/// Draws a bar (or legend swatch) of `style` over the pixel rectangle with corners `a` and `b`
/// of `area`: fill, hatch, black outline.
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    style: BarStyle,
) -> Result<()> {
    let low = (a.0.min(b.0), a.1.min(b.1));
    let high = (a.0.max(b.0), a.1.max(b.1));
    area.draw(&Rectangle::new([low, high], style.fill.filled()))
        .map_err(plot_error)?;
    let ink = ink_on(style.fill);
    for line in hatch_lines(style.hatch, low, high) {
        area.draw(&PathElement::new(line.to_vec(), ink.stroke_width(1)))
            .map_err(plot_error)?;
    }
    area.draw(&Rectangle::new([low, high], BLACK.stroke_width(1)))
        .map_err(plot_error)?;
    Ok(())
}

/// What a legend entry shows before its text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// A line of a colour, solid or dashed (with its point marker when `marker` is set).
    Line {
        /// Colour.
        colour: RGBColor,
        /// Dashed.
        dashed: bool,
        /// Also the series' marker: a filled square (solid) or a hollow one (dashed).
        marker: bool,
    },
    /// A marker alone (series drawn without lines): filled or hollow square.
    Marker {
        /// Colour.
        colour: RGBColor,
        /// Hollow.
        hollow: bool,
    },
    /// A bar swatch.
    Bar(BarStyle),
}

/// One legend line: a mark and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The text.
    pub name: String,
    /// The mark before it.
    pub mark: Mark,
}

/// Where the legend's entries go in its area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegendLayout {
    /// One entry per line, from the top (a legend beside the plot).
    Column,
    /// Entries left to right in cells of this many pixels, wrapping (a legend below the plot).
    Rows(u32),
}

/// Pixels per legend line.
pub const LEGEND_LINE: u32 = 19;

/// Rows a [`LegendLayout::Rows`] legend of `entries` entries takes in `width` pixels.
#[must_use]
pub fn legend_rows(entries: usize, width: u32, cell: u32) -> u32 {
    let per_row = (width / cell.max(1)).max(1) as usize;
    entries.div_ceil(per_row) as u32
}

/// Draws `entries` into `area` (its own area: beside or below the plot).
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    layout: LegendLayout,
) -> Result<()> {
    let (width, _) = area.dim_in_pixel();
    let text_style =
        TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (index, entry) in entries.iter().enumerate() {
        let (x, y) = match layout {
            LegendLayout::Column => (4, pixels(LEGEND_LINE as usize * index) + 10),
            LegendLayout::Rows(cell) => {
                let per_row = (width / cell.max(1)).max(1) as usize;
                (
                    pixels(cell as usize * (index % per_row)) + 4,
                    pixels(LEGEND_LINE as usize * (index / per_row)) + 10,
                )
            }
        };
        draw_mark(area, entry.mark, (x, y))?;
        area.draw(&Text::new(
            entry.name.clone(),
            (x + 26, y),
            text_style.clone(),
        ))
        .map_err(plot_error)?;
    }
    Ok(())
}

/// A pixel offset as plotters' `i32` (saturating: far off the drawing is as good as off it).
fn pixels(offset: usize) -> i32 {
    i32::try_from(offset).unwrap_or(i32::MAX / 2)
}

/// A legend mark 20 pixels wide, centred vertically on `y`, from `x`.
fn draw_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    mark: Mark,
    (x, y): (i32, i32),
) -> Result<()> {
    let square = |colour: RGBColor, hollow: bool, half: i32| {
        let style = if hollow {
            colour.stroke_width(2)
        } else {
            colour.filled()
        };
        Rectangle::new(
            [(x + 10 - half, y - half), (x + 10 + half, y + half)],
            style,
        )
    };
    match mark {
        Mark::Line {
            colour,
            dashed,
            marker,
        } => {
            let pieces: Vec<[(i32, i32); 2]> = if dashed {
                vec![
                    [(x, y), (x + 5, y)],
                    [(x + 8, y), (x + 12, y)],
                    [(x + 15, y), (x + 20, y)],
                ]
            } else {
                vec![[(x, y), (x + 20, y)]]
            };
            for piece in pieces {
                area.draw(&PathElement::new(piece.to_vec(), colour.stroke_width(2)))
                    .map_err(plot_error)?;
            }
            if marker {
                area.draw(&square(colour, dashed, 3)).map_err(plot_error)?;
            }
        }
        Mark::Marker { colour, hollow } => {
            area.draw(&square(colour, hollow, 4)).map_err(plot_error)?;
        }
        Mark::Bar(style) => draw_bar(area, (x, y - 6), (x + 20, y + 6), style)?,
    }
    Ok(())
}

/// The font of the axes' tick labels.
pub const TICK_FONT: (&str, u32) = ("sans-serif", 14);

/// The font of an axis description of `text` along an axis `length` pixels long: 15 points,
/// smaller (down to 9) when the text would not fit, so it is never cut off. Widths are
/// estimated at 0.6 em per character (sans-serif is narrower on average).
#[must_use]
pub fn desc_font(text: &str, length: u32) -> (&'static str, f64) {
    let chars = text.chars().count().max(1) as f64;
    // plotters draws a font of n points n / 1.24 pixels high.
    let fits = f64::from(length.saturating_sub(8)) / (chars * 0.6) * 1.24;
    ("sans-serif", fits.clamp(9.0, 15.0).floor())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_styles_differ_and_are_not_scheme_colours() {
        for a in 0..20 {
            assert!(!SCHEME_COLOURS.contains(&measure_style(a).fill));
            for b in 0..a {
                assert_ne!(measure_style(a), measure_style(b), "{a} and {b}");
            }
        }
    }

    #[test]
    fn hatch_lines_stay_inside_the_bar() {
        let (low, high) = ((10, 20), (40, 100));
        for hatch in HATCHES {
            let lines = hatch_lines(*hatch, low, high);
            assert_eq!(lines.is_empty(), *hatch == Hatch::None, "{hatch:?}");
            for line in lines {
                for (x, y) in line {
                    assert!((low.0..=high.0).contains(&x) && (low.1..=high.1).contains(&y));
                }
            }
        }
        // Diagonals are at 45 degrees.
        for [(xa, ya), (xb, yb)] in hatch_lines(Hatch::Slash, low, high) {
            assert_eq!(xb - xa, ya - yb);
        }
    }

    #[test]
    fn long_descriptions_shrink_to_fit() {
        assert!((desc_font("ms", 300).1 - 15.0).abs() < f64::EPSILON);
        let long = "x".repeat(45);
        let (_, size) = desc_font(&long, 250);
        assert!((9.0..15.0).contains(&size));
        assert!(45.0 * 0.6 * size / 1.24 <= 242.0 + 1e-9);
        // Too long to fit even at the smallest size: the smallest size (a longer text is the
        // caller's to shorten).
        assert!((desc_font(&"x".repeat(200), 250).1 - 9.0).abs() < f64::EPSILON);
    }

    #[test]
    fn legend_rows_wrap() {
        assert_eq!(legend_rows(6, 640, 160), 2);
        assert_eq!(legend_rows(4, 640, 160), 1);
        assert_eq!(legend_rows(0, 640, 160), 0);
    }
}
