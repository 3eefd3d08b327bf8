//! The participant form: from what was typed to answers, from answers to the masked upload.
//!
//! Everything the participant enters stays in this module's inputs and the page's memory; what
//! [`prepare`] returns holds only masked vectors (`x·B`, or additive shares in share mode), the
//! survey id, the cohort and a random idempotency token. The coding of answers (yes/no, ranges,
//! Likert, dummies, the `_answered` column of optional questions) is
//! `orthomask_formats::survey::SurveyDefinition::encode`; the masking is
//! `orthomask_core::protocol::tm2::Participant`.

use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::collusion::split_into_shares;
use orthomask_core::protocol::tm2::{Participant, Tm2Design, right_mask_from_device_key};
use orthomask_formats::survey::{
    Answer, Question, QuestionKind, Receipt, SurveyDefinition, Upload,
};

/// The message for a required question left empty.
pub const NEEDS_ANSWER: &str = "this question needs an answer";

/// Turn what was typed or chosen for `question` into an [`Answer`], checking it against the
/// declared range with the survey format's own rules.
///
/// `input` is the text of the field: `"yes"`/`"no"`, a number, a Likert point `1…k`, or the
/// 0-based index of a categorical option; empty means not answered.
///
/// # Errors
/// One line for the participant, e.g. "enter a whole number from 18 to 100".
pub fn parse_answer(
    definition: &SurveyDefinition,
    question: usize,
    input: &str,
) -> Result<Answer, String> {
    let q = definition
        .questions
        .get(question)
        .ok_or_else(|| format!("there is no question {}", question + 1))?;
    let text = input.trim();
    if text.is_empty() {
        return if q.optional {
            Ok(Answer::Skipped)
        } else {
            Err(NEEDS_ANSWER.to_owned())
        };
    }
    let answer = match &q.kind {
        QuestionKind::YesNo => match text {
            "yes" => Answer::YesNo(true),
            "no" => Answer::YesNo(false),
            _ => return Err("choose yes or no".to_owned()),
        },
        QuestionKind::Integer { min, max } => Answer::Integer(
            text.parse::<i64>()
                .map_err(|_| format!("enter a whole number from {min} to {max}"))?,
        ),
        QuestionKind::Number { min, max } => {
            let value = text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("enter a number from {min} to {max}"))?;
            Answer::Number(value)
        }
        QuestionKind::Likert { points, .. } => Answer::Likert(
            text.parse::<u8>()
                .map_err(|_| format!("choose a point from 1 to {points}"))?,
        ),
        QuestionKind::Categorical { options } => Answer::Category(
            text.parse::<usize>()
                .map_err(|_| format!("choose one of the {} options", options.len()))?,
        ),
    };
    check_one(definition, q, &answer)?;
    Ok(answer)
}

/// Check one answer with [`SurveyDefinition::encode`] on a one-question copy of the survey, so
/// the range rules and messages are the format's own.
fn check_one(definition: &SurveyDefinition, q: &Question, answer: &Answer) -> Result<(), String> {
    let single = SurveyDefinition {
        questions: vec![q.clone()],
        ..definition.clone()
    };
    single
        .encode(std::slice::from_ref(answer))
        .map(|_| ())
        .map_err(|e| match e {
            orthomask_formats::survey::SurveyError::BadAnswer { reason, .. } => reason,
            other => other.to_string(),
        })
}

/// Validate every field: `None` where the input is fine, the message where it is not.
pub fn validate(definition: &SurveyDefinition, inputs: &[String]) -> Vec<Option<String>> {
    (0..definition.questions.len())
        .map(|i| {
            let input = inputs.get(i).map_or("", String::as_str);
            parse_answer(definition, i, input).err()
        })
        .collect()
}

/// All answers, or the first problem (question number and message).
///
/// # Errors
/// `(index, message)` of the first invalid field.
pub fn answers(
    definition: &SurveyDefinition,
    inputs: &[String],
) -> Result<Vec<Answer>, (usize, String)> {
    (0..definition.questions.len())
        .map(|i| {
            let input = inputs.get(i).map_or("", String::as_str);
            parse_answer(definition, i, input).map_err(|e| (i, e))
        })
        .collect()
}

/// One request the device will send: where, and what.
#[derive(Clone, Debug, PartialEq)]
pub struct Destination {
    /// Upload URL (the masking service provider, or right-masking service `i` in share mode).
    pub url: String,
    /// The body: masked values only.
    pub upload: Upload,
}

/// Everything that will leave the device, ready to show and to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// One destination, or one per right-masking service in share mode.
    pub destinations: Vec<Destination>,
    /// Data columns `p₁` (answers and QA column) of the padded record.
    pub p1: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Whether the record was split into additive shares (no right mask on the device).
    pub share_mode: bool,
    /// Share mode: the shares' standard deviation over the largest answer the survey allows (at
    /// least `SHARE_SCALE`, which validation enforces).
    pub share_noise_ratio: Option<f64>,
    /// Whether the survey uses guessable teaching keys.
    pub teaching: bool,
}

/// Encode, pad and mask one participant's answers.
///
/// `token` is the idempotency token (the same on every retry of this submission); `device_noise`
/// is a fresh key from the operating system whose streams give the Gaussian padding (and, in
/// share mode, the random shares).
///
/// # Errors
/// One line: a bad answer (naming the question), an invalid design or key in the definition.
pub fn prepare(
    definition: &SurveyDefinition,
    answers: &[Answer],
    token: &str,
    device_noise: &Key,
) -> Result<Prepared, String> {
    let record = definition.encode(answers).map_err(|e| e.to_string())?;
    let design: Tm2Design = definition.design().map_err(|e| e.to_string())?;
    let masking = &definition.masking;
    let mut noise = device_noise
        .stream(StreamId::ParticipantNoise { participant: 0 })
        .rng();
    let upload = |values: Vec<f64>| Upload {
        survey: definition.id.clone(),
        cohort: masking.cohort,
        token: token.to_owned(),
        values,
    };
    let destinations = if let Some(share) = &masking.share_mode {
        // In share mode the device holds no right mask: it pads (answers, QA, noise, optional DP
        // noise) and splits the padded record into additive shares.
        let padded = design.pad(&record, &mut noise).map_err(|e| e.to_string())?;
        let mut share_rng = device_noise
            .stream(StreamId::Shares { participant: 0 })
            .rng();
        let shares = split_into_shares(
            &padded,
            design.answers(),
            share.providers.len(),
            share.share_sigma,
            &mut share_rng,
        )
        .map_err(|e| e.to_string())?;
        share
            .providers
            .iter()
            .zip(shares)
            .map(|(url, values)| Destination {
                url: url.clone(),
                upload: upload(values),
            })
            .collect()
    } else {
        let key = definition.right_mask_key().map_err(|e| e.to_string())?;
        let b =
            right_mask_from_device_key(&design, &key, masking.cohort).map_err(|e| e.to_string())?;
        let device = Participant::new(&design, &b).map_err(|e| e.to_string())?;
        let masked = device
            .mask_record(&record, &mut noise)
            .map_err(|e| e.to_string())?;
        vec![Destination {
            url: definition.upload_url.clone(),
            upload: upload(masked),
        }]
    };
    Ok(Prepared {
        destinations,
        p1: design.p1(),
        p2: design.p2(),
        share_mode: masking.share_mode.is_some(),
        share_noise_ratio: masking
            .share_mode
            .as_ref()
            .map(|share| share.share_sigma / definition.answers_max()),
        teaching: masking.teaching,
    })
}

/// Check that a receipt acknowledges exactly this upload.
///
/// # Errors
/// One line naming the mismatch.
pub fn verify_receipt(upload: &Upload, receipt: &Receipt) -> Result<(), String> {
    if receipt.survey != upload.survey || receipt.cohort != upload.cohort {
        return Err(format!(
            "the receipt is for survey {:?} cohort {}, not {:?} cohort {}",
            receipt.survey, receipt.cohort, upload.survey, upload.cohort
        ));
    }
    let expected = upload.hash();
    if receipt.upload_hash != expected {
        return Err(format!(
            "the receipt's hash {} does not match the upload's {expected}; the service stored something else",
            receipt.upload_hash
        ));
    }
    Ok(())
}

/// Where the service that took an upload at `upload_url` publishes the receipt list of `cohort`
/// once it closes: every accepting service (the provider, each right-masking service) serves
/// `…/api/surveys/{id}/uploads` and `…/api/surveys/{id}/cohorts/{k}/receipts` side by side
/// (docs/openapi.yaml). `None` for an address of another shape.
pub fn receipts_list_url(upload_url: &str, cohort: u32) -> Option<String> {
    upload_url
        .strip_suffix("/uploads")
        .map(|survey| format!("{survey}/cohorts/{cohort}/receipts"))
}

/// A receipt as the participant saves it: the service's receipt and where it was sent.
pub fn receipt_file(receipts: &[(String, Receipt)]) -> String {
    let items: Vec<serde_json::Value> = receipts
        .iter()
        .map(|(url, r)| {
            serde_json::json!({
                "service": url,
                "survey": r.survey,
                "cohort": r.cohort,
                "upload_hash": r.upload_hash,
                "received_at": r.received_at,
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "orthomask_receipt": items }))
        .unwrap_or_default()
        + "\n"
}

/// Characters of an idempotency token.
const TOKEN_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A 32-character idempotency token from 24 random bytes (base64url, 192 bits).
pub fn token_from_bytes(bytes: &[u8; 24]) -> String {
    let mut out = String::with_capacity(32);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16) | (u32::from(chunk[1]) << 8) | u32::from(chunk[2]);
        for shift in [18, 12, 6, 0] {
            out.push(char::from(TOKEN_ALPHABET[((n >> shift) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use orthomask_core::mask::Mask;
    use orthomask_formats::survey::ShareMode;

    const DEMO: &str = include_str!("../../www/surveys/leaps-demo.json");
    const OPTIONAL: &str = include_str!("../../www/surveys/wellbeing-optional.json");

    fn demo() -> SurveyDefinition {
        SurveyDefinition::parse(DEMO, "leaps-demo.json").unwrap()
    }

    fn demo_inputs() -> Vec<String> {
        ["no", "yes", "0.08", "63", "30", "yes", "yes", "50"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    #[test]
    fn range_errors_use_the_formats_messages() {
        let s = demo();
        let mut inputs = demo_inputs();
        inputs[3] = "17".into();
        inputs[2] = "abc".into();
        inputs[0] = String::new();
        let errors = validate(&s, &inputs);
        assert_eq!(errors[0].as_deref(), Some(NEEDS_ANSWER));
        assert_eq!(errors[2].as_deref(), Some("enter a number from -1 to 2"));
        assert_eq!(
            errors[3].as_deref(),
            Some("enter a whole number from 18 to 100")
        );
        assert!(errors[1].is_none());
        assert_eq!(answers(&s, &inputs).unwrap_err().0, 0);
    }

    #[test]
    fn the_upload_is_the_masked_record_and_never_the_answers() {
        let s = demo();
        let a = answers(&s, &demo_inputs()).unwrap();
        let token = token_from_bytes(&[7; 24]);
        let prepared = prepare(&s, &a, &token, &Key::teaching(11)).unwrap();
        assert_eq!(prepared.destinations.len(), 1);
        let upload = &prepared.destinations[0].upload;
        assert_eq!(upload.values.len(), 8 + 1 + 503);
        assert!(upload.validate("leaps-demo", 512).is_ok());
        // Unmasking with the same device key gives back the padded record: answers, QA, noise.
        let design = s.design().unwrap();
        let b = right_mask_from_device_key(&design, &s.right_mask_key().unwrap(), 0).unwrap();
        let mut m = DMatrix::from_row_slice(1, 512, &upload.values);
        b.right_apply_inverse(&mut m).unwrap();
        let expected = [0.0, 1.0, 0.08, 63.0, 30.0, 1.0, 1.0, 50.0, 888.0];
        for (j, e) in expected.iter().enumerate() {
            assert!((m[(0, j)] - e).abs() < 1e-9, "column {j}: {}", m[(0, j)]);
        }
        // None of the answers appears among the uploaded numbers.
        for v in &upload.values {
            for e in expected {
                assert!((v - e).abs() > 1e-6);
            }
        }
    }

    /// Device-side DP (seed 004 setting B): the device adds N(0, (σ(hi − lo)/2)²) to each answer
    /// before padding and masking, from its own noise stream; the QA constant is left exact.
    #[test]
    fn device_side_dp_noise_is_added_before_masking() {
        let mut s = demo();
        s.masking.dp = Some(orthomask_formats::survey::DpParameters {
            epsilon: 0.5,
            delta: 0.01,
            sigma: 0.2,
        });
        s.validate().unwrap();
        let design = s.design().unwrap();
        let sds = design.dp().unwrap().column_sigmas();
        let raw = [0.0, 1.0, 0.08, 63.0, 30.0, 1.0, 1.0, 50.0];
        let a = answers(&s, &demo_inputs()).unwrap();
        let b = right_mask_from_device_key(&design, &s.right_mask_key().unwrap(), 0).unwrap();
        let unmasked = |device: u64| {
            let prepared =
                prepare(&s, &a, &token_from_bytes(&[3; 24]), &Key::teaching(device)).unwrap();
            let mut m = DMatrix::from_row_slice(1, 512, &prepared.destinations[0].upload.values);
            b.right_apply_inverse(&mut m).unwrap();
            m
        };
        let (first, second) = (unmasked(21), unmasked(22));
        for (j, (&x, sd)) in raw.iter().zip(&sds).enumerate() {
            let noise = first[(0, j)] - x;
            // Six standard deviations: exceeded with probability 2e-9 per entry.
            assert!(
                noise != 0.0 && noise.abs() < 6.0 * sd,
                "column {j}: noise {noise}, sd {sd}"
            );
            assert_ne!(
                first[(0, j)],
                second[(0, j)],
                "column {j}: the same noise twice"
            );
        }
        assert!((first[(0, 8)] - 888.0).abs() < 1e-9);
    }

    #[test]
    fn share_mode_splits_the_padded_record_into_shares_that_add_up() {
        let mut s = demo();
        s.masking.right_mask_key = None;
        s.masking.share_mode = Some(ShareMode {
            providers: vec![
                "http://a/u".into(),
                "http://b/u".into(),
                "http://c/u".into(),
            ],
            share_sigma: 150.0 * s.answers_max(),
        });
        s.validate().unwrap();
        let a = answers(&s, &demo_inputs()).unwrap();
        let prepared = prepare(&s, &a, &token_from_bytes(&[1; 24]), &Key::teaching(3)).unwrap();
        assert!(prepared.share_mode);
        assert_eq!(prepared.destinations.len(), 3);
        let sum: Vec<f64> = (0..512)
            .map(|j| {
                prepared
                    .destinations
                    .iter()
                    .map(|d| d.upload.values[j])
                    .sum()
            })
            .collect();
        assert!((sum[3] - 63.0).abs() < 1e-9 && (sum[8] - 888.0).abs() < 1e-9);
        assert!((prepared.destinations[0].upload.values[3] - 63.0).abs() > 1e-6);
        assert_eq!(prepared.share_noise_ratio, Some(150.0));
        // Only the answers carry share noise: the QA constant is split evenly, 888/3 per share.
        let answers = s.design().unwrap().answers();
        for d in &prepared.destinations {
            assert!((d.upload.values[answers] - 888.0 / 3.0).abs() < 1e-9);
        }
    }

    #[test]
    fn each_receipt_links_to_its_own_service_list() {
        assert_eq!(
            receipts_list_url("http://r1:8083/api/surveys/health/uploads", 2).as_deref(),
            Some("http://r1:8083/api/surveys/health/cohorts/2/receipts")
        );
        assert_eq!(receipts_list_url("http://elsewhere/submit", 0), None);
    }

    #[test]
    fn optional_questions_are_coded_explicitly() {
        let s = SurveyDefinition::parse(OPTIONAL, "wellbeing-optional.json").unwrap();
        let skipped = vec![String::new(); s.questions.len()];
        let errors = validate(&s, &skipped);
        for (q, e) in s.questions.iter().zip(&errors) {
            assert_eq!(e.is_some(), !q.optional, "{}", q.id);
        }
    }

    #[test]
    fn receipts_are_verified_against_the_hash() {
        let upload = Upload {
            survey: "s".into(),
            cohort: 0,
            token: token_from_bytes(&[9; 24]),
            values: vec![1.5, -2.0],
        };
        let mut receipt = Receipt {
            survey: "s".into(),
            cohort: 0,
            upload_hash: upload.hash(),
            received_at: "2026-01-01T00:00:00Z".into(),
        };
        assert!(verify_receipt(&upload, &receipt).is_ok());
        receipt.upload_hash = "0".repeat(64);
        assert!(
            verify_receipt(&upload, &receipt)
                .unwrap_err()
                .contains("does not match")
        );
        receipt.cohort = 1;
        assert!(verify_receipt(&upload, &receipt).is_err());
    }

    #[test]
    fn tokens_satisfy_the_upload_rules() {
        let t = token_from_bytes(&[255; 24]);
        assert_eq!(t.len(), 32);
        let upload = Upload {
            survey: "s".into(),
            cohort: 0,
            token: t,
            values: vec![0.0],
        };
        assert!(upload.validate("s", 1).is_ok());
        assert_ne!(token_from_bytes(&[0; 24]), token_from_bytes(&[1; 24]));
    }
}
