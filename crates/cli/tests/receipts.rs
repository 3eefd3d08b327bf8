//! `orthomask audit --receipt … --evidence …` (issue 10 §5): a participant's saved receipt is
//! checked against the release's manifest with the published receipt list or an inclusion proof.
//!
//! The release is a real `orthomask pipeline` release of LEAPS Table 2; the services' part —
//! the manifest's `receipt_roots` entry, the published list, the proof and the participant's
//! receipt file — is built with the library functions the services and the web app call
//! (`orthomask_survey::merkle`, `orthomask_survey::client::receipt_file`). The services' own
//! release with real receipts is checked the same way in `crates/server/tests/end_to_end.rs`.

mod common;

use common::{failure, ok, orthomask, pipeline, table2};
use orthomask_survey::client::receipt_file;
use orthomask_survey::merkle::{inclusion_proof, merkle_root, sha256_hex};
use orthomask_survey::upload::Receipt;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SERVICE: &str = "http://msp.test/api/surveys/leaps/uploads";

/// The upload hashes of the 20 released records.
fn hashes() -> Vec<String> {
    (0..20)
        .map(|i| sha256_hex(format!("upload {i}").as_bytes()))
        .collect()
}

fn published_list(hashes: &[String]) -> Value {
    let mut sorted = hashes.to_vec();
    sorted.sort();
    json!({"survey": "leaps", "cohort": 0, "closed_at": "2026-01-01T00:00:00Z",
        "count": sorted.len(), "merkle_root": merkle_root(&sorted), "upload_hashes": sorted})
}

struct Fixture {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    /// The release's manifest with the root of cohort 0 at the provider.
    manifest: PathBuf,
    /// The same release's manifest as `orthomask pipeline` wrote it (no receipt roots).
    plain_manifest: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        let out = path.join("out");
        ok(&pipeline(&table2(), &out, &["--teaching-key", "11"]));
        let plain_manifest = out.join("manifest.json");
        let mut manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(&plain_manifest).unwrap()).unwrap();
        assert!(
            manifest.get("receipt_roots").is_none(),
            "the pipeline issues no receipts"
        );
        manifest["receipt_roots"] = json!([{"cohort": 0, "service": SERVICE, "count": 20,
            "merkle_root": merkle_root(&hashes())}]);
        let with_roots = path.join("manifest-with-roots.json");
        std::fs::write(&with_roots, manifest.to_string()).unwrap();
        Self {
            _dir: dir,
            dir: path,
            manifest: with_roots,
            plain_manifest,
        }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A receipt file holding one receipt for `hash` of `cohort`.
    fn receipt(&self, name: &str, cohort: u32, hash: &str) -> PathBuf {
        let text = receipt_file(&[(
            SERVICE.to_owned(),
            Receipt {
                survey: "leaps".into(),
                cohort,
                upload_hash: hash.to_owned(),
                received_at: "2026-01-01T00:00:00Z".into(),
            },
        )]);
        self.file(name, &text)
    }
}

fn audit(manifest: &Path, receipt: &Path, evidence: &Path, json: bool) -> std::process::Output {
    let mut args = vec![
        "audit",
        "--manifest",
        manifest.to_str().unwrap(),
        "--receipt",
        receipt.to_str().unwrap(),
        "--evidence",
        evidence.to_str().unwrap(),
    ];
    if json {
        args.push("--json");
    }
    orthomask(&args)
}

#[test]
fn a_receipt_in_the_release_passes_by_list_and_by_proof() {
    let f = Fixture::new();
    let hash = &hashes()[3];
    let receipt = f.receipt("receipt.json", 0, hash);
    let list = f.file("list.json", &published_list(&hashes()).to_string());
    let proof = f.file(
        "proof.json",
        &serde_json::to_string(&inclusion_proof(&hashes(), hash).unwrap()).unwrap(),
    );
    for evidence in [&list, &proof] {
        let text = ok(&audit(&f.manifest, &receipt, evidence, false));
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("pass  upload "), "{text}");
        assert!(
            first.contains("released cohort 0 of http://msp.test"),
            "{text}"
        );
        assert!(text.ends_with("overall: pass\n"), "{text}");
        let v: Value =
            serde_json::from_str(&ok(&audit(&f.manifest, &receipt, evidence, true))).unwrap();
        assert_eq!(v["overall"], "pass");
        assert_eq!(v["receipts"][0]["status"], "pass");
        assert_eq!(v["receipts"][0]["upload_hash"], hash.as_str());
    }
}

#[test]
fn an_upload_missing_from_the_release_fails_with_the_reason() {
    let f = Fixture::new();
    let list = f.file("list.json", &published_list(&hashes()).to_string());
    // Not in the released list.
    let absent = sha256_hex(b"never released");
    let receipt = f.receipt("absent.json", 0, &absent);
    let out = audit(&f.manifest, &receipt, &list, false);
    let error = failure(&out);
    assert!(
        error.contains("1 of 1 receipts are not shown to be in the release"),
        "{error}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!(
            "fail  upload {absent} is not among the 20 uploads"
        )),
        "{stdout}"
    );

    // The provider published 21 receipts but handed over (and the release holds) 20: the
    // participant's list leads to another root than the release's.
    let mut published = hashes();
    published.push(absent.clone());
    let longer = f.file("longer.json", &published_list(&published).to_string());
    let out = audit(&f.manifest, &receipt, &longer, true);
    failure(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["overall"], "fail");
    let detail = v["receipts"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("over 21 uploads is not the release's"),
        "{detail}"
    );

    // A receipt of a cohort the release does not hold.
    let other = f.receipt("other.json", 4, &hashes()[0]);
    let out = audit(&f.manifest, &other, &list, false);
    failure(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(
            "cohort 4 at http://msp.test/api/surveys/leaps/uploads is not in the release"
        ),
        "{out:?}"
    );

    // A release without receipt roots cannot vouch for any receipt.
    let fine = f.receipt("fine.json", 0, &hashes()[0]);
    let out = audit(&f.plain_manifest, &fine, &list, false);
    failure(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("records no receipt roots"));
}

#[test]
fn bad_files_are_one_line() {
    let f = Fixture::new();
    let receipt = f.receipt("receipt.json", 0, &hashes()[0]);
    let junk = f.file("junk.json", "{\"count\": 3}");
    let error = failure(&audit(&f.manifest, &receipt, &junk, false));
    assert!(
        error.contains("junk.json: not a published receipt list"),
        "{error}"
    );
    let list = f.file("list.json", &published_list(&hashes()).to_string());
    let error = failure(&audit(&f.manifest, &list, &list, false));
    assert!(error.contains("list.json: not a receipt file"), "{error}");
}
