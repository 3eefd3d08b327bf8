//! Secure linear regression from the assembled cross-product matrix (seed 001 §3.1).
//!
//! Any agency holding the shared [`CrossProducts`] fits the regression of one attribute `D_i` on
//! any subset `D₀` of the others, `D_i = D₀β₀ + ε₀` (equation (2)), alone and without further
//! communication: coefficients, standard errors, σ², R² are all functions of the cross-products.
//!
//! # Formula
//! With an intercept, on centred cross-products `S_xx = X_cᵀX_c`, `S_xy`, `S_yy` (the sweep of
//! Beaton 1964 that §3.1 names, see [`sweep`](crate::sweep)):
//!
//! * slopes `β = S_xx⁻¹ S_xy`, intercept `β₀ = ȳ − x̄ᵀβ`;
//! * `RSS = S_yy − S_yxβ`, `R² = 1 − RSS / S_yy`;
//! * `(D₀ᵀD₀)⁻¹ = [[1/n + x̄ᵀKx̄, −x̄ᵀK], [−Kx̄, K]]` with `K = S_xx⁻¹`, `D₀ = [1 X]`.
//!
//! Without an intercept the same formulas run on the raw cross-products, with `x̄ = 0` and the
//! *uncentred* `R² = 1 − RSS / yᵀy` (the convention of R's `lm` and of statsmodels for models
//! without a constant).
//!
//! Then `σ̂² = RSS / (n − k)` (unbiased, used for the standard errors), `SE(β_t) =
//! σ̂ √[(D₀ᵀD₀)⁻¹]_tt`, `t = β/SE` with `n − k` degrees of freedom. §3.1 speaks of the maximum
//! likelihood estimate of σ₀², `RSS / n`; it is reported as well
//! ([`OlsFit::sigma_squared_mle`]), but a careful analysis reports the unbiased one with its
//! standard errors, as every regression program does.
//!
//! # Conditions
//! `n − k ≥ 1`; the predictors (with the constant, if any) must be linearly independent: a
//! predictor whose `1 − R²` on the earlier ones is at most
//! [`COLLINEARITY`](crate::tolerance::COLLINEARITY) is refused, naming it.

use crate::cross_products::{CrossProducts, CrossProductsError};
use crate::sweep::{Sweep, SweepError};
use nalgebra::{DMatrix, DVector};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Errors of specifying or fitting a regression.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RegressionError {
    /// A column index is out of range.
    #[error(transparent)]
    CrossProducts(#[from] CrossProductsError),
    /// The response is also listed as a predictor.
    #[error("column {column} is the response and cannot also be a predictor")]
    ResponseAmongPredictors {
        /// The column.
        column: usize,
    },
    /// A predictor is listed twice.
    #[error("predictor {column} is listed twice")]
    DuplicatePredictor {
        /// The column.
        column: usize,
    },
    /// No intercept and no predictors.
    #[error("the model has no terms: add an intercept or a predictor")]
    NoTerms,
    /// Too few subjects for the number of terms.
    #[error(
        "{subjects} subjects leave no residual degrees of freedom for {terms} terms; need n > k"
    )]
    NoDegreesOfFreedom {
        /// `n`.
        subjects: usize,
        /// `k`.
        terms: usize,
    },
    /// A predictor is a linear combination of the constant and the predictors before it.
    #[error(
        "predictor {column} is (nearly) a linear combination of the intercept and the predictors \
         listed before it (1 − R² = {share:.2e}); drop it"
    )]
    Collinear {
        /// The offending column (global index).
        column: usize,
        /// Its `1 − R²` on the earlier terms.
        share: f64,
    },
    /// The response has no variation, so R² is undefined.
    #[error(
        "the response column {column} has no variation (about its mean when centred = {centred}); there is nothing to explain"
    )]
    ConstantResponse {
        /// The response column.
        column: usize,
        /// Whether variation was measured about the mean (intercept model).
        centred: bool,
    },
    /// The cross-product matrix could not be swept.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// The t distribution could not be built (it cannot fail for `n − k ≥ 1`).
    #[error("Student's t distribution: {0}")]
    Distribution(String),
}

/// A term of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    /// The constant (the paper's `D₁ = 1`).
    Intercept,
    /// An attribute, by its global column index in the [`CrossProducts`].
    Column(usize),
}

/// The validated pieces of a linear model on cross-products, shared by OLS and ridge.
#[derive(Clone, Debug)]
pub(crate) struct Design {
    pub(crate) terms: Vec<Term>,
    /// The predictors' global columns, in order.
    pub(crate) predictor_columns: Vec<usize>,
    pub(crate) subjects: usize,
    /// `S_xx` (centred when there is an intercept).
    pub(crate) sxx: DMatrix<f64>,
    /// `S_xy`.
    pub(crate) sxy: DVector<f64>,
    /// `S_yy`.
    pub(crate) syy: f64,
    /// Means of the predictors (zero without an intercept).
    pub(crate) x_mean: DVector<f64>,
    /// Mean of the response (zero without an intercept).
    pub(crate) y_mean: f64,
    pub(crate) intercept: bool,
}

impl Design {
    pub(crate) fn new(
        cross_products: &CrossProducts,
        response: usize,
        predictors: &[usize],
        intercept: bool,
    ) -> Result<Self, RegressionError> {
        cross_products.owner(response)?;
        for (i, &p) in predictors.iter().enumerate() {
            cross_products.owner(p)?;
            if p == response {
                return Err(RegressionError::ResponseAmongPredictors { column: p });
            }
            if predictors[..i].contains(&p) {
                return Err(RegressionError::DuplicatePredictor { column: p });
            }
        }
        let terms: Vec<Term> = intercept
            .then_some(Term::Intercept)
            .into_iter()
            .chain(predictors.iter().map(|&p| Term::Column(p)))
            .collect();
        if terms.is_empty() {
            return Err(RegressionError::NoTerms);
        }
        let subjects = cross_products.subjects();
        if subjects <= terms.len() {
            return Err(RegressionError::NoDegreesOfFreedom {
                subjects,
                terms: terms.len(),
            });
        }
        let columns: Vec<usize> = predictors.iter().copied().chain([response]).collect();
        let all = if intercept {
            cross_products.centred(&columns)?
        } else {
            cross_products.raw(&columns)?
        };
        let m = predictors.len();
        let syy = all[(m, m)];
        let scale = cross_products.raw(&[response])?[(0, 0)].abs();
        if syy.is_nan() || syy <= scale * f64::EPSILON {
            return Err(RegressionError::ConstantResponse {
                column: response,
                centred: intercept,
            });
        }
        let means = cross_products.means();
        let x_mean = if intercept {
            DVector::from_iterator(m, predictors.iter().map(|&p| means[p]))
        } else {
            DVector::zeros(m)
        };
        Ok(Self {
            terms,
            predictor_columns: predictors.to_vec(),
            subjects,
            sxx: all.view((0, 0), (m, m)).into_owned(),
            sxy: all.view((0, m), (m, 1)).column(0).into_owned(),
            syy,
            x_mean,
            y_mean: if intercept { means[response] } else { 0.0 },
            intercept,
        })
    }

    pub(crate) fn predictors(&self) -> usize {
        self.sxx.nrows()
    }

    /// The column behind predictor position `k` (0-based among the predictors).
    pub(crate) fn predictor_column(&self, k: usize) -> usize {
        self.predictor_columns[k]
    }

    /// Full coefficient vector and `(D₀ᵀD₀)⁻¹` from slopes and `K = S_xx⁻¹` (or `(S_xx + λI)⁻¹`
    /// for the covariance-free ridge, which only uses the coefficients).
    pub(crate) fn assemble(
        &self,
        slopes: &DVector<f64>,
        k_inverse: &DMatrix<f64>,
    ) -> (DVector<f64>, DMatrix<f64>) {
        if !self.intercept {
            return (slopes.clone(), k_inverse.clone());
        }
        let m = self.predictors();
        let n = self.subjects as f64;
        let kx = k_inverse * &self.x_mean;
        let mut coefficients = DVector::zeros(m + 1);
        coefficients[0] = self.y_mean - self.x_mean.dot(slopes);
        coefficients.rows_mut(1, m).copy_from(slopes);
        let mut covariance = DMatrix::zeros(m + 1, m + 1);
        covariance[(0, 0)] = 1.0 / n + self.x_mean.dot(&kx);
        for i in 0..m {
            covariance[(0, i + 1)] = -kx[i];
            covariance[(i + 1, 0)] = -kx[i];
        }
        covariance.view_mut((1, 1), (m, m)).copy_from(k_inverse);
        (coefficients, covariance)
    }
}

/// An ordinary least-squares fit computed from cross-products.
#[derive(Clone, Debug, PartialEq)]
pub struct OlsFit {
    response: usize,
    terms: Vec<Term>,
    subjects: usize,
    coefficients: DVector<f64>,
    unscaled_covariance: DMatrix<f64>,
    rss: f64,
    tss: f64,
    p_values: DVector<f64>,
}

impl OlsFit {
    /// Regress column `response` on `predictors` (global column indices), with or without an
    /// intercept (see the [module documentation](self) for the formulas).
    ///
    /// # Example (by hand)
    /// `x = (1, 2, 3)` at one agency, `y = (1, 3, 2)` at another, with intercept: `S_xx = 2`,
    /// `S_xy = 1`, `S_yy = 2`, so `β = 1/2`, `β₀ = 2 − 2·½ = 1`, `RSS = 2 − ½ = 3/2`, `σ̂² = 3/2`
    /// (one degree of freedom), `σ̂²_MLE = 1/2`, `SE(β) = √(3/2 · ½) = √3/2`, `SE(β₀) =
    /// √(3/2 · (1/3 + 4/2)) = √(7/2)`, `R² = 1/4`, `t = 1/√3` and, since t with one degree of
    /// freedom is Cauchy, `p = 1 − (2/π) atan(1/√3) = 2/3`.
    ///
    /// # Errors
    /// Every [`RegressionError`] except `Distribution`, which cannot occur.
    pub fn fit(
        cross_products: &CrossProducts,
        response: usize,
        predictors: &[usize],
        intercept: bool,
    ) -> Result<Self, RegressionError> {
        let design = Design::new(cross_products, response, predictors, intercept)?;
        let m = design.predictors();
        let mut augmented = DMatrix::zeros(m + 1, m + 1);
        augmented.view_mut((0, 0), (m, m)).copy_from(&design.sxx);
        augmented.view_mut((0, m), (m, 1)).copy_from(&design.sxy);
        augmented
            .view_mut((m, 0), (1, m))
            .copy_from(&design.sxy.transpose());
        augmented[(m, m)] = design.syy;
        let mut sweep = Sweep::new(augmented)?;
        for k in 0..m {
            sweep.sweep(k).map_err(|e| match e {
                SweepError::Aliased { share, .. } => RegressionError::Collinear {
                    column: design.predictor_column(k),
                    share,
                },
                other => RegressionError::Sweep(other),
            })?;
        }
        let swept = sweep.matrix();
        let slopes = swept.view((0, m), (m, 1)).column(0).into_owned();
        let k_inverse = -swept.view((0, 0), (m, m)).into_owned();
        let rss = swept[(m, m)].max(0.0);
        let (coefficients, unscaled_covariance) = design.assemble(&slopes, &k_inverse);
        let df = (design.subjects - design.terms.len()) as f64;
        let t_distribution = StudentsT::new(0.0, 1.0, df)
            .map_err(|e| RegressionError::Distribution(e.to_string()))?;
        let sigma2 = rss / df;
        let p_values = DVector::from_iterator(
            coefficients.len(),
            (0..coefficients.len()).map(|t| {
                let se = (sigma2 * unscaled_covariance[(t, t)]).sqrt();
                2.0 * t_distribution.sf((coefficients[t] / se).abs())
            }),
        );
        Ok(Self {
            response,
            terms: design.terms,
            subjects: design.subjects,
            coefficients,
            unscaled_covariance,
            rss,
            tss: design.syy,
            p_values,
        })
    }

    /// The response column.
    pub fn response(&self) -> usize {
        self.response
    }

    /// The terms, in the order of the coefficients (intercept first when present).
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// Whether the model has an intercept.
    pub fn has_intercept(&self) -> bool {
        self.terms.first() == Some(&Term::Intercept)
    }

    /// The position of a term among the coefficients.
    pub fn position(&self, term: Term) -> Option<usize> {
        self.terms.iter().position(|&t| t == term)
    }

    /// `β̂`, in the order of [`OlsFit::terms`].
    pub fn coefficients(&self) -> &DVector<f64> {
        &self.coefficients
    }

    /// `(D₀ᵀD₀)⁻¹`, in the order of the terms.
    pub fn unscaled_covariance(&self) -> &DMatrix<f64> {
        &self.unscaled_covariance
    }

    /// `σ̂² (D₀ᵀD₀)⁻¹`, the estimated covariance of `β̂`.
    pub fn covariance(&self) -> DMatrix<f64> {
        &self.unscaled_covariance * self.sigma_squared()
    }

    /// Standard errors `σ̂ √[(D₀ᵀD₀)⁻¹]_tt`.
    pub fn standard_errors(&self) -> DVector<f64> {
        let s2 = self.sigma_squared();
        self.unscaled_covariance.diagonal().map(|d| (s2 * d).sqrt())
    }

    /// t statistics `β̂_t / SE_t`.
    pub fn t_values(&self) -> DVector<f64> {
        self.coefficients.component_div(&self.standard_errors())
    }

    /// Two-sided p-values of the t statistics on `n − k` degrees of freedom.
    pub fn p_values(&self) -> &DVector<f64> {
        &self.p_values
    }

    /// `n`.
    pub fn subjects(&self) -> usize {
        self.subjects
    }

    /// `n − k`.
    pub fn residual_df(&self) -> usize {
        self.subjects - self.terms.len()
    }

    /// Residual sum of squares `E₀ᵀE₀`.
    pub fn residual_sum_of_squares(&self) -> f64 {
        self.rss
    }

    /// Unbiased `σ̂² = RSS / (n − k)`.
    pub fn sigma_squared(&self) -> f64 {
        self.rss / self.residual_df() as f64
    }

    /// Maximum likelihood `σ̂²_MLE = RSS / n` (seed 001 §3.1's wording).
    pub fn sigma_squared_mle(&self) -> f64 {
        self.rss / self.subjects as f64
    }

    /// `R² = 1 − RSS/TSS`, TSS centred with an intercept and uncentred without.
    pub fn r_squared(&self) -> f64 {
        1.0 - self.rss / self.tss
    }

    /// Adjusted R², `1 − (1 − R²)(n − i)/(n − k)` with `i = 1` for an intercept model, else 0.
    pub fn adjusted_r_squared(&self) -> f64 {
        let i = usize::from(self.has_intercept());
        1.0 - (1.0 - self.r_squared()) * (self.subjects - i) as f64 / self.residual_df() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::assemble;
    use crate::tolerance::{DETECTED_P_VALUE, HAND_COMPUTED, REGRESSION_AGREEMENT};
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    fn by_hand() -> CrossProducts {
        let x = DMatrix::from_column_slice(3, 1, &[1.0, 2.0, 3.0]);
        let y = DMatrix::from_column_slice(3, 1, &[1.0, 3.0, 2.0]);
        CrossProducts::direct(&[x, y]).unwrap()
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1.0)
    }

    /// The example of [`OlsFit::fit`], solved by hand.
    #[test]
    fn hand_example() {
        let fit = OlsFit::fit(&by_hand(), 1, &[0], true).unwrap();
        let expected = [
            (fit.coefficients()[0], 1.0),
            (fit.coefficients()[1], 0.5),
            (fit.residual_sum_of_squares(), 1.5),
            (fit.sigma_squared(), 1.5),
            (fit.sigma_squared_mle(), 0.5),
            (fit.standard_errors()[1], 3f64.sqrt() / 2.0),
            (fit.standard_errors()[0], 3.5f64.sqrt()),
            (fit.r_squared(), 0.25),
            (fit.adjusted_r_squared(), 1.0 - 0.75 * 2.0),
            (fit.t_values()[1], 1.0 / 3f64.sqrt()),
            (fit.p_values()[1], 2.0 / 3.0),
        ];
        for (i, (got, want)) in expected.iter().enumerate() {
            assert!(
                close(*got, *want, HAND_COMPUTED),
                "quantity {i}: {got} vs {want}"
            );
        }
        assert_eq!(fit.terms(), &[Term::Intercept, Term::Column(0)]);
        assert_eq!(fit.residual_df(), 1);
    }

    /// Without intercept: y = βx with β = xᵀy/xᵀx = 13/14, RSS = 14 − 13²/14 = 27/14,
    /// uncentred R² = 1 − (27/14)/14 = 169/196.
    #[test]
    fn hand_example_without_intercept() {
        let fit = OlsFit::fit(&by_hand(), 1, &[0], false).unwrap();
        assert!(close(fit.coefficients()[0], 13.0 / 14.0, HAND_COMPUTED));
        assert!(close(
            fit.residual_sum_of_squares(),
            27.0 / 14.0,
            HAND_COMPUTED
        ));
        assert!(close(fit.r_squared(), 169.0 / 196.0, HAND_COMPUTED));
        assert!(!fit.has_intercept());
    }

    fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed).stream(StreamId::Scratch(3000)).rng();
        let mut buf = vec![0.0; rows * cols];
        fill_standard_normal(&mut rng, &mut buf);
        DMatrix::from_vec(rows, cols, buf)
    }

    /// Regression on cross-products assembled securely from three agencies equals a QR
    /// least-squares fit on the pooled data: coefficients, standard errors, σ², R².
    #[test]
    fn secure_regression_equals_direct_regression() {
        let n = 50;
        let noise = gaussian(n, 6, 1);
        let a = DMatrix::from_fn(n, 2, |i, j| 5.0 + (1.0 + j as f64) * noise[(i, j)]);
        let b = DMatrix::from_fn(n, 1, |i, _| -2.0 + 0.5 * noise[(i, 2)] + 0.3 * a[(i, 0)]);
        // Agency 2 holds the response y = 1 + 0.8 a₀ − 0.4 a₁ + 1.5 b₀ + noise, and one more
        // attribute.
        let c = DMatrix::from_fn(n, 2, |i, j| {
            if j == 0 {
                1.0 + 0.8 * a[(i, 0)] - 0.4 * a[(i, 1)] + 1.5 * b[(i, 0)] + 0.7 * noise[(i, 3)]
            } else {
                noise[(i, 4)] * 2.0
            }
        });
        let blocks = vec![a.clone(), b.clone(), c.clone()];
        let assembly = assemble(&blocks, |g, p| {
            Key::teaching(70 + g as u64).stream(StreamId::Scratch(p as u64))
        })
        .unwrap();
        // Columns: a₀ = 0, a₁ = 1, b₀ = 2, y = 3, c₁ = 4.
        let fit = OlsFit::fit(assembly.cross_products(), 3, &[0, 1, 2, 4], true).unwrap();

        let design = DMatrix::from_fn(n, 5, |i, j| match j {
            0 => 1.0,
            1 => a[(i, 0)],
            2 => a[(i, 1)],
            3 => b[(i, 0)],
            _ => c[(i, 1)],
        });
        let y = c.column(0).into_owned();
        let qr = design.clone().qr();
        let r = qr.r();
        let beta = r
            .solve_upper_triangular(&(qr.q().transpose() * &y))
            .unwrap();
        let r_inv = r.solve_upper_triangular(&DMatrix::identity(5, 5)).unwrap();
        let unscaled = &r_inv * r_inv.transpose();
        let residuals = &y - &design * &beta;
        let rss = residuals.norm_squared();
        let sigma2 = rss / (n - 5) as f64;
        let y_mean = y.mean();
        let tss: f64 = y.iter().map(|v| (v - y_mean).powi(2)).sum();
        for t in 0..5 {
            assert!(
                close(fit.coefficients()[t], beta[t], REGRESSION_AGREEMENT),
                "β[{t}]"
            );
            let se = (sigma2 * unscaled[(t, t)]).sqrt();
            assert!(
                close(fit.standard_errors()[t], se, REGRESSION_AGREEMENT),
                "SE[{t}]"
            );
        }
        assert!(close(fit.sigma_squared(), sigma2, REGRESSION_AGREEMENT));
        assert!(close(
            fit.r_squared(),
            1.0 - rss / tss,
            REGRESSION_AGREEMENT
        ));
        // The model is right: the slope on b₀ is significant and c₁ is not in the model.
        assert!(fit.p_values()[3] < DETECTED_P_VALUE);
    }

    /// Attributes with means of 10⁷ and unit spread: because the agencies centre their columns
    /// before the protocol, the secure slope keeps its accuracy (from raw cross-products,
    /// `DᵀD − ssᵀ/n` would lose about 14 of 16 digits here).
    #[test]
    fn large_means_do_not_cost_accuracy() {
        let n = 40;
        let noise = gaussian(n, 2, 8);
        let a = DMatrix::from_fn(n, 1, |i, _| 1e7 + noise[(i, 0)]);
        let b = DMatrix::from_fn(n, 1, |i, _| 1e7 + 2.0 * noise[(i, 0)] + 0.5 * noise[(i, 1)]);
        let assembly = assemble(&[a.clone(), b.clone()], |g, p| {
            Key::teaching(90 + g as u64).stream(StreamId::Scratch(p as u64))
        })
        .unwrap();
        let fit = OlsFit::fit(assembly.cross_products(), 1, &[0], true).unwrap();
        // Reference: the slope from explicitly centred data, Σ(x − x̄)(y − ȳ) / Σ(x − x̄)².
        let (xm, ym) = (a.mean(), b.mean());
        let sxy: f64 = a
            .iter()
            .zip(b.iter())
            .map(|(x, y)| (x - xm) * (y - ym))
            .sum();
        let sxx: f64 = a.iter().map(|x| (x - xm).powi(2)).sum();
        assert!(close(
            fit.coefficients()[1],
            sxy / sxx,
            REGRESSION_AGREEMENT
        ));
    }

    #[test]
    fn invalid_models_give_clear_errors() {
        let cp = by_hand();
        assert_eq!(
            OlsFit::fit(&cp, 1, &[1], true).unwrap_err(),
            RegressionError::ResponseAmongPredictors { column: 1 }
        );
        assert_eq!(
            OlsFit::fit(&cp, 1, &[], false).unwrap_err(),
            RegressionError::NoTerms
        );
        assert_eq!(
            OlsFit::fit(&cp, 1, &[0, 0], false).unwrap_err(),
            RegressionError::DuplicatePredictor { column: 0 }
        );
        assert!(matches!(
            OlsFit::fit(&cp, 5, &[0], true),
            Err(RegressionError::CrossProducts(_))
        ));
        // n = 3 with intercept + 2 predictors: k = 3, no residual degree of freedom.
        let three = CrossProducts::direct(&[DMatrix::from_fn(3, 3, |i, j| {
            ((i + 1) * (j + 2)) as f64 + (i * j) as f64
        })])
        .unwrap();
        assert_eq!(
            OlsFit::fit(&three, 0, &[1, 2], true).unwrap_err(),
            RegressionError::NoDegreesOfFreedom {
                subjects: 3,
                terms: 3
            }
        );
        // A predictor that is a copy (times 2) of another: collinear, named.
        let x = DMatrix::from_fn(6, 3, |i, j| match j {
            0 => i as f64,
            1 => 2.0 * i as f64,
            _ => ((i * i) % 5) as f64,
        });
        let cp = CrossProducts::direct(&[x]).unwrap();
        assert!(matches!(
            OlsFit::fit(&cp, 2, &[0, 1], true),
            Err(RegressionError::Collinear { column: 1, .. })
        ));
        let constant =
            CrossProducts::direct(&[DMatrix::from_fn(
                5,
                2,
                |i, j| if j == 0 { 4.0 } else { i as f64 },
            )])
            .unwrap();
        assert_eq!(
            OlsFit::fit(&constant, 0, &[1], true).unwrap_err(),
            RegressionError::ConstantResponse {
                column: 0,
                centred: true
            }
        );
    }
}
