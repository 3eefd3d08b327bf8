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
//! Two Householder stages. First core's tall QR (`orthomask_core::linalg::tall_r`: cache-sized
//! chunks, on every core natively, the same bits on any number of threads) reduces the `n × (p+1)`
//! matrix `[Z y]` to its `(p+1) × (p+1)` factor `[R r]` without copying it; Householder QR is
//! backward stable column by column, so this costs no accuracy however the columns are scaled,
//! and `[R r]` has the same column lengths, Gram matrix and least-squares solutions as `[Z y]`.
//! Then a column-equilibrated, column-pivoted Householder QR of that small factor ([`PivotedQr`],
//! which therefore decides rank exactly as it would on `[Z y]` itself): columns are
//! scaled to unit length, the intercept is the first pivot, the others come in order of their
//! length outside the span of those already chosen, and a column whose remaining length is at
//! most [`PIVOTED_RANK_RELATIVE`] of its own is dropped as collinear (R reports such an aliased
//! coefficient as `NA`; here it is listed by [`LinearRegression::aliased`] with the terms it
//! depends on). On the `r` kept columns, `β̂ = D·R⁻¹(Qᵀy)₁…r` (`D` undoes the scaling),
//! `RSS = ‖(Qᵀy)_{r+1…n}‖²`, `(ZᵀZ)⁻¹ = D·R⁻¹R⁻ᵀ·D`, and the regression sum of squares is the
//! sum of the squared effects `(Qᵀy)_k` (without the intercept's), as in R's `lm`. `ZᵀZ` is never
//! formed or inverted, and Householder QR is backward stable column by column, so the accuracy
//! depends on the condition number of the *scaled* design, not on the columns' units: on the
//! NIST Longley problem every coefficient and standard error keeps at least 10.8 significant
//! digits, raw or masked, and columns spread over 12 orders of magnitude cost nothing.
//!
//! # Exact fits
//! When the residuals are rounding noise (`σ̂² < 10⁻³⁰·(mean(ŷ)² + var(ŷ))`, R's rule) the fit is
//! still reported, as R's `summary.lm` does, with the warning [`EXACT_FIT_WARNING`]: standard
//! errors tiny or zero, t statistics huge, `±∞` or NaN, p-values as they come.

use nalgebra::{DMatrix, DVector};
use orthomask_core::linalg::tall_r;
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

use crate::dataset::Dataset;
use crate::design::{Design, DesignError, Intercept};
use crate::inference::{Coefficient, InferenceError, Reference};
use crate::pivoted_qr::PivotedQr;
use crate::tolerance::{EXACT_FIT_VARIANCE, PIVOTED_RANK_RELATIVE};

/// The warning R's `summary.lm` gives for an exact fit, word for word; front ends show it next
/// to the coefficient table.
pub const EXACT_FIT_WARNING: &str = "essentially perfect fit: summary may be unreliable";

/// Errors of a least-squares fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinearError {
    /// The model could not be set up (unknown column, `n ≤ p`, …).
    #[error(transparent)]
    Design(#[from] DesignError),
    /// Every column of the design is zero: there is nothing to estimate.
    #[error(
        "every term of the model for {response:?} is an all-zero column; nothing can be estimated — add the intercept or non-zero predictors"
    )]
    NothingEstimable {
        /// Response name.
        response: String,
    },
    /// Wald inference failed (should not happen after the checks above).
    #[error(transparent)]
    Inference(#[from] InferenceError),
}

/// A term dropped from the fit because its column is (numerically) a linear combination of the
/// kept ones — R's aliased coefficient, printed as `NA`.
#[derive(Debug, Clone, PartialEq)]
pub struct AliasedTerm {
    name: String,
    collinear_with: Vec<String>,
    remaining_share: f64,
}

impl AliasedTerm {
    /// The term's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kept terms it is collinear with, in design order (empty for an all-zero column).
    pub fn collinear_with(&self) -> &[String] {
        &self.collinear_with
    }

    /// Length of its column outside the span of the kept ones, relative to its own length
    /// (at most [`PIVOTED_RANK_RELATIVE`]; 0 for an all-zero column).
    pub fn remaining_share(&self) -> f64 {
        self.remaining_share
    }
}

impl std::fmt::Display for AliasedTerm {
    /// One line, e.g. `x3 dropped: collinear with x1, x2 (remaining length 2.1e-15 of its own,
    /// at most 1e-10)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.collinear_with.is_empty() {
            return write!(f, "{} dropped: the column is all zeros", self.name);
        }
        write!(
            f,
            "{} dropped: collinear with {} (remaining length {:.1e} of its own, at most {:.0e})",
            self.name,
            self.collinear_with.join(", "),
            self.remaining_share,
            PIVOTED_RANK_RELATIVE
        )
    }
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
    aliased: Vec<AliasedTerm>,
    exact_fit: bool,
}

impl LinearRegression {
    /// Fit `response ~ predictors` (plus intercept when asked) by least squares.
    ///
    /// Works the same on raw data and on a release `A·X` with `A` orthogonal (and `A·1ₙ = 1ₙ`
    /// when the intercept is included): see the module documentation.
    ///
    /// # Errors
    /// [`LinearError::Design`] for unknown columns or `n ≤ p`; [`LinearError::NothingEstimable`]
    /// when every term is an all-zero column. Collinear terms are dropped and reported
    /// ([`aliased`](Self::aliased)), and an exact fit is reported with a warning
    /// ([`is_exact_fit`](Self::is_exact_fit)), not refused.
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
        let n = design.n();
        let z = design.matrix();
        let centered = design.intercept() == Intercept::Included;
        // Stage one: [R r] of [Z y] (rows may carry signs, which cancel in every result below).
        // `Design` guarantees n > p, so the factor is (p + 1) × (p + 1).
        let p = design.p();
        let mut columns: Vec<&[f64]> = z.as_slice().chunks_exact(n).collect();
        columns.push(design.y().as_slice());
        let factor = tall_r(&columns);
        // Stage two: pivoting and rank on the small factor.
        let qr = PivotedQr::new(
            &factor.columns(0, p).into_owned(),
            &factor.column(p).into_owned(),
            centered,
        );
        let rank = qr.rank();
        if rank == 0 {
            return Err(LinearError::NothingEstimable {
                response: design.response().to_owned(),
            });
        }
        let names = design.names();
        let aliased = qr
            .dropped()
            .iter()
            .map(|d| AliasedTerm {
                name: names[d.column].clone(),
                collinear_with: d.collinear_with.iter().map(|&k| names[k].clone()).collect(),
                remaining_share: d.remaining_share,
            })
            .collect();

        // Pivot order → design order for everything reported.
        let pivoted = qr.kept();
        let mut kept: Vec<usize> = pivoted.to_vec();
        kept.sort_unstable();
        let position: Vec<usize> = kept
            .iter()
            .map(|c| pivoted.iter().position(|k| k == c).unwrap_or(0))
            .collect();

        let r = qr.r();
        let effects = qr.effects();
        let singular = || {
            LinearError::Design(DesignError::RankDeficient {
                column: names[pivoted[rank - 1]].clone(),
                ratio: 0.0,
            })
        };
        let scaled_beta = r.solve_upper_triangular(&effects).ok_or_else(singular)?;
        let r_inverse = r
            .solve_upper_triangular(&DMatrix::identity(rank, rank))
            .ok_or_else(singular)?;
        let unscale = |k: usize| 1.0 / qr.column_norm(pivoted[k]);
        let beta: Vec<f64> = position
            .iter()
            .map(|&k| scaled_beta[k] * unscale(k))
            .collect();
        let scaled_covariance = &r_inverse * r_inverse.transpose();
        let unit_covariance = DMatrix::from_fn(rank, rank, |i, j| {
            let (a, b) = (position[i], position[j]);
            scaled_covariance[(a, b)] * unscale(a) * unscale(b)
        });

        let rss = qr.residual_sum_of_squares();
        let df_resid = n - rank;
        let sigma2 = rss / df_resid as f64;
        let mut fitted = DVector::zeros(n);
        for (&column, &b) in kept.iter().zip(&beta) {
            fitted.axpy(b, &z.column(column), 1.0);
        }
        let fitted_mean = fitted.mean();
        let fitted_scale =
            fitted_mean * fitted_mean + fitted.variance() * n as f64 / (n - 1) as f64;
        // R's summary.lm: "essentially perfect fit" when resvar < (mean(f)² + var(f))·1e-30.
        let exact_fit = sigma2 < EXACT_FIT_VARIANCE * fitted_scale;
        let covariance = &unit_covariance * sigma2;

        let reference = Reference::StudentT {
            df: df_resid as f64,
        };
        let coefficients = kept
            .iter()
            .enumerate()
            .map(|(i, &column)| {
                Coefficient::wald_allowing_zero_error(
                    &names[column],
                    beta[i],
                    covariance[(i, i)].max(0.0).sqrt(),
                    reference,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;

        // The intercept is pinned as the first pivot, so its effect is the first one.
        let skip = usize::from(centered);
        let ss_reg: f64 = effects.iter().skip(skip).map(|e| e * e).sum();
        let ss_total = ss_reg + rss;
        let df_reg = rank - skip;
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
            // F = ∞ (an exact fit with zero residuals) has p-value 0, as R's pf gives it.
            let p = if f.is_finite() {
                dist.sf(f)
            } else if f.is_nan() {
                f64::NAN
            } else {
                0.0
            };
            (Some(f), Some(p))
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
            aliased,
            exact_fit,
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

    /// Coefficient table of the estimable terms, in design order (`"(Intercept)"` first when
    /// included); aliased terms are left out (see [`aliased`](Self::aliased)).
    pub fn coefficients(&self) -> &[Coefficient] {
        &self.coefficients
    }

    /// Terms dropped as collinear with the kept ones (R's `NA` coefficients), in design order.
    pub fn aliased(&self) -> &[AliasedTerm] {
        &self.aliased
    }

    /// Whether the residuals are rounding noise ([`EXACT_FIT_WARNING`]): the fit is reported,
    /// but its standard errors, t, p and F say nothing.
    pub fn is_exact_fit(&self) -> bool {
        self.exact_fit
    }

    /// The coefficient called `name`, if the model has it.
    pub fn coefficient(&self, name: &str) -> Option<&Coefficient> {
        self.coefficients.iter().find(|c| c.name() == name)
    }

    /// Estimated covariance of `β̂` over the estimable terms (in [`coefficients`](Self::coefficients)
    /// order), `σ̂²·(ZᵀZ)⁻¹` (computed as `σ̂²·D·R⁻¹R⁻ᵀ·D`).
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

    /// Residual degrees of freedom `n − r` (`r` the number of estimable terms).
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
    use crate::tolerance::{
        EXACT_DEPENDENCY_SHARE, EXACT_FIT_P_VALUE, EXACT_FIT_RESIDUAL, HAND_SOLVED_RELATIVE,
        relative_difference,
    };

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

    /// Collinear terms are dropped and named, as R's `lm` reports them `NA`: `twice = 2·x` is
    /// aliased with `x`, and a constant column with the intercept; the remaining fit is the one
    /// without them (y ~ x by hand: x̄ = 2.5, ȳ = 3, Sxx = 5, Sxy = 1.5 − 0.5 + 3 = 4,
    /// slope 0.8, intercept 3 − 2 = 1).
    #[test]
    fn collinear_terms_are_dropped_and_named() {
        let d = data(&[
            ("x", &[1.0, 2.0, 3.0, 4.0]),
            ("twice", &[2.0, 4.0, 6.0, 8.0]),
            ("y", &[2.0, 3.0, 2.0, 5.0]),
            ("qa", &[888.0; 4]),
            ("zero", &[0.0; 4]),
        ]);
        let fit = LinearRegression::fit(&d, "y", &["x", "twice"], Intercept::Included).unwrap();
        let [aliased] = fit.aliased() else {
            panic!("one aliased term expected: {:?}", fit.aliased())
        };
        assert_eq!(aliased.name(), "twice");
        assert_eq!(aliased.collinear_with(), ["x"]);
        assert!(aliased.remaining_share() < EXACT_DEPENDENCY_SHARE);
        assert_eq!(
            aliased.to_string().split(" (").next(),
            Some("twice dropped: collinear with x")
        );
        let names: Vec<&str> = fit.coefficients().iter().map(|c| c.name()).collect();
        assert_eq!(names, ["(Intercept)", "x"]);
        assert!(close(fit.coefficients()[0].estimate(), 1.0));
        assert!(close(fit.coefficients()[1].estimate(), 0.8));
        assert_eq!(fit.df_resid(), 2);
        assert_eq!(fit.covariance().shape(), (2, 2));
        assert!(!fit.is_exact_fit());

        let qa = LinearRegression::fit(&d, "y", &["qa", "x"], Intercept::Included).unwrap();
        assert_eq!(qa.aliased()[0].name(), "qa");
        assert_eq!(qa.aliased()[0].collinear_with(), ["(Intercept)"]);
        let zero = LinearRegression::fit(&d, "y", &["x", "zero"], Intercept::Included).unwrap();
        assert_eq!(
            zero.aliased()[0].to_string(),
            "zero dropped: the column is all zeros"
        );
        assert_eq!(
            LinearRegression::fit(&d, "y", &["zero"], Intercept::Excluded).unwrap_err(),
            LinearError::NothingEstimable {
                response: "y".into()
            }
        );
        assert!(matches!(
            LinearRegression::fit(&d, "y", &["x", "twice", "qa"], Intercept::Included),
            Err(LinearError::Design(DesignError::TooFewObservations {
                n: 4,
                p: 4
            }))
        ));
    }

    /// An exact fit is reported as R reports it: line = 1 + 2x gives coefficients (1, 2),
    /// residuals that are rounding noise, the "essentially perfect fit" flag, and R² = 1.
    #[test]
    fn exact_fit_is_reported_with_a_warning() {
        let d = data(&[
            ("x", &[1.0, 2.0, 3.0, 4.0]),
            ("line", &[3.0, 5.0, 7.0, 9.0]),
        ]);
        let fit = LinearRegression::fit(&d, "line", &["x"], Intercept::Included).unwrap();
        assert!(fit.is_exact_fit());
        assert!(close(fit.coefficients()[0].estimate(), 1.0));
        assert!(close(fit.coefficients()[1].estimate(), 2.0));
        assert!(fit.residuals().amax() < EXACT_FIT_RESIDUAL);
        assert!(fit.sigma() < EXACT_FIT_RESIDUAL);
        assert!(close(fit.r_squared(), 1.0));
        for c in fit.coefficients() {
            assert!(c.std_error() < EXACT_FIT_RESIDUAL);
            assert!(c.p_value().is_nan() || c.p_value() < EXACT_FIT_P_VALUE);
        }
        assert_eq!(
            EXACT_FIT_WARNING,
            "essentially perfect fit: summary may be unreliable"
        );
    }
}
