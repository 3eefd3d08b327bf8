//! The audit view's model: `orthomask_stats::audit` on a release and, when given, its manifest;
//! and a participant's saved receipts checked against the manifest with a service's published
//! list or inclusion proof (`orthomask_survey::inclusion`, issue 10 §5).

use orthomask_formats::csv::{CsvError, Table, parse_table, printed_decimals};
use orthomask_formats::manifest::{Manifest, ManifestError};
use orthomask_stats::audit::{AuditReport, ReleaseUnderAudit, Status, audit};
use orthomask_survey::audit::{ExpectationError, expectations};
use orthomask_survey::inclusion::{Evidence, InclusionError, check_receipts, parse_receipt_file};
use serde::{Deserialize, Serialize};

/// Why an audit cannot run.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The release is not a numeric CSV table (file, line and column named).
    #[error(transparent)]
    Release(#[from] CsvError),
    /// The manifest is not valid JSON of a manifest.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The manifest's statistics do not fit its columns.
    #[error(transparent)]
    Expectations(#[from] ExpectationError),
    /// The receipt file or the evidence is not one.
    #[error(transparent)]
    Inclusion(#[from] InclusionError),
}

/// A named text (a file's contents, or a fetched URL's body).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedText {
    /// File name or URL, used in error messages.
    pub name: String,
    /// The text.
    pub text: String,
}

/// One check, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckRow {
    /// Stable identifier (`qa_column`, `column_means`, `binary_counts:IH`, …).
    pub id: String,
    /// `pass`, `warn` or `fail`.
    pub status: String,
    /// One line with the numbers.
    pub detail: String,
    /// The numbers, named.
    pub numbers: Vec<(String, f64)>,
}

/// An audit, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditResult {
    /// The release's name.
    pub name: String,
    /// Rows.
    pub n: usize,
    /// Column names.
    pub columns: Vec<String>,
    /// Worst status.
    pub overall: String,
    /// Every check.
    pub checks: Vec<CheckRow>,
    /// Whether a manifest was compared.
    pub manifest: Option<String>,
    /// What the manifest states that the numbers cannot check (the guarantees and the accuracy
    /// model), shown as stated, never as checked.
    #[serde(default)]
    pub statements: Vec<Statement>,
}

/// One thing a manifest states about its release, as text to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// What it is about (`obfuscation`, `differential privacy`, `accuracy`, `warning`).
    pub topic: String,
    /// The statement, in the manifest's words.
    pub text: String,
}

/// The manifest's statements an audit shows but cannot check from the numbers: the
/// strong-obfuscation guarantee and what it reveals, the DP guarantee and whom it covers, the
/// expected digits lost with its model, and the warnings.
pub fn statements(manifest: &Manifest) -> Vec<Statement> {
    let said = |topic: &str, text: String| Statement {
        topic: topic.to_owned(),
        text,
    };
    let mut out = Vec::new();
    if let Some(o) = &manifest.obfuscation {
        out.push(said(
            "obfuscation",
            format!(
                "{} — with probability at least {:.6}; it reveals {}",
                o.statement,
                o.holds_with_probability,
                o.reveals.join("; ")
            ),
        ));
    }
    if let Some(g) = manifest.dp.as_ref().and_then(|d| d.guarantee.as_ref()) {
        out.push(said(
            "differential privacy",
            format!(
                "(ε = {:.4}, δ = {:.3e}) for {}{}",
                g.epsilon,
                g.delta,
                g.neighbours,
                g.covers
                    .as_ref()
                    .map_or_else(String::new, |c| format!("; covers {c}"))
            ),
        ));
    }
    if let Some(u) = &manifest.unmasking_error {
        let model = if u.model.is_empty() {
            "an estimate".to_owned()
        } else {
            u.model.clone()
        };
        out.push(said(
            "accuracy",
            format!(
                "masking is expected to cost about {:.1} significant digits of a coefficient ({model})",
                u.expected_digits_lost
            ),
        ));
    }
    if !manifest.model_terms.is_empty() {
        let listed: Vec<String> = manifest
            .model_terms
            .iter()
            .map(|t| format!("{} = {}", t.id, t.kind.formula()))
            .collect();
        out.push(said(
            "model terms",
            format!(
                "computed on the participants' devices and masked like the answers, so models using them are exact on the release: {}",
                listed.join(", ")
            ),
        ));
    }
    out.extend(manifest.warnings.iter().map(|w| said("warning", w.clone())));
    out
}

impl AuditResult {
    /// Columns the audit treated as binary (declared in the manifest or detected).
    pub fn binary_columns(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter_map(|c| c.id.strip_prefix("binary_counts:").map(str::to_owned))
            .collect()
    }

    /// Counts of pass, warn and fail.
    pub fn tally(&self) -> (usize, usize, usize) {
        let count = |s: &str| self.checks.iter().filter(|c| c.status == s).count();
        (count("pass"), count("warn"), count("fail"))
    }
}

fn rows(report: &AuditReport) -> Vec<CheckRow> {
    report
        .checks
        .iter()
        .map(|c| CheckRow {
            id: c.id.clone(),
            status: c.status.as_str().to_owned(),
            detail: c.detail.clone(),
            numbers: c.numbers.clone(),
        })
        .collect()
}

/// Audit an already parsed release.
///
/// # Errors
/// [`AuditError`] for a malformed manifest.
pub fn audit_table(
    table: &Table,
    decimals: Option<u8>,
    manifest: Option<&NamedText>,
) -> Result<AuditResult, AuditError> {
    let parsed = match manifest {
        Some(m) => Some(Manifest::parse(&m.text, &m.name)?),
        None => None,
    };
    let expected = match (&parsed, manifest) {
        (Some(p), Some(m)) => Some(expectations(p, &m.name)?),
        _ => None,
    };
    let release = ReleaseUnderAudit {
        names: table.headers(),
        data: table.data(),
        decimals,
    };
    let report = audit(&release, expected.as_ref());
    Ok(AuditResult {
        name: table.source_name().to_owned(),
        n: table.data().nrows(),
        columns: table.headers().to_vec(),
        overall: report.overall().as_str().to_owned(),
        checks: rows(&report),
        manifest: manifest.map(|m| m.name.clone()),
        statements: parsed.as_ref().map(statements).unwrap_or_default(),
    })
}

/// Parse a release CSV and audit it.
///
/// # Errors
/// [`AuditError`] naming the file, line and column of a malformed CSV, or a malformed manifest.
pub fn run_audit(
    release: &NamedText,
    manifest: Option<&NamedText>,
) -> Result<AuditResult, AuditError> {
    let table = parse_table(release.text.as_bytes(), &release.name)?;
    audit_table(&table, printed_decimals(release.text.as_bytes()), manifest)
}

/// One saved receipt checked against a release, ready to show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReceiptRow {
    /// The upload URL the receipt came from.
    pub service: String,
    /// Cohort.
    pub cohort: u32,
    /// The upload hash.
    pub upload_hash: String,
    /// `pass` (in the release) or `fail`.
    pub status: String,
    /// One line: where it was found, or what failed.
    pub detail: String,
}

/// Check every receipt of a saved receipt file against the release's manifest with the given
/// published lists or inclusion proofs (each receipt with the evidence that speaks of it).
///
/// # Errors
/// [`AuditError`] when the manifest, the receipt file or a piece of evidence cannot be read; a
/// receipt that is not in the release is a `fail` row, not an error.
pub fn run_receipt_check(
    manifest: &NamedText,
    receipts: &NamedText,
    evidence: &[NamedText],
) -> Result<Vec<ReceiptRow>, AuditError> {
    let manifest = Manifest::parse(&manifest.text, &manifest.name)?;
    let saved = parse_receipt_file(&receipts.text, &receipts.name)?;
    let evidence = evidence
        .iter()
        .map(|e| Evidence::parse(&e.text, &e.name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(saved
        .iter()
        .zip(check_receipts(&manifest, &saved, &evidence))
        .map(|(r, verdict)| {
            let (status, detail) = match verdict {
                Ok(ok) => (
                    "pass",
                    format!(
                        "in released cohort {}: among its {} uploads under root {}",
                        ok.root.cohort, ok.root.count, ok.root.merkle_root
                    ),
                ),
                Err(why) => ("fail", why.to_string()),
            };
            ReceiptRow {
                service: r.service.clone(),
                cohort: r.cohort,
                upload_hash: r.upload_hash.clone(),
                status: status.to_owned(),
                detail,
            }
        })
        .collect())
}

/// `pass`, `warn`, `fail` as the audit crate names them (for tests and the page's legend).
pub fn status_names() -> [&'static str; 3] {
    [
        Status::Pass.as_str(),
        Status::Warn.as_str(),
        Status::Fail.as_str(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE5: &str = include_str!("../../data/paper/leaps_table5_released.csv");
    const TABLE2: &str = include_str!("../../data/paper/leaps_table2.csv");

    fn named(name: &str, text: &str) -> NamedText {
        NamedText {
            name: name.into(),
            text: text.into(),
        }
    }

    /// A manifest the product's own builder writes for a scaled survey with a kept column: the
    /// audit shows its guarantee, what it reveals and the accuracy model as statements.
    #[test]
    fn the_manifests_statements_are_shown_as_stated() {
        use orthomask_formats::manifest::Cohorts;
        use orthomask_survey::manifest::{Provenance, Released, build};
        use orthomask_survey::plan::{CohortBounds, DeclaredRange, Plan, PlanRequest};
        let mut request = PlanRequest::new(
            2,
            Some(888.0),
            CohortBounds {
                smallest: 20,
                largest: 20,
            },
            1.0,
        );
        request.kept_columns = 1;
        request.ranges = Some(
            ["a", "b"]
                .iter()
                .map(|n| DeclaredRange {
                    name: (*n).into(),
                    lo: 0.0,
                    hi: 10.0,
                })
                .collect(),
        );
        let plan = Plan::new(&request).unwrap();
        let columns = vec!["a".to_owned(), "b".to_owned(), "QA".to_owned()];
        let data = nalgebra::DMatrix::from_row_slice(2, 3, &[1.0, 2.0, 888.0, 3.0, 4.0, 888.0]);
        let manifest = build(
            &plan,
            &Released {
                columns: &columns,
                data: &data,
                qa: &[],
                decimals: None,
            },
            Provenance {
                kept_columns: vec!["b".into()],
                ..Provenance::modified(
                    Cohorts {
                        size: Some(20),
                        sizes: vec![2],
                    },
                    Vec::new(),
                )
            },
        );
        let said = statements(&manifest);
        let topics: Vec<&str> = said.iter().map(|s| s.topic.as_str()).collect();
        assert_eq!(topics, ["obfuscation", "accuracy"]);
        assert!(said[0].text.contains("Stab(F)·X₁") && said[0].text.contains("(b) row by row"));
        assert!(said[1].text.contains("not a bound"), "{}", said[1].text);
        // Through the audit itself, with the manifest as a file.
        let text = serde_json::to_string(&manifest).unwrap();
        let release = "a,b,QA\n1,2,888\n3,4,888\n";
        let audited = run_audit(&named("r.csv", release), Some(&named("m.json", &text))).unwrap();
        assert_eq!(audited.statements, said);
        // Declared model terms (issue 22 §3): the audit names each with its formula, as the
        // CLI's `regress --terms` and the analyst view read them.
        let with_terms = Manifest {
            model_terms: serde_json::from_str(
                r#"[{"id":"a_sq","kind":"power","of":"a","exponent":2},
                    {"id":"a_x_b","kind":"product","of":["a","b"]}]"#,
            )
            .unwrap(),
            ..manifest.clone()
        };
        let said = statements(&with_terms);
        let terms = said.iter().find(|s| s.topic == "model terms").unwrap();
        assert!(
            terms
                .text
                .ends_with("exact on the release: a_sq = a^2, a_x_b = a*b"),
            "{}",
            terms.text
        );
    }

    #[test]
    fn the_papers_release_passes_and_its_raw_table_is_flagged() {
        let released = run_audit(&named("table5.csv", TABLE5), None).unwrap();
        assert_eq!(released.n, 20);
        assert_ne!(released.overall, "fail", "{:?}", released.checks);
        assert!(released.binary_columns().contains(&"MIF".to_owned()));
        // The raw Table 2 still holds 0/1 values: visibly unmasked.
        let raw = run_audit(&named("table2.csv", TABLE2), None).unwrap();
        assert!(
            raw.checks
                .iter()
                .any(|c| c.status != "pass" && c.id.contains("IH")),
            "{:?}",
            raw.checks
        );
    }

    /// A receipt in the release passes, one that is not fails with the reason, and files that
    /// are not receipts or evidence are one-line errors.
    #[test]
    fn receipts_are_checked_against_the_manifests_roots() {
        use orthomask_survey::merkle::{inclusion_proof, merkle_root, sha256_hex};
        let service = "http://m.test/api/surveys/s/uploads";
        let hashes: Vec<String> = (0..3u8).map(|i| sha256_hex(&[i])).collect();
        let root = merkle_root(&hashes);
        let mut manifest: serde_json::Value = serde_json::from_str(&run_manifest_text()).unwrap();
        manifest["receipt_roots"] =
            serde_json::json!([{"cohort": 0, "service": service, "count": 3, "merkle_root": root}]);
        let manifest = named("m.json", &manifest.to_string());
        let receipt = |hash: &str| {
            named(
                "r.json",
                &serde_json::json!({"orthomask_receipt": [{"service": service, "survey": "s",
                    "cohort": 0, "upload_hash": hash, "received_at": "x"}]})
                .to_string(),
            )
        };
        let proof = named(
            "p.json",
            &serde_json::to_string(&inclusion_proof(&hashes, &hashes[1]).unwrap()).unwrap(),
        );
        let rows = run_receipt_check(
            &manifest,
            &receipt(&hashes[1]),
            std::slice::from_ref(&proof),
        )
        .unwrap();
        assert_eq!(rows[0].status, "pass", "{rows:?}");
        let absent = sha256_hex(b"absent");
        let rows =
            run_receipt_check(&manifest, &receipt(&absent), std::slice::from_ref(&proof)).unwrap();
        assert_eq!(rows[0].status, "fail");
        assert!(rows[0].detail.contains("does not prove"), "{rows:?}");
        let e = run_receipt_check(&manifest, &proof, std::slice::from_ref(&proof)).unwrap_err();
        assert!(
            e.to_string().starts_with("p.json: not a receipt file"),
            "{e}"
        );
    }

    /// A minimal valid manifest without receipt roots.
    fn run_manifest_text() -> String {
        serde_json::json!({
            "orthomask_version": "0", "method": "modified", "n": 3, "p1": 2, "p2": 4,
            "columns": ["a", "QA"], "sigma": 1.0, "x_max": null, "x_max_source": null,
            "appendix_c": null, "condition_3_7_margin": null,
            "cohorts": {"size": null, "sizes": [3]}, "right_mask": "haar", "generator": "chacha",
            "kept_columns": [], "qa": null, "column_means": [], "cross_products": [],
            "decimals": null, "dp": null, "teaching_keys": false, "warnings": []
        })
        .to_string()
    }

    #[test]
    fn malformed_input_gets_one_line() {
        let e = run_audit(&named("bad.csv", "a,b\n1,x\n"), None)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "bad.csv:2:2: expected a number, found \"x\"");
        let e = run_audit(&named("t.csv", TABLE5), Some(&named("m.json", "{")))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.json"), "{e}");
        assert!(!e.contains('\n'));
    }
}
