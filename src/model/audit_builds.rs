//! The audit view's "which app builds produced these records" (issue 27 §3): the builds a
//! release manifest counts (`Manifest::builds`), each matched with the public commits that build
//! it in a `builds.json` kept beside the release (`orthomask_survey::public_builds`). A build no
//! public commit produces fails: its uploads came from code nobody can read.
//!
//! No I/O here.

use orthomask_formats::manifest::Manifest;
use orthomask_survey::public_builds::{commits_of, parse};

use super::audit::NamedText;

/// One build of a release, ready to show.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildRow {
    /// The build digest (empty: uploads that named none).
    pub digest: String,
    /// Uploads that named it.
    pub uploads: usize,
    /// The public commits whose clean build it is (empty: none, or no `builds.json` given).
    pub commits: Vec<String>,
    /// `pass` (a public commit's build), `fail` (none is), `warn` (no `builds.json` to compare
    /// with, or uploads that named no build).
    pub status: &'static str,
    /// One line.
    pub detail: String,
}

/// The build rows of `manifest`, compared with `builds` when given.
///
/// # Errors
/// One line: the manifest or `builds.json` is not one (naming the file and the entry).
pub fn build_rows(
    manifest: &NamedText,
    builds: Option<&NamedText>,
) -> Result<Vec<BuildRow>, String> {
    let m = Manifest::parse(&manifest.text, &manifest.name).map_err(|e| e.to_string())?;
    let public = builds
        .map(|b| parse(&b.text, &b.name).map_err(|e| e.to_string()))
        .transpose()?;
    Ok(m.builds
        .iter()
        .map(|b| {
            let commits: Vec<String> = public
                .as_deref()
                .map(|p| {
                    commits_of(p, &b.digest)
                        .into_iter()
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let (status, detail) = if b.digest.is_empty() {
                (
                    "warn",
                    "these uploads named no app build (a client other than the web app)".to_owned(),
                )
            } else if public.is_none() {
                (
                    "warn",
                    "give the release's builds.json to see whether a public commit builds it"
                        .to_owned(),
                )
            } else if commits.is_empty() {
                (
                    "fail",
                    "not the build of any public commit in builds.json".to_owned(),
                )
            } else {
                (
                    "pass",
                    format!("the build of public commit {}", commits.join(", ")),
                )
            };
            BuildRow {
                digest: b.digest.clone(),
                uploads: b.uploads,
                commits,
                status,
                detail,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_formats::manifest::BuildCount;

    const PUBLIC: &str = "1111111111111111111111111111111111111111";

    fn manifest(builds: Vec<BuildCount>) -> NamedText {
        let m = serde_json::json!({
            "orthomask_version": "0", "method": "modified", "n": 12, "p1": 2, "p2": 40,
            "columns": ["a", "QA"], "sigma": 1.0,
            "cohorts": {"size": 12, "sizes": [12]}, "right_mask": "haar", "generator": "chacha",
            "kept_columns": [], "column_means": [], "cross_products": [],
            "teaching_keys": false, "warnings": [], "builds": builds
        });
        NamedText {
            name: "manifest.json".into(),
            text: m.to_string(),
        }
    }

    #[test]
    fn each_build_is_matched_with_its_public_commit() {
        let (good, other) = ("a".repeat(64), "b".repeat(64));
        let m = manifest(vec![
            BuildCount {
                digest: good.clone(),
                uploads: 7,
            },
            BuildCount {
                digest: other.clone(),
                uploads: 5,
            },
        ]);
        let builds = NamedText {
            name: "builds.json".into(),
            text: format!("[{{\"commit\": \"{PUBLIC}\", \"digest\": \"{good}\"}}]"),
        };
        let rows = build_rows(&m, Some(&builds)).unwrap();
        assert_eq!(
            rows.iter()
                .map(|r| (r.digest.as_str(), r.uploads, r.status))
                .collect::<Vec<_>>(),
            [(good.as_str(), 7, "pass"), (other.as_str(), 5, "fail")]
        );
        assert_eq!(rows[0].commits, [PUBLIC]);
        // Without builds.json nothing is claimed either way.
        assert!(
            build_rows(&m, None)
                .unwrap()
                .iter()
                .all(|r| r.status == "warn")
        );
        let bad = NamedText {
            name: "builds.json".into(),
            text: "[{\"commit\": \"x\", \"digest\": \"y\"}]".into(),
        };
        assert_eq!(
            build_rows(&m, Some(&bad)).unwrap_err(),
            "builds.json: entry 1: commit \"x\" is not 40 lowercase hexadecimal digits"
        );
    }
}
