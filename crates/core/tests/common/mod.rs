//! Statistics shared by the law tests besides the Kolmogorov–Smirnov ones of
//! `orthomask_core::tolerance`: normal quantiles for binomial and mean tests, and a standard
//! error. Every test that uses them states its number of draws and fixes its keys,
//! so its outcome is reproducible.

#![allow(dead_code)] // each test binary uses its own subset

/// One-sided normal quantile for α = 0.001 (`Φ⁻¹(0.999) = 3.0902`, e.g. Abramowitz & Stegun
/// Table 26.5).
pub const Z_ONE_SIDED_0_001: f64 = 3.0902;

/// Two-sided normal quantile for α = 0.001 (`Φ⁻¹(0.9995) = 3.2905`).
pub const Z_TWO_SIDED_0_001: f64 = 3.2905;

/// Sample mean and the standard error of the mean.
pub fn mean_and_standard_error(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}

/// The largest failure count among `trials` independent trials compatible, at one-sided
/// α = 0.001, with a failure probability of at most `b` (normal approximation of the binomial).
pub fn allowed_failures(trials: u64, b: f64) -> f64 {
    let n = trials as f64;
    n * b + Z_ONE_SIDED_0_001 * (n * b * (1.0 - b)).sqrt()
}
