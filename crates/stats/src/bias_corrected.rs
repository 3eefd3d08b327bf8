//! Least squares corrected for additive Gaussian noise of known variance in the release.
//!
//! # Setting (seed 004, eq. (4), setting B)
//! The release is `Ỹ = A·(W + C)`: every participant adds noise `C_j ~ N(0, σ_j²Iₙ)` to column
//! `j` of its record (σ_j = 0 for noise-free columns) before the orthogonal mask `A` (with
//! `A·1ₙ = 1ₙ` when an intercept is fitted). Here `W = [1ₙ, Z, y]` (intercept column only when
//! included). Ordinary least squares on `Ỹ` is biased towards zero ("attenuation"): with one
//! noisy predictor the slope tends to `β·s²_x / (s²_x + σ²_x)`.
//!
//! # Formula
//! The mask drops out of the moment matrix, `M̃ = ỸᵀỸ = (W + C)ᵀ(W + C)`, and because the noise
//! is independent of the data and across columns,
//!
//! `E[M̃] = WᵀW + n·diag(σ₁², …, σ²_{p+1})`.
//!
//! So `M̂ = M̃ − n·diag(σ_j²)` is unbiased for the noise-free `WᵀW`, and the corrected estimate
//! solves the normal equations of `M̂`: `β̂ = M̂_ZZ⁻¹ m̂_Zy`, read off the Cholesky factor
//! `M̂ = LLᵀ` (the method-of-moments, or "corrected least squares", estimator of Fuller 1987,
//! *Measurement Error Models* §2.2; consistent as `n → ∞`, not exactly unbiased, since it is a
//! ratio). Here the normal equations are legitimate: the corrected matrix exists only as a
//! matrix of moments, and `Ỹ` carries no noise-free square root of it.
//!
//! # Centring
//! None: the moments are about zero, with `1ₙ` as a column of `W`, so the correction is
//! exactly `n·σ²`. (Working with sums of squares about the column means instead, the noise
//! contributes `(n − 1)σ²` in expectation, and `(n − 1)σ²` would be the correction; the two
//! routes differ by `σ²` per noisy column, `O(1/n)` relative.)
//!
//! # Inference
//! Only point estimates and the equation-error variance are reported: the sampling variance of
//! `β̂` depends on the noise (Fuller 1987 §2.2.1) and the usual `σ̂²(ZᵀZ)⁻¹` would be wrong.

use nalgebra::{Cholesky, DMatrix, DVector};

use crate::dataset::Dataset;
use crate::design::{Design, DesignError, INTERCEPT_NAME, Intercept};
use crate::tolerance::RANK_RELATIVE;

/// Errors of the bias-corrected fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BiasCorrectionError {
    /// The model could not be set up (unknown column, `n ≤ p`, …).
    #[error(transparent)]
    Design(#[from] DesignError),
    /// A noise level names a column that is not in the model.
    #[error(
        "noise is declared for {column:?}, which is not in the model ({model}); declare noise only for the response and predictors"
    )]
    UnknownNoisyColumn {
        /// The name given.
        column: String,
        /// Response and predictors, comma-separated.
        model: String,
    },
    /// A noise level is declared twice.
    #[error("noise for {column:?} is declared twice; declare each column once")]
    RepeatedNoisyColumn {
        /// The column.
        column: String,
    },
    /// A noise standard deviation is negative or not finite.
    #[error("the noise standard deviation of {column:?} is {sd}; it must be finite and ≥ 0")]
    BadNoiseLevel {
        /// The column.
        column: String,
        /// The value given.
        sd: f64,
    },
    /// The corrected moment matrix is not (numerically) positive definite.
    #[error(
        "after subtracting n·σ² for the declared noise the moment matrix is not positive definite at {column:?}: the declared noise ({noisy}) is larger than the variation the data show there (or the term duplicates earlier ones); check the noise levels"
    )]
    NotPositiveDefinite {
        /// First term (in design order, the response last) where positivity fails.
        column: String,
        /// The declared noise levels, `name σ=…`, comma-separated.
        noisy: String,
    },
}

/// A least-squares fit from a noise-corrected moment matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct BiasCorrectedRegression {
    response: String,
    intercept: Intercept,
    names: Vec<String>,
    estimates: DVector<f64>,
    naive: DVector<f64>,
    residual_variance: f64,
    corrected_moments: DMatrix<f64>,
    n: usize,
}

impl BiasCorrectedRegression {
    /// Fit `response ~ predictors` from a release with additive noise: `noise_sd` lists
    /// `(column, σ)` for the noisy columns (response or predictors); unlisted columns are
    /// noise-free.
    ///
    /// # Errors
    /// [`BiasCorrectionError::Design`], [`BiasCorrectionError::UnknownNoisyColumn`],
    /// [`BiasCorrectionError::RepeatedNoisyColumn`], [`BiasCorrectionError::BadNoiseLevel`],
    /// [`BiasCorrectionError::NotPositiveDefinite`] naming the first failing term.
    pub fn fit(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        intercept: Intercept,
        noise_sd: &[(&str, f64)],
    ) -> Result<Self, BiasCorrectionError> {
        let design = Design::new(data, response, predictors, intercept)?;
        let (n, p) = (design.n(), design.p());
        let mut columns: Vec<String> = design.names().to_vec();
        columns.push(response.to_owned());

        let mut variances = DVector::zeros(p + 1);
        for (k, &(name, sd)) in noise_sd.iter().enumerate() {
            if noise_sd[..k].iter().any(|(other, _)| *other == name) {
                return Err(BiasCorrectionError::RepeatedNoisyColumn {
                    column: name.to_owned(),
                });
            }
            if !(sd.is_finite() && sd >= 0.0) {
                return Err(BiasCorrectionError::BadNoiseLevel {
                    column: name.to_owned(),
                    sd,
                });
            }
            let index = columns
                .iter()
                .position(|c| c == name && c != INTERCEPT_NAME)
                .ok_or_else(|| BiasCorrectionError::UnknownNoisyColumn {
                    column: name.to_owned(),
                    model: columns[usize::from(intercept == Intercept::Included)..].join(", "),
                })?;
            variances[index] = sd * sd;
        }
        let noisy = noise_sd
            .iter()
            .map(|(name, sd)| format!("{name} σ={sd}"))
            .collect::<Vec<_>>()
            .join(", ");

        let mut w = design.matrix().clone().insert_column(p, 0.0);
        w.set_column(p, design.y());
        let moments = w.tr_mul(&w);
        let mut corrected = moments.clone();
        for j in 0..=p {
            corrected[(j, j)] -= n as f64 * variances[j];
        }

        let not_pd = |j: usize| BiasCorrectionError::NotPositiveDefinite {
            column: columns[j].clone(),
            noisy: noisy.clone(),
        };
        let (estimates, residual_ss) = solve_moments(&corrected, &moments).map_err(not_pd)?;
        let (naive, _) = solve_moments(&moments, &moments).map_err(|j| {
            BiasCorrectionError::Design(DesignError::RankDeficient {
                column: columns[j].clone(),
                ratio: 0.0,
            })
        })?;
        Ok(Self {
            response: response.to_owned(),
            intercept,
            names: design.names().to_vec(),
            estimates,
            naive,
            residual_variance: residual_ss / (n - p) as f64,
            corrected_moments: corrected,
            n,
        })
    }

    /// Name of the response.
    pub fn response(&self) -> &str {
        &self.response
    }

    /// Whether the model has an intercept.
    pub fn intercept(&self) -> Intercept {
        self.intercept
    }

    /// Coefficient names, `"(Intercept)"` first when included.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Bias-corrected estimates `β̂`, in [`names`](Self::names) order.
    pub fn estimates(&self) -> &DVector<f64> {
        &self.estimates
    }

    /// The corrected estimate of the coefficient called `name`.
    pub fn estimate(&self, name: &str) -> Option<f64> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|j| self.estimates[j])
    }

    /// Uncorrected least-squares estimates on the noisy release, for comparison (attenuated).
    pub fn naive_estimates(&self) -> &DVector<f64> {
        &self.naive
    }

    /// Method-of-moments estimate of the equation-error variance,
    /// `(m̂_yy − m̂_yZ β̂) / (n − p)`.
    pub fn residual_variance(&self) -> f64 {
        self.residual_variance
    }

    /// The corrected moment matrix `M̂` of `[1ₙ?, Z, y]`.
    pub fn corrected_moments(&self) -> &DMatrix<f64> {
        &self.corrected_moments
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.n
    }
}

/// Solve the normal equations held in the `(p+1) × (p+1)` moment matrix `m` of `[Z y]`.
///
/// With `m = LLᵀ` (`L` lower triangular) and `Lᵀ = [[R, r], [0, ρ]]`, `β = R⁻¹r` and the
/// residual sum of squares is `ρ²` — the same algebra as the QR of `[Z y]` in
/// [`linear`](crate::linear). A pivot `L_jj ≤ RANK_RELATIVE·√scale_jj` (`scale` the uncorrected
/// moments) counts as a failure. Returns the index of the first failing term as the error.
fn solve_moments(m: &DMatrix<f64>, scale: &DMatrix<f64>) -> Result<(DVector<f64>, f64), usize> {
    let size = m.nrows();
    let Some(cholesky) = Cholesky::new(m.clone()) else {
        // Locate the failure: the first leading block that is not positive definite.
        let first = (1..=size)
            .find(|&k| Cholesky::new(m.view((0, 0), (k, k)).into_owned()).is_none())
            .unwrap_or(size);
        return Err(first - 1);
    };
    let l = cholesky.l();
    if let Some(j) = (0..size).find(|&j| l[(j, j)] <= RANK_RELATIVE * scale[(j, j)].sqrt()) {
        return Err(j);
    }
    let p = size - 1;
    let r = l.view((0, 0), (p, p)).transpose();
    let effects = l.view((p, 0), (1, p)).transpose();
    let beta = r.solve_upper_triangular(&effects).ok_or(p - 1)?;
    let rho = l[(p, p)];
    Ok((beta.column(0).into_owned(), rho * rho))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    fn close(a: f64, b: f64) -> bool {
        relative_difference(a, b) < HAND_SOLVED_RELATIVE
    }

    /// By hand, no intercept: x = (2, −2, 0, 0), y = (1, −1, 2, 0): Σx² = 8, Σxy = 4,
    /// Σy² = 6. Naive β = 4/8 = 0.5. Declaring σ_x = 1 corrects Σx² to 8 − 4·1 = 4, so
    /// β̂ = 4/4 = 1 and the residual variance is (6 − 1·4)/(4 − 1) = 2/3. Declaring
    /// σ_x = 1.5 gives Σx² − 4·2.25 = −1 < 0: not positive definite at x.
    #[test]
    fn hand_solved_correction() {
        let data = Dataset::from_columns(vec![
            ("x".into(), vec![2.0, -2.0, 0.0, 0.0]),
            ("y".into(), vec![1.0, -1.0, 2.0, 0.0]),
        ])
        .unwrap();
        let fit =
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Excluded, &[("x", 1.0)])
                .unwrap();
        assert!(close(fit.estimate("x").unwrap(), 1.0));
        assert!(close(fit.naive_estimates()[0], 0.5));
        assert!(close(fit.residual_variance(), 2.0 / 3.0));
        assert!(close(fit.corrected_moments()[(0, 0)], 4.0));
        assert_eq!(
            (fit.n(), fit.names(), fit.response()),
            (4, &["x".to_owned()][..], "y")
        );
        assert!(matches!(
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Excluded, &[("x", 1.5)]),
            Err(BiasCorrectionError::NotPositiveDefinite { ref column, .. }) if column == "x"
        ));
        // Noise on the response only leaves β̂ alone and lowers the residual variance:
        // (6 − 4·0.25 − 0.5·4)/3 = 1.
        let fit =
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Excluded, &[("y", 0.5)])
                .unwrap();
        assert!(close(fit.estimate("x").unwrap(), 0.5));
        assert!(close(fit.residual_variance(), 1.0));
        // Too much response noise leaves a negative residual sum of squares.
        assert!(matches!(
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Excluded, &[("y", 1.0)]),
            Err(BiasCorrectionError::NotPositiveDefinite { ref column, .. }) if column == "y"
        ));
    }

    /// Without declared noise the estimates are the ordinary least-squares ones
    /// (x = (0, 1, 2, 3), y = (1, 3, 2, 4): intercept 1.3, slope 0.8, σ̂² = 0.9, see
    /// `linear::tests::hand_solved_simple_regression`).
    #[test]
    fn no_noise_is_ordinary_least_squares() {
        let data = Dataset::from_columns(vec![
            ("x".into(), vec![0.0, 1.0, 2.0, 3.0]),
            ("y".into(), vec![1.0, 3.0, 2.0, 4.0]),
        ])
        .unwrap();
        let fit =
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Included, &[]).unwrap();
        assert_eq!(fit.names(), [INTERCEPT_NAME, "x"]);
        assert!(close(fit.estimates()[0], 1.3) && close(fit.estimates()[1], 0.8));
        assert!(close(fit.naive_estimates()[0], 1.3) && close(fit.naive_estimates()[1], 0.8));
        assert!(close(fit.residual_variance(), 0.9));
        assert_eq!(fit.intercept(), Intercept::Included);
    }

    #[test]
    fn bad_noise_declarations_are_refused() {
        let data = Dataset::from_columns(vec![
            ("x".into(), vec![0.0, 1.0, 2.0, 3.0]),
            ("y".into(), vec![1.0, 3.0, 2.0, 4.0]),
            ("z".into(), vec![1.0, 0.0, 2.0, 4.0]),
        ])
        .unwrap();
        let fit = |noise: &[(&str, f64)]| {
            BiasCorrectedRegression::fit(&data, "y", &["x"], Intercept::Included, noise)
        };
        assert!(matches!(
            fit(&[("z", 1.0)]),
            Err(BiasCorrectionError::UnknownNoisyColumn { .. })
        ));
        assert!(matches!(
            fit(&[(INTERCEPT_NAME, 1.0)]),
            Err(BiasCorrectionError::UnknownNoisyColumn { .. })
        ));
        assert!(matches!(
            fit(&[("x", 0.1), ("x", 0.1)]),
            Err(BiasCorrectionError::RepeatedNoisyColumn { .. })
        ));
        assert!(matches!(
            fit(&[("x", -1.0)]),
            Err(BiasCorrectionError::BadNoiseLevel { .. })
        ));
        assert!(matches!(
            fit(&[("x", f64::NAN)]),
            Err(BiasCorrectionError::BadNoiseLevel { .. })
        ));
    }
}
