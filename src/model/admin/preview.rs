//! The design the collector will choose, computed in the browser by the same
//! `orthomask_survey::draft::plan_survey` the collector runs on `POST /api/admin/surveys`, with
//! the endpoints it publishes at `GET /api/deployment`. An unsafe design is refused here with
//! the API's own one-line reason (`DraftError`'s text), before anything is sent.

use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};

/// Where the deployment's participants upload (the `msp` and `rights` of
/// `orthomask_survey::trust::Deployment`). Read field by field, so fields the collector adds
/// later do not break the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeploymentEndpoints {
    /// The masking service provider's base URL.
    pub msp: String,
    /// The right-masking services' base URLs.
    pub rights: Vec<String>,
}

impl DeploymentEndpoints {
    /// Read `GET /api/deployment`'s answer.
    ///
    /// # Errors
    /// One line when the answer is not JSON or lacks `msp`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("the deployment description is not JSON: {e}"))?;
        let msp = v
            .get("msp")
            .and_then(|m| m.as_str())
            .ok_or("the deployment description names no masking service provider (msp)")?;
        let rights = v
            .get("rights")
            .and_then(|r| r.as_array())
            .map(|r| {
                r.iter()
                    .filter_map(|u| u.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            msp: msp.to_owned(),
            rights,
        })
    }
}

/// What the collector will decide for a draft (`SurveyPlan`'s numbers).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanPreview {
    /// Data columns `p₁` (answers and QA).
    pub p1: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ.
    pub sigma: f64,
    /// σ of the device-side DP noise, when asked for.
    pub dp_sigma: Option<f64>,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records for which a cohort is released.
    pub min_cohort_size: usize,
    /// The Appendix C bound on the probability that condition (3.5) fails, when it applies.
    pub failure_probability: Option<f64>,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// Released columns.
    pub columns: Vec<String>,
}

/// Plan `draft` as the collector will.
///
/// # Errors
/// `DraftError`'s one line, the same text the API answers with.
pub fn preview(
    draft: &SurveyDraft,
    endpoints: &DeploymentEndpoints,
) -> Result<PlanPreview, String> {
    let planned = plan_survey(
        draft,
        Endpoints {
            provider: &endpoints.msp,
            right_services: &endpoints.rights,
        },
    )
    .map_err(|e| e.to_string())?;
    let p = planned.plan;
    Ok(PlanPreview {
        p1: p.masking.p1,
        p2: p.masking.p2,
        sigma: p.masking.sigma,
        dp_sigma: p.masking.dp.as_ref().map(|d| d.sigma),
        cohort_size: p.cohort_size,
        min_cohort_size: p.min_cohort_size,
        failure_probability: p.masking.appendix_c.as_ref().map(|a| a.failure_probability),
        share_services: p.share_services,
        columns: p.columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::admin::editor;

    const DRAFT: &str = r#"{"id": "s", "title": "T", "consent": "ok", "cohort_size": 20, "invitations": true,
      "questions": [{"id": "smoker", "label": "?", "kind": "yes_no"},
                    {"id": "age", "label": "?", "kind": "integer", "min": 18, "max": 100},
                    {"id": "region", "label": "?", "kind": "categorical", "options": ["n", "s", "e"]}]}"#;

    fn endpoints() -> DeploymentEndpoints {
        DeploymentEndpoints::parse(
            r#"{"collector_public_key": "k", "collector": "http://c", "msp": "http://m", "rights": ["http://r0"], "later": 1}"#,
        )
        .unwrap()
    }

    /// The numbers of `orthomask_survey::draft`'s own test for this draft: p₁ = 4 answer columns
    /// + QA, p₂ = 503 for m = 20, minimum cohort p₁ + 1.
    #[test]
    fn the_preview_is_the_collectors_plan() {
        let p = preview(&editor::parse(DRAFT).unwrap(), &endpoints()).unwrap();
        assert_eq!(
            (p.p1, p.p2, p.cohort_size, p.min_cohort_size),
            (5, 503, 20, 6)
        );
        assert_eq!((p.dp_sigma, p.share_services), (None, 0));
        assert!(p.sigma > 0.0 && p.failure_probability.is_some_and(|f| f > 0.0 && f < 1.0));
        assert_eq!(p.columns, ["smoker", "age", "region=s", "region=e", "QA"]);
    }

    #[test]
    fn unsafe_designs_are_refused_with_the_apis_line() {
        let small = editor::parse(&DRAFT.replace("20", "5")).unwrap();
        let e = preview(&small, &endpoints()).unwrap_err();
        assert_eq!(
            e,
            "cohort_size 5 is too small for 5 data columns (the answers' 4 columns and the QA column): seed 000 needs p1 < n, so use cohorts of at least 6"
        );
        let shares =
            editor::parse(&DRAFT.replace("\"invitations\": true", "\"share_mode\": true")).unwrap();
        let e = preview(&shares, &endpoints()).unwrap_err();
        assert!(
            e.starts_with(
                "share mode needs at least two right-masking services; this collector knows 1"
            ),
            "{e}"
        );
        let open = editor::parse(&DRAFT.replace("true", "false")).unwrap();
        assert!(
            preview(&open, &endpoints())
                .unwrap_err()
                .starts_with("a basic-protocol survey cannot be open")
        );
        // A categorical question without options is refused, not coded.
        let empty = editor::parse(&DRAFT.replace(r#"["n", "s", "e"]"#, "[]")).unwrap();
        assert_eq!(
            preview(&empty, &endpoints()).unwrap_err(),
            "survey definition: questions[2].options: need at least two options"
        );
    }

    #[test]
    fn a_deployment_without_a_provider_is_named() {
        assert!(
            DeploymentEndpoints::parse("{}")
                .unwrap_err()
                .contains("msp")
        );
        assert!(
            DeploymentEndpoints::parse("<html>")
                .unwrap_err()
                .contains("not JSON")
        );
    }
}
