//! The web app's build digest (issue 27): one SHA-256 that names exactly the files a collector
//! serves as the app, so that a participant or an auditor can check that the code which masked
//! the answers is the published build.
//!
//! **Which files.** The service worker (`sw.js`) lists every file the app needs offline in its
//! `APP_FILES` array (the end-to-end tests check that list against the built `dist/`); the app is
//! `sw.js` and those files, with `./` read as `index.html`. The same rule serves a local build
//! directory and a served app, so the two digests are comparable whoever computes them.
//!
//! **The digest.** For each file the line `sha256(bytes)  path` (lowercase hexadecimal, two
//! spaces: `sha256sum`'s own format, where the issue wrote the pair the other way round, so that
//! coreutils recompute it), the lines sorted by path byte by byte and each ended by `\n`, and the
//! SHA-256 of that text. So the digest is a function of the files' names and bytes alone — not of
//! their order, the directory they were built in or when — and anyone can recompute it in the
//! app's directory: `sha256sum sw.js index.html … | LC_ALL=C sort -k2 | sha256sum`.

use orthomask_formats::manifest::{BuildCount, ReceiptRoot};
use sha2::{Digest, Sha256};

/// The service worker: the one file that names all others.
pub const SERVICE_WORKER: &str = "sw.js";

/// Why a service worker does not name the app's files.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppBuildError {
    /// No `const APP_FILES = [ … ];` in it.
    #[error("sw.js names no app files: it has no `const APP_FILES = [ … ];`")]
    NoFileList,
    /// An entry that is not a quoted relative path inside the app.
    #[error("sw.js's APP_FILES has an entry that is not a file of the app: {0:?}")]
    BadEntry(String),
    /// A `LAZY_FILES` or `DECLARED_FILES` entry that is not `'file of APP_FILES': 'SHA-256 in
    /// hexadecimal'` (or declares `index.html`, or a file twice).
    #[error(
        "sw.js's {list} has an entry that is not a file of APP_FILES (other than index.html, \
         once) with its SHA-256: {entry:?}"
    )]
    BadDeclaredEntry {
        /// `LAZY_FILES` or `DECLARED_FILES`.
        list: &'static str,
        /// The entry, as written.
        entry: String,
    },
}

/// The files of the app whose service worker is `sw_js`, in its order: `sw.js` first, then each
/// `APP_FILES` entry once (`./` is `index.html`).
///
/// # Errors
/// [`AppBuildError`] when the list is missing, or an entry is absolute, leaves the app's
/// directory (`..`), has a query or is not quoted.
pub fn app_files(sw_js: &str) -> Result<Vec<String>, AppBuildError> {
    let start = sw_js
        .find("const APP_FILES = [")
        .ok_or(AppBuildError::NoFileList)?
        + "const APP_FILES = [".len();
    let end = sw_js[start..].find("];").ok_or(AppBuildError::NoFileList)? + start;
    let mut files = vec![SERVICE_WORKER.to_owned()];
    for entry in sw_js[start..end]
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let quoted = entry
            .strip_prefix('\'')
            .and_then(|e| e.strip_suffix('\''))
            .or_else(|| entry.strip_prefix('"').and_then(|e| e.strip_suffix('"')));
        let path = match quoted {
            Some("./") => "index.html",
            Some(p) => p.strip_prefix("./").unwrap_or(p),
            None => return Err(AppBuildError::BadEntry(entry.to_owned())),
        };
        let inside = !path.is_empty()
            && !path.starts_with('/')
            && !path.contains(['?', '#', '\\'])
            && path.split('/').all(|part| !part.is_empty() && part != "..");
        if !inside {
            return Err(AppBuildError::BadEntry(entry.to_owned()));
        }
        if !files.iter().any(|f| f == path) {
            files.push(path.to_owned());
        }
    }
    Ok(files)
}

/// The files of the app whose SHA-256 the service worker declares, so that a page computes its
/// build digest without reading them (issue 25: on a slow phone each read is a wait before a
/// place is taken), from its two lists of `'path': 'sha256'` entries (none when it has neither):
///
/// * `LAZY_FILES`, the files a participant's page never loads (the whole app's module, glue and
///   worker): the service worker does not fetch them on install;
/// * `DECLARED_FILES`, every other file but `index.html`: those `index.html` loads with their
///   Subresource Integrity digest (the participant's module and glue, the style sheet), and those
///   no participant's page needs (the manifest, the icon, the bundled demonstrations).
///
/// scripts/stage_web.py writes both. A page then reads only `sw.js` and `index.html`.
///
/// Why the build digest stays whole: the declarations are bytes of `sw.js`, which is itself one
/// of the build's files, so a build digest computed with them is the published one only if
/// `sw.js` — and so every declared digest — is the published one; and the collector checks that
/// each declaration is the file's own digest (`orthomask_server::web::local_build`). A file the
/// page runs was fetched with the Subresource Integrity digest `index.html` names, and
/// `index.html` is never declared (an entry for it is refused): the page reads and hashes it, so
/// those digests are the published ones too, and the browser runs nothing else. What a page
/// then does not check itself is a changed manifest, icon or demonstration file: none of them
/// runs or reaches an upload, and `orthomask audit --app` compares every served file.
///
/// # Errors
/// [`AppBuildError`] when `APP_FILES` is missing or bad, or an entry is not a quoted path of
/// `APP_FILES` other than `index.html` with a quoted 64-digit lowercase hexadecimal SHA-256, or
/// a file is declared twice.
pub fn declared_files(sw_js: &str) -> Result<Vec<FileDigest>, AppBuildError> {
    let app = app_files(sw_js)?;
    let mut declared: Vec<FileDigest> = Vec::new();
    for list in ["LAZY_FILES", "DECLARED_FILES"] {
        declared_list(sw_js, list, &app, &mut declared)?;
    }
    Ok(declared)
}

/// The entries of `const {list} = { … };` in `sw_js`, appended to `declared`.
fn declared_list(
    sw_js: &str,
    list: &'static str,
    app: &[String],
    declared: &mut Vec<FileDigest>,
) -> Result<(), AppBuildError> {
    let opening = format!("const {list} = {{");
    let Some(start) = sw_js.find(&opening).map(|i| i + opening.len()) else {
        return Ok(());
    };
    let bad = |entry: &str| AppBuildError::BadDeclaredEntry {
        list,
        entry: entry.to_owned(),
    };
    let end = sw_js[start..]
        .find("};")
        .ok_or_else(|| bad(&sw_js[start..].chars().take(40).collect::<String>()))?
        + start;
    let unquote = |text: &str| {
        let text = text.trim();
        text.strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_owned)
    };
    for entry in sw_js[start..end]
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let (name, digest) = entry.split_once(':').ok_or_else(|| bad(entry))?;
        let (name, digest) = (
            unquote(name).ok_or_else(|| bad(entry))?,
            unquote(digest).ok_or_else(|| bad(entry))?,
        );
        let path = match name.strip_prefix("./").unwrap_or(&name) {
            "" => "index.html".to_owned(),
            path => path.to_owned(),
        };
        let hexadecimal = digest.len() == 64
            && digest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hexadecimal
            || path == "index.html"
            || !app.contains(&path)
            || declared.iter().any(|f| f.path == path)
        {
            return Err(bad(entry));
        }
        declared.push(FileDigest {
            path,
            sha256: digest,
        });
    }
    Ok(())
}

/// How many hexadecimal digits of a file's SHA-256 its content-hashed name carries
/// (`orthomask-web-0123456789abcdef_bg.wasm`; scripts/build-web.sh names them).
pub const CONTENT_HASH_DIGITS: usize = 16;

/// Whether `path` is a content-hashed name: its file name is `STEM-HASH.EXT` or
/// `STEM-HASH_bg.EXT` with HASH [`CONTENT_HASH_DIGITS`] lowercase hexadecimal digits. Such a name
/// names one content forever, so the collector serves it as `immutable` and the service worker
/// answers it from its cache without asking the network.
pub fn is_content_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some(dot) = name.find('.') else {
        return false;
    };
    let stem = name[..dot].strip_suffix("_bg").unwrap_or(&name[..dot]);
    let Some((head, hash)) = stem.rsplit_once('-') else {
        return false;
    };
    !head.is_empty()
        && hash.len() == CONTENT_HASH_DIGITS
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One file of a build: its path in the app and the SHA-256 of its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDigest {
    /// Path relative to the app's root (`orthomask-web_bg.wasm`, `surveys/leaps-demo.json`).
    pub path: String,
    /// SHA-256 of the bytes, lowercase hexadecimal.
    pub sha256: String,
}

impl FileDigest {
    /// The digest of `bytes` served as `path`.
    pub fn of(path: &str, bytes: &[u8]) -> Self {
        Self {
            path: path.to_owned(),
            sha256: crate::merkle::sha256_hex(bytes),
        }
    }
}

/// The build digest of `files` (module documentation): order does not matter.
pub fn build_digest(files: &[FileDigest]) -> String {
    let mut lines: Vec<String> = files
        .iter()
        .map(|f| format!("{}  {}\n", f.sha256, f.path))
        .collect();
    // Sorted by path: the text after the hash's 64 digits and the two spaces.
    lines.sort_by(|a, b| a[66..].cmp(&b[66..]));
    let mut hasher = Sha256::new();
    for line in &lines {
        hasher.update(line.as_bytes());
    }
    orthomask_core::hex::encode(&hasher.finalize())
}

/// How two builds differ: the first file (by path) that one has and the other lacks, or whose
/// bytes differ. `None` when they are the same build.
pub fn first_difference(served: &[FileDigest], expected: &[FileDigest]) -> Option<String> {
    let mut paths: Vec<&str> = served
        .iter()
        .chain(expected)
        .map(|f| f.path.as_str())
        .collect();
    paths.sort_unstable();
    paths.dedup();
    let find =
        |list: &[FileDigest], p: &str| list.iter().find(|f| f.path == p).map(|f| f.sha256.clone());
    paths
        .into_iter()
        .find_map(|p| match (find(served, p), find(expected, p)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(_), Some(_)) => Some(format!("{p} differs")),
            (Some(_), None) => Some(format!("{p} is served but not in the expected build")),
            (None, _) => Some(format!("{p} is in the expected build but not served")),
        })
}

/// Why an upload's build is not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The upload names a build the deployment does not publish as accepted.
    #[error(
        "the upload was made by app build {claimed:?}, which this deployment does not accept \
         (it accepts {accepted}); reload the page to run the published build"
    )]
    NotAccepted {
        /// The digest the upload names (empty: none).
        claimed: String,
        /// The accepted digests, comma-separated.
        accepted: String,
    },
}

/// The rule every accepting service applies to an upload's build digest (issue 27 §2), and the
/// honest app to its own before it sends anything: when the deployment publishes a list of
/// accepted builds (`Deployment::builds`: the build it serves and earlier ones the team still
/// accepts), the digest must be one of them. A deployment that publishes none serves no web
/// app; its uploads come from other clients and are taken whatever they name (they are still
/// counted by the digest they name, so an auditor sees them).
///
/// The digest is the uploader's claim: an altered build can name the published digest. What
/// the rule gives is that the honest build refuses to send when its own files are not a
/// published build, and that every receipt list and manifest counts uploads by build.
///
/// # Errors
/// [`BuildError::NotAccepted`] naming the claim and the list.
pub fn check_claimed(accepted: &[String], claimed: &str) -> Result<(), BuildError> {
    if accepted.is_empty() || accepted.iter().any(|a| a == claimed) {
        return Ok(());
    }
    Err(BuildError::NotAccepted {
        claimed: claimed.to_owned(),
        accepted: accepted.join(", "),
    })
}

/// How many of `claims` name each digest, sorted by digest.
pub fn count<'a>(claims: impl IntoIterator<Item = &'a str>) -> Vec<BuildCount> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for claim in claims {
        *counts.entry(claim).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(digest, uploads)| BuildCount {
            digest: digest.to_owned(),
            uploads,
        })
        .collect()
}

/// The builds of a release: for each released cohort the counts of the first service's receipt
/// list (in share mode every right-masking service holds a share of the same participants, so
/// one service counts each participant once), added up over the cohorts, sorted by digest.
pub fn release_builds(roots: &[ReceiptRoot]) -> Vec<BuildCount> {
    let mut seen = std::collections::BTreeSet::new();
    let mut totals = std::collections::BTreeMap::<&str, usize>::new();
    for root in roots.iter().filter(|r| seen.insert(r.cohort)) {
        for b in &root.builds {
            *totals.entry(b.digest.as_str()).or_default() += b.uploads;
        }
    }
    totals
        .into_iter()
        .map(|(digest, uploads)| BuildCount {
            digest: digest.to_owned(),
            uploads,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SW: &str = "const CACHE = 'x';\nconst APP_FILES = [\n  './',\n  'index.html',\n  'a.js',\n  'surveys/b.json',\n];\nconst other = [1];";

    #[test]
    fn the_service_worker_names_the_app() {
        assert_eq!(
            app_files(SW).unwrap(),
            ["sw.js", "index.html", "a.js", "surveys/b.json"]
        );
        assert_eq!(app_files("nothing"), Err(AppBuildError::NoFileList));
        for bad in ["'/etc/passwd'", "'../x'", "'a?token=1'", "a.js", "'x//y'"] {
            let sw = format!("const APP_FILES = [{bad}];");
            assert_eq!(
                app_files(&sw),
                Err(AppBuildError::BadEntry(bad.to_owned())),
                "{bad}"
            );
        }
    }

    /// Reference values from coreutils, independent of this code:
    /// `printf 'hello\n' > a.txt; printf 'world\n' > b/c.txt;
    /// sha256sum a.txt b/c.txt | LC_ALL=C sort -k2 | sha256sum`.
    #[test]
    fn files_are_declared_with_their_digests() {
        let sw = "const APP_FILES = ['./', 'a-0123456789abcdef.js', 'b.wasm', 'c.svg'];\n\
                  const LAZY_FILES = {\n  'a-0123456789abcdef.js': '"
            .to_owned()
            + &"ab".repeat(32)
            + "',\n};\nconst DECLARED_FILES = { './c.svg': '"
            + &"cd".repeat(32)
            + "' };";
        assert_eq!(
            declared_files(&sw).unwrap(),
            [
                FileDigest {
                    path: "a-0123456789abcdef.js".into(),
                    sha256: "ab".repeat(32)
                },
                FileDigest {
                    path: "c.svg".into(),
                    sha256: "cd".repeat(32)
                }
            ]
        );
        // No list: nothing is declared (a build from before issue 25).
        assert_eq!(declared_files("const APP_FILES = ['b.wasm'];"), Ok(vec![]));
        // A file outside APP_FILES, a short digest, uppercase, a missing quote, a duplicate,
        // index.html under either of its names (the page always reads it).
        for entry in [
            format!("'c.js': '{}'", "ab".repeat(32)),
            "'b.wasm': 'abcd'".to_owned(),
            format!("'b.wasm': '{}'", "AB".repeat(32)),
            format!("b.wasm: '{}'", "ab".repeat(32)),
            format!("'b.wasm': '{0}', 'b.wasm': '{0}'", "ab".repeat(32)),
            format!("'index.html': '{}'", "ab".repeat(32)),
            format!("'./': '{}'", "ab".repeat(32)),
        ] {
            for list in ["LAZY_FILES", "DECLARED_FILES"] {
                let sw =
                    format!("const APP_FILES = ['./', 'b.wasm'];\nconst {list} = {{ {entry} }};");
                assert!(
                    matches!(declared_files(&sw), Err(AppBuildError::BadDeclaredEntry { list: l, .. }) if l == list),
                    "{list}: {entry}"
                );
            }
        }
        // One file in both lists.
        let both = format!(
            "const APP_FILES = ['b.wasm'];\nconst LAZY_FILES = {{ 'b.wasm': '{0}' }};\n\
             const DECLARED_FILES = {{ 'b.wasm': '{0}' }};",
            "ab".repeat(32)
        );
        assert!(matches!(
            declared_files(&both),
            Err(AppBuildError::BadDeclaredEntry {
                list: "DECLARED_FILES",
                ..
            })
        ));
    }

    #[test]
    fn content_hashed_names_are_recognised() {
        for hashed in [
            "orthomask-web-0123456789abcdef_bg.wasm",
            "orthomask-participant-fedcba9876543210.js",
            "style-00000000000000ff.css",
            "dir/x-0123456789abcdef.js",
        ] {
            assert!(is_content_hashed(hashed), "{hashed}");
        }
        for plain in [
            "index.html",
            "sw.js",
            "worker.js",
            "orthomask-web_bg.wasm",
            "surveys/leaps-demo.json",
            "x-0123456789ABCDEF.js",
            "x-0123456789abcde.js",
            "-0123456789abcdef.js",
            "x-0123456789abcdef0.js",
        ] {
            assert!(!is_content_hashed(plain), "{plain}");
        }
    }

    #[test]
    fn the_digest_is_sha256sum_of_the_sorted_lines() {
        let a = FileDigest::of("a.txt", b"hello\n");
        let c = FileDigest::of("b/c.txt", b"world\n");
        assert_eq!(
            a.sha256,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        let digest = build_digest(&[a.clone(), c.clone()]);
        assert_eq!(digest, REFERENCE_DIGEST);
        // A function of the files alone: not of their order.
        assert_eq!(build_digest(&[c.clone(), a.clone()]), digest);
        // One byte changed, or a file renamed, changes it.
        assert_ne!(
            build_digest(&[a.clone(), FileDigest::of("b/c.txt", b"world!")]),
            digest
        );
        assert_ne!(
            build_digest(&[a, FileDigest::of("b/d.txt", b"world\n")]),
            digest
        );
    }

    /// `sha256sum a.txt b/c.txt | LC_ALL=C sort -k2 | sha256sum` for the files of the test above.
    const REFERENCE_DIGEST: &str =
        "3a29d12219085ed1dc9af7f2126cdcc2a10c575353752a84885966e7d8a60999";

    #[test]
    fn the_first_difference_is_named() {
        let build = |w: &[u8]| vec![FileDigest::of("a.js", b"a"), FileDigest::of("b.wasm", w)];
        assert_eq!(first_difference(&build(b"w"), &build(b"w")), None);
        assert_eq!(
            first_difference(&build(b"w"), &build(b"x")).as_deref(),
            Some("b.wasm differs")
        );
        let mut more = build(b"w");
        more.push(FileDigest::of("c.css", b"c"));
        assert_eq!(
            first_difference(&more, &build(b"w")).as_deref(),
            Some("c.css is served but not in the expected build")
        );
        assert_eq!(
            first_difference(&build(b"w"), &more).as_deref(),
            Some("c.css is in the expected build but not served")
        );
    }

    #[test]
    fn only_published_builds_are_accepted() {
        let accepted = vec!["aa".to_owned(), "bb".to_owned()];
        assert_eq!(check_claimed(&accepted, "bb"), Ok(()));
        assert_eq!(
            check_claimed(&accepted, "cc").unwrap_err().to_string(),
            "the upload was made by app build \"cc\", which this deployment does not accept (it \
             accepts aa, bb); reload the page to run the published build"
        );
        assert!(check_claimed(&accepted, "").is_err());
        // No published list: a deployment without a web app takes what other clients name.
        assert_eq!(check_claimed(&[], "cc"), Ok(()));
    }

    #[test]
    fn builds_are_counted_once_per_cohort() {
        let counts = |pairs: &[(&str, usize)]| -> Vec<BuildCount> {
            pairs
                .iter()
                .map(|(d, n)| BuildCount {
                    digest: (*d).to_owned(),
                    uploads: *n,
                })
                .collect()
        };
        assert_eq!(count(["b", "a", "b", "b"]), counts(&[("a", 1), ("b", 3)]));
        let root = |cohort, service: &str, builds| ReceiptRoot {
            cohort,
            service: service.to_owned(),
            count: 0,
            merkle_root: String::new(),
            builds,
        };
        // Share mode: two services of cohort 0 list the same participants.
        let roots = [
            root(0, "r0", counts(&[("a", 2), ("b", 1)])),
            root(0, "r1", counts(&[("a", 2), ("b", 1)])),
            root(1, "r0", counts(&[("b", 4)])),
        ];
        assert_eq!(release_builds(&roots), counts(&[("a", 2), ("b", 5)]));
    }
}
