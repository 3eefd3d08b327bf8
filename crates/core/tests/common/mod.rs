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

/// The zero-column tests' checks ((E9) of `Tm2Design::unscale_unmasked`): column `zeros`, which
/// the cohort answered with zeros, is exact zeros in every named block (what the collector
/// recovered or summed, the release), and column `tiny`, whose one non-zero answer is `answer`,
/// still sums to it in `release` (every left mask keeps the sums), so it was not taken for one.
pub fn assert_zeros_stay_and_a_tiny_answer_is_kept(
    blocks: &[(&str, &nalgebra::DMatrix<f64>)],
    zeros: usize,
    release: &nalgebra::DMatrix<f64>,
    tiny: usize,
    answer: f64,
) {
    for (what, block) in blocks {
        let column = block.column(zeros);
        assert!(
            column.iter().all(|&v| v == 0.0),
            "{what}: the all-zero column came back as {column}"
        );
    }
    let sum = release.column(tiny).sum();
    assert!(
        (sum - answer).abs()
            <= orthomask_core::tolerance::PRESERVED_STATISTICS * release.nrows() as f64,
        "the column with one answer of {answer} sums to {sum} in the release"
    );
}
