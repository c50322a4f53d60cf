//! Statistics of repeated runs (issue 19 item 6): the mean and the 95% confidence interval of a
//! metric over `--repeat N` runs, and of a ratio of two paired metrics.
//!
//! - [`interval`]: the sample mean and the Student-t half-width `t(0.975, n-1) * s / sqrt(n)`
//!   (`s` the sample standard deviation, n-1 in its denominator). Non-finite values are left
//!   out (and not counted in `n`); with one value the half-width is `None`, never 0.
//! - [`ratio_interval`]: a ratio of means `R = mean(x) / mean(y)` of paired samples (`x[k]` and
//!   `y[k]` measured in the same repeat, back to back), with the delta-method interval
//!   `t(0.975, n-1) * s_d / (sqrt(n) * mean(y))`, where `s_d` is the sample standard deviation
//!   of `d[k] = x[k] - R * y[k]`: the first-order variance of `R`, `(s_x^2 - 2 R s_xy +
//!   R^2 s_y^2) / (n mean(y)^2)`, covariance of the pairs included. Pairs with a non-finite
//!   member are left out.
//! - [`t_975`]: the 0.975 quantile of Student's t: exact to four decimals up to 30 degrees of
//!   freedom (a table), then the Cornish-Fisher expansion in `1/dof` to the third order
//!   (error below 1e-4 at 31 and falling).

use serde::Serialize;

/// A metric over repeats: its mean, the 95% confidence interval's half-width and the number of
/// values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Interval {
    /// The sample mean (for a ratio: the ratio of the means).
    pub mean: f64,
    /// Half-width of the 95% confidence interval (Student t, n-1 degrees of freedom): the
    /// interval is `mean - ci95 ..= mean + ci95`; `None` with fewer than two values.
    pub ci95: Option<f64>,
    /// Values (pairs, for a ratio) it is computed from.
    pub n: usize,
}

impl Interval {
    /// The interval's ends, when it has a width.
    #[must_use]
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.ci95.map(|half| (self.mean - half, self.mean + half))
    }
}

/// The 0.975 quantiles of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
    2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687,
    2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
];

/// The standard normal's 0.975 quantile.
const Z_975: f64 = 1.959_963_984_540_054;

/// The 0.975 quantile of Student's t with `dof` degrees of freedom (`dof` >= 1; 0 is taken as
/// 1).
#[must_use]
pub fn t_975(dof: usize) -> f64 {
    if let Some(&t) = T_975.get(dof.max(1) - 1) {
        return t;
    }
    let z = Z_975;
    let v = dof as f64;
    let g1 = (z.powi(3) + z) / 4.0;
    let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    z + g1 / v + g2 / v.powi(2) + g3 / v.powi(3)
}

/// Sample mean and sample standard deviation (n-1), of at least one value.
fn mean_and_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance.sqrt())
}

/// The mean and 95% confidence interval of the finite `values`; `None` when there is none.
#[must_use]
pub fn interval(values: &[f64]) -> Option<Interval> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return None;
    }
    let n = finite.len();
    let (mean, sd) = mean_and_sd(&finite);
    Some(Interval {
        mean,
        ci95: (n >= 2).then(|| t_975(n - 1) * sd / (n as f64).sqrt()),
        n,
    })
}

/// The ratio of means of the paired samples `pairs` (`(x, y)`: numerator, denominator) with
/// its delta-method 95% interval (see the module docs); `None` without a finite pair or when
/// the denominators' mean is 0.
#[must_use]
pub fn ratio_interval(pairs: &[(f64, f64)]) -> Option<Interval> {
    let finite: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    if finite.is_empty() {
        return None;
    }
    let n = finite.len();
    let mean_x = finite.iter().map(|(x, _)| x).sum::<f64>() / n as f64;
    let mean_y = finite.iter().map(|(_, y)| y).sum::<f64>() / n as f64;
    if mean_y == 0.0 {
        return None;
    }
    let ratio = mean_x / mean_y;
    let residuals: Vec<f64> = finite.iter().map(|(x, y)| x - ratio * y).collect();
    let (_, sd) = mean_and_sd(&residuals);
    Some(Interval {
        mean: ratio,
        ci95: (n >= 2).then(|| t_975(n - 1) * sd / ((n as f64).sqrt() * mean_y.abs())),
        n,
    })
}

/// `value` with `decimals` decimals, and ` ±half` when the interval has a width (`812 ±23`).
#[must_use]
pub fn format_pm(value: f64, half: Option<f64>, decimals: usize) -> String {
    match half {
        Some(half) if half.is_finite() => format!("{value:.decimals$} ±{half:.decimals$}"),
        _ => format!("{value:.decimals$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!(close(t_975(1), 12.7062, 1e-4));
        assert!(close(t_975(2), 4.3027, 1e-4));
        assert!(close(t_975(4), 2.7764, 1e-4));
        assert!(close(t_975(30), 2.0423, 1e-4));
        // Beyond the table: the expansion (published: 2.0369, 2.0211, 2.0003, 1.9799).
        assert!(close(t_975(32), 2.0369, 2e-4));
        assert!(close(t_975(40), 2.0211, 2e-4));
        assert!(close(t_975(60), 2.0003, 2e-4));
        assert!(close(t_975(120), 1.9799, 2e-4));
        assert!(close(t_975(1_000_000), Z_975, 1e-5));
        // Monotone across the table's end.
        assert!(t_975(30) > t_975(31) && t_975(31) > t_975(32));
    }

    #[test]
    fn interval_of_known_data() {
        // 1..=5: mean 3, s = sqrt(2.5), se = s / sqrt(5) = 0.70711, t(4) = 2.7764.
        let i = interval(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(i.n, 5);
        assert!(close(i.mean, 3.0, 1e-12));
        assert!(close(
            i.ci95.unwrap(),
            2.7764 * std::f64::consts::FRAC_1_SQRT_2,
            1e-4
        ));
        let (low, high) = i.bounds().unwrap();
        assert!(close(low, 3.0 - 1.9632, 1e-3) && close(high, 3.0 + 1.9632, 1e-3));
        // Two values 10 and 12: s = sqrt(2), se = 1, t(1) = 12.7062.
        let i = interval(&[10.0, 12.0]).unwrap();
        assert!(close(i.mean, 11.0, 1e-12));
        assert!(close(i.ci95.unwrap(), 12.7062, 1e-4));
        // Identical values: a zero-width interval.
        assert_eq!(interval(&[7.0; 3]).unwrap().ci95, Some(0.0));
    }

    #[test]
    fn one_value_has_no_width_and_non_finite_values_are_left_out() {
        let i = interval(&[42.0]).unwrap();
        assert_eq!((i.mean, i.ci95, i.n), (42.0, None, 1));
        assert!(i.bounds().is_none());
        let i = interval(&[f64::NAN, 1.0, f64::INFINITY, 3.0]).unwrap();
        assert_eq!(i.n, 2);
        assert!(close(i.mean, 2.0, 1e-12));
        assert!(interval(&[]).is_none());
        assert!(interval(&[f64::NAN]).is_none());
    }

    #[test]
    fn ratio_of_means_with_the_delta_method() {
        // Proportional pairs: the ratio is exact, the interval has no width.
        let i = ratio_interval(&[(2.0, 1.0), (4.0, 2.0), (6.0, 3.0)]).unwrap();
        assert!(close(i.mean, 2.0, 1e-12));
        assert!(close(i.ci95.unwrap(), 0.0, 1e-12));
        // x = 10, 12 over y = 5, 5: R = 2.2, d = -1, +1, s_d = sqrt(2), se = 1 / 5 = 0.2,
        // half-width 12.7062 x 0.2.
        let i = ratio_interval(&[(10.0, 5.0), (12.0, 5.0)]).unwrap();
        assert!(close(i.mean, 2.2, 1e-12));
        assert!(close(i.ci95.unwrap(), 12.7062 * 0.2, 1e-4));
        assert_eq!(i.n, 2);
        // The ratio of means, not the mean of ratios: (1 + 3) / (1 + 1) = 2 vs mean(1/1, 3/1) = 2
        // coincide here; (1 + 9) / (1 + 3) = 2.5 vs mean(1, 3) = 2 do not.
        let i = ratio_interval(&[(1.0, 1.0), (9.0, 3.0)]).unwrap();
        assert!(close(i.mean, 2.5, 1e-12));
        // Positively correlated pairs give a narrower interval than the same x and y unpaired
        // in the other order.
        let paired = ratio_interval(&[(10.0, 5.0), (20.0, 10.0), (16.0, 8.5)]).unwrap();
        let crossed = ratio_interval(&[(10.0, 10.0), (20.0, 5.0), (16.0, 8.5)]).unwrap();
        assert!(paired.ci95.unwrap() < crossed.ci95.unwrap());
    }

    #[test]
    fn ratio_edge_cases() {
        assert!(ratio_interval(&[]).is_none());
        assert!(ratio_interval(&[(1.0, 0.0), (2.0, 0.0)]).is_none());
        let i = ratio_interval(&[(3.0, 2.0)]).unwrap();
        assert_eq!((i.mean, i.ci95, i.n), (1.5, None, 1));
        let i = ratio_interval(&[(3.0, 2.0), (f64::NAN, 2.0), (5.0, 2.0)]).unwrap();
        assert_eq!(i.n, 2);
        assert!(close(i.mean, 2.0, 1e-12));
    }

    #[test]
    fn formats_plus_minus() {
        assert_eq!(format_pm(812.4, Some(23.2), 0), "812 ±23");
        assert_eq!(format_pm(2.861, Some(0.0449), 2), "2.86 ±0.04");
        assert_eq!(format_pm(812.4, None, 0), "812");
        assert_eq!(format_pm(812.4, Some(f64::NAN), 1), "812.4");
    }
}
