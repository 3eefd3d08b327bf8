//! The web app, served by the collector from the built `dist/` directory with a strict
//! Content-Security-Policy: scripts only from this origin (plus the exact inline bootstrap that
//! `www/index.html` carries, allowed by its SHA-256), WebAssembly compilation
//! (`'wasm-unsafe-eval'`), network access only to this origin and the services participants
//! upload to, no frames, no plugins, no third-party anything.

use crate::error::ApiError;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use orthomask_survey::app_build::{AppBuildError, FileDigest, SERVICE_WORKER, app_files};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What the web app may connect to besides its own origin.
#[derive(Clone, Debug)]
pub struct WebApp {
    dir: PathBuf,
    connect: Vec<String>,
}

/// The inline `<script>` and `<style>` bodies of an HTML page.
fn inline_blocks(html: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(start) = lower[at..].find(&open).map(|i| i + at) {
        let Some(tag_end) = lower[start..].find('>').map(|i| i + start) else {
            break;
        };
        let attributes = &lower[start + open.len()..tag_end];
        let Some(end) = lower[tag_end..].find(&close).map(|i| i + tag_end) else {
            break;
        };
        let external = attributes.split_whitespace().any(|a| a.starts_with("src="));
        if !external {
            out.push(html[tag_end + 1..end].to_owned());
        }
        at = end + close.len();
    }
    out
}

fn hash_source(body: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body.as_bytes()))
    )
}

/// The Content-Security-Policy for a page with this HTML.
pub fn content_security_policy(html: &str, connect: &[String]) -> String {
    let scripts: Vec<String> = inline_blocks(html, "script")
        .iter()
        .map(|s| hash_source(s))
        .collect();
    let styles: Vec<String> = inline_blocks(html, "style")
        .iter()
        .map(|s| hash_source(s))
        .collect();
    let join = |extra: &[String]| {
        if extra.is_empty() {
            String::new()
        } else {
            format!(" {}", extra.join(" "))
        }
    };
    // `style-src-attr 'unsafe-inline'`: the plots' text layout (plotters' web fonts) measures each
    // label in a `<span>` whose `style` attribute sets the font; blocked, every label is measured
    // at the default font and the analyst view logs a violation per label. A style attribute runs
    // no script and loads nothing (`img-src`, `font-src` still apply), and the app writes no
    // untrusted markup (yew escapes text), so this admits no one else's code. Stylesheets and
    // `<style>` elements stay limited to this origin and the hashed inline blocks.
    format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'{}; style-src 'self'{}; \
         style-src-attr 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'{}; worker-src 'self'; \
         manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        join(&scripts),
        join(&styles),
        join(connect)
    )
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "csv" => "text/csv; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The origin (`scheme://host[:port]`) of a URL.
pub fn origin(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split('/').next().unwrap_or(rest);
            format!("{scheme}://{host}")
        }
        None => url.to_owned(),
    }
}

/// Why the build digest of a web app directory could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum LocalBuildError {
    /// A file of the build cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Its service worker names no app files (`orthomask_survey::app_build`).
    #[error("{path}: {source}")]
    ServiceWorker {
        /// The service worker.
        path: String,
        /// Why.
        source: AppBuildError,
    },
}

/// The files of the web app built in `dir`, as its service worker names them, with their
/// digests (`orthomask_survey::app_build`): what the collector publishes as its build and what
/// `orthomask audit --app --build DIR` compares a served app with.
///
/// # Errors
/// [`LocalBuildError`] naming the file.
pub fn local_build(dir: &Path) -> Result<Vec<FileDigest>, LocalBuildError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| LocalBuildError::Read {
            path: path.display().to_string(),
            source,
        })
    };
    let sw = read(SERVICE_WORKER)?;
    let names = app_files(&String::from_utf8_lossy(&sw)).map_err(|source| {
        LocalBuildError::ServiceWorker {
            path: dir.join(SERVICE_WORKER).display().to_string(),
            source,
        }
    })?;
    names
        .iter()
        .map(|name| Ok(FileDigest::of(name, &read(name)?)))
        .collect()
}

impl WebApp {
    /// Serve `dir`; the page may connect to `connect` (origins) besides its own.
    pub fn new(dir: PathBuf, connect: Vec<String>) -> Self {
        Self { dir, connect }
    }

    /// Answer a request for a static file.
    pub async fn serve(&self, uri: &Uri) -> Response {
        let path = uri.path();
        if path.starts_with("/api/") || path == "/api" {
            return crate::http::not_found().await.into_response();
        }
        let relative = path.trim_start_matches('/');
        let relative = if relative.is_empty() {
            "index.html"
        } else {
            relative
        };
        let safe = relative.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        });
        if !safe {
            return ApiError::not_found("no such file").into_response();
        }
        let file = self.dir.join(relative);
        let bytes = match tokio::fs::read(&file).await {
            Ok(b) => b,
            Err(_) if relative == "index.html" => {
                return ApiError::not_found(format!(
                    "the web app is not built: no {} (run bash scripts/build-web.sh)",
                    file.display()
                ))
                .into_response();
            }
            Err(_) => return ApiError::not_found("no such file").into_response(),
        };
        let index = self.dir.join("index.html");
        let html = if relative == "index.html" {
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            tokio::fs::read_to_string(&index).await.unwrap_or_default()
        };
        let csp = content_security_policy(&html, &self.connect);
        let mut response = (StatusCode::OK, bytes).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(&file)),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Ok(value) = HeaderValue::from_str(&csp) {
            headers.insert(header::CONTENT_SECURITY_POLICY, value);
        }
        headers.insert(
            "cross-origin-opener-policy",
            HeaderValue::from_static("same-origin"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline bootstrap's hash is the SHA-256 of exactly the text between the tags.
    #[test]
    fn inline_scripts_are_hashed_and_external_ones_are_not() {
        let html = "<html><head><script type=\"module\">import init from './a.js';init();</script>\
                    <script src=\"./x.js\"></script><STYLE>p{}</STYLE></head></html>";
        let csp = content_security_policy(html, &["http://127.0.0.1:8081".into()]);
        let expected = hash_source("import init from './a.js';init();");
        assert!(csp.contains(&format!("script-src 'self' 'wasm-unsafe-eval' {expected};")));
        assert!(csp.contains(&format!("style-src 'self' {};", hash_source("p{}"))));
        assert!(csp.contains("connect-src 'self' http://127.0.0.1:8081;"));
        // Inline code never: only style attributes (see `content_security_policy`).
        assert!(!csp.contains("script-src 'self' 'unsafe-inline'"));
        assert_eq!(csp.matches("'unsafe-inline'").count(), 1);
        assert!(csp.contains("style-src-attr 'unsafe-inline';"));
        assert_eq!(
            inline_blocks(html, "script").len(),
            1,
            "the external script is not hashed"
        );
    }

    #[test]
    fn origins_drop_the_path() {
        assert_eq!(
            origin("http://127.0.0.1:8081/api/x"),
            "http://127.0.0.1:8081"
        );
        assert_eq!(origin("https://msp.example"), "https://msp.example");
    }
}
