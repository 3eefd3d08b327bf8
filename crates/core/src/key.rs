//! Keys and the independent random streams drawn from them.
//!
//! A [`Key`] is 256 bits held by one party. Every operator that party generates (its right mask
//! `B`, its left mask `A₁`, the noise of a simulated participant, …) reads its own ChaCha12 stream,
//! selected by a [`StreamId`]: same key and same stream id give the same numbers on every
//! platform, and different stream ids give independent numbers.
//!
//! Production keys are 256 bits of operating-system entropy that the caller reads and passes in
//! ([`Key::from_entropy`]): the core never touches the OS random source itself, so it stays
//! I/O-free and runs unchanged in a browser, a server and a test. Short numeric keys
//! ([`Key::teaching`]) exist so that classroom demonstrations and tests are reproducible; they are
//! guessable by anyone and [`Key::is_teaching`] lets every front end say so.

#[cfg(not(target_arch = "wasm32"))]
use rand_chacha::ChaCha12Rng;
#[cfg(not(target_arch = "wasm32"))]
use rand_core::SeedableRng;

/// The generator behind every keyed stream: ChaCha with 12 rounds, the choice of `rand`'s
/// `StdRng` (a cryptographically strong margin at half the cost of ChaCha20, which matters when
/// a participant's device draws p²/2 normals for a p×p Haar mask). Natively it is `rand_chacha`'s
/// (SIMD via `ppv-lite86`); in WebAssembly it is [`PortableChaCha12`], the same stream computed
/// with `simd128`, because `ppv-lite86` has no WebAssembly SIMD path.
#[cfg(not(target_arch = "wasm32"))]
pub type MaskRng = ChaCha12Rng;
/// See the native definition: the same stream, computed with WebAssembly SIMD.
#[cfg(target_arch = "wasm32")]
pub type MaskRng = crate::random::chacha::PortableChaCha12;

/// The generator at a stream and word position (see [`MaskRng`]).
fn mask_rng(seed: [u8; 32], stream: u64, word_pos: u128) -> MaskRng {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut rng = ChaCha12Rng::from_seed(seed);
        rng.set_stream(stream);
        rng.set_word_pos(word_pos);
        rng
    }
    #[cfg(target_arch = "wasm32")]
    {
        crate::random::chacha::PortableChaCha12::new(seed, stream, word_pos)
    }
}

/// Errors when parsing keys.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// A hex key was not 64 hexadecimal digits.
    #[error("a key must be 64 hexadecimal digits (256 bits); got {found} characters")]
    BadLength {
        /// Number of characters seen.
        found: usize,
    },
    /// A hex key contained a character other than `0-9a-f`.
    #[error("a key must be lowercase hexadecimal; character {position} is {character:?}")]
    BadDigit {
        /// 1-based position of the offending character.
        position: usize,
        /// The character itself.
        character: char,
    },
}

/// Where a key came from; only the origin decides whether front ends must warn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrigin {
    /// 256 bits of fresh entropy (the operating system's, read by the front end).
    Generated,
    /// Parsed from 64 hex digits (a key file or the command line).
    Imported,
    /// Derived from a short number: reproducible, guessable, for teaching and tests only.
    Teaching(u64),
}

/// A 256-bit key held by one party.
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    bytes: [u8; 32],
    origin: KeyOrigin,
}

impl std::fmt::Debug for Key {
    /// Never prints key material: a key in a log line is a key given away.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// Domain-separation prefix of teaching keys, so they never coincide with imported keys that
/// happen to be mostly zero.
const TEACHING_PREFIX: &[u8; 24] = b"orthomask/teaching-key/\0";

impl Key {
    /// A fresh production key from 256 bits of entropy the caller read from the operating
    /// system (`getrandom::fill` natively, `crypto.getRandomValues` in a browser).
    ///
    /// The bytes must be fresh and secret: everything this key's holder masks is only as hidden
    /// as these 32 bytes are unpredictable. Use [`Key::from_bytes`] to re-import stored keys.
    pub fn from_entropy(entropy: [u8; 32]) -> Self {
        Self {
            bytes: entropy,
            origin: KeyOrigin::Generated,
        }
    }

    /// A key from raw bytes (treated as imported).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self {
            bytes,
            origin: KeyOrigin::Imported,
        }
    }

    /// A reproducible teaching key derived from a short number. Never use one for real data.
    pub fn teaching(number: u64) -> Self {
        let mut bytes = [0u8; 32];
        bytes[..24].copy_from_slice(TEACHING_PREFIX);
        bytes[24..].copy_from_slice(&number.to_le_bytes());
        Self {
            bytes,
            origin: KeyOrigin::Teaching(number),
        }
    }

    /// Parse 64 lowercase hexadecimal digits (surrounding whitespace ignored; [`crate::hex`]).
    ///
    /// # Errors
    /// [`KeyError::BadLength`] or [`KeyError::BadDigit`] naming the offending character.
    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        let bytes = crate::hex::decode_array::<32>(text.trim()).map_err(|e| match e {
            crate::hex::HexError::Length { found, .. } => KeyError::BadLength { found },
            crate::hex::HexError::Digit {
                position,
                character,
            } => KeyError::BadDigit {
                position,
                character,
            },
        })?;
        Ok(Self {
            bytes,
            origin: KeyOrigin::Imported,
        })
    }

    /// The key as 64 lowercase hex digits (for key files; never log it).
    pub fn to_hex(&self) -> String {
        crate::hex::encode(&self.bytes)
    }

    /// Where the key came from.
    pub fn origin(&self) -> KeyOrigin {
        self.origin
    }

    /// Whether this is a guessable teaching key.
    pub fn is_teaching(&self) -> bool {
        matches!(self.origin, KeyOrigin::Teaching(_))
    }

    /// The independent ChaCha12 stream for one operator.
    pub fn stream(&self, id: StreamId) -> KeyedStream {
        KeyedStream {
            seed: self.bytes,
            stream: id.encode(),
        }
    }

    /// A subkey for handing one operator to another party without the rest: the first 256 bits of
    /// this key's stream `id`. ChaCha is a pseudo-random function of its key, so the subkey reveals
    /// nothing about this key or its other streams. The collector publishes
    /// `derive(RightMaskKey { cohort })` to devices so they can build `B_k` while `A₁` stays secret.
    ///
    /// A teaching key's subkey is still guessable and keeps the teaching origin.
    pub fn derive(&self, id: StreamId) -> Key {
        let mut bytes = [0u8; 32];
        rand_core::Rng::fill_bytes(&mut self.stream(id).rng(), &mut bytes);
        let origin = match self.origin {
            KeyOrigin::Teaching(n) => KeyOrigin::Teaching(n),
            _ => KeyOrigin::Imported,
        };
        Key { bytes, origin }
    }
}

/// Which operator a stream feeds. Encoded as ChaCha's 64-bit stream number:
/// a one-byte tag followed by a 56-bit index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamId {
    /// The participant-side right mask `B` (`B_k` of cohort `k`).
    RightMask {
        /// Cohort index (0 for the monolithic protocol).
        cohort: u32,
    },
    /// The masking service provider's left mask `A₂` (`A₂,k` of cohort `k`).
    ProviderLeftMask {
        /// Cohort index (0 for the monolithic protocol).
        cohort: u32,
    },
    /// The data collector's left mask `A₁`.
    CollectorLeftMask,
    /// Gaussian padding (and DP noise) of one simulated participant.
    ParticipantNoise {
        /// Participant index.
        participant: u64,
    },
    /// The second TM² method's row operator `A₀` (seed 003 §3.3).
    RowMixer,
    /// A block-diagonal attribute mask (`B₁` of the provider, `B₂` of the collector; seed 003
    /// §3.3), or the right mask of provider `party` in the collusion-resistant extension.
    AttributeMask {
        /// Which provider or party.
        party: u32,
    },
    /// A left mask of left-masking provider `party` in the collusion-resistant extension.
    ExtraLeftMask {
        /// Which provider.
        party: u32,
    },
    /// Additive shares of one participant's record (collusion-resistant extension).
    Shares {
        /// Participant index.
        participant: u64,
    },
    /// Derivation of the subkey from which devices of cohort `cohort` build the right mask.
    RightMaskKey {
        /// Cohort index.
        cohort: u32,
    },
    /// Derivation of the subkey from which devices build the second method's `A₀`.
    RowMixerKey,
    /// Agency A's randomness in the secure matrix product of seed 001 (draw `draw` of `Z`).
    SecureProduct {
        /// Which draw (A redraws `Z` when B's checks refuse it).
        draw: u32,
    },
    /// Agency `generator`'s randomness for its `Z` with agency `partner` when several agencies
    /// assemble their cross-products (seed 001 §3; draw `draw`, redrawn when refused).
    SecureAssembly {
        /// The agency that generates `Z` for this pair.
        generator: u16,
        /// The other agency of the pair.
        partner: u16,
        /// Which draw.
        draw: u16,
    },
    /// Free-form streams for tests and demonstrations.
    Scratch(u64),
    /// The pseudo-random cancelling mask expanded from a ring seed (share mode as the services
    /// run it, `protocol::share_handover`).
    CancellingMask,
    /// Derivation of a right-masking service's ring seed for cohort `cohort`.
    CancellingSeed {
        /// Cohort index.
        cohort: u32,
    },
}

const INDEX_MASK: u64 = (1 << 56) - 1;

impl StreamId {
    fn encode(self) -> u64 {
        let (tag, index): (u64, u64) = match self {
            Self::RightMask { cohort } => (1, u64::from(cohort)),
            Self::ProviderLeftMask { cohort } => (2, u64::from(cohort)),
            Self::CollectorLeftMask => (3, 0),
            Self::ParticipantNoise { participant } => (4, participant),
            Self::RowMixer => (5, 0),
            Self::AttributeMask { party } => (6, u64::from(party)),
            Self::ExtraLeftMask { party } => (7, u64::from(party)),
            Self::Shares { participant } => (8, participant),
            Self::Scratch(index) => (9, index),
            Self::RightMaskKey { cohort } => (10, u64::from(cohort)),
            Self::RowMixerKey => (11, 0),
            Self::SecureProduct { draw } => (12, u64::from(draw)),
            Self::CancellingMask => (14, 0),
            Self::CancellingSeed { cohort } => (15, u64::from(cohort)),
            Self::SecureAssembly {
                generator,
                partner,
                draw,
            } => (
                13,
                (u64::from(generator) << 32) | (u64::from(partner) << 16) | u64::from(draw),
            ),
        };
        // Indices above 2⁵⁶ would alias; participants and cohorts never come near that.
        (tag << 56) | (index & INDEX_MASK)
    }
}

/// One operator's stream: a ChaCha key plus stream number. Sub-streams (one per Householder
/// reflector, say) start at fixed positions so any of them can be regenerated without the others.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyedStream {
    seed: [u8; 32],
    stream: u64,
}

impl std::fmt::Debug for KeyedStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedStream")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

/// Each sub-stream owns 2³² ChaCha words (2³¹ uniforms), far more than any reflector needs.
const SUBSTREAM_WORDS_LOG2: u32 = 32;

impl KeyedStream {
    /// The generator positioned at the start of the stream.
    pub fn rng(&self) -> MaskRng {
        self.substream(0)
    }

    /// The generator positioned at the start of sub-stream `index`.
    pub fn substream(&self, index: u64) -> MaskRng {
        mask_rng(
            self.seed,
            self.stream,
            u128::from(index) << SUBSTREAM_WORDS_LOG2,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn hex_round_trip() {
        let key = Key::teaching(535);
        let parsed = Key::from_hex(&key.to_hex()).unwrap();
        assert_eq!(parsed.to_hex(), key.to_hex());
        assert!(!parsed.is_teaching());
        assert!(key.is_teaching());
    }

    #[test]
    fn hex_errors_name_the_problem() {
        assert_eq!(Key::from_hex("abc"), Err(KeyError::BadLength { found: 3 }));
        let mut bad = "0".repeat(64);
        bad.replace_range(9..10, "g");
        assert_eq!(
            Key::from_hex(&bad),
            Err(KeyError::BadDigit {
                position: 10,
                character: 'g'
            })
        );
    }

    #[test]
    fn debug_never_shows_key_material() {
        let key = Key::from_hex(&"ab".repeat(32)).unwrap();
        assert!(!format!("{key:?}").contains("ab"));
        assert!(!format!("{:?}", key.stream(StreamId::CollectorLeftMask)).contains("171"));
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let key = Key::teaching(1);
        let a = key
            .stream(StreamId::RightMask { cohort: 0 })
            .rng()
            .next_u64();
        let again = key
            .stream(StreamId::RightMask { cohort: 0 })
            .rng()
            .next_u64();
        let other_cohort = key
            .stream(StreamId::RightMask { cohort: 1 })
            .rng()
            .next_u64();
        let other_role = key
            .stream(StreamId::ProviderLeftMask { cohort: 0 })
            .rng()
            .next_u64();
        assert_eq!(a, again);
        assert_ne!(a, other_cohort);
        assert_ne!(a, other_role);
        // The pair streams of a secure assembly differ in every field.
        let pair = |generator, partner, draw| {
            key.stream(StreamId::SecureAssembly {
                generator,
                partner,
                draw,
            })
            .rng()
            .next_u64()
        };
        let first = pair(0, 1, 0);
        for other in [pair(1, 0, 0), pair(0, 2, 0), pair(0, 1, 1)] {
            assert_ne!(first, other);
        }
    }

    /// Compares with `rand_chacha`'s own seek, which exists natively only.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn substreams_start_where_the_stream_would_be() {
        let stream = Key::teaching(2).stream(StreamId::Scratch(0));
        let mut whole = stream.rng();
        // Skip exactly one sub-stream: 2³² words = 2³¹ u64 draws is too many to step through,
        // so compare against an explicit seek instead.
        let mut manual = stream.rng();
        manual.set_word_pos(1u128 << 32);
        assert_eq!(stream.substream(1).next_u64(), manual.next_u64());
        assert_ne!(stream.substream(1).next_u64(), whole.next_u64());
    }

    #[test]
    fn derived_keys_are_reproducible_independent_and_keep_teaching_origin() {
        let master = Key::teaching(9);
        let a = master.derive(StreamId::RightMaskKey { cohort: 0 });
        assert_eq!(
            a.to_hex(),
            master.derive(StreamId::RightMaskKey { cohort: 0 }).to_hex()
        );
        assert_ne!(
            a.to_hex(),
            master.derive(StreamId::RightMaskKey { cohort: 1 }).to_hex()
        );
        assert_ne!(a.to_hex(), master.to_hex());
        assert!(a.is_teaching());
        let real = Key::from_entropy([0x5a; 32]).derive(StreamId::RowMixerKey);
        assert_eq!(real.origin(), KeyOrigin::Imported);
    }

    /// A key from entropy is a production key: not a teaching key, and its streams are those of
    /// the same bytes imported (only the origin differs).
    #[test]
    fn keys_from_entropy_are_production_keys() {
        let entropy = [0xc3; 32];
        let a = Key::from_entropy(entropy);
        assert_eq!(a.origin(), KeyOrigin::Generated);
        assert!(!a.is_teaching());
        assert_eq!(a.to_hex(), "c3".repeat(32));
        let imported = Key::from_bytes(entropy);
        let draw = |k: &Key| k.stream(StreamId::Scratch(5)).rng().next_u64();
        assert_eq!(draw(&a), draw(&imported));
        assert_ne!(draw(&a), draw(&Key::from_entropy([0xc4; 32])));
    }
}
