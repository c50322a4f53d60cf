//! Heat maps of a two-parameter sweep ([`super::grid`]): one per scheme after the first, its
//! throughput ratio to the first scheme in each cell of the grid (rows: the outer parameter,
//! bottom to top; columns: the inner one), the value written in the cell. Colour is diverging
//! around 1 on a log scale: white is a tie, blue a gain, red a loss, the darkest shade at the
//! largest |log ratio| of the map; a cell with no value is grey and says `-`. Drawn with
//! `plotters`' SVG backend into a string, like the sweep's line plots, so report.html stays
//! self-contained.
//!
//! Bounds: one rectangle and one label per cell.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::metrics::METRICS;
use super::results::SweepResults;
use crate::bench::chart::{TICK_FONT, desc_font};
use crate::bench::plot::plot_error;
use crate::error::Result;

/// Width and height of the map in pixels, and the strip under it for the colour key.
const SIZE: (u32, u32) = (640, 380);
const KEY_HEIGHT: u32 = 30;

const GAIN: RGBColor = RGBColor(0x21, 0x66, 0xac);
const LOSS: RGBColor = RGBColor(0xb2, 0x18, 0x2b);
const MISSING: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);

/// The colour of `value` on a scale whose darkest shade is at |ln| = `span`; and whether text
/// on it should be white.
fn shade(value: f64, span: f64) -> (RGBColor, bool) {
    if !(value.is_finite() && value > 0.0) {
        return (MISSING, false);
    }
    let strength = if span > 0.0 {
        (value.ln().abs() / span).min(1.0)
    } else {
        0.0
    };
    let towards = if value >= 1.0 { GAIN } else { LOSS };
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * strength).round() as u8;
    (
        RGBColor(mix(towards.0), mix(towards.1), mix(towards.2)),
        strength > 0.6,
    )
}

/// A heat map of `values` (`values[r][c]`: row `rows[r]`, column `columns[c]`).
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn heat_map(
    title: &str,
    row_param: &str,
    column_param: &str,
    rows: &[String],
    columns: &[String],
    values: &[Vec<Option<f64>>],
) -> Result<String> {
    let finite: Vec<f64> = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let span = finite.iter().map(|v| v.ln().abs()).fold(0.0, f64::max);
    let (low, high) = finite
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (SIZE.0, SIZE.1 + KEY_HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (area, key) = root.split_vertically(SIZE.1);
        let (width, height) = (columns.len().max(1), rows.len().max(1));
        let mut chart = ChartBuilder::on(&area)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..width as f64 - 0.5, -0.5..height as f64 - 0.5)
            .map_err(plot_error)?;
        let label_of = |labels: &[String], x: f64| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                labels.get(index as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let x_labels = |x: &f64| label_of(columns, *x);
        let y_labels = |y: &f64| label_of(rows, *y);
        let y_desc = desc_font(row_param, chart.plotting_area().dim_in_pixel().1);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(width * 2 + 1)
            .y_labels(height * 2 + 1)
            .x_label_formatter(&x_labels)
            .y_label_formatter(&y_labels)
            .x_desc(column_param)
            .y_desc(row_param)
            .axis_desc_style(y_desc)
            .label_style(TICK_FONT)
            .draw()
            .map_err(plot_error)?;
        let mut cells = Vec::new();
        let mut texts = Vec::new();
        let centred = TextStyle::from(("sans-serif", 14).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center));
        for (r, row) in values.iter().enumerate() {
            for (c, value) in row.iter().enumerate() {
                let (x, y) = (c as f64, r as f64);
                let (colour, white_text) = shade(value.unwrap_or(f64::NAN), span);
                cells.push(Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    colour.filled(),
                ));
                cells.push(Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    WHITE.stroke_width(1),
                ));
                let text = value.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
                let style = if white_text {
                    centred.clone().color(&WHITE)
                } else {
                    centred.clone().color(&BLACK)
                };
                texts.push(Text::new(text, (x, y), style));
            }
        }
        chart.draw_series(cells).map_err(plot_error)?;
        chart.draw_series(texts).map_err(plot_error)?;
        let words = if finite.is_empty() {
            "no values".to_string()
        } else {
            format!(
                "colour: white = 1.00 (a tie), blue = gain, red = loss; this map {low:.2} to \
                 {high:.2}; grey = not run"
            )
        };
        key.draw(&Text::new(
            words,
            (80, 6),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))
        .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

/// A two-parameter sweep's heat maps: (id, title, svg), one per scheme after the first (its
/// throughput ratio to the first); none for a one-parameter sweep.
///
/// # Errors
/// As [`heat_map`].
pub fn grid_heat_maps(sweep: &SweepResults) -> Result<Vec<(String, String, String)>> {
    let Some(grid) = &sweep.grid else {
        return Ok(Vec::new());
    };
    let Some(first) = sweep.schemes.first() else {
        return Ok(Vec::new());
    };
    let ratio = &METRICS[1];
    let mut maps = Vec::new();
    for scheme in sweep.schemes.iter().skip(1) {
        let title = format!("{scheme} / {first}: throughput ratio");
        let svg = heat_map(
            &title,
            &grid.rows.param,
            &grid.columns.param,
            &grid.rows.values,
            &grid.columns.values,
            &sweep.grid_values(scheme, ratio),
        )?;
        maps.push((format!("heatmap-{scheme}"), title, svg));
    }
    Ok(maps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_carry_their_values_and_colours_diverge_around_one() {
        let rows = vec!["1".to_string(), "8".to_string()];
        let columns = vec!["1".to_string(), "4".to_string(), "8".to_string()];
        let values = vec![
            vec![Some(1.0), Some(0.5), None],
            vec![Some(1.5), Some(2.0), Some(2.25)],
        ];
        let svg = heat_map("t", "alpha", "ace_n_w", &rows, &columns, &values).unwrap();
        for text in ["1.00", "0.50", "2.25", ">-<", "alpha", "ace_n_w"] {
            let text = text.trim_matches(|c| c == '>' || c == '<');
            assert!(svg.contains(text), "{text} missing");
        }
        // The largest |log| (0.5 and 2.0 are equal, 2.25 beyond) gets the full gain colour.
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert!(svg.contains(&hex(GAIN)), "darkest gain");
        assert!(svg.contains(&hex(MISSING)), "missing cell");
        assert_eq!(shade(1.0, 1.0).0, WHITE);
        let (loss, _) = shade(0.5, 0.5_f64.ln().abs());
        assert_eq!(loss, LOSS);
    }
}
