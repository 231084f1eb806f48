//! Statistics over samples, and the bits of Markdown every part's tables use.

use std::time::Duration;

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// Half the 10..90 % range of relative deviations, in %.
pub fn spread_pct(rel: &[f64]) -> f64 {
    let mut v = rel.to_vec();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    100.0 * (q(0.9) - q(0.1)) / 2.0
}

/// ✓ when a goal is met, ✗ when not.
pub fn tick(met: bool) -> &'static str {
    if met {
        "✓"
    } else {
        "✗"
    }
}

/// A duration in the unit that reads best: `1.20 s`, `3.4 ms`, `870 µs`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn spread_is_half_the_inner_80_percent() {
        let rel: Vec<f64> = (0..=10).map(|i| i as f64 / 100.0).collect();
        assert!((spread_pct(&rel) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(Duration::from_millis(1200)), "1.20 s");
        assert_eq!(duration(Duration::from_micros(3400)), "3.4 ms");
        assert_eq!(duration(Duration::from_micros(870)), "870 µs");
    }
}
