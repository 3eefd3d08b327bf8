//! Every request between services is signed by the party that sends it, and believed only
//! under a key the receiving service pinned (issue 43): HTTP Message Signatures (RFC 9421) with
//! Ed25519, over the body's `Content-Digest` (RFC 9530), through the `httpsig-hyper` crate.
//!
//! # Why signed requests, not mutual TLS
//! Both authenticate a pinned key per party. Signed requests were chosen because
//! * they survive what sits between the parties: a TLS-terminating reverse proxy in front of a
//!   service (the usual deployment, and the operator's guide's) ends a client certificate at
//!   the proxy, whereas a signature travels with the request to the service that checks it;
//! * they bind what matters to who sent it — the method, the path (survey, cohort, share
//!   index), the body's digest and the party it is addressed to — so a hand-over can be
//!   attributed and kept as evidence, not only its connection;
//! * they need no certificate authority or certificate rotation on top of the keys the
//!   deployment already has: the collector's identity is the Ed25519 key every device already
//!   verifies (`crate::peers`).
//!
//! Transport confidentiality is TLS's job and is orthogonal: a signature does not hide the body.
//!
//! # What is signed and checked
//! The sender signs `("@method" "@path" "@query" "content-digest" "orthomask-to")` with
//! `created`, `expires`, a random `nonce`, `alg="ed25519"` and `keyid` = its public key in hex,
//! under the label [`SIGNATURE_LABEL`]; `orthomask-to` names the recipient
//! ([`crate::peers::Party::name`]), so a request signed for one service is refused by another.
//! The receiver, before it reads any of the body:
//! 1. takes exactly one signature, whose parameters cover every component above and carry
//!    every parameter above (a signature over less is refused, whoever signed it), written in
//!    the order `created`, `expires`, `nonce`, `alg`, `keyid`: `httpsig` verifies the signature
//!    base it rebuilds in that order rather than the `Signature-Input` text sent, so a signer
//!    using RFC 9421's freedom of order is refused with a line that says so;
//! 2. finds the pinned peer whose key is the `keyid` (none: refused) and verifies the signature
//!    with that key;
//! 3. requires `created` no later than its own clock plus [`CLOCK_SKEW_ALLOWANCE_SECONDS`], and
//!    `expires` no more than [`SIGNATURE_LIFETIME_SECONDS`] after `created` and not past;
//! 4. remembers `(keyid, nonce)` until the signature expires and refuses it a second time
//!    (replay); the memory holds at most [`REPLAY_ENTRIES`] for each pinned peer (a peer that
//!    signs more within a lifetime is told to wait, and no other peer is);
//! 5. requires `orthomask-to` to name this service.
//!
//! Then the handler asks [`Peer::require`] whether that party may make this request, and reads
//! the body with [`Peer::read_json`]: at most the size the survey's design allows (refused
//! before a byte is read when `Content-Length` says more), within a process-wide budget of body
//! bytes in flight ([`PEER_BODY_BUDGET`]), and only if its SHA-256 is the signed digest.
//!
//! A replay after a restart within a signature's lifetime is not caught (the memory is not
//! kept), and needs no catching: every peer request is idempotent (registrations are never
//! replaced, opening, closing and erasing twice change nothing, hand-overs are settled once).

use crate::error::ApiError;
use crate::http::RateLimit;
use crate::peers::{Party, Peers};
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use ed25519_dalek::Signer;
use http_body_util::{BodyExt, Empty, Full};
use httpsig_hyper::prelude::message_component::HttpMessageComponentId;
use httpsig_hyper::prelude::{
    AlgorithmName, HttpSigError, HttpSigResult, HttpSignatureParams, SigningKey, VerifyingKey,
};
use httpsig_hyper::{ContentDigestType, MessageSignature, MessageSignatureReq};
use serde::de::DeserializeOwned;
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The label of the one signature a peer request carries.
pub const SIGNATURE_LABEL: &str = "orthomask";

/// The header naming the party a request is addressed to ([`Party::name`]).
pub const RECIPIENT_HEADER: &str = "orthomask-to";

/// The components every peer request's signature covers, in this order.
pub const COVERED_COMPONENTS: [&str; 5] = [
    "@method",
    "@path",
    "@query",
    "content-digest",
    RECIPIENT_HEADER,
];

/// How long a signature is good for after it is made: long enough for the slowest hand-over's
/// headers to arrive, short enough that the replay memory stays small.
pub const SIGNATURE_LIFETIME_SECONDS: u64 = 5 * 60;

/// How far a sender's clock may be ahead of the receiver's: the policy's allowance for services'
/// clocks (`orthomask_survey::policy::CLOCK_SKEW_ALLOWANCE_SECONDS`).
pub const CLOCK_SKEW_ALLOWANCE_SECONDS: u64 =
    orthomask_survey::policy::CLOCK_SKEW_ALLOWANCE_SECONDS;

/// Signatures remembered against replay at once for each pinned peer (about 100 bytes each).
/// Only a pinned peer's valid signatures enter its memory, and honest peers make a few a cohort;
/// each peer has its own, so one that floods the service (a dishonest peer, or a thief of its
/// key) is told to wait alone and locks no other peer out (found by the adversarial review).
pub const REPLAY_ENTRIES: usize = 50_000;

/// Bytes of peer request bodies a service holds in memory at once, over all peers: twice the
/// largest hand-over the policy allows, so one maximal hand-over always fits beside others
/// while a flood of maximal bodies waits its turn (answered 503 with `Retry-After`, which the
/// sender's outbox honours) instead of taking the memory.
pub const PEER_BODY_BUDGET: u64 = 2 * orthomask_survey::policy::MAX_HANDOVER_BYTES;

/// Seconds a peer is told to wait when the body budget is taken.
const BUSY_RETRY_AFTER_S: u64 = 5;

fn covered() -> Vec<HttpMessageComponentId> {
    COVERED_COMPONENTS
        .iter()
        .map(|c| HttpMessageComponentId::try_from(*c).expect("a fixed, valid component name"))
        .collect()
}

/// An Ed25519 key in `httpsig`'s terms: `keyid` is the public key in hex.
struct DalekSigner<'a>(&'a ed25519_dalek::SigningKey);

impl SigningKey for DalekSigner<'_> {
    fn sign(&self, data: &[u8]) -> HttpSigResult<Vec<u8>> {
        Ok(self.0.sign(data).to_bytes().to_vec())
    }
    fn key_id(&self) -> String {
        orthomask_core::hex::encode(self.0.verifying_key().as_bytes())
    }
    fn alg(&self) -> AlgorithmName {
        AlgorithmName::Ed25519
    }
}

struct DalekVerifier<'a>(&'a ed25519_dalek::VerifyingKey);

impl VerifyingKey for DalekVerifier<'_> {
    fn verify(&self, data: &[u8], signature: &[u8]) -> HttpSigResult<()> {
        let signature = ed25519_dalek::Signature::from_slice(signature)
            .map_err(|e| HttpSigError::InvalidSignature(e.to_string()))?;
        // Strict: no malleable or small-order encodings (RFC 8032 §5.1.7 as dalek reads it).
        self.0
            .verify_strict(data, &signature)
            .map_err(|e| HttpSigError::InvalidSignature(e.to_string()))
    }
    fn key_id(&self) -> String {
        orthomask_core::hex::encode(self.0.as_bytes())
    }
    fn alg(&self) -> AlgorithmName {
        AlgorithmName::Ed25519
    }
}

/// The headers that sign a request from `identity` to `to`: `content-digest`, `orthomask-to`,
/// `signature-input` and `signature`.
///
/// # Errors
/// One line when the URL is not a URL or the signature cannot be made.
pub async fn sign(
    identity: &crate::peers::Identity,
    to: Party,
    method: &reqwest::Method,
    url: &str,
    body: &[u8],
) -> Result<HeaderMap, String> {
    use httpsig_hyper::RequestContentDigest;
    let request = axum::http::Request::builder()
        .method(method.as_str())
        .uri(url)
        .header(RECIPIENT_HEADER, to.name())
        .body(Full::new(Bytes::copy_from_slice(body)))
        .map_err(|e| format!("{url}: {e}"))?;
    let mut request = request
        .set_content_digest(&ContentDigestType::Sha256)
        .await
        .map_err(|e| format!("{url}: content digest: {e}"))?;
    let mut params =
        HttpSignatureParams::try_new(&covered()).map_err(|e| format!("signature: {e}"))?;
    let signer = DalekSigner(identity.signing_key());
    params
        .set_key_info(&signer)
        .set_random_nonce()
        .set_expires_with_duration(Some(SIGNATURE_LIFETIME_SECONDS));
    request
        .set_message_signature(&params, &signer, Some(SIGNATURE_LABEL))
        .await
        .map_err(|e| format!("signing the request to {url}: {e}"))?;
    Ok(request.headers().clone())
}

/// The memory of signatures seen, against replays: each pinned peer's apart, at most
/// [`REPLAY_ENTRIES`] each.
#[derive(Default)]
struct ReplayMemory {
    /// keyid → nonce → the signature's `expires`.
    seen: HashMap<String, HashMap<String, u64>>,
}

impl ReplayMemory {
    /// Remember a signature of the peer `keyid`; `Err` when it was seen before, or when that
    /// peer's memory is full of signatures that have not expired.
    fn remember(
        &mut self,
        (keyid, nonce): (String, String),
        expires: u64,
        now: u64,
    ) -> Result<(), ApiError> {
        let peer = self.seen.entry(keyid).or_default();
        if peer.contains_key(&nonce) {
            return Err(ApiError::unauthorized(
                "this signed request was already received once (a replay); a peer signs each \
                 request afresh",
            ));
        }
        if peer.len() >= REPLAY_ENTRIES {
            peer.retain(|_, exp| *exp >= now);
            if peer.len() >= REPLAY_ENTRIES {
                return Err(ApiError::busy(
                    "this service has received more signed requests from this peer than it \
                     remembers at once; try again shortly",
                    SIGNATURE_LIFETIME_SECONDS,
                ));
            }
        }
        peer.insert(nonce, expires);
        Ok(())
    }
}

/// What the authentication middleware holds: who this service is, whom it pins, what it
/// remembers, and the limiter a failed attempt is charged to.
#[derive(Clone)]
pub struct PeerAuth {
    own: Party,
    peers: Arc<Peers>,
    replay: Arc<Mutex<ReplayMemory>>,
    budget: Arc<tokio::sync::Semaphore>,
    limiter: RateLimit,
}

impl PeerAuth {
    /// The checks for service `own`, which pins `peers`; a failed attempt costs its client
    /// address a request of `limiter`'s rate.
    pub fn new(own: Party, peers: Arc<Peers>, limiter: RateLimit) -> Self {
        let kib = usize::try_from(PEER_BODY_BUDGET / 1024).unwrap_or(usize::MAX);
        Self {
            own,
            peers,
            replay: Arc::new(Mutex::new(ReplayMemory::default())),
            budget: Arc::new(tokio::sync::Semaphore::new(
                kib.min(tokio::sync::Semaphore::MAX_PERMITS),
            )),
            limiter,
        }
    }

    /// Check a request's signature (module documentation, steps 1–5) without reading its body.
    async fn check(
        &self,
        parts_headers: &HeaderMap,
        probe: &axum::http::Request<Empty<Bytes>>,
    ) -> Result<Peer, ApiError> {
        let refused = |why: &str| {
            ApiError::unauthorized(format!(
                "this endpoint takes requests signed by a pinned peer service (RFC 9421, \
                 label {SIGNATURE_LABEL:?}): {why}"
            ))
        };
        if !probe.has_message_signature() {
            return Err(refused("the request carries no signature"));
        }
        let all = probe
            .get_signature_params()
            .map_err(|e| refused(&format!("unreadable signature parameters: {e}")))?;
        let (label, params) = match all.len() {
            1 => all.into_iter().next().expect("one entry"),
            n => {
                return Err(refused(&format!(
                    "{n} signatures; a peer sends exactly one"
                )));
            }
        };
        if label != SIGNATURE_LABEL {
            return Err(refused(&format!("the signature is labelled {label:?}")));
        }
        // `httpsig` verifies the signature base it rebuilds from the parsed parameters, written in
        // its own order (covered components, then created, expires, nonce, alg, keyid), not the
        // `Signature-Input` text the signer signed. RFC 9421 §2.3 lets a signer order them as it
        // likes, so a signature in another order would fail as "does not verify"; say why instead
        // (found by the contract test's independent signer). Every service signs in that order.
        let sent = parts_headers
            .get("signature-input")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().strip_prefix(&format!("{SIGNATURE_LABEL}=")))
            .unwrap_or_default();
        if sent != params.to_string() {
            return Err(refused(
                "the signature's parameters must be written in the order created, expires, \
                 nonce, alg, keyid (the order these services sign and verify in)",
            ));
        }
        let wanted = covered();
        if let Some(missing) = wanted
            .iter()
            .find(|c| !params.covered_components.contains(c))
        {
            return Err(refused(&format!("the signature does not cover {missing}")));
        }
        if params.alg.as_deref() != Some(AlgorithmName::Ed25519.as_str()) {
            return Err(refused("the signature's alg is not ed25519"));
        }
        let (Some(created), Some(expires), Some(nonce), Some(keyid)) = (
            params.created,
            params.expires,
            params.nonce.clone(),
            params.keyid.clone(),
        ) else {
            return Err(refused(
                "the signature lacks created, expires, nonce or keyid",
            ));
        };
        let peer = self.peers.by_key_hex(&keyid).ok_or_else(|| {
            refused(&format!(
                "the signing key {keyid:.64} is not one this service pins (it pins {})",
                self.peers
                    .iter()
                    .map(|p| format!("{} {}", p.party.name(), p.key))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        probe
            .verify_message_signature(
                &DalekVerifier(peer.key.verifying_key()),
                Some(keyid.as_str()),
            )
            .await
            .map_err(|e| refused(&format!("the signature does not verify: {e}")))?;
        let now = crate::time::unix_seconds();
        if created > now + CLOCK_SKEW_ALLOWANCE_SECONDS {
            return Err(refused("the signature was made in the future"));
        }
        if expires < created
            || expires - created > SIGNATURE_LIFETIME_SECONDS
            || expires + CLOCK_SKEW_ALLOWANCE_SECONDS < now
        {
            return Err(refused("the signature has expired or lives too long"));
        }
        let to = parts_headers
            .get(RECIPIENT_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(Party::from_name);
        if to != Some(self.own) {
            return Err(refused(&format!(
                "the request is addressed to {}, not to {}",
                to.map_or_else(|| "nobody".to_owned(), |p| p.to_string()),
                self.own
            )));
        }
        let digest = content_digest(parts_headers).map_err(|e| refused(&e))?;
        self.replay
            .lock()
            .map_err(|_| ApiError::internal("the replay memory", "poisoned"))?
            .remember((keyid, nonce), expires + CLOCK_SKEW_ALLOWANCE_SECONDS, now)?;
        let content_length = parts_headers
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        Ok(Peer {
            party: peer.party,
            digest,
            content_length,
            budget: self.budget.clone(),
        })
    }

    fn charge(&self, request: &Request) {
        if let Some(ip) = crate::http::client_ip(request, self.limiter.trust_forwarded) {
            let _ = self.limiter.limiter.check(ip);
        }
    }
}

/// The SHA-256 a signed `content-digest` header names (RFC 9530: `sha-256=:<base64>:`).
fn content_digest(headers: &HeaderMap) -> Result<[u8; 32], String> {
    let value = headers
        .get("content-digest")
        .and_then(|v| v.to_str().ok())
        .ok_or("the request has no content-digest")?;
    let encoded = value
        .trim()
        .strip_prefix("sha-256=:")
        .and_then(|rest| rest.strip_suffix(':'))
        .ok_or("the content-digest is not a single sha-256 digest")?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| "the content-digest is not 32 bytes of base64".to_owned())
}

/// Middleware on every peer route: the request's signature checked before its body is read
/// (module documentation); the signing party is handed to the handler as [`Peer`]. A request
/// that fails is answered 401 in one line and costs its address a request of the public rate.
pub async fn authenticate(
    axum::extract::State(auth): axum::extract::State<PeerAuth>,
    mut request: Request,
    next: Next,
) -> Response {
    let mut probe = axum::http::Request::new(Empty::<Bytes>::new());
    *probe.method_mut() = request.method().clone();
    *probe.uri_mut() = request.uri().clone();
    *probe.headers_mut() = request.headers().clone();
    match auth.check(request.headers(), &probe).await {
        Ok(peer) => {
            request.extensions_mut().insert(peer);
            next.run(request).await
        }
        Err(e) => {
            auth.charge(&request);
            // An operator's first clue to a mis-pinned peer; the log is lossy under a flood.
            tracing::warn!(
                "{} refused a peer request to {}: {}",
                auth.own,
                request.uri().path(),
                e.message()
            );
            e.into_response()
        }
    }
}

/// The party that signed a peer request, as the authentication middleware found it.
#[derive(Clone)]
pub struct Peer {
    /// Who signed it.
    pub party: Party,
    digest: [u8; 32],
    content_length: Option<u64>,
    budget: Arc<tokio::sync::Semaphore>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("party", &self.party)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Peer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Peer>().cloned().ok_or_else(|| {
            ApiError::unauthorized("this endpoint takes requests signed by a pinned peer service")
        })
    }
}

impl Peer {
    /// Refuse the request unless its signer is `party`.
    ///
    /// # Errors
    /// 403 naming who may make the request and who signed it.
    pub fn require(&self, party: Party, what: &str) -> Result<(), ApiError> {
        if self.party == party {
            Ok(())
        } else {
            // A pinned peer asking what is not its to ask: a misconfiguration or a dishonest
            // party, which the log names (lossy under a flood, like every line).
            tracing::warn!("{what}: refused to {}, which signed it", self.party);
            Err(ApiError::forbidden(format!(
                "{what} is {party}'s to ask; this request is signed by {}",
                self.party
            )))
        }
    }

    /// Read the body as JSON of type `T`: at most `limit` bytes (refused with 413 before a byte
    /// is read when `Content-Length` says more, and with 411 when a body comes without one),
    /// within the service's budget of peer body bytes (503 with `Retry-After` while it is
    /// taken), and only if its SHA-256 is the digest the signature covers (401 otherwise).
    ///
    /// The returned [`BodyHeld`] keeps the body's share of the budget: the handler holds it
    /// until it returns, so a body read and being judged — while its handler waits on a peer,
    /// say — still counts, and memory stays bounded by a small multiple of the budget (the
    /// bytes, their parsed value and the matrices decoded from it).
    ///
    /// # Errors
    /// As above, and the one-line JSON errors of [`crate::http::json_from_bytes`].
    pub async fn read_json<T: DeserializeOwned>(
        &self,
        body: Body,
        limit: u64,
        what: &str,
    ) -> Result<(T, BodyHeld), ApiError> {
        let length = self.content_length.ok_or_else(|| {
            ApiError::new(
                StatusCode::LENGTH_REQUIRED,
                format!("{what}: a peer sends its body with a Content-Length"),
            )
        })?;
        if length > limit {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "{what}: {length} bytes, more than the {limit} this survey's design allows; \
                     nothing was read"
                ),
            ));
        }
        let kib = u32::try_from(length.div_ceil(1024)).unwrap_or(u32::MAX);
        let held = self.budget.clone().try_acquire_many_owned(kib.max(1)).map_err(|_| {
            ApiError::busy(
                "this service is reading as many peer bodies as it holds at once; try again shortly",
                BUSY_RETRY_AFTER_S,
            )
        })?;
        let limited =
            http_body_util::Limited::new(body, usize::try_from(length).unwrap_or(usize::MAX));
        let bytes = limited
            .collect()
            .await
            .map_err(|e| {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("{what}: the body did not match its Content-Length ({e})"),
                )
            })?
            .to_bytes();
        let actual: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&actual[..], &self.digest[..])) {
            return Err(ApiError::unauthorized(format!(
                "{what}: the body is not the one the signature covers (content-digest differs)"
            )));
        }
        crate::http::json_from_bytes(&bytes).map(|value| (value, BodyHeld(held)))
    }
}

/// A peer body's share of the service's budget ([`PEER_BODY_BUDGET`]), given back when dropped.
#[derive(Debug)]
pub struct BodyHeld(#[allow(dead_code)] tokio::sync::OwnedSemaphorePermit);

/// Attach the signature headers to an outgoing request.
pub fn apply(mut builder: reqwest::RequestBuilder, headers: &HeaderMap) -> reqwest::RequestBuilder {
    for (name, value) in headers {
        builder = builder.header(name.as_str(), HeaderValue::as_bytes(value));
    }
    builder
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::{Identity, Peer as Pinned};

    fn identity(party: Party, seed: u8) -> Identity {
        Identity::from_secret(party, [seed; 32])
    }

    fn auth_for(own: Party, own_seed: u8, pinned: &[(Party, u8)]) -> PeerAuth {
        let own_key = identity(own, own_seed).public_key();
        let peers = Peers::new(
            own,
            own_key,
            pinned
                .iter()
                .map(|&(party, seed)| Pinned {
                    party,
                    key: identity(party, seed).public_key(),
                    url: format!("http://{}", party.name()),
                })
                .collect(),
        )
        .unwrap();
        PeerAuth::new(
            own,
            Arc::new(peers),
            RateLimit {
                limiter: Arc::new(crate::ratelimit::RateLimiter::new(1000.0, 1000)),
                trust_forwarded: false,
            },
        )
    }

    async fn signed(
        from: &Identity,
        to: Party,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> axum::http::Request<Empty<Bytes>> {
        let url = format!("http://service{path}");
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let headers = sign(from, to, &method, &url, body).await.unwrap();
        request_with(
            axum::http::Method::from_bytes(method.as_str().as_bytes()).unwrap(),
            path,
            headers,
        )
    }

    /// A request for `method` `path` with `headers`: a signed request's headers put on another.
    fn request_with(
        method: axum::http::Method,
        path: &str,
        headers: HeaderMap,
    ) -> axum::http::Request<Empty<Bytes>> {
        let mut r = axum::http::Request::new(Empty::new());
        *r.method_mut() = method;
        *r.uri_mut() = path.parse().unwrap();
        *r.headers_mut() = headers;
        r
    }

    async fn check(
        auth: &PeerAuth,
        r: &axum::http::Request<Empty<Bytes>>,
    ) -> Result<Party, String> {
        auth.check(r.headers(), r)
            .await
            .map(|p| p.party)
            .map_err(|e| e.message().to_owned())
    }

    #[tokio::test]
    async fn a_pinned_peer_is_named_and_everyone_else_refused() {
        let provider = auth_for(
            Party::Provider,
            1,
            &[(Party::Collector, 2), (Party::Right(0), 3)],
        );
        let collector = identity(Party::Collector, 2);
        let r = signed(
            &collector,
            Party::Provider,
            "PUT",
            "/api/peer/surveys/s",
            b"{}",
        )
        .await;
        assert_eq!(check(&provider, &r).await, Ok(Party::Collector));
        // The same request again: a replay.
        assert!(check(&provider, &r).await.unwrap_err().contains("replay"));
        // A key the provider does not pin.
        let stranger = identity(Party::Collector, 9);
        let r = signed(
            &stranger,
            Party::Provider,
            "PUT",
            "/api/peer/surveys/s",
            b"{}",
        )
        .await;
        assert!(
            check(&provider, &r)
                .await
                .unwrap_err()
                .contains("not one this service pins")
        );
        // Signed by a pinned peer, but for another service.
        let r = signed(
            &collector,
            Party::Right(0),
            "PUT",
            "/api/peer/surveys/s",
            b"{}",
        )
        .await;
        assert!(
            check(&provider, &r)
                .await
                .unwrap_err()
                .contains("addressed to")
        );
        // No signature at all.
        let bare = axum::http::Request::new(Empty::new());
        assert!(
            check(&provider, &bare)
                .await
                .unwrap_err()
                .contains("no signature")
        );
    }

    #[tokio::test]
    async fn a_signature_moved_to_another_path_method_or_body_does_not_verify() {
        let provider = auth_for(Party::Provider, 1, &[(Party::Collector, 2)]);
        let collector = identity(Party::Collector, 2);
        let r = signed(
            &collector,
            Party::Provider,
            "POST",
            "/api/peer/surveys/s/cohorts/0/open",
            b"",
        )
        .await;
        let moved = request_with(
            axum::http::Method::POST,
            "/api/peer/surveys/s/cohorts/0/close",
            r.headers().clone(),
        );
        assert!(
            check(&provider, &moved)
                .await
                .unwrap_err()
                .contains("does not verify")
        );
        let method = request_with(
            axum::http::Method::PUT,
            "/api/peer/surveys/s/cohorts/0/open",
            r.headers().clone(),
        );
        assert!(
            check(&provider, &method)
                .await
                .unwrap_err()
                .contains("does not verify")
        );
        // The digest of the empty body is the one signed here, so swap in another's.
        let other = signed(&collector, Party::Provider, "POST", "/x", b"other").await;
        let mut digest = r.headers().clone();
        digest.insert(
            "content-digest",
            other.headers().get("content-digest").unwrap().clone(),
        );
        let body = request_with(
            axum::http::Method::POST,
            "/api/peer/surveys/s/cohorts/0/open",
            digest,
        );
        assert!(
            check(&provider, &body)
                .await
                .unwrap_err()
                .contains("does not verify")
        );
    }

    /// RFC 9421 lets a signer order the signature's parameters as it likes; the library these
    /// services verify with rebuilds them in its own order, so another order is refused with a
    /// line that says so, not as a signature that does not verify.
    #[tokio::test]
    async fn parameters_in_another_order_are_refused_saying_why() {
        let provider = auth_for(Party::Provider, 1, &[(Party::Collector, 2)]);
        let collector = identity(Party::Collector, 2);
        let r = signed(&collector, Party::Provider, "POST", "/p", b"").await;
        let input = r
            .headers()
            .get("signature-input")
            .unwrap()
            .to_str()
            .unwrap();
        let (components, rest) = input.split_once(");").unwrap();
        let mut params: Vec<&str> = rest.split(';').collect();
        params.reverse();
        let reordered = format!("{components});{}", params.join(";"));
        assert_ne!(reordered, input);
        let mut moved = request_with(axum::http::Method::POST, "/p", r.headers().clone());
        moved.headers_mut().insert(
            "signature-input",
            HeaderValue::from_str(&reordered).unwrap(),
        );
        let e = check(&provider, &moved).await.unwrap_err();
        assert!(e.contains("must be written in the order"), "{e}");
    }

    #[tokio::test]
    async fn a_body_is_read_only_within_its_limit_and_only_if_it_is_the_signed_one() {
        let provider = auth_for(Party::Provider, 1, &[(Party::Collector, 2)]);
        let collector = identity(Party::Collector, 2);
        let body = br#"{"a":1}"#;
        let r = signed(&collector, Party::Provider, "PUT", "/p", body).await;
        let mut peer = provider.check(r.headers(), &r).await.unwrap();
        peer.content_length = Some(body.len() as u64);
        let (v, _held): (serde_json::Value, _) = peer
            .read_json(Body::from(body.to_vec()), 100, "test")
            .await
            .unwrap();
        assert_eq!(v["a"], 1);
        let too_big = peer
            .read_json::<serde_json::Value>(Body::from(body.to_vec()), 3, "test")
            .await
            .unwrap_err();
        assert_eq!(too_big.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let swapped = peer
            .read_json::<serde_json::Value>(Body::from(br#"{"a":2}"#.to_vec()), 100, "test")
            .await
            .unwrap_err();
        assert!(
            swapped.message().contains("content-digest"),
            "{}",
            swapped.message()
        );
        peer.content_length = None;
        let no_length = peer
            .read_json::<serde_json::Value>(Body::from(body.to_vec()), 100, "test")
            .await
            .unwrap_err();
        assert_eq!(no_length.status(), StatusCode::LENGTH_REQUIRED);
    }

    #[test]
    fn the_replay_memory_is_bounded_and_forgets_only_what_has_expired() {
        let mut m = ReplayMemory::default();
        for i in 0..REPLAY_ENTRIES {
            m.remember(("k".into(), i.to_string()), 10, 0).unwrap();
        }
        // Full of live signatures: the next one waits.
        let e = m.remember(("k".into(), "new".into()), 10, 5).unwrap_err();
        assert_eq!(e.status(), StatusCode::SERVICE_UNAVAILABLE);
        // Another peer is not locked out by it (the adversarial review's flood).
        m.remember(("other".into(), "0".into()), 10, 5).unwrap();
        // Once they have expired there is room again.
        m.remember(("k".into(), "new".into()), 100, 11).unwrap();
        assert_eq!(m.seen["k"].len(), 1);
    }

    #[test]
    fn only_a_single_sha256_digest_is_read() {
        let mut h = HeaderMap::new();
        assert!(content_digest(&h).is_err());
        h.insert("content-digest", HeaderValue::from_static("sha-512=:AAAA:"));
        assert!(content_digest(&h).is_err());
        h.insert(
            "content-digest",
            HeaderValue::from_static("sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"),
        );
        assert_eq!(
            content_digest(&h).unwrap(),
            <[u8; 32]>::from(sha2::Sha256::digest(b""))
        );
    }
}
