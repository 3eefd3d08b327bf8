//! What lets a participant's device and the accepting services trust what they receive: the
//! collector's signature on every survey definition, the one-use upload credential it hands out
//! with each definition, and the deployment a device may send to (issue 10).
//!
//! # Why signatures
//! * A definition decides where a device sends its masked answers and with which key it masks
//!   them. A device therefore accepts a definition only if the collector signed it
//!   ([`SignedDefinition::open`]) and every upload address in it belongs to the deployment that
//!   served the page ([`Deployment::check_destinations`]); a forged definition (another key,
//!   share mode off, uploads to its author) is refused before anything is masked.
//! * An accepting service (the masking service provider, a right-masking service) takes an upload
//!   only with a valid [`UploadCredential`]: signed by the collector, for this survey and cohort,
//!   not expired, and with a nonce it has not accepted before. Only whoever received a definition
//!   from the collector can upload, once.
//!
//! # Formats
//! Ed25519 (RFC 8032) through `ed25519-dalek`. Keys and signatures travel as lowercase hex. Each
//! signed message starts with its own context string, so a signature on one kind of message can
//! never be replayed as another:
//!
//! ```text
//! definition   "orthomask/signed-definition/v1\0" ‖ the definition's JSON text, byte for byte
//! credential   "orthomask/upload-credential/v1\0" ‖ u64le(len survey) ‖ survey ‖ u32le(cohort)
//!              ‖ u64le(len nonce) ‖ nonce ‖ u64le(expires_at)
//! ```
//!
//! A definition is signed as text, not as parsed values: the device verifies the exact bytes it
//! received and only then parses them, so no re-serialisation can change what was signed.
//!
//! Nothing here draws entropy or reads a clock: the signing key's secret and the nonces come
//! from the caller's operating system, the current time from the caller.

use crate::definition::{SurveyDefinition, SurveyError};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use orthomask_core::hex;
use serde::{Deserialize, Serialize};

/// Context prefix of a signed definition.
pub const DEFINITION_CONTEXT: &[u8] = b"orthomask/signed-definition/v1\0";
/// Context prefix of an upload credential.
pub const CREDENTIAL_CONTEXT: &[u8] = b"orthomask/upload-credential/v1\0";
/// Length of a credential nonce in bytes (128 bits: never repeated by chance).
pub const NONCE_BYTES: usize = 16;

/// Why a definition, a credential or a key is not trusted.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum TrustError {
    /// A key or signature that is not the hex it should be.
    #[error("{what} is not valid: {reason}")]
    Malformed {
        /// What was being read.
        what: &'static str,
        /// Why it is not valid.
        reason: String,
    },
    /// The definition's signature does not verify with the collector's key.
    #[error(
        "the survey definition from {source_name} is not signed by this deployment's collector; \
         it was refused and nothing was sent"
    )]
    DefinitionSignature {
        /// Where the definition came from.
        source_name: String,
    },
    /// A basic-protocol definition, not a demonstration, reached without an invitation: its
    /// device key would be anyone's who opens the link, the provider's included.
    #[error(
        "survey {survey:?} uses the basic protocol, whose device key lets whoever loads it read \
         every answer of its group, yet this page reached it without an invitation; it was \
         refused and nothing was sent"
    )]
    OpenBasicProtocol {
        /// The survey.
        survey: String,
    },
    /// A credential that does not name the device key of the definition handed out with it.
    #[error(
        "the upload credential names another device key than the survey definition handed out \
         with it; it was refused and nothing was sent"
    )]
    OtherDeviceKey,
    /// An upload address outside the deployment.
    #[error(
        "the survey definition sends answers to {url}, which is not one of this deployment's \
         services (expected {expected}); it was refused and nothing was sent"
    )]
    ForeignDestination {
        /// The address in the definition.
        url: String,
        /// What the deployment allows there.
        expected: String,
    },
    /// The signed text is not a valid definition.
    #[error(transparent)]
    Definition(#[from] SurveyError),
    /// The credential handed out with the definition is unusable.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// Signed, but below the policy's floors: a weak plan is refused whoever signed it.
    #[error(transparent)]
    BelowFloor(#[from] crate::floors::FloorError),
}

/// Why an upload credential is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CredentialError {
    /// No credential at all.
    #[error(
        "this upload carries no upload credential; load the survey from its collector to get one"
    )]
    Missing,
    /// A field that cannot be read.
    #[error("the upload credential's {field} is malformed: {reason}")]
    Malformed {
        /// Which field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// The signature does not verify with the collector's key.
    #[error("the upload credential is not signed by this survey's collector")]
    Signature,
    /// Issued for another survey.
    #[error("the upload credential is for survey {found:?}, not {expected:?}")]
    WrongSurvey {
        /// The survey of the upload.
        expected: String,
        /// The survey the credential names.
        found: String,
    },
    /// Issued for another cohort.
    #[error("the upload credential is for cohort {found}, not {expected}")]
    WrongCohort {
        /// The cohort of the upload.
        expected: u32,
        /// The cohort the credential names.
        found: u32,
    },
    /// Past its expiry.
    #[error(
        "the upload credential expired at {expires_at} (now {now}, seconds since 1970); reload \
         the survey to get a fresh one"
    )]
    Expired {
        /// Expiry, seconds since the Unix epoch.
        expires_at: u64,
        /// The verifier's time.
        now: u64,
    },
}

/// A credential nonce as it travels and is stored: 32 lowercase hex digits.
pub fn nonce_text(nonce: [u8; NONCE_BYTES]) -> String {
    hex::encode(&nonce)
}

/// The collector's signing key. Its secret comes from the caller's entropy and lives only in
/// the collector's key file; `Debug` never shows it.
#[derive(Clone)]
pub struct CollectorSigningKey(SigningKey);

impl std::fmt::Debug for CollectorSigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CollectorSigningKey(public {})",
            self.public_key().to_hex()
        )
    }
}

impl CollectorSigningKey {
    /// The key whose RFC 8032 secret is `secret` (32 bytes from the operating system).
    pub fn from_secret(secret: [u8; 32]) -> Self {
        Self(SigningKey::from_bytes(&secret))
    }

    /// The secret, for the key file.
    pub fn secret(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The secret as 64 lowercase hex digits (the collector's key file).
    pub fn secret_hex(&self) -> String {
        hex::encode(&self.0.to_bytes())
    }

    /// Read a secret written by [`CollectorSigningKey::secret_hex`] (surrounding whitespace
    /// ignored).
    ///
    /// # Errors
    /// [`TrustError::Malformed`] unless it is 64 hex digits.
    pub fn from_secret_hex(text: &str) -> Result<Self, TrustError> {
        hex::decode_array::<32>(text.trim())
            .map(Self::from_secret)
            .map_err(|e| TrustError::Malformed {
                what: "the collector's signing key",
                reason: e.to_string(),
            })
    }

    /// The public half, which the services and devices verify with.
    pub fn public_key(&self) -> CollectorPublicKey {
        CollectorPublicKey(self.0.verifying_key())
    }

    fn sign(&self, context: &[u8], message: &[u8]) -> String {
        let mut bytes = Vec::with_capacity(context.len() + message.len());
        bytes.extend_from_slice(context);
        bytes.extend_from_slice(message);
        hex::encode(&self.0.sign(&bytes).to_bytes())
    }
}

/// The collector's public key, as 64 hex digits on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CollectorPublicKey(VerifyingKey);

impl CollectorPublicKey {
    /// Read 64 hex digits.
    ///
    /// # Errors
    /// [`TrustError::Malformed`] for anything else, or a point that is not a valid key.
    pub fn from_hex(text: &str) -> Result<Self, TrustError> {
        let malformed = |reason: String| TrustError::Malformed {
            what: "the collector's public key",
            reason,
        };
        let bytes = hex::decode_array::<32>(text).map_err(|e| malformed(e.to_string()))?;
        VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|e| malformed(e.to_string()))
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0.as_bytes())
    }

    fn verifies(&self, context: &[u8], message: &[u8], signature_hex: &str) -> bool {
        let Ok(bytes) = hex::decode_array::<64>(signature_hex) else {
            return false;
        };
        let mut signed = Vec::with_capacity(context.len() + message.len());
        signed.extend_from_slice(context);
        signed.extend_from_slice(message);
        // verify_strict: no malleable signatures, no small-order keys.
        self.0
            .verify_strict(&signed, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

impl TryFrom<String> for CollectorPublicKey {
    type Error = TrustError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::from_hex(&text)
    }
}

impl From<CollectorPublicKey> for String {
    fn from(key: CollectorPublicKey) -> Self {
        key.to_hex()
    }
}

/// A survey definition as the collector hands it out: its JSON text and the collector's
/// signature on exactly that text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedDefinition {
    /// The definition's JSON text, as signed.
    pub definition: String,
    /// Ed25519 signature (128 hex digits) on [`DEFINITION_CONTEXT`] ‖ `definition`.
    pub signature: String,
}

impl SignedDefinition {
    /// Sign `definition` (its pretty JSON text).
    pub fn sign(key: &CollectorSigningKey, definition: &SurveyDefinition) -> Self {
        let text = definition.to_json();
        let signature = key.sign(DEFINITION_CONTEXT, text.as_bytes());
        Self {
            definition: text,
            signature,
        }
    }

    /// Verify the signature on the exact text, then parse and validate it.
    ///
    /// # Errors
    /// [`TrustError::DefinitionSignature`] when the signature does not verify with `key`;
    /// [`TrustError::Definition`] when the signed text is not a valid definition.
    pub fn open(
        &self,
        key: &CollectorPublicKey,
        source_name: &str,
    ) -> Result<SurveyDefinition, TrustError> {
        if !key.verifies(
            DEFINITION_CONTEXT,
            self.definition.as_bytes(),
            &self.signature,
        ) {
            return Err(TrustError::DefinitionSignature {
                source_name: source_name.to_owned(),
            });
        }
        Ok(SurveyDefinition::parse(&self.definition, source_name)?)
    }
}

impl SignedDefinition {
    /// Verify the signature on a *template* (a definition without its cohort's key, as the
    /// collector registers it with the accepting services: `SurveyDefinition::template`) and
    /// parse it. A template is not a definition a device could use (it has no key in the basic
    /// protocol), so only its content is validated here; the floors are the caller's
    /// (`crate::floors`).
    ///
    /// # Errors
    /// One line: the signature, the JSON, the content, or a template that carries a key or a
    /// cohort other than 0.
    pub fn open_template(&self, key: &CollectorPublicKey) -> Result<SurveyDefinition, String> {
        if !key.verifies(
            DEFINITION_CONTEXT,
            self.definition.as_bytes(),
            &self.signature,
        ) {
            return Err("template: not signed by the registration's collector key".into());
        }
        let template: SurveyDefinition = serde_json::from_str(&self.definition)
            .map_err(|e| format!("template: not a survey definition: {e}"))?;
        template
            .validate_content()
            .map_err(|e| format!("template: {e}"))?;
        if template != template.template() {
            return Err("template: a template carries no key and is cohort 0's".into());
        }
        Ok(template)
    }
}

/// The collector's permission for one upload: this survey, this cohort, one nonce, until a time.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadCredential {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// 128 random bits as 32 hex digits; each accepting service takes it once.
    pub nonce: String,
    /// Expiry, seconds since the Unix epoch (UTC).
    pub expires_at: u64,
    /// The digest of the cohort's device key ([`device_key_digest`]) the definition handed out
    /// with this credential carries; absent in share mode, where no device holds a key. Signed
    /// with the rest: every upload of a cohort must name the same one, so a collector that hands
    /// one participant a key of its own — whose row it could then find after the provider's mask
    /// and read (issue 43's adversarial review) — is refused by the provider, and a device refuses
    /// a credential that does not name its own key ([`Deployment::accept`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_digest: Option<String>,
    /// Ed25519 signature (128 hex digits) on the canonical bytes (module documentation).
    pub signature: String,
}

/// The digest of a device key as a credential names it: the SHA-256 (64 hex digits) of the
/// key's 64 hex digits as the definition writes them. It reveals nothing of the 256-bit key.
pub fn device_key_digest(right_mask_key_hex: &str) -> String {
    crate::merkle::sha256_hex(right_mask_key_hex.trim().as_bytes())
}

/// The device-key digest every credential handed out with `definition` names: its device key's
/// ([`device_key_digest`]), or none when it has none (share mode). The collector issues with it
/// and a device checks it ([`Deployment::accept`]).
pub fn credential_key_digest(definition: &SurveyDefinition) -> Option<String> {
    definition
        .masking
        .right_mask_key
        .as_deref()
        .map(device_key_digest)
}

impl UploadCredential {
    fn signed_bytes(
        survey: &str,
        cohort: u32,
        nonce: &str,
        expires_at: u64,
        key_digest: Option<&str>,
    ) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(112 + survey.len() + nonce.len());
        bytes.extend_from_slice(&(survey.len() as u64).to_le_bytes());
        bytes.extend_from_slice(survey.as_bytes());
        bytes.extend_from_slice(&cohort.to_le_bytes());
        bytes.extend_from_slice(&(nonce.len() as u64).to_le_bytes());
        bytes.extend_from_slice(nonce.as_bytes());
        bytes.extend_from_slice(&expires_at.to_le_bytes());
        // Appended only when present, length-prefixed: a credential without one signs the bytes
        // it always did.
        if let Some(digest) = key_digest {
            bytes.extend_from_slice(&(digest.len() as u64).to_le_bytes());
            bytes.extend_from_slice(digest.as_bytes());
        }
        bytes
    }

    /// Issue a credential with a fresh nonce (random bytes from the caller's operating system).
    pub fn issue(
        key: &CollectorSigningKey,
        survey: &str,
        cohort: u32,
        nonce: [u8; NONCE_BYTES],
        expires_at: u64,
    ) -> Self {
        Self::reissue(key, survey, cohort, &nonce_text(nonce), expires_at)
    }

    /// Sign a credential for a nonce issued before (an invitation reopened after a reload keeps
    /// its nonce, so at most one upload ever counts for it).
    pub fn reissue(
        key: &CollectorSigningKey,
        survey: &str,
        cohort: u32,
        nonce: &str,
        expires_at: u64,
    ) -> Self {
        Self::reissue_for_key(key, survey, cohort, nonce, expires_at, None)
    }

    /// [`Self::reissue`] naming the digest of the cohort's device key ([`device_key_digest`]),
    /// as the collector issues every basic-protocol credential.
    pub fn reissue_for_key(
        key: &CollectorSigningKey,
        survey: &str,
        cohort: u32,
        nonce: &str,
        expires_at: u64,
        key_digest: Option<String>,
    ) -> Self {
        let signature = key.sign(
            CREDENTIAL_CONTEXT,
            &Self::signed_bytes(survey, cohort, nonce, expires_at, key_digest.as_deref()),
        );
        Self {
            survey: survey.to_owned(),
            cohort,
            nonce: nonce.to_owned(),
            expires_at,
            key_digest,
            signature,
        }
    }

    /// What a device checks of the credential it was handed with a definition: the collector
    /// signed it, for `survey` and cohort `cohort`, with a well-formed nonce. Not its expiry: a
    /// device's clock may be hours off, and the services judge expiry by theirs ([`Self::check`]).
    ///
    /// # Errors
    /// [`CredentialError`] naming the first problem: malformed nonce, bad signature, other
    /// survey or cohort.
    pub fn check_issued(
        &self,
        key: &CollectorPublicKey,
        survey: &str,
        cohort: u32,
    ) -> Result<(), CredentialError> {
        hex::decode_array::<NONCE_BYTES>(&self.nonce).map_err(|e| CredentialError::Malformed {
            field: "nonce",
            reason: e.to_string(),
        })?;
        let bytes = Self::signed_bytes(
            &self.survey,
            self.cohort,
            &self.nonce,
            self.expires_at,
            self.key_digest.as_deref(),
        );
        if !key.verifies(CREDENTIAL_CONTEXT, &bytes, &self.signature) {
            return Err(CredentialError::Signature);
        }
        if self.survey != survey {
            return Err(CredentialError::WrongSurvey {
                expected: survey.to_owned(),
                found: self.survey.clone(),
            });
        }
        if self.cohort != cohort {
            return Err(CredentialError::WrongCohort {
                expected: cohort,
                found: self.cohort,
            });
        }
        Ok(())
    }

    /// What a service checks of the credential of an upload to `survey`, cohort `cohort`, at its
    /// time `now` (seconds since the Unix epoch): [`Self::check_issued`], and not expired — with
    /// [`CLOCK_SKEW_ALLOWANCE_SECONDS`](crate::policy::CLOCK_SKEW_ALLOWANCE_SECONDS) for a
    /// service whose clock is ahead of the collector's. The caller still has to check that the
    /// nonce is new.
    ///
    /// # Errors
    /// [`CredentialError`] naming the first problem: malformed nonce, bad signature, other
    /// survey or cohort, expired.
    pub fn check(
        &self,
        key: &CollectorPublicKey,
        survey: &str,
        cohort: u32,
        now: u64,
    ) -> Result<(), CredentialError> {
        self.check_issued(key, survey, cohort)?;
        let limit = self
            .expires_at
            .saturating_add(crate::policy::CLOCK_SKEW_ALLOWANCE_SECONDS);
        if now >= limit {
            return Err(CredentialError::Expired {
                expires_at: self.expires_at,
                now,
            });
        }
        Ok(())
    }
}

/// What the collector answers for `POST /api/surveys/{id}/definition`: the signed definition and
/// a credential for one upload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefinitionOffer {
    /// The signed definition.
    pub signed: SignedDefinition,
    /// The credential for this participant's upload.
    pub credential: UploadCredential,
}

/// The services of one deployment, as the collector publishes them (`GET /api/deployment`, same
/// origin as the web app it serves): where devices may send, and the key definitions are
/// signed with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// The collector's public key.
    pub collector_public_key: CollectorPublicKey,
    /// The collector's base URL.
    pub collector: String,
    /// The masking service provider's base URL.
    pub msp: String,
    /// The right-masking services' base URLs, by index (share mode).
    pub rights: Vec<String>,
    /// The build digest of the web app the collector serves ([`crate::app_build`]), when it
    /// serves one: what `orthomask audit --app` and the published builds are compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The build digests whose uploads the deployment's services accept
    /// ([`crate::app_build::check_claimed`]): the build it serves first, then earlier builds the
    /// survey team still accepts (devices that loaded the app before an update). Empty when it
    /// serves no app.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<String>,
}

impl Deployment {
    /// The upload address of survey `id` at the service with base URL `base`.
    pub fn upload_url(base: &str, id: &str) -> String {
        format!("{}/api/surveys/{id}/uploads", base.trim_end_matches('/'))
    }

    /// Check that every address `definition` sends to is this deployment's: the provider's
    /// upload address in the basic protocol, and in share mode one distinct right-masking
    /// service's upload address per share.
    ///
    /// # Errors
    /// [`TrustError::ForeignDestination`] naming the first address outside the deployment.
    pub fn check_destinations(&self, definition: &SurveyDefinition) -> Result<(), TrustError> {
        self.check_provider_address(&definition.id, &definition.upload_url)?;
        match &definition.masking.share_mode {
            Some(share) => self.check_share_addresses(&definition.id, &share.providers),
            None => Ok(()),
        }
    }

    /// Check that `url` is the provider's upload address of `survey`.
    ///
    /// # Errors
    /// [`TrustError::ForeignDestination`] when it is not.
    pub fn check_provider_address(&self, survey: &str, url: &str) -> Result<(), TrustError> {
        let msp_upload = Self::upload_url(&self.msp, survey);
        if url != msp_upload {
            return Err(TrustError::ForeignDestination {
                url: url.to_owned(),
                expected: msp_upload,
            });
        }
        Ok(())
    }

    /// Check that share mode's `urls` are distinct right-masking services' upload addresses of
    /// `survey`.
    ///
    /// # Errors
    /// [`TrustError::ForeignDestination`] naming the first address outside the deployment or
    /// given twice.
    pub fn check_share_addresses(&self, survey: &str, urls: &[String]) -> Result<(), TrustError> {
        let allowed: Vec<String> = self
            .rights
            .iter()
            .map(|base| Self::upload_url(base, survey))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for url in urls {
            if !allowed.contains(url) || !seen.insert(url.as_str()) {
                return Err(TrustError::ForeignDestination {
                    url: url.clone(),
                    expected: format!("one share to each of {}", allowed.join(", ")),
                });
            }
        }
        Ok(())
    }

    /// Everything a device checks before it masks anything: the definition's signature, the
    /// policy's floors (`crate::floors`: a QA column that can reveal a change, the cohort floor,
    /// the noise columns and σ at the Appendix C bound, three or more right-masking services and
    /// thick shares in share mode, DP noise that meets its own budget, a design the services hold
    /// — a weak plan is refused whoever signed it), its destinations and
    /// the credential handed out with it (signed, for the definition's survey and cohort:
    /// [`UploadCredential::check_issued`]; its expiry is the services' to judge, by their clocks,
    /// since the device's may be hours off).
    ///
    /// # Errors
    /// The first [`TrustError`].
    pub fn accept(
        &self,
        offer: &DefinitionOffer,
        source_name: &str,
    ) -> Result<SurveyDefinition, TrustError> {
        let definition = offer.signed.open(&self.collector_public_key, source_name)?;
        crate::floors::check(&definition)?;
        self.check_destinations(&definition)?;
        offer.credential.check_issued(
            &self.collector_public_key,
            &definition.id,
            definition.masking.cohort,
        )?;
        if offer.credential.key_digest != credential_key_digest(&definition) {
            return Err(TrustError::OtherDeviceKey);
        }
        Ok(definition)
    }
}

/// How a device reached a definition: through an invitation it was given, or by a link anyone
/// may open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// With an invitation token.
    ByInvitation,
    /// Without one.
    Openly,
}

/// What a device checks of how it reached `definition` (issue 43: every field of a signed
/// definition has a floor or a reason, and whether a survey is by invitation is not a field).
/// A basic-protocol definition carries the cohort's device key, from which `B_k` is built: reached
/// by a link anyone may open, it is the key of anyone who opens it — the provider's included,
/// which then reads every upload of the cohort. The collector's planner never makes such a survey
/// (`draft::DraftError::OpenBasicSurvey`), so a device that meets one was served it by a dishonest
/// collector, and refuses it — unless it is a demonstration (`masking.teaching`), whose keys are
/// published and which says so. Share mode holds no device key and may be open.
///
/// # Errors
/// [`TrustError::OpenBasicProtocol`].
pub fn check_reached(definition: &SurveyDefinition, reached: Reached) -> Result<(), TrustError> {
    let masking = &definition.masking;
    if reached == Reached::Openly && masking.share_mode.is_none() && !masking.teaching {
        return Err(TrustError::OpenBasicProtocol {
            survey: definition.id.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A basic-protocol survey opens without an invitation only as a demonstration; share mode
    /// and invitations open either way.
    #[test]
    fn a_basic_survey_reached_without_an_invitation_is_refused_unless_a_demonstration() {
        let mut d = definition();
        assert!(d.masking.teaching, "the sample is a demonstration");
        check_reached(&d, Reached::Openly).unwrap();
        d.masking.teaching = false;
        check_reached(&d, Reached::ByInvitation).unwrap();
        let e = check_reached(&d, Reached::Openly).unwrap_err();
        assert!(matches!(e, TrustError::OpenBasicProtocol { .. }), "{e}");
        assert!(!e.to_string().contains('\n'));
    }

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    /// RFC 8032 §7.1, TEST 1: the secret key and the public key it determines.
    const RFC8032_SECRET: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const RFC8032_PUBLIC: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

    fn key(seed: u8) -> CollectorSigningKey {
        CollectorSigningKey::from_secret([seed; 32])
    }

    fn deployment(key: &CollectorSigningKey) -> Deployment {
        Deployment {
            collector_public_key: key.public_key(),
            collector: "http://c".into(),
            msp: "http://m".into(),
            rights: vec!["http://r0".into(), "http://r1".into(), "http://r2".into()],
            build: None,
            builds: Vec::new(),
        }
    }

    fn definition() -> SurveyDefinition {
        let mut d = SurveyDefinition::parse(SAMPLE, "leaps-demo.json").unwrap();
        d.upload_url = Deployment::upload_url("http://m", &d.id);
        d
    }

    #[test]
    fn keys_follow_rfc_8032() {
        let secret = hex::decode_array::<32>(RFC8032_SECRET).unwrap();
        let key = CollectorSigningKey::from_secret(secret);
        assert_eq!(key.public_key().to_hex(), RFC8032_PUBLIC);
        assert_eq!(key.secret(), secret);
        assert!(!format!("{key:?}").contains(RFC8032_SECRET));
        let parsed = CollectorPublicKey::from_hex(RFC8032_PUBLIC).unwrap();
        assert_eq!(parsed, key.public_key());
        assert!(CollectorPublicKey::from_hex("abc").is_err());
        assert!(CollectorPublicKey::from_hex(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn a_signed_definition_opens_only_with_its_collectors_key_and_unchanged() {
        let (k, other) = (key(1), key(2));
        let signed = SignedDefinition::sign(&k, &definition());
        assert_eq!(signed.open(&k.public_key(), "s").unwrap(), definition());
        assert!(matches!(
            signed.open(&other.public_key(), "s"),
            Err(TrustError::DefinitionSignature { .. })
        ));
        // The attack of issue 10 §3: the same definition with the author's own right-mask key.
        let mut forged = signed.clone();
        let mut tampered = definition();
        tampered.masking.right_mask_key = Some("ab".repeat(32));
        forged.definition = tampered.to_json();
        let e = forged.open(&k.public_key(), "evil.example").unwrap_err();
        assert!(
            e.to_string()
                .contains("not signed by this deployment's collector"),
            "{e}"
        );
        // One changed byte of the text breaks it; so does a truncated signature.
        let mut one_byte = signed.clone();
        one_byte.definition = one_byte.definition.replacen("\"id\"", "\"id\" ", 1);
        assert!(one_byte.open(&k.public_key(), "s").is_err());
        let mut short = signed;
        short.signature.truncate(100);
        assert!(short.open(&k.public_key(), "s").is_err());
    }

    #[test]
    fn a_credential_is_checked_for_signature_survey_cohort_and_expiry() {
        let k = key(3);
        let public = k.public_key();
        let c = UploadCredential::issue(&k, "s", 2, [7; NONCE_BYTES], 1_000);
        assert_eq!(c.nonce, "07".repeat(NONCE_BYTES));
        c.check(&public, "s", 2, 999).unwrap();
        // A service whose clock runs up to the allowance ahead of the collector's still takes it.
        let allowance = crate::policy::CLOCK_SKEW_ALLOWANCE_SECONDS;
        c.check(&public, "s", 2, 1_000 + allowance - 1).unwrap();
        assert_eq!(
            c.check(&public, "s", 2, 1_000 + allowance),
            Err(CredentialError::Expired {
                expires_at: 1_000,
                now: 1_000 + allowance
            })
        );
        assert!(matches!(
            c.check(&public, "t", 2, 0),
            Err(CredentialError::WrongSurvey { .. })
        ));
        assert!(matches!(
            c.check(&public, "s", 3, 0),
            Err(CredentialError::WrongCohort { .. })
        ));
        // Forged: the cohort or the expiry changed after signing, or another key signed it.
        let mut moved = c.clone();
        moved.cohort = 3;
        assert_eq!(
            moved.check(&public, "s", 3, 0),
            Err(CredentialError::Signature)
        );
        let mut extended = c.clone();
        extended.expires_at = u64::MAX;
        assert_eq!(
            extended.check(&public, "s", 2, 5_000),
            Err(CredentialError::Signature)
        );
        let other = UploadCredential::issue(&key(4), "s", 2, [7; NONCE_BYTES], 1_000);
        assert_eq!(
            other.check(&public, "s", 2, 0),
            Err(CredentialError::Signature)
        );
        let mut bad_nonce = c.clone();
        bad_nonce.nonce = "not hex".into();
        assert!(matches!(
            bad_nonce.check(&public, "s", 2, 0),
            Err(CredentialError::Malformed { field: "nonce", .. })
        ));
        // A reissued credential keeps the nonce and verifies.
        let again = UploadCredential::reissue(&k, "s", 2, &c.nonce, 2_000);
        again.check(&public, "s", 2, 1_500).unwrap();
        assert_eq!(again.nonce, c.nonce);
    }

    #[test]
    fn a_definition_signed_as_credential_bytes_is_refused() {
        // Context separation: a credential signature never verifies as a definition signature.
        let k = key(5);
        let c = UploadCredential::issue(&k, "s", 0, [1; NONCE_BYTES], 10);
        let bytes =
            UploadCredential::signed_bytes(&c.survey, c.cohort, &c.nonce, c.expires_at, None);
        let as_definition = SignedDefinition {
            definition: String::from_utf8_lossy(&bytes).into_owned(),
            signature: c.signature,
        };
        assert!(matches!(
            as_definition.open(&k.public_key(), "s"),
            Err(TrustError::DefinitionSignature { .. })
        ));
    }

    /// The credential a collector issues with `d`: naming `d`'s device key, if it has one.
    fn credential_for(
        k: &CollectorSigningKey,
        d: &SurveyDefinition,
        cohort: u32,
    ) -> UploadCredential {
        UploadCredential::reissue_for_key(
            k,
            &d.id,
            cohort,
            &nonce_text([2; NONCE_BYTES]),
            100,
            credential_key_digest(d),
        )
    }

    /// Issue 43's adversarial review: a collector that hands one participant a definition with a
    /// key of its own — to find that row after the provider's mask and read it — must hand it a
    /// credential naming that key too (the device refuses one naming another), and the provider
    /// refuses a second key in one cohort. The digest is signed: changing it breaks the credential.
    #[test]
    fn a_credential_names_its_definitions_device_key_and_signs_it() {
        let k = key(11);
        let deployment = deployment(&k);
        let d = definition();
        let genuine = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &d),
            credential: credential_for(&k, &d, d.masking.cohort),
        };
        deployment.accept(&genuine, "s").unwrap();
        let mut retargeted = d.clone();
        retargeted.masking.right_mask_key = Some("ab".repeat(32));
        let with_old_credential = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &retargeted),
            credential: genuine.credential.clone(),
        };
        assert!(matches!(
            deployment.accept(&with_old_credential, "s"),
            Err(TrustError::OtherDeviceKey)
        ));
        let without = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &d),
            credential: UploadCredential::issue(&k, &d.id, d.masking.cohort, [2; NONCE_BYTES], 100),
        };
        assert!(matches!(
            deployment.accept(&without, "s"),
            Err(TrustError::OtherDeviceKey)
        ));
        let mut tampered = genuine.credential.clone();
        tampered.key_digest = Some(device_key_digest(&"ab".repeat(32)));
        assert!(matches!(
            tampered.check_issued(&k.public_key(), &d.id, d.masking.cohort),
            Err(CredentialError::Signature)
        ));
        assert_eq!(device_key_digest(&"ab".repeat(32)).len(), 64);
    }

    #[test]
    fn a_device_accepts_only_its_deployments_destinations() {
        let k = key(6);
        let deployment = deployment(&k);
        let d = definition();
        let offer = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &d),
            credential: credential_for(&k, &d, d.masking.cohort),
        };
        assert_eq!(deployment.accept(&offer, "s").unwrap(), d);
        // Signed by the collector, but uploading elsewhere: still refused.
        let mut foreign = d.clone();
        foreign.upload_url = "http://evil.example/api/surveys/leaps-demo/uploads".into();
        let offer_foreign = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &foreign),
            credential: offer.credential.clone(),
        };
        let e = deployment.accept(&offer_foreign, "s").unwrap_err();
        assert!(matches!(e, TrustError::ForeignDestination { .. }), "{e}");
        // Share mode: each share to a distinct right-masking service of the deployment.
        let mut shares = d.clone();
        shares.masking.right_mask_key = None;
        let floor = crate::policy::SHARE_SCALE * shares.answers_max();
        shares.masking.share_mode = Some(crate::definition::ShareMode {
            providers: vec![
                Deployment::upload_url("http://r0", &d.id),
                Deployment::upload_url("http://r1", &d.id),
                Deployment::upload_url("http://r2", &d.id),
            ],
            share_sigma: floor,
        });
        deployment.check_destinations(&shares).unwrap();
        let mut twice = shares.clone();
        if let Some(s) = twice.masking.share_mode.as_mut() {
            s.providers[1] = s.providers[0].clone();
        }
        assert!(deployment.check_destinations(&twice).is_err());
        // A credential for another cohort is refused before masking.
        let mut other_cohort = offer.clone();
        other_cohort.credential = credential_for(&k, &d, d.masking.cohort + 1);
        assert!(matches!(
            deployment.accept(&other_cohort, "s"),
            Err(TrustError::Credential(CredentialError::WrongCohort { .. }))
        ));
        // The device judges no expiry (issue 30 §3): whatever its clock says, the offer it has
        // just fetched is accepted, and the services judge the credential by their clocks.
        assert_eq!(deployment.accept(&offer, "s").unwrap(), d);
    }

    /// Issue 20 §3: a plan the collector itself signed is refused when it is below the policy's
    /// floors — `p₂ = 0` would hand the provider `‖x‖²`, the answer of a one-question survey.
    #[test]
    fn a_device_refuses_a_weak_plan_whoever_signed_it() {
        let k = key(9);
        let deployment = deployment(&k);
        for weaken in [
            (|d: &mut SurveyDefinition| d.masking.p2 = 0) as fn(&mut SurveyDefinition),
            |d| d.masking.qa_constant = None,
            |d| d.masking.cohort_size = 2,
            |d| d.masking.sigma /= 100.0,
            // Issue 43: a QA column that reveals nothing, a record the services cannot hold,
            // and DP noise far below what the definition's own (ε, δ) needs.
            |d| d.masking.qa_constant = Some(0.0),
            |d| d.masking.p2 = crate::policy::MAX_P + 1,
            |d| {
                d.masking.dp = Some(crate::definition::DpParameters {
                    epsilon: 1.0,
                    delta: 1e-5,
                    sigma: 1e-3,
                })
            },
        ] {
            let mut d = definition();
            weaken(&mut d);
            let offer = DefinitionOffer {
                signed: SignedDefinition::sign(&k, &d),
                credential: UploadCredential::issue(&k, &d.id, 0, [4; NONCE_BYTES], 100),
            };
            let e = deployment.accept(&offer, "s").unwrap_err();
            assert!(matches!(e, TrustError::BelowFloor(_)), "{e}");
            assert!(
                e.to_string().contains("refused and nothing was sent"),
                "{e}"
            );
        }
    }

    /// Issue 43 §1: a definition the collector signed that splits answers over two right-masking
    /// services — two of the deployment's three — is refused before anything is masked (with
    /// two, the collector and one service read yes/no answers); over all three it is accepted.
    #[test]
    fn a_device_refuses_share_mode_over_two_services() {
        let k = key(10);
        let deployment = deployment(&k);
        let mut shares = definition();
        shares.masking.right_mask_key = None;
        let providers: Vec<String> = deployment
            .rights
            .iter()
            .map(|base| Deployment::upload_url(base, &shares.id))
            .collect();
        shares.masking.share_mode = Some(crate::definition::ShareMode {
            providers,
            share_sigma: crate::policy::SHARE_SCALE * shares.answers_max(),
        });
        let offer = |d: &SurveyDefinition| DefinitionOffer {
            signed: SignedDefinition::sign(&k, d),
            credential: UploadCredential::issue(&k, &d.id, 0, [5; NONCE_BYTES], 100),
        };
        assert_eq!(deployment.accept(&offer(&shares), "s").unwrap(), shares);
        let mut two = shares.clone();
        if let Some(share) = two.masking.share_mode.as_mut() {
            share.providers.pop();
        }
        let e = deployment.accept(&offer(&two), "s").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("at least 3 right-masking services, got 2") && !text.contains('\n'),
            "{text}"
        );
        // The services open the registered template without the parser's masking checks; the
        // floors refuse it there (`crate::floors::check`).
        assert!(matches!(
            crate::floors::check(&two),
            Err(crate::floors::FloorError::TooFewShareServices {
                found: 2,
                needed: 3
            })
        ));
    }

    #[test]
    fn wire_forms_round_trip() {
        let k = key(8);
        let d = definition();
        let offer = DefinitionOffer {
            signed: SignedDefinition::sign(&k, &d),
            credential: UploadCredential::issue(&k, &d.id, 0, [9; NONCE_BYTES], 7),
        };
        let json = serde_json::to_string(&offer).unwrap();
        assert_eq!(
            serde_json::from_str::<DefinitionOffer>(&json).unwrap(),
            offer
        );
        let dep = deployment(&k);
        let json = serde_json::to_string(&dep).unwrap();
        assert!(json.contains(&k.public_key().to_hex()));
        assert_eq!(serde_json::from_str::<Deployment>(&json).unwrap(), dep);
        let bad = json.replace(&k.public_key().to_hex(), "00");
        assert!(serde_json::from_str::<Deployment>(&bad).is_err());
    }
}
