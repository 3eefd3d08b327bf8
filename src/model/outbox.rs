//! What waits on the device when a submission cannot be sent for lack of a connection (issue 13
//! §1): the **masked** uploads of one submission and nothing else — no answer, no question, no
//! language, no device key. It is stored in IndexedDB under its idempotency token
//! ([`crate::services::outbox`]) and sent when the connection returns; the services count a
//! token once, so sending it from two tabs or twice after a lost response stores one upload.
//!
//! No I/O here: the JSON a waiting submission is kept as, and the checks on reading it back.

use orthomask_survey::client::{Destination, Prepared};
use orthomask_survey::trust::{Deployment, TrustError};
use serde::{Deserialize, Serialize};

/// One submission waiting to be sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitingSubmission {
    /// Its idempotency token (the key in the store; every upload carries it).
    pub token: String,
    /// The survey id.
    pub survey: String,
    /// The cohort.
    pub cohort: u32,
    /// Where each masked upload goes, and the upload (one, or one share per right-masking
    /// service), as the participant client prepared it.
    pub destinations: Vec<Destination>,
}

/// Why a stored entry is not a waiting submission (it is shown, never sent).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WaitingError {
    /// Not the JSON of a waiting submission.
    #[error("a waiting upload on this device is unreadable ({0})")]
    Format(String),
    /// Its uploads disagree with it on the survey, cohort or token, or it has none.
    #[error("a waiting upload on this device is inconsistent ({0})")]
    Inconsistent(&'static str),
}

impl WaitingSubmission {
    /// What of `prepared` may wait: its destinations, and nothing of the answers. `None` for a
    /// submission that could never be sent (a demonstration: no credential).
    pub fn from_prepared(prepared: &Prepared) -> Option<Self> {
        let first = &prepared.destinations.first()?.upload;
        if prepared
            .destinations
            .iter()
            .any(|d| d.upload.credential.is_none())
        {
            return None;
        }
        Some(Self {
            token: first.token.clone(),
            survey: first.survey.clone(),
            cohort: first.cohort,
            destinations: prepared.destinations.clone(),
        })
    }

    /// Masked numbers per upload.
    pub fn values_per_upload(&self) -> usize {
        self.destinations
            .first()
            .map_or(0, |d| d.upload.values.len())
    }

    /// Check what was read back from the device's storage, as the form checked the definition
    /// it came from (`Deployment::accept`), before anything of it is sent: every address is this
    /// deployment's (the provider's, or in share mode distinct right-masking services'), and
    /// every credential is the collector's for this survey and cohort (its expiry is the
    /// services' to judge, by their clocks: this device's may be hours off). A stored entry
    /// someone edited to send elsewhere, or with a forged credential, is refused.
    ///
    /// # Errors
    /// The first [`TrustError`].
    pub fn check(&self, deployment: &Deployment) -> Result<(), TrustError> {
        let urls: Vec<String> = self.destinations.iter().map(|d| d.url.clone()).collect();
        match urls.as_slice() {
            [one] => deployment.check_provider_address(&self.survey, one)?,
            shares => deployment.check_share_addresses(&self.survey, shares)?,
        }
        for d in &self.destinations {
            if let Some(credential) = &d.upload.credential {
                credential.check_issued(
                    &deployment.collector_public_key,
                    &self.survey,
                    self.cohort,
                )?;
            }
        }
        Ok(())
    }

    /// The stored text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Read a stored text back, checking that every upload belongs to it.
    ///
    /// # Errors
    /// [`WaitingError`].
    pub fn from_json(text: &str) -> Result<Self, WaitingError> {
        let waiting: Self =
            serde_json::from_str(text).map_err(|e| WaitingError::Format(e.to_string()))?;
        if waiting.destinations.is_empty() {
            return Err(WaitingError::Inconsistent("no upload"));
        }
        if waiting.destinations.iter().any(|d| {
            d.upload.token != waiting.token
                || d.upload.survey != waiting.survey
                || d.upload.cohort != waiting.cohort
                || d.upload.credential.is_none()
        }) {
            return Err(WaitingError::Inconsistent(
                "an upload of another survey, cohort or token, or without its credential",
            ));
        }
        Ok(waiting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::client::Client;
    use orthomask_survey::coding::Answer;
    use orthomask_survey::definition::SurveyDefinition;
    use orthomask_survey::trust::{CollectorSigningKey, UploadCredential};

    const LEAPS: &str = include_str!("../../www/surveys/leaps-demo.json");
    const TOKEN: &str = "waiting-token-0123456789";

    /// Answers chosen to be recognisable in any text: 0.0625, 61, 37, 88.5.
    fn prepared(credential: bool) -> (SurveyDefinition, Prepared) {
        let survey = SurveyDefinition::parse(LEAPS, "leaps-demo.json").unwrap();
        let answers = [
            Answer::YesNo(true),
            Answer::YesNo(false),
            Answer::Number(0.0625),
            Answer::Integer(61),
            Answer::Integer(37),
            Answer::YesNo(true),
            Answer::YesNo(false),
            Answer::Number(88.5),
        ];
        let mut client = Client::new(&survey).unwrap();
        if credential {
            let signer = CollectorSigningKey::from_secret([3; 32]);
            client = client.with_credential(UploadCredential::issue(
                &signer,
                &survey.id,
                survey.masking.cohort,
                [4; 16],
                u64::MAX,
            ));
        }
        let p = client
            .prepare(
                &answers,
                TOKEN,
                &orthomask_core::key::Key::from_bytes([9; 32]),
            )
            .unwrap();
        (survey, p)
    }

    #[test]
    fn only_the_masked_uploads_wait_and_they_read_back_identically() {
        let (_, p) = prepared(true);
        let waiting = WaitingSubmission::from_prepared(&p).unwrap();
        assert_eq!(waiting.token, TOKEN);
        assert_eq!(waiting.destinations, p.destinations);
        let text = waiting.to_json();
        assert_eq!(WaitingSubmission::from_json(&text).unwrap(), waiting);
        // No answer is in what waits: none of the answers' numbers appears among its numbers.
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
        let values = stored["destinations"][0]["upload"]["values"]
            .as_array()
            .unwrap();
        for answer in [0.0625, 61.0, 37.0, 88.5] {
            assert!(
                values.iter().all(|v| v.as_f64() != Some(answer)),
                "{answer}"
            );
            assert!(!text.contains(&format!("\"{answer}\"")), "{answer}");
        }
        let keys: Vec<&String> = stored.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["cohort", "destinations", "survey", "token"]);
    }

    fn deployment(signer: &CollectorSigningKey) -> Deployment {
        Deployment {
            collector_public_key: signer.public_key(),
            collector: "http://c".into(),
            msp: "http://c".into(),
            rights: vec!["http://r0".into(), "http://r1".into()],
            build: None,
            builds: Vec::new(),
        }
    }

    /// The attack on the stored entry: edited to send elsewhere, or carrying a credential another
    /// key signed or whose expiry was moved, it fails the checks the definition passed before the
    /// form showed.
    #[test]
    fn a_stored_entry_edited_to_send_elsewhere_or_with_a_forged_credential_is_refused() {
        let (survey, p) = prepared(true);
        let mut waiting = WaitingSubmission::from_prepared(&p).unwrap();
        waiting.destinations[0].url = Deployment::upload_url("http://c", &survey.id);
        let genuine = deployment(&CollectorSigningKey::from_secret([3; 32]));
        waiting.check(&genuine).unwrap();
        let mut elsewhere = waiting.clone();
        elsewhere.destinations[0].url = "http://evil.example/api/surveys/leaps-demo/uploads".into();
        assert!(matches!(
            elsewhere.check(&genuine),
            Err(TrustError::ForeignDestination { .. })
        ));
        let forger = deployment(&CollectorSigningKey::from_secret([8; 32]));
        assert!(matches!(
            waiting.check(&forger),
            Err(TrustError::Credential(_))
        ));
        let mut expired = waiting.clone();
        if let Some(c) = expired.destinations[0].upload.credential.as_mut() {
            c.expires_at = 1;
        }
        assert!(matches!(
            expired.check(&genuine),
            Err(TrustError::Credential(_))
        ));
    }

    #[test]
    fn a_demonstration_never_waits_and_a_tampered_entry_is_refused() {
        let (_, p) = prepared(false);
        assert_eq!(WaitingSubmission::from_prepared(&p), None);
        let (_, p) = prepared(true);
        let waiting = WaitingSubmission::from_prepared(&p).unwrap();
        let mut other = waiting.clone();
        other.destinations[0].upload.token = "another-token-0123456789".into();
        assert!(matches!(
            WaitingSubmission::from_json(&other.to_json()),
            Err(WaitingError::Inconsistent(_))
        ));
        let mut empty = waiting;
        empty.destinations.clear();
        assert!(WaitingSubmission::from_json(&empty.to_json()).is_err());
        let e = WaitingSubmission::from_json("{").unwrap_err().to_string();
        assert!(
            e.starts_with("a waiting upload on this device is unreadable"),
            "{e}"
        );
    }
}
