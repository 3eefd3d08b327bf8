//! The collusion-resistant release carries the collector's own mask (issue 11.2).
//!
//! Without it the release is `A X₁` with `A` the product of the left providers' masks, and with
//! the default single left provider that provider reads every record as `X₁ = Aᵀ·release`. With
//! the collector's `A_c` on top, `Aᵀ·release = Aᵀ A_c A X₁` is a Haar rotation of `X₁`'s centred
//! part: at least [`NOT_RECOVERED`] of its norm away. The release still has `X₁ᵀX₁` and the
//! column means of the raw data to [`PRESERVED_STATISTICS`].
//!
//! The check can fail: applied to the sum the collector forms before its own mask (the release
//! the core used to publish), the left provider's `Aᵀ` recovers `X₁` to within [`VISIBLY_MASKED`]
//! (only the rounding of the shares, whose scale τ is a hundred times the data's, remains).

mod common;

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_core::protocol::accuracy::UnmaskingAccuracy;
use orthomask_core::protocol::collusion::share_sigma;
use orthomask_core::protocol::design::appendix_c_bound;
use orthomask_core::protocol::simulation::{CollusionKeys, Safety, run_collusion};
use orthomask_core::protocol::tm2::{DEFAULT_QA_CONSTANT, Tm2Design};
use orthomask_core::protocol::{DesignError, ProtocolError, Strictness};
use orthomask_core::scaling::RangeScaler;
use orthomask_core::tolerance::{
    ERROR_MODEL_FACTOR, NOT_RECOVERED, PRESERVED_STATISTICS, VISIBLY_MASKED,
};

const N: usize = 40;

fn raw() -> DMatrix<f64> {
    DMatrix::from_fn(N, 3, |i, j| ((i * 7 + j * 5) % 13) as f64 + 10.0 * j as f64)
}

fn safety() -> Safety {
    Safety {
        x_max: DEFAULT_QA_CONSTANT,
        delta: 0.5,
        strictness: Strictness::Refuse,
    }
}

fn design() -> Tm2Design {
    let p2 = 120;
    let sigma = appendix_c_bound(N, 4, p2, DEFAULT_QA_CONSTANT, 0.5)
        .unwrap()
        .sigma_min
        * 1.01;
    Tm2Design::modified(3, p2, sigma).unwrap()
}

/// The design for three answers scaled by their declared `ranges`: `p₂ = 120`, σ just above the
/// Appendix C bound with `x_max = 1` (the scaled answers' bound).
fn scaled_design(ranges: &[(f64, f64)]) -> Tm2Design {
    let p2 = 120;
    let sigma = appendix_c_bound(N, 3, p2, 1.0, 0.5).unwrap().sigma_min * 1.01;
    Tm2Design::modified(3, p2, sigma)
        .unwrap()
        .with_scaling(RangeScaler::new(ranges).unwrap())
        .unwrap()
}

/// [`safety`] for scaled records, whose answers are at most 1.
fn scaled_safety() -> Safety {
    Safety {
        x_max: 1.0,
        ..safety()
    }
}

fn keys(left: u64) -> CollusionKeys {
    CollusionKeys {
        collector: Key::teaching(1),
        right: vec![Key::teaching(2), Key::teaching(3)],
        left: (0..left).map(|j| Key::teaching(10 + j)).collect(),
        participants: Key::teaching(4),
    }
}

/// `Aᵀ·M` for the left providers' chain `A = A_{K₂} ⋯ A₁`: what the left providers together
/// (one provider, by default) can compute from a release `M`.
fn left_unmask(keys: &CollusionKeys, m: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = m.clone();
    for (j, key) in keys.left.iter().enumerate().rev() {
        let a = FixedSubspaceHaar::ones_fixed(
            m.nrows(),
            key.stream(StreamId::ExtraLeftMask { party: j as u32 }),
        )
        .unwrap();
        a.left_apply_inverse(&mut out).unwrap();
    }
    out
}

/// `‖attempt − X₁‖_F / ‖X₁ − 1ₙ x̄ᵀ‖_F`: the distance that matters, since the means are public.
fn distance_from(x1: &DMatrix<f64>, attempt: &DMatrix<f64>) -> f64 {
    let means = x1.row_sum() / x1.nrows() as f64;
    let mut centred = x1.clone();
    for mut row in centred.row_iter_mut() {
        row -= &means;
    }
    (attempt - x1).norm() / centred.norm()
}

#[test]
fn the_left_provider_cannot_unmask_the_collusion_release() {
    let raw = raw();
    let design = design();
    let x1 = raw.clone().insert_column(3, DEFAULT_QA_CONSTANT);
    for left in [1, 2] {
        let keys = keys(left);
        let tau = share_sigma(&design, raw.amax());
        let run = run_collusion(&raw, &design, &keys, tau, safety()).unwrap();
        let distance = distance_from(&x1, &left_unmask(&keys, &run.release));
        assert!(
            distance >= NOT_RECOVERED,
            "{left} left provider(s): Aᵀ·release is only {distance} from X₁"
        );
        // The release keeps XᵀX and the means.
        let gram = x1.tr_mul(&x1);
        let gram_error = (run.release.tr_mul(&run.release) - &gram).amax() / gram.amax();
        assert!(gram_error < PRESERVED_STATISTICS, "XᵀX: {gram_error}");
        let mean_error = (run.release.row_sum() - x1.row_sum()).amax() / x1.row_sum().amax();
        assert!(mean_error < PRESERVED_STATISTICS, "means: {mean_error}");
        // Power: the sum before the collector's mask is exactly what the left chain unmasks.
        let recovered = distance_from(&x1, &left_unmask(&keys, &run.combined));
        assert!(recovered < VISIBLY_MASKED, "without A_c: {recovered}");
    }
}

/// `run_collusion` checks the design as `run_tm2` does: σ below the Appendix C bound is refused,
/// or reported in teaching mode.
#[test]
fn the_collusion_run_checks_the_design() {
    let raw = raw();
    let weak = Tm2Design::modified(3, 120, 1.0).unwrap();
    let tau = share_sigma(&weak, raw.amax());
    let refused = run_collusion(&raw, &weak, &keys(1), tau, safety()).unwrap_err();
    assert!(matches!(
        refused,
        ProtocolError::Design(DesignError::SigmaBelowBound { .. })
    ));
    let few_columns = Tm2Design::modified(3, 10, 1e6).unwrap();
    assert!(matches!(
        run_collusion(&raw, &few_columns, &keys(1), tau, safety()),
        Err(ProtocolError::Design(
            DesignError::FewerColumnsThanParticipants { .. }
        ))
    ));
    let teaching = Safety {
        strictness: Strictness::WarnOnly,
        ..safety()
    };
    let run = run_collusion(&raw, &weak, &keys(1), tau, teaching).unwrap();
    assert_eq!(run.design_report.overridden.len(), 1);
    assert!(run.qa.unwrap().passed());
}

/// (E5) of `protocol::accuracy`: in share mode the collector's sum of the `K` parts carries the
/// rounding of every share, whose noise τ is a hundred times the (scaled) answers. Measured
/// against the left chain applied to the sum of the shares directly (no right masks), the rms
/// error per entry lies within [`ERROR_MODEL_FACTOR`] of `of_shares`' expectation both ways, and
/// well above the single-record figure (E2) it would be mistaken for.
#[test]
fn share_mode_unmasking_error_matches_the_expected_error_e5() {
    let raw = raw();
    let ranges: Vec<(f64, f64)> = raw
        .column_iter()
        .map(|c| (c.min() - 1.0, c.max() + 1.0))
        .collect();
    let design = scaled_design(&ranges);
    let keys = keys(1);
    let tau = share_sigma(&design, raw.amax());
    let safety = scaled_safety();
    let run = run_collusion(&raw, &design, &keys, tau, safety).unwrap();
    let p1 = design.p1();
    // What the collector sums, on the devices' scale, and the same chain on the plain records.
    let summed = run.summed.clone();
    let mut records = DMatrix::zeros(N, design.p());
    for share in &run.shares {
        records += share;
    }
    let mut reference = records.columns(0, p1).into_owned();
    for (j, key) in keys.left.iter().enumerate() {
        FixedSubspaceHaar::ones_fixed(N, key.stream(StreamId::ExtraLeftMask { party: j as u32 }))
            .unwrap()
            .left_apply(&mut reference)
            .unwrap();
    }
    let rms = ((&summed - &reference).norm_squared() / (N * p1) as f64).sqrt();
    let expected = UnmaskingAccuracy::of_shares(&design, 1.0, 2, tau).expected_entry_error;
    assert!(
        rms < ERROR_MODEL_FACTOR * expected && rms > expected / ERROR_MODEL_FACTOR,
        "rms {rms:e} against the expected {expected:e}"
    );
    let single = UnmaskingAccuracy::of(&design, 1.0).expected_entry_error;
    assert!(expected > 3.0 * single, "{expected:e} vs {single:e}");
}

/// Share mode, as the services run it: a column the cohort answered with zeros comes back as
/// exact zeros in what the collector sums and in the release, although each share of it is noise
/// and the parts cancel only up to rounding ((E9) of `Tm2Design::unscale_unmasked`); a column
/// whose one non-zero answer is a millionth of its range keeps it (its sum, which every left mask
/// keeps).
#[test]
fn share_mode_releases_a_column_answered_with_zeros_as_exact_zeros() {
    let tiny = 1e-6;
    let raw = DMatrix::from_fn(N, 3, |i, j| match j {
        0 => 0.0,
        1 => 18.0 + i as f64,
        _ if i == 5 => tiny,
        _ => 0.0,
    });
    let ranges = [(0.0, 1.0), (18.0, 90.0), (0.0, 1.0)];
    let design = scaled_design(&ranges);
    let tau = share_sigma(&design, 90.0);
    let safety = scaled_safety();
    let run = run_collusion(&raw, &design, &keys(1), tau, safety).unwrap();
    common::assert_zeros_stay_and_a_tiny_answer_is_kept(
        &[("summed", &run.combined), ("released", &run.release)],
        0,
        &run.release,
        2,
        tiny,
    );
}
