//! HTTP plumbing shared by the services: extractors whose rejections are JSON errors, bearer
//! checks, rate limiting, CORS and the security headers every answer carries.

use crate::error::ApiError;
use crate::ratelimit::RateLimiter;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// A JSON body; malformed, oversized or mistyped bodies become one-line JSON errors.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Expected request with `Content-Type: application/json`",
            ));
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|rejection| {
                let status = rejection.status();
                let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    "the request body is larger than this service accepts".to_owned()
                } else {
                    rejection.body_text()
                };
                ApiError::new(status, message)
            })?;
        json_from_bytes(&bytes).map(Self)
    }
}

/// Read `bytes` as JSON of type `T`, as [`ApiJson`] does: serde refuses duplicate and unknown
/// fields; a syntax error is a 400, a data error a 422 naming where it is, in one line.
///
/// # Errors
/// As above.
pub fn json_from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let refused = |e: &dyn std::fmt::Display| {
        ApiError::unprocessable(format!(
            "Failed to deserialize the JSON body into the target type: {e}"
        ))
    };
    // Every body the services take is a JSON object, and serde's derived structs would also read
    // an array as their fields in order (`[]` as a request with every field absent): refuse
    // anything but an object (found by the contract test, issue 43).
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(
        first,
        Some(b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
    ) {
        return Err(refused(&"the body must be a JSON object"));
    }
    // Straight into the type: one pass over the body (uploads are long), and serde refuses
    // duplicate and unknown fields. Without tracking where it is: that costs every value of
    // an upload (a few per cent of the provider's CPU in a burst, issue 24), and only a
    // refused body needs the path, so it is read again for it below.
    match serde_json::from_slice(bytes) {
        Ok(value) => return Ok(value),
        Err(e) if e.is_syntax() || e.is_eof() => return Err(syntax(&e)),
        Err(_) => {}
    }
    // A data error: where it is, for the one-line answer.
    let first = match serde_path_to_error::deserialize::<_, T>(
        &mut serde_json::Deserializer::from_slice(bytes),
    ) {
        Err(e) => e,
        // Not reached (the same body, the same type); were it, the body is what it says.
        Ok(value) => return Ok(value),
    };
    // A data error may only be an integer written as `3.0`, which a schema's `integer`
    // admits and serde's integer types refuse (`crate::json_numbers`): try once more with
    // such numbers rewritten; otherwise report the first error.
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| syntax(&e))?;
    if !crate::json_numbers::integral_floats_as_integers(&mut value) {
        return Err(refused(&first));
    }
    serde_path_to_error::deserialize(value).map_err(|e| refused(&e))
}

/// Whether the request says its body is JSON (`application/json` or a `+json` type).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .is_some_and(|m| {
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        })
}

/// A body that is not JSON: 400, as axum's `Json` answered.
fn syntax(e: &serde_json::Error) -> ApiError {
    ApiError::bad_request(format!("Failed to parse the request body as JSON: {e}"))
}

/// Path parameters; unparsable ones become JSON errors.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| Self(v))
            .map_err(|r| ApiError::bad_request(r.body_text()))
    }
}

/// Query parameters; unparsable ones become JSON errors.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(v)| Self(v))
            .map_err(|r| ApiError::bad_request(r.body_text()))
    }
}

/// A JSON answer with `Cache-Control: no-store`.
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (
            status,
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            body,
        )
            .into_response(),
        Err(e) => ApiError::internal("encoding the answer", e).into_response(),
    }
}

/// Compare in time independent of where the strings differ: `subtle`'s comparison, whose
/// optimisation barrier keeps the compiler from turning the loop back into an early exit (a
/// hand-written fold has none). The length is not secret: a bearer token's length is public.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.ct_eq(b))
}

/// Whether the request carries `Authorization: Bearer <secret>`.
pub fn has_bearer(headers: &HeaderMap, secret: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| constant_time_eq(token.trim().as_bytes(), secret.as_bytes()))
}

/// Refuse a request without the bearer secret.
///
/// # Errors
/// 401 naming which token is needed.
pub fn require_bearer(headers: &HeaderMap, secret: &str, which: &str) -> Result<(), ApiError> {
    if has_bearer(headers, secret) {
        Ok(())
    } else {
        Err(ApiError::unauthorized(format!(
            "this endpoint needs the {which} as 'Authorization: Bearer <token>'"
        )))
    }
}

/// State of the bearer-token middleware.
#[derive(Clone)]
pub struct Bearer {
    /// The secret.
    pub secret: String,
    /// Its name in the error message (`admin token`).
    pub which: &'static str,
}

/// Middleware: 401 before the body is even read when the bearer token is missing or wrong.
pub async fn bearer_auth(
    axum::extract::State(bearer): axum::extract::State<Bearer>,
    request: Request,
    next: Next,
) -> Response {
    match require_bearer(request.headers(), &bearer.secret, bearer.which) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

/// Limits of a service's public face.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Average requests per second per client address.
    pub rate_per_second: f64,
    /// Burst per client address.
    pub rate_burst: u32,
    /// Largest accepted request body on public endpoints, in bytes.
    pub max_body_bytes: usize,
    /// Take the client address from the last `X-Forwarded-For` entry (behind a reverse proxy).
    pub trust_forwarded: bool,
    /// The listener's connection cap and timeouts.
    pub connections: crate::listener::ConnectionLimits,
    /// How long a peer service may take to answer this service's request, plus the time its
    /// body takes at the slowest rate allowed (`outbox::PEER_MIN_BYTES_PER_SECOND`).
    pub peer_answer_timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            rate_per_second: 20.0,
            rate_burst: 200,
            max_body_bytes: 2 * 1024 * 1024,
            trust_forwarded: false,
            connections: crate::listener::ConnectionLimits::default(),
            peer_answer_timeout: crate::outbox::PEER_ANSWER_TIMEOUT,
        }
    }
}

/// State of the rate-limit middleware.
#[derive(Clone)]
pub struct RateLimit {
    /// The buckets.
    pub limiter: Arc<RateLimiter>,
    /// Whether to trust `X-Forwarded-For`.
    pub trust_forwarded: bool,
}

/// The client address a trusted reverse proxy saw: the **last** entry of `X-Forwarded-For`
/// over every header line, in order. A client can write anything into the header; only the
/// entry the proxy appended — the address of the connection it accepted — is not the client's
/// own word. So the rightmost entry counts, even when the client sent a header line of its own
/// and the proxy added another. `None` when there is no entry or the last one is not an address
/// (then the connection's address is used).
fn forwarded_client(headers: &HeaderMap) -> Option<IpAddr> {
    let last = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .rfind(|entry| !entry.is_empty())?;
    last.parse::<IpAddr>()
        .ok()
        .or_else(|| last.parse::<SocketAddr>().ok().map(|a| a.ip()))
}

/// The address a request is charged to: the trusted proxy's entry, else the connection's.
pub(crate) fn client_ip(request: &Request, trust_forwarded: bool) -> Option<IpAddr> {
    if trust_forwarded && let Some(ip) = forwarded_client(request.headers()) {
        return Some(ip);
    }
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// Middleware: 429 with `Retry-After` when a client exceeds its rate.
pub async fn rate_limit(
    axum::extract::State(state): axum::extract::State<RateLimit>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(ip) = client_ip(&request, state.trust_forwarded)
        && let Err(wait) = state.limiter.check(ip)
    {
        return ApiError::too_many_requests(wait).into_response();
    }
    next.run(request).await
}

/// The browser features every page and answer of the services turns off (W3C Permissions
/// Policy): the participant's form needs none of the device's sensors, cameras, microphones,
/// location, payment or USB, so a script that got into the page could not ask for them either
/// (issue 43 §7).
pub const PERMISSIONS_POLICY: &str = "accelerometer=(), ambient-light-sensor=(), autoplay=(), \
    bluetooth=(), camera=(), display-capture=(), encrypted-media=(), fullscreen=(), \
    geolocation=(), gyroscope=(), hid=(), idle-detection=(), magnetometer=(), microphone=(), \
    midi=(), payment=(), publickey-credentials-get=(), screen-wake-lock=(), serial=(), usb=(), \
    xr-spatial-tracking=()";

/// Middleware: headers every answer carries.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        axum::http::HeaderName::from_static("permissions-policy"),
        HeaderValue::from_static(PERMISSIONS_POLICY),
    );
    if api && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// CORS for the configured origins only (none: same-origin only).
///
/// # Errors
/// One line naming an origin that is not `scheme://host[:port]`.
pub fn cors(origins: &[String]) -> Result<tower_http::cors::CorsLayer, String> {
    let mut values = Vec::new();
    for origin in origins {
        let o = origin.trim_end_matches('/');
        let well_formed = (o.starts_with("http://") || o.starts_with("https://"))
            && !o
                .split_once("://")
                .is_some_and(|(_, rest)| rest.contains('/'));
        if !well_formed {
            return Err(format!(
                "allowed origin {origin:?} must look like https://host[:port] (no path)"
            ));
        }
        values.push(HeaderValue::from_str(o).map_err(|e| format!("origin {origin:?}: {e}"))?);
    }
    Ok(tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list(values))
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::CONTENT_TYPE])
        .max_age(std::time::Duration::from_secs(600)))
}

/// 404 for unknown paths.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint; see docs/openapi.yaml")
}

/// 405 for known paths with the wrong method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this endpoint does not accept that method; see docs/openapi.yaml",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::upload::Upload;

    /// An upload as a request carries it.
    async fn upload_from(body: &str) -> Result<Upload, ApiError> {
        let request = Request::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(body.to_owned()))
            .unwrap();
        ApiJson::<Upload>::from_request(request, &())
            .await
            .map(|ApiJson(u)| u)
    }

    /// A body read a second time (an integer written `0.0`, which the first reading refuses)
    /// still has its values to the bit; a value that is not a number is refused in one line
    /// that names where it is.
    #[tokio::test]
    async fn an_uploads_values_are_read_exactly_on_either_reading() {
        let upload = upload_from(
            r#"{"survey":"s","cohort":0.0,"token":"abcdefghijklmnop","values":[0.1,2.0,-0.0,5e-324]}"#,
        )
        .await
        .unwrap();
        assert_eq!(upload.cohort, 0);
        let bits: Vec<u64> = upload.values.iter().map(|v| v.to_bits()).collect();
        // IEEE 754's nearest doubles: 0.1, 2, −0 and the smallest subnormal.
        assert_eq!(
            bits,
            [0x3FB9_9999_9999_999A, 0x4000_0000_0000_0000, 1 << 63, 1]
        );
        let refused =
            upload_from(r#"{"survey":"s","cohort":0,"token":"abcdefghijklmnop","values":[1,"x"]}"#)
                .await
                .unwrap_err();
        let message = refused.message().to_owned();
        assert!(
            message.contains("values[1]") && !message.contains('\n'),
            "{message}"
        );
    }

    /// A request body is an object: serde would read `[]` as a struct with every field absent.
    #[tokio::test]
    async fn a_body_that_is_not_an_object_is_refused_in_one_line() {
        for body in ["[]", "[\"x\"]", "  []", "1", "\"s\"", "null", "true"] {
            let e = upload_from(body).await.unwrap_err();
            assert_eq!(e.status(), StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert!(
                e.message().contains("a JSON object"),
                "{body}: {}",
                e.message()
            );
        }
        // Not JSON at all is still a syntax error.
        assert_eq!(
            upload_from("{").await.unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn bearer_tokens_must_match_exactly() {
        let mut h = HeaderMap::new();
        assert!(!has_bearer(&h, "secret-secret-secret"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer secret-secret-secret"),
        );
        assert!(has_bearer(&h, "secret-secret-secret"));
        assert!(!has_bearer(&h, "secret-secret-secreT"));
        assert!(!has_bearer(&h, "secret-secret-secret2"));
        assert!(require_bearer(&h, "other-other-other", "admin token").is_err());
    }

    /// The attack: a client sends its own `X-Forwarded-For` to pose as another address; the
    /// trusted proxy appends the real one (on the same line or a line of its own).
    #[test]
    fn the_forwarded_client_is_the_entry_the_proxy_added() {
        let headers = |lines: &[&str]| {
            let mut h = HeaderMap::new();
            for line in lines {
                h.append("x-forwarded-for", HeaderValue::from_str(line).unwrap());
            }
            h
        };
        let real: IpAddr = "203.0.113.7".parse().unwrap();
        assert_eq!(forwarded_client(&headers(&["203.0.113.7"])), Some(real));
        assert_eq!(
            forwarded_client(&headers(&["10.9.9.9, 203.0.113.7"])),
            Some(real)
        );
        assert_eq!(
            forwarded_client(&headers(&["10.9.9.9", "203.0.113.7"])),
            Some(real)
        );
        assert_eq!(
            forwarded_client(&headers(&["10.9.9.9, 1.1.1.1", "203.0.113.7 "])),
            Some(real)
        );
        assert_eq!(
            forwarded_client(&headers(&["2001:db8::1", "[2001:db8::2]:443"])),
            Some("2001:db8::2".parse().unwrap())
        );
        assert_eq!(
            forwarded_client(&headers(&["10.9.9.9", "not-an-address"])),
            None
        );
        assert_eq!(forwarded_client(&headers(&[])), None);
    }

    #[test]
    fn origins_must_be_bare() {
        assert!(cors(&["http://127.0.0.1:8080".into()]).is_ok());
        assert!(cors(&["http://a.example/path".into()]).is_err());
        assert!(cors(&["*".into()]).is_err());
    }
}
