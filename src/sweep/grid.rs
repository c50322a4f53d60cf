//! A two-parameter sweep's grid (`sweep --param A --values ... --param B --values ...`): the
//! cross product of the two value lists, A outer and B inner, so point `i` is
//! (`A[i / |B|]`, `B[i % |B|]`). Each point keeps one label ([`Grid::label`], `A=a B=b`), which
//! is its `value` everywhere a one-parameter sweep has the value (plans, point files, claims,
//! the row table), and its two coordinates ([`Grid::coordinates`]), which sweep.json records
//! per point and the heat maps and grid tables read.
//!
//! Invariant: a grid has exactly two axes, each with at least one value; the labels are
//! distinct because each axis's values are.

use serde::{Deserialize, Serialize};

/// One axis: the parameter, what it sets, its values in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// The parameter's name.
    pub param: String,
    /// What it sets.
    pub sets: String,
    /// Its values, in order.
    pub values: Vec<String>,
}

/// The two axes of a two-parameter sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// The outer axis (rows of the grid tables and heat maps).
    pub rows: Axis,
    /// The inner axis (columns).
    pub columns: Axis,
}

impl Grid {
    /// The label of the point at (`row`, `column`): `A=a B=b`.
    #[must_use]
    pub fn label(&self, row: &str, column: &str) -> String {
        format!("{}={row} {}={column}", self.rows.param, self.columns.param)
    }

    /// Every point's label, in point order (A outer, B inner).
    #[must_use]
    pub fn labels(&self) -> Vec<String> {
        self.rows
            .values
            .iter()
            .flat_map(|row| {
                self.columns
                    .values
                    .iter()
                    .map(move |column| self.label(row, column))
            })
            .collect()
    }

    /// The (row, column) indices of point `index`.
    #[must_use]
    pub fn cell(&self, index: usize) -> (usize, usize) {
        let width = self.columns.values.len().max(1);
        (index / width, index % width)
    }

    /// The two values of point `index`, as (parameter, value) pairs.
    #[must_use]
    pub fn coordinates(&self, index: usize) -> Vec<Coordinate> {
        let (row, column) = self.cell(index);
        [(&self.rows, row), (&self.columns, column)]
            .into_iter()
            .filter_map(|(axis, at)| {
                axis.values.get(at).map(|value| Coordinate {
                    param: axis.param.clone(),
                    value: value.clone(),
                })
            })
            .collect()
    }

    /// The combined parameter name, `A x B`.
    #[must_use]
    pub fn param(&self) -> String {
        format!("{} x {}", self.rows.param, self.columns.param)
    }

    /// What the two parameters set, in words.
    #[must_use]
    pub fn sets(&self) -> String {
        format!("{}; {}", self.rows.sets, self.columns.sets)
    }
}

/// One coordinate of a grid point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coordinate {
    /// The parameter.
    pub param: String,
    /// Its value at the point.
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(param: &str, values: &[&str]) -> Axis {
        Axis {
            param: param.into(),
            sets: format!("sets {param}"),
            values: values.iter().map(|v| (*v).to_string()).collect(),
        }
    }

    #[test]
    fn points_run_the_outer_axis_slowest() {
        let grid = Grid {
            rows: axis("alpha", &["1", "8"]),
            columns: axis("ace_n_w", &["1", "4", "8"]),
        };
        let labels = grid.labels();
        assert_eq!(labels.len(), 6);
        assert_eq!(labels[0], "alpha=1 ace_n_w=1");
        assert_eq!(labels[5], "alpha=8 ace_n_w=8");
        assert_eq!(grid.cell(4), (1, 1));
        let coordinates = grid.coordinates(4);
        assert_eq!(coordinates[0].value, "8");
        assert_eq!(coordinates[1].param, "ace_n_w");
        assert_eq!(coordinates[1].value, "4");
        assert_eq!(grid.param(), "alpha x ace_n_w");
    }
}
