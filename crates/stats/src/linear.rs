//! Ordinary least squares with full inference, by Householder QR of `[Z y]`.
//!
//! # Why the masked data give the same answer (seed 003 §2.1)
//! For an orthogonal `A`, `(AZ)ᵀ(AZ) = ZᵀZ` and `(AZ)ᵀ(Ay) = Zᵀy`, so
//! `β̂_new = ((AZ)ᵀAZ)⁻¹(AZ)ᵀAy = β̂`; the residuals become `A·e`, whose length, and therefore
//! the residual sum of squares, σ̂, standard errors, t, F and R², are unchanged. With an
//! intercept, `A·1ₙ = 1ₙ` is needed so that `1ₙ` is still the intercept column of the release.
//! Only the individual residuals (and hence diagnostic plots) differ.
//!
//! # Algorithm
//! Householder QR of the augmented matrix `[Z y] = Q·[[R, r], [0, ρ], [0, 0]]` (core's tall
//! QR, `orthomask_core::linalg::tall_r`). Then `β̂ = R⁻¹r` by back-substitution, `RSS = ρ²`, `(ZᵀZ)⁻¹ = R⁻¹R⁻ᵀ`, and the
//! regression sum of squares is the sum of the squared "effects" `r_j` (without `r₀` when the
//! first column is the intercept), as in R's `lm`. `ZᵀZ` is never formed or inverted, so the
//! accuracy depends on `κ(Z)`, not on `κ(Z)²`: on the NIST Longley problem (`κ ≈ 5e9`) every
//! coefficient and standard error keeps at least 10.8 significant digits, raw or masked.

use nalgebra::{DMatrix, DVector};
use orthomask_core::linalg::tall_r;
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::dataset::Dataset;
use crate::design::{Design, DesignError, Intercept};
use crate::inference::{Coefficient, InferenceError, Reference};
use crate::tolerance::EXACT_FIT_VARIANCE;

/// Errors of a least-squares fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinearError {
    /// The model could not be set up (unknown column, `n ≤ p`, rank deficiency, …).
    #[error(transparent)]
    Design(#[from] DesignError),
    /// The response is reproduced exactly: σ̂ is rounding noise
    /// ([`EXACT_FIT_VARIANCE`]) and t statistics are undefined.
    #[error(
        "the response {response:?} is fitted exactly (residuals are rounding noise); t and F tests are undefined — check that the response is not a copy or linear combination of predictors"
    )]
    ExactFit {
        /// Response name.
        response: String,
    },
    /// Wald inference failed (should not happen after the checks above).
    #[error(transparent)]
    Inference(#[from] InferenceError),
}

/// One line of an ANOVA table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnovaRow {
    sum_of_squares: f64,
    df: usize,
}

impl AnovaRow {
    /// Sum of squares.
    pub fn sum_of_squares(&self) -> f64 {
        self.sum_of_squares
    }

    /// Degrees of freedom.
    pub fn df(&self) -> usize {
        self.df
    }

    /// Mean square `SS / df`; `None` when `df = 0` (the regression line of an intercept-only
    /// model).
    pub fn mean_square(&self) -> Option<f64> {
        (self.df > 0).then(|| self.sum_of_squares / self.df as f64)
    }
}

/// The analysis-of-variance table of the overall regression.
///
/// # Formula
/// With intercept (centred): `SS_total = Σ(yᵢ − ȳ)²` on `n − 1` df, `SS_reg` on `p − 1` df.
/// Without intercept (uncentred): `SS_total = Σyᵢ²` on `n` df, `SS_reg = ‖ŷ‖²` on `p` df.
/// Always `SS_res = ‖y − ŷ‖²` on `n − p` df, `SS_total = SS_reg + SS_res`, and
/// `F = MS_reg / MS_res ~ F(df_reg, n − p)` under `H₀`: all slopes (all coefficients, without
/// intercept) are zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anova {
    regression: AnovaRow,
    residual: AnovaRow,
    total: AnovaRow,
    f_statistic: Option<f64>,
    p_value: Option<f64>,
    centered: bool,
}

impl Anova {
    /// Regression (model) line.
    pub fn regression(&self) -> AnovaRow {
        self.regression
    }

    /// Residual (error) line.
    pub fn residual(&self) -> AnovaRow {
        self.residual
    }

    /// Total line (centred with intercept, uncentred without).
    pub fn total(&self) -> AnovaRow {
        self.total
    }

    /// `F = MS_reg / MS_res`; `None` for an intercept-only model (no regression df).
    pub fn f_statistic(&self) -> Option<f64> {
        self.f_statistic
    }

    /// Upper-tail probability of the F statistic.
    pub fn p_value(&self) -> Option<f64> {
        self.p_value
    }

    /// Whether the sums of squares are about the mean (model with intercept).
    pub fn centered(&self) -> bool {
        self.centered
    }
}

/// A fitted linear model `y = Zβ + ε`, `ε ~ N(0, σ²I)`, with its inference.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearRegression {
    response: String,
    intercept: Intercept,
    coefficients: Vec<Coefficient>,
    covariance: DMatrix<f64>,
    fitted: DVector<f64>,
    residuals: DVector<f64>,
    sigma: f64,
    r_squared: f64,
    adj_r_squared: f64,
    anova: Anova,
}

impl LinearRegression {
    /// Fit `response ~ predictors` (plus intercept when asked) by least squares.
    ///
    /// Works the same on raw data and on a release `A·X` with `A` orthogonal (and `A·1ₙ = 1ₙ`
    /// when the intercept is included): see the module documentation.
    ///
    /// # Errors
    /// [`LinearError::Design`] for unknown columns, `n ≤ p` or a rank-deficient design
    /// (naming the dependent term); [`LinearError::ExactFit`] when the residuals vanish.
    pub fn fit(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        intercept: Intercept,
    ) -> Result<Self, LinearError> {
        let design = Design::new(data, response, predictors, intercept)?;
        Self::fit_design(&design)
    }

    /// Fit a prepared [`Design`].
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn fit_design(design: &Design) -> Result<Self, LinearError> {
        let (n, p) = (design.n(), design.p());
        let z = design.matrix();
        // R of [Z y], factored in place of a copy of it (core's tall QR: cache-sized chunks, on
        // every core natively, the same bits on any number of threads; R's rows may carry signs,
        // which cancel below). n > p is guaranteed by `Design`, so R is (p + 1) × (p + 1).
        let mut columns: Vec<&[f64]> = z.as_slice().chunks_exact(n).collect();
        columns.push(design.y().as_slice());
        let r_full = tall_r(&columns);
        let r = r_full.view((0, 0), (p, p)).into_owned();
        design.check_rank(z, &r)?;
        let effects = r_full.view((0, p), (p, 1)).into_owned();
        let rho = r_full[(p, p)];

        let beta = design.solve_r(&r, &effects)?;
        let r_inverse = design.solve_r(&r, &DMatrix::identity(p, p))?;

        let rss = rho * rho;
        let df_resid = n - p;
        let sigma2 = rss / df_resid as f64;
        let fitted = z * beta.column(0);
        let fitted_mean = fitted.mean();
        let fitted_scale =
            fitted_mean * fitted_mean + fitted.variance() * n as f64 / (n - 1) as f64;
        if sigma2 <= EXACT_FIT_VARIANCE * fitted_scale {
            return Err(LinearError::ExactFit {
                response: design.response().to_owned(),
            });
        }
        let covariance = (&r_inverse * r_inverse.transpose()) * sigma2;

        let reference = Reference::StudentT {
            df: df_resid as f64,
        };
        let coefficients = design
            .names()
            .iter()
            .enumerate()
            .map(|(j, name)| Coefficient::wald(name, beta[j], covariance[(j, j)].sqrt(), reference))
            .collect::<Result<Vec<_>, _>>()?;

        let centered = design.intercept() == Intercept::Included;
        let skip = usize::from(centered);
        let ss_reg: f64 = effects.iter().skip(skip).map(|e| e * e).sum();
        let ss_total = ss_reg + rss;
        let df_reg = p - skip;
        let r_squared = ss_reg / ss_total;
        // R: adj.r.squared = 1 − (1 − R²)·(n − df.int)/rdf, df.int = 1 with intercept, else 0.
        let adj_r_squared = 1.0 - (1.0 - r_squared) * (n - skip) as f64 / df_resid as f64;
        let (f_statistic, p_value) = if df_reg > 0 {
            let f = (ss_reg / df_reg as f64) / sigma2;
            let dist = FisherSnedecor::new(df_reg as f64, df_resid as f64).map_err(|_| {
                InferenceError::BadDegreesOfFreedom {
                    df: df_resid as f64,
                }
            })?;
            (Some(f), Some(dist.sf(f)))
        } else {
            (None, None)
        };
        let anova = Anova {
            regression: AnovaRow {
                sum_of_squares: ss_reg,
                df: df_reg,
            },
            residual: AnovaRow {
                sum_of_squares: rss,
                df: df_resid,
            },
            total: AnovaRow {
                sum_of_squares: ss_total,
                df: n - skip,
            },
            f_statistic,
            p_value,
            centered,
        };

        let residuals = design.y() - &fitted;
        Ok(Self {
            response: design.response().to_owned(),
            intercept: design.intercept(),
            coefficients,
            covariance,
            fitted,
            residuals,
            sigma: sigma2.sqrt(),
            r_squared,
            adj_r_squared,
            anova,
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

    /// Coefficient table, in design order (`"(Intercept)"` first when included).
    pub fn coefficients(&self) -> &[Coefficient] {
        &self.coefficients
    }

    /// The coefficient called `name`, if the model has it.
    pub fn coefficient(&self, name: &str) -> Option<&Coefficient> {
        self.coefficients.iter().find(|c| c.name() == name)
    }

    /// Estimated covariance of `β̂`, `σ̂²·(ZᵀZ)⁻¹` (computed as `σ̂²·R⁻¹R⁻ᵀ`).
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// Fitted values `Zβ̂` (on a masked release: `A·ŷ`).
    pub fn fitted(&self) -> &DVector<f64> {
        &self.fitted
    }

    /// Residuals `y − Zβ̂` (on a masked release: `A·e`, useless for diagnostics).
    pub fn residuals(&self) -> &DVector<f64> {
        &self.residuals
    }

    /// Residual standard error `σ̂ = √(RSS / (n − p))`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// `R² = SS_reg / SS_total` (uncentred without intercept).
    pub fn r_squared(&self) -> f64 {
        self.r_squared
    }

    /// `R²_adj = 1 − (1 − R²)·(n − i)/(n − p)`, `i = 1` with intercept, else 0 (R's formula).
    pub fn adj_r_squared(&self) -> f64 {
        self.adj_r_squared
    }

    /// Overall F statistic (see [`Anova`]); `None` for an intercept-only model.
    pub fn f_statistic(&self) -> Option<f64> {
        self.anova.f_statistic
    }

    /// p-value of the overall F test.
    pub fn f_p_value(&self) -> Option<f64> {
        self.anova.p_value
    }

    /// Residual degrees of freedom `n − p`.
    pub fn df_resid(&self) -> usize {
        self.anova.residual.df
    }

    /// Number of observations `n`.
    pub fn n(&self) -> usize {
        self.fitted.len()
    }

    /// The ANOVA table.
    pub fn anova(&self) -> &Anova {
        &self.anova
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    fn close(a: f64, b: f64) -> bool {
        relative_difference(a, b) < HAND_SOLVED_RELATIVE
    }

    fn data(columns: &[(&str, &[f64])]) -> Dataset {
        Dataset::from_columns(
            columns
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.to_vec()))
                .collect(),
        )
        .unwrap()
    }

    /// By hand: x = (0, 1, 2, 3), y = (1, 3, 2, 4). x̄ = 1.5, ȳ = 2.5, Sxx = 5, Sxy = 4, so
    /// slope 0.8 and intercept 2.5 − 0.8·1.5 = 1.3. Fitted (1.3, 2.1, 2.9, 3.7), residuals
    /// (−0.3, 0.9, −0.9, 0.3), RSS = 1.8 on 2 df, σ̂² = 0.9. SE(slope) = √(0.9/5) = √0.18,
    /// SE(intercept) = √(0.9·(1/4 + 1.5²/5)) = √0.63. SS_total = 5, SS_reg = 3.2, R² = 0.64,
    /// adjusted 1 − 0.36·3/2 = 0.46, F = 3.2/0.9 = 32/9 = t²(slope).
    #[test]
    fn hand_solved_simple_regression() {
        let d = data(&[("x", &[0.0, 1.0, 2.0, 3.0]), ("y", &[1.0, 3.0, 2.0, 4.0])]);
        let fit = LinearRegression::fit(&d, "y", &["x"], Intercept::Included).unwrap();
        let [b0, b1] = fit.coefficients() else {
            panic!("two coefficients expected")
        };
        assert_eq!(b0.name(), "(Intercept)");
        assert!(close(b0.estimate(), 1.3) && close(b1.estimate(), 0.8));
        assert!(close(b1.std_error(), 0.18f64.sqrt()));
        assert!(close(b0.std_error(), 0.63f64.sqrt()));
        assert!(close(b1.statistic(), 0.8 / 0.18f64.sqrt()));
        assert!(close(fit.sigma(), 0.9f64.sqrt()));
        assert!(close(fit.r_squared(), 0.64));
        assert!(close(fit.adj_r_squared(), 0.46));
        assert!(close(fit.f_statistic().unwrap(), 32.0 / 9.0));
        assert!(close(fit.f_p_value().unwrap(), b1.p_value()));
        assert_eq!((fit.n(), fit.df_resid()), (4, 2));
        let anova = fit.anova();
        assert!(anova.centered());
        assert!(close(anova.regression().sum_of_squares(), 3.2));
        assert!(close(anova.residual().sum_of_squares(), 1.8));
        assert!(close(anova.total().sum_of_squares(), 5.0));
        assert_eq!(
            (
                anova.regression().df(),
                anova.residual().df(),
                anova.total().df()
            ),
            (1, 2, 3)
        );
        assert!(close(anova.residual().mean_square().unwrap(), 0.9));
        for (e, expected) in fit.residuals().iter().zip([-0.3, 0.9, -0.9, 0.3]) {
            assert!(close(*e, expected));
        }
        assert!(close(fit.fitted()[3], 3.7));
        assert!(close(fit.covariance()[(1, 1)], 0.18));
    }

    /// By hand, no intercept: x = (1, 2, 3), y = (1, 3, 2). β̂ = Σxy/Σx² = 13/14,
    /// RSS = Σy² − β̂·Σxy = 14 − 169/14 = 27/14 on 2 df, σ̂² = 27/28, SE = √(27/28/14).
    /// Uncentred: SS_total = Σy² = 14 on 3 df, SS_reg = 169/14, R² = 169/196,
    /// adjusted 1 − (27/196)·3/2, F = (169/14)/(27/28) = 338/27.
    #[test]
    fn hand_solved_regression_through_the_origin() {
        let d = data(&[("x", &[1.0, 2.0, 3.0]), ("y", &[1.0, 3.0, 2.0])]);
        let fit = LinearRegression::fit(&d, "y", &["x"], Intercept::Excluded).unwrap();
        let b = &fit.coefficients()[0];
        assert_eq!(fit.coefficients().len(), 1);
        assert!(close(b.estimate(), 13.0 / 14.0));
        assert!(close(b.std_error(), (27.0f64 / 28.0 / 14.0).sqrt()));
        assert!(close(fit.r_squared(), 169.0 / 196.0));
        assert!(close(fit.adj_r_squared(), 1.0 - 27.0 / 196.0 * 1.5));
        assert!(close(fit.f_statistic().unwrap(), 338.0 / 27.0));
        assert!(!fit.anova().centered());
        assert!(close(fit.anova().total().sum_of_squares(), 14.0));
        assert_eq!(fit.anova().total().df(), 3);
        assert_eq!(fit.intercept(), Intercept::Excluded);
    }

    /// By hand: the intercept-only model is the one-sample t test. y = (1, 2, 3, 6):
    /// mean 3, s² = (4 + 1 + 0 + 9)/3 = 14/3, SE = √(14/12); no F test.
    #[test]
    fn intercept_only_model_is_the_one_sample_t_test() {
        let d = data(&[("y", &[1.0, 2.0, 3.0, 6.0])]);
        let fit = LinearRegression::fit(&d, "y", &[], Intercept::Included).unwrap();
        assert!(close(fit.coefficients()[0].estimate(), 3.0));
        assert!(close(
            fit.coefficients()[0].std_error(),
            (14.0f64 / 12.0).sqrt()
        ));
        assert_eq!(fit.f_statistic(), None);
        assert_eq!(fit.f_p_value(), None);
        assert_eq!(fit.anova().regression().mean_square(), None);
        assert!(fit.r_squared().abs() < HAND_SOLVED_RELATIVE);
    }

    #[test]
    fn rank_deficiency_and_exact_fits_are_reported() {
        let d = data(&[
            ("x", &[1.0, 2.0, 3.0, 4.0]),
            ("twice", &[2.0, 4.0, 6.0, 8.0]),
            ("y", &[1.0, 3.0, 2.0, 5.0]),
            ("line", &[3.0, 5.0, 7.0, 9.0]),
            ("qa", &[888.0; 4]),
        ]);
        let err = LinearRegression::fit(&d, "y", &["x", "twice"], Intercept::Included);
        assert!(matches!(
            err,
            Err(LinearError::Design(DesignError::RankDeficient { ref column, .. })) if column == "twice"
        ));
        let err = LinearRegression::fit(&d, "y", &["qa"], Intercept::Included).unwrap_err();
        assert!(err.to_string().contains("\"qa\" is a linear combination"));
        assert_eq!(
            LinearRegression::fit(&d, "line", &["x"], Intercept::Included).unwrap_err(),
            LinearError::ExactFit {
                response: "line".into()
            }
        );
        assert!(matches!(
            LinearRegression::fit(&d, "y", &["x", "twice", "line"], Intercept::Included),
            Err(LinearError::Design(DesignError::TooFewObservations {
                n: 4,
                p: 4
            }))
        ));
    }
}
