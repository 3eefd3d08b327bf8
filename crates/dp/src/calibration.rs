//! One calibration: every noise level of seed 004 for one `(ε, δ, n or n_s, p)`, side by side,
//! as in a row of its Table 1.

use crate::params::{
    ParameterError, check_delta_below, check_epsilon_below_one, check_rows, check_smallest_block,
};
use crate::setting_a::{ExplicitBounds, NoiseOnly};
use crate::setting_b::{NoiseThenMask, SettingBError};

/// Why a calibration could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    /// An input violates a condition of the results reported (message says which and what to do).
    #[error(transparent)]
    Parameter(#[from] ParameterError),
    /// The root search of eq. (13) failed numerically.
    #[error(transparent)]
    SettingB(#[from] SettingBError),
}

/// The inputs of a calibration. Named fields, so that `n` and `p` cannot be swapped silently.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationInput {
    /// Privacy budget ε, `0 < ε < 1`.
    pub epsilon: f64,
    /// Failure probability δ, `0 < δ < 1/2`.
    pub delta: f64,
    /// Number of records masked together, `n > p`.
    pub n: u64,
    /// Number of variables per record, `p ≥ 1`.
    pub p: u64,
    /// Smallest block `n_s` of a block-diagonal mask (`p < n_s ≤ n`); `None` for a full mask.
    pub smallest_block: Option<u64>,
}

/// Noise standard deviations for one `(ε, δ, n, p)`: setting (A) (noise only) against setting
/// (B) (noise then orthogonal masking), as in Table 1 of seed 004.
///
/// All σ are standard deviations of the Gaussian noise added to each entry of records scaled so
/// that `|x_ij| ≤ 1` (eq. (6), see [`crate::scaling`]), for neighbours at distance `‖Δ‖ ≤ 1`
/// (Definition 2.1).
///
/// # What it guarantees, and what it does not
/// * It guarantees what seed 004 proves: (ε, δ)-DP of `Y = A(X + C)` with `A` Haar on **all** of
///   `O(n)` (or block-diagonal with Haar blocks, §4), for neighbours that differ in one row by
///   `‖Δ‖ ≤ 1` — the paper's setting, reproduced in Table 1.
/// * It does **not** guarantee (ε, δ)-DP for the device-side mechanism TM² runs: there the masks
///   keep `1ₙ` fixed (the noisy column sums are released as well) and a participant's record may
///   be replaced by any valid record (`‖Δ‖ ≤ 2√p`). Calibrating that mechanism with
///   [`setting_b_sufficient`](Self::setting_b_sufficient) for `n_s − 1` rows gives noticeably
///   less privacy than the nominal (ε, δ) (see [`crate::device`], which derives and calibrates
///   the actual mechanism: [`crate::device::CohortMechanism`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    input: CalibrationInput,
    gamma_bar: f64,
    setting_a_necessary: f64,
    setting_a_sufficient: f64,
    setting_b_sufficient: f64,
    setting_b_explicit: f64,
    setting_a_explicit: Option<ExplicitBounds>,
}

impl Calibration {
    /// Validate the inputs and compute every bound.
    ///
    /// # Errors
    /// [`CalibrationError::Parameter`] unless `0 < ε < 1`, `0 < δ < 1/2`, `p ≥ 1`, `n > p` and,
    /// for a block mask, `p < n_s ≤ n`; all numbers must be finite. The generic conditions of
    /// (ε, δ)-DP are `ε > 0`, `0 < δ < 1`; the tighter `ε < 1`, `δ < 1/2` are those of
    /// Theorem 3.2, without which (12) and so the ratio are not valid bounds.
    /// [`CalibrationError::SettingB`] if the root search of eq. (13) fails (not expected).
    pub fn new(input: CalibrationInput) -> Result<Self, CalibrationError> {
        let CalibrationInput {
            epsilon,
            delta,
            n,
            p,
            smallest_block,
        } = input;
        check_epsilon_below_one(epsilon, "Theorem 3.2 (setting (A), used for the ratio)")?;
        check_delta_below(delta, 0.5, "Theorem 3.2 (setting (A), used for the ratio)")?;
        check_rows(n, p)?;
        let b = match smallest_block {
            Some(ns) => {
                check_smallest_block(n, ns, p)?;
                NoiseThenMask::with_smallest_block(epsilon, delta, n, p, ns)?
            }
            None => NoiseThenMask::new(epsilon, delta, n, p)?,
        };
        let a = NoiseOnly::new(epsilon, delta)?;
        Ok(Self {
            input,
            gamma_bar: a.gamma_bar(),
            setting_a_necessary: a.necessary_sigma(),
            setting_a_sufficient: a.sufficient_sigma(),
            setting_b_sufficient: b.sufficient_sigma()?,
            setting_b_explicit: b.explicit_sufficient_sigma()?,
            setting_a_explicit: a.explicit_bounds().ok(),
        })
    }

    /// The validated inputs.
    pub fn input(&self) -> &CalibrationInput {
        &self.input
    }

    /// Privacy budget ε.
    pub fn epsilon(&self) -> f64 {
        self.input.epsilon
    }

    /// Failure probability δ.
    pub fn delta(&self) -> f64 {
        self.input.delta
    }

    /// Number of records `n`.
    pub fn n(&self) -> u64 {
        self.input.n
    }

    /// Number of variables `p`.
    pub fn p(&self) -> u64 {
        self.input.p
    }

    /// Smallest block `n_s` of a block-diagonal mask, if any.
    pub fn smallest_block(&self) -> Option<u64> {
        self.input.smallest_block
    }

    /// The row count used in (13) and (14): `n_s` for a block mask, else `n`.
    pub fn effective_n(&self) -> u64 {
        self.input.smallest_block.unwrap_or(self.input.n)
    }

    /// `γ̄_δ`, the upper δ-quantile of N(0, 1).
    pub fn gamma_bar(&self) -> f64 {
        self.gamma_bar
    }

    /// Setting (A), necessary: eq. (11), `γ̄_δ / ε`.
    pub fn setting_a_necessary(&self) -> f64 {
        self.setting_a_necessary
    }

    /// Setting (A), sufficient: eq. (12), `(γ̄_δ / ε)(1 + 1/(2γ̄_δ²))`.
    pub fn setting_a_sufficient(&self) -> f64 {
        self.setting_a_sufficient
    }

    /// Setting (B), sufficient: σ₀ of eq. (13), the largest root of `g` (with `n_s` for block
    /// masks).
    pub fn setting_b_sufficient(&self) -> f64 {
        self.setting_b_sufficient
    }

    /// Setting (B), explicit sufficient: eq. (14) of Corollary 3.5 (looser than (13)).
    pub fn setting_b_explicit(&self) -> f64 {
        self.setting_b_explicit
    }

    /// Setting (A), Corollary 3.3's explicit bounds `√ln(1/δ)/ε` (necessary, where valid) and
    /// `1.7·√ln(1/δ)/ε` (sufficient); `None` for `δ ≥ 0.05`, where the corollary does not apply.
    pub fn setting_a_explicit(&self) -> Option<ExplicitBounds> {
        self.setting_a_explicit
    }

    /// How many times less noise masking needs: (12)/(13), the last column of Table 1.
    pub fn ratio(&self) -> f64 {
        self.setting_a_sufficient / self.setting_b_sufficient
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SAME_FUNCTION;

    fn input(epsilon: f64, delta: f64, n: u64, p: u64) -> CalibrationInput {
        CalibrationInput {
            epsilon,
            delta,
            n,
            p,
            smallest_block: None,
        }
    }

    /// Lemma 2.3: masking never needs more noise; and (11) < (12), (13) ≤ (14).
    #[test]
    fn bounds_are_ordered() {
        for (e, d, n, p) in [
            (0.5, 0.2, 3, 2),
            (0.1, 1e-3, 100, 20),
            (1e-3, 1e-8, 1000, 1),
        ] {
            let c = Calibration::new(input(e, d, n, p)).unwrap();
            assert!(c.setting_a_necessary() < c.setting_a_sufficient());
            assert!(c.setting_b_sufficient() <= c.setting_b_explicit());
            assert!(c.ratio() > 0.0);
            assert!(c.gamma_bar() > 0.0);
        }
    }

    #[test]
    fn every_input_condition_has_a_typed_error() {
        let bad = [
            (input(0.0, 0.01, 100, 5), "EpsilonNotPositive"),
            (input(f64::NAN, 0.01, 100, 5), "EpsilonNotPositive"),
            (input(1.0, 0.01, 100, 5), "EpsilonNotBelowOne"),
            (input(0.1, 0.0, 100, 5), "DeltaOutOfRange"),
            (input(0.1, f64::INFINITY, 100, 5), "DeltaOutOfRange"),
            (input(0.1, 0.5, 100, 5), "DeltaTooLarge"),
            (input(0.1, 0.01, 100, 0), "NoVariables"),
            (input(0.1, 0.01, 5, 5), "TooFewRows"),
            (
                CalibrationInput {
                    smallest_block: Some(5),
                    ..input(0.1, 0.01, 100, 5)
                },
                "BlockTooSmall",
            ),
            (
                CalibrationInput {
                    smallest_block: Some(101),
                    ..input(0.1, 0.01, 100, 5)
                },
                "BlockLargerThanData",
            ),
        ];
        for (i, variant) in bad {
            let err = Calibration::new(i).unwrap_err();
            assert!(
                format!("{err:?}").contains(variant),
                "{i:?}: expected {variant}, got {err:?}"
            );
            assert!(!err.to_string().is_empty());
        }
    }

    /// A block mask with `n_s` reports the same σ₀ as a full mask of `n_s` rows.
    #[test]
    fn block_mask_uses_smallest_block() {
        let block = Calibration::new(CalibrationInput {
            smallest_block: Some(100),
            ..input(0.1, 0.01, 10_000, 5)
        })
        .unwrap();
        let full = Calibration::new(input(0.1, 0.01, 100, 5)).unwrap();
        assert_eq!(block.effective_n(), 100);
        assert_eq!(block.n(), 10_000);
        let (b, f) = (block.setting_b_sufficient(), full.setting_b_sufficient());
        assert!((b - f).abs() / f < SAME_FUNCTION);
    }
}
