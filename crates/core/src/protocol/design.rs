//! Which designs are safe, and how much noise the modified TM² needs.
//!
//! Ding, Miao & Wu (2020) (seed 000) prove the modified protocol strong-obfuscating when
//!
//! * `p₁ < n ≤ p = p₁ + p₂` (§2; Theorem 3.7). With `p < n` some rows of the provider's view
//!   `M_R = XB` are linear combinations of others, and together with known column types that
//!   reveals data: Appendix A, implemented in [`crate::attack`].
//! * condition (3.5), `λ_min(X₂X₂ᵀ) > λ_max(X₁X₁ᵀ)`, holds with probability at least `1 − ε`
//!   (condition (3.7), Theorem 3.9).
//!
//! # Appendix C bound, with an explicit failure probability
//! `λ_max(X₁X₁ᵀ) ≤ ‖X₁‖_F² ≤ n·p₁·x_max² = C_n`. The paper then quotes Ledoux et al. for
//! `Pr[λ_min(X₂X₂ᵀ) ≤ (√γ − 1)² n σ² (1 − δ)] ≤ C₀ e^{−nδ^{3/2}/C₀}` with `γ = p₂/n > 1` and an
//! unspecified constant `C₀`, and requires `σ² > C_n / [(√γ − 1)² n (1 − δ)]`.
//!
//! An unspecified constant cannot be stated to a survey designer, so the failure probability here
//! comes from the non-asymptotic bound for Gaussian matrices (Davidson & Szarek 2001; Vershynin
//! 2012, "Introduction to the non-asymptotic analysis of random matrices", Corollary 5.35): for
//! `G` (n × p₂, p₂ ≥ n) with i.i.d. N(0, 1) entries and any `t ≥ 0`,
//! `Pr[s_min(G) ≤ √p₂ − √n − t] ≤ e^{−t²/2}`. Since `(√γ − 1)² n = (√p₂ − √n)²` and
//! `λ_min(X₂X₂ᵀ) = σ² s_min(G)²`, choosing `t = (√p₂ − √n)(1 − √(1 − δ))` gives
//!
//! `Pr[λ_min(X₂X₂ᵀ) ≤ (√γ − 1)² n σ² (1 − δ)] ≤ exp(−n (√γ − 1)² (1 − √(1 − δ))² / 2)`,
//!
//! the same event as the paper's, with the same σ bound, but with a number attached. With
//! `σ² ≥ σ²_min = p₁ x_max² / [(√γ − 1)² (1 − δ)]` condition (3.5) then fails with at most that
//! probability.
//!
//! # Masks that keep columns fixed: the QA column and kept columns cancel
//! Seed 000's Theorem 3.7 takes `A` Haar on all of `O(n)`. Our left masks keep `F = [1ₙ, q1ₙ,
//! X_keep]` fixed (the QA column and any kept answers), so the alternatives to `X₁` an attacker
//! cannot rule out are `P·X₁` with `P` in the stabiliser of `F` (the release itself already shows
//! `F`). Appendix B's proof needs `X₁X₁ᵀ + X₂X₂ᵀ − P X₁X₁ᵀPᵀ ≻ 0` for those `P`. Write
//! `X₁ = [X_m, F]` with `X_m` the masked answers: `P F Fᵀ Pᵀ = F Fᵀ`, so the `F` terms cancel and
//!
//! `X₁X₁ᵀ + X₂X₂ᵀ − P X₁X₁ᵀPᵀ = X_mX_mᵀ + X₂X₂ᵀ − P X_mX_mᵀPᵀ ⪰ λ_min(X₂X₂ᵀ) − λ_max(X_mX_mᵀ)`
//!
//! (Weyl, as in Appendix B). Condition (3.5) therefore only needs
//! `λ_min(X₂X₂ᵀ) > λ_max(X_mX_mᵀ)`, and Appendix C's constant becomes `C_n = n·p_m·x_max²` with
//! `p_m` the masked answer columns and `x_max` their largest absolute value on the padded
//! record's scale (1 when the device scales by declared ranges): the QA constant 888 no longer
//! inflates σ. [`DesignParameters::masked_columns`] is that `p_m`.

use crate::linalg::lanczos::smallest_gram_eigenvalue;
use nalgebra::DMatrix;

/// Errors and refusals of unsafe designs; every message is one line that says what to change.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DesignError {
    /// `p < n`: Appendix A of seed 000 recovers binary answers from the provider's view.
    #[error(
        "unsafe design: the right mask has p = {p} columns but a cohort has n = {n} participants; \
         with p < n the provider's view XB has linearly dependent rows and Appendix A of Ding, Miao \
         & Wu (2020) recovers binary answers from it; use at least {needed} noise columns"
    )]
    FewerColumnsThanParticipants {
        /// Columns of the right mask, `p = p₁ + p₂`.
        p: usize,
        /// Participants per cohort.
        n: usize,
        /// Noise columns that would make `p ≥ n`.
        needed: usize,
    },
    /// `p₁ ≥ n`: seed 000 requires `p₁ < n`.
    #[error(
        "unsafe design: {p1} data columns (including the QA column) for only {n} participants per \
         cohort; the protocol needs p1 < n, so collect more participants per cohort or fewer variables"
    )]
    TooManyDataColumns {
        /// Data columns `p₁`.
        p1: usize,
        /// Participants per cohort.
        n: usize,
    },
    /// Appendix C needs `γ = p₂/n > 1`.
    #[error(
        "unsafe design: the Appendix C noise bound needs more noise columns than participants per \
         cohort (gamma = p2/n > 1); got p2 = {p2}, n = {n}"
    )]
    NoiseColumnsNotAboveParticipants {
        /// Noise columns `p₂`.
        p2: usize,
        /// Participants per cohort.
        n: usize,
    },
    /// σ below the Appendix C bound for the declared ranges.
    #[error(
        "unsafe design: noise sigma = {sigma} is below the Appendix C bound {bound:.6} for values up \
         to |x| = {x_max} (p1 = {p1}, gamma = {gamma:.4}, delta = {delta}); raise --sigma or omit it"
    )]
    SigmaBelowBound {
        /// The requested σ.
        sigma: f64,
        /// The minimum σ.
        bound: f64,
        /// Declared largest absolute value.
        x_max: f64,
        /// Data columns.
        p1: usize,
        /// `p₂ / n`.
        gamma: f64,
        /// The δ of the bound.
        delta: f64,
    },
    /// A parameter outside its domain.
    #[error("invalid design parameter: {what}")]
    InvalidParameter {
        /// What is wrong and what is allowed.
        what: String,
    },
}

/// The Appendix C noise bound and the probability that condition (3.5) fails under it.
#[derive(Clone, Debug, PartialEq)]
pub struct NoiseBound {
    /// Smallest σ with `σ² > p₁ x_max² / [(√γ − 1)²(1 − δ)]`.
    pub sigma_min: f64,
    /// `exp(−n(√γ − 1)²(1 − √(1 − δ))²/2)`: upper bound on `Pr[condition (3.5) fails]` when
    /// `σ ≥ sigma_min` (see the module documentation).
    pub failure_probability: f64,
    /// `γ = p₂ / n`.
    pub gamma: f64,
    /// The δ used.
    pub delta: f64,
    /// `C_n = n·p₁·x_max²`, the bound on `λ_max(X₁X₁ᵀ)`.
    pub c_n: f64,
}

/// Compute the Appendix C bound for one cohort of `n` participants.
///
/// # Errors
/// [`DesignError::NoiseColumnsNotAboveParticipants`] when `p₂ ≤ n`;
/// [`DesignError::InvalidParameter`] for `δ ∉ (0, 1)`, non-finite or negative `x_max`, `n = 0`
/// or `p₁ = 0`.
pub fn appendix_c_bound(
    n: usize,
    p1: usize,
    p2: usize,
    x_max: f64,
    delta: f64,
) -> Result<NoiseBound, DesignError> {
    if n == 0 || p1 == 0 {
        return Err(DesignError::InvalidParameter {
            what: format!("need at least one participant and one data column (n = {n}, p1 = {p1})"),
        });
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(DesignError::InvalidParameter {
            what: format!("delta must lie strictly between 0 and 1, got {delta}"),
        });
    }
    if !x_max.is_finite() || x_max < 0.0 {
        return Err(DesignError::InvalidParameter {
            what: format!("x_max must be a finite non-negative number, got {x_max}"),
        });
    }
    if p2 <= n {
        return Err(DesignError::NoiseColumnsNotAboveParticipants { p2, n });
    }
    let nf = n as f64;
    let gamma = p2 as f64 / nf;
    let gap = gamma.sqrt() - 1.0;
    let c_n = nf * p1 as f64 * x_max * x_max;
    let sigma_min = (c_n / (gap * gap * nf * (1.0 - delta))).sqrt();
    let t = (p2 as f64).sqrt() - nf.sqrt();
    let t = t * (1.0 - (1.0 - delta).sqrt());
    let failure_probability = (-t * t / 2.0).exp();
    Ok(NoiseBound {
        sigma_min,
        failure_probability,
        gamma,
        delta,
        c_n,
    })
}

/// The fewest noise columns `p₂ > n` for which the Appendix C bound's failure probability is at
/// most `target` (see the module documentation):
/// `p₂ = ⌈(√n + √(2 ln(1/target)) / (1 − √(1 − δ)))²⌉`.
///
/// # Errors
/// [`DesignError::InvalidParameter`] for `n = 0`, `δ ∉ (0, 1)` or `target ∉ (0, 1)`.
pub fn noise_columns_for(n: usize, delta: f64, target: f64) -> Result<usize, DesignError> {
    if n == 0 || !(delta > 0.0 && delta < 1.0) || !(target > 0.0 && target < 1.0) {
        return Err(DesignError::InvalidParameter {
            what: format!(
                "need n >= 1, delta in (0, 1) and a target probability in (0, 1); got n = {n}, delta = {delta}, target = {target}"
            ),
        });
    }
    let t = (2.0 * (1.0 / target).ln()).sqrt();
    let root = (n as f64).sqrt() + t / (1.0 - (1.0 - delta).sqrt());
    // `root²` is a modest positive number here; the cast cannot truncate meaningfully.
    let p2 = (root * root).ceil() as usize;
    Ok(p2.max(n + 1))
}

/// The smallest Appendix C δ for which `p₂` noise columns keep the failure probability of a
/// cohort of `n` at most `target`: the inverse of [`noise_columns_for`] in δ. With
/// `(√γ − 1)²n = (√p₂ − √n)²` and `t = √(2 ln(1/target))` the bound
/// `exp(−(√p₂ − √n)²(1 − √(1 − δ))²/2) ≤ target` holds exactly when
///
/// `1 − √(1 − δ) ≥ t/(√p₂ − √n)`, i.e. `δ ≥ δ* = 1 − (1 − t/(√p₂ − √n))²`.
///
/// σ_min grows with δ (`1/(1 − δ)`), so δ* gives the least noise that still meets the target.
/// `None` when `√p₂ − √n ≤ t` (no δ < 1 reaches it) or a parameter is outside its domain.
pub fn smallest_delta_for(n: usize, p2: usize, target: f64) -> Option<f64> {
    if n == 0 || !(target > 0.0 && target < 1.0) {
        return None;
    }
    let t = (2.0 * (1.0 / target).ln()).sqrt();
    let gap = (p2 as f64).sqrt() - (n as f64).sqrt();
    (gap > t).then(|| {
        let root = 1.0 - t / gap;
        1.0 - root * root
    })
}

/// What a design check concluded.
#[derive(Clone, Debug, PartialEq)]
pub struct DesignReport {
    /// Participants in the smallest cohort (the binding constraint).
    pub smallest_cohort: usize,
    /// Data columns `p₁` (answers plus QA column).
    pub p1: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// The Appendix C bound, when the design pads with noise under an orthogonal right mask.
    pub noise_bound: Option<NoiseBound>,
    /// Refusals overridden by teaching mode, as one-line warnings.
    pub overridden: Vec<String>,
}

/// How strictly to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Refuse unsafe designs (the default).
    Refuse,
    /// Teaching mode: report unsafe designs as warnings so the papers' small examples can run.
    WarnOnly,
}

/// Parameters of a design to check.
#[derive(Clone, Debug, PartialEq)]
pub struct DesignParameters {
    /// Participants in the smallest cohort (the whole survey when there are no cohorts): it binds
    /// `p₁ < n`.
    pub smallest_cohort: usize,
    /// Participants in the largest cohort: it binds `p ≥ n` and the Appendix C bound, whose
    /// `σ_min` grows as `γ = p₂/n` shrinks.
    pub largest_cohort: usize,
    /// Data columns `p₁`, including the QA column: it binds `p₁ < n` and `p ≥ n`.
    pub p1: usize,
    /// The data columns the left masks move (the answers not kept unmasked): only these enter
    /// condition (3.5) and the Appendix C bound (see "Masks that keep columns fixed" above).
    pub masked_columns: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ.
    pub sigma: f64,
    /// Largest absolute value of a masked entry on the padded record's scale.
    pub x_max: f64,
    /// The δ of Appendix C.
    pub delta: f64,
    /// Whether the right mask is orthogonal (Appendix C applies) rather than merely invertible.
    pub orthogonal_right_mask: bool,
}

/// Every violated condition of a design, plus the Appendix C bound when it applies.
///
/// # Errors
/// [`DesignError::InvalidParameter`] for parameters outside their domain.
fn violations(
    parameters: &DesignParameters,
) -> Result<(Vec<DesignError>, Option<NoiseBound>), DesignError> {
    let DesignParameters {
        smallest_cohort,
        largest_cohort: n,
        p1,
        masked_columns,
        p2,
        sigma,
        x_max,
        delta,
        orthogonal_right_mask,
    } = *parameters;
    if !sigma.is_finite() || sigma < 0.0 {
        return Err(DesignError::InvalidParameter {
            what: format!("sigma must be a finite non-negative number, got {sigma}"),
        });
    }
    let mut found = Vec::new();
    if p1 >= smallest_cohort {
        found.push(DesignError::TooManyDataColumns {
            p1,
            n: smallest_cohort,
        });
    }
    if p1 + p2 < n {
        found.push(DesignError::FewerColumnsThanParticipants {
            p: p1 + p2,
            n,
            needed: n - p1,
        });
    }
    let mut noise_bound = None;
    if p2 > 0 && orthogonal_right_mask {
        match appendix_c_bound(n, masked_columns.max(1), p2, x_max, delta) {
            Ok(bound) => {
                if sigma < bound.sigma_min {
                    found.push(DesignError::SigmaBelowBound {
                        sigma,
                        bound: bound.sigma_min,
                        x_max,
                        p1: masked_columns,
                        gamma: bound.gamma,
                        delta,
                    });
                }
                noise_bound = Some(bound);
            }
            Err(e @ DesignError::NoiseColumnsNotAboveParticipants { .. }) => found.push(e),
            Err(other) => return Err(other),
        }
    }
    Ok((found, noise_bound))
}

/// Check a design against seed 000's conditions.
///
/// # Errors
/// The first violated condition as a [`DesignError`] when `strictness` is [`Strictness::Refuse`];
/// invalid parameters are refused in either mode.
pub fn check_design(
    parameters: &DesignParameters,
    strictness: Strictness,
) -> Result<DesignReport, DesignError> {
    let (found, noise_bound) = violations(parameters)?;
    if strictness == Strictness::Refuse {
        if let Some(first) = found.into_iter().next() {
            return Err(first);
        }
        return Ok(report(parameters, noise_bound, Vec::new()));
    }
    let overridden = found.iter().map(ToString::to_string).collect();
    Ok(report(parameters, noise_bound, overridden))
}

fn report(
    p: &DesignParameters,
    noise_bound: Option<NoiseBound>,
    overridden: Vec<String>,
) -> DesignReport {
    DesignReport {
        smallest_cohort: p.smallest_cohort,
        p1: p.p1,
        p2: p.p2,
        noise_bound,
        overridden,
    }
}

/// The condition (3.5) margin `λ_min(X₂X₂ᵀ) / λ_max(X₁X₁ᵀ)` of one cohort (> 1 means the
/// condition holds). Only a simulation can compute it: nobody in the real protocol sees `X₂`.
///
/// # Cost
/// `λ_max(X₁X₁ᵀ) = λ_max(X₁ᵀX₁)` (the same non-zero eigenvalues) from the `p₁ × p₁` Gram matrix,
/// `O(m p₁²)`. `λ_min(X₂X₂ᵀ)` by Lanczos on `v ↦ X₂(X₂ᵀv)` ([`smallest_gram_eigenvalue`]):
/// `O(m p₂)` per product and `O(m^{1/3})` products (about 120 for a cohort of 1 500 with the
/// default padding), instead of `O(m²p₂ + m³)` for the `m × m` Gram matrix and its
/// eigen-decomposition; nothing `m × m` or `p × p` is formed. Cohorts of at most
/// [`DENSE_MAX_ROWS`](crate::linalg::lanczos::DENSE_MAX_ROWS) rows take the dense path, which is
/// cheaper there.
///
/// # Accuracy
/// The margin is computed from the guarded value `θ − ‖r‖ ≤ λ_min(X₂X₂ᵀ)` (Ritz value minus its
/// residual; see [`crate::linalg::lanczos`]), so it errs low, never high: a draw is never reported
/// as meeting condition (3.5) when it does not. The iteration stops once the comparison with 1 is
/// decided and the margin is within
/// [`DECISION_SHARE`](crate::linalg::lanczos::DECISION_SHARE) (0.1 %) of its distance to 1 — a
/// margin of 22 is reported to about ±0.02, below — or within
/// [`RESIDUAL_RELATIVE`](crate::linalg::lanczos::RESIDUAL_RELATIVE) relative, whichever comes
/// first (plus a few thousand `ε_mach·‖X₂‖²` absolute for a nearly singular `X₂X₂ᵀ`).
///
/// Returns `+∞` when `X₁ = 0`, and `None` when the shapes disagree, `X₂` has no columns or an
/// entry is not finite.
pub fn condition_3_5_margin(x1: &DMatrix<f64>, x2: &DMatrix<f64>) -> Option<f64> {
    if x1.nrows() != x2.nrows() || x2.ncols() == 0 || x1.nrows() == 0 {
        return None;
    }
    if x1.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let lambda_max_1 = x1
        .tr_mul(x1)
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(0.0, f64::max);
    if x2.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if lambda_max_1 <= 0.0 {
        return Some(f64::INFINITY);
    }
    let lambda_min_2 = smallest_gram_eigenvalue(x2, Some(lambda_max_1))?.lower;
    Some(lambda_min_2 / lambda_max_1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_COMPUTED, INVERTED_BOUND};

    fn params(n: usize, p1: usize, p2: usize, sigma: f64) -> DesignParameters {
        DesignParameters {
            smallest_cohort: n,
            largest_cohort: n,
            p1,
            masked_columns: p1,
            p2,
            sigma,
            x_max: 1.0,
            delta: 0.5,
            orthogonal_right_mask: true,
        }
    }

    /// By hand: n = 4, p₁ = 1, p₂ = 16 (γ = 4, √γ − 1 = 1), x_max = 2, δ = 0.75:
    /// σ²_min = 1·4 / (1·0.25) = 16, so σ_min = 4; t = (4 − 2)(1 − 0.5) = 1, failure ≤ e^{−1/2}.
    #[test]
    fn appendix_c_bound_by_hand() {
        let b = appendix_c_bound(4, 1, 16, 2.0, 0.75).unwrap();
        assert!((b.sigma_min - 4.0).abs() < HAND_COMPUTED);
        assert!((b.failure_probability - (-0.5f64).exp()).abs() < HAND_COMPUTED);
        assert!((b.gamma - 4.0).abs() < HAND_COMPUTED);
        assert!((b.c_n - 16.0).abs() < HAND_COMPUTED);
    }

    /// By hand: n = 4, p₂ = 16 (√p₂ − √n = 2) and a target e^{−1/2} (t = 1): δ* = 1 − (1 −
    /// 1/2)² = 3/4, the δ of the case above, whose failure bound is exactly e^{−1/2}.
    #[test]
    fn smallest_delta_by_hand() {
        let delta = smallest_delta_for(4, 16, (-0.5f64).exp()).unwrap();
        assert!((delta - 0.75).abs() < HAND_COMPUTED, "{delta}");
        // t = 2 = √p₂ − √n: no δ < 1 reaches the target.
        assert_eq!(smallest_delta_for(4, 16, (-2.0f64).exp()), None);
    }

    /// δ* inverts noise_columns_for: the policy's columns at δ = 0.5 need a δ* of at most 0.5,
    /// and the Appendix C bound at δ* meets the target (to rounding), not more.
    #[test]
    fn smallest_delta_meets_the_target_exactly() {
        for n in [5, 12, 200, 1500] {
            let p2 = noise_columns_for(n, 0.5, 1e-6).unwrap();
            let delta = smallest_delta_for(n, p2, 1e-6).unwrap();
            assert!(delta <= 0.5 && delta > 0.4, "n = {n}: {delta}");
            let failure = appendix_c_bound(n, 1, p2, 1.0, delta)
                .unwrap()
                .failure_probability;
            assert!(
                (failure / 1e-6 - 1.0).abs() < INVERTED_BOUND,
                "n = {n}: {failure}"
            );
        }
    }

    #[test]
    fn refusals_name_the_reason() {
        let few = check_design(&params(20, 9, 0, 0.0), Strictness::Refuse).unwrap_err();
        assert_eq!(
            few,
            DesignError::FewerColumnsThanParticipants {
                p: 9,
                n: 20,
                needed: 11
            }
        );
        assert!(few.to_string().contains("Appendix A"));
        assert_eq!(
            check_design(&params(5, 5, 10, 100.0), Strictness::Refuse).unwrap_err(),
            DesignError::TooManyDataColumns { p1: 5, n: 5 }
        );
        assert!(matches!(
            check_design(&params(20, 2, 20, 100.0), Strictness::Refuse).unwrap_err(),
            DesignError::NoiseColumnsNotAboveParticipants { p2: 20, n: 20 }
        ));
        let low = check_design(&params(20, 2, 80, 0.1), Strictness::Refuse).unwrap_err();
        assert!(matches!(low, DesignError::SigmaBelowBound { .. }));
        assert!(!low.to_string().contains('\n'));
    }

    /// Uneven cohorts (41 rows in cohorts of at most 14: sizes 14, 14, 13): each condition binds
    /// at its own end. `p₂ = 14` noise columns exceed the smallest cohort but not the largest; σ
    /// just above the smallest cohort's Appendix C bound is below the largest's; `p₁ = 13` fits
    /// the largest cohort but not the smallest.
    #[test]
    fn uneven_cohorts_are_checked_where_each_condition_binds() {
        let uneven = |p1: usize, p2: usize, sigma: f64| DesignParameters {
            smallest_cohort: 13,
            largest_cohort: 14,
            ..params(13, p1, p2, sigma)
        };
        assert!(matches!(
            check_design(&uneven(2, 14, 1e6), Strictness::Refuse).unwrap_err(),
            DesignError::NoiseColumnsNotAboveParticipants { p2: 14, n: 14 }
        ));
        let smallest = appendix_c_bound(13, 2, 40, 1.0, 0.5).unwrap().sigma_min;
        let largest = appendix_c_bound(14, 2, 40, 1.0, 0.5).unwrap().sigma_min;
        assert!(smallest < largest);
        let between = 0.5 * (smallest + largest);
        assert!(matches!(
            check_design(&uneven(2, 40, between), Strictness::Refuse).unwrap_err(),
            DesignError::SigmaBelowBound { .. }
        ));
        let report = check_design(&uneven(2, 40, largest * 1.001), Strictness::Refuse).unwrap();
        assert_eq!(report.noise_bound.unwrap().sigma_min, largest);
        assert_eq!(
            check_design(&uneven(13, 40, 1e6), Strictness::Refuse).unwrap_err(),
            DesignError::TooManyDataColumns { p1: 13, n: 13 }
        );
    }

    #[test]
    fn safe_design_passes_with_its_bound() {
        let report = check_design(&params(20, 2, 80, 50.0), Strictness::Refuse).unwrap();
        let bound = report.noise_bound.unwrap();
        assert!(bound.sigma_min < 50.0);
        assert!(report.overridden.is_empty());
    }

    #[test]
    fn teaching_mode_reports_every_violation() {
        let report = check_design(&params(20, 9, 0, 0.0), Strictness::WarnOnly).unwrap();
        assert_eq!(report.overridden.len(), 1);
        assert!(report.overridden[0].contains("p = 9"));
    }

    #[test]
    fn invalid_parameters_are_refused_even_when_teaching() {
        let mut p = params(20, 2, 80, 50.0);
        p.delta = 1.0;
        assert!(matches!(
            check_design(&p, Strictness::WarnOnly),
            Err(DesignError::InvalidParameter { .. })
        ));
        let mut p = params(20, 2, 80, f64::NAN);
        p.sigma = f64::NAN;
        assert!(matches!(
            check_design(&p, Strictness::WarnOnly),
            Err(DesignError::InvalidParameter { .. })
        ));
    }

    #[test]
    fn noise_columns_meet_their_target() {
        for (n, delta, target) in [
            (20, 0.5, 1e-6),
            (250, 0.5, 1e-6),
            (2000, 0.9, 1e-9),
            (3, 0.1, 0.2),
        ] {
            let p2 = noise_columns_for(n, delta, target).unwrap();
            let bound = appendix_c_bound(n, 1, p2, 1.0, delta).unwrap();
            assert!(
                bound.failure_probability <= target,
                "{n} {p2} {}",
                bound.failure_probability
            );
            if p2 > n + 1 {
                let fewer = appendix_c_bound(n, 1, p2 - 1, 1.0, delta).unwrap();
                assert!(fewer.failure_probability > target * (1.0 - INVERTED_BOUND));
            }
        }
        assert!(noise_columns_for(0, 0.5, 1e-6).is_err());
    }

    /// By hand: X₁ = [1; 1] has X₁ᵀX₁ = 2; X₂ = 3·I₂ has X₂X₂ᵀ = 9·I₂; margin 9/2.
    #[test]
    fn margin_by_hand() {
        let x1 = DMatrix::from_element(2, 1, 1.0);
        let x2 = DMatrix::identity(2, 2) * 3.0;
        assert!((condition_3_5_margin(&x1, &x2).unwrap() - 4.5).abs() < HAND_COMPUTED);
        assert_eq!(condition_3_5_margin(&x1, &DMatrix::zeros(3, 2)), None);
    }
}
