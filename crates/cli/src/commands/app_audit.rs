//! `orthomask audit --app URL`: is the web app a collector serves the published build (issue 27
//! §3)? Every file the served service worker names is fetched (`orthomask_survey::app_build`),
//! its build digest computed, and compared with `--expect DIGEST` or with the build in a local
//! directory (`--build DIR`, e.g. what `scripts/reproduce.sh` built from a public commit): "same
//! build", or the first file that differs.
//!
//! What it proves is what was served to this request: a collector that serves an altered build to
//! one participant only is caught when that participant, or an auditor at that moment, checks
//! (`docs/threat-model.md`).

use anyhow::{Context, Result, anyhow, bail};
use orthomask_server::web::local_build;
use orthomask_survey::app_build::{
    FileDigest, SERVICE_WORKER, app_files, build_digest, first_difference,
};
use std::path::Path;
use std::time::Duration;

/// The largest file fetched (the WebAssembly module is about 3 MB): a hostile server cannot make
/// the audit read without end.
const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// What the audit compares the served app with.
pub enum Expected<'a> {
    /// A published build digest.
    Digest(&'a str),
    /// A build directory on this machine.
    Build(&'a Path),
}

/// The verdict, as printed.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Same digest.
    Same {
        /// The digest both have.
        digest: String,
    },
    /// Not the same build.
    Different {
        /// The served app's digest.
        served: String,
        /// The expected digest.
        expected: String,
        /// The first differing file, when the expected build's files are known.
        first: Option<String>,
    },
}

/// Check the app served at `url` against `expected`.
///
/// # Errors
/// One line: an address that cannot be fetched (naming the file), a service worker that names no
/// app files, a build directory that lacks a file its service worker names.
pub fn audit_app(url: &str, expected: Expected<'_>) -> Result<Verdict> {
    let served = fetch_app(url)?;
    let served_digest = build_digest(&served);
    let (expected_digest, expected_files) = match expected {
        Expected::Digest(d) => (d.trim().to_ascii_lowercase(), None),
        Expected::Build(dir) => {
            let files = local_build(dir)?;
            (build_digest(&files), Some(files))
        }
    };
    if served_digest == expected_digest {
        return Ok(Verdict::Same {
            digest: served_digest,
        });
    }
    Ok(Verdict::Different {
        first: expected_files.and_then(|files| first_difference(&served, &files)),
        served: served_digest,
        expected: expected_digest,
    })
}

/// Fetch every file of the app served at `url` (its root: `https://collector.example/`).
fn fetch_app(url: &str) -> Result<Vec<FileDigest>> {
    let base = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        bail!("--app {url}: not an http:// or https:// address");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the HTTP client")?;
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .context("starting the HTTP client")?;
        let sw_bytes = fetch(&client, &base, SERVICE_WORKER).await?;
        let sw = String::from_utf8(sw_bytes.clone())
            .map_err(|_| anyhow!("{base}{SERVICE_WORKER}: not UTF-8"))?;
        let names = app_files(&sw).with_context(|| format!("{base}{SERVICE_WORKER}"))?;
        let mut files = Vec::with_capacity(names.len());
        for name in &names {
            let bytes = if name == SERVICE_WORKER {
                sw_bytes.clone()
            } else {
                fetch(&client, &base, name).await?
            };
            files.push(FileDigest::of(name, &bytes));
        }
        Ok(files)
    })
}

/// One file's bytes, exactly as served (no transformation but the transfer encoding).
async fn fetch(client: &reqwest::Client, base: &str, name: &str) -> Result<Vec<u8>> {
    let url = format!("{base}{name}");
    let mut response = client
        .get(&url)
        .send()
        .await
        .map_err(|e| anyhow!("{url}: {e}"))?;
    if !response.status().is_success() {
        bail!("{url}: answered {}", response.status());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| anyhow!("{url}: {e}"))? {
        if bytes.len() + chunk.len() > MAX_FILE_BYTES {
            bail!("{url}: larger than {MAX_FILE_BYTES} bytes");
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}
