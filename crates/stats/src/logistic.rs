//! Logistic regression by Newton's method (iteratively reweighted least squares).
//!
//! # Model and estimates (seed 003 §2.2)
//! `logit P(yᵢ = 1 | zᵢ) = zᵢᵀβ` for a 0/1 response. The maximum-likelihood `β̂` solves the
//! score equations; `Cov(β̂) = (ZᵀD̂Z)⁻¹` with `D̂ = diag(π̂ᵢ(1 − π̂ᵢ))` (Agresti 1990 p. 114).
//!
//! # Why the second TM² release gives the same treatment effect
//! On `X·B` with `B = diag(I, C)` keeping the response and the treatment columns, the model is
//! fitted on `W = Z·C` (`C` block-diagonal with an identity block on the intercept and
//! treatment). Then (i) `β̂_new = C⁻¹β̂`, (ii) `D̂` is unchanged because `Wβ̂_new = Zβ̂`, and
//! (iii) `Cov(β̂_new) = C⁻¹(ZᵀD̂Z)⁻¹C⁻ᵀ`. With an identity block for the treatment, its
//! coefficient, standard error, z and p are those of the raw data, and so are the deviance,
//! log-likelihood and likelihood-ratio test. The masked covariates' coefficients are not.
//! Orthogonal row masks `A·X` are of no use here: the response must stay 0/1.
//!
//! # Algorithm
//! Start at `β = 0`. Each step solves the weighted least-squares problem
//! `min ‖√D̂ (Zβ − u)‖` with working response `u = η + (y − π̂)/(π̂(1 − π̂))` by Householder QR
//! of `√D̂·[Z u]` (never inverting `ZᵀD̂Z`), halving the step while the deviance would rise.
//! Convergence needs both the deviance
//! ([`LOGIT_DEVIANCE_CHANGE`]) and every coefficient ([`LOGIT_COEFFICIENT_CHANGE`]) to settle;
//! a fit that does not settle within the iteration limit is diagnosed as separation when some
//! fitted probability is numerically 0 or 1 ([`SEPARATION_PROBABILITY`]).

use nalgebra::{DMatrix, DVector};
use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::dataset::Dataset;
use crate::design::{Design, DesignError, Intercept};
use crate::inference::{Coefficient, InferenceError, Reference};
use crate::tolerance::{LOGIT_COEFFICIENT_CHANGE, LOGIT_DEVIANCE_CHANGE, SEPARATION_PROBABILITY};

/// Newton iterations allowed before giving up; a well-posed fit needs 5–10.
pub const DEFAULT_MAX_ITERATIONS: usize = 50;

/// Step halvings allowed in one Newton iteration before the step is taken anyway.
const MAX_HALVINGS: usize = 30;

/// Errors of a logistic fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LogisticError {
    /// The model could not be set up (unknown column, `n ≤ p`, rank deficiency, …).
    #[error(transparent)]
    Design(#[from] DesignError),
    /// The response has a value other than 0 or 1.
    #[error(
        "the response {response:?} must be 0/1 but record {row} (1-based) is {value}; logistic regression needs the unmasked binary response (the second TM² method keeps it, X·B₁·B₂)"
    )]
    NonBinaryResponse {
        /// Response name.
        response: String,
        /// 1-based record.
        row: usize,
        /// The value found.
        value: f64,
    },
    /// Every response is the same.
    #[error(
        "every record of {response:?} is {value}; there is nothing to model — the likelihood has no maximum"
    )]
    ConstantResponse {
        /// Response name.
        response: String,
        /// The common value.
        value: f64,
    },
    /// The outcome is (quasi-)completely separated: the MLE does not exist.
    #[error(
        "{response:?} is (quasi-)completely separated by the predictors: after {iterations} iterations {extreme} fitted probabilities are numerically 0 or 1 and {diverging} keep growing, so the maximum-likelihood estimate does not exist; drop or merge the separating predictor(s), or use a penalised (Firth) fit"
    )]
    Separation {
        /// Response name.
        response: String,
        /// Coefficients still moving, comma-separated ("the estimates" when unknown).
        diverging: String,
        /// Fitted probabilities within [`SEPARATION_PROBABILITY`] of 0 or 1.
        extreme: usize,
        /// Iterations performed.
        iterations: usize,
    },
    /// No convergence within the iteration limit, without signs of separation.
    #[error(
        "IRLS did not converge in {iterations} iterations (last relative deviance change {deviance_change:.3e}); rescale the predictors or raise the iteration limit"
    )]
    NotConverged {
        /// Iterations performed.
        iterations: usize,
        /// `|D_k − D_{k−1}| / (|D_k| + 0.1)` at the last iteration.
        deviance_change: f64,
    },
    /// Wald inference failed (a standard error is not positive).
    #[error(transparent)]
    Inference(#[from] InferenceError),
}

/// Likelihood-ratio test of the fitted model against the null model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LikelihoodRatioTest {
    statistic: f64,
    df: usize,
    p_value: f64,
}

impl LikelihoodRatioTest {
    /// `G² = D_null − D` (twice the log-likelihood gain).
    pub fn statistic(&self) -> f64 {
        self.statistic
    }

    /// Degrees of freedom: number of coefficients beyond the null model's.
    pub fn df(&self) -> usize {
        self.df
    }

    /// `P(χ²_df ≥ G²)`.
    pub fn p_value(&self) -> f64 {
        self.p_value
    }
}

/// A fitted logistic regression with Wald and likelihood-ratio inference.
#[derive(Debug, Clone, PartialEq)]
pub struct LogisticRegression {
    response: String,
    intercept: Intercept,
    coefficients: Vec<Coefficient>,
    covariance: DMatrix<f64>,
    fitted: DVector<f64>,
    deviance: f64,
    null_deviance: f64,
    likelihood_ratio: Option<LikelihoodRatioTest>,
    iterations: usize,
    deviance_change: f64,
}

/// `1 / (1 + e^{−x})` without overflow.
fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `ln(1 + eˣ)` without overflow or cancellation.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// `D = −2 Σ [yᵢ ln πᵢ + (1 − yᵢ) ln(1 − πᵢ)]` from the linear predictor:
/// `−ln π = softplus(−η)`, `−ln(1 − π) = softplus(η)`.
fn deviance(y: &DVector<f64>, eta: &DVector<f64>) -> f64 {
    2.0 * y
        .iter()
        .zip(eta.iter())
        .map(|(&yi, &e)| if yi == 1.0 { softplus(-e) } else { softplus(e) })
        .sum::<f64>()
}

impl LogisticRegression {
    /// Fit `response ~ predictors` (plus intercept when asked) by maximum likelihood, with at
    /// most [`DEFAULT_MAX_ITERATIONS`] Newton steps.
    ///
    /// # Errors
    /// [`LogisticError::Design`] (unknown columns, `n ≤ p`, rank deficiency),
    /// [`LogisticError::NonBinaryResponse`], [`LogisticError::ConstantResponse`],
    /// [`LogisticError::Separation`], [`LogisticError::NotConverged`].
    pub fn fit(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        intercept: Intercept,
    ) -> Result<Self, LogisticError> {
        let design = Design::new(data, response, predictors, intercept)?;
        Self::fit_design(&design, DEFAULT_MAX_ITERATIONS)
    }

    /// Fit a prepared [`Design`] with at most `max_iterations` Newton steps.
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn fit_design(design: &Design, max_iterations: usize) -> Result<Self, LogisticError> {
        let y = design.y();
        let response = design.response().to_owned();
        if let Some((i, &value)) = y.iter().enumerate().find(|(_, v)| **v != 0.0 && **v != 1.0) {
            return Err(LogisticError::NonBinaryResponse {
                response,
                row: i + 1,
                value,
            });
        }
        if y.iter().all(|&v| v == y[0]) {
            return Err(LogisticError::ConstantResponse {
                response,
                value: y[0],
            });
        }
        let z = design.matrix();
        let (n, p) = (design.n(), design.p());

        let mut beta = DVector::zeros(p);
        let mut eta = DVector::zeros(n);
        let mut dev = deviance(y, &eta);
        let mut deviance_change = f64::INFINITY;
        let mut step = DVector::zeros(p);
        for iteration in 1..=max_iterations {
            let newton = match newton_step(design, &eta) {
                Ok(newton) => newton,
                // At the start all weights are 1/4: a rank defect is the design's own.
                Err(defect) if iteration == 1 => return Err(defect.into()),
                // Later the weights of separated records vanish and take the rank with them.
                Err(_) => return Err(separation(design, &beta, &step, &eta, iteration - 1)),
            };
            step = newton - &beta;
            let mut candidate = &beta + &step;
            let mut candidate_eta = z * &candidate;
            let mut candidate_dev = deviance(y, &candidate_eta);
            let slack = LOGIT_DEVIANCE_CHANGE * (dev.abs() + 0.1);
            for _ in 0..MAX_HALVINGS {
                if candidate_dev <= dev + slack {
                    break;
                }
                step *= 0.5;
                candidate = &beta + &step;
                candidate_eta = z * &candidate;
                candidate_dev = deviance(y, &candidate_eta);
            }
            deviance_change = (candidate_dev - dev).abs() / (candidate_dev.abs() + 0.1);
            let settled = candidate
                .iter()
                .zip(step.iter())
                .all(|(b, s)| s.abs() <= LOGIT_COEFFICIENT_CHANGE * b.abs().max(1.0));
            beta = candidate;
            eta = candidate_eta;
            dev = candidate_dev;
            if deviance_change < LOGIT_DEVIANCE_CHANGE && settled {
                return Self::finish(design, beta, eta, dev, iteration, deviance_change);
            }
            if eta.iter().any(|&e| weight(e) == 0.0) {
                // A weight underflowed: some π̂ is exactly 0 or 1, only possible under separation.
                return Err(separation(design, &beta, &step, &eta, iteration));
            }
        }
        let extreme = count_extreme(&eta);
        if extreme > 0 {
            Err(separation(design, &beta, &step, &eta, max_iterations))
        } else {
            Err(LogisticError::NotConverged {
                iterations: max_iterations,
                deviance_change,
            })
        }
    }

    fn finish(
        design: &Design,
        beta: DVector<f64>,
        eta: DVector<f64>,
        dev: f64,
        iterations: usize,
        deviance_change: f64,
    ) -> Result<Self, LogisticError> {
        let (n, p) = (design.n(), design.p());
        let weighted = weighted_design(design.matrix(), &eta);
        let r = weighted.clone().qr().r();
        // The design's rank was checked at the first iteration; losing it now means weights
        // of (quasi-)separated records vanished.
        let no_step = DVector::zeros(p);
        let separated = || separation(design, &beta, &no_step, &eta, iterations);
        design.check_rank(&weighted, &r).map_err(|_| separated())?;
        let r_inverse = design
            .solve_r(&r, &DMatrix::identity(p, p))
            .map_err(|_| separated())?;
        let covariance = &r_inverse * r_inverse.transpose();
        let coefficients = design
            .names()
            .iter()
            .enumerate()
            .map(|(j, name)| {
                Coefficient::wald(name, beta[j], covariance[(j, j)].sqrt(), Reference::Normal)
            })
            .collect::<Result<Vec<_>, _>>()?;

        let y = design.y();
        let skip = usize::from(design.intercept() == Intercept::Included);
        let null_deviance = if skip == 1 {
            // Intercept-only MLE: π̂ = ȳ, i.e. η = logit(ȳ).
            let mean = y.mean();
            deviance(y, &DVector::from_element(n, (mean / (1.0 - mean)).ln()))
        } else {
            // No intercept: the null model is η = 0, π = 1/2 (as R's glm).
            deviance(y, &DVector::zeros(n))
        };
        let df = p - skip;
        let likelihood_ratio = (df > 0).then(|| {
            let statistic = (null_deviance - dev).max(0.0);
            let p_value = ChiSquared::new(df as f64).map_or(f64::NAN, |d| d.sf(statistic));
            LikelihoodRatioTest {
                statistic,
                df,
                p_value,
            }
        });
        Ok(Self {
            response: design.response().to_owned(),
            intercept: design.intercept(),
            coefficients,
            covariance,
            fitted: eta.map(logistic),
            deviance: dev,
            null_deviance,
            likelihood_ratio,
            iterations,
            deviance_change,
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

    /// Coefficient table with z statistics, in design order.
    pub fn coefficients(&self) -> &[Coefficient] {
        &self.coefficients
    }

    /// The coefficient called `name`, if the model has it.
    pub fn coefficient(&self, name: &str) -> Option<&Coefficient> {
        self.coefficients.iter().find(|c| c.name() == name)
    }

    /// `(ZᵀD̂Z)⁻¹`, the estimated covariance of `β̂` (computed as `R⁻¹R⁻ᵀ` from the QR of
    /// `√D̂·Z`).
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// Fitted probabilities `π̂ᵢ`.
    pub fn fitted_probabilities(&self) -> &DVector<f64> {
        &self.fitted
    }

    /// Residual deviance `D = −2 ln L(β̂)`.
    pub fn deviance(&self) -> f64 {
        self.deviance
    }

    /// Null deviance: intercept-only model with intercept, `π = 1/2` without.
    pub fn null_deviance(&self) -> f64 {
        self.null_deviance
    }

    /// Maximised log-likelihood `Σ[yᵢ ln π̂ᵢ + (1 − yᵢ) ln(1 − π̂ᵢ)] = −D/2`.
    pub fn log_likelihood(&self) -> f64 {
        -self.deviance / 2.0
    }

    /// Log-likelihood of the null model; with intercept `n[ȳ ln ȳ + (1 − ȳ) ln(1 − ȳ)]`
    /// (seed 003 §2.2).
    pub fn null_log_likelihood(&self) -> f64 {
        -self.null_deviance / 2.0
    }

    /// Likelihood-ratio test against the null model; `None` when the model is the null model.
    pub fn likelihood_ratio(&self) -> Option<&LikelihoodRatioTest> {
        self.likelihood_ratio.as_ref()
    }

    /// Newton iterations used.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Relative deviance change of the last iteration (below [`LOGIT_DEVIANCE_CHANGE`]).
    pub fn deviance_change(&self) -> f64 {
        self.deviance_change
    }

    /// Number of observations `n`.
    pub fn n(&self) -> usize {
        self.fitted.len()
    }

    /// Residual degrees of freedom `n − p`.
    pub fn df_resid(&self) -> usize {
        self.n() - self.coefficients.len()
    }
}

/// `π(1 − π)` computed as `logistic(η)·logistic(−η)`, accurate in both tails.
fn weight(eta: f64) -> f64 {
    logistic(eta) * logistic(-eta)
}

/// `√D̂·Z`: row `i` of `Z` scaled by `√(π̂ᵢ(1 − π̂ᵢ))`.
fn weighted_design(z: &DMatrix<f64>, eta: &DVector<f64>) -> DMatrix<f64> {
    let mut weighted = z.clone();
    for (mut row, &e) in weighted.row_iter_mut().zip(eta.iter()) {
        row *= weight(e).sqrt();
    }
    weighted
}

/// One Newton (IRLS) update from the linear predictor `η`: the `β` minimising
/// `‖√D̂(Zβ − u)‖`, `u = η + (y − π̂)/D̂`, via QR of `√D̂·[Z u]`.
///
/// # Errors
/// [`DesignError::RankDeficient`] when `√D̂·Z` loses rank.
fn newton_step(design: &Design, eta: &DVector<f64>) -> Result<DVector<f64>, DesignError> {
    let p = design.p();
    let weighted = weighted_design(design.matrix(), eta);
    let mut augmented = weighted.clone().insert_column(p, 0.0);
    for (i, (&e, &yi)) in eta.iter().zip(design.y().iter()).enumerate() {
        let sw = weight(e).sqrt();
        // y − π̂ without cancellation: 1 − π̂ = logistic(−η).
        let residual = if yi == 1.0 {
            logistic(-e)
        } else {
            -logistic(e)
        };
        augmented[(i, p)] = sw * e + residual / sw;
    }
    let r_full = augmented.qr().r();
    let r = r_full.view((0, 0), (p, p)).into_owned();
    design.check_rank(&weighted, &r)?;
    let effects = r_full.view((0, p), (p, 1)).into_owned();
    Ok(design.solve_r(&r, &effects)?.column(0).into_owned())
}

fn count_extreme(eta: &DVector<f64>) -> usize {
    eta.iter()
        .filter(|&&e| logistic(e) < SEPARATION_PROBABILITY || logistic(-e) < SEPARATION_PROBABILITY)
        .count()
}

fn separation(
    design: &Design,
    beta: &DVector<f64>,
    step: &DVector<f64>,
    eta: &DVector<f64>,
    iterations: usize,
) -> LogisticError {
    let diverging: Vec<&str> = design
        .names()
        .iter()
        .zip(beta.iter().zip(step.iter()))
        .filter(|(_, (b, s))| s.abs() > LOGIT_COEFFICIENT_CHANGE * b.abs().max(1.0))
        .map(|(name, _)| name.as_str())
        .collect();
    LogisticError::Separation {
        response: design.response().to_owned(),
        diverging: if diverging.is_empty() {
            // The fit stopped before a step could show which terms run away.
            "the estimates".to_owned()
        } else {
            diverging.join(", ")
        },
        extreme: count_extreme(eta),
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    fn close(a: f64, b: f64) -> bool {
        relative_difference(a, b) < HAND_SOLVED_RELATIVE
    }

    /// By hand: with one binary predictor the MLE reproduces the 2×2 table. x = 1 for 6
    /// records with 4 successes, x = 0 for 5 records with 1 success. Then
    /// β₀ = logit(1/5) = ln(1/4), β₁ = ln OR = ln((4·4)/(2·1)) = ln 8,
    /// SE(β₁) = √(1/4 + 1/2 + 1/1 + 1/4) = √2 (Woolf), SE(β₀) = √(1/1 + 1/4).
    /// Null deviance with ȳ = 5/11: −2[5 ln(5/11) + 6 ln(6/11)].
    #[test]
    fn binary_predictor_reproduces_the_two_by_two_table() {
        let x = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let y = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let data = Dataset::from_columns(vec![("x".into(), x.to_vec()), ("y".into(), y.to_vec())])
            .unwrap();
        let fit = LogisticRegression::fit(&data, "y", &["x"], Intercept::Included).unwrap();
        let (b0, b1) = (&fit.coefficients()[0], &fit.coefficients()[1]);
        assert!(close(b0.estimate(), 0.25f64.ln()));
        assert!(close(b1.estimate(), 8.0f64.ln()));
        assert!(close(b1.std_error(), 2.0f64.sqrt()));
        assert!(close(b0.std_error(), 1.25f64.sqrt()));
        assert_eq!(b1.reference().statistic_name(), "z");
        let null = -2.0 * (5.0 * (5.0f64 / 11.0).ln() + 6.0 * (6.0f64 / 11.0).ln());
        assert!(close(fit.null_deviance(), null));
        assert!(close(fit.null_log_likelihood(), -null / 2.0));
        // Saturated in the groups: D = −2 Σ_groups [s ln(s/m) + f ln(f/m)].
        let d = -2.0
            * (4.0 * (4.0f64 / 6.0).ln()
                + 2.0 * (2.0f64 / 6.0).ln()
                + (1.0f64 / 5.0).ln()
                + 4.0 * (4.0f64 / 5.0).ln());
        assert!(close(fit.deviance(), d));
        let lr = fit.likelihood_ratio().unwrap();
        assert!(close(lr.statistic(), null - d));
        assert_eq!((lr.df(), fit.n(), fit.df_resid()), (1, 11, 9));
        assert!(fit.iterations() < 10 && fit.deviance_change() < LOGIT_DEVIANCE_CHANGE);
        assert!(close(fit.fitted_probabilities()[0], 4.0 / 6.0));
    }

    /// By hand: no intercept, one binary predictor; records with x = 0 carry no information
    /// and the null model is π = 1/2. x = 1 for 4 records with 3 successes: β̂ = ln 3,
    /// SE = √(1/3 + 1/1); null deviance 2n ln 2 over all 6 records.
    #[test]
    fn model_without_intercept() {
        let data = Dataset::from_columns(vec![
            ("x".into(), vec![1.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
            ("y".into(), vec![1.0, 1.0, 1.0, 0.0, 1.0, 0.0]),
        ])
        .unwrap();
        let fit = LogisticRegression::fit(&data, "y", &["x"], Intercept::Excluded).unwrap();
        assert!(close(fit.coefficients()[0].estimate(), 3.0f64.ln()));
        assert!(close(
            fit.coefficients()[0].std_error(),
            (4.0f64 / 3.0).sqrt()
        ));
        assert!(close(fit.null_deviance(), 12.0 * 2.0f64.ln()));
        assert_eq!(fit.likelihood_ratio().unwrap().df(), 1);
        assert_eq!(fit.intercept(), Intercept::Excluded);
    }

    #[test]
    fn unusable_responses_and_separation_are_refused() {
        let data = Dataset::from_columns(vec![
            ("x".into(), vec![0.1, 0.4, 0.2, 0.9, 0.7, 0.8]),
            ("sep".into(), vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]),
            ("masked".into(), vec![0.2, 1.1, 0.0, 1.0, 1.0, 1.0]),
            ("ones".into(), vec![1.0; 6]),
        ])
        .unwrap();
        assert!(matches!(
            LogisticRegression::fit(&data, "masked", &["x"], Intercept::Included),
            Err(LogisticError::NonBinaryResponse { row: 1, .. })
        ));
        assert!(matches!(
            LogisticRegression::fit(&data, "ones", &["x"], Intercept::Included),
            Err(LogisticError::ConstantResponse { value: 1.0, .. })
        ));
        let err = LogisticRegression::fit(&data, "sep", &["x"], Intercept::Included).unwrap_err();
        assert!(
            matches!(err, LogisticError::Separation { ref diverging, extreme, .. }
                if diverging.contains('x') && extreme > 0),
            "{err}"
        );
        assert!(matches!(
            LogisticRegression::fit_design(
                &Design::new(&data, "sep", &["x"], Intercept::Included).unwrap(),
                1
            ),
            Err(LogisticError::NotConverged { iterations: 1, .. })
        ));
    }

    #[test]
    fn tails_are_computed_without_overflow() {
        assert_eq!(logistic(800.0), 1.0);
        assert_eq!(logistic(-800.0), 0.0);
        assert!(close(softplus(-700.0), (-700.0f64).exp()));
        assert!(close(softplus(40.0), 40.0));
        assert!(close(softplus(0.0), 2.0f64.ln()));
        assert!(weight(30.0) > 0.0);
    }
}
