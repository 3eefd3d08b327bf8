//! The protocol messages of the participant's device: the upload (a masked vector, or one share
//! in share mode, with an idempotency token) and the receipt a service returns for it.
//!
//! The receipt names the upload by [`Upload::hash`], a SHA-256 over a canonical encoding, so a
//! participant can check that the service stored exactly what left the device and later find it
//! in the cohort's published receipt list (`docs/openapi.yaml`).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a device uploads: the masked vector (or, in share mode, one share) with an idempotency
/// token so a retried upload is stored once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upload {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Random token chosen by the device (16–128 characters from `A–Z a–z 0–9 - _`).
    pub token: String,
    /// The masked vector `x·B_k` (length `p`), or the device's share in share mode.
    pub values: Vec<f64>,
    /// The collector's permission for this upload ([`crate::trust`]). Optional in the type so
    /// that a service can answer its absence with 401 rather than a parse error; every
    /// accepting service refuses an upload without a valid one. Not part of [`Upload::hash`]:
    /// the receipt names the stored values, and a nonce is accepted once anyway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<crate::trust::UploadCredential>,
    /// [`SurveyDefinition::template_digest`](crate::definition::SurveyDefinition::template_digest)
    /// of the definition the device accepted: an accepting service takes the upload only if it
    /// is the digest of the survey's registered, collector-signed template, so the cohort rules
    /// it enforces are the ones the device checked (issue 20 §2). Empty when absent, which no
    /// service accepts; not part of [`Upload::hash`], which names the stored values.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub definition: String,
    /// The build digest of the web app that made the upload ([`crate::app_build`], issue 27
    /// §2): an accepting service takes it only when the deployment publishes it as accepted
    /// ([`crate::app_build::check_claimed`]) and counts its receipts by it. Empty when the
    /// client names none; not part of [`Upload::hash`], which names the stored values.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub build: String,
}

/// Why a service refuses an upload's shape.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum UploadError {
    /// The upload names another survey than the address it was sent to.
    #[error("upload is for survey {found:?}, not {expected:?}")]
    WrongSurvey {
        /// The survey of the address.
        expected: String,
        /// The survey the upload names.
        found: String,
    },
    /// The idempotency token breaks its rule.
    #[error("idempotency token must be 16-128 characters from A-Z a-z 0-9 - _")]
    Token,
    /// A vector of another length than the survey's `p`.
    #[error("upload has {found} values, the survey expects {expected}")]
    Length {
        /// The survey's `p`.
        expected: usize,
        /// Values sent.
        found: usize,
    },
    /// NaN or an infinity.
    #[error("value {index} is not a finite number")]
    NotFinite {
        /// 0-based position of the first such value.
        index: usize,
    },
}

impl Upload {
    /// SHA-256 over a canonical encoding (survey, cohort, token, then each value's IEEE bits,
    /// little-endian, each variable-length part prefixed by its length as a little-endian `u64`),
    /// as lowercase hex: the receipt a participant keeps.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update((self.survey.len() as u64).to_le_bytes());
        hasher.update(self.survey.as_bytes());
        hasher.update(self.cohort.to_le_bytes());
        hasher.update((self.token.len() as u64).to_le_bytes());
        hasher.update(self.token.as_bytes());
        hasher.update((self.values.len() as u64).to_le_bytes());
        for v in &self.values {
            hasher.update(v.to_bits().to_le_bytes());
        }
        orthomask_core::hex::encode(&hasher.finalize())
    }

    /// Check shape and values against what the survey expects.
    ///
    /// # Errors
    /// [`UploadError`]: wrong survey, bad token, wrong length (naming both), non-finite value
    /// (naming its index).
    pub fn validate(&self, survey: &str, expected_len: usize) -> Result<(), UploadError> {
        if self.survey != survey {
            return Err(UploadError::WrongSurvey {
                expected: survey.to_owned(),
                found: self.survey.clone(),
            });
        }
        let token_ok = (16..=128).contains(&self.token.len())
            && self
                .token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !token_ok {
            return Err(UploadError::Token);
        }
        if self.values.len() != expected_len {
            return Err(UploadError::Length {
                expected: expected_len,
                found: self.values.len(),
            });
        }
        if let Some(index) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(UploadError::NotFinite { index });
        }
        Ok(())
    }
}

/// What the provider returns for an accepted upload; the participant may save it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// [`Upload::hash`] of the stored upload.
    pub upload_hash: String,
    /// When the provider stored it (RFC 3339, UTC).
    pub received_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Upload {
        Upload {
            survey: "s".into(),
            cohort: 0,
            token: "abcdefghijklmnop".into(),
            values: vec![1.0, 2.0],
            credential: None,
            definition: String::new(),
            build: String::new(),
        }
    }

    #[test]
    fn upload_hash_and_validation() {
        let u = sample();
        assert_eq!(u.hash().len(), 64);
        let mut v = u.clone();
        v.values[1] = 2.000_000_000_000_001;
        assert_ne!(u.hash(), v.hash());
        assert!(u.validate("s", 2).is_ok());
        assert_eq!(
            u.validate("s", 3).unwrap_err().to_string(),
            "upload has 2 values, the survey expects 3"
        );
        assert!(matches!(
            u.validate("t", 2),
            Err(UploadError::WrongSurvey { .. })
        ));
        let mut bad = u.clone();
        bad.values[0] = f64::NAN;
        assert_eq!(
            bad.validate("s", 2).unwrap_err().to_string(),
            "value 0 is not a finite number"
        );
        let mut short = u;
        short.token = "x".into();
        assert_eq!(short.validate("s", 2), Err(UploadError::Token));
    }

    /// What a device sends is what a service reads, to the bit: every finite double (drawn
    /// from its bits, so subnormals, extremes and both zeros come up) written as JSON and read
    /// back — from the text, as a service reads a request, and through a parsed JSON value, as
    /// one reads a body again to name what is wrong with it. Fails in a build of this crate
    /// without serde_json's `float_roundtrip` (some of these values come back a unit in the
    /// last place off).
    #[test]
    fn values_read_back_bit_for_bit_from_json_text_and_through_a_json_value() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut values = vec![0.0, -0.0, f64::MIN_POSITIVE, f64::MAX, -f64::MAX, 5e-324];
        while values.len() < 2000 {
            // splitmix64: a fixed, portable stream of bit patterns.
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let v = f64::from_bits(z ^ (z >> 31));
            if v.is_finite() {
                values.push(v);
            }
        }
        let sent = Upload { values, ..sample() };
        let text = serde_json::to_string(&sent).unwrap();
        let bits = |u: &Upload| u.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let from_text: Upload = serde_json::from_str(&text).unwrap();
        assert_eq!(bits(&from_text), bits(&sent));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let through_value: Upload = serde_json::from_value(value).unwrap();
        assert_eq!(bits(&through_value), bits(&sent));
        assert_eq!(from_text.hash(), sent.hash());
    }

    /// The encoding is fixed: a receipt list keeps these hashes for good. Reference value
    /// computed once with Python's hashlib over the same bytes:
    /// `sha256(pack('<Q',1)+b's'+pack('<I',0)+pack('<Q',16)+b'abcdefghijklmnop'+pack('<Q',2)
    /// +pack('<d',1.0)+pack('<d',2.0)).hexdigest()`.
    #[test]
    fn the_canonical_encoding_is_stable() {
        assert_eq!(
            sample().hash(),
            "1fba997f0fa82cc223a53176802e29fece85de626fde2946845f1ac773d0bb6b"
        );
    }
}
