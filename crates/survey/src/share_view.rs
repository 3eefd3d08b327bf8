//! What one right-masking service learns from a participant's share (issue 11 §4), as the
//! participant's "what leaves your device" panel states it.
//!
//! # Derivation
//! In share mode a device splits its padded record into `K₁` symmetric zero-sum shares
//! (`orthomask_core::protocol::collusion::split_into_shares`): on each answer coordinate
//! `xⁱ = x/K₁ + Gᵢ − Ḡ` with `Gᵢ ~ N(0, τ²)` independent, so service `i` alone sees the answer
//! vector `a` as
//!
//! ```text
//!   f(a) + Z,   f(a) = a/K₁,   Z ~ N(0, τ²(1 − 1/K₁)·I)          (Var(Gᵢ − Ḡ) = τ²(1 − 1/K₁))
//! ```
//!
//! — a Gaussian mechanism (Balle & Wang 2018; `orthomask_dp::gaussian_mechanism`). Its
//! neighbouring inputs are one participant's answers replaced by any other valid answers, so the
//! L₂ sensitivity is at most `Δ = ‖(hiⱼ − loⱼ)ⱼ‖₂ / K₁` over the declared ranges of the answer
//! columns (an upper bound: a categorical answer moves two dummies by 1, not all of them). The
//! guarantee is (ε, δ) with ε the smallest value the exact profile allows at
//! [`ONE_SERVICE_DELTA`]; ε depends on `σ/Δ = τ√(K₁(K₁ − 1)) / ‖range‖₂` only. The
//! signal-to-noise ratio is `(x_max/K₁) / (τ√(1 − 1/K₁))`
//! (`ShareView::one_service(K₁, τ).signal_to_noise(x_max)`). The padding and the QA constant are
//! split evenly and carry no answer. Everything is on the padded record's scale: when the device
//! scales by declared ranges the shares split answers in `[−1, 1]`, so the ranges are `[−1, 1]`
//! and `x_max = 1` (`SurveyDefinition::record_ranges`); τ was chosen on that scale too.

use crate::definition::SurveyDefinition;
use orthomask_core::protocol::collusion::ShareView;
use orthomask_dp::gaussian_mechanism::gaussian_mechanism_epsilon;

/// δ at which one service's ε is stated (one in a million participants' views may exceed ε).
pub const ONE_SERVICE_DELTA: f64 = 1e-6;

/// One right-masking service's view of a participant's answers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneServiceView {
    /// Right-masking services `K₁`.
    pub services: usize,
    /// Largest answer magnitude over the noise in one share (below 1: the answer is buried).
    pub signal_to_noise: f64,
    /// ε of the Gaussian mechanism one service's view is, at [`ONE_SERVICE_DELTA`].
    pub epsilon: f64,
    /// δ of that guarantee.
    pub delta: f64,
}

/// Why the figure cannot be computed.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ShareViewError {
    /// Share scale or service count outside what share mode allows.
    #[error("share view: {0}")]
    Shares(String),
    /// The privacy profile could not be evaluated.
    #[error("share view: {0}")]
    Privacy(String),
}

/// The view of one service for `definition`; `None` outside share mode.
///
/// # Errors
/// [`ShareViewError`] for a definition whose share parameters are invalid.
pub fn one_service_view(
    definition: &SurveyDefinition,
) -> Result<Option<OneServiceView>, ShareViewError> {
    let Some(share) = &definition.masking.share_mode else {
        return Ok(None);
    };
    // On the record's scale: the shares split the scaled record when the device scales.
    one_service_view_of(
        share.providers.len(),
        share.share_sigma,
        &definition.record_ranges(),
    )
    .map(Some)
}

/// The view of one of `services` services with share noise τ = `share_sigma`, for answers with
/// these ranges on the padded record's scale (module documentation).
///
/// # Errors
/// [`ShareViewError`] for fewer than two services, a τ that is not finite and positive, or a
/// privacy profile that cannot be evaluated.
pub fn one_service_view_of(
    services: usize,
    share_sigma: f64,
    record_ranges: &[(f64, f64)],
) -> Result<OneServiceView, ShareViewError> {
    let view = ShareView::one_service(services, share_sigma)
        .map_err(|e| ShareViewError::Shares(e.to_string()))?;
    let range_norm = record_ranges
        .iter()
        .map(|r| (r.1 - r.0).powi(2))
        .sum::<f64>()
        .sqrt();
    let answer_bound = record_ranges
        .iter()
        .map(|r| r.0.abs().max(r.1.abs()))
        .fold(0.0, f64::max);
    let sensitivity = range_norm / services as f64;
    let epsilon = gaussian_mechanism_epsilon(sensitivity, view.noise_sd, ONE_SERVICE_DELTA)
        .map_err(|e| ShareViewError::Privacy(e.to_string()))?;
    Ok(OneServiceView {
        services,
        signal_to_noise: view.signal_to_noise(answer_bound),
        epsilon,
        delta: ONE_SERVICE_DELTA,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{DP_SOLVED, HAND_COMPUTED};
    use orthomask_dp::gaussian_mechanism::gaussian_mechanism_delta;

    const SHARES: &str = include_str!("../../../www/surveys/shares-demo.json");

    fn definition() -> SurveyDefinition {
        SurveyDefinition::parse(SHARES, "shares-demo.json").unwrap()
    }

    /// The figures by hand from the definition's own numbers.
    #[test]
    fn the_figures_follow_the_derivation() {
        let d = definition();
        let share = d.masking.share_mode.clone().unwrap();
        let k = share.providers.len() as f64;
        let tau = share.share_sigma;
        let view = one_service_view(&d).unwrap().unwrap();
        assert_eq!(view.services, share.providers.len());
        let noise = tau * (1.0 - 1.0 / k).sqrt();
        let expected_snr = d.answers_max() / k / noise;
        assert!((view.signal_to_noise - expected_snr).abs() <= HAND_COMPUTED * expected_snr);
        assert!(
            view.signal_to_noise < 0.01,
            "shares bury the answers: {view:?}"
        );
        // ε is the smallest ε whose exact δ is the stated δ: δ_M(ε) = 10⁻⁶ at the computed ε,
        // and above it just below.
        let range: f64 = d
            .columns()
            .iter()
            .map(|c| (c.range.1 - c.range.0).powi(2))
            .sum::<f64>()
            .sqrt();
        let sensitivity = range / k;
        if view.epsilon > 0.0 {
            let at = gaussian_mechanism_delta(sensitivity, noise, view.epsilon).unwrap();
            assert!((at - ONE_SERVICE_DELTA).abs() <= DP_SOLVED, "{at}");
            let below = gaussian_mechanism_delta(sensitivity, noise, view.epsilon * 0.99).unwrap();
            assert!(below > ONE_SERVICE_DELTA);
        }
    }

    /// A scaled record carries answers in [−1, 1]: the view's bound is 1 and each answer's range
    /// has width 2, so with τ = 100 (the floor there) SNR = (1/K₁)/(100√(1 − 1/K₁)) and the
    /// sensitivity is 2√p/K₁, whatever the declared units.
    #[test]
    fn scaled_records_are_viewed_on_their_own_scale() {
        let mut d = definition();
        d.masking.scaling = crate::definition::RecordScaling::DeclaredRanges;
        let share = d.masking.share_mode.as_mut().unwrap();
        share.share_sigma = 100.0;
        let k = share.providers.len() as f64;
        d.validate().unwrap();
        let view = one_service_view(&d).unwrap().unwrap();
        let noise = 100.0 * (1.0 - 1.0 / k).sqrt();
        let expected_snr = 1.0 / k / noise;
        assert!((view.signal_to_noise - expected_snr).abs() <= HAND_COMPUTED * expected_snr);
        let sensitivity = 2.0 * (d.columns().len() as f64).sqrt() / k;
        let at = gaussian_mechanism_delta(sensitivity, noise, view.epsilon).unwrap();
        assert!((at - ONE_SERVICE_DELTA).abs() <= DP_SOLVED, "{at}");
    }

    /// Hand-solvable: the basic protocol has no shares, hence no share view.
    #[test]
    fn no_view_outside_share_mode() {
        let basic = include_str!("../../../www/surveys/leaps-demo.json");
        let d = SurveyDefinition::parse(basic, "leaps-demo.json").unwrap();
        assert_eq!(one_service_view(&d).unwrap(), None);
    }

    /// More noise, a smaller ε (the profile is monotone in σ/Δ).
    #[test]
    fn a_larger_share_scale_gives_a_smaller_epsilon() {
        let mut d = definition();
        let before = one_service_view(&d).unwrap().unwrap();
        if let Some(share) = d.masking.share_mode.as_mut() {
            share.share_sigma *= 0.01;
        }
        let weaker = one_service_view(&d).unwrap().unwrap();
        assert!(weaker.epsilon > before.epsilon, "{weaker:?} vs {before:?}");
        assert!(weaker.signal_to_noise > before.signal_to_noise);
    }
}
