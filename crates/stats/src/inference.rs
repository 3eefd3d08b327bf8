//! Wald inference for one coefficient: statistic, two-sided p-value and 95% confidence interval.
//!
//! Shared by the linear model (Student t reference) and the logistic model (standard normal
//! reference). The distributions come from `statrs`; nothing here approximates a special
//! function by hand.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Coverage of every confidence interval this crate reports.
pub const CONFIDENCE_LEVEL: f64 = 0.95;

/// Errors when computing Wald inference.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InferenceError {
    /// The reference distribution cannot be built (degrees of freedom not positive and finite).
    #[error(
        "the t reference distribution needs positive degrees of freedom, got {df}; the model has as many coefficients as observations"
    )]
    BadDegreesOfFreedom {
        /// The degrees of freedom asked for.
        df: f64,
    },
    /// A standard error is zero, negative or not finite.
    #[error(
        "the standard error of {name:?} is {std_error}; a Wald test needs a positive finite standard error"
    )]
    BadStandardError {
        /// Coefficient name.
        name: String,
        /// The offending value.
        std_error: f64,
    },
}

/// The distribution a Wald statistic is referred to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reference {
    /// Student t with `df` degrees of freedom (linear model with estimated σ).
    StudentT {
        /// Residual degrees of freedom `n − p`.
        df: f64,
    },
    /// Standard normal (maximum-likelihood estimates, large-sample theory).
    Normal,
}

impl Reference {
    /// The column label of the statistic: `"t"` or `"z"`.
    pub fn statistic_name(self) -> &'static str {
        match self {
            Self::StudentT { .. } => "t",
            Self::Normal => "z",
        }
    }

    /// `P(|T| ≥ |s|)` and the quantile `q` with `P(|T| ≤ q) = CONFIDENCE_LEVEL`; an infinite
    /// statistic has p-value 0 and a NaN one a NaN p-value (as R's `pt` gives them).
    fn two_sided(self, statistic: f64) -> Result<(f64, f64), InferenceError> {
        let (p, q) = self.two_sided_finite(if statistic.is_finite() {
            statistic
        } else {
            0.0
        })?;
        let p = if statistic.is_nan() {
            f64::NAN
        } else if statistic.is_infinite() {
            0.0
        } else {
            p
        };
        Ok((p, q))
    }

    fn two_sided_finite(self, statistic: f64) -> Result<(f64, f64), InferenceError> {
        let upper = 1.0 - (1.0 - CONFIDENCE_LEVEL) / 2.0;
        match self {
            Self::StudentT { df } => {
                let dist = StudentsT::new(0.0, 1.0, df)
                    .map_err(|_| InferenceError::BadDegreesOfFreedom { df })?;
                Ok((2.0 * dist.sf(statistic.abs()), dist.inverse_cdf(upper)))
            }
            Self::Normal => {
                // N(0, 1) always exists; the parameters are constants.
                let dist = Normal::standard();
                Ok((2.0 * dist.sf(statistic.abs()), dist.inverse_cdf(upper)))
            }
        }
    }
}

/// One row of a coefficient table.
///
/// # Formula
/// `statistic = estimate / std_error`; `p = 2·P(T ≥ |statistic|)`;
/// `CI = estimate ∓ q·std_error` with `q` the 97.5% quantile of the reference `T`
/// (`t_{n−p}` for the linear model, `N(0, 1)` for the logistic model).
#[derive(Debug, Clone, PartialEq)]
pub struct Coefficient {
    name: String,
    estimate: f64,
    std_error: f64,
    statistic: f64,
    p_value: f64,
    ci_low: f64,
    ci_high: f64,
    reference: Reference,
}

impl Coefficient {
    /// Wald inference for `estimate` with standard error `std_error`.
    ///
    /// # Errors
    /// [`InferenceError::BadStandardError`] unless `std_error` is positive and finite;
    /// [`InferenceError::BadDegreesOfFreedom`] for a t reference with `df ≤ 0`.
    pub fn wald(
        name: &str,
        estimate: f64,
        std_error: f64,
        reference: Reference,
    ) -> Result<Self, InferenceError> {
        if !(std_error.is_finite() && std_error > 0.0) {
            return Err(InferenceError::BadStandardError {
                name: name.to_owned(),
                std_error,
            });
        }
        let statistic = estimate / std_error;
        let (p_value, quantile) = reference.two_sided(statistic)?;
        Ok(Self {
            name: name.to_owned(),
            estimate,
            std_error,
            statistic,
            p_value,
            ci_low: estimate - quantile * std_error,
            ci_high: estimate + quantile * std_error,
            reference,
        })
    }

    /// Wald inference as R's `summary.lm` prints it, accepting a zero standard error (an exact
    /// fit, whose residuals are all zero): the statistic is then `±∞`, with p-value 0, or NaN
    /// for a zero estimate (R's `NaN`), and the interval collapses to the estimate. A positive
    /// standard error gives exactly [`wald`](Self::wald).
    ///
    /// # Errors
    /// [`InferenceError::BadStandardError`] unless `std_error` is finite and `≥ 0`;
    /// [`InferenceError::BadDegreesOfFreedom`] for a t reference with `df ≤ 0`.
    pub fn wald_allowing_zero_error(
        name: &str,
        estimate: f64,
        std_error: f64,
        reference: Reference,
    ) -> Result<Self, InferenceError> {
        if !(std_error.is_finite() && std_error >= 0.0) {
            return Err(InferenceError::BadStandardError {
                name: name.to_owned(),
                std_error,
            });
        }
        if std_error > 0.0 {
            return Self::wald(name, estimate, std_error, reference);
        }
        let statistic = estimate / std_error;
        let (p_value, _) = reference.two_sided(statistic)?;
        Ok(Self {
            name: name.to_owned(),
            estimate,
            std_error,
            statistic,
            p_value,
            ci_low: estimate,
            ci_high: estimate,
            reference,
        })
    }

    /// Name of the term (a column name, or `"(Intercept)"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Point estimate.
    pub fn estimate(&self) -> f64 {
        self.estimate
    }

    /// Estimated standard error.
    pub fn std_error(&self) -> f64 {
        self.std_error
    }

    /// `estimate / std_error`: the t value (linear model) or z value (logistic model).
    pub fn statistic(&self) -> f64 {
        self.statistic
    }

    /// Two-sided p-value of `H₀: coefficient = 0`.
    pub fn p_value(&self) -> f64 {
        self.p_value
    }

    /// Lower end of the 95% confidence interval.
    pub fn ci_low(&self) -> f64 {
        self.ci_low
    }

    /// Upper end of the 95% confidence interval.
    pub fn ci_high(&self) -> f64 {
        self.ci_high
    }

    /// The reference distribution; its [`statistic_name`](Reference::statistic_name) is the
    /// field name for [`statistic`](Self::statistic) (`"t"` or `"z"`).
    pub fn reference(&self) -> Reference {
        self.reference
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{REFERENCE_RELATIVE, relative_difference};

    /// By hand: t = 2/1 = 2 on 10 df. Reference: scipy 1.17.1 `2 * scipy.stats.t.sf(2, 10)`
    /// = 0.07338803477074037 and `scipy.stats.t.ppf(0.975, 10)` = 2.228138851986274.
    #[test]
    fn t_reference_matches_tables() {
        let c = Coefficient::wald("x", 2.0, 1.0, Reference::StudentT { df: 10.0 }).unwrap();
        assert_eq!(c.statistic(), 2.0);
        assert!(relative_difference(c.p_value(), 0.07338803477074037) < REFERENCE_RELATIVE);
        assert!(relative_difference(c.ci_high() - 2.0, 2.228138851986274) < REFERENCE_RELATIVE);
        assert!(relative_difference(2.0 - c.ci_low(), 2.228138851986274) < REFERENCE_RELATIVE);
        assert_eq!(c.reference().statistic_name(), "t");
    }

    /// By hand: z = −1.9599639845400545 is the 2.5% normal quantile (scipy 1.17.1
    /// `scipy.stats.norm.ppf(0.025)`), so p = 0.05 and the CI ends at 0.
    #[test]
    fn normal_reference_matches_tables() {
        let c = Coefficient::wald("x", -1.9599639845400545, 1.0, Reference::Normal).unwrap();
        assert!(relative_difference(c.p_value(), 0.05) < REFERENCE_RELATIVE);
        assert!(c.ci_high().abs() < REFERENCE_RELATIVE);
        assert_eq!(c.reference().statistic_name(), "z");
    }

    /// A zero standard error, as in an exact fit: t = 2/0 = +∞ with p = 0, t = 0/0 = NaN with
    /// p = NaN (R prints `Inf`/`<2e-16` and `NaN`), and the interval is the point.
    #[test]
    fn zero_standard_error_follows_r() {
        let t = Reference::StudentT { df: 3.0 };
        let c = Coefficient::wald_allowing_zero_error("x", 2.0, 0.0, t).unwrap();
        assert!(c.statistic().is_infinite() && c.statistic() > 0.0);
        assert!(c.p_value().abs() < f64::MIN_POSITIVE);
        assert!((c.ci_low() - 2.0).abs() < f64::MIN_POSITIVE);
        assert!((c.ci_high() - 2.0).abs() < f64::MIN_POSITIVE);
        let zero = Coefficient::wald_allowing_zero_error("x", 0.0, 0.0, t).unwrap();
        assert!(zero.statistic().is_nan() && zero.p_value().is_nan());
        let positive = Coefficient::wald_allowing_zero_error("x", 2.0, 1.0, t).unwrap();
        assert_eq!(positive, Coefficient::wald("x", 2.0, 1.0, t).unwrap());
        assert!(Coefficient::wald_allowing_zero_error("x", 2.0, -1.0, t).is_err());
    }

    #[test]
    fn degenerate_inputs_are_refused() {
        assert!(matches!(
            Coefficient::wald("x", 1.0, 0.0, Reference::Normal),
            Err(InferenceError::BadStandardError { .. })
        ));
        assert_eq!(
            Coefficient::wald("x", 1.0, 1.0, Reference::StudentT { df: 0.0 }).unwrap_err(),
            InferenceError::BadDegreesOfFreedom { df: 0.0 }
        );
    }
}
