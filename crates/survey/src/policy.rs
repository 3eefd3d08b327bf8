//! Every policy constant of a survey, written once. The plan ([`crate::plan`]), the survey
//! definition, the command line, the services, the benchmark and the classroom read them here;
//! nobody else writes these numbers.
//!
//! | constant | value | where it binds |
//! |---|---|---|
//! | [`APPENDIX_C_DELTA`] | 0.5 | δ of seed 000's Appendix C bound on σ |
//! | [`FAILURE_TARGET`] | 10⁻⁶ | Pr[condition (3.5) fails] allowed by the default noise columns |
//! | [`SIGMA_HEADROOM`] | 10⁻⁹ | σ = σ_min·(1 + 10⁻⁹): just above the strict bound |
//! | [`DP_ALLOWANCE_SDS`] | 6 | DP noise standard deviations added to `x_max` |
//! | [`DEFAULT_QA_CONSTANT`] | 888 | the QA column of seed 003 §3.2 (core's constant) |
//! | [`SHARE_SCALE`] | 100 | share σ over the answers' scale in share mode (core's rule) |
//! | [`MIN_SHARE_SERVICES`] | 3 | fewest right-masking services of share mode |
//! | [`QA_REVEALS`] | 10⁻² | relative change of the masks' action on `1ₙ` the QA check must reveal |
//! | [`WEAK_BOUND_WARNING`] | 0.05 | a run warns when the bound guarantees less than 95 % |
//! | [`SECOND_METHOD_NOISE_ROWS`], [`SECOND_METHOD_SIGMA`] | 6, 1 | seed 003 §3.3's Table 7 |
//! | [`MAX_COHORT`], [`MAX_P`] | 10 000, 50 000 | what the services hold in memory per cohort |
//! | [`MIN_ANONYMITY_SET`] | 5 | the fewest records a released cohort hides a record among |
//! | [`UPLOAD_FALSE_REFUSAL`] | 10⁻⁹ | chance that an honest upload fails the services' size check |
//! | [`MAX_REOPENINGS`] | 2 | times an invitation is reopened after its cohort was spoilt |
//! | [`TARGET_DIGITS_LOST`] | 2 | expected significant digits a release may lose to masking |
//! | [`ACCURACY_RECORD_WIDTH`] | 4 096 | widest padded record the plan builds to save digits |

/// The δ of seed 000's Appendix C bound: `Pr[λ_min(X₂X₂ᵀ) ≤ (√γ − 1)² n σ² (1 − δ)]` is bounded,
/// and σ must satisfy `σ² > p₁ x_max² / [(√γ − 1)²(1 − δ)]`.
///
/// δ trades the two costs of the bound: a larger δ loosens the eigenvalue event (fewer noise
/// columns reach a failure target, since the exponent grows with `(1 − √(1 − δ))²`) but raises
/// σ_min by `1/√(1 − δ)`. At 0.5 σ_min grows by only √2 over the δ → 0 limit while the noise
/// columns needed for 10⁻⁶ stay moderate (503 for a cohort of 20, 1 140 for 250).
pub const APPENDIX_C_DELTA: f64 = 0.5;

/// The largest probability that condition (3.5) of seed 000 fails which the default number of
/// noise columns allows (`noise_columns_for`): one survey in a million may lose the strong
/// obfuscation guarantee of Theorem 3.9. Far below the other risks a survey runs (a leaked
/// device key, a colluding pair of parties), and cheap: the columns grow only with
/// `√(2 ln(1/target))`.
pub const FAILURE_TARGET: f64 = 1e-6;

/// The default σ sits this far (relatively) above the Appendix C bound σ_min: the bound is strict
/// (`σ² > …`), so σ = σ_min itself would not satisfy it, and a value one rounding error above could
/// fall below it after the bound is recomputed elsewhere. 10⁻⁹ is seven orders above the rounding
/// of `f64` and seven below anything that changes a privacy figure.
pub const SIGMA_HEADROOM: f64 = 1e-9;

/// With device-side DP noise an entry entering the mask can exceed its declared range, so the
/// `x_max` of Appendix C grows by this many DP standard deviations (the largest column's): a
/// Gaussian exceeds six standard deviations with probability 2·10⁻⁹ per entry.
pub const DP_ALLOWANCE_SDS: f64 = 6.0;

/// Probability below which a run's Appendix C guarantee is considered weak enough to warn about
/// (`Pr[condition (3.5) fails] > 0.05`): hand-chosen noise columns can fall far short of
/// [`FAILURE_TARGET`], and a one-in-twenty failure chance is no longer a safety margin.
pub const WEAK_BOUND_WARNING: f64 = 0.05;

/// Noise rows of the second TM² method when none are asked for: the six of seed 003's Table 7.
pub const SECOND_METHOD_NOISE_ROWS: usize = 6;

/// Standard deviation of the second method's noise rows when none is asked for: seed 003 §3.3
/// draws them as standard normals.
pub const SECOND_METHOD_SIGMA: f64 = 1.0;

/// The QA constant of seed 003 §3.2 (888), owned by the core's design, which appends it to every
/// record by default; re-exported so the application layer names it from one place.
pub use orthomask_core::protocol::tm2::DEFAULT_QA_CONSTANT;

/// In share mode every share hides the answers under noise this many times their declared scale
/// (`τ = SHARE_SCALE·(x_max + 4σ_dp)`, computed by `orthomask_core::protocol::collusion::share_sigma`,
/// whose module documents why); a definition whose `share_sigma` is lower is refused.
pub use orthomask_core::protocol::collusion::SHARE_SCALE;

/// The fewest right-masking services a share-mode survey may split its records over.
///
/// Why three (`docs/threat-model.md`, "Share mode, two right-masking services" and "Share mode,
/// three or more services"; derived in `orthomask_core::protocol::share_handover`'s module
/// documentation):
/// * **`K = 2`.** Each share is the other's complement (`X¹ = X − X⁰`), so each service must
///   unmask its own share, and the parts cannot carry cancelling masks (the collector could
///   subtract the one part it lacks). The collector together with either service then holds
///   `A X_q`, `A Xʲ_q` and `Xʲ_q`: `A` on the span of the share's columns, hence the exact
///   projections `X_qᵀ Xʲ_q` of every answer column on the service's own share columns, by
///   participant — enough to read a yes/no column participant by participant by subset sum (the
///   threat model's row "collector + one service": **break**, read exactly by
///   `coalitions::share_mode_with_two_services_breaks_with_the_collector_and_one_service`).
/// * **`K ≥ 3`.** Service `j` unmasks share `j − 1` and every part carries ring masks that cancel
///   only in the sum, so the collector with one service never sees any `A Xⁱ_q` apart; what it is
///   left with is a view of a few projections per answer column under Gaussian noise of standard
///   deviation `τ√((K − 2)/(K − 1))·‖x_c‖` (`share_handover`), and the threat model's rows for
///   every two-party coalition but provider + collector (which breaks the basic protocol too) read
///   "no record" (`coalitions::share_mode_coalitions_with_three_services`). The smallest
///   coalitions that read records beyond provider + collector are three parties (all `K`
///   services; the collector with two neighbouring services).
///
/// Share mode is chosen for exactly the coalition `K = 2` leaves open — the collector with one
/// service (threat model, "Choosing a mode") — so it needs three. Devices refuse fewer
/// (`crate::floors::check`, which the accepting services run on the registered template too), and
/// so do the definition's validation and the collector's plan (`crate::draft::plan_survey`).
pub const MIN_SHARE_SERVICES: usize = 3;

/// The largest relative change of the left masks' action on `1ₙ` that the QA check (seed 003
/// §3.1, `orthomask_core::protocol::qa`) may miss in an honest run: a cohort whose left mask `M`
/// has `ρ = ‖M1ₙ − 1ₙ‖_∞ > QA_REVEALS` must fail it. Devices and the accepting services refuse a
/// definition whose QA constant or record length cannot meet it (`crate::floors`, (Q1)–(Q2),
/// which derives the floor on the constant from this target).
///
/// # Why 10⁻²
/// * **What a miss costs.** Masks that keep `1ₙ` fixed keep the column sums. A party that uses
///   an orthogonal `M` that does not (Haar on all of `O(n)`, another cohort's, a corrupted one)
///   keeps `XᵀX` and moves every column sum by `(Mᵀ1ₙ − 1ₙ)ᵀx_j`, where
///   `‖Mᵀ1ₙ − 1ₙ‖ = ‖Mᵀ(1ₙ − M1ₙ)‖ = ‖1ₙ − M1ₙ‖ ≤ √n·ρ`; so a released mean of answers bounded
///   by `x_max` moves by at most `ρ·x_max` — with scaled answers, `ρ` of the declared half-range
///   (device-side DP noise adds a Gaussian of standard deviation `ρσ_DP/√n` to that). At 10⁻²:
///   one per cent of the range, the sampling error of a mean of ten thousand answers spread over
///   it (`1/√10⁴`).
/// * **What honest designs reach.** The check's own allowance is `ρ_min = QA_RELATIVE·(1 + s/|q|)`
///   (`s` the rounding scale of the unmasked block, `q` the record's QA entry). A device that
///   scales its answers carries every constant as `q = c/|c| = ±1`
///   (`Tm2Design::record_qa_entry`), so there no constant lowers `ρ_min`: the record's length
///   sets it. For the designs the collector plans it ranges from 1.1·10⁻⁸ (one scaled answer,
///   cohorts of 20, basic protocol) and 1.8·10⁻⁶ (share mode, whose shares carry noise 100 times
///   the answers' scale and whose scales add over the services) to 7·10⁻³ (300 answers, cohorts
///   of 2 000, DP at ε = 0.1, five services: DP noise of σ_DP ≈ 150 on the scaled record raises
///   `x_max`, and with it σ and the share noise). A target below that refuses
///   designs the plan makes for DP budgets a survey team may choose; 10⁻² is the smallest power
///   of ten that keeps the designs of up to 300 answers with DP at ε ≥ 0.1 (the test grid,
///   `crate::floors::tests::the_planners_designs_meet_every_floor`, up to 9.5·10⁻³ for 300
///   answers in the smallest cohorts over three services). Longer records still (about 10⁷ on
///   the devices' scale: a thousand answers with DP, or 300 at ε = 0.1 in the smallest cohorts
///   over five services) are refused by the plan with the floor's line; such a release is
///   expected to lose about seven of its sixteen digits to rounding anyway.
/// * **What it refuses.** A QA constant of 0 (the column reads 0 under every `M`: nothing is
///   revealed), an unscaled constant below `10⁻⁷·s` (the check then misses changes of more than
///   one per cent), and scaled records inflated (σ, `p₂`, share noise) to where the check goes
///   blind.
/// * **Not 10⁻⁸** (ten times the check's `QA_RELATIVE` = 10⁻⁹): scaled basic-protocol records
///   of four answers and `p₂ = 503` already reach 2·10⁻⁸, every share-mode design 1.8·10⁻⁶, and no
///   constant changes either. Tightening the target needs the core to carry the QA entry at the
///   record's own scale instead of ±1; the floor would then be (Q2) on every design.
pub const QA_REVEALS: f64 = 1e-2;

/// The smallest set of records a cohort may hide a record among, whatever the survey asks for.
///
/// Why a floor beyond seed 000's `p₁ < n`: the collector holds each cohort's `A₂,k X₁,k`, whose
/// support is the orbit `Stab(1ₙ)·X₁,k`; when the column types are known (yes/no answers, small
/// integers) Lemma 3.3 of seed 000 puts every permutation of the rows in that support, and for
/// small cohorts often little else, so the collector may learn the cohort's *multiset* of records
/// though not who gave which. A cohort of 2 keeping `1ₙ` fixed is masked by the identity or the
/// swap: both records in the clear. Five is the smallest anonymity set we accept for a cohort; a
/// survey may ask for more (`min_cohort_size`). Devices refuse definitions below it and the
/// accepting services withhold cohorts below it, each from the signed definition
/// ([`cohort_floor`]).
pub const MIN_ANONYMITY_SET: usize = 5;

/// The fewest records for which a cohort with `p1` data columns may be masked and released, by
/// the policy alone: `max(p₁ + 1, MIN_ANONYMITY_SET)` (seed 000 needs `p₁ < n`;
/// [`MIN_ANONYMITY_SET`] says why the second term). A survey's own minimum may only raise it.
pub fn cohort_floor(p1: usize) -> usize {
    (p1 + 1).max(MIN_ANONYMITY_SET)
}

/// Whether a survey with `p1` data columns and cohorts of `cohort_size` may release a cohort of
/// as few as `min` records: from [`cohort_floor`]`(p₁)` to the cohort size, both included. The
/// one place this is decided and worded: the collector refuses a draft's minimum by it
/// (`crate::draft::plan_survey`), an accepting service the floor a registration makes it enforce
/// (`orthomask_server::wire::Registration::check`), and a device a signed definition's minimum
/// (`crate::floors::check`, in a participant's words).
///
/// # Errors
/// [`MinCohortSizeError`], one line naming the range allowed.
pub fn check_min_cohort_size(
    p1: usize,
    cohort_size: usize,
    min: usize,
) -> Result<(), MinCohortSizeError> {
    let floor = cohort_floor(p1);
    if (floor..=cohort_size).contains(&min) {
        Ok(())
    } else {
        Err(MinCohortSizeError {
            min,
            floor,
            cohort_size,
        })
    }
}

/// A minimum cohort outside `cohort_floor(p₁) … m` ([`check_min_cohort_size`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "min_cohort_size must be from {floor} (the larger of p1 + 1 and the policy's anonymity set) to \
     the cohort size {cohort_size}, got {min}"
)]
pub struct MinCohortSizeError {
    /// The minimum asked for.
    pub min: usize,
    /// The policy's floor, [`cohort_floor`]`(p₁)`.
    pub floor: usize,
    /// The cohort size `m`.
    pub cohort_size: usize,
}

/// The fewest records for which a cohort is released when the administrator does not say: the
/// policy's [`cohort_floor`], or the full cohort `m` with device-side DP, because σ_DP is
/// calibrated for the smallest released cohort and a full one keeps it small.
pub fn default_min_cohort_size(p1: usize, cohort_size: usize, with_dp: bool) -> usize {
    if with_dp {
        cohort_size
    } else {
        cohort_floor(p1)
    }
}

/// The expected significant digits a release may lose to masking (`log₁₀(E/u)` of
/// `orthomask_core::protocol::accuracy`): a coefficient computed from the release keeps all but
/// two of the digits the raw computation keeps (issue 11 §1, issue 21 §4). The plan adds noise
/// columns until the expectation meets it, within [`ACCURACY_RECORD_WIDTH`]; where condition
/// (3.5) puts it out of reach the plan says why (`crate::plan::Plan::accuracy_note`).
pub const TARGET_DIGITS_LOST: f64 = 2.0;

/// The widest padded record `p = p₁ + p₂` the plan builds to meet [`TARGET_DIGITS_LOST`]: a device
/// masks its record with a `p × p` Haar operator (`p²/2` normals), and 4 096 keeps that within
/// what the failure target alone already asks for cohorts of about 2 000 (`p₂ = 3 928`). Larger
/// designs the failure target needs are still built; only the extra columns for accuracy stop
/// here. With cohorts of at most [`MAX_COHORT`] the hand-over stays inside
/// [`MAX_HANDOVER_BYTES`] (`10 000 × 4 096` doubles ≈ 437 MB as base64).
pub const ACCURACY_RECORD_WIDTH: usize = 4096;

/// How many times an invitation is reopened after the cohort it joined was spoilt (someone in it
/// sent data that failed the QA check, and which upload it was cannot be told; issue 20 §8).
/// Each reopening lets the participant answer again in a new cohort, and gives the provider one
/// more masked view of that participant's answers (with fresh noise and a fresh key: seed 000's
/// guarantee covers each view alone, not their combination). Two bounds both: a participant who
/// keeps sending invalid data spoils at most three cohorts, and an honest one is seen at most
/// three times.
pub const MAX_REOPENINGS: usize = 2;

/// The probability with which an honest device's upload may be refused by the accepting
/// service's size check (`crate::intake_bounds`): one in a billion per upload. The bound grows
/// only like `√ln(1/α)`, so this costs almost nothing in what a dishonest device can slip
/// through, and a survey of a million participants refuses an honest upload with probability
/// 10⁻³ — and that participant's retry (fresh noise) passes.
pub const UPLOAD_FALSE_REFUSAL: f64 = 1e-9;

/// Largest cohort a survey may have: the services hold a cohort's `m × p` uploads in memory while
/// masking it, and `m ≤ 10 000` with `p ≤` [`MAX_P`] bounds that at 4 GB.
pub const MAX_COHORT: usize = 10_000;

/// Largest record length `p = p₁ + p₂` a service accepts (bounds memory per upload and per
/// cohort; the default noise columns of the largest cohort, 13 912, leave room for answers).
pub const MAX_P: usize = 50_000;

/// How long an upload credential stays valid after the collector hands it out with a definition
/// (seconds): long enough to fill in a survey over a day with interruptions, short enough that a
/// credential found later in a browser's history is useless. A reload of an invitation gets a
/// fresh expiry for the same nonce (`orthomask_survey::trust::UploadCredential::reissue`).
pub const UPLOAD_CREDENTIAL_LIFETIME_SECONDS: u64 = 24 * 60 * 60;

/// How far the clocks of two services may disagree (seconds) without a credential being judged
/// expired early: the collector dates a credential by its clock, the provider or a right-masking
/// service judges it by its own, and a service that is a few minutes ahead must not refuse the
/// last minutes of a credential. Devices never judge expiry: their clocks may be hours or days
/// off (issue 30 §3), and the credential they hold was issued for the definition they just
/// fetched; the services decide, by their clocks, with this allowance.
pub const CLOCK_SKEW_ALLOWANCE_SECONDS: u64 = 10 * 60;

/// Largest hand-over between two services, in bytes: the services' body limit for peer calls,
/// well inside SQLite's 1 GB limit on the outbox row that holds it until delivered.
pub const MAX_HANDOVER_BYTES: u64 = 512 * 1024 * 1024;

/// The size of the largest hand-over of a survey with cohorts of `m` records of length `p`: a
/// whole cohort's `m × p` matrix as base64 of little-endian doubles (`4·⌈8mp/3⌉` bytes), plus
/// a row identifier of at most 70 bytes per record (share mode) and 64 KiB of JSON around it.
pub fn handover_bytes(m: usize, p: usize) -> u64 {
    let doubles = 8 * (m as u64) * (p as u64);
    4 * doubles.div_ceil(3) + 70 * m as u64 + 64 * 1024
}

/// The wait before asking a busy or unreachable service again — the one rule of the web app's
/// uploads and place requests, the services' outbox and the load client: the larger of the
/// client's back-off and the service's `Retry-After`, stretched by up to half of itself by
/// `unit` (uniform in `[0, 1)`; clamped). Without the stretch every client of a burst told
/// "retry in 1 s" comes back in the same millisecond and meets a full service again.
pub fn retry_wait(
    backoff: std::time::Duration,
    retry_after: Option<std::time::Duration>,
    unit: f64,
) -> std::time::Duration {
    let wait = backoff.max(retry_after.unwrap_or_default());
    wait.mul_f64(1.0 + unit.clamp(0.0, 1.0) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cohort_floor(p₁) = max(p₁ + 1, MIN_ANONYMITY_SET)` by hand: p₁ = 3 gives max(4, 5) = 5,
    /// p₁ = 5 gives max(6, 5) = 6. A minimum is allowed from that floor to the cohort size, both
    /// included; below or above it is refused in one line naming the range.
    #[test]
    fn the_minimum_cohort_is_allowed_from_the_floor_to_the_cohort_size() {
        let refused = |min, floor, cohort_size| {
            Err(MinCohortSizeError {
                min,
                floor,
                cohort_size,
            })
        };
        // p₁ = 3, m = 20: the anonymity set binds (5 > p₁ + 1 = 4).
        assert_eq!(check_min_cohort_size(3, 20, 4), refused(4, 5, 20));
        assert_eq!(check_min_cohort_size(3, 20, 5), Ok(()));
        assert_eq!(check_min_cohort_size(3, 20, 20), Ok(()));
        assert_eq!(check_min_cohort_size(3, 20, 21), refused(21, 5, 20));
        // p₁ = 5: p₁ + 1 = 6 binds.
        assert_eq!(check_min_cohort_size(5, 20, 5), refused(5, 6, 20));
        assert_eq!(check_min_cohort_size(5, 20, 6), Ok(()));
        // Cohorts of m = 6 allow exactly one minimum; of m = 5, none.
        assert_eq!(check_min_cohort_size(5, 6, 6), Ok(()));
        assert_eq!(check_min_cohort_size(5, 5, 5), refused(5, 6, 5));
        let line = check_min_cohort_size(5, 20, 2).unwrap_err().to_string();
        assert_eq!(
            line,
            "min_cohort_size must be from 6 (the larger of p1 + 1 and the policy's anonymity \
             set) to the cohort size 20, got 2"
        );
    }

    /// 3 records of 2 doubles: 48 bytes → 64 base64 characters, 3 × 70 row ids, 64 KiB.
    #[test]
    fn handover_size_by_hand() {
        assert_eq!(handover_bytes(3, 2), 64 + 210 + 65_536);
        // 8 bytes pad to 3 base64 quads of 4 characters.
        assert_eq!(handover_bytes(1, 1) - 70 - 65_536, 12);
    }
}
