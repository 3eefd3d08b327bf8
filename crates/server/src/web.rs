//! The web app, served by the collector from the built `dist/` directory with a strict
//! Content-Security-Policy: scripts only from this origin (plus the exact inline bootstrap that
//! `www/index.html` carries, allowed by its SHA-256), WebAssembly compilation
//! (`'wasm-unsafe-eval'`), network access only to this origin and the services participants
//! upload to, no frames, no plugins, no third-party anything.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use orthomask_survey::app_build::{
    AppBuildError, FileDigest, SERVICE_WORKER, app_files, declared_files, is_content_hashed,
};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tower::ServiceExt as _;
use tower_http::services::ServeDir;

/// The built web app in a directory, served with its Content-Security-Policy and cache headers.
#[derive(Clone, Debug)]
pub struct WebApp {
    dir: PathBuf,
    /// What the web app may connect to besides its own origin.
    connect: Vec<String>,
    files: ServeDir,
    policy: Arc<Mutex<Option<CachedPolicy>>>,
}

/// The policy computed for one version of `index.html`.
#[derive(Debug)]
struct CachedPolicy {
    stamp: (Option<SystemTime>, u64),
    header: HeaderValue,
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
    /// The service worker declares a digest for a file that is not the file's.
    #[error(
        "{path}: the service worker declares its SHA-256 as {declared}, but the file's is \
         {actual}; build the app again (bash scripts/build-web.sh)"
    )]
    DeclaredDigest {
        /// The file.
        path: String,
        /// What `sw.js`'s `LAZY_FILES` or `DECLARED_FILES` says.
        declared: String,
        /// What the file's bytes give.
        actual: String,
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
    let sw_text = String::from_utf8_lossy(&sw);
    let bad_worker = |source| LocalBuildError::ServiceWorker {
        path: dir.join(SERVICE_WORKER).display().to_string(),
        source,
    };
    let names = app_files(&sw_text).map_err(bad_worker)?;
    let declared = declared_files(&sw_text).map_err(bad_worker)?;
    let files = names
        .iter()
        .map(|name| Ok(FileDigest::of(name, &read(name)?)))
        .collect::<Result<Vec<_>, LocalBuildError>>()?;
    // A page takes a declared file's digest from these declarations instead of reading it: they
    // must be the files' own, or such a page would compute another build than this one.
    for declared in &declared {
        if let Some(file) = files.iter().find(|f| f.path == declared.path)
            && file.sha256 != declared.sha256
        {
            return Err(LocalBuildError::DeclaredDigest {
                path: dir.join(&file.path).display().to_string(),
                declared: declared.sha256.clone(),
                actual: file.sha256.clone(),
            });
        }
    }
    Ok(files)
}

impl WebApp {
    /// Serve `dir`; the page may connect to `connect` (origins) besides its own.
    pub fn new(dir: PathBuf, connect: Vec<String>) -> Self {
        // Precompressed variants (`x.br`, `x.gz`, written by scripts/build-web.sh) are served to
        // clients that accept them; ServeDir adds `ETag` and `Last-Modified` (and answers
        // `If-None-Match`/`If-Modified-Since` with 304), Range and `Vary: accept-encoding`, and
        // streams the file instead of reading it whole.
        let files = ServeDir::new(&dir)
            .precompressed_br()
            .precompressed_gzip()
            .append_index_html_on_directories(false)
            .redirect_to_trailing_slash(false);
        Self {
            dir,
            connect,
            files,
            policy: Arc::new(Mutex::new(None)),
        }
    }

    /// The Content-Security-Policy for the current `index.html`: computed again only when the
    /// file changes (its modification time or length), not per request. Without a readable
    /// `index.html` it is the policy of a page with no inline code: as strict as it gets.
    async fn policy(&self) -> Option<HeaderValue> {
        let index = self.dir.join("index.html");
        let stamp = match tokio::fs::metadata(&index).await {
            Ok(meta) => (meta.modified().ok(), meta.len()),
            Err(_) => (None, 0),
        };
        if let Ok(cached) = self.policy.lock()
            && let Some(known) = cached.as_ref()
            && known.stamp == stamp
        {
            return Some(known.header.clone());
        }
        let html = tokio::fs::read_to_string(&index).await.unwrap_or_default();
        let header = HeaderValue::from_str(&content_security_policy(&html, &self.connect)).ok()?;
        if let Ok(mut cached) = self.policy.lock() {
            *cached = Some(CachedPolicy {
                stamp,
                header: header.clone(),
            });
        }
        Some(header)
    }

    /// Answer a request for a static file: only names of letters, digits, `.`, `-` and `_`
    /// (no hidden files, no `..`), a JSON 404 otherwise, and the headers of [`cache_control`].
    pub async fn serve(&self, request: Request) -> Response {
        let path = request.uri().path();
        if path.starts_with("/api/") || path == "/api" {
            return crate::http::not_found().await.into_response();
        }
        let relative = path.trim_start_matches('/');
        let relative = if relative.is_empty() {
            "index.html"
        } else {
            relative
        }
        .to_owned();
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
        // The same request (method, conditional and range headers) for the checked path alone:
        // no query string reaches the file server.
        let (mut parts, _) = request.into_parts();
        parts.uri = match format!("/{relative}").parse() {
            Ok(uri) => uri,
            Err(_) => return ApiError::not_found("no such file").into_response(),
        };
        let Ok(response) = self
            .files
            .clone()
            .oneshot(Request::from_parts(parts, Body::empty()))
            .await;
        let status = response.status();
        if status == StatusCode::NOT_FOUND {
            return if relative == "index.html" {
                ApiError::not_found(format!(
                    "the web app is not built: no {} (run bash scripts/build-web.sh)",
                    self.dir.join("index.html").display()
                ))
                .into_response()
            } else {
                ApiError::not_found("no such file").into_response()
            };
        }
        // Every other refusal of the file server (a method other than GET or HEAD, a range the
        // file does not have, a file that cannot be read) is one JSON line, as the API's are.
        if status.is_client_error() || status.is_server_error() {
            let why = match status {
                StatusCode::METHOD_NOT_ALLOWED => {
                    return crate::http::method_not_allowed().await.into_response();
                }
                StatusCode::RANGE_NOT_SATISFIABLE => "the range is not in the file",
                StatusCode::PRECONDITION_FAILED => "the file is not the version the request names",
                _ => "the file cannot be read",
            };
            let mut refusal = ApiError::new(status, format!("/{relative}: {why}")).into_response();
            // A 416 names the file's length, as RFC 9110 asks.
            if let Some(range) = response.headers().get(header::CONTENT_RANGE) {
                refusal
                    .headers_mut()
                    .insert(header::CONTENT_RANGE, range.clone());
            }
            return refusal;
        }
        let mut response = response.map(Body::new);
        let headers = response.headers_mut();
        if status.is_success() {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(Path::new(&relative))),
            );
        }
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control(&relative)),
        );
        if let Some(csp) = self.policy().await {
            headers.insert(header::CONTENT_SECURITY_POLICY, csp);
        }
        headers.insert(
            "cross-origin-opener-policy",
            HeaderValue::from_static("same-origin"),
        );
        if relative == "index.html" && status.is_success() {
            headers.insert(header::LINK, HeaderValue::from_static(PRECONNECT));
        }
        response
    }
}

/// What the app's page is sent with (`Link`): open one more connection to this origin as soon as
/// the page's headers arrive. The page's first script asks for the WebAssembly module, on a slow
/// network the longest wait (issue 25); the browser is still setting the page up when it does,
/// and without a connection ready the request waits a round trip more for one to open.
pub const PRECONNECT: &str = "</>; rel=preconnect";

/// How long a browser may keep a file without asking again: a content-hashed name
/// ([`is_content_hashed`]) names one content forever, so it is `immutable` for a year; every other
/// file (`index.html`, `sw.js`, `worker.js`, the demonstration surveys, …) is `no-cache`: kept, but
/// revalidated on each use, which its `ETag` makes a 304 of a few hundred bytes when unchanged.
pub fn cache_control(relative: &str) -> &'static str {
    if is_content_hashed(relative) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
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

    /// A collector whose service worker declares another digest for a file than the file's (a
    /// page would take the declaration and compute another build) publishes no build from it:
    /// the file and both digests are named, for either list.
    #[test]
    fn a_declared_digest_that_is_not_the_files_own_is_refused() {
        for list in ["LAZY_FILES", "DECLARED_FILES"] {
            let dir = tempfile::tempdir().unwrap();
            let module = b"the whole app's module";
            std::fs::write(dir.path().join("whole.wasm"), module).unwrap();
            let own = orthomask_survey::merkle::sha256_hex(module);
            let sw = |declared: &str| {
                format!(
                    "const APP_FILES = ['whole.wasm'];\nconst {list} = {{ 'whole.wasm': '{declared}' }};"
                )
            };
            std::fs::write(dir.path().join("sw.js"), sw(&own)).unwrap();
            let files = local_build(dir.path()).unwrap();
            assert_eq!(files.len(), 2, "sw.js and the module");
            let other = "0".repeat(64);
            std::fs::write(dir.path().join("sw.js"), sw(&other)).unwrap();
            match local_build(dir.path()) {
                Err(LocalBuildError::DeclaredDigest {
                    path,
                    declared,
                    actual,
                }) => {
                    assert!(path.ends_with("whole.wasm"), "{path}");
                    assert_eq!((declared, actual), (other, own));
                }
                other => panic!("{list}: expected DeclaredDigest, got {other:?}"),
            }
        }
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
