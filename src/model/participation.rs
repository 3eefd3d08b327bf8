//! Which survey the participant page may open, and whether to trust it (issue 10 §3).
//!
//! The page opens a survey in one of two ways, and in no other:
//!
//! * **From its collector**: `#/participate?survey=ID[&invite=TOKEN]`. `ID` must be a survey id;
//!   the page fetches the deployment from its own origin ([`DEPLOYMENT_PATH`]) and takes a place
//!   with `POST` [`definition_path`] (the invitation in the JSON body, [`place_request`]: never
//!   in an address, and never a `GET` another site could trigger — issue 20 §7), and masks
//!   nothing until [`accept`] has checked the collector's signature, the policy's floors, every
//!   upload address and the upload credential (`orthomask_survey::trust::Deployment::accept`),
//!   and — a basic-protocol survey, not a demonstration — that it came with an invitation
//!   (`orthomask_survey::trust::check_reached`).
//!   A link can therefore never point the page at a definition elsewhere: there is no URL in
//!   the route to follow.
//! * **As a demonstration**: `#/participate?demo=NAME`, `NAME` one of the bundled
//!   [`DEMONSTRATIONS`], loaded from the app's own files ([`demonstration_path`]). It uses a
//!   published teaching key, so nothing is ever sent ([`Access::Demonstration`]).
//!
//! No I/O here: the services fetch, this module decides.

use orthomask_survey::definition::{SurveyDefinition, SurveyError, valid_survey_id};
use orthomask_survey::floors::FloorError;
pub use orthomask_survey::trust::Reached;
use orthomask_survey::trust::{
    DefinitionOffer, Deployment, TrustError, UploadCredential, check_reached,
};

/// The demonstration surveys bundled with the app (`www/surveys/NAME.json`), in the order the
/// participant page lists them (their titles there come from the catalogue: `locales/`).
pub const DEMONSTRATIONS: [&str; 4] = [
    "leaps-demo",
    "wellbeing-optional",
    "shares-demo",
    "habits-branching",
];

/// Where the collector that served the page publishes its deployment (same origin).
pub const DEPLOYMENT_PATH: &str = "/api/deployment";

/// Where the page may load a survey from, as read from its route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A survey of the collector that served the page, with an invitation token if any.
    Collector {
        /// The survey id (checked with `valid_survey_id`).
        survey: String,
        /// The invitation token, as given.
        invite: Option<String>,
    },
    /// A bundled demonstration (one of [`DEMONSTRATIONS`]).
    Demonstration {
        /// Its name.
        name: &'static str,
    },
}

/// Why a route names no survey the page may open. Nothing is fetched for any of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// `survey=` is not a survey id (a URL, a path, anything else).
    #[error(
        "{given:?} is not a survey id (1 to 64 characters from a-z, 0-9, - and _); this page \
         loads surveys only from the collector that served it, so nothing was fetched"
    )]
    NotASurveyId {
        /// What the link gave.
        given: String,
    },
    /// `demo=` names no bundled demonstration.
    #[error("{given:?} is not one of the demonstration surveys ({known}); nothing was fetched")]
    UnknownDemonstration {
        /// What the link gave.
        given: String,
        /// The bundled names.
        known: String,
    },
    /// Both `survey=` and `demo=`.
    #[error(
        "this link names both a survey and a demonstration; open the link your survey team sent \
         you again"
    )]
    Ambiguous,
}

/// The survey a route names: `Ok(None)` when it names none (the page lists the demonstrations).
///
/// # Errors
/// [`SourceError`] for anything that is not a survey id or a bundled demonstration.
pub fn source_from_query(pairs: &[(String, String)]) -> Result<Option<Source>, SourceError> {
    let value = |key: &str| {
        pairs
            .iter()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.clone())
    };
    match (value("survey"), value("demo")) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(SourceError::Ambiguous),
        (Some(survey), None) => {
            if !valid_survey_id(&survey) {
                return Err(SourceError::NotASurveyId { given: survey });
            }
            Ok(Some(Source::Collector {
                survey,
                invite: value("invite"),
            }))
        }
        (None, Some(given)) => DEMONSTRATIONS
            .into_iter()
            .find(|name| *name == given)
            .map(|name| Some(Source::Demonstration { name }))
            .ok_or_else(|| SourceError::UnknownDemonstration {
                given,
                known: DEMONSTRATIONS.join(", "),
            }),
    }
}

/// The page's link to demonstration `name`.
pub fn demonstration_link(name: &str) -> String {
    format!("#/participate?demo={name}")
}

/// Where a demonstration's definition lies among the app's own files.
pub fn demonstration_path(name: &str) -> String {
    format!("surveys/{name}.json")
}

/// Where the collector hands out a place in `survey` — a cohort, its signed definition and an
/// upload credential (same origin, a path only): `POST` with the JSON body [`place_request`].
/// The address never holds the invitation.
pub fn definition_path(survey: &str) -> String {
    format!("/api/surveys/{}/definition", percent_encode(survey))
}

/// The JSON body of the request for a place: `{"invite": TOKEN}`, or `{}` for a survey open to
/// anyone. Sent with `Content-Type: application/json`, which no other site's page can send
/// here without the collector's consent (a CORS preflight it refuses).
pub fn place_request(invite: Option<&str>) -> String {
    match invite {
        Some(token) => serde_json::json!({ "invite": token }).to_string(),
        None => "{}".to_owned(),
    }
}

/// Percent-encode everything but the URL standard's unreserved characters (`A–Z a–z 0–9 - . _
/// ~`), byte by byte of the UTF-8 text.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// What a page may do with an opened survey.
#[derive(Clone, Debug, PartialEq)]
pub enum Access {
    /// Send, with the collector's credential and the page's build digest
    /// ([`crate::model::own_build`], empty until checked or where none is published) in every
    /// upload.
    Collector(UploadCredential, String),
    /// Practise only: nothing is sent (there is no credential, and the key is published).
    Demonstration,
}

/// Why a survey from the collector is not opened. Nothing is masked or sent after any of these.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum AcceptError {
    /// `/api/deployment` is not a deployment.
    #[error(
        "this site's deployment description ({DEPLOYMENT_PATH}) is not valid ({0}); nothing was sent"
    )]
    Deployment(String),
    /// The offer is not an offer.
    #[error("the survey offer from {source_name} is not valid ({reason}); nothing was sent")]
    Offer {
        /// Where it came from.
        source_name: String,
        /// Why.
        reason: String,
    },
    /// The collector signed a definition of another survey than the link names.
    #[error(
        "the link names survey {requested:?} but {source_name} sent survey {found:?}; it was \
         refused and nothing was sent"
    )]
    OtherSurvey {
        /// The survey the link names.
        requested: String,
        /// Where the offer came from.
        source_name: String,
        /// The survey of the signed definition.
        found: String,
    },
    /// A signature, an upload address or the credential failed the deployment's checks.
    #[error(transparent)]
    Trust(#[from] TrustError),
}

/// Why the participant page shows no form for a collector's survey. Nothing was masked or sent
/// after any of these; the page says each in the participant's language.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Unopened {
    /// The collector could not be reached (the device is offline, or the network failed). A
    /// survey opens only with a connection: nothing of an offer is kept on the device
    /// (issue 20 §6), so the page opens it again when the connection returns.
    #[error("the collector could not be reached, and a survey opens only with a connection")]
    NeedsConnection,
    /// Correctly signed, but below the policy's floors (`orthomask_survey::floors`): a weak plan
    /// is refused whoever signed it.
    #[error(transparent)]
    WeakPlan(FloorError),
    /// Any other reason, one line: a refusal of the collector, a forged or foreign offer, a link
    /// that names no survey.
    #[error("{0}")]
    Refused(String),
}

impl From<AcceptError> for Unopened {
    fn from(e: AcceptError) -> Self {
        match e {
            AcceptError::Trust(TrustError::BelowFloor(floor)) => Self::WeakPlan(floor),
            other => Self::Refused(other.to_string()),
        }
    }
}

/// Check an offer for survey `requested` (the texts the collector answered) against the
/// deployment: the signature on the exact definition text, every upload address, the credential
/// (signed for this survey and cohort; its expiry is the services' to judge, by their clocks),
/// that it is the survey the link names, and that a basic-protocol survey came with an
/// invitation unless it is a demonstration (`orthomask_survey::trust::check_reached`).
///
/// # Errors
/// The first [`AcceptError`].
pub fn accept(
    deployment_text: &str,
    offer_text: &str,
    requested: &str,
    source_name: &str,
    reached: Reached,
) -> Result<(SurveyDefinition, Access), AcceptError> {
    let deployment: Deployment = serde_json::from_str(deployment_text)
        .map_err(|e| AcceptError::Deployment(e.to_string()))?;
    let offer: DefinitionOffer =
        serde_json::from_str(offer_text).map_err(|e| AcceptError::Offer {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })?;
    let definition = deployment.accept(&offer, source_name)?;
    check_reached(&definition, reached)?;
    if definition.id != requested {
        return Err(AcceptError::OtherSurvey {
            requested: requested.to_owned(),
            source_name: source_name.to_owned(),
            found: definition.id,
        });
    }
    Ok((
        definition,
        Access::Collector(offer.credential, String::new()),
    ))
}

/// The build digest the collector names for the app it serves (`Deployment::build`,
/// `orthomask_survey::app_build`), from the deployment description an offer was accepted
/// against: what the participant page shows so that anyone can check the served app with
/// `orthomask audit --app ORIGIN --expect DIGEST` (issue 27). `None` without one.
pub fn served_build(deployment_text: &str) -> Option<String> {
    serde_json::from_str::<Deployment>(deployment_text)
        .ok()?
        .build
        .filter(|b| b.len() == 64 && b.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// Why a bundled demonstration cannot be opened.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum DemonstrationError {
    /// The bundled file is not a valid definition.
    #[error(transparent)]
    Definition(#[from] SurveyError),
    /// A bundled file without a teaching key is no demonstration.
    #[error("{0} does not use a published teaching key, so it is not shown as a demonstration")]
    NotTeaching(String),
}

/// Open a bundled demonstration's text: it must be a valid definition with a teaching key.
///
/// # Errors
/// [`DemonstrationError`].
pub fn open_demonstration(
    text: &str,
    source_name: &str,
) -> Result<(SurveyDefinition, Access), DemonstrationError> {
    let definition = SurveyDefinition::parse(text, source_name)?;
    if !definition.masking.teaching {
        return Err(DemonstrationError::NotTeaching(source_name.to_owned()));
    }
    Ok((definition, Access::Demonstration))
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::trust::{
        CollectorSigningKey, SignedDefinition, credential_key_digest, nonce_text,
    };

    const LEAPS: &str = include_str!("../../www/surveys/leaps-demo.json");
    const SHARES: &str = include_str!("../../www/surveys/shares-demo.json");
    const BASE: &str = "https://collector.example";
    const NOW: u64 = 1_800_000_000;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn key(seed: u8) -> CollectorSigningKey {
        CollectorSigningKey::from_secret([seed; 32])
    }

    fn deployment_text(key: &CollectorSigningKey) -> String {
        serde_json::to_string(&Deployment {
            collector_public_key: key.public_key(),
            collector: BASE.into(),
            msp: BASE.into(),
            rights: (0..3).map(|i| format!("{BASE}/right/{i}")).collect(),
            build: None,
            builds: Vec::new(),
        })
        .unwrap()
    }

    /// The page shows the build the collector names, and nothing for a deployment without one
    /// or with something that is not a SHA-256 digest.
    #[test]
    fn the_served_build_is_read_from_the_deployment() {
        let signer = key(1);
        assert_eq!(served_build(&deployment_text(&signer)), None);
        let mut d: serde_json::Value = serde_json::from_str(&deployment_text(&signer)).unwrap();
        let digest = "a374af39bf4644dd6cece5bd3f6b2765e9e7a5193660148437a7e69c5da7b506";
        d["build"] = digest.into();
        assert_eq!(served_build(&d.to_string()).as_deref(), Some(digest));
        d["build"] = "<script>".into();
        assert_eq!(served_build(&d.to_string()), None);
        assert_eq!(served_build("not json"), None);
    }

    /// A bundled survey pointed at the deployment of [`deployment_text`].
    fn pointed(text: &str) -> SurveyDefinition {
        let mut d = SurveyDefinition::parse(text, "bundled").unwrap();
        d.upload_url = Deployment::upload_url(BASE, &d.id);
        if let Some(share) = d.masking.share_mode.as_mut() {
            for (i, url) in share.providers.iter_mut().enumerate() {
                *url = Deployment::upload_url(&format!("{BASE}/right/{i}"), &d.id);
            }
        }
        d
    }

    fn offer_text(signer: &CollectorSigningKey, d: &SurveyDefinition, expires_at: u64) -> String {
        let offer = DefinitionOffer {
            signed: SignedDefinition::sign(signer, d),
            credential: UploadCredential::reissue_for_key(
                signer,
                &d.id,
                d.masking.cohort,
                &nonce_text([5; 16]),
                expires_at,
                credential_key_digest(d),
            ),
        };
        serde_json::to_string(&offer).unwrap()
    }

    #[test]
    fn a_route_names_a_survey_id_or_a_bundled_demonstration_and_nothing_else() {
        assert_eq!(source_from_query(&[]), Ok(None));
        assert_eq!(
            source_from_query(&pairs(&[("survey", "leaps-demo"), ("invite", "a b&c")])),
            Ok(Some(Source::Collector {
                survey: "leaps-demo".into(),
                invite: Some("a b&c".into())
            }))
        );
        assert_eq!(
            source_from_query(&pairs(&[("demo", "shares-demo")])),
            Ok(Some(Source::Demonstration {
                name: "shares-demo"
            }))
        );
        // The attack of issue 10 §3: a link to the genuine app with a definition elsewhere.
        for given in [
            "http://evil.example/def.json",
            "surveys/leaps-demo.json",
            "data:application/json,{}",
            "../api/deployment",
            "Leaps",
            "a.b",
        ] {
            let e = source_from_query(&pairs(&[("survey", given)])).unwrap_err();
            assert!(matches!(e, SourceError::NotASurveyId { .. }), "{given}");
            assert!(e.to_string().contains("nothing was fetched"), "{e}");
        }
        for given in ["../../etc/passwd", "evil", "http://evil.example/x"] {
            assert!(matches!(
                source_from_query(&pairs(&[("demo", given)])),
                Err(SourceError::UnknownDemonstration { .. })
            ));
        }
        assert_eq!(
            source_from_query(&pairs(&[("survey", "s"), ("demo", "leaps-demo")])),
            Err(SourceError::Ambiguous)
        );
    }

    /// Issue 20 §7: the address of a place never holds the invitation; the body does, as JSON.
    #[test]
    fn a_place_is_asked_for_by_path_with_the_invitation_in_the_json_body() {
        assert_eq!(
            definition_path("leaps-demo"),
            "/api/surveys/leaps-demo/definition"
        );
        assert_eq!(definition_path("s_1"), "/api/surveys/s_1/definition");
        let token = "a b&c=d/é~\"";
        let body: serde_json::Value = serde_json::from_str(&place_request(Some(token))).unwrap();
        assert_eq!(body, serde_json::json!({ "invite": token }));
        assert_eq!(place_request(None), "{}");
        assert_eq!(demonstration_path("leaps-demo"), "surveys/leaps-demo.json");
        assert_eq!(
            demonstration_link("leaps-demo"),
            "#/participate?demo=leaps-demo"
        );
        for name in DEMONSTRATIONS {
            assert_eq!(
                source_from_query(&pairs(&[("demo", name)])),
                Ok(Some(Source::Demonstration { name }))
            );
        }
    }

    #[test]
    fn a_genuine_offer_opens_with_its_credential() {
        let k = key(1);
        let d = pointed(LEAPS);
        let (opened, access) = accept(
            &deployment_text(&k),
            &offer_text(&k, &d, NOW + 60),
            "leaps-demo",
            "/api/surveys/leaps-demo/definition",
            Reached::Openly,
        )
        .unwrap();
        assert_eq!(opened, d);
        let Access::Collector(credential, _) = access else {
            panic!("a collector's survey carries its credential")
        };
        assert_eq!(
            (credential.survey.as_str(), credential.cohort),
            ("leaps-demo", 0)
        );
    }

    #[test]
    fn a_forged_or_foreign_offer_is_refused_with_one_line() {
        let (k, other) = (key(1), key(2));
        let deployment = deployment_text(&k);
        let d = pointed(LEAPS);
        let source = "/api/surveys/leaps-demo/definition";
        let refuse = |offer: &str, requested: &str| {
            let e = accept(&deployment, offer, requested, source, Reached::Openly).unwrap_err();
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            e
        };
        // Signed by another key.
        let e = refuse(&offer_text(&other, &d, NOW + 60), "leaps-demo");
        assert!(
            e.to_string()
                .contains("is not signed by this deployment's collector"),
            "{e}"
        );
        // Correctly signed, but uploading to another origin.
        let mut foreign = d.clone();
        foreign.upload_url = "http://evil.example/api/surveys/leaps-demo/uploads".into();
        let e = refuse(&offer_text(&k, &foreign, NOW + 60), "leaps-demo");
        assert!(e.to_string().contains("http://evil.example"), "{e}");
        // Share mode with one share to another origin.
        let mut shares = pointed(SHARES);
        if let Some(s) = shares.masking.share_mode.as_mut() {
            s.providers[1] = "http://evil.example/api/surveys/shares-demo/uploads".into();
        }
        let e = refuse(&offer_text(&k, &shares, NOW + 60), "shares-demo");
        assert!(
            matches!(e, AcceptError::Trust(TrustError::ForeignDestination { .. })),
            "{e}"
        );
        // A credential past its expiry by this device's clock still opens (issue 30 §3: a phone's
        // clock may be hours off; the services judge expiry by theirs). Another survey than the
        // link names; malformed texts.
        accept(
            &deployment_text(&k),
            &offer_text(&k, &d, NOW - 3 * 3600),
            "leaps-demo",
            "/api/surveys/leaps-demo/definition",
            Reached::Openly,
        )
        .unwrap();
        let e = refuse(&offer_text(&k, &d, NOW + 60), "other-survey");
        assert!(matches!(e, AcceptError::OtherSurvey { .. }), "{e}");
        assert!(matches!(
            accept(
                "{}",
                &offer_text(&k, &d, NOW + 60),
                "leaps-demo",
                source,
                Reached::Openly
            ),
            Err(AcceptError::Deployment(_))
        ));
        assert!(matches!(
            refuse("<html>", "leaps-demo"),
            AcceptError::Offer { .. }
        ));
    }

    /// The mock deployment of the web suite serves the bundled surveys as its offers, and the
    /// collector's planner makes the same kind: each one meets the policy's floors, so a device
    /// opens it.
    #[test]
    fn every_bundled_survey_offered_by_a_collector_meets_the_floors() {
        let k = key(1);
        for name in DEMONSTRATIONS {
            let text = std::fs::read_to_string(format!(
                "{}/www/surveys/{name}.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let d = pointed(&text);
            accept(
                &deployment_text(&k),
                &offer_text(&k, &d, NOW + 60),
                name,
                "/api/surveys/x/definition",
                Reached::Openly,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// Issue 43: a basic-protocol survey that is not a demonstration opens only with an
    /// invitation — reached by an open link, its device key would be the provider's too.
    #[test]
    fn a_basic_survey_opens_without_an_invitation_only_as_a_demonstration() {
        let k = key(1);
        let mut real = pointed(LEAPS);
        real.masking.teaching = false;
        let open = |reached| {
            accept(
                &deployment_text(&k),
                &offer_text(&k, &real, NOW + 60),
                "leaps-demo",
                "/api/surveys/leaps-demo/definition",
                reached,
            )
        };
        open(Reached::ByInvitation).unwrap();
        let e = open(Reached::Openly).unwrap_err();
        assert!(
            matches!(e, AcceptError::Trust(TrustError::OpenBasicProtocol { .. })),
            "{e}"
        );
    }

    /// Issue 20 §3: an offer signed by the deployment's own key but with no noise columns is
    /// refused as a weak plan (the page says so in the participant's language); every other
    /// refusal stays one line.
    #[test]
    fn a_signed_weak_plan_is_refused_as_such() {
        let k = key(1);
        let mut weak = pointed(LEAPS);
        weak.masking.p2 = 0;
        let e = accept(
            &deployment_text(&k),
            &offer_text(&k, &weak, NOW + 60),
            "leaps-demo",
            "/api/surveys/leaps-demo/definition",
            Reached::Openly,
        )
        .unwrap_err();
        assert!(
            matches!(
                Unopened::from(e),
                Unopened::WeakPlan(FloorError::TooFewNoiseColumns { found: 0, .. })
            ),
            "p2 = 0"
        );
        let forged = accept(
            &deployment_text(&k),
            &offer_text(&key(2), &pointed(LEAPS), NOW + 60),
            "leaps-demo",
            "/api/surveys/leaps-demo/definition",
            Reached::Openly,
        )
        .unwrap_err();
        let Unopened::Refused(line) = Unopened::from(forged) else {
            panic!("a forged offer is a refusal")
        };
        assert!(
            line.contains("not signed by this deployment's collector"),
            "{line}"
        );
    }

    #[test]
    fn demonstrations_must_use_a_teaching_key() {
        let (d, access) = open_demonstration(LEAPS, "surveys/leaps-demo.json").unwrap();
        assert!(d.masking.teaching);
        assert_eq!(access, Access::Demonstration);
        let mut real = SurveyDefinition::parse(LEAPS, "x").unwrap();
        real.masking.teaching = false;
        assert!(matches!(
            open_demonstration(&real.to_json(), "x"),
            Err(DemonstrationError::NotTeaching(_))
        ));
    }
}
