//! "Is my upload in the release?": a participant's saved receipt checked against the release's
//! manifest and the evidence a service published (issue 10 §5).
//!
//! The data collector accepts a cohort only when the hand-over matches the receipt list each
//! accepting service published — its root recomputed from its hashes, its count — and writes
//! that list's root and count into the manifest (`receipt_roots`, one entry per released cohort
//! and service). So a receipt is in the release when
//!
//! 1. the manifest names the receipt's cohort at the receipt's service (else the cohort was not
//!    released: withheld, refused, or the release predates receipt roots), and
//! 2. the evidence leads to *that* root: a published list whose recomputed root and count are the
//!    manifest's and which holds the upload hash, or an RFC 6962 inclusion proof of the hash whose
//!    root and tree size are the manifest's.
//!
//! The evidence needs no trust: anybody may hand it over (the service, a mirror, a friend); only
//! the manifest has to be the release's own.

use crate::merkle::{InclusionProof, merkle_root, verify_inclusion};
use orthomask_formats::manifest::{Manifest, ReceiptRoot};
use serde::{Deserialize, Serialize};

/// One receipt of a participant's saved receipt file (`client::receipt_file`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedReceipt {
    /// The upload URL the receipt came from.
    pub service: String,
    /// Survey id.
    pub survey: String,
    /// Cohort.
    pub cohort: u32,
    /// The upload hash the service acknowledged.
    pub upload_hash: String,
    /// When the service received it.
    #[serde(default)]
    pub received_at: Option<String>,
}

#[derive(Deserialize)]
struct ReceiptFile {
    orthomask_receipt: Vec<SavedReceipt>,
}

/// A closed cohort's receipt list as an accepting service publishes it
/// (`GET …/cohorts/{k}/receipts`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedList {
    /// Survey id.
    pub survey: String,
    /// Cohort.
    pub cohort: u32,
    /// When the cohort closed.
    #[serde(default)]
    pub closed_at: Option<String>,
    /// Number of uploads.
    pub count: usize,
    /// The root the service claims.
    pub merkle_root: String,
    /// Every upload hash, sorted.
    pub upload_hashes: Vec<String>,
    /// The app builds the uploads named, with how many each (issue 27 §2; absent from lists
    /// older than it).
    #[serde(default)]
    pub builds: Vec<orthomask_formats::manifest::BuildCount>,
}

impl PublishedList {
    /// Whether the list is what it claims: its root is the root of its hashes, its count their
    /// number, and no hash appears twice.
    pub fn consistent(&self) -> bool {
        let mut distinct = self.upload_hashes.clone();
        distinct.sort();
        distinct.dedup();
        // The builds count every upload once (a list older than them names none).
        let by_build: usize = self.builds.iter().map(|b| b.uploads).sum();
        distinct.len() == self.upload_hashes.len()
            && self.count == self.upload_hashes.len()
            && (self.builds.is_empty() || by_build == self.count)
            && merkle_root(&self.upload_hashes) == self.merkle_root
    }
}

/// What shows that an upload is in a cohort's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evidence {
    /// The whole published list.
    List(PublishedList),
    /// An inclusion proof (`GET …/cohorts/{k}/receipts/{hash}`).
    Proof(InclusionProof),
}

/// A receipt that is in the release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Included {
    /// The manifest's entry it was checked against.
    pub root: ReceiptRoot,
    /// The upload hash.
    pub upload_hash: String,
}

/// Why a receipt file, evidence or check failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InclusionError {
    /// The receipt file is not one.
    #[error(
        "{source_name}: not a receipt file ({reason}); save it from the participant page, \
         it starts with {{\"orthomask_receipt\": [...]}}"
    )]
    ReceiptFile {
        /// File name.
        source_name: String,
        /// Parser message.
        reason: String,
    },
    /// The evidence is neither a published list nor an inclusion proof.
    #[error(
        "{source_name}: not a published receipt list (fields count, merkle_root, \
         upload_hashes) or an inclusion proof (leaf_index, tree_size, path, root): {reason}"
    )]
    Evidence {
        /// File name.
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// The manifest records no receipt roots at all.
    #[error(
        "the manifest records no receipt roots: the release was not made by the services, or \
         by a version before they were recorded; the receipt cannot be checked against it"
    )]
    NoReceiptRoots,
    /// The cohort is not in the release from this service.
    #[error("cohort {cohort} at {service} is not in the release{}", why.as_ref().map_or(String::new(), |w| format!(": {w}")))]
    CohortNotReleased {
        /// Cohort.
        cohort: u32,
        /// The receipt's service.
        service: String,
        /// The manifest's warning about the cohort (left out, withheld), if any.
        why: Option<String>,
    },
    /// A list for another survey or cohort than the receipt's.
    #[error(
        "the evidence is the list of survey {survey:?} cohort {cohort}, the receipt is of \
         survey {receipt_survey:?} cohort {receipt_cohort}"
    )]
    OtherList {
        /// The list's survey.
        survey: String,
        /// The list's cohort.
        cohort: u32,
        /// The receipt's survey.
        receipt_survey: String,
        /// The receipt's cohort.
        receipt_cohort: u32,
    },
    /// A list whose root or count is not that of its hashes.
    #[error(
        "the published list of cohort {cohort} is inconsistent: its root or count is not that \
         of its {hashes} hashes (or a hash appears twice)"
    )]
    InconsistentList {
        /// Cohort.
        cohort: u32,
        /// Hashes listed.
        hashes: usize,
    },
    /// The evidence leads to another root (or size) than the manifest's.
    #[error(
        "cohort {cohort} at {service}: the evidence's root {evidence_root} over {evidence_count} \
         uploads is not the release's {manifest_root} over {manifest_count}"
    )]
    RootMismatch {
        /// Cohort.
        cohort: u32,
        /// Service.
        service: String,
        /// Root of the evidence.
        evidence_root: String,
        /// Uploads of the evidence.
        evidence_count: usize,
        /// Root in the manifest.
        manifest_root: String,
        /// Uploads in the manifest.
        manifest_count: usize,
    },
    /// The list does not hold the upload hash.
    #[error("upload {hash} is not among the {count} uploads of cohort {cohort}'s released list")]
    HashAbsent {
        /// The receipt's upload hash.
        hash: String,
        /// Cohort.
        cohort: u32,
        /// Uploads in the list.
        count: usize,
    },
    /// The proof does not verify for the hash.
    #[error("the inclusion proof does not prove upload {hash} (RFC 6962 audit path invalid)")]
    ProofInvalid {
        /// The receipt's upload hash.
        hash: String,
    },
}

/// The receipts of a saved receipt file.
///
/// # Errors
/// [`InclusionError::ReceiptFile`].
pub fn parse_receipt_file(
    text: &str,
    source_name: &str,
) -> Result<Vec<SavedReceipt>, InclusionError> {
    let file: ReceiptFile =
        serde_json::from_str(text).map_err(|e| InclusionError::ReceiptFile {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })?;
    if file.orthomask_receipt.is_empty() {
        return Err(InclusionError::ReceiptFile {
            source_name: source_name.to_owned(),
            reason: "it holds no receipt".to_owned(),
        });
    }
    Ok(file.orthomask_receipt)
}

impl Evidence {
    /// A published list or an inclusion proof, told apart by their fields (`upload_hashes` or
    /// `path`).
    ///
    /// # Errors
    /// [`InclusionError::Evidence`].
    pub fn parse(text: &str, source_name: &str) -> Result<Self, InclusionError> {
        let bad = |reason: String| InclusionError::Evidence {
            source_name: source_name.to_owned(),
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if value.get("upload_hashes").is_some() {
            serde_json::from_value(value)
                .map(Self::List)
                .map_err(|e| bad(format!("a list with {e}")))
        } else if value.get("path").is_some() {
            serde_json::from_value(value)
                .map(Self::Proof)
                .map_err(|e| bad(format!("a proof with {e}")))
        } else {
            Err(bad("it has neither upload_hashes nor path".to_owned()))
        }
    }

    /// Whether this evidence speaks of `receipt` at all (the list holds its hash, or the proof
    /// verifies for it): how a front end picks, among several files, the one to check a receipt
    /// with.
    pub fn mentions(&self, receipt: &SavedReceipt) -> bool {
        match self {
            Self::List(list) => {
                list.survey == receipt.survey
                    && list.cohort == receipt.cohort
                    && list.upload_hashes.contains(&receipt.upload_hash)
            }
            Self::Proof(proof) => verify_inclusion(&receipt.upload_hash, proof),
        }
    }
}

/// The manifest's warning about `cohort` ("cohort 3 was left out: …", "cohort 3 was withheld:
/// …"), if any.
fn warning_about(manifest: &Manifest, cohort: u32) -> Option<String> {
    let prefix = format!("cohort {cohort} was ");
    manifest
        .warnings
        .iter()
        .find(|w| w.starts_with(&prefix))
        .cloned()
}

/// Check that `receipt`'s upload is in the release described by `manifest`, by `evidence`.
///
/// # Errors
/// The first check that fails, as an [`InclusionError`] naming it.
pub fn check_receipt(
    manifest: &Manifest,
    receipt: &SavedReceipt,
    evidence: &Evidence,
) -> Result<Included, InclusionError> {
    if manifest.receipt_roots.is_empty() {
        return Err(InclusionError::NoReceiptRoots);
    }
    let root = manifest
        .receipt_roots
        .iter()
        .find(|r| r.cohort == receipt.cohort && r.service == receipt.service)
        .ok_or_else(|| InclusionError::CohortNotReleased {
            cohort: receipt.cohort,
            service: receipt.service.clone(),
            why: warning_about(manifest, receipt.cohort),
        })?;
    let mismatch = |evidence_root: &str, evidence_count: usize| InclusionError::RootMismatch {
        cohort: root.cohort,
        service: root.service.clone(),
        evidence_root: evidence_root.to_owned(),
        evidence_count,
        manifest_root: root.merkle_root.clone(),
        manifest_count: root.count,
    };
    match evidence {
        Evidence::List(list) => {
            if list.survey != receipt.survey || list.cohort != receipt.cohort {
                return Err(InclusionError::OtherList {
                    survey: list.survey.clone(),
                    cohort: list.cohort,
                    receipt_survey: receipt.survey.clone(),
                    receipt_cohort: receipt.cohort,
                });
            }
            if !list.consistent() {
                return Err(InclusionError::InconsistentList {
                    cohort: list.cohort,
                    hashes: list.upload_hashes.len(),
                });
            }
            if list.merkle_root != root.merkle_root || list.count != root.count {
                return Err(mismatch(&list.merkle_root, list.count));
            }
            if !list.upload_hashes.contains(&receipt.upload_hash) {
                return Err(InclusionError::HashAbsent {
                    hash: receipt.upload_hash.clone(),
                    cohort: list.cohort,
                    count: list.count,
                });
            }
        }
        Evidence::Proof(proof) => {
            if proof.root != root.merkle_root || proof.tree_size != root.count {
                return Err(mismatch(&proof.root, proof.tree_size));
            }
            if !verify_inclusion(&receipt.upload_hash, proof) {
                return Err(InclusionError::ProofInvalid {
                    hash: receipt.upload_hash.clone(),
                });
            }
        }
    }
    Ok(Included {
        root: root.clone(),
        upload_hash: receipt.upload_hash.clone(),
    })
}

/// Check every receipt of a receipt file with whichever of `evidence` speaks of it
/// ([`Evidence::mentions`]), else with the first (whose failure then says why): what the
/// command line and the web app's audit view both show, one verdict per receipt.
pub fn check_receipts(
    manifest: &Manifest,
    receipts: &[SavedReceipt],
    evidence: &[Evidence],
) -> Vec<Result<Included, InclusionError>> {
    receipts
        .iter()
        .map(
            |r| match evidence.iter().find(|e| e.mentions(r)).or(evidence.first()) {
                Some(e) => check_receipt(manifest, r, e),
                None => Err(InclusionError::Evidence {
                    source_name: "the evidence".to_owned(),
                    reason: "none was given".to_owned(),
                }),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::{inclusion_proof, sha256_hex};
    use orthomask_formats::manifest::{Cohorts, Generator, Method, RightMask};

    const SERVICE: &str = "http://msp.test/api/surveys/s/uploads";

    fn h(i: u8) -> String {
        sha256_hex(&[i])
    }

    /// Cohort 0 of five uploads h(0)…h(4) released; cohort 1 withheld.
    fn hashes() -> Vec<String> {
        let mut v: Vec<String> = (0..5).map(h).collect();
        v.sort();
        v
    }

    fn manifest() -> Manifest {
        Manifest {
            orthomask_version: "0".into(),
            method: Method::Modified,
            n: 5,
            p1: 2,
            p2: 6,
            columns: vec!["a".into(), "QA".into()],
            sigma: 1.0,
            x_max: None,
            x_max_source: None,
            appendix_c: None,
            condition_3_7_margin: None,
            cohorts: Cohorts {
                size: Some(5),
                sizes: vec![5],
            },
            right_mask: RightMask::Haar,
            generator: Generator::Chacha,
            kept_columns: vec![],
            binary_columns: vec![],
            qa: None,
            column_means: vec![],
            cross_products: vec![],
            decimals: None,
            dp: None,
            teaching_keys: false,
            warnings: vec!["cohort 1 was withheld: 2 uploads, fewer than 4".into()],
            receipt_roots: vec![ReceiptRoot {
                cohort: 0,
                service: SERVICE.into(),
                count: 5,
                merkle_root: merkle_root(&hashes()),
                builds: Vec::new(),
            }],
            unmasking_error: None,
            share_view: None,
            obfuscation: None,
            model_terms: Vec::new(),
            builds: Vec::new(),
        }
    }

    fn receipt(cohort: u32, hash: &str) -> SavedReceipt {
        SavedReceipt {
            service: SERVICE.into(),
            survey: "s".into(),
            cohort,
            upload_hash: hash.into(),
            received_at: None,
        }
    }

    fn list(hashes: Vec<String>) -> Evidence {
        Evidence::List(PublishedList {
            survey: "s".into(),
            cohort: 0,
            closed_at: None,
            count: hashes.len(),
            merkle_root: merkle_root(&hashes),
            upload_hashes: hashes,
            builds: Vec::new(),
        })
    }

    #[test]
    fn a_receipt_in_the_released_list_passes_by_list_and_by_proof() {
        let m = manifest();
        for hash in hashes() {
            let r = receipt(0, &hash);
            let ok = check_receipt(&m, &r, &list(hashes())).unwrap();
            assert_eq!(ok.root.count, 5);
            let proof = Evidence::Proof(inclusion_proof(&hashes(), &hash).unwrap());
            assert!(proof.mentions(&r));
            assert_eq!(check_receipt(&m, &r, &proof).unwrap(), ok);
        }
    }

    /// The provider published six uploads but handed over five: the release's root is of the
    /// five, so the sixth participant's list (or proof) leads to another root.
    #[test]
    fn a_dropped_upload_leads_to_another_root() {
        let m = manifest();
        let mut six = hashes();
        six.push(h(5));
        let r = receipt(0, &h(5));
        let e = check_receipt(&m, &r, &list(six.clone())).unwrap_err();
        assert!(
            matches!(
                e,
                InclusionError::RootMismatch {
                    evidence_count: 6,
                    manifest_count: 5,
                    ..
                }
            ),
            "{e}"
        );
        let proof = Evidence::Proof(inclusion_proof(&six, &h(5)).unwrap());
        assert!(matches!(
            check_receipt(&m, &r, &proof),
            Err(InclusionError::RootMismatch { .. })
        ));
    }

    #[test]
    fn a_hash_absent_from_the_released_list_is_named() {
        let e = check_receipt(&manifest(), &receipt(0, &h(9)), &list(hashes())).unwrap_err();
        assert_eq!(
            e,
            InclusionError::HashAbsent {
                hash: h(9),
                cohort: 0,
                count: 5
            }
        );
    }

    #[test]
    fn a_proof_for_another_hash_is_invalid() {
        let proof = Evidence::Proof(inclusion_proof(&hashes(), &h(0)).unwrap());
        let other = receipt(0, &h(1));
        assert!(!proof.mentions(&other));
        assert_eq!(
            check_receipt(&manifest(), &other, &proof),
            Err(InclusionError::ProofInvalid { hash: h(1) })
        );
        let mut bent = inclusion_proof(&hashes(), &h(0)).unwrap();
        bent.path[0] = h(7);
        assert!(matches!(
            check_receipt(&manifest(), &receipt(0, &h(0)), &Evidence::Proof(bent)),
            Err(InclusionError::ProofInvalid { .. })
        ));
    }

    #[test]
    fn a_cohort_not_released_is_named_with_the_manifests_reason() {
        let e = check_receipt(&manifest(), &receipt(1, &h(0)), &list(hashes())).unwrap_err();
        assert!(
            matches!(&e, InclusionError::CohortNotReleased { cohort: 1, why: Some(w), .. } if w.contains("withheld")),
            "{e}"
        );
        let mut elsewhere = receipt(0, &h(0));
        elsewhere.service = "http://other.test/api/surveys/s/uploads".into();
        assert!(matches!(
            check_receipt(&manifest(), &elsewhere, &list(hashes())),
            Err(InclusionError::CohortNotReleased { why: None, .. })
        ));
        let mut old = manifest();
        old.receipt_roots.clear();
        assert_eq!(
            check_receipt(&old, &receipt(0, &h(0)), &list(hashes())),
            Err(InclusionError::NoReceiptRoots)
        );
    }

    /// A list whose claimed root is not that of its hashes proves nothing, even if the claimed
    /// root is the release's.
    #[test]
    fn an_inconsistent_or_foreign_list_is_refused() {
        let Evidence::List(mut forged) = list(vec![h(0), h(9)]) else {
            unreachable!()
        };
        forged.merkle_root = merkle_root(&hashes());
        forged.count = 5;
        assert!(matches!(
            check_receipt(&manifest(), &receipt(0, &h(9)), &Evidence::List(forged)),
            Err(InclusionError::InconsistentList { .. })
        ));
        let Evidence::List(mut other) = list(hashes()) else {
            unreachable!()
        };
        other.cohort = 3;
        assert!(matches!(
            check_receipt(&manifest(), &receipt(0, &h(0)), &Evidence::List(other)),
            Err(InclusionError::OtherList { cohort: 3, .. })
        ));
        // The builds of a list count each of its uploads once (issue 27): 5 hashes, 4 counted.
        let Evidence::List(mut miscounted) = list(hashes()) else {
            unreachable!()
        };
        let build = |digest: &str, uploads| orthomask_formats::manifest::BuildCount {
            digest: digest.to_owned(),
            uploads,
        };
        miscounted.builds = vec![build("a", 3), build("b", 1)];
        assert!(!miscounted.consistent());
        miscounted.builds = vec![build("a", 3), build("b", 2)];
        assert!(miscounted.consistent());
    }

    /// A receipt file of two services (share mode) is checked with each service's list.
    #[test]
    fn each_receipt_is_checked_with_the_evidence_that_speaks_of_it() {
        let other = "http://r1.test/api/surveys/s/uploads";
        let theirs: Vec<String> = (10..14).map(h).collect();
        let mut m = manifest();
        m.receipt_roots.push(ReceiptRoot {
            cohort: 0,
            service: other.into(),
            count: 4,
            merkle_root: merkle_root(&theirs),
            builds: Vec::new(),
        });
        let mut second = receipt(0, &h(11));
        second.service = other.into();
        let receipts = [receipt(0, &h(2)), second, receipt(0, &h(99))];
        let verdicts = check_receipts(&m, &receipts, &[list(hashes()), list(theirs)]);
        assert!(verdicts[0].is_ok() && verdicts[1].is_ok(), "{verdicts:?}");
        assert!(matches!(
            verdicts[2],
            Err(InclusionError::HashAbsent { .. })
        ));
        assert!(check_receipts(&m, &receipts[..1], &[])[0].is_err());
    }

    #[test]
    fn files_are_told_apart_by_their_fields() {
        let text = serde_json::json!({"survey": "s", "cohort": 0, "closed_at": null, "count": 5,
            "merkle_root": merkle_root(&hashes()), "upload_hashes": hashes()})
        .to_string();
        assert!(matches!(
            Evidence::parse(&text, "l.json"),
            Ok(Evidence::List(_))
        ));
        let proof = serde_json::to_string(&inclusion_proof(&hashes(), &h(2)).unwrap()).unwrap();
        assert!(matches!(
            Evidence::parse(&proof, "p.json"),
            Ok(Evidence::Proof(_))
        ));
        let e = Evidence::parse("{\"count\": 1}", "x.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x.json: not a published receipt list"),
            "{e}"
        );
        let file = crate::client::receipt_file(&[(
            SERVICE.into(),
            crate::upload::Receipt {
                survey: "s".into(),
                cohort: 0,
                upload_hash: h(1),
                received_at: "2026-01-01T00:00:00Z".into(),
            },
        )]);
        let saved = parse_receipt_file(&file, "r.json").unwrap();
        assert_eq!(
            saved,
            vec![SavedReceipt {
                received_at: Some("2026-01-01T00:00:00Z".into()),
                ..receipt(0, &h(1))
            }]
        );
        assert!(parse_receipt_file("{\"orthomask_receipt\": []}", "r.json").is_err());
        assert!(
            parse_receipt_file("[]", "r.json")
                .unwrap_err()
                .to_string()
                .starts_with("r.json")
        );
    }
}
