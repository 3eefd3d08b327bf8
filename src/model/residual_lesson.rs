//! The classroom's "this is why" (issue 22 §2): a survey whose raw residuals are far from normal,
//! the same model fitted on its masked release, and both normal Q–Q plots side by side. The
//! release's residuals are `A·e` — `A` a random orthogonal matrix keeping `1ₙ` fixed, `e` the raw
//! residual vector — so they keep `e`'s length (σ̂, R², F are exact) but spread each large
//! residual over every row: their empirical distribution is close to normal whatever `e` was,
//! which is why the analyst view shows no residual plot for a release alone (seed 003: "residual
//! plots and diagnostic methods will no longer be valid").

use nalgebra::{DMatrix, DVector};
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::analysis::normal_qq;

/// Participants of the lesson's survey: enough for the Q–Q plots to have a shape.
pub const LESSON_PARTICIPANTS: usize = 200;

/// The two Q–Q plots and what they show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResidualLesson {
    /// (normal quantile, standardised residual) of the raw data's fit.
    pub raw_qq: Vec<(f64, f64)>,
    /// The same for the release's fit.
    pub released_qq: Vec<(f64, f64)>,
    /// Skewness of the raw residuals.
    pub raw_skewness: f64,
    /// Skewness of the released residuals.
    pub released_skewness: f64,
    /// The residual standard error, equal on both (the length of `e` is kept).
    pub sigma: (f64, f64),
}

/// The sample skewness `m₃ / m₂^{3/2}` of residuals (their mean is zero: the model has an
/// intercept).
fn skewness(e: &DVector<f64>) -> f64 {
    let n = e.len() as f64;
    let m2 = e.iter().map(|v| v * v).sum::<f64>() / n;
    let m3 = e.iter().map(|v| v * v * v).sum::<f64>() / n;
    m3 / m2.powf(1.5)
}

/// The lesson's raw survey: `y = 1 + x/2 + exp(2z)`, log-normal errors assigned to the rows by
/// a fixed permutation so that they are unrelated to `x`.
fn raw_survey() -> DMatrix<f64> {
    let n = LESSON_PARTICIPANTS;
    let normal = Normal::standard();
    DMatrix::from_fn(n, 2, |i, j| {
        let x = (i % 37) as f64;
        if j == 0 {
            return x;
        }
        let q = normal.inverse_cdf((((i * 211) % n) as f64 + 0.5) / n as f64);
        1.0 + 0.5 * x + (2.0 * q).exp()
    })
}

/// Fit `y ~ x` on the two columns of `data`.
fn fit(data: &DMatrix<f64>) -> Result<LinearRegression, String> {
    let dataset =
        Dataset::new(vec!["x".into(), "y".into()], data.clone()).map_err(|e| e.to_string())?;
    LinearRegression::fit(&dataset, "y", &["x"], Intercept::Included).map_err(|e| e.to_string())
}

/// Run the lesson with the collector's key (its left mask `A₁`, Haar on the stabiliser of `1ₙ`).
///
/// # Errors
/// One line when the mask or a fit fails (neither does for the lesson's fixed data).
pub fn residual_lesson(collector: &Key) -> Result<ResidualLesson, String> {
    let raw = raw_survey();
    let mut released = raw.clone();
    FixedSubspaceHaar::keyed(
        &DMatrix::from_element(raw.nrows(), 1, 1.0),
        collector.stream(StreamId::CollectorLeftMask),
    )
    .and_then(|a| a.left_apply(&mut released))
    .map_err(|e| e.to_string())?;
    let (raw_fit, released_fit) = (fit(&raw)?, fit(&released)?);
    Ok(ResidualLesson {
        raw_qq: normal_qq(raw_fit.residuals(), raw_fit.sigma()),
        released_qq: normal_qq(released_fit.residuals(), released_fit.sigma()),
        raw_skewness: skewness(raw_fit.residuals()),
        released_skewness: skewness(released_fit.residuals()),
        sigma: (raw_fit.sigma(), released_fit.sigma()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_core::tolerance::PRESERVED_STATISTICS;

    /// The lesson shows what it says: skewed raw residuals, normal-looking released ones (the
    /// skewness of a normal sample of 200 has standard deviation √(6/200) ≈ 0.17), the same
    /// residual standard error, and Q–Q plots whose upper tails differ accordingly.
    #[test]
    fn the_release_hides_the_skew_and_keeps_sigma() {
        for key in [Key::teaching(3), Key::teaching(2026)] {
            let l = residual_lesson(&key).unwrap();
            assert!(l.raw_skewness > 4.0, "{}", l.raw_skewness);
            assert!(l.released_skewness.abs() < 0.7, "{}", l.released_skewness);
            assert!(
                (l.sigma.0 - l.sigma.1).abs() <= PRESERVED_STATISTICS * l.sigma.0,
                "{:?}",
                l.sigma
            );
            let top = |qq: &[(f64, f64)]| qq.last().map(|p| p.1 / p.0).unwrap();
            assert!(top(&l.raw_qq) > 2.0 && top(&l.released_qq) < 1.6);
        }
    }
}
