"""Schemathesis hooks of scripts/contract.sh: the credentials each operation's `security` names.

Schemathesis' command line drops programmatic auth when its configuration file has auth of its
own, so both kinds are here: the admin bearer token for the operations whose `security` names
`admin`, and a signature for those that name `peer`: every peer request is signed as the party
that may make it.

Every request under `/api/peer/` must carry one RFC 9421 HTTP Message Signature (issue 43;
`crates/server/src/peer_auth.rs`): label `orthomask`, Ed25519, `keyid` the signer's public key in
hex, covering `("@method" "@path" "@query" "content-digest" "orthomask-to")` with `created`,
`expires` and a random `nonce`, over a `Content-Digest: sha-256=:…:` of the exact body bytes, and
`orthomask-to` naming the service addressed. The services sign with the `httpsig-hyper` crate;
the tester signs with `http-message-signatures` (pyauth), an independent implementation of the
standard, so every run is also an interoperability test of the two: a request this module signed
must never be answered 401 (the check `signed_peer_requests_are_believed` below).

Who signs (the role table of docs/openapi.yaml's `peer` security scheme), from the request's path:

* `…/cohorts/{k}/shares/{i}` (at the provider) and `…/cohorts/{k}/parts/{i}` (at the collector):
  right-masking service `i`;
* `…/cohorts/{k}/hand-on/{from}` (at a right-masking service): right-masking service `from`;
* `…/cohorts/{k}/left-masked` (at a right-masking service) and `…/cohorts/{k}/result` (at the
  collector): the provider;
* everything else (register, open, close, requeue, released, status): the collector.

An index that names no service of the deployment (`shares/7` with three services), or that names
the service under test itself (`hand-on/0` at right-masking service 0: a service pins no key of
its own), is signed by a party the service pins that may not send it (the provider at the
collector, the collector elsewhere): the service must answer 403 (or 400 for an index that is
not a number). The signature is made when `requests` prepares the request (a
`requests` auth object, which sees the serialised body), so it covers the bytes sent, and afresh
for every request, retries included (each has its own nonce: the services refuse a replay).

The signature's headers `Signature-Input`, `Content-Digest` and `orthomask-to` are parameters of
the peer operations in docs/openapi.yaml, and `Signature` is the `peer` security scheme's header,
so the tester generates values for all four. A request without one of them, or whose generated
value of one of the first three breaks its documented pattern, is a negative case about that
header: it is sent as generated, unsigned, and the service must refuse it (401). Otherwise the
signature replaces the generated values.

Environment (scripts/contract.sh sets it): ORTHOMASK_CONTRACT_DATA, the `serve all` data
directory (`services.json` and each service's identity seed); ORTHOMASK_CONTRACT_TO, the name of
the service under test (`collector`, `provider`, `right-<i>`); ORTHOMASK_CONTRACT_ADMIN, the
administrator's bearer token.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import secrets
import threading
import time
from pathlib import Path

import requests.auth
import schemathesis
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from http_message_signatures import HTTPMessageSigner, MappingKeyResolver, algorithms

LABEL = "orthomask"
COVERED = ("@method", "@path", "@query", "content-digest", "orthomask-to")
# peer_auth::SIGNATURE_LIFETIME_SECONDS: the longest a service accepts.
LIFETIME_S = 300
PEER_PREFIX = "/api/peer/"

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ["ORTHOMASK_CONTRACT_DATA"])
RECIPIENT = os.environ["ORTHOMASK_CONTRACT_TO"]


def _load_identities() -> dict[str, tuple[str, Ed25519PrivateKey]]:
    """Each party's name → (public key hex, private key), from the seeds `serve all` made.

    Checked against the public keys `services.json` publishes, so a seed read from the wrong file
    stops the run here rather than as a run of 401s.
    """
    services = json.loads((DATA / "services.json").read_text())
    published = services["identities"]
    files = {
        "collector": (DATA / "collector" / "collector-signing-key", published["collector"]),
        "provider": (DATA / "msp" / "identity-key", published["msp"]),
    }
    for i, key in enumerate(published["rights"]):
        files[f"right-{i}"] = (DATA / f"right-{i}" / "identity-key", key)
    identities = {}
    for name, (path, public_hex) in files.items():
        seed = bytes.fromhex(path.read_text().strip())
        key = Ed25519PrivateKey.from_private_bytes(seed)
        derived = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()
        if derived != public_hex:
            raise SystemExit(f"contract_hooks: {path} is not the key services.json names for {name}")
        identities[name] = (derived, key)
    return identities


IDENTITIES = _load_identities()
if RECIPIENT not in IDENTITIES:
    raise SystemExit(f"contract_hooks: ORTHOMASK_CONTRACT_TO={RECIPIENT!r} names no service")
# The order of the signature's parameters. RFC 9421 lets a signer choose it (`@signature-params`
# is the parameters as serialised in `Signature-Input`), and http-message-signatures writes
# `created`, `keyid`, `alg`, `expires`, `nonce`. The services verify with httpsig 0.0.26, which
# rebuilds `@signature-params` in its own order — `created`, `expires`, `nonce`, `alg`, `keyid` —
# whatever the request said (httpsig `signature_params.rs`, `impl Display for
# HttpSignatureParams`, used by `signature_base.rs`), so the services refuse any other order with
# a 401 that says so (`peer_auth`: "the signature's parameters must be written in the order …").
# The tester signs in the services' order; ORTHOMASK_CONTRACT_SIGNATURE_ORDER=library signs in the
# library's own, and every peer request is then refused with that line.
SERVICES_PARAMETER_ORDER = ("created", "expires", "nonce", "alg", "keyid", "tag")
LIBRARY_ORDER = os.environ.get("ORTHOMASK_CONTRACT_SIGNATURE_ORDER") == "library"


class _Signer(HTTPMessageSigner):
    """http-message-signatures' signer, with the parameters in the services' order (above)."""

    def _build_signature_base(self, message, *, covered_component_ids, signature_params, component_resolver=None):
        if not LIBRARY_ORDER:
            signature_params = {
                name: signature_params[name] for name in SERVICES_PARAMETER_ORDER if name in signature_params
            } | signature_params
        return super()._build_signature_base(
            message,
            covered_component_ids=covered_component_ids,
            signature_params=signature_params,
            component_resolver=component_resolver,
        )


SIGNER = _Signer(
    signature_algorithm=algorithms.ED25519,
    key_resolver=MappingKeyResolver(
        public_keys={}, private_keys={public: key for public, key in IDENTITIES.values()}
    ),
)


def _documented_header_patterns() -> dict[str, re.Pattern[str]]:
    """The patterns docs/openapi.yaml gives the signature's header parameters, by lower-case name."""
    contract = yaml.safe_load((ROOT / "docs" / "openapi.yaml").read_text())
    patterns = {}
    for parameter in contract["components"]["parameters"].values():
        if parameter.get("in") == "header" and parameter.get("x-orthomask-signature"):
            patterns[parameter["name"].lower()] = re.compile(parameter["schema"]["pattern"])
    if set(patterns) != {"signature-input", "content-digest", "orthomask-to"}:
        raise SystemExit(f"contract_hooks: docs/openapi.yaml's signature headers are {sorted(patterns)}")
    return patterns


HEADER_PATTERNS = _documented_header_patterns()

_SIGNED_BY_RIGHT = re.compile(r"^/api/peer/surveys/[^/]+/cohorts/[^/]+/(?:shares|parts|hand-on)/([^/]+)$")
_SIGNED_BY_PROVIDER = re.compile(r"^/api/peer/surveys/[^/]+/cohorts/[^/]+/(?:result|left-masked)$")


# A party the service under test pins but that may not make the requests it is given to sign:
# the provider at the collector, the collector elsewhere.
NOT_ALLOWED = "provider" if RECIPIENT == "collector" else "collector"


def signer_for(path: str) -> str:
    """The party that may send a request to `path` (the module documentation's table), or
    `NOT_ALLOWED` where that party does not exist or is the service under test itself (a service
    pins no key of its own, so it is sent a request no pinned party may make: 403)."""
    right = _SIGNED_BY_RIGHT.match(path)
    if right is not None:
        # As the services read a u32 path segment (Rust's `str::parse`: digits, an optional `+`).
        index = right.group(1)
        name = f"right-{int(index)}" if re.fullmatch(r"\+?[0-9]+", index) else None
        return name if name in IDENTITIES and name != RECIPIENT else NOT_ALLOWED
    if _SIGNED_BY_PROVIDER.match(path):
        return "provider"
    return "collector"


def _negative_signature_header(headers) -> str | None:
    """The signature header the tester generated missing or off its pattern, if any (`Signature`
    itself, the security scheme's header, has no pattern: only its absence counts)."""
    if "Signature" not in headers:
        return "signature"
    for name, pattern in HEADER_PATTERNS.items():
        value = headers.get(name)
        if value is None or pattern.search(value) is None:
            return name
    return None


class _Ledger:
    """What this module signed, for the check below: nonce → (signer, method, path)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.signed: dict[str, tuple[str, str, str]] = {}

    def record(self, nonce: str, entry: tuple[str, str, str]) -> None:
        with self.lock:
            self.signed[nonce] = entry

    def lookup(self, request) -> tuple[str, str, str] | None:
        found = re.search(r';nonce="([^"]*)"', request.headers.get("Signature-Input", ""))
        with self.lock:
            return self.signed.get(found.group(1)) if found else None


LEDGER = _Ledger()


class PeerSignature(requests.auth.AuthBase):
    """Signs a prepared request to a peer endpoint as the party that may make it."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        path = request.path_url.split("?", 1)[0]
        if not path.startswith(PEER_PREFIX):
            return request
        if _negative_signature_header(request.headers) is not None:
            return request
        body = request.body
        if body is None:
            body = b""
        elif isinstance(body, str):
            # requests sends text as UTF-8; sign and send the same bytes.
            body = body.encode("utf-8")
            request.body = body
        elif not isinstance(body, bytes):
            raise TypeError(f"contract_hooks: cannot sign a streamed body ({type(body).__name__})")
        signer = signer_for(path)
        public_hex, _ = IDENTITIES[signer]
        # The generated values of the signed headers give way to the real ones.
        for name in ("Content-Digest", "Signature-Input", "Signature"):
            request.headers.pop(name, None)
        request.headers["orthomask-to"] = RECIPIENT
        created = int(time.time())
        nonce = secrets.token_hex(16)
        SIGNER.sign(
            request,
            key_id=public_hex,
            created=datetime.datetime.fromtimestamp(created, datetime.timezone.utc),
            expires=datetime.datetime.fromtimestamp(created + LIFETIME_S, datetime.timezone.utc),
            nonce=nonce,
            label=LABEL,
            include_alg=True,
            covered_component_ids=COVERED,
            body=body,
        )
        LEDGER.record(nonce, (signer, request.method, path))
        return request


class AdminBearer(requests.auth.AuthBase):
    """The administrator's bearer token."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


def _names_scheme(scheme: str):
    """A filter: the operation's first security requirement names `scheme` (the requirement
    schemathesis' OpenAPI-aware auth would satisfy first; `[{admin: []}, {}]` is the admin's)."""

    def matches(ctx) -> bool:
        requirements = ctx.operation.definition.raw.get("security") or []
        return bool(requirements) and scheme in requirements[0]

    return matches


schemathesis.auth.set_from_requests(AdminBearer(os.environ["ORTHOMASK_CONTRACT_ADMIN"])).apply_to(
    _names_scheme("admin")
)
schemathesis.auth.set_from_requests(PeerSignature()).apply_to(_names_scheme("peer"))


@schemathesis.check
class signed_peer_requests_are_believed:
    """A peer request signed here is never refused as unauthenticated (401): the services' RFC 9421
    verifier believes this independent signer. And at least one peer request was signed, so a
    run whose signing silently stopped (every peer request 401) does not pass."""

    def __init__(self) -> None:
        self.peer_tested = False
        self.signed_seen = False

    def after_response(self, ctx, response, case) -> None:
        if case.operation.path.startswith(PEER_PREFIX):
            self.peer_tested = True
        entry = LEDGER.lookup(response.request)
        if entry is None:
            return
        self.signed_seen = True
        if response.status_code == 401:
            signer, method, path = entry
            raise AssertionError(
                f"{method} {path} signed by {signer} for {RECIPIENT} (http-message-signatures) was "
                f"refused as unauthenticated: {response.content[:300]!r}"
            )

    def after_run(self, ctx) -> None:
        if self.peer_tested and not self.signed_seen:
            raise AssertionError("peer operations were tested but no request to them was signed")
