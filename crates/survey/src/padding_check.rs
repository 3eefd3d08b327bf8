//! The collector's check that a provider's batch is an orthogonal mask of honest records: the
//! padding columns must still have the law honest devices give them (issue 43, adversarial
//! review).
//!
//! # What it closes
//! QA checks that the provider's left mask `M` keeps `1ₙ` (`M·1ₙ = 1ₙ`, or the QA column would
//! not come back as `c·1ₙ`), and the cohort check that the statistics could be honest records'.
//! Neither sees whether `M` is **orthogonal**, which is what makes the release's `XᵀX` the raw
//! one: a provider that copies one masked row over another (`M` singular), drops a record in
//! favour of a mix of others, or stretches the cohort along some direction hands over a batch
//! that passes QA and — for columns without an exact identity — the cohort check, and the
//! release's `X₁ᵀMᵀMX₁` is not the raw `X₁ᵀX₁`. The padding betrays it: every honest device pads
//! with `x₂ ~ N(0, σ² I_{p₂})`, independent of everything, so for an orthogonal `A₂,k` drawn from
//! the provider's key (independent of the padding) the collector's padding block
//! `Y₂ = A₂,k X₂` (`n × p₂`) has independent `N(0, σ²)` entries — an orthogonal matrix maps a
//! matrix of independent standard normal columns to one with the same law. For any other `M` it is
//! `M X₂`, whose columns are `N(0, σ² M Mᵀ)`.
//!
//! # The two conditions, and why a false refusal has probability at most α
//! With `t = ln(3/α)` and `s = √(2 ln(3/α))` (three events, a union bound):
//!
//! 1. **The padding's total power.** `‖Y₂‖_F²/σ² ~ χ²_{n p₂}`, so by Laurent & Massart (2000,
//!    Lemma 1; `intake_bounds` states it) it lies in `[D_k, U_k]`, `k = n p₂`, except with
//!    probability at most `2e^{−t} = 2α/3`. A provider that scales the batch up or down fails it.
//! 2. **No direction without padding.** `λ_min(Y₂Y₂ᵀ) = σ² s_min(G)²` for `G` `n × p₂` standard
//!    Gaussian, and `p₂ > n` in every design the planner makes (seed 000 §2). Davidson & Szarek
//!    (2001; Vershynin 2012, Corollary 5.35 — the same bound `orthomask_core::protocol::design`
//!    chooses `p₂` by): `Pr[s_min(G) ≤ √p₂ − √n − s] ≤ e^{−s²/2} = α/3`. So an honest cohort has
//!    `λ_min(Y₂Y₂ᵀ) ≥ σ²(√p₂ − √n − s)²`. A singular `M` — a copied row, a dropped record — gives
//!    `λ_min = 0`, and so does a participant who sent zero padding. When `√p₂ − √n − s ≤ 0` the
//!    condition says nothing and is reported as not applicable (no design the planner makes: its
//!    margin `√p₂ − √n` is at least `√(2 ln(1/target))/(1 − √(1 − δ))` ≈ 18 for the policy's
//!    target and δ, against `s` ≈ 6.7 at α = 10⁻⁹).
//!
//! # Computed without unmasking the padding
//! `B_k` is orthogonal, so with `Z` the provider's batch and `L` the leading `p₁` columns the
//! collector recovers anyway, `Z Zᵀ = Y Yᵀ = L Lᵀ + Y₂Y₂ᵀ`: `‖Y₂‖_F² = ‖Z‖_F² − ‖L‖_F²` and
//! `λ_min(Y₂Y₂ᵀ) = λ_min(Z Zᵀ − L Lᵀ)` (`orthomask_core::linalg::lanczos::
//! smallest_gram_difference_eigenvalue`), `O(n p)` a product — where removing `B_k` from all `p`
//! columns would cost `O(n p²)` for the reflector masks. These are identities for whatever batch
//! the provider sends: a batch that is not `M X B_k` for any `M` is still judged by its own
//! padding block.
//!
//! # What it does not close
//! An `M` close enough to orthogonal passes: with `s_min(G) ≈ √p₂ − √n` the provider may shrink
//! one direction by a factor down to about `(√p₂ − √n − s)/(√p₂ − √n)` (0.63 for the planner's
//! designs) and stretch the cohort's power by the χ² spread (`≈ 2√(t/(n p₂))` relative), blind:
//! it does not know `X₁` (its view `X_kB_k` gives `X_kX_kᵀ`, dominated by the padding). The
//! cohort check still applies to what passes. Share mode has no padding at the collector (it
//! receives `A X_q` only) and is not covered: `docs/threat-model.md` states it.

use crate::intake_bounds::{chi2_lower, chi2_upper};
use nalgebra::DMatrix;
use orthomask_core::linalg::lanczos::smallest_gram_difference_eigenvalue;
use orthomask_core::protocol::tm2::{RightMaskKind, Tm2Design};

/// Rounding allowance of the two statistics, in units of `ε_mach·n·p·‖Z‖_F²`: each is a sum of
/// at most `n·p` products of entries bounded by the batch's norm (and the Lanczos guard adds no
/// more than the products' own rounding level). Far below the honest spread of either condition
/// (`‖Z‖_F²·2√(t/(n p₂))` and `σ²(√p₂ − √n − s)²`) for every design the planner makes.
pub const ROUNDING_UNITS: f64 = 4.0;

/// Which condition a batch fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddingCondition {
    /// `‖Y₂‖_F²` below what honest padding gives.
    TooLittlePower,
    /// `‖Y₂‖_F²` above what honest padding gives.
    TooMuchPower,
    /// `λ_min(Y₂Y₂ᵀ)` below the Davidson–Szarek floor: some direction of the cohort carries
    /// (almost) no padding — a row copied or dropped, or zero padding.
    DirectionWithoutPadding,
}

impl std::fmt::Display for PaddingCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TooLittlePower => "the padding columns carry less noise than honest devices send",
            Self::TooMuchPower => "the padding columns carry more noise than honest devices send",
            Self::DirectionWithoutPadding => {
                "some combination of the rows carries no padding noise, as when a row is copied, \
                 dropped or sent without padding"
            }
        })
    }
}

/// Why a batch is refused, one line each.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PaddingRefusal {
    /// The batch or its leading columns do not have the design's shape, or hold a non-number.
    #[error("the batch is not {expected}: {found}")]
    Shape {
        /// What was expected.
        expected: String,
        /// What came.
        found: String,
    },
    /// A condition fails.
    #[error(
        "{condition}: {value:.6e} against an honest range of [{low:.6e}, {high:.6e}] (σ² units \
         of the padding); the batch is not an orthogonal mask of honest records"
    )]
    Violated {
        /// Which condition.
        condition: PaddingCondition,
        /// The statistic (`‖Y₂‖_F²` or the guarded `λ_min(Y₂Y₂ᵀ)`), in the padding's squared
        /// units on the device's scale.
        value: f64,
        /// The honest range, widened by the rounding allowance.
        low: f64,
        /// Its upper end (infinite for the eigenvalue floor).
        high: f64,
    },
}

impl PaddingRefusal {
    /// The refusal without any number derived from the cohort: what may be stored about a
    /// spoilt cohort.
    pub fn public_note(&self) -> String {
        match self {
            Self::Violated { condition, .. } => {
                format!("{condition}; the batch is not an orthogonal mask of honest records")
            }
            Self::Shape { .. } => self.to_string(),
        }
    }
}

/// What an honest batch passed, for the collector's log.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaddingReport {
    /// `‖Y₂‖_F²/(σ² n p₂)`: 1 on average for honest padding.
    pub power_ratio: f64,
    /// `λ_min(Y₂Y₂ᵀ)` over its floor, or `None` when the floor is not applicable.
    pub floor_ratio: Option<f64>,
}

/// The check for one survey's design, at a false-refusal rate.
#[derive(Clone, Debug, PartialEq)]
pub struct PaddingCheck {
    p1: usize,
    p2: usize,
    sigma: f64,
    /// `ln(3/α)`.
    t: f64,
}

impl PaddingCheck {
    /// The check of `design` (basic protocol) refusing an honest cohort with probability at most
    /// `false_refusal` (the policy's `UPLOAD_FALSE_REFUSAL`, per cohort). `None` for a design
    /// without padding (`p₂ = 0` or `σ = 0`: nothing to check), one whose right mask is not
    /// orthogonal (seed 003's first method: the identities of the module documentation need
    /// `B_k Bₖᵀ = I`), or a rate outside `(0, 1)`.
    pub fn new(design: &Tm2Design, false_refusal: f64) -> Option<Self> {
        let usable = design.p2() > 0
            && design.right_mask_kind() == RightMaskKind::Haar
            && design.sigma() > 0.0
            && design.sigma().is_finite()
            && false_refusal > 0.0
            && false_refusal < 1.0;
        usable.then(|| Self {
            p1: design.p1(),
            p2: design.p2(),
            sigma: design.sigma(),
            t: (3.0 / false_refusal).ln(),
        })
    }

    /// The honest range of `‖Y₂‖_F²` for a cohort of `n` (before the rounding allowance).
    pub fn power_range(&self, n: usize) -> (f64, f64) {
        let k = (n * self.p2) as f64;
        let s2 = self.sigma * self.sigma;
        (s2 * chi2_lower(k, self.t), s2 * chi2_upper(k, self.t))
    }

    /// The floor of `λ_min(Y₂Y₂ᵀ)` for a cohort of `n`, `σ²(√p₂ − √n − s)²`, or `None` when
    /// `√p₂ − √n − s ≤ 0` (module documentation).
    pub fn eigenvalue_floor(&self, n: usize) -> Option<f64> {
        let s = (2.0 * self.t).sqrt();
        let root = (self.p2 as f64).sqrt() - (n as f64).sqrt() - s;
        (root > 0.0).then_some(self.sigma * self.sigma * root * root)
    }

    /// Check the provider's `batch` (`n × p`, as received) against the `leading` columns the
    /// collector recovered from it (`n × p₁`, `B_k` removed, on the device's scale:
    /// `orthomask_core::protocol::tm2::DataCollector::unmask_leading`).
    ///
    /// # Errors
    /// [`PaddingRefusal::Shape`] for shapes other than the design's or non-finite entries;
    /// [`PaddingRefusal::Violated`] naming the first condition that fails.
    pub fn check(
        &self,
        batch: &DMatrix<f64>,
        leading: &DMatrix<f64>,
    ) -> Result<PaddingReport, PaddingRefusal> {
        let n = batch.nrows();
        let p = self.p1 + self.p2;
        if n == 0 || batch.ncols() != p || leading.shape() != (n, self.p1) {
            return Err(PaddingRefusal::Shape {
                expected: format!("n × {p} with n × {} leading columns, n ≥ 1", self.p1),
                found: format!(
                    "{} × {} with {} × {} leading columns",
                    n,
                    batch.ncols(),
                    leading.nrows(),
                    leading.ncols()
                ),
            });
        }
        if batch.iter().chain(leading.iter()).any(|v| !v.is_finite()) {
            return Err(PaddingRefusal::Shape {
                expected: "finite numbers".into(),
                found: "a NaN or infinity".into(),
            });
        }
        let total = batch.norm_squared();
        let rounding = ROUNDING_UNITS * f64::EPSILON * (n * p) as f64 * total;
        let power = total - leading.norm_squared();
        let (low, high) = self.power_range(n);
        let (low, high) = ((low - rounding).max(0.0), high + rounding);
        let violated = |condition, value, low, high| {
            Err(PaddingRefusal::Violated {
                condition,
                value,
                low,
                high,
            })
        };
        if power < low {
            return violated(PaddingCondition::TooLittlePower, power, low, high);
        }
        if power > high {
            return violated(PaddingCondition::TooMuchPower, power, low, high);
        }
        let floor_ratio = match self.eigenvalue_floor(n) {
            None => None,
            Some(floor) => {
                let floor = floor - rounding;
                let Some(lambda) = smallest_gram_difference_eigenvalue(batch, leading, Some(floor))
                else {
                    return Err(PaddingRefusal::Shape {
                        expected: "a batch whose padding block has a smallest eigenvalue".into(),
                        found: "none could be computed".into(),
                    });
                };
                if lambda.lower < floor {
                    return violated(
                        PaddingCondition::DirectionWithoutPadding,
                        lambda.lower,
                        floor,
                        f64::INFINITY,
                    );
                }
                Some(lambda.lower / floor)
            }
        };
        Ok(PaddingReport {
            power_ratio: power / (self.sigma * self.sigma * (n * self.p2) as f64),
            floor_ratio,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::UPLOAD_FALSE_REFUSAL;
    use crate::tolerance::HAND_COMPUTED;
    use orthomask_core::key::Key;
    use orthomask_core::protocol::tm2::{DataCollector, MaskingServiceProvider, Participant};
    use orthomask_core::random::UnitUniform;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    /// The planner's design for `answers` number questions in cohorts of `m` (QA column, scaled
    /// answers, the Appendix C padding).
    fn planned(answers: usize, m: usize) -> Tm2Design {
        let questions: Vec<serde_json::Value> = (0..answers)
            .map(|j| {
                serde_json::json!({"id": format!("x{j}"), "label": "Value", "kind": "number",
                    "min": 0, "max": 100})
            })
            .collect();
        let draft: crate::draft::SurveyDraft = serde_json::from_value(serde_json::json!({
            "id": "padding", "title": "Padding", "consent": "Test.", "questions": questions,
            "cohort_size": m, "invitations": true, "share_mode": false,
        }))
        .unwrap();
        let planned = crate::draft::plan_survey(
            &draft,
            crate::draft::Endpoints {
                provider: "https://msp.example",
                right_services: &[],
            },
        )
        .unwrap();
        planned.template.design().unwrap()
    }

    /// An honest cohort of `n` through the protocol: devices pad and mask with `B_0`, the
    /// provider applies its `A₂,0`. The batch and the parties that made it.
    fn honest_batch(design: &Tm2Design, n: usize, seed: u64) -> (DMatrix<f64>, DataCollector) {
        let collector = DataCollector::new(Key::from_bytes([1; 32]), design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(Key::from_bytes([2; 32]), design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(design, b.as_ref()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let uploads: Vec<f64> = (0..n)
            .flat_map(|_| {
                let answers: Vec<f64> = (0..design.answers())
                    .map(|_| (rng.next_unit() * 100.0).round())
                    .collect();
                device.mask_record(&answers, &mut rng).unwrap()
            })
            .collect();
        let batch = DMatrix::from_row_slice(n, design.p(), &uploads);
        (provider.mask_cohort(0, &batch).unwrap(), collector)
    }

    fn judged(
        check: &PaddingCheck,
        collector: &DataCollector,
        batch: &DMatrix<f64>,
    ) -> Result<PaddingReport, PaddingRefusal> {
        let leading = collector.unmask_leading(0, batch).unwrap();
        check.check(batch, &leading)
    }

    fn condition(result: Result<PaddingReport, PaddingRefusal>) -> PaddingCondition {
        match result {
            Err(PaddingRefusal::Violated { condition, .. }) => condition,
            other => panic!("expected a violated condition, got {other:?}"),
        }
    }

    /// By hand: `p₂ = 400`, `σ = 0.5`, `n = 16` and `α = 3e⁻⁸` (so `t = 8`, `s = 4`):
    /// `k = 6 400`, `2√(kt) = 452.548…`, the power lies in
    /// `0.25·[6 400 − 452.548, 6 400 + 452.548 + 16] = [1 486.863, 1 717.137]` and the floor is
    /// `0.25·(20 − 4 − 4)² = 36`. With `n = 144` the floor `(20 − 12 − 4)² σ² = 4`; with
    /// `n = 256` it is not applicable (`20 − 16 − 4 = 0`).
    #[test]
    fn the_bounds_by_hand() {
        let design = Tm2Design::modified(3, 400, 0.5).unwrap();
        let check = PaddingCheck::new(&design, 3.0 * (-8.0f64).exp()).unwrap();
        let (low, high) = check.power_range(16);
        let root = 2.0 * (6400.0f64 * 8.0).sqrt();
        assert!((low - 0.25 * (6400.0 - root)).abs() < HAND_COMPUTED * 1e4);
        assert!((high - 0.25 * (6400.0 + root + 16.0)).abs() < HAND_COMPUTED * 1e4);
        assert!((low - 1486.863).abs() < 1e-3 && (high - 1717.137).abs() < 1e-3);
        assert!((check.eigenvalue_floor(16).unwrap() - 36.0).abs() < HAND_COMPUTED * 1e2);
        assert!((check.eigenvalue_floor(144).unwrap() - 4.0).abs() < HAND_COMPUTED * 1e2);
        assert_eq!(check.eigenvalue_floor(256), None);
        // No padding, a mask that is not orthogonal, or a rate outside (0, 1): no check.
        assert!(PaddingCheck::new(&Tm2Design::modified(3, 0, 0.0).unwrap(), 1e-9).is_none());
        assert!(PaddingCheck::new(&Tm2Design::first_method(3).unwrap(), 1e-9).is_none());
        assert!(PaddingCheck::new(&design, 0.0).is_none());
        assert!(PaddingCheck::new(&design, 1.0).is_none());
    }

    /// The planner's designs keep the floor applicable at the policy's rate for every cohort
    /// size it allows — the module documentation's margin of about 18 against `s` ≈ 6.7.
    #[test]
    fn every_planned_design_has_an_eigenvalue_floor() {
        for (answers, m) in [(1, 12), (4, 12), (20, 100), (40, 2000)] {
            let design = planned(answers, m);
            let check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();
            for n in [2, m / 2, m] {
                assert!(
                    check.eigenvalue_floor(n).is_some_and(|f| f > 0.0),
                    "{answers} answers, cohorts of {m}, n = {n}"
                );
            }
        }
    }

    /// Honest cohorts through the protocol pass, on the dense path (n = 12) and the Lanczos path
    /// (n = 300), with the padding's power at about its mean and the eigenvalue above its floor.
    #[test]
    fn honest_cohorts_pass() {
        for (answers, m, seeds) in [(4, 12, 0..20u64), (3, 300, 0..1)] {
            let design = planned(answers, m);
            let check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();
            for seed in seeds {
                let (batch, collector) = honest_batch(&design, m, seed);
                let report = judged(&check, &collector, &batch)
                    .unwrap_or_else(|e| panic!("n = {m}, seed {seed}: {e}"));
                assert!((report.power_ratio - 1.0).abs() < 0.1, "{report:?}");
                assert!(report.floor_ratio.unwrap() > 1.0, "{report:?}");
            }
        }
    }

    /// The law behind condition 1, checked where it can fail: at a false-refusal rate of 0.3
    /// (`t` = ln 10) over 200 honest cohorts of 12, no more are refused than the binomial's five
    /// standard deviations above 0.3·200 allow (the union bound is conservative, so in fact far
    /// fewer), and the mean power ratio is 1 within five of its standard errors
    /// (`√(2/(n p₂))/√200` for a χ² of `n p₂` degrees of freedom).
    #[test]
    fn honest_cohorts_are_refused_at_most_at_the_stated_rate() {
        const RATE_SIGMAS: f64 = 5.0;
        let design = planned(2, 12);
        let rate = 0.3;
        let check = PaddingCheck::new(&design, rate).unwrap();
        let runs = 200;
        let mut refused = 0;
        let mut ratios = Vec::new();
        for seed in 0..runs {
            let (batch, collector) = honest_batch(&design, 12, 1_000 + seed);
            let leading = collector.unmask_leading(0, &batch).unwrap();
            let power = batch.norm_squared() - leading.norm_squared();
            ratios.push(power / (design.sigma().powi(2) * (12 * design.p2()) as f64));
            if check.check(&batch, &leading).is_err() {
                refused += 1;
            }
        }
        let runs = runs as f64;
        let allowed = rate * runs + RATE_SIGMAS * (rate * (1.0 - rate) * runs).sqrt();
        assert!(f64::from(refused) <= allowed, "{refused} of {runs}");
        let mean = ratios.iter().sum::<f64>() / runs;
        let standard_error = (2.0 / (12 * design.p2()) as f64).sqrt() / runs.sqrt();
        assert!(
            (mean - 1.0).abs() < RATE_SIGMAS * standard_error,
            "mean power ratio {mean}, standard error {standard_error}"
        );
    }

    /// What a dishonest provider does to the batch, and a participant who sent no padding: each
    /// is refused by the condition that sees it, on both paths.
    #[test]
    fn a_batch_that_is_not_an_orthogonal_mask_is_refused() {
        for (answers, m) in [(4, 12), (3, 300)] {
            let design = planned(answers, m);
            let check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();
            let (batch, collector) = honest_batch(&design, m, 7);
            // Row 1 copied over row 0: `M` singular.
            let mut copied = batch.clone();
            let row = copied.row(1).clone_owned();
            copied.set_row(0, &row);
            assert_eq!(
                condition(judged(&check, &collector, &copied)),
                PaddingCondition::DirectionWithoutPadding,
                "copy, n = {m}"
            );
            // Record 0 replaced by the mean of records 1 and 2 (rows of the batch sum to the
            // same QA entry, so QA would pass): singular too.
            let mut mixed = batch.clone();
            let mean = (batch.row(1) + batch.row(2)) * 0.5;
            mixed.set_row(0, &mean);
            assert_eq!(
                condition(judged(&check, &collector, &mixed)),
                PaddingCondition::DirectionWithoutPadding,
                "mix, n = {m}"
            );
            // The whole batch scaled up or down.
            for (factor, expected) in [
                (1.2, PaddingCondition::TooMuchPower),
                (0.8, PaddingCondition::TooLittlePower),
            ] {
                assert_eq!(
                    condition(judged(&check, &collector, &(&batch * factor))),
                    expected,
                    "× {factor}, n = {m}"
                );
            }
        }
        // A device that sent zero padding (it holds `B_k`, so it can): no padding in one row.
        let design = planned(4, 12);
        let check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();
        let collector = DataCollector::new(Key::from_bytes([1; 32]), design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(Key::from_bytes([2; 32]), design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(&design, b.as_ref()).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut rows: Vec<Vec<f64>> = (0..12)
            .map(|_| device.mask_record(&[50.0; 4], &mut rng).unwrap())
            .collect();
        let padded = device.pad(&[50.0; 4], &mut rng).unwrap();
        let mut unpadded = padded.clone();
        unpadded[design.p1()..].iter_mut().for_each(|v| *v = 0.0);
        rows[0] = b.mask_row(&unpadded).unwrap();
        let uploads = DMatrix::from_row_slice(12, design.p(), &rows.concat());
        let batch = provider.mask_cohort(0, &uploads).unwrap();
        assert_eq!(
            condition(judged(&check, &collector, &batch)),
            PaddingCondition::DirectionWithoutPadding
        );
    }

    /// Shapes other than the design's and non-numbers are refused with one line; the public note
    /// of a violation carries no number of the cohort's.
    #[test]
    fn shapes_non_numbers_and_the_public_note() {
        let design = planned(4, 12);
        let check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();
        let (batch, collector) = honest_batch(&design, 12, 1);
        let leading = collector.unmask_leading(0, &batch).unwrap();
        let narrow = batch.columns(0, design.p() - 1).into_owned();
        assert!(matches!(
            check.check(&narrow, &leading),
            Err(PaddingRefusal::Shape { .. })
        ));
        assert!(matches!(
            check.check(&batch, &leading.rows(0, 11).into_owned()),
            Err(PaddingRefusal::Shape { .. })
        ));
        let mut nan = batch.clone();
        nan[(3, 3)] = f64::NAN;
        let refusal = check.check(&nan, &leading).unwrap_err();
        assert!(!refusal.to_string().contains('\n'));
        let scaled = &batch * 1.2;
        let refusal = judged(&check, &collector, &scaled).unwrap_err();
        let note = refusal.public_note();
        assert!(
            note.contains("more noise than honest devices send"),
            "{note}"
        );
        assert!(!note.chars().any(|c| c.is_ascii_digit()), "{note}");
        assert!(refusal.to_string().contains("honest range"), "{refusal}");
    }
}
