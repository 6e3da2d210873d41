//! Medians, 90th percentiles and slopes.

/// The summary of repeated samples of one figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub p90: f64,
    pub n: usize,
}

impl Summary {
    /// A single derived value (a slope, a quotient): median = p90 = value.
    pub fn exact(value: f64) -> Summary {
        Summary {
            median: value,
            p90: value,
            n: 1,
        }
    }
}

/// Median (mean of the two middle samples for an even count) and nearest-rank p90.
/// `None` for no samples.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    // Nearest rank: the smallest sample with at least 90 % of the samples at or below it.
    let rank = (0.9 * n as f64).ceil() as usize;
    let p90 = sorted[rank.clamp(1, n) - 1];
    Some(Summary { median, p90, n })
}

/// The least-squares slope of `y` over `x` (`None` with fewer than two distinct x).
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    if sxx == 0.0 {
        return None;
    }
    Some(sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::{slope, summarize};

    #[test]
    fn median_and_p90() {
        let s = summarize(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.p90, s.n), (3.0, 5.0, 3));
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.median, 2.5);
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(summarize(&ten).unwrap().p90, 9.0);
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn slope_of_a_line() {
        let points = [(10.0, 7.0), (1000.0, 502.0), (10000.0, 5002.0)];
        assert!((slope(&points).unwrap() - 0.5).abs() < 1e-9);
        assert!(slope(&[(1.0, 1.0)]).is_none());
    }
}
