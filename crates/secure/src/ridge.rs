//! Secure ridge regression for a given λ (seed 001 §3.3, equations (4)–(5); Hoerl & Kennard
//! 1970).
//!
//! # Formula
//! Equation (5): `β̂_R = (D₀ᵀD₀ + λI)⁻¹ D₀ᵀD_i`, the minimiser of
//! `(D_i − D₀β)ᵀ(D_i − D₀β) + λβᵀβ` (equation (4)). Both matrices are blocks of the shared
//! cross-products, so any agency computes `β̂_R` alone.
//!
//! # Interpretation: the intercept is not penalised
//! Taken literally with the column of ones inside `D₀`, (5) shrinks the intercept towards 0 too,
//! and the fit then depends on where the response's origin happens to be (adding a constant to
//! `D_i` changes every slope). Hoerl & Kennard, and every ridge implementation since, centre the
//! data and leave the intercept unpenalised. With `intercept = true` we do that:
//! `β̂ = (S_xx + λI)⁻¹ S_xy` on centred cross-products and `β̂₀ = ȳ − x̄ᵀβ̂`. With
//! `intercept = false` the function is (5) verbatim on raw cross-products. The predictors are not
//! standardised: λ acts on the scale the data are in, as in (4); standardise beforehand if the
//! attributes have very different units.
//!
//! Reported with the coefficients: the residual sum of squares
//! `RSS = S_yy − 2β̂ᵀS_xy + β̂ᵀS_xxβ̂` and the effective degrees of freedom
//! `tr(S_xx (S_xx + λI)⁻¹)` (+1 for the intercept) of Hastie, Tibshirani & Friedman, *The
//! Elements of Statistical Learning*, eq. (3.50).

use crate::cross_products::CrossProducts;
use crate::regression::{Design, RegressionError, Term};
use crate::tolerance::COLLINEARITY;
use nalgebra::{DMatrix, DVector};

/// Errors of ridge regression.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RidgeError {
    /// The model specification is invalid (see [`RegressionError`]).
    #[error(transparent)]
    Design(#[from] RegressionError),
    /// λ is negative or not finite.
    #[error("the ridge penalty λ must be finite and ≥ 0; got {lambda}")]
    BadPenalty {
        /// The value given.
        lambda: f64,
    },
    /// The model has no penalised coefficient.
    #[error("ridge regression needs at least one predictor")]
    NoPredictors,
    /// `S_xx + λI` is not (numerically) positive definite: only for λ = 0, or λ negligible
    /// against `S_xx`, with collinear predictors (share threshold
    /// [`COLLINEARITY`]).
    #[error("S_xx + λI is singular for λ = {lambda}; use λ > 0 or drop collinear predictors")]
    Singular {
        /// The value given.
        lambda: f64,
    },
}

/// A ridge fit computed from cross-products.
#[derive(Clone, Debug, PartialEq)]
pub struct RidgeFit {
    terms: Vec<Term>,
    lambda: f64,
    coefficients: DVector<f64>,
    rss: f64,
    effective_df: f64,
}

impl RidgeFit {
    /// Ridge regression of `response` on `predictors` with penalty `lambda` (see the
    /// [module documentation](self)).
    ///
    /// # Example (by hand)
    /// `x = (1, 2, 3)`, `y = (1, 3, 2)` with intercept and λ = 2: `S_xx = 2`, `S_xy = 1`, so
    /// `β̂ = 1/(2 + 2) = 1/4`, `β̂₀ = 2 − 2·¼ = 3/2`; fitted values `(7/4, 2, 9/4)`, residuals
    /// `(−3/4, 1, −1/4)`, `RSS = 13/8`; effective df `2/4 + 1 = 3/2`.
    ///
    /// Without intercept, (5) verbatim on `x = (1, 2)`, `y = (1, 3)`, λ = 1: `β̂ = 7/(5 + 1) = 7/6`,
    /// residuals `(−1/6, 2/3)`, `RSS = 17/36`, effective df `5/6`.
    ///
    /// # Errors
    /// [`RidgeError::BadPenalty`], [`RidgeError::NoPredictors`], [`RidgeError::Design`] for an
    /// invalid model, [`RidgeError::Singular`].
    pub fn fit(
        cross_products: &CrossProducts,
        response: usize,
        predictors: &[usize],
        lambda: f64,
        intercept: bool,
    ) -> Result<Self, RidgeError> {
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(RidgeError::BadPenalty { lambda });
        }
        if predictors.is_empty() {
            return Err(RidgeError::NoPredictors);
        }
        let design = Design::new(cross_products, response, predictors, intercept)?;
        let m = design.predictors();
        let penalised = &design.sxx + DMatrix::identity(m, m) * lambda;
        let cholesky = penalised
            .clone()
            .cholesky()
            .ok_or(RidgeError::Singular { lambda })?;
        // L_kk² / A_kk is the share of pivot k not explained by the earlier ones (1 − R² for
        // λ = 0); refuse numerically singular systems the way the sweep does.
        let l = cholesky.l();
        if (0..m).any(|k| {
            let share = l[(k, k)].powi(2);
            share.is_nan() || share <= COLLINEARITY * penalised[(k, k)]
        }) {
            return Err(RidgeError::Singular { lambda });
        }
        let slopes = cholesky.solve(&design.sxy);
        let inverse = cholesky.inverse();
        let rss = (design.syy - 2.0 * slopes.dot(&design.sxy)
            + slopes.dot(&(&design.sxx * &slopes)))
        .max(0.0);
        let effective_df = (&design.sxx * &inverse).trace() + f64::from(u8::from(intercept));
        let (coefficients, _) = design.assemble(&slopes, &inverse);
        Ok(Self {
            terms: design.terms,
            lambda,
            coefficients,
            rss,
            effective_df,
        })
    }

    /// The terms, in the order of the coefficients.
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// `β̂_R`, in the order of the terms.
    pub fn coefficients(&self) -> &DVector<f64> {
        &self.coefficients
    }

    /// Residual sum of squares of the ridge fit.
    pub fn residual_sum_of_squares(&self) -> f64 {
        self.rss
    }

    /// Effective degrees of freedom.
    pub fn effective_df(&self) -> f64 {
        self.effective_df
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regression::OlsFit;
    use crate::tolerance::HAND_COMPUTED;

    fn cross_products(x: &[f64], y: &[f64]) -> CrossProducts {
        let n = x.len();
        CrossProducts::direct(&[
            DMatrix::from_column_slice(n, 1, x),
            DMatrix::from_column_slice(n, 1, y),
        ])
        .unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= HAND_COMPUTED * b.abs().max(1.0)
    }

    /// The first example of [`RidgeFit::fit`].
    #[test]
    fn hand_example_with_intercept() {
        let fit = RidgeFit::fit(
            &cross_products(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]),
            1,
            &[0],
            2.0,
            true,
        )
        .unwrap();
        assert!(close(fit.coefficients()[0], 1.5));
        assert!(close(fit.coefficients()[1], 0.25));
        assert!(close(fit.residual_sum_of_squares(), 13.0 / 8.0));
        assert!(close(fit.effective_df(), 1.5));
        assert!(close(fit.lambda(), 2.0));
        assert_eq!(fit.terms(), &[Term::Intercept, Term::Column(0)]);
    }

    /// The second example of [`RidgeFit::fit`]: equation (5) verbatim.
    #[test]
    fn hand_example_equation_5() {
        let fit = RidgeFit::fit(
            &cross_products(&[1.0, 2.0], &[1.0, 3.0]),
            1,
            &[0],
            1.0,
            false,
        )
        .unwrap();
        assert!(close(fit.coefficients()[0], 7.0 / 6.0));
        assert!(close(fit.residual_sum_of_squares(), 17.0 / 36.0));
        assert!(close(fit.effective_df(), 5.0 / 6.0));
    }

    /// λ = 0 is ordinary least squares; a larger λ shrinks the slopes.
    #[test]
    fn zero_penalty_is_ols_and_penalty_shrinks() {
        let x = [1.0, 2.0, 3.0, 4.0, 6.0];
        let y = [2.0, 2.5, 4.0, 4.5, 7.0];
        let cp = cross_products(&x, &y);
        let ridge = RidgeFit::fit(&cp, 1, &[0], 0.0, true).unwrap();
        let ols = OlsFit::fit(&cp, 1, &[0], true).unwrap();
        assert!((ridge.coefficients() - ols.coefficients()).amax() < HAND_COMPUTED * 10.0);
        assert!(close(
            ridge.residual_sum_of_squares(),
            ols.residual_sum_of_squares()
        ));
        let shrunk = RidgeFit::fit(&cp, 1, &[0], 5.0, true).unwrap();
        assert!(shrunk.coefficients()[1].abs() < ridge.coefficients()[1].abs());
        assert!(shrunk.residual_sum_of_squares() > ridge.residual_sum_of_squares());
    }

    #[test]
    fn invalid_penalties_and_models_are_refused() {
        let cp = cross_products(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]);
        assert!(matches!(
            RidgeFit::fit(&cp, 1, &[0], -1.0, true),
            Err(RidgeError::BadPenalty { lambda }) if lambda < 0.0
        ));
        assert!(matches!(
            RidgeFit::fit(&cp, 1, &[0], f64::NAN, true),
            Err(RidgeError::BadPenalty { .. })
        ));
        assert_eq!(
            RidgeFit::fit(&cp, 1, &[], 1.0, true).unwrap_err(),
            RidgeError::NoPredictors
        );
        assert_eq!(
            RidgeFit::fit(&cp, 1, &[1], 1.0, true).unwrap_err(),
            RidgeError::Design(RegressionError::ResponseAmongPredictors { column: 1 })
        );
        let collinear = CrossProducts::direct(&[DMatrix::from_fn(5, 3, |i, j| match j {
            0 => i as f64,
            1 => 3.0 * i as f64,
            _ => ((i * 3) % 4) as f64,
        })])
        .unwrap();
        assert!(matches!(
            RidgeFit::fit(&collinear, 2, &[0, 1], 0.0, true),
            Err(RidgeError::Singular { .. })
        ));
        assert!(RidgeFit::fit(&collinear, 2, &[0, 1], 0.5, true).is_ok());
    }
}
