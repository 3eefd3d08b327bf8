//! The build this page runs (issue 27 §2): the digest every upload names, and whether the page
//! may send at all.
//!
//! The page fetches the app's files as it loaded them (`services::app_build`: the service worker
//! `sw.js` and `index.html`; every other file its `APP_FILES` names has its digest declared in
//! `sw.js`: `orthomask_survey::app_build::declared_files`) and reads the copies
//! the service worker keeps in its cache; this module decides, with the one digest rule
//! (`orthomask_survey::app_build`):
//!
//! 1. the digest of the loaded files is the page's build;
//! 2. a cached copy that differs from the loaded file means the service worker would give the page
//!    another app than it runs (a half-finished update, or a cache someone filled): refused. The
//!    copies are read on a page no service worker controls: a controlled page loaded its files
//!    from that cache, so its copies are what it runs (a cache someone filled then shows as a
//!    build that is not published, 3.);
//! 3. when the deployment publishes accepted builds, the page's build must be one of them
//!    (`check_claimed`, the rule the services apply too): refused otherwise, before a place is
//!    taken and before anything is masked.
//!
//! What this proves, and what not (docs/threat-model.md): it is the honest build that refuses to
//! run when its files are not a published build, so a collector that swaps one file of an honest
//! build is caught by the page itself. A build altered on purpose can skip the check and name the
//! published digest; against it the counts by build in every receipt list and manifest, and an
//! auditor's `orthomask audit --app`, are the evidence.
//!
//! No I/O here.

use orthomask_survey::app_build::{BuildError, FileDigest, build_digest, check_claimed};
use orthomask_survey::trust::Deployment;

/// Why the page does not send from this build.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum OwnBuildError {
    /// The service worker's cached copy of a file is not the file the page loaded.
    #[error(
        "this page's {path} is not the copy the app keeps offline; reload the page before \
         answering (nothing was sent)"
    )]
    CacheDiffers {
        /// The file.
        path: String,
    },
    /// The page's build is not one the deployment accepts.
    #[error("{0}; nothing was sent")]
    NotPublished(#[from] BuildError),
    /// The page could not read its own files although the deployment publishes builds.
    #[error("this page could not read its own files to check its build ({0}); nothing was sent")]
    Unreadable(String),
    /// `/api/deployment` is not a deployment.
    #[error("this site's deployment description is not valid ({0}); nothing was sent")]
    Deployment(String),
}

/// The builds `deployment_text` accepts (empty for one that publishes none).
///
/// # Errors
/// [`OwnBuildError::Deployment`] when the text is not a deployment.
pub fn accepted_builds(deployment_text: &str) -> Result<Vec<String>, OwnBuildError> {
    serde_json::from_str::<Deployment>(deployment_text)
        .map(|d| d.builds)
        .map_err(|e| OwnBuildError::Deployment(e.to_string()))
}

/// The page's build digest, to be named in its uploads, from the files it `loaded` (or why it
/// could not read them) and the service worker's `cached` copies (those it has), checked against
/// the `accepted` builds (module documentation). A deployment that accepts no list takes the
/// page's uploads without one, so a page that cannot read its files then names no build.
///
/// # Errors
/// [`OwnBuildError`]: a cached copy differs, the build is not accepted, or the files could not be
/// read while a list is published.
pub fn own_build(
    accepted: &[String],
    loaded: Result<Vec<FileDigest>, String>,
    cached: &[FileDigest],
) -> Result<String, OwnBuildError> {
    let loaded = match loaded {
        Ok(files) => files,
        Err(_) if accepted.is_empty() => return Ok(String::new()),
        Err(why) => return Err(OwnBuildError::Unreadable(why)),
    };
    if let Some(copy) = cached.iter().find(|c| {
        loaded
            .iter()
            .any(|l| l.path == c.path && l.sha256 != c.sha256)
    }) {
        return Err(OwnBuildError::CacheDiffers {
            path: copy.path.clone(),
        });
    }
    let digest = build_digest(&loaded);
    check_claimed(accepted, &digest)?;
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(wasm: &[u8]) -> Vec<FileDigest> {
        vec![
            FileDigest::of("sw.js", b"const APP_FILES = ['a.wasm'];"),
            FileDigest::of("a.wasm", wasm),
        ]
    }

    #[test]
    fn the_page_sends_only_from_a_published_build_its_cache_agrees_with() {
        let published = build_digest(&app(b"wasm"));
        let accepted = vec!["e0".repeat(32), published.clone()];
        assert_eq!(
            own_build(&accepted, Ok(app(b"wasm")), &app(b"wasm")),
            Ok(published.clone())
        );
        // One byte changed in the module: not a published build.
        let altered = own_build(&accepted, Ok(app(b"wasM")), &[]).unwrap_err();
        assert!(
            matches!(altered, OwnBuildError::NotPublished(_)),
            "{altered}"
        );
        assert!(
            altered.to_string().ends_with("; nothing was sent"),
            "{altered}"
        );
        // The cache holds another module than the page loaded.
        assert_eq!(
            own_build(&accepted, Ok(app(b"wasm")), &app(b"old")[1..]),
            Err(OwnBuildError::CacheDiffers {
                path: "a.wasm".into()
            })
        );
        // Unreadable files: refused when a list is published, no build named otherwise.
        assert!(matches!(
            own_build(&accepted, Err("offline".into()), &[]),
            Err(OwnBuildError::Unreadable(_))
        ));
        assert_eq!(
            own_build(&[], Err("offline".into()), &[]),
            Ok(String::new())
        );
        // No list: the page names its build all the same.
        assert_eq!(
            own_build(&[], Ok(app(b"wasM")), &[]),
            Ok(build_digest(&app(b"wasM")))
        );
    }

    #[test]
    fn the_accepted_builds_are_the_deployments() {
        let text = serde_json::json!({
            "collector_public_key": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "collector": "http://c", "msp": "http://m", "rights": [],
            "build": "ab".repeat(32), "builds": ["ab".repeat(32), "cd".repeat(32)]
        })
        .to_string();
        assert_eq!(
            accepted_builds(&text).unwrap(),
            ["ab".repeat(32), "cd".repeat(32)]
        );
        assert!(matches!(
            accepted_builds("{}"),
            Err(OwnBuildError::Deployment(_))
        ));
    }
}
