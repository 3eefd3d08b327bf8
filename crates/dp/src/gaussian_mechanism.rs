//! The Gaussian mechanism `M(x) = f(x) + N(0, σ²I)` and its exact privacy profile (the
//! "analytic Gaussian mechanism" of Balle & Wang 2018).
//!
//! Used for the noisy column sums that masks keeping `1ₙ` fixed release (see
//! [`crate::device`]), and reusable for any view that is a Gaussian mechanism — for example one
//! right-masking service's share, a Gaussian mechanism with sensitivity of order `2√p/K₁` and
//! noise `τ√(1 − 1/K₁)`.
//!
//! # Formula (Balle & Wang 2018, Theorem 8)
//! Let `f` have L₂ sensitivity `Δ = sup ‖f(x) − f(x′)‖` over neighbours. `M` is (ε, δ)-DP if and
//! only if `δ ≥ δ_M(ε)` with
//!
//! ```text
//! (G1)   δ_M(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ),
//! ```
//!
//! `Φ` the standard normal CDF. It is exact, not a bound: the privacy loss of the pair at
//! distance `Δ` is `L ~ N(η, 2η)` with `η = Δ²/(2σ²)`, and `δ_M(ε) = E[(1 − e^{ε−L})₊]` evaluates
//! to (G1). It depends on `Δ` and `σ` only through `σ/Δ`, decreases strictly in `ε ≥ 0` and in
//! `σ`, and is below the classical calibration `σ = Δ√(2 ln(1.25/δ))/ε` (Dwork & Roth 2014,
//! Theorem A.1, for `ε < 1`).
//!
//! The inverses — the smallest `ε ≥ 0` for a given `δ`, and the smallest `σ` for given `(ε, δ)` —
//! have no closed form and are found by Brent's method (`δ_M` is monotone in both).
//!
//! # Accuracy
//! `Φ` comes from the regularized incomplete gamma function (see `phi`), which keeps full
//! relative accuracy in both tails. When
//! `Δ/σ` is small against `|Δ/(2σ) − εσ/Δ|`, the two terms of (G1) nearly cancel: the relative
//! error of `δ_M` is then about `10⁻¹⁶·|x|σ/Δ` (`x` the first argument), e.g. `10⁻¹³` at
//! `Δ/σ = 0.01`, `δ ≈ 10⁻⁹`. Below `Φ`'s underflow (`x < −38`, `δ < 10⁻³⁰⁰`) `δ_M` is 0.

use statrs::function::gamma::{checked_gamma_lr, checked_gamma_ur};

use crate::root::{RootFailure, brent};
use crate::tolerance::{GAUSSIAN_INVERSE_RELATIVE, MAX_BRACKET_EXPANSIONS};

/// Invalid inputs of the Gaussian mechanism's profile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GaussianMechanismError {
    /// The sensitivity is not finite and positive.
    #[error(
        "sensitivity Δ = {sensitivity} must be finite and > 0 (the largest L₂ distance between \
         the query's answers on neighbouring data sets)"
    )]
    InvalidSensitivity {
        /// The rejected value.
        sensitivity: f64,
    },
    /// σ is not finite and positive.
    #[error("noise standard deviation σ = {sigma} must be finite and > 0")]
    InvalidSigma {
        /// The rejected value.
        sigma: f64,
    },
    /// ε is negative or not finite.
    #[error("ε = {epsilon} must be finite and ≥ 0")]
    InvalidEpsilon {
        /// The rejected value.
        epsilon: f64,
    },
    /// δ is not strictly between 0 and 1.
    #[error("δ = {delta} must lie strictly between 0 and 1")]
    InvalidDelta {
        /// The rejected value.
        delta: f64,
    },
    /// The inverse could not be bracketed or did not converge (not expected).
    #[error("could not invert the Gaussian mechanism's privacy profile at δ = {delta}")]
    NoConvergence {
        /// The target δ.
        delta: f64,
    },
}

/// Standard normal CDF through the regularized incomplete gamma function:
/// `Φ(x) = Q(½, x²/2)/2` for `x < 0` and `(1 + P(½, x²/2))/2` for `x > 0`
/// (`erfc(t) = Q(½, t²)` for `t ≥ 0`).
///
/// Not `statrs`' `erfc`: in `statrs` 0.19 it is good to only about `1e-10` relative
/// (`erfc(1/√2)` comes out as `0.31731050789011` against `0.31731050786291`), while its incomplete
/// gamma function is good to about `1e-15` here.
fn phi(x: f64) -> f64 {
    if x == 0.0 {
        return 0.5;
    }
    let half_square = 0.5 * x * x;
    // The checked functions fail only for a non-finite argument (|x| > 10¹⁵⁴), where the limits
    // below are the exact values.
    if x < 0.0 {
        0.5 * checked_gamma_ur(0.5, half_square).unwrap_or(0.0)
    } else {
        0.5 + 0.5 * checked_gamma_lr(0.5, half_square).unwrap_or(1.0)
    }
}

/// (G1) in terms of `s = σ/Δ` (the profile depends on nothing else).
fn profile(s: f64, epsilon: f64) -> f64 {
    let half = 0.5 / s;
    let shift = epsilon * s;
    // `e^ε·Φ(y)`: a plain product while `e^ε` is finite (full accuracy); beyond, where the
    // product would be `∞·0` although `Φ(y)` is far smaller than `e^ε` is large, as
    // `exp(ε + ln Φ(y))`.
    let tail = phi(-half - shift);
    let growth = epsilon.exp();
    let weighted = if growth.is_finite() {
        growth * tail
    } else if tail > 0.0 {
        (epsilon + tail.ln()).exp()
    } else {
        0.0
    };
    (phi(half - shift) - weighted).max(0.0)
}

fn check_sensitivity(sensitivity: f64) -> Result<(), GaussianMechanismError> {
    if sensitivity.is_finite() && sensitivity > 0.0 {
        Ok(())
    } else {
        Err(GaussianMechanismError::InvalidSensitivity { sensitivity })
    }
}

fn check_sigma(sigma: f64) -> Result<(), GaussianMechanismError> {
    if sigma.is_finite() && sigma > 0.0 {
        Ok(())
    } else {
        Err(GaussianMechanismError::InvalidSigma { sigma })
    }
}

fn check_epsilon(epsilon: f64) -> Result<(), GaussianMechanismError> {
    if epsilon.is_finite() && epsilon >= 0.0 {
        Ok(())
    } else {
        Err(GaussianMechanismError::InvalidEpsilon { epsilon })
    }
}

fn check_delta(delta: f64) -> Result<(), GaussianMechanismError> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(GaussianMechanismError::InvalidDelta { delta })
    }
}

/// The exact `δ` at which the Gaussian mechanism is (ε, δ)-DP: eq. (G1).
///
/// Hand check: `Δ = σ = 1`, `ε = 1/2` give `Φ(0) − e^{1/2}Φ(−1) = 0.5 − 1.6487213·0.1586553 =
/// 0.2384217`.
///
/// # Errors
/// [`GaussianMechanismError::InvalidSensitivity`], [`GaussianMechanismError::InvalidSigma`] or
/// [`GaussianMechanismError::InvalidEpsilon`] unless `Δ > 0`, `σ > 0`, `ε ≥ 0`, all finite.
pub fn gaussian_mechanism_delta(
    sensitivity: f64,
    sigma: f64,
    epsilon: f64,
) -> Result<f64, GaussianMechanismError> {
    check_sensitivity(sensitivity)?;
    check_sigma(sigma)?;
    check_epsilon(epsilon)?;
    Ok(profile(sigma / sensitivity, epsilon))
}

/// The smallest `ε ≥ 0` at which the Gaussian mechanism with sensitivity `Δ` and noise `σ` is
/// (ε, δ)-DP: the root of `δ_M(ε) = δ` in (G1), or 0 when already `δ_M(0) ≤ δ`.
///
/// # Errors
/// Invalid inputs as [`gaussian_mechanism_delta`], plus
/// [`GaussianMechanismError::InvalidDelta`] unless `0 < δ < 1`;
/// [`GaussianMechanismError::NoConvergence`] if the root search fails (not expected).
pub fn gaussian_mechanism_epsilon(
    sensitivity: f64,
    sigma: f64,
    delta: f64,
) -> Result<f64, GaussianMechanismError> {
    check_sensitivity(sensitivity)?;
    check_sigma(sigma)?;
    check_delta(delta)?;
    let s = sigma / sensitivity;
    if profile(s, 0.0) <= delta {
        return Ok(0.0);
    }
    let fail = || GaussianMechanismError::NoConvergence { delta };
    // δ_M(ε) → 0 as ε → ∞; double until the profile is below δ.
    let mut hi = 1.0;
    let mut expansions = 0;
    while profile(s, hi) > delta {
        hi *= 2.0;
        expansions += 1;
        if expansions > MAX_BRACKET_EXPANSIONS {
            return Err(fail());
        }
    }
    brent(
        |e| Ok::<f64, ()>(profile(s, e) - delta),
        0.0,
        hi,
        GAUSSIAN_INVERSE_RELATIVE,
        f64::MIN_POSITIVE,
    )
    .map_err(|_: RootFailure<()>| fail())
}

/// The smallest `σ` at which the Gaussian mechanism with sensitivity `Δ` is (ε, δ)-DP: the root
/// of `δ_M(ε; σ) = δ` in (G1) (Balle & Wang's calibration; always below the classical
/// `Δ√(2 ln(1.25/δ))/ε`).
///
/// # Errors
/// Invalid inputs as [`gaussian_mechanism_epsilon`] (here `ε` must be `≥ 0`; at `ε = 0` a
/// finite σ exists for every `δ > 0`); [`GaussianMechanismError::NoConvergence`] if the root
/// search fails (not expected).
pub fn gaussian_mechanism_sigma(
    sensitivity: f64,
    epsilon: f64,
    delta: f64,
) -> Result<f64, GaussianMechanismError> {
    check_sensitivity(sensitivity)?;
    check_epsilon(epsilon)?;
    check_delta(delta)?;
    let fail = || GaussianMechanismError::NoConvergence { delta };
    // In s = σ/Δ: δ_M decreases from 1 (s → 0) to 0 (s → ∞).
    let mut hi = 1.0;
    let mut lo = 1.0;
    let mut expansions = 0;
    while profile(hi, epsilon) > delta {
        lo = hi;
        hi *= 2.0;
        expansions += 1;
        if expansions > MAX_BRACKET_EXPANSIONS {
            return Err(fail());
        }
    }
    while profile(lo, epsilon) <= delta {
        hi = lo;
        lo *= 0.5;
        expansions += 1;
        if expansions > MAX_BRACKET_EXPANSIONS {
            return Err(fail());
        }
    }
    let s = brent(
        |s| Ok::<f64, ()>(profile(s, epsilon) - delta),
        lo,
        hi,
        GAUSSIAN_INVERSE_RELATIVE,
        0.0,
    )
    .map_err(|_: RootFailure<()>| fail())?;
    Ok(s * sensitivity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{GAUSSIAN_INVERSE_CHECK, SAME_FUNCTION};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// By hand: `Δ/σ = 2·0.6744897501960817` (the upper quartile of N(0, 1)) gives
    /// `δ_M(0) = Φ(0.67449) − Φ(−0.67449) = 0.75 − 0.25 = 1/2`: at ε = 0, δ is the total
    /// variation distance between N(0, σ²) and N(Δ, σ²).
    #[test]
    fn epsilon_zero_is_the_total_variation_distance() {
        let q = 0.674_489_750_196_081_7;
        let d = gaussian_mechanism_delta(2.0 * q, 1.0, 0.0).unwrap();
        assert!(rel(d, 0.5) < SAME_FUNCTION, "{d}");
    }

    /// By hand: `Δ = σ = 1`, ε = 1/2: `Φ(1/2 − 1/2) − e^{1/2}·Φ(−1/2 − 1/2) = 1/2 − e^{1/2}Φ(−1)`
    /// with `Φ(−1) = 0.15865525393145707` (SciPy 1.17.1 `norm.cdf(-1)`) and
    /// `e^{1/2} = 1.6487212707001282`: 0.23842173134097868.
    #[test]
    fn unit_sensitivity_and_noise_by_hand() {
        let want = 0.5 - 1.648_721_270_700_128_2 * 0.158_655_253_931_457_07;
        let got = gaussian_mechanism_delta(1.0, 1.0, 0.5).unwrap();
        assert!(rel(got, want) < SAME_FUNCTION, "{got} vs {want}");
        // Only σ/Δ matters.
        let scaled = gaussian_mechanism_delta(3.0, 3.0, 0.5).unwrap();
        assert!(rel(scaled, want) < SAME_FUNCTION);
    }

    /// The inverses return what the profile says.
    #[test]
    fn inverses_round_trip() {
        for (sens, sigma, delta) in [(1.0, 2.0, 1e-3), (0.2, 8.5, 1e-3), (2.0, 1.0, 0.3)] {
            let e = gaussian_mechanism_epsilon(sens, sigma, delta).unwrap();
            let back = gaussian_mechanism_delta(sens, sigma, e).unwrap();
            assert!(
                rel(back, delta) < GAUSSIAN_INVERSE_CHECK,
                "{back} vs {delta}"
            );
            let s = gaussian_mechanism_sigma(sens, e, delta).unwrap();
            assert!(rel(s, sigma) < GAUSSIAN_INVERSE_CHECK, "{s} vs {sigma}");
        }
        // Already private enough at ε = 0: δ_M(0) = 2Φ(1/(2·100)) − 1 = 0.00399 ≤ 0.1.
        assert!(gaussian_mechanism_epsilon(1.0, 100.0, 0.1).unwrap().abs() < f64::MIN_POSITIVE);
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        assert!(matches!(
            gaussian_mechanism_delta(0.0, 1.0, 0.1),
            Err(GaussianMechanismError::InvalidSensitivity { .. })
        ));
        assert!(matches!(
            gaussian_mechanism_delta(1.0, f64::NAN, 0.1),
            Err(GaussianMechanismError::InvalidSigma { .. })
        ));
        assert!(matches!(
            gaussian_mechanism_delta(1.0, 1.0, -0.1),
            Err(GaussianMechanismError::InvalidEpsilon { .. })
        ));
        assert!(matches!(
            gaussian_mechanism_epsilon(1.0, 1.0, 1.0),
            Err(GaussianMechanismError::InvalidDelta { .. })
        ));
        assert!(matches!(
            gaussian_mechanism_sigma(1.0, 0.5, 0.0),
            Err(GaussianMechanismError::InvalidDelta { .. })
        ));
    }
}
