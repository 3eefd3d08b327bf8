//! `builds.json`, the list of public builds kept beside a release (issue 27 §3): which commit of
//! the public repository builds which web app digest ([`crate::app_build`]). The audit view and
//! `orthomask audit --app … --builds builds.json` read it to say whether a build that produced
//! records is the build of a public commit; `scripts/reproduce.sh COMMIT --record builds.json`
//! appends to it after rebuilding the commit in a clean clone.
//!
//! **Format.** A JSON array of `{"commit": "<40 hex>", "digest": "<64 hex>"}` objects in the
//! order they were recorded, each on its own line:
//!
//! ```text
//! [
//! {"commit": "5d0c…", "digest": "9f3a…"},
//! {"commit": "77ab…", "digest": "01be…"}
//! ]
//! ```
//!
//! **Appended, never rewritten.** [`append`] keeps every earlier entry as it was and adds the new
//! one last; a commit recorded again with another digest is refused (the build is reproducible,
//! so one commit has one digest: a second digest means the build or the list is wrong). Whoever
//! keeps an earlier copy can check that a later one only added entries ([`extends`]).

use serde::{Deserialize, Serialize};

/// One public build: the commit and the digest its clean build has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicBuild {
    /// The commit of the public repository (40 lowercase hexadecimal digits).
    pub commit: String,
    /// Its build digest (64 lowercase hexadecimal digits).
    pub digest: String,
}

/// Why a `builds.json` is not a list of public builds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PublicBuildsError {
    /// Not a JSON array of `{commit, digest}`.
    #[error("{source_name}: not a list of public builds ({reason})")]
    Parse {
        /// The file.
        source_name: String,
        /// The parser's words, with line and column.
        reason: String,
    },
    /// A commit or digest that is not lowercase hexadecimal of its length.
    #[error(
        "{source_name}: entry {index}: {field} {value:?} is not {digits} lowercase hexadecimal digits"
    )]
    Field {
        /// The file.
        source_name: String,
        /// 1-based entry.
        index: usize,
        /// `commit` or `digest`.
        field: &'static str,
        /// The value found.
        value: String,
        /// The length it must have.
        digits: usize,
    },
    /// One commit with two digests.
    #[error(
        "{source_name}: commit {commit} is recorded with digest {first} and again with {second}; \
         a commit has one build digest (is the build reproducible?)"
    )]
    TwoDigests {
        /// The file.
        source_name: String,
        /// The commit.
        commit: String,
        /// The digest recorded first.
        first: String,
        /// The other.
        second: String,
    },
    /// A later copy that does not keep an earlier one's entries.
    #[error("{source_name}: entry {index} of the earlier list was rewritten or removed")]
    Rewritten {
        /// The later file.
        source_name: String,
        /// 1-based entry of the earlier list.
        index: usize,
    },
}

/// The public builds of `text`, in the order recorded.
///
/// # Errors
/// [`PublicBuildsError`] naming the file and the entry.
pub fn parse(text: &str, source_name: &str) -> Result<Vec<PublicBuild>, PublicBuildsError> {
    let builds: Vec<PublicBuild> =
        serde_json::from_str(text).map_err(|e| PublicBuildsError::Parse {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })?;
    for (i, b) in builds.iter().enumerate() {
        check_field(source_name, i + 1, "commit", &b.commit, 40)?;
        check_field(source_name, i + 1, "digest", &b.digest, 64)?;
        if let Some(earlier) = builds[..i]
            .iter()
            .find(|e| e.commit == b.commit && e.digest != b.digest)
        {
            return Err(PublicBuildsError::TwoDigests {
                source_name: source_name.to_owned(),
                commit: b.commit.clone(),
                first: earlier.digest.clone(),
                second: b.digest.clone(),
            });
        }
    }
    Ok(builds)
}

fn check_field(
    source_name: &str,
    index: usize,
    field: &'static str,
    value: &str,
    digits: usize,
) -> Result<(), PublicBuildsError> {
    let ok = value.len() == digits
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if ok {
        return Ok(());
    }
    Err(PublicBuildsError::Field {
        source_name: source_name.to_owned(),
        index,
        field,
        value: value.to_owned(),
        digits,
    })
}

/// The commits whose build is `digest`, in the order recorded.
pub fn commits_of<'a>(builds: &'a [PublicBuild], digest: &str) -> Vec<&'a str> {
    builds
        .iter()
        .filter(|b| b.digest == digest)
        .map(|b| b.commit.as_str())
        .collect()
}

/// `builds.json` as written: one entry a line (module documentation).
pub fn to_text(builds: &[PublicBuild]) -> String {
    let lines: Vec<String> = builds
        .iter()
        .map(|b| {
            format!(
                "{{\"commit\": \"{}\", \"digest\": \"{}\"}}",
                b.commit, b.digest
            )
        })
        .collect();
    if lines.is_empty() {
        return "[]\n".to_owned();
    }
    format!("[\n{}\n]\n", lines.join(",\n"))
}

/// `text` (absent: a new list) with `commit → digest` recorded last; unchanged when that very
/// entry is already there.
///
/// # Errors
/// As [`parse`], for the old text or the new entry (another digest for a recorded commit).
pub fn append(
    text: Option<&str>,
    source_name: &str,
    commit: &str,
    digest: &str,
) -> Result<String, PublicBuildsError> {
    let mut builds = match text {
        Some(t) => parse(t, source_name)?,
        None => Vec::new(),
    };
    let entry = PublicBuild {
        commit: commit.to_ascii_lowercase(),
        digest: digest.to_ascii_lowercase(),
    };
    if !builds.contains(&entry) {
        builds.push(entry);
    }
    let written = to_text(&builds);
    // The new entry is checked as every other: the same rules, in one place.
    parse(&written, source_name)?;
    Ok(written)
}

/// Check that `later` only adds entries to `earlier` (both parsed).
///
/// # Errors
/// [`PublicBuildsError::Rewritten`] naming the first earlier entry changed or gone.
pub fn extends(
    earlier: &[PublicBuild],
    later: &[PublicBuild],
    source_name: &str,
) -> Result<(), PublicBuildsError> {
    match earlier
        .iter()
        .enumerate()
        .find(|(i, e)| later.get(*i) != Some(e))
    {
        Some((i, _)) => Err(PublicBuildsError::Rewritten {
            source_name: source_name.to_owned(),
            index: i + 1,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "1111111111111111111111111111111111111111";
    const C2: &str = "2222222222222222222222222222222222222222";

    fn digest(c: char) -> String {
        c.to_string().repeat(64)
    }

    #[test]
    fn entries_are_appended_and_the_text_is_what_the_format_says() {
        let one = append(None, "builds.json", C1, &digest('a')).unwrap();
        let two = append(Some(&one), "builds.json", C2, &digest('b')).unwrap();
        // Written by hand from the module documentation's format.
        let expected = format!(
            "[\n{{\"commit\": \"{C1}\", \"digest\": \"{}\"}},\n{{\"commit\": \"{C2}\", \"digest\": \"{}\"}}\n]\n",
            digest('a'),
            digest('b')
        );
        assert_eq!(two, expected);
        // The earlier file's text, less its closing bracket, begins the later one.
        assert!(two.starts_with(one.trim_end().trim_end_matches(']').trim_end()));
        // Recording the same entry again changes nothing.
        assert_eq!(
            append(Some(&two), "builds.json", C2, &digest('b')).unwrap(),
            two
        );
        let builds = parse(&two, "builds.json").unwrap();
        assert_eq!(commits_of(&builds, &digest('b')), [C2]);
        assert!(commits_of(&builds, &digest('c')).is_empty());
        assert_eq!(extends(&parse(&one, "x").unwrap(), &builds, "x"), Ok(()));
        assert_eq!(
            extends(&builds, &builds[1..], "later.json")
                .unwrap_err()
                .to_string(),
            "later.json: entry 1 of the earlier list was rewritten or removed"
        );
    }

    #[test]
    fn bad_lists_are_refused_naming_the_entry() {
        let two = append(None, "b.json", C1, &digest('a')).unwrap();
        assert_eq!(
            append(Some(&two), "b.json", C1, &digest('b'))
                .unwrap_err()
                .to_string(),
            format!(
                "b.json: commit {C1} is recorded with digest {} and again with {}; a commit has \
                 one build digest (is the build reproducible?)",
                digest('a'),
                digest('b')
            )
        );
        assert_eq!(
            append(None, "b.json", "abc", &digest('a'))
                .unwrap_err()
                .to_string(),
            "b.json: entry 1: commit \"abc\" is not 40 lowercase hexadecimal digits"
        );
        let text = format!(
            "[{{\"commit\": \"{C1}\", \"digest\": \"{}\"}}]",
            "G".repeat(64)
        );
        assert!(matches!(
            parse(&text, "b.json"),
            Err(PublicBuildsError::Field {
                field: "digest",
                index: 1,
                ..
            })
        ));
        assert!(matches!(
            parse("{\"commit\": 1}", "b.json"),
            Err(PublicBuildsError::Parse { .. })
        ));
    }
}
