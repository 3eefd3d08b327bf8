//! Statistics shared by the law tests: Kolmogorov–Smirnov distances and their critical values,
//! and a binomial bound. Every test that uses them states its number of draws and fixes its keys,
//! so its outcome is reproducible.

#![allow(dead_code)] // each test binary uses its own subset

use orthomask_core::tolerance::KS_COEFFICIENT_ALPHA_0_001;

/// One-sample Kolmogorov–Smirnov distance `sup_x |F_n(x) − F(x)|` between a sample and a CDF.
pub fn ks_one_sample(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut sample = sample.to_vec();
    sample.sort_by(f64::total_cmp);
    let n = sample.len() as f64;
    sample
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let c = cdf(x);
            (c - i as f64 / n).abs().max(((i + 1) as f64 / n - c).abs())
        })
        .fold(0.0, f64::max)
}

/// Critical value of the one-sample KS test at α = 0.001 (asymptotic): `c(α)/√n`.
pub fn ks_one_sample_critical(n: usize) -> f64 {
    KS_COEFFICIENT_ALPHA_0_001 / (n as f64).sqrt()
}

/// Two-sample Kolmogorov–Smirnov distance `sup_x |F_a(x) − F_b(x)|` of the empirical CDFs.
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0, 0, 0.0_f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

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
