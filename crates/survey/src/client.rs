//! The participant's client: from answers to the masked uploads that leave the device, and the
//! checks a device makes on what the services answer. The web app, the services' tests and the
//! load benchmark all run this code, so the tests exercise the client participants run.
//!
//! What [`Client::prepare`] returns holds only masked vectors (`x·B_k`, or additive shares in
//! share mode), the survey id, the cohort and the idempotency token; the answers stay with the
//! caller. The coding is [`SurveyDefinition::encode`], the padding and masking
//! `orthomask_core::protocol::tm2::Participant` (seed 000 §2 step 2), the split into shares
//! `orthomask_core::protocol::collusion::split_into_shares` (§3.5). Entropy comes from the caller:
//! a fresh key (from the operating system or the browser) whose streams give the padding and the
//! shares, and a token made of random bytes ([`token_from_bytes`]).

use crate::coding::Answer;
use crate::definition::{ShareMode, SurveyDefinition, SurveyError};
use crate::trust::UploadCredential;
use crate::upload::{Receipt, Upload};
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::collusion::split_into_shares;
use orthomask_core::protocol::tm2::{
    BoxedMask, Participant, Tm2Design, right_mask_from_device_key,
};

/// Why a device cannot prepare its uploads.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// An answer does not fit, or the definition is unusable (bad design or key).
    #[error(transparent)]
    Survey(#[from] SurveyError),
    /// Padding, masking or splitting failed.
    #[error("masking on this device: {0}")]
    Masking(#[from] ProtocolError),
    /// The share-mode privacy figure cannot be computed.
    #[error(transparent)]
    ShareView(#[from] crate::share_view::ShareViewError),
}

/// Why a receipt does not acknowledge an upload.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReceiptError {
    /// The receipt names another survey or cohort.
    #[error(
        "the receipt is for survey {receipt_survey:?} cohort {receipt_cohort}, not {upload_survey:?} cohort {upload_cohort}"
    )]
    OtherUpload {
        /// Survey the receipt names.
        receipt_survey: String,
        /// Cohort the receipt names.
        receipt_cohort: u32,
        /// Survey of the upload.
        upload_survey: String,
        /// Cohort of the upload.
        upload_cohort: u32,
    },
    /// The service stored something else than what was sent.
    #[error(
        "the receipt's hash {found} does not match the upload's {expected}; the service stored something else"
    )]
    Hash {
        /// The receipt's hash.
        found: String,
        /// [`Upload::hash`] of what was sent.
        expected: String,
    },
}

/// One request the device will send: where, and what (also what waits on the device offline:
/// the web app's outbox keeps these as they are).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Share mode: what one right-masking service alone learns (`crate::share_view`).
    pub one_service_view: Option<crate::share_view::OneServiceView>,
    /// Whether the survey uses guessable teaching keys.
    pub teaching: bool,
}

/// A device set up for one survey definition: its design and, in the basic protocol, the right
/// mask `B_k` of its cohort (derived once from the device key: the costly part for large `p`).
pub struct Client {
    /// The digest every upload names ([`SurveyDefinition::template_digest`]).
    digest: String,
    definition: SurveyDefinition,
    design: Tm2Design,
    hiding: Hiding,
    credential: Option<UploadCredential>,
    /// The app build that runs this device, named in every upload (issue 27 §2).
    build: String,
}

/// How a device hides its padded record.
enum Hiding {
    /// The basic protocol: right-multiply by the cohort's `B_k`.
    RightMask(BoxedMask),
    /// Share mode: split into additive shares, one per right-masking service.
    Shares(ShareMode),
}

impl Client {
    /// Build the design and, unless in share mode, `B_k` from the definition's device key.
    ///
    /// # Errors
    /// [`ClientError`] when the definition's design or key is unusable.
    pub fn new(definition: &SurveyDefinition) -> Result<Self, ClientError> {
        let design = definition.design()?;
        let hiding = match &definition.masking.share_mode {
            Some(share) => Hiding::Shares(share.clone()),
            None => Hiding::RightMask(right_mask_from_device_key(
                &design,
                &definition.right_mask_key()?,
                definition.masking.cohort,
            )?),
        };
        Ok(Self {
            digest: definition.template_digest(),
            definition: definition.clone(),
            design,
            hiding,
            credential: None,
            build: String::new(),
        })
    }

    /// Attach the upload credential the collector handed out with the definition
    /// ([`crate::trust::DefinitionOffer`]); every upload this device prepares carries it (in share
    /// mode each right-masking service accepts its nonce once).
    #[must_use]
    pub fn with_credential(mut self, credential: UploadCredential) -> Self {
        self.set_credential(credential);
        self
    }

    /// Replace the credential (a client reused for the next participant of the same cohort,
    /// as the load benchmark does to build `B_k` once per cohort).
    pub fn set_credential(&mut self, credential: UploadCredential) {
        self.credential = Some(credential);
    }

    /// Name the app build that runs this device in every upload it prepares
    /// ([`crate::app_build`]; the web app computes it from the files it loaded).
    #[must_use]
    pub fn with_build(mut self, digest: &str) -> Self {
        digest.clone_into(&mut self.build);
        self
    }

    /// The definition this device was set up for.
    pub fn definition(&self) -> &SurveyDefinition {
        &self.definition
    }

    /// Encode, pad and mask one participant's answers.
    ///
    /// `token` is the idempotency token (the same on every retry of this submission);
    /// `device_noise` is a fresh key from the operating system whose streams give the Gaussian
    /// padding (and, in share mode, the random shares).
    ///
    /// # Errors
    /// [`ClientError::Survey`] for a bad answer (naming the question), [`ClientError::Masking`]
    /// when padding or masking fails.
    pub fn prepare(
        &self,
        answers: &[Answer],
        token: &str,
        device_noise: &Key,
    ) -> Result<Prepared, ClientError> {
        let definition = &self.definition;
        let record = definition.encode(answers)?;
        let masking = &definition.masking;
        let mut noise = device_noise
            .stream(StreamId::ParticipantNoise { participant: 0 })
            .rng();
        let upload = |values: Vec<f64>| Upload {
            survey: definition.id.clone(),
            cohort: masking.cohort,
            token: token.to_owned(),
            values,
            credential: self.credential.clone(),
            definition: self.digest.clone(),
            build: self.build.clone(),
        };
        let destinations = match &self.hiding {
            Hiding::Shares(share) => {
                // In share mode the device holds no right mask: it pads (answers, QA, noise,
                // optional DP noise) and splits the padded record into additive shares.
                let padded = self.design.pad(&record, &mut noise)?;
                let mut share_rng = device_noise
                    .stream(StreamId::Shares { participant: 0 })
                    .rng();
                let shares = split_into_shares(
                    &padded,
                    self.design.answers(),
                    share.providers.len(),
                    share.share_sigma,
                    &mut share_rng,
                )?;
                share
                    .providers
                    .iter()
                    .zip(shares)
                    .map(|(url, values)| Destination {
                        url: url.clone(),
                        upload: upload(values),
                    })
                    .collect()
            }
            Hiding::RightMask(b) => {
                let device = Participant::new(&self.design, b.as_ref())?;
                vec![Destination {
                    url: definition.upload_url.clone(),
                    upload: upload(device.mask_record(&record, &mut noise)?),
                }]
            }
        };
        Ok(Prepared {
            destinations,
            p1: self.design.p1(),
            p2: self.design.p2(),
            share_mode: masking.share_mode.is_some(),
            share_noise_ratio: masking
                .share_mode
                .as_ref()
                .map(|share| share.share_sigma / definition.record_answers_max()),
            one_service_view: crate::share_view::one_service_view(definition)?,
            teaching: masking.teaching,
        })
    }
}

/// Encode, pad and mask one participant's answers ([`Client::prepare`] on a fresh [`Client`]).
///
/// # Errors
/// As [`Client::new`] and [`Client::prepare`].
pub fn prepare(
    definition: &SurveyDefinition,
    answers: &[Answer],
    token: &str,
    device_noise: &Key,
) -> Result<Prepared, ClientError> {
    Client::new(definition)?.prepare(answers, token, device_noise)
}

/// Check that a receipt acknowledges exactly this upload.
///
/// # Errors
/// [`ReceiptError`] naming the mismatch.
pub fn verify_receipt(upload: &Upload, receipt: &Receipt) -> Result<(), ReceiptError> {
    if receipt.survey != upload.survey || receipt.cohort != upload.cohort {
        return Err(ReceiptError::OtherUpload {
            receipt_survey: receipt.survey.clone(),
            receipt_cohort: receipt.cohort,
            upload_survey: upload.survey.clone(),
            upload_cohort: upload.cohort,
        });
    }
    let expected = upload.hash();
    if receipt.upload_hash != expected {
        return Err(ReceiptError::Hash {
            found: receipt.upload_hash.clone(),
            expected,
        });
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
    use crate::definition::DpParameters;
    use crate::tolerance::{RECORD_ROUND_TRIP, SHOWS_ANSWER};
    use orthomask_core::mask::Mask;
    use orthomask_core::protocol::tm2::right_mask_from_device_key;

    const DEMO: &str = include_str!("../../../www/surveys/leaps-demo.json");

    fn demo() -> SurveyDefinition {
        SurveyDefinition::parse(DEMO, "leaps-demo.json").unwrap()
    }

    fn demo_answers(s: &SurveyDefinition) -> Vec<Answer> {
        let inputs: Vec<String> = ["no", "yes", "0.08", "63", "30", "yes", "yes", "50"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        s.answers_from_inputs(&inputs).unwrap()
    }

    /// The padded record of the demo answers: the eight answers, then QA.
    const DEMO_RECORD: [f64; 9] = [0.0, 1.0, 0.08, 63.0, 30.0, 1.0, 1.0, 50.0, 888.0];

    fn unmasked(s: &SurveyDefinition, values: &[f64]) -> nalgebra::DMatrix<f64> {
        let design = s.design().unwrap();
        let b = right_mask_from_device_key(&design, &s.right_mask_key().unwrap(), 0).unwrap();
        let mut m = nalgebra::DMatrix::from_row_slice(1, values.len(), values);
        b.right_apply_inverse(&mut m).unwrap();
        m
    }

    #[test]
    fn the_upload_is_the_masked_record_and_never_the_answers() {
        let s = demo();
        let a = demo_answers(&s);
        let token = token_from_bytes(&[7; 24]);
        let prepared = prepare(&s, &a, &token, &Key::teaching(11)).unwrap();
        assert_eq!(prepared.destinations.len(), 1);
        let upload = &prepared.destinations[0].upload;
        assert_eq!(upload.values.len(), 8 + 1 + 503);
        assert!(upload.validate("leaps-demo", 512).is_ok());
        // Unmasking with the same device key gives back the padded record: answers, QA, noise.
        let m = unmasked(&s, &upload.values);
        for (j, e) in DEMO_RECORD.iter().enumerate() {
            assert!(
                (m[(0, j)] - e).abs() < RECORD_ROUND_TRIP,
                "column {j}: {}",
                m[(0, j)]
            );
        }
        // None of the answers appears among the uploaded numbers.
        for v in &upload.values {
            for e in DEMO_RECORD {
                assert!((v - e).abs() > SHOWS_ANSWER);
            }
        }
        // A set-up client prepares the same upload as the one-shot function.
        let client = Client::new(&s).unwrap();
        assert_eq!(
            client.prepare(&a, &token, &Key::teaching(11)).unwrap(),
            prepared
        );
    }

    /// Device-side DP (seed 004 setting B): the device adds N(0, (σ(hi − lo)/2)²) to each answer
    /// before padding and masking, from its own noise stream; the QA constant is left exact.
    #[test]
    fn device_side_dp_noise_is_added_before_masking() {
        let mut s = demo();
        s.masking.dp = Some(DpParameters {
            epsilon: 0.5,
            delta: 0.01,
            sigma: 0.2,
        });
        s.validate().unwrap();
        // The record carries the answers scaled to [−1, 1] plus N(0, σ²) on that scale.
        let design = s.design().unwrap();
        let sds = vec![design.dp().unwrap().sigma(); 8];
        let scaled = design
            .scaler()
            .unwrap()
            .scale_row(&DEMO_RECORD[..8])
            .unwrap();
        let a = demo_answers(&s);
        let masked = |device: u64| {
            let prepared =
                prepare(&s, &a, &token_from_bytes(&[3; 24]), &Key::teaching(device)).unwrap();
            unmasked(&s, &prepared.destinations[0].upload.values)
        };
        let (first, second) = (masked(21), masked(22));
        for (j, (&x, sd)) in scaled.iter().zip(&sds).enumerate() {
            let noise = first[(0, j)] - x;
            // Six standard deviations: exceeded with probability 2e-9 per entry.
            assert!(
                noise.abs() > SHOWS_ANSWER && noise.abs() < 6.0 * sd,
                "column {j}: noise {noise}, sd {sd}"
            );
            assert!(
                (first[(0, j)] - second[(0, j)]).abs() > SHOWS_ANSWER,
                "column {j}: the same noise twice"
            );
        }
        // The QA entry is carried as 888/|888| = 1 on the scaled record; the collector multiplies
        // it back (Tm2Design::unscale_unmasked).
        assert!((first[(0, 8)] - 1.0).abs() < RECORD_ROUND_TRIP);
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
        let a = demo_answers(&s);
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
        for (j, e) in DEMO_RECORD.iter().enumerate() {
            assert!((sum[j] - e).abs() < RECORD_ROUND_TRIP, "column {j}");
        }
        for d in &prepared.destinations {
            assert!((d.upload.values[3] - 63.0).abs() > SHOWS_ANSWER);
        }
        // Only the answers carry share noise: the QA constant is split evenly, 888/3 per share.
        let answers = s.design().unwrap().answers();
        for d in &prepared.destinations {
            assert!((d.upload.values[answers] - 888.0 / 3.0).abs() < RECORD_ROUND_TRIP);
        }
        assert!(
            prepared
                .share_noise_ratio
                .is_some_and(|r| (r - 150.0).abs() < RECORD_ROUND_TRIP)
        );
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
    fn receipts_are_verified_against_the_hash() {
        let upload = Upload {
            survey: "s".into(),
            cohort: 0,
            token: token_from_bytes(&[9; 24]),
            values: vec![1.5, -2.0],
            credential: None,
            definition: String::new(),
            build: String::new(),
        };
        let mut receipt = Receipt {
            survey: "s".into(),
            cohort: 0,
            upload_hash: upload.hash(),
            received_at: "2026-01-01T00:00:00Z".into(),
        };
        assert!(verify_receipt(&upload, &receipt).is_ok());
        let file: serde_json::Value =
            serde_json::from_str(&receipt_file(&[("http://m/u".into(), receipt.clone())])).unwrap();
        assert_eq!(file["orthomask_receipt"][0]["upload_hash"], upload.hash());
        receipt.upload_hash = "0".repeat(64);
        assert!(matches!(
            verify_receipt(&upload, &receipt),
            Err(ReceiptError::Hash { .. })
        ));
        receipt.cohort = 1;
        assert!(matches!(
            verify_receipt(&upload, &receipt),
            Err(ReceiptError::OtherUpload { .. })
        ));
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
            credential: None,
            definition: String::new(),
            build: String::new(),
        };
        assert!(upload.validate("s", 1).is_ok());
        assert_ne!(token_from_bytes(&[0; 24]), token_from_bytes(&[1; 24]));
    }
}
