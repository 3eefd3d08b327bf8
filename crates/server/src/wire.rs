//! Data-transfer types between the services and with the administrator: what crosses HTTP, and
//! nothing else. (The participant-facing types — the survey definition, the upload and its
//! receipt — and the administrator's draft are the application layer's, `orthomask_survey`.)

use base64::Engine as _;
use nalgebra::DMatrix;
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::share_handover::FixedMatrix;
use orthomask_core::protocol::tm2::Tm2Design;
use orthomask_survey::definition::valid_survey_id;
use orthomask_survey::draft::Planned;
use orthomask_survey::floors;
use orthomask_survey::intake_bounds::UploadBounds;
use orthomask_survey::policy::{MAX_COHORT, MAX_P, check_min_cohort_size};
use orthomask_survey::trust::{CollectorPublicKey, CollectorSigningKey, SignedDefinition};
use serde::{Deserialize, Serialize};

/// What the collector tells a masking or right-masking service about a survey: the public
/// design and the cohort rules, and the collector-signed template of the definition every device
/// of the survey receives (issue 20 §2). It never carries a key.
///
/// The numbers are not believed as sent: [`Registration::check`] verifies the template's
/// signature, holds it to the policy's floors (`orthomask_survey::floors`) and requires every
/// number here to be the template's. Each upload names the digest of the definition its device
/// accepted, and only uploads naming this template's digest are taken — so the cohort floor the
/// service enforces is derived from what the devices checked, not from what the collector says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// Survey id.
    pub survey: String,
    /// Answer columns (the record `x₁` without the QA column).
    pub answers: usize,
    /// QA constant, if the design has a QA column.
    pub qa_constant: Option<f64>,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise σ (public; the services do not use it).
    pub sigma: f64,
    /// Participants per cohort `m`: a cohort closes itself when it holds `m` uploads.
    pub cohort_size: usize,
    /// Fewest uploads for which a cohort is masked and handed on; smaller cohorts are withheld.
    /// May only raise the floor the template implies ([`Registered::floor`]).
    pub min_cohort_size: usize,
    /// 0 for the basic protocol, `K₁ ≥ orthomask_survey::policy::MIN_SHARE_SERVICES` in share mode.
    pub share_services: usize,
    /// The collector's public key: an accepting service takes an upload only with an upload
    /// credential this key verifies (`orthomask_survey::trust`).
    pub collector_public_key: CollectorPublicKey,
    /// The definition template every device of the survey receives (cohort 0, no key), signed
    /// by the collector.
    pub template: SignedDefinition,
    /// The app builds whose uploads the survey accepts: the deployment's published list when the
    /// survey was registered (`orthomask_survey::trust::Deployment::builds`, issue 27 §2; empty
    /// for a deployment that serves no app, and in registrations older than it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<String>,
}

/// A registration that passed [`Registration::check`], with what the service derives from its
/// template: the digest uploads must name, the cohort floor and the upload bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Registered {
    /// The registration as received.
    pub registration: Registration,
    /// `SurveyDefinition::template_digest` of the signed template.
    pub digest: String,
    /// The fewest records a cohort is masked and handed on with: the template's floor
    /// (`orthomask_survey::floors::Floors::cohort`), raised by the registration's minimum.
    pub floor: usize,
    /// How large an honest upload can be (`orthomask_survey::intake_bounds`).
    pub bounds: UploadBounds,
}

impl Registered {
    /// Why a cohort of `n` records must be withheld under this survey's floor, if it must
    /// (`orthomask_survey::floors::withheld_reason`): the one rule the provider and the
    /// right-masking services apply.
    pub fn withheld_reason(&self, n: usize) -> Option<String> {
        orthomask_survey::floors::withheld_reason(n, self.floor)
    }
}

impl std::ops::Deref for Registered {
    type Target = Registration;
    fn deref(&self) -> &Registration {
        &self.registration
    }
}

impl Registration {
    /// What the provider and the right-masking services are told about a planned survey by the
    /// collector whose signing key is `signing`.
    pub fn for_survey(planned: &Planned, signing: &CollectorSigningKey) -> Self {
        let masking = &planned.plan.masking;
        Self {
            survey: planned.template.id.clone(),
            answers: masking.answers(),
            qa_constant: masking.qa_constant,
            p2: masking.p2,
            sigma: masking.sigma,
            cohort_size: planned.plan.cohort_size,
            min_cohort_size: planned.plan.min_cohort_size,
            share_services: planned.plan.share_services,
            collector_public_key: signing.public_key(),
            template: SignedDefinition::sign(signing, &planned.template),
            builds: Vec::new(),
        }
    }

    /// `p₁`: answers plus the QA column.
    pub fn p1(&self) -> usize {
        self.answers + usize::from(self.qa_constant.is_some())
    }

    /// `p = p₁ + p₂`: the length of every upload.
    pub fn p(&self) -> usize {
        self.p1() + self.p2
    }

    /// The public design (what the provider needs to apply `A₂,k`).
    ///
    /// # Errors
    /// [`ProtocolError`] for parameters that do not form a design.
    pub fn design(&self) -> Result<Tm2Design, ProtocolError> {
        Tm2Design::modified(self.answers, self.p2, self.sigma)?.with_qa(self.qa_constant)
    }

    /// Check every field and the signed template, and derive what the service enforces; the
    /// message names the first problem.
    ///
    /// # Errors
    /// One line: a bad field, a template not signed by `collector_public_key`, a template
    /// below the policy's floors, or a number that is not the template's.
    pub fn check(&self) -> Result<Registered, String> {
        if !valid_survey_id(&self.survey) {
            return Err("survey: use 1-64 characters from a-z, 0-9, - and _".into());
        }
        // Each part first, so that `p()` below cannot overflow on hostile numbers.
        if self.answers > MAX_P || self.p2 > MAX_P {
            return Err(format!(
                "answers = {} and p2 = {} must each be at most {MAX_P}",
                self.answers, self.p2
            ));
        }
        if self.p() > MAX_P {
            return Err(format!("p = {} exceeds the limit of {MAX_P}", self.p()));
        }
        if self.cohort_size == 0 || self.cohort_size > MAX_COHORT {
            return Err(format!("cohort_size must be 1 to {MAX_COHORT}"));
        }
        let fewest = orthomask_survey::policy::MIN_SHARE_SERVICES;
        if self.share_services > 0 && self.share_services < fewest {
            return Err(format!(
                "share_services: share mode needs at least {fewest} right-masking services, not {}",
                self.share_services
            ));
        }
        self.design().map_err(|e| e.to_string())?;
        let template = self.template.open_template(&self.collector_public_key)?;
        if template.id != self.survey {
            return Err(format!(
                "template: the signed template is of survey {:?}, not {:?}",
                template.id, self.survey
            ));
        }
        let floors = floors::check(&template).map_err(|e| format!("template: {e}"))?;
        let design = template.design().map_err(|e| format!("template: {e}"))?;
        let share_services = template
            .masking
            .share_mode
            .as_ref()
            .map_or(0, |s| s.providers.len());
        let mismatch = [
            ("answers", self.answers != design.answers()),
            (
                "qa_constant",
                self.qa_constant != template.masking.qa_constant,
            ),
            ("p2", self.p2 != template.masking.p2),
            (
                "sigma",
                self.sigma.to_bits() != template.masking.sigma.to_bits(),
            ),
            (
                "cohort_size",
                self.cohort_size != template.masking.cohort_size,
            ),
            ("share_services", self.share_services != share_services),
        ]
        .into_iter()
        .find(|(_, differs)| *differs);
        if let Some((field, _)) = mismatch {
            return Err(format!(
                "{field} differs from the signed template's: a registration may not tell the \
                 services another design than the devices accept"
            ));
        }
        // The floor this service enforces: the template's, which a registered minimum may raise
        // but never lower — and it must be a minimum the policy allows for p₁ and m.
        let floor = floors.cohort.max(self.min_cohort_size);
        check_min_cohort_size(design.p1(), self.cohort_size, floor).map_err(|e| e.to_string())?;
        Ok(Registered {
            digest: template.template_digest(),
            floor,
            bounds: UploadBounds::of(&template).map_err(|e| format!("template: {e}"))?,
            registration: self.clone(),
        })
    }
}

/// The largest registration a service reads: its signed template is the collector's planned
/// definition, whose texts come from a draft the collector took within its own body limit (2 MiB
/// by default), and JSON may write a byte of text as up to six (`\u0000`) when the template is
/// embedded as a string; 16 MiB leaves room for a draft of about 2.5 MiB of such text. The
/// collector refuses to create a survey whose registration is larger (`collector::admin`).
pub const MAX_REGISTRATION_BYTES: u64 = 16 << 20;

/// The bytes of a peer message besides its matrices and lists, generously: field names, the
/// survey id (at most 64 characters), indices, Merkle roots (64 hex digits), a one-line reason.
const ENVELOPE_BYTES: u64 = 4096;

/// The base64 text of `values` numbers of `bytes_each` bytes ([`WireMatrix`]: 8, [`WireFixed`]:
/// 16): standard base64 with padding writes 4 characters per 3 bytes, rounded up.
pub fn base64_len(values: u64, bytes_each: u64) -> u64 {
    4 * values.saturating_mul(bytes_each).div_ceil(3)
}

/// The largest body each peer message about one survey can legitimately have (issue 43 §4),
/// from its design: cohorts of at most `m` records (a cohort closes at `m` uploads), `p₁` data
/// columns and records of `p` values. A service reads no more than this (`Peer::read_json`),
/// and refuses a larger `Content-Length` before reading a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerBodyLimits {
    /// [`ShareBlock`]: `m` row ids (64 hex digits, quoted, comma: 67 bytes each) and `m × p`
    /// doubles.
    pub share_block: u64,
    /// [`LeftMasked`]: `m × p` doubles.
    pub left_masked: u64,
    /// [`HandOn`]: `W`, `p × p₁` doubles, and a 64-hex-digit seed.
    pub hand_on: u64,
    /// [`CohortResult`]: the batch (`m × p` doubles) and `m` credential nonces (32 hex digits,
    /// quoted, comma: 35 bytes each).
    pub cohort_result: u64,
    /// [`SharePart`]: `m × p₁` 128-bit integers.
    pub share_part: u64,
}

impl PeerBodyLimits {
    /// The limits of a design with cohorts of `m`, `p₁` data columns and records of `p`.
    pub fn of(m: usize, p1: usize, p: usize) -> Self {
        let (m, p1, p) = (m as u64, p1 as u64, p as u64);
        let doubles = |n: u64| base64_len(n, 8);
        Self {
            share_block: ENVELOPE_BYTES + 67 * m + doubles(m * p),
            left_masked: ENVELOPE_BYTES + doubles(m * p),
            hand_on: ENVELOPE_BYTES + 64 + doubles(p * p1),
            cohort_result: ENVELOPE_BYTES + 35 * m + doubles(m * p),
            share_part: ENVELOPE_BYTES + base64_len(m * p1, 16),
        }
    }
}

impl Registration {
    /// The peer body limits of this survey's design.
    pub fn body_limits(&self) -> PeerBodyLimits {
        PeerBodyLimits::of(self.cohort_size, self.p1(), self.p())
    }
}

/// A matrix on the wire: row-major little-endian doubles, base64 (exact, and a third the size of
/// decimal text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireMatrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// `rows × cols` doubles, row by row, little-endian, standard base64.
    pub data: String,
}

impl WireMatrix {
    /// Encode.
    pub fn from_matrix(m: &DMatrix<f64>) -> Self {
        let mut bytes = Vec::with_capacity(m.len() * 8);
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                bytes.extend_from_slice(&m[(i, j)].to_le_bytes());
            }
        }
        Self {
            rows: m.nrows(),
            cols: m.ncols(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// Decode, checking the size and that every value is finite.
    ///
    /// # Errors
    /// One line naming the problem.
    pub fn to_matrix(&self) -> Result<DMatrix<f64>, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|e| format!("matrix data is not base64: {e}"))?;
        let expected = self
            .rows
            .checked_mul(self.cols)
            .and_then(|n| n.checked_mul(8))
            .ok_or("matrix dimensions overflow")?;
        if bytes.len() != expected {
            return Err(format!(
                "matrix data has {} bytes, a {}x{} matrix needs {expected}",
                bytes.len(),
                self.rows,
                self.cols
            ));
        }
        let values = crate::store::blob_to_f64s(&bytes).map_err(|e| e.to_string())?;
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "matrix entry ({}, {}) is not finite",
                k / self.cols.max(1),
                k % self.cols.max(1)
            ));
        }
        Ok(DMatrix::from_row_slice(self.rows, self.cols, &values))
    }
}

/// What the provider did with a closed cohort (named apart from the core's simulation outcome:
/// this one crosses HTTP, flattened into a [`CohortResult`] under the tag `outcome`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MaskingOutcome {
    /// `A₂,k X_k B_k`.
    Masked {
        /// The doubly masked batch.
        batch: WireMatrix,
    },
    /// Closed without uploads.
    Empty,
    /// Too few uploads to mask safely (fewer than `min_cohort_size`, or `n ≤ p₁`).
    Withheld {
        /// Why, in one line.
        reason: String,
    },
}

/// The provider's hand-over of one cohort to the collector (`PUT …/cohorts/{k}/result`).
/// (No `deny_unknown_fields`: serde cannot combine it with the flattened outcome.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CohortResult {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Uploads the provider accepted for the cohort (basic protocol) or complete records (share
    /// mode).
    pub uploads: usize,
    /// Merkle root of the published receipt list (basic protocol), empty in share mode.
    pub merkle_root: String,
    /// The upload credentials' nonces of the cohort's uploads, sorted (basic protocol; empty in
    /// share mode). The collector checks them against the credentials it issued for the cohort
    /// — one row per nonce, no nonce twice, none it did not issue — and marks the invitations
    /// they belong to as used.
    #[serde(default)]
    pub nonces: Vec<String>,
    /// The result.
    #[serde(flatten)]
    pub outcome: MaskingOutcome,
}

/// A right-masking service's block `Xⁱ Bᵢ` for the provider (`PUT …/cohorts/{k}/shares/{i}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareBlock {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Which right-masking service.
    pub index: u32,
    /// SHA-256 (hex) of each row's idempotency token, row by row: the provider lines up the rows
    /// of the `K₁` blocks by these, since `Σᵢ A Xⁱ = A X` needs every block in the same order.
    pub rows: Vec<String>,
    /// `Xⁱ Bᵢ` (`rows.len() × p`).
    pub block: WireMatrix,
}

/// The provider's `A Xⁱ Bᵢ` back to right-masking service `i` (`PUT …/cohorts/{k}/left-masked`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftMasked {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Which right-masking service.
    pub index: u32,
    /// `A Xⁱ Bᵢ`, rows in the provider's common order.
    pub block: WireMatrix,
}

/// A matrix of fixed-point integers on the wire (`orthomask_core::protocol::share_handover`):
/// row-major 16-byte little-endian two's complement, base64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireFixed {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// `rows × cols` 128-bit integers, row by row, standard base64.
    pub data: String,
}

impl WireFixed {
    /// Encode.
    pub fn from_fixed(m: &FixedMatrix) -> Self {
        Self {
            rows: m.nrows(),
            cols: m.ncols(),
            data: base64::engine::general_purpose::STANDARD.encode(m.to_le_bytes()),
        }
    }

    /// Decode, checking the size.
    ///
    /// # Errors
    /// One line naming the problem.
    pub fn to_fixed(&self) -> Result<FixedMatrix, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|e| format!("part data is not base64: {e}"))?;
        FixedMatrix::from_le_bytes(self.rows, self.cols, &bytes).map_err(|e| e.to_string())
    }
}

/// Right-masking service `from`'s hand-on to the service that unmasks its share
/// (`PUT …/cohorts/{k}/hand-on/{from}`, service to service, never through the provider or the
/// collector): the partial unmasking key `W = B_fromᵀ[:, :p₁]` and, with three or more services,
/// its ring seed (`orthomask_core::protocol::share_handover`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandOn {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// The service whose share the key unmasks.
    pub from: u32,
    /// `W` (`p × p₁`).
    pub key: WireMatrix,
    /// The ring seed `s_from` (64 hex digits), when the parts carry cancelling masks.
    pub seed: Option<String>,
}

/// A right-masking service's part for the collector (`PUT …/cohorts/{k}/parts/{i}`): the
/// leading `p₁` columns of the share it unmasked, `A X^{i−1}_{p₁}` (or `A Xⁱ_{p₁}` with two
/// services), in fixed point plus its cancelling mask.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharePart {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Which right-masking service sends it.
    pub index: u32,
    /// Merkle root of this service's receipt list for the cohort.
    pub merkle_root: String,
    /// Uploads in this service's receipt list for the cohort. The block may have fewer rows: the
    /// provider keeps only the participants whose shares reached every right-masking service.
    pub uploads: usize,
    /// The largest row norm of the block it unmasked: the scale of its rounding errors, for the
    /// collector's QA tolerance.
    pub scale: f64,
    /// The masked part.
    pub block: WireFixed,
}

/// A service's view of one cohort (`GET /api/peer/surveys/{id}/status`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CohortStatus {
    /// Cohort index.
    pub cohort: u32,
    /// `open`, `closed`, `masked`, `sent`, `unmasked`, `empty`, `withheld`.
    pub status: crate::states::IntakeCohort,
    /// Uploads accepted.
    pub uploads: usize,
}

/// `POST /api/peer/surveys/{id}/outbox/requeue`'s answer: how many of the survey's hand-overs
/// the service put back in its queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerRequeued {
    /// The survey.
    pub survey: String,
    /// Hand-overs it will send again.
    pub requeued: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_round_trip_bit_for_bit_and_bad_ones_are_named() {
        let m = DMatrix::from_row_slice(2, 3, &[0.1, -1e-300, 3.0, 4.5, 1e300, -0.0]);
        let w = WireMatrix::from_matrix(&m);
        let back = w.to_matrix().unwrap();
        assert_eq!(back.shape(), (2, 3));
        for (a, b) in m.iter().zip(back.iter()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let mut short = w.clone();
        short.rows = 3;
        assert!(short.to_matrix().unwrap_err().contains("needs 72"));
        let nan = WireMatrix::from_matrix(&DMatrix::from_row_slice(1, 2, &[1.0, f64::NAN]));
        assert_eq!(
            nan.to_matrix().unwrap_err(),
            "matrix entry (0, 1) is not finite"
        );
    }

    /// Each limit holds the largest message of its kind that an honest party sends for the
    /// design (every value the widest base64 and the longest ids), and is no more than the
    /// envelope above it: a flood of bodies just over a limit is refused, not read.
    #[test]
    fn each_peer_body_limit_holds_the_largest_honest_message_and_little_more() {
        let (m, p1, p) = (37, 6, 91);
        let limits = PeerBodyLimits::of(m, p1, p);
        let full = |rows: usize, cols: usize| {
            WireMatrix::from_matrix(&DMatrix::from_element(rows, cols, -1.234_567_890_123e-300))
        };
        let survey = "s".repeat(64);
        let fits = |what: &str, body: Vec<u8>, limit: u64| {
            let len = body.len() as u64;
            assert!(len <= limit, "{what}: {len} > {limit}");
            assert!(
                limit - len <= ENVELOPE_BYTES,
                "{what}: {len} far below {limit}"
            );
        };
        fits(
            "share block",
            serde_json::to_vec(&ShareBlock {
                survey: survey.clone(),
                cohort: u32::MAX,
                index: u32::MAX,
                rows: vec!["f".repeat(64); m],
                block: full(m, p),
            })
            .unwrap(),
            limits.share_block,
        );
        fits(
            "left-masked block",
            serde_json::to_vec(&LeftMasked {
                survey: survey.clone(),
                cohort: u32::MAX,
                index: u32::MAX,
                block: full(m, p),
            })
            .unwrap(),
            limits.left_masked,
        );
        fits(
            "hand-on",
            serde_json::to_vec(&HandOn {
                survey: survey.clone(),
                cohort: u32::MAX,
                from: u32::MAX,
                key: full(p, p1),
                seed: Some("a".repeat(64)),
            })
            .unwrap(),
            limits.hand_on,
        );
        fits(
            "cohort result",
            serde_json::to_vec(&CohortResult {
                survey: survey.clone(),
                cohort: u32::MAX,
                uploads: usize::MAX,
                merkle_root: "b".repeat(64),
                nonces: vec!["0f".repeat(16); m],
                outcome: MaskingOutcome::Masked { batch: full(m, p) },
            })
            .unwrap(),
            limits.cohort_result,
        );
        let fixed = FixedMatrix::from_le_bytes(m, p1, &vec![0xff; m * p1 * 16]).unwrap();
        fits(
            "share part",
            serde_json::to_vec(&SharePart {
                survey,
                cohort: u32::MAX,
                index: u32::MAX,
                merkle_root: "c".repeat(64),
                uploads: usize::MAX,
                scale: -1.234_567_890_123e-300,
                block: WireFixed::from_fixed(&fixed),
            })
            .unwrap(),
            limits.share_part,
        );
    }

    /// The outcome is flattened into the result; every variant survives a round trip.
    #[test]
    fn cohort_results_round_trip() {
        for outcome in [
            MaskingOutcome::Empty,
            MaskingOutcome::Withheld {
                reason: "too few".into(),
            },
            MaskingOutcome::Masked {
                batch: WireMatrix::from_matrix(&DMatrix::from_row_slice(1, 2, &[1.5, -2.0])),
            },
        ] {
            let r = CohortResult {
                survey: "s".into(),
                cohort: 3,
                uploads: 1,
                merkle_root: "ab".into(),
                nonces: vec!["0f".repeat(16)],
                outcome,
            };
            let text = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<CohortResult>(&text).unwrap(), r);
        }
    }

    /// A planned survey of the services' test shape (four answers, `p₁ = 5`, cohorts of 12)
    /// and the registration its collector (key `[7; 32]`) sends.
    fn registration() -> Registration {
        let draft: orthomask_survey::draft::SurveyDraft =
            serde_json::from_value(serde_json::json!({
                "id": "s", "title": "T", "consent": "ok",
                "questions": [
                    {"id": "smoker", "label": "Smoke?", "kind": "yes_no"},
                    {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
                    {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250},
                    {"id": "score", "label": "Score", "kind": "number", "min": 0, "max": 100}
                ],
                "cohort_size": 12, "share_mode": false, "invitations": true
            }))
            .unwrap();
        let planned = orthomask_survey::draft::plan_survey(
            &draft,
            orthomask_survey::draft::Endpoints {
                provider: "http://m",
                right_services: &[],
            },
        )
        .unwrap();
        Registration::for_survey(&planned, &CollectorSigningKey::from_secret([7; 32]))
    }

    #[test]
    fn a_registration_is_checked_field_by_field() {
        let mut r = registration();
        let registered = r.check().unwrap();
        assert_eq!(r.p(), 5 + r.p2);
        assert_eq!(registered.floor, 6);
        r.share_services = 1;
        assert!(r.check().is_err());
        r.share_services = 0;
        // Found by the contract tester: p₂ = 2⁶⁴ − 1 overflowed p = p₁ + p₂ (a panic).
        r.p2 = usize::MAX;
        assert!(r.check().unwrap_err().contains("at most"));
        r.p2 = registration().p2;
        r.answers = usize::MAX;
        assert!(r.check().is_err());
        r.answers = 4;
        r.survey = "Bad Id".into();
        assert!(r.check().is_err());
    }

    /// Issue 20 §2: the attack of a collector that registers `p₁ = 1` and cohorts of two with
    /// the provider while its devices accept the real survey. Every number must be the signed
    /// template's; a minimum below the template's floor does not lower it; a template signed by
    /// another key, or below the policy's floors, is refused.
    #[test]
    fn a_registration_cannot_tell_the_services_another_design_than_the_devices_accept() {
        let honest = registration();
        for (field, edit) in [
            (
                "answers",
                (|r: &mut Registration| r.answers = 1) as fn(&mut Registration),
            ),
            ("cohort_size", |r| r.cohort_size = 2),
            ("p2", |r| r.p2 += 1),
            ("qa_constant", |r| r.qa_constant = None),
            ("sigma", |r| r.sigma *= 1.5),
        ] {
            let mut r = honest.clone();
            edit(&mut r);
            let e = r.check().unwrap_err();
            assert!(e.contains(field) || e.contains("p1"), "{field}: {e}");
        }
        let mut low = honest.clone();
        low.min_cohort_size = 2;
        assert_eq!(low.check().unwrap().floor, 6);
        // Above the cohort size (12) it could never be met: refused in the policy's words.
        let mut high = honest.clone();
        high.min_cohort_size = 13;
        assert_eq!(
            high.check().unwrap_err(),
            "min_cohort_size must be from 6 (the larger of p1 + 1 and the policy's anonymity \
             set) to the cohort size 12, got 13"
        );
        high.min_cohort_size = 12;
        assert_eq!(high.check().unwrap().floor, 12);
        let mut forged = honest.clone();
        forged.template = SignedDefinition::sign(&CollectorSigningKey::from_secret([8; 32]), &{
            let mut t: orthomask_survey::definition::SurveyDefinition =
                serde_json::from_str(&honest.template.definition).unwrap();
            t.masking.cohort_size = 2;
            t
        });
        assert!(forged.check().unwrap_err().contains("not signed"));
        // Signed by the right key, but a weak plan: refused as devices refuse it.
        let signing = CollectorSigningKey::from_secret([7; 32]);
        let mut weak: orthomask_survey::definition::SurveyDefinition =
            serde_json::from_str(&honest.template.definition).unwrap();
        weak.masking.cohort_size = 2;
        let mut r = honest.clone();
        r.template = SignedDefinition::sign(&signing, &weak);
        r.cohort_size = 2;
        let e = r.check().unwrap_err();
        assert!(e.starts_with("template:"), "{e}");
    }
}
