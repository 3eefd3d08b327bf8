//! How large an honest upload can be: the check an accepting service runs on every upload before
//! it stores anything (issue 20 §8).
//!
//! # Why the provider may look at lengths
//! An orthogonal right mask keeps every row's length: `‖x·B_k‖ = ‖x‖`. The provider learns
//! nothing from `‖x·B_k‖` that its view `X_k B_k` did not already hold (the row Gram matrix
//! `X_kX_kᵀ` has the squared lengths on its diagonal), so it may refuse an upload whose length
//! no honest device produces. A right-masking service of share mode sees its raw share, so it
//! checks each part of the share on its own.
//!
//! # The bound (basic protocol)
//! A device pads its answers `a` (scaled to `[−1, 1]` by the declared ranges, or in their own
//! units up to `x_max`; `A` of them), DP noise `e ~ N(0, σ_dp² I_A)` if any, the QA entry `q`
//! and the padding `x₂ ~ N(0, σ² I_{p₂})` into `x = (a + e, q, x₂)`, so
//!
//! `‖x‖² = ‖a + e‖² + q² + ‖x₂‖²`, with `‖a‖ ≤ √A·x_max`.
//!
//! For `Z ~ χ²_k` and any `t > 0`, Laurent & Massart (2000, *Ann. Statist.* 28(5), Lemma 1):
//!
//! `Pr[Z ≥ k + 2√(kt) + 2t] ≤ e^{−t}`, `Pr[Z ≤ k − 2√(kt)] ≤ e^{−t}`.
//!
//! With `U_k = k + 2√(kt) + 2t`, `D_k = max(0, k − 2√(kt))` and `t = ln(3/α)` (three events,
//! union bound), an honest record satisfies, with probability at least `1 − α`,
//!
//! `q² + σ² D_{p₂} ≤ ‖x‖² ≤ (√A·x_max + σ_dp √U_A)² + q² + σ² U_{p₂}`,
//!
//! using `‖a + e‖ ≤ ‖a‖ + ‖e‖`. The policy's α is [`UPLOAD_FALSE_REFUSAL`]. Both ends are
//! widened by [`ROUNDING_SLACK`] for the rounding of `x·B_k` on the device.
//!
//! # The bound (share mode, each share)
//! A device splits `x` into `K` shares (`orthomask_core::protocol::collusion`):
//! `xⁱ = ((a + e)/K + Nᵢ, q/K, x₂/K)` with `Nᵢ ~ N(0, τ²(1 − 1/K) I_A)`. A service checks
//! * the QA entry: exactly `q/K` (the device computes it by the same division), so a participant
//!   cannot spoil the QA check of the whole cohort through a share (the lie is refused here,
//!   before it is stored);
//! * the padding: `(σ/K)² D_{p₂} ≤ ‖x₂/K‖² ≤ (σ/K)² U_{p₂}`;
//! * the answers: `‖(a + e)/K + Nᵢ‖ ≤ (√A·x_max + σ_dp √U_A)/K + τ√(1 − 1/K)·√U_A`;
//! * each answer coordinate on its own (issue 43 §5: a lie put into one answer fits inside the
//!   answers' length, which spreads its allowance over all `A`): coordinate `j` is
//!   `(a_j + e_j)/K + N_ij`, with `(e_j/K + N_ij) ~ N(0, s²)`, `s² = σ_dp²/K² + τ²(1 − 1/K)`
//!   (independent normals), and `|a_j| ≤ x_max`; the Chernoff bound `Pr[|Z| > z] ≤ 2e^{−z²/2}`
//!   for a standard normal and a union over the `A` coordinates give
//!   `|coordinate| ≤ x_max/K + s·√(2 ln(2A/α′))` except with probability `α′`,
//!
//! with `t = ln(5/α)` for the four χ² events and `α′ = α/5` for the coordinates (five events).
//!
//! # What slips through
//! A device that knows the bound can still send an upload inside it: answers out of their
//! declared range by less than the slack of the padding's norm (basic protocol), or by up to
//! a few share-noise standard deviations (share mode). Such a record is a lie about the
//! answers, as an in-range lie is; `docs/threat-model.md` states the sizes.

use crate::definition::{SurveyDefinition, SurveyError};
use crate::plan::ShareSplit;
use crate::policy::UPLOAD_FALSE_REFUSAL;
use orthomask_core::protocol::tm2::{DeviceDp, Tm2Design};

/// The events a share's check may fail on an honest share, each given `α/5` (module
/// documentation): the QA entry is exact, so the padding's two ends, the answers' length, and
/// the answer coordinates.
const SHARE_EVENTS: f64 = 5.0;

/// Relative widening of every bound for the rounding of the device's arithmetic: a Householder
/// stream over `p ≤ 50 000` coordinates changes a length by a few `p·u ≈ 10⁻¹¹` relative, and
/// 10⁻⁹ leaves two orders to spare while moving the bounds by nothing a dishonest device could
/// use.
pub const ROUNDING_SLACK: f64 = 1e-9;

/// Why an upload is refused before it is stored; one line each, naming what and by how much.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OutOfBounds {
    /// Longer than any honest record of the survey.
    #[error(
        "the upload's length {found:.6e} exceeds the {bound:.6e} an honest record of this survey \
         reaches (out-of-range answers or garbage); it was refused and nothing was stored"
    )]
    TooLong {
        /// The upload's Euclidean length.
        found: f64,
        /// The largest honest length.
        bound: f64,
    },
    /// Shorter than any honest record (the padding is missing).
    #[error(
        "the upload's length {found:.6e} is below the {bound:.6e} of any honest record of this \
         survey (its noise padding is missing); it was refused and nothing was stored"
    )]
    TooShort {
        /// The upload's Euclidean length.
        found: f64,
        /// The smallest honest length.
        bound: f64,
    },
    /// A share whose QA entry is not the survey's.
    #[error(
        "the share's QA entry (value {index}) is {found}, not {expected}; it was refused and \
         nothing was stored"
    )]
    QaEntry {
        /// Its position.
        index: usize,
        /// What the share holds.
        found: f64,
        /// `q/K`.
        expected: f64,
    },
    /// A share whose padding or answers are outside what an honest share holds.
    #[error(
        "the share's {part} has length {found:.6e}, outside the {low:.6e} to {high:.6e} of an \
         honest share; it was refused and nothing was stored"
    )]
    SharePart {
        /// `"padding"` or `"answers"`.
        part: &'static str,
        /// Its Euclidean length.
        found: f64,
        /// Smallest honest length.
        low: f64,
        /// Largest honest length.
        high: f64,
    },
    /// A share whose one answer coordinate is larger than an honest share's can be.
    #[error(
        "the share's answer value {index} is {found:.6e}, beyond the {high:.6e} of an honest \
         share; it was refused and nothing was stored"
    )]
    ShareCoordinate {
        /// Its position (0-based, among the answers).
        index: usize,
        /// What the share holds.
        found: f64,
        /// The largest honest magnitude.
        high: f64,
    },
    /// Not the survey's record length.
    #[error("the upload has {found} values, the survey's records have {expected}")]
    Length {
        /// Values sent.
        found: usize,
        /// `p`.
        expected: usize,
    },
}

/// The bounds an accepting service holds one survey's uploads to (module documentation).
#[derive(Clone, Debug, PartialEq)]
pub enum UploadBounds {
    /// The basic protocol: the length of `x·B_k`.
    Masked {
        /// `p`.
        len: usize,
        /// Smallest honest length.
        low: f64,
        /// Largest honest length.
        high: f64,
    },
    /// Share mode: each part of a raw share.
    Share {
        /// Answer coordinates `A` (they come first).
        answers: usize,
        /// Position of the QA entry, and `q/K`.
        qa: Option<(usize, f64)>,
        /// `p`.
        len: usize,
        /// Largest honest length of the answer part.
        answers_high: f64,
        /// Largest honest magnitude of one answer coordinate.
        coordinate_high: f64,
        /// Smallest and largest honest length of the padding.
        padding: (f64, f64),
    },
}

/// `k + 2√(kt) + 2t` (Laurent & Massart, upper).
pub(crate) fn chi2_upper(k: f64, t: f64) -> f64 {
    k + 2.0 * (k * t).sqrt() + 2.0 * t
}

/// `max(0, k − 2√(kt))` (Laurent & Massart, lower).
pub(crate) fn chi2_lower(k: f64, t: f64) -> f64 {
    (k - 2.0 * (k * t).sqrt()).max(0.0)
}

impl UploadBounds {
    /// The bounds for uploads of `definition` (basic protocol or share mode by its masking), at
    /// the policy's false-refusal rate [`UPLOAD_FALSE_REFUSAL`].
    ///
    /// # Errors
    /// [`SurveyError`] when the definition's design does not build.
    pub fn of(definition: &SurveyDefinition) -> Result<Self, SurveyError> {
        Self::at_rate(definition, UPLOAD_FALSE_REFUSAL)
    }

    /// The bounds at false-refusal rate `alpha` (for tests of the law; services use [`of`]).
    ///
    /// [`of`]: Self::of
    ///
    /// # Errors
    /// As [`of`](Self::of).
    pub fn at_rate(definition: &SurveyDefinition, alpha: f64) -> Result<Self, SurveyError> {
        let design = definition.design()?;
        let qa = design.record_qa_entry();
        Ok(Self::of_design(
            &design,
            definition.record_answers_max(),
            definition.share_split(),
            qa,
            alpha,
        ))
    }

    /// The bounds for records of `design` whose answers are at most `x_max` in magnitude as the
    /// record carries them (before DP noise: 1 when scaled), split as `share` says (`None`: the
    /// basic protocol), with the QA entry `q` (the design's own, `Tm2Design::record_qa_entry`,
    /// for an upload check; 0 for the length of the rest of the record, `crate::floors`' QA
    /// floor), at false-refusal rate `alpha` (module documentation).
    pub fn of_design(
        design: &Tm2Design,
        x_max: f64,
        share: Option<ShareSplit>,
        q: Option<f64>,
        alpha: f64,
    ) -> Self {
        let a = design.answers() as f64;
        let p2 = design.p2() as f64;
        let sigma = design.sigma();
        let sigma_dp = design.dp().map_or(0.0, DeviceDp::sigma);
        let len = design.p();
        match share {
            None => {
                let t = (3.0 / alpha).ln();
                let answers = a.sqrt() * x_max + sigma_dp * chi2_upper(a, t).sqrt();
                let q2 = q.map_or(0.0, |q| q * q);
                let high2 = answers * answers + q2 + sigma * sigma * chi2_upper(p2, t);
                let low2 = q2 + sigma * sigma * chi2_lower(p2, t);
                Self::Masked {
                    len,
                    low: (low2 * (1.0 - ROUNDING_SLACK)).sqrt(),
                    high: (high2 * (1.0 + ROUNDING_SLACK)).sqrt(),
                }
            }
            Some(share) => {
                let t = (SHARE_EVENTS / alpha).ln();
                let k = share.services as f64;
                let tau = share.share_sigma;
                let answers_high = (a.sqrt() * x_max + sigma_dp * chi2_upper(a, t).sqrt()) / k
                    + tau * (1.0 - 1.0 / k).sqrt() * chi2_upper(a, t).sqrt();
                let spread = (sigma_dp * sigma_dp / (k * k) + tau * tau * (1.0 - 1.0 / k)).sqrt();
                let z = (2.0 * (2.0 * a.max(1.0) * SHARE_EVENTS / alpha).ln()).sqrt();
                let coordinate_high = x_max / k + spread * z;
                let pad = sigma / k;
                Self::Share {
                    answers: design.answers(),
                    qa: q.map(|q| (design.answers(), q / k)),
                    len,
                    answers_high: answers_high * (1.0 + ROUNDING_SLACK),
                    coordinate_high: coordinate_high * (1.0 + ROUNDING_SLACK),
                    padding: (
                        pad * chi2_lower(p2, t).sqrt() * (1.0 - ROUNDING_SLACK),
                        pad * chi2_upper(p2, t).sqrt() * (1.0 + ROUNDING_SLACK),
                    ),
                }
            }
        }
    }

    /// The longest upload the check lets through: `high` in the basic protocol; in share mode
    /// the length of a share whose every part is at its largest,
    /// `√(answers_high² + (q/K)² + padding_high²)`. What bounds the rounding scale a service may
    /// report for the rows it took (`largest_part_scale`).
    pub fn longest_upload(&self) -> f64 {
        match self {
            Self::Masked { high, .. } => *high,
            Self::Share {
                qa,
                answers_high,
                padding,
                ..
            } => {
                let q = qa.map_or(0.0, |(_, q)| q);
                (answers_high * answers_high + q * q + padding.1 * padding.1).sqrt()
            }
        }
    }

    /// The largest rounding scale an honest right-masking service can report for a block of
    /// `rows` uploads this check let through: the largest row norm of `A Xⁱ Bᵢ`, which is at most
    /// `‖Xⁱ‖_F ≤ √rows · longest_upload` (`A` and `Bᵢ` are orthogonal), widened by
    /// [`ROUNDING_SLACK`]. The collector widens its QA tolerance by the scales the services
    /// report, so one it cannot bound would let a forged part pass QA.
    pub fn largest_part_scale(&self, rows: usize) -> f64 {
        (rows as f64).sqrt() * self.longest_upload() * (1.0 + ROUNDING_SLACK)
    }

    /// Check one upload's values (already known to be finite).
    ///
    /// # Errors
    /// The first [`OutOfBounds`].
    pub fn check(&self, values: &[f64]) -> Result<(), OutOfBounds> {
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        match self {
            Self::Masked { len, low, high } => {
                if values.len() != *len {
                    return Err(OutOfBounds::Length {
                        found: values.len(),
                        expected: *len,
                    });
                }
                let found = norm(values);
                if found > *high {
                    return Err(OutOfBounds::TooLong {
                        found,
                        bound: *high,
                    });
                }
                if found < *low {
                    return Err(OutOfBounds::TooShort { found, bound: *low });
                }
                Ok(())
            }
            Self::Share {
                answers,
                qa,
                len,
                answers_high,
                coordinate_high,
                padding,
            } => {
                if values.len() != *len {
                    return Err(OutOfBounds::Length {
                        found: values.len(),
                        expected: *len,
                    });
                }
                let mut start = *answers;
                if let Some((index, expected)) = *qa {
                    let found = values[index];
                    // The device divides q by K exactly as here: only the last bit may differ.
                    if (found - expected).abs() > 4.0 * f64::EPSILON * expected.abs() {
                        return Err(OutOfBounds::QaEntry {
                            index,
                            found,
                            expected,
                        });
                    }
                    start = index + 1;
                }
                if let Some((index, &found)) = values[..*answers]
                    .iter()
                    .enumerate()
                    .find(|(_, v)| v.abs() > *coordinate_high)
                {
                    return Err(OutOfBounds::ShareCoordinate {
                        index,
                        found,
                        high: *coordinate_high,
                    });
                }
                let found = norm(&values[..*answers]);
                if found > *answers_high {
                    return Err(OutOfBounds::SharePart {
                        part: "answers",
                        found,
                        low: 0.0,
                        high: *answers_high,
                    });
                }
                let found = norm(&values[start..]);
                if found < padding.0 || found > padding.1 {
                    return Err(OutOfBounds::SharePart {
                        part: "padding",
                        found,
                        low: padding.0,
                        high: padding.1,
                    });
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Client, token_from_bytes};
    use crate::coding::Answer;
    use crate::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
    use orthomask_core::key::Key;
    use orthomask_dp::ncx2::NonCentralChiSquared as NcChiSquared;

    fn definition(share_mode: bool) -> SurveyDefinition {
        let draft: SurveyDraft = serde_json::from_value(serde_json::json!({
            "id": "s", "title": "T", "consent": "ok",
            "questions": [
                {"id": "smoker", "label": "Smoke?", "kind": "yes_no"},
                {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
                {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250}
            ],
            "cohort_size": 20, "share_mode": share_mode, "invitations": true
        }))
        .unwrap();
        let rights = [
            "http://r0".to_owned(),
            "http://r1".to_owned(),
            "http://r2".to_owned(),
        ];
        let planned = plan_survey(
            &draft,
            Endpoints {
                provider: "http://m",
                right_services: &rights,
            },
        )
        .unwrap();
        hydrate(
            &planned.template,
            planned.plan.share_services,
            1,
            &Key::from_bytes([3; 32]),
        )
    }

    /// Honest answers anywhere in the declared ranges, including the corners.
    fn answers(i: u64) -> Vec<Answer> {
        let u = |j: u64| ((i * 7919 + j * 104_729) % 1000) as f64 / 999.0;
        vec![
            Answer::YesNo(i.is_multiple_of(2)),
            Answer::Integer(18 + (u(1) * 72.0).round() as i64),
            Answer::Number(if i.is_multiple_of(5) {
                250.0
            } else {
                250.0 * u(2)
            }),
        ]
    }

    fn uploads(d: &SurveyDefinition, count: u64) -> Vec<Vec<f64>> {
        let client = Client::new(d).unwrap();
        (0..count)
            .flat_map(|i| {
                let token = token_from_bytes(&[(i % 251) as u8; 24]);
                let noise = Key::from_bytes({
                    let mut b = [0u8; 32];
                    b[..8].copy_from_slice(&i.to_le_bytes());
                    b
                });
                client
                    .prepare(&answers(i), &token, &noise)
                    .unwrap()
                    .destinations
                    .into_iter()
                    .map(|d| d.upload.values)
            })
            .collect()
    }

    /// The law: every honest upload of many simulated participants passes, in both modes.
    #[test]
    fn every_honest_upload_passes() {
        for share_mode in [false, true] {
            let d = definition(share_mode);
            let bounds = UploadBounds::of(&d).unwrap();
            for (i, values) in uploads(&d, 400).iter().enumerate() {
                bounds
                    .check(values)
                    .unwrap_or_else(|e| panic!("share mode {share_mode}, upload {i}: {e}"));
            }
        }
    }

    /// Garbage is refused: one enormous value, an answer far outside its range (unmasked with
    /// the device's own key, changed, masked again), the padding left out.
    #[test]
    fn garbage_is_refused_before_it_is_stored() {
        let d = definition(false);
        let bounds = UploadBounds::of(&d).unwrap();
        let honest = &uploads(&d, 1)[0];
        let mut huge = honest.clone();
        huge[3] = 1e300;
        assert!(matches!(
            bounds.check(&huge),
            Err(OutOfBounds::TooLong { .. })
        ));
        // An income of 10⁹ against a declared 0–250: the liar holds B_k (basic protocol), pads
        // an honest record, moves the scaled income to 2·10⁹/250 − 1 and masks it. Its length
        // grows by that much whatever B_k is.
        let design = d.design().unwrap();
        let b = orthomask_core::protocol::tm2::right_mask_from_device_key(
            &design,
            &d.right_mask_key().unwrap(),
            d.masking.cohort,
        )
        .unwrap();
        let mut noise = Key::from_bytes([9; 32])
            .stream(orthomask_core::key::StreamId::ParticipantNoise { participant: 0 })
            .rng();
        let mut record = design.pad(&[1.0, 40.0, 100.0], &mut noise).unwrap();
        record[2] = 2.0 * 1e9 / 250.0 - 1.0;
        let mut masked = nalgebra::DMatrix::from_row_slice(1, record.len(), &record);
        orthomask_core::mask::Mask::right_apply(b.as_ref(), &mut masked).unwrap();
        let liar: Vec<f64> = masked.iter().copied().collect();
        let e = bounds.check(&liar).unwrap_err();
        assert!(matches!(e, OutOfBounds::TooLong { .. }), "{e}");
        assert!(!e.to_string().contains('\n'));
        let zeros = vec![0.0; honest.len()];
        assert!(matches!(
            bounds.check(&zeros),
            Err(OutOfBounds::TooShort { .. })
        ));
        assert!(matches!(
            bounds.check(&honest[1..]),
            Err(OutOfBounds::Length { .. })
        ));
    }

    /// Share mode: a share whose QA entry lies is refused at the service, so it cannot spoil
    /// the cohort's QA check; so is a share without padding.
    #[test]
    fn a_share_that_lies_about_qa_is_refused() {
        let d = definition(true);
        let bounds = UploadBounds::of(&d).unwrap();
        let honest = uploads(&d, 1).remove(0);
        let Some((index, expected)) = (match &bounds {
            UploadBounds::Share { qa, .. } => *qa,
            UploadBounds::Masked { .. } => None,
        }) else {
            panic!("share bounds expected");
        };
        assert_eq!(index, 3);
        let mut liar = honest.clone();
        liar[index] = expected + 1.0;
        assert!(matches!(
            bounds.check(&liar),
            Err(OutOfBounds::QaEntry { .. })
        ));
        let mut no_padding = honest.clone();
        for v in &mut no_padding[index + 1..] {
            *v = 0.0;
        }
        assert!(matches!(
            bounds.check(&no_padding),
            Err(OutOfBounds::SharePart {
                part: "padding",
                ..
            })
        ));
        let mut loud = honest;
        loud[0] = 1e12;
        assert!(matches!(
            bounds.check(&loud),
            Err(OutOfBounds::ShareCoordinate { index: 0, .. })
        ));
    }

    /// Issue 43 §5, as measured: a share whose answers carry no share noise but 600 added to
    /// one answer fits inside the answers' length, and is refused coordinate by coordinate; the
    /// coordinate bound is the derivation's, by hand for this survey (three services, three
    /// answers, no DP).
    #[test]
    fn one_answer_shifted_in_a_share_is_refused_coordinate_by_coordinate() {
        let d = definition(true);
        let bounds = UploadBounds::of(&d).unwrap();
        let UploadBounds::Share {
            coordinate_high,
            answers_high,
            ..
        } = bounds
        else {
            panic!("share bounds expected");
        };
        let tau = d.masking.share_mode.as_ref().unwrap().share_sigma;
        let z = (2.0 * (2.0 * 3.0 * 5.0 / UPLOAD_FALSE_REFUSAL).ln()).sqrt();
        let by_hand = 1.0 / 3.0 + tau * (2.0f64 / 3.0).sqrt() * z;
        assert!(
            (coordinate_high / by_hand - 1.0).abs() < 1e-8,
            "{coordinate_high} {by_hand}"
        );
        assert!(600.0 < answers_high, "600 fits inside the answers' length");
        let mut liar = uploads(&d, 1).remove(0);
        liar[0] = 1.0 / 3.0;
        liar[1] = 600.0;
        liar[2] = 0.0;
        let e = bounds.check(&liar).unwrap_err();
        assert!(
            matches!(e, OutOfBounds::ShareCoordinate { index: 1, .. }),
            "{e}"
        );
        assert!(!e.to_string().contains('\n'));
    }

    /// The coordinate bound's law: over many honest shares, no answer coordinate reaches it
    /// (a standard normal beyond the bound's `z ≈ 7` is a 10⁻¹² event), and the shares' noise is
    /// real — the largest coordinate seen is a fair fraction of the bound.
    #[test]
    fn honest_share_coordinates_stay_inside_their_bound() {
        let d = definition(true);
        let bounds = UploadBounds::of(&d).unwrap();
        let UploadBounds::Share {
            coordinate_high,
            answers,
            ..
        } = bounds
        else {
            panic!("share bounds expected");
        };
        let largest = uploads(&d, 400)
            .iter()
            .flat_map(|v| v[..answers].to_vec())
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(largest < coordinate_high, "{largest} {coordinate_high}");
        assert!(
            largest > 0.3 * coordinate_high,
            "the noise is real: {largest}"
        );
    }

    /// Laurent & Massart's ends enclose the exact χ² quantiles at the same level, computed by an
    /// independent implementation (the dp crate's non-central χ² with non-centrality 0, itself
    /// checked against SciPy in its own tests).
    #[test]
    fn the_chi_square_ends_are_conservative() {
        for k in [1.0, 3.0, 60.0, 503.0, 13_912.0] {
            for t in [(3.0f64 / 1e-9).ln(), 5.0] {
                let chi2 = NcChiSquared::new(k, 0.0).unwrap();
                let exact_upper = chi2.upper_quantile((-t).exp()).unwrap();
                assert!(chi2_upper(k, t) >= exact_upper, "k = {k}, t = {t}");
                let lower = chi2_lower(k, t);
                if lower > 0.0 {
                    assert!(chi2.cdf(lower).unwrap() <= (-t).exp(), "k = {k}, t = {t}");
                }
            }
        }
    }
}
