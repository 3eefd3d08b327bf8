//! Setting (A) of seed 004: Gaussian noise only, `Y = X + C` with `C ~ NI_{n×p}(0, σ²)`
//! (eq. (3)), each participant perturbing their own row (local DP).
//!
//! Theorem 3.2 gives a necessary and a sufficient noise level for condition (5)
//! (`P_X[Y ∈ S_{X,X'}] ≤ δ`, which by Lemma 2.4 implies (ε, δ)-DP); Corollary 3.3 gives explicit
//! but looser versions of both.
//!
//! # Neighbours
//! Seed 004 (Definition 2.1) calls two data sets neighbours when they differ in one row by
//! `‖Δ‖ ≤ 1` (L₂). The global bounds (11), (12) are for that relation. A participant whose
//! record may change arbitrarily inside `[−1, 1]^p` moves by up to `‖Δ‖ = 2√p`; the per-pair
//! bounds (9), (10) hold for any `‖Δ‖ > 0` and scale linearly in it.

use statrs::function::erf::erfc_inv;

use crate::params::{ParameterError, check_delta, check_delta_below, check_epsilon_below_one};

/// Upper δ-quantile `γ̄_δ` of the standard normal distribution: `P[Z > γ̄_δ] = δ`.
///
/// # Formula
/// `γ̄_δ = √2 · erfc⁻¹(2δ)` (`statrs`), which keeps full relative accuracy for small δ (no
/// `1 − δ` is formed). Examples: `γ̄_{0.5} = 0`, `γ̄_{0.025} = 1.959964…`, `γ̄_{0.01} = 2.326348…`.
///
/// # Errors
/// [`ParameterError::DeltaOutOfRange`] unless `0 < δ < 1`.
pub fn upper_normal_quantile(delta: f64) -> Result<f64, ParameterError> {
    check_delta(delta)?;
    Ok(core::f64::consts::SQRT_2 * erfc_inv(2.0 * delta))
}

/// The explicit bounds of Corollary 3.3 (stated for `δ < 0.05`, `ε < 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExplicitBounds {
    /// Necessary: (5) for every neighbouring pair needs `σ ≥ √ln(1/δ) / ε` — but only where
    /// `√ln(1/δ) ≤ γ̄_δ`, i.e. `δ ≤ 0.031443…`; `None` above that (see
    /// [`NoiseOnly::explicit_bounds`] for why the paper's claim fails there).
    pub necessary: Option<f64>,
    /// Sufficient: (5) holds for every neighbouring pair when `σ > 1.7·√ln(1/δ) / ε`
    /// (strict inequality, as stated). Valid for all `δ < 0.05`.
    pub sufficient: f64,
}

/// Setting (A) calibrated for a privacy budget `(ε, δ)` under the conditions of Theorem 3.2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseOnly {
    epsilon: f64,
    delta: f64,
    gamma_bar: f64,
}

impl NoiseOnly {
    /// Validate `(ε, δ)` against Theorem 3.2 and compute `γ̄_δ`.
    ///
    /// # Errors
    /// Theorem 3.2 is stated for `0 < ε < 1` and `0 < δ < 1/2` (for `δ ≥ 1/2`, `γ̄_δ ≤ 0` and
    /// (12) is meaningless); anything else gives [`ParameterError::EpsilonNotPositive`],
    /// [`ParameterError::EpsilonNotBelowOne`], [`ParameterError::DeltaOutOfRange`] or
    /// [`ParameterError::DeltaTooLarge`].
    pub fn new(epsilon: f64, delta: f64) -> Result<Self, ParameterError> {
        check_epsilon_below_one(epsilon, "Theorem 3.2")?;
        check_delta_below(delta, 0.5, "Theorem 3.2")?;
        Ok(Self {
            epsilon,
            delta,
            gamma_bar: upper_normal_quantile(delta)?,
        })
    }

    /// Privacy budget ε.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Failure probability δ.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// `γ̄_δ`, the upper δ-quantile of N(0, 1) (see [`upper_normal_quantile`]).
    pub fn gamma_bar(&self) -> f64 {
        self.gamma_bar
    }

    /// Necessary noise level for one neighbouring pair at distance `‖Δ‖`.
    ///
    /// # Formula
    /// Seed 004, eq. (9): `σ ≥ ‖Δ‖ · γ̄_δ / ε`. Holds for any `‖Δ‖ ≥ 0` (the proof in §5.2
    /// needs no bound on `‖Δ‖`).
    ///
    /// # Errors
    /// [`ParameterError::InvalidDeltaNorm`] unless `‖Δ‖` is finite and `≥ 0`.
    pub fn necessary_sigma_for_pair(&self, delta_norm: f64) -> Result<f64, ParameterError> {
        check_delta_norm(delta_norm)?;
        Ok(delta_norm * self.necessary_sigma())
    }

    /// Sufficient noise level for one neighbouring pair at distance `‖Δ‖`.
    ///
    /// # Formula
    /// Seed 004, eq. (10): `σ ≥ (‖Δ‖ · γ̄_δ / ε)·(1 + 1/(2γ̄_δ²))`. Holds for any `‖Δ‖ ≥ 0`
    /// when `ε ≤ 1` (§5.2: the margin `σε/‖Δ‖ − ‖Δ‖/(2σ) − γ̄_δ` at this σ does not depend on
    /// `‖Δ‖`), e.g. `‖Δ‖ = 2√p` for a record replaced anywhere inside `[−1, 1]^p`.
    ///
    /// # Errors
    /// [`ParameterError::InvalidDeltaNorm`] unless `‖Δ‖` is finite and `≥ 0`.
    pub fn sufficient_sigma_for_pair(&self, delta_norm: f64) -> Result<f64, ParameterError> {
        check_delta_norm(delta_norm)?;
        Ok(delta_norm * self.sufficient_sigma())
    }

    /// Necessary noise level for every neighbouring pair (`‖Δ‖ ≤ 1`).
    ///
    /// # Formula
    /// Seed 004, eq. (11): `σ ≥ γ̄_δ / ε` (Theorem 3.2, `δ < 1/2`, `ε < 1`).
    ///
    /// Hand check: δ = 0.158655… (so `γ̄_δ = 1`) and ε = 0.5 give `σ ≥ 2`.
    pub fn necessary_sigma(&self) -> f64 {
        self.gamma_bar / self.epsilon
    }

    /// Sufficient noise level for every neighbouring pair (`‖Δ‖ ≤ 1`).
    ///
    /// # Formula
    /// Seed 004, eq. (12): `σ ≥ (γ̄_δ / ε)·(1 + 1/(2γ̄_δ²))` (Theorem 3.2, `δ < 1/2`, `ε < 1`).
    ///
    /// Hand check: `γ̄_δ = 1`, ε = 0.5 give `σ ≥ 2·(1 + 1/2) = 3`.
    pub fn sufficient_sigma(&self) -> f64 {
        let g = self.gamma_bar;
        g / self.epsilon * (1.0 + 1.0 / (2.0 * g * g))
    }

    /// The explicit bounds of Corollary 3.3.
    ///
    /// # Formula
    /// Seed 004, Corollary 3.3 (for `δ < 0.05`, `ε < 1`): necessary `σ ≥ √ln(1/δ) / ε`,
    /// sufficient `σ > 1.7·√ln(1/δ) / ε`. Both rest on Lemma A.1,
    /// `√ln(1/δ) < γ̄_δ < √(2 ln(1/δ))` for `δ < 0.05`.
    ///
    /// # Correction to the paper
    /// The left half of Lemma A.1 is false for `0.031443… < δ < 0.05`: its proof claims
    /// `f(1.645) < 0` for `f(x) = −x²/2 + ln√(2π) + ln x + ln(x²/(x² − 1))`, but
    /// `f(1.645) = 0.525`; e.g. δ = 0.049 has `γ̄_δ = 1.6546 < √ln(1/δ) = 1.7366`. There the
    /// "necessary" bound is not necessary: with ε = 0.1, δ = 0.049, every σ ≥ 16.843 (the
    /// root of `σε − 1/(2σ) = γ̄_δ`, exactly equivalent to (5) by (20)) satisfies (5), yet
    /// `√ln(1/δ)/ε = 17.366`. So `necessary` is reported only when `√ln(1/δ) ≤ γ̄_δ` holds
    /// (checked numerically, true for `δ ≤ 0.031443…`, SciPy: the root of
    /// `norm.isf(d)**2 - log(1/d)` is `0.031443415728832934`).
    ///
    /// The sufficient half is true for all `δ < 0.05`, although its printed proof uses the same
    /// false inequality: `x + 1/(2x)` increases for `x > 1/√2`, so with `L = ln(1/δ) > ln 20`,
    /// `γ̄_δ(1 + 1/(2γ̄_δ²)) < √(2L)(1 + 1/(4L)) < 1.7√L` because `√2·(1 + 1/(4 ln 20)) =
    /// 1.532 < 1.7`.
    ///
    /// # Errors
    /// [`ParameterError::DeltaTooLarge`] when `δ ≥ 0.05` (ε < 1 is already guaranteed by
    /// [`NoiseOnly::new`]).
    pub fn explicit_bounds(&self) -> Result<ExplicitBounds, ParameterError> {
        check_delta_below(self.delta, 0.05, "Corollary 3.3")?;
        let root = (-self.delta.ln()).sqrt();
        Ok(ExplicitBounds {
            necessary: (root <= self.gamma_bar).then_some(root / self.epsilon),
            sufficient: 1.7 * root / self.epsilon,
        })
    }
}

/// `‖Δ‖` must be finite and non-negative.
fn check_delta_norm(norm: f64) -> Result<(), ParameterError> {
    if norm.is_finite() && norm >= 0.0 {
        Ok(())
    } else {
        Err(ParameterError::InvalidDeltaNorm { norm })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_COMPUTED, NORMAL_QUANTILE, SAME_FUNCTION};

    /// δ = P[Z > 1] = 0.15865525393145707 (so γ̄_δ = 1), ε = 0.5: (11) gives 1/0.5 = 2 and (12)
    /// gives 2·(1 + 1/2) = 3; for ‖Δ‖ = 0.5 the pair bounds (9), (10) halve them to 1 and 1.5.
    /// Near γ̄ = 1 both (11) = 2γ̄ and (12) = 2γ̄ + 1/γ̄ move by at most 2× the error of γ̄.
    #[test]
    fn hand_solvable_case_with_unit_quantile() {
        let a = NoiseOnly::new(0.5, 0.158_655_253_931_457_07).unwrap();
        let tol = 2.0 * NORMAL_QUANTILE;
        assert!((a.gamma_bar() - 1.0).abs() < NORMAL_QUANTILE);
        assert!((a.necessary_sigma() - 2.0).abs() < tol);
        assert!((a.sufficient_sigma() - 3.0).abs() < tol);
        assert!((a.necessary_sigma_for_pair(0.5).unwrap() - 1.0).abs() < tol);
        assert!((a.sufficient_sigma_for_pair(0.5).unwrap() - 1.5).abs() < tol);
    }

    /// SciPy 1.17.1: `scipy.stats.norm.isf(d)` for each δ below.
    #[test]
    fn normal_quantile_matches_scipy() {
        let cases = [
            (0.01, 2.326_347_874_040_840_8), // norm.isf(0.01)
            (0.001, 3.090_232_306_167_813),  // norm.isf(0.001)
            (0.05, 1.644_853_626_951_472_9), // norm.isf(0.05)
            (1e-10, 6.361_340_902_404_056),  // norm.isf(1e-10)
            (0.3, 0.524_400_512_708_040_9),  // norm.isf(0.3)
        ];
        for (delta, want) in cases {
            let got = upper_normal_quantile(delta).unwrap();
            assert!(
                (got - want).abs() < NORMAL_QUANTILE,
                "δ = {delta}: {got} vs {want}"
            );
        }
        assert!(upper_normal_quantile(0.5).unwrap().abs() < NORMAL_QUANTILE);
        assert!(upper_normal_quantile(1.0).is_err());
    }

    /// By hand: δ = e⁻⁴ (√ln(1/δ) = 2), ε = 0.5: the sufficient bound is 1.7·2/0.5 = 6.8 and the
    /// necessary one 2/0.5 = 4, reported because γ̄_δ ≈ 2.09 > 2.
    #[test]
    fn corollary_3_3_by_hand() {
        let e = NoiseOnly::new(0.5, (-4.0f64).exp())
            .unwrap()
            .explicit_bounds()
            .unwrap();
        assert!((e.sufficient - 6.8).abs() < HAND_COMPUTED);
        assert!((e.necessary.unwrap() - 4.0).abs() < HAND_COMPUTED);
        assert!(
            NoiseOnly::new(0.5, 0.05)
                .unwrap()
                .explicit_bounds()
                .is_err()
        );
    }

    /// Corollary 3.3's sufficient bound lies above (12) for every δ < 0.05; its necessary bound,
    /// where reported, lies below (11) (right half of Lemma A.1: `γ̄_δ < √(2 ln(1/δ))` always).
    #[test]
    fn corollary_3_3_brackets_theorem_3_2() {
        let deltas = (1..50)
            .map(|k| f64::from(k) * 1e-3)
            .chain([1e-6, 1e-12, 1e-300]);
        for delta in deltas {
            for epsilon in [0.9, 0.1, 1e-3] {
                let a = NoiseOnly::new(epsilon, delta).unwrap();
                let e = a.explicit_bounds().unwrap();
                let l = -delta.ln();
                assert!(a.gamma_bar() < (2.0 * l).sqrt());
                assert!(a.necessary_sigma() < a.sufficient_sigma());
                assert!(a.sufficient_sigma() < e.sufficient, "δ = {delta}");
                if let Some(necessary) = e.necessary {
                    assert!(necessary <= a.necessary_sigma(), "δ = {delta}");
                }
            }
        }
    }

    /// The counterexample to the necessary half of Corollary 3.3 (and to the left half of
    /// Lemma A.1) at ε = 0.1, δ = 0.049: σ = 17 satisfies the exact condition (20) with
    /// ‖Δ‖ = 1, `σε − 1/(2σ) = 1.7 − 1/34 = 1.6706 ≥ γ̄_δ = 1.6546`, so (5) holds, although
    /// `17 < √ln(1/0.049)/0.1 = 17.366`. Hence no `necessary` bound is reported there; it is
    /// reported at δ = 0.03 (γ̄ = 1.8808 > √ln(1/0.03) = 1.8726) and δ = 0.01.
    #[test]
    fn corollary_3_3_necessary_half_fails_near_delta_0_05() {
        let a = NoiseOnly::new(0.1, 0.049).unwrap();
        let sigma: f64 = 17.0;
        assert!(sigma * a.epsilon() - 1.0 / (2.0 * sigma) >= a.gamma_bar());
        assert!(sigma < (-a.delta().ln()).sqrt() / a.epsilon());
        assert_eq!(a.explicit_bounds().unwrap().necessary, None);
        for delta in [0.04, 0.032] {
            let e = NoiseOnly::new(0.1, delta)
                .unwrap()
                .explicit_bounds()
                .unwrap();
            assert_eq!(e.necessary, None, "δ = {delta}");
        }
        for delta in [0.031, 0.03, 0.01] {
            let e = NoiseOnly::new(0.1, delta)
                .unwrap()
                .explicit_bounds()
                .unwrap();
            assert!(e.necessary.is_some(), "δ = {delta}");
        }
    }

    /// §4 of seed 004: "the necessary condition (11) is less than 10% away from the sufficient
    /// condition (12)" — true for δ ≤ 0.01 (γ̄_δ ≥ 2.33, so 1/(2γ̄²) < 0.093).
    #[test]
    fn necessary_and_sufficient_are_within_ten_percent_for_small_delta() {
        for delta in [0.01, 1e-3, 1e-6] {
            let a = NoiseOnly::new(0.1, delta).unwrap();
            assert!(a.sufficient_sigma() / a.necessary_sigma() < 1.1);
        }
    }

    #[test]
    fn conditions_of_the_theorem_and_corollary_are_enforced() {
        assert!(matches!(
            NoiseOnly::new(1.0, 0.01),
            Err(ParameterError::EpsilonNotBelowOne { .. })
        ));
        assert!(matches!(
            NoiseOnly::new(0.5, 0.5),
            Err(ParameterError::DeltaTooLarge { .. })
        ));
        assert!(matches!(
            NoiseOnly::new(0.0, 0.01),
            Err(ParameterError::EpsilonNotPositive { .. })
        ));
        let a = NoiseOnly::new(0.5, 0.05).unwrap();
        assert!(matches!(
            a.explicit_bounds(),
            Err(ParameterError::DeltaTooLarge { limit, .. }) if (limit - 0.05).abs() < SAME_FUNCTION
        ));
        assert!(a.necessary_sigma_for_pair(-1.0).is_err());
        assert!(a.sufficient_sigma_for_pair(f64::NAN).is_err());
    }
}
