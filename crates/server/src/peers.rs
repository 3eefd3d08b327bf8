//! Who the parties of a deployment are, and the keys that tell them apart (issue 43).
//!
//! The collector, the masking service provider and each right-masking service are separate
//! organisations that do not trust each other. Each holds one Ed25519 identity key of its own
//! and nothing of the others'; each service's configuration **pins** the public keys of the
//! peers it deals with and the role each plays. A request between services is believed only
//! when it is signed by a pinned key (`crate::peer_auth`, RFC 9421), and a handler then asks
//! whether the party that signed may do what it asks (`Peer::require`): only the collector
//! registers, opens and closes; only the provider hands cohorts to the collector; right-masking
//! service `j` hands blocks to the provider as service `j` only, and takes a hand-on only from
//! its ring neighbour.
//!
//! The collector's identity key is the key it already signs definitions and upload credentials
//! with (`collector-signing-key`, `orthomask_survey::trust`): the key every device verifies is
//! the key the services pin, so a registration is believed only when it carries that same key.
//! (The messages cannot be confused: definitions and credentials are signed under their own
//! context strings, `orthomask/signed-definition/v1\0` and `orthomask/upload-credential/v1\0`,
//! and an RFC 9421 signature base starts with a quoted component name.) The provider and the
//! right-masking services keep theirs in `identity-key` in their own data directory. Both files
//! hold the 32-byte secret as 64 hex digits, readable by the owner only.

use crate::error::ServerError;
use ed25519_dalek::{SigningKey, VerifyingKey};
use orthomask_core::hex;
use std::path::Path;

/// The file a provider or right-masking service keeps its identity key in, inside its data
/// directory (the collector's is `collector-signing-key`).
pub const IDENTITY_KEY_FILE: &str = "identity-key";

/// A role in a deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Party {
    /// The data collector.
    Collector,
    /// The masking service provider (left masks).
    Provider,
    /// Right-masking service `i` (share mode), 0-based.
    Right(u32),
}

impl Party {
    /// The name a signed request names its recipient by (`orthomask-to`) and the logs use:
    /// `collector`, `provider`, `right-<i>`.
    pub fn name(self) -> String {
        match self {
            Self::Collector => "collector".to_owned(),
            Self::Provider => "provider".to_owned(),
            Self::Right(i) => format!("right-{i}"),
        }
    }

    /// Read a [`Party::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "collector" => Some(Self::Collector),
            "provider" => Some(Self::Provider),
            _ => {
                let digits = name.strip_prefix("right-")?;
                // `right-01` is not a name this module writes: one spelling per party.
                if digits.len() > 1 && digits.starts_with('0') {
                    return None;
                }
                digits.parse().ok().map(Self::Right)
            }
        }
    }
}

impl std::fmt::Display for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Collector => f.write_str("the data collector"),
            Self::Provider => f.write_str("the masking service provider"),
            Self::Right(i) => write!(f, "right-masking service {i}"),
        }
    }
}

/// A party's public identity key: 64 lowercase hex digits on the command line, in
/// configuration and as an RFC 9421 `keyid`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PartyKey(VerifyingKey);

impl std::fmt::Debug for PartyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PartyKey({})", self.to_hex())
    }
}

impl std::fmt::Display for PartyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl PartyKey {
    /// Read 64 hex digits (surrounding whitespace ignored).
    ///
    /// # Errors
    /// One line for anything else, or for bytes that are not a point of the curve.
    pub fn from_hex(text: &str) -> Result<Self, String> {
        let bytes = hex::decode_array::<32>(text.trim())
            .map_err(|e| format!("an identity key is 64 hex digits: {e}"))?;
        VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|_| "the 64 hex digits are not an Ed25519 public key".to_owned())
    }

    /// The 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0.as_bytes())
    }

    /// The key, to verify with.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.0
    }
}

/// This service's own identity: the party it plays and its signing key. Never printed: `Debug`
/// shows the public half only.
#[derive(Clone)]
pub struct Identity {
    party: Party,
    key: SigningKey,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Identity({}, public {})",
            self.party.name(),
            self.public_key()
        )
    }
}

impl Identity {
    /// The identity of `party` whose secret is `secret`.
    pub fn from_secret(party: Party, secret: [u8; 32]) -> Self {
        Self {
            party,
            key: SigningKey::from_bytes(&secret),
        }
    }

    /// Load `party`'s identity from `path` (64 hex digits), or generate one from the operating
    /// system's random source and write it there (0600, atomically) when the file is absent.
    ///
    /// # Errors
    /// [`ServerError::KeyFile`] for a file that is not 64 hex digits; [`ServerError::Config`]
    /// when the OS random source fails; I/O errors writing it.
    pub fn load_or_create(path: &Path, party: Party) -> Result<Self, ServerError> {
        let bad = |reason: String| ServerError::KeyFile {
            path: path.display().to_string(),
            reason,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => hex::decode_array::<32>(text.trim())
                .map(|secret| Self::from_secret(party, secret))
                .map_err(|e| bad(format!("an identity key file holds 64 hex digits: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut secret = [0u8; 32];
                getrandom::fill(&mut secret).map_err(|e| {
                    ServerError::Config(format!("the operating system random source failed: {e}"))
                })?;
                let text = format!("{}\n", hex::encode(&secret));
                if crate::keys::create_private(path, text.as_bytes())? {
                    Ok(Self::from_secret(party, secret))
                } else {
                    // Another process created it meanwhile: use that one.
                    Self::load_or_create(path, party)
                }
            }
            Err(e) => Err(ServerError::io(format!("reading {}", path.display()), e)),
        }
    }

    /// The party this service plays.
    pub fn party(&self) -> Party {
        self.party
    }

    /// The public half, which its peers pin.
    pub fn public_key(&self) -> PartyKey {
        PartyKey(self.key.verifying_key())
    }

    /// The signing key (for `crate::peer_auth` alone).
    pub(crate) fn signing_key(&self) -> &SigningKey {
        &self.key
    }
}

/// A peer this service pins: the role it plays, the base URL it is reached at and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Its role.
    pub party: Party,
    /// Its base URL (no trailing slash).
    pub url: String,
    /// Its identity key.
    pub key: PartyKey,
}

/// The peers a service pins: whom it sends to (by URL) and whose signatures it believes (by
/// key). Built once from the service's configuration, never from what a request says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Peers(Vec<Peer>);

impl Peers {
    /// Pin `peers` for a service that is itself `own` with key `own_key`.
    ///
    /// # Errors
    /// One line when a party is pinned twice, when two parties share a key (one organisation
    /// holding two roles is the coalition of both, which the deployment must not hide), or when
    /// a peer is pinned with this service's own role or key.
    pub fn new(own: Party, own_key: PartyKey, peers: Vec<Peer>) -> Result<Self, String> {
        for (i, p) in peers.iter().enumerate() {
            if p.party == own {
                return Err(format!(
                    "{} is this service itself; pin only its peers",
                    p.party
                ));
            }
            if p.key == own_key {
                return Err(format!(
                    "{} is pinned with this service's own identity key: each party holds a key \
                     of its own",
                    p.party
                ));
            }
            for q in &peers[..i] {
                if q.party == p.party {
                    return Err(format!("{} is pinned twice", p.party));
                }
                if q.key == p.key {
                    return Err(format!(
                        "{} and {} are pinned with the same identity key: each party holds a key \
                         of its own",
                        q.party, p.party
                    ));
                }
            }
        }
        Ok(Self(peers))
    }

    /// The peer whose key is `key_hex` (an RFC 9421 `keyid`).
    pub fn by_key_hex(&self, key_hex: &str) -> Option<&Peer> {
        self.0.iter().find(|p| p.key.to_hex() == key_hex)
    }

    /// The pinned peer playing `party`.
    pub fn get(&self, party: Party) -> Option<&Peer> {
        self.0.iter().find(|p| p.party == party)
    }

    /// The peer a request to `url` goes to: the one whose base URL is `url`'s longest prefix
    /// ending at a path boundary.
    pub fn for_url(&self, url: &str) -> Option<&Peer> {
        self.0
            .iter()
            .filter(|p| {
                url.strip_prefix(p.url.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .max_by_key(|p| p.url.len())
    }

    /// Every pinned peer.
    pub fn iter(&self) -> impl Iterator<Item = &Peer> {
        self.0.iter()
    }
}

/// The identity keys a service's configuration pins, beside the URLs it names its peers by:
/// the collector's, the provider's and every right-masking service's in index order (a
/// right-masking service lists its own too, checked against its own key, so that every service
/// of a deployment can be given the same list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerKeys {
    /// The data collector's key (`collector-signing-key`'s public half).
    pub collector: Option<PartyKey>,
    /// The masking service provider's key.
    pub provider: Option<PartyKey>,
    /// Right-masking service `i`'s key at position `i`.
    pub rights: Vec<PartyKey>,
}

/// The peers a service configuration names by URL, with their keys from `keys`.
///
/// # Errors
/// One line for a URL without a key (nobody is trusted by address alone), a key without a URL,
/// a right-masking list whose keys and URLs differ in number, a right-masking service's own key
/// that is not its identity, or a pinning [`Peers::new`] refuses.
pub fn pin(
    own: &Identity,
    collector_url: Option<&str>,
    provider_url: Option<&str>,
    right_urls: &[String],
    keys: &PeerKeys,
) -> Result<Peers, String> {
    let missing = |party: Party, url: &str| {
        format!("{party} at {url} is not pinned: give its identity key (64 hex digits)")
    };
    let mut peers = Vec::new();
    for (party, url, key) in [
        (Party::Collector, collector_url, keys.collector),
        (Party::Provider, provider_url, keys.provider),
    ] {
        if party == own.party() {
            // A deployment's whole list, given to each of its services: its own entry is
            // checked, not pinned.
            if let Some(key) = key
                && key != own.public_key()
            {
                return Err(format!(
                    "the identity key listed for {party} (this service) is {key}, but its own is {}",
                    own.public_key()
                ));
            }
            continue;
        }
        match (url, key) {
            (Some(url), Some(key)) => peers.push(Peer {
                party,
                url: url.to_owned(),
                key,
            }),
            (Some(url), None) => return Err(missing(party, url)),
            (None, Some(_)) => {
                return Err(format!(
                    "an identity key is pinned for {party}, whose URL is not given"
                ));
            }
            (None, None) => {}
        }
    }
    let fewest = orthomask_survey::policy::MIN_SHARE_SERVICES;
    if !right_urls.is_empty() && right_urls.len() < fewest {
        return Err(format!(
            "{} right-masking services are named, but share mode needs at least {fewest} (or \
             none, for the basic protocol alone)",
            right_urls.len()
        ));
    }
    if keys.rights.len() != right_urls.len() {
        return Err(format!(
            "{} right-masking services are named but {} of their identity keys are pinned; give \
             one key per service, in index order",
            right_urls.len(),
            keys.rights.len()
        ));
    }
    for (i, (url, key)) in (0u32..).zip(right_urls.iter().zip(&keys.rights)) {
        let party = Party::Right(i);
        if party == own.party() {
            if *key != own.public_key() {
                return Err(format!(
                    "the identity key listed for {party} (this service) is {key}, but its own is {}",
                    own.public_key()
                ));
            }
            continue;
        }
        peers.push(Peer {
            party,
            url: url.clone(),
            key: *key,
        });
    }
    Peers::new(own.party(), own.public_key(), peers)
}

/// A service's own identity (loaded from `key_file`, made there when absent) and the peers its
/// configuration pins ([`pin`]): what every service opens first.
///
/// # Errors
/// [`ServerError`] for a key file that cannot be read or written, or a pinning [`pin`] refuses
/// (named after the party).
pub fn open(
    key_file: &Path,
    party: Party,
    collector_url: Option<&str>,
    provider_url: Option<&str>,
    right_urls: &[String],
    keys: &PeerKeys,
) -> Result<(std::sync::Arc<Identity>, std::sync::Arc<Peers>), ServerError> {
    let identity = Identity::load_or_create(key_file, party)?;
    let peers = pin(&identity, collector_url, provider_url, right_urls, keys)
        .map_err(|e| ServerError::Config(format!("{party}: {e}")))?;
    Ok((std::sync::Arc::new(identity), std::sync::Arc::new(peers)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> PartyKey {
        Identity::from_secret(Party::Collector, [seed; 32]).public_key()
    }

    #[test]
    fn party_names_read_back_and_only_one_spelling_each() {
        for p in [
            Party::Collector,
            Party::Provider,
            Party::Right(0),
            Party::Right(12),
        ] {
            assert_eq!(Party::from_name(&p.name()), Some(p));
        }
        for bad in ["right-", "right-01", "right--1", "Collector", "msp", ""] {
            assert_eq!(Party::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn keys_read_back_and_garbage_is_one_line() {
        let k = key(3);
        assert_eq!(PartyKey::from_hex(&format!(" {k}\n")).unwrap(), k);
        for bad in ["", "00", &"zz".repeat(32)] {
            let e = PartyKey::from_hex(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_pinning_that_hides_a_coalition_or_names_itself_is_refused() {
        let peer = |party, seed, url: &str| Peer {
            party,
            key: key(seed),
            url: url.to_owned(),
        };
        let ok = Peers::new(
            Party::Provider,
            key(1),
            vec![
                peer(Party::Collector, 2, "http://c"),
                peer(Party::Right(0), 3, "http://r0"),
            ],
        );
        assert!(ok.is_ok());
        let shared = Peers::new(
            Party::Provider,
            key(1),
            vec![
                peer(Party::Collector, 2, "http://c"),
                peer(Party::Right(0), 2, "http://r0"),
            ],
        )
        .unwrap_err();
        assert!(shared.contains("same identity key"), "{shared}");
        let own_key = Peers::new(
            Party::Provider,
            key(1),
            vec![peer(Party::Collector, 1, "http://c")],
        )
        .unwrap_err();
        assert!(own_key.contains("own identity key"), "{own_key}");
        let itself = Peers::new(
            Party::Provider,
            key(1),
            vec![peer(Party::Provider, 2, "http://p")],
        )
        .unwrap_err();
        assert!(itself.contains("itself"), "{itself}");
        let twice = Peers::new(
            Party::Provider,
            key(1),
            vec![
                peer(Party::Collector, 2, "http://c"),
                peer(Party::Collector, 3, "http://c2"),
            ],
        )
        .unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
    }

    #[test]
    fn a_url_goes_to_the_peer_whose_base_it_extends_at_a_path_boundary() {
        let peers = Peers::new(
            Party::Collector,
            key(1),
            vec![
                Peer {
                    party: Party::Provider,
                    key: key(2),
                    url: "http://h:8081".into(),
                },
                Peer {
                    party: Party::Right(0),
                    key: key(3),
                    url: "http://h:8081/right".into(),
                },
            ],
        )
        .unwrap();
        let to = |u: &str| peers.for_url(u).map(|p| p.party);
        assert_eq!(to("http://h:8081/api/peer/x"), Some(Party::Provider));
        assert_eq!(to("http://h:8081/right/api/peer/x"), Some(Party::Right(0)));
        assert_eq!(to("http://h:80810/api"), None);
        assert_eq!(to("http://other/api"), None);
    }

    #[test]
    fn a_configuration_pins_every_peer_it_names_and_nothing_by_address_alone() {
        let own = Identity::from_secret(Party::Right(1), [1; 32]);
        let urls = [
            "http://r0".to_owned(),
            "http://r1".to_owned(),
            "http://r2".to_owned(),
        ];
        let keys = PeerKeys {
            collector: Some(key(2)),
            provider: Some(key(3)),
            rights: vec![key(4), own.public_key(), key(5)],
        };
        let peers = pin(&own, Some("http://c"), Some("http://p"), &urls, &keys).unwrap();
        let parties: Vec<Party> = peers.iter().map(|p| p.party).collect();
        assert_eq!(
            parties,
            [
                Party::Collector,
                Party::Provider,
                Party::Right(0),
                Party::Right(2)
            ]
        );
        let no_key = PeerKeys {
            provider: None,
            ..keys.clone()
        };
        let e = pin(&own, Some("http://c"), Some("http://p"), &urls, &no_key).unwrap_err();
        assert!(e.contains("not pinned"), "{e}");
        let short = PeerKeys {
            rights: vec![key(4)],
            ..keys.clone()
        };
        let e = pin(&own, Some("http://c"), Some("http://p"), &urls, &short).unwrap_err();
        assert!(
            e.contains("3 right-masking services are named but 1"),
            "{e}"
        );
        let wrong_own = PeerKeys {
            rights: vec![key(4), key(6), key(5)],
            ..keys
        };
        let e = pin(&own, Some("http://c"), Some("http://p"), &urls, &wrong_own).unwrap_err();
        assert!(e.contains("this service"), "{e}");
    }

    #[test]
    fn an_identity_is_created_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(IDENTITY_KEY_FILE);
        let a = Identity::load_or_create(&path, Party::Right(1)).unwrap();
        let b = Identity::load_or_create(&path, Party::Right(1)).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        assert!(!format!("{a:?}").contains(&hex::encode(&a.key.to_bytes())));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "readable by others: {mode:o}");
        }
        std::fs::write(&path, "not a key").unwrap();
        let e = Identity::load_or_create(&path, Party::Right(1)).unwrap_err();
        assert!(e.to_string().contains("64 hex digits"), "{e}");
    }
}
