//! The one hexadecimal codec of the workspace: keys, signatures, public keys, nonces, upload
//! hashes and Merkle proofs are written and read only through it.
//!
//! Canonical text only: exactly two lowercase digits `0-9a-f` per byte, nothing else. A bytes
//! value has one text, so a nonce, a hash or a signature cannot be sent twice under two
//! spellings (`u8::from_str_radix`, used before, also took `"+f"` for `0f` and upper case).
//!
//! Why our own twenty lines rather than the `hex` or `base16ct` crates: every refusal here must be
//! one line naming the offending character and its position (a key pasted into a form, a
//! signature in a definition), which neither reports; `hex` also accepts upper case.

/// Why a text is not canonical hexadecimal of the expected length.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum HexError {
    /// The text has the wrong number of characters.
    #[error("expected {expected} hexadecimal digits, got {found} characters")]
    Length {
        /// Digits expected (two per byte).
        expected: usize,
        /// Characters seen.
        found: usize,
    },
    /// A character is not one of `0-9a-f`.
    #[error("character {position} is {character:?}, not one of 0-9a-f")]
    Digit {
        /// 1-based position of the offending character.
        position: usize,
        /// The character itself.
        character: char,
    },
}

/// `bytes` as lowercase hexadecimal, two digits per byte.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(2 * bytes.len());
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    text
}

/// The value of one canonical digit.
fn digit(c: char) -> Option<u8> {
    match c {
        '0'..='9' => Some(c as u8 - b'0'),
        'a'..='f' => Some(c as u8 - b'a' + 10),
        _ => None,
    }
}

/// The bytes of canonical hexadecimal `text`, of any even length.
///
/// # Errors
/// [`HexError::Length`] for an odd number of characters, [`HexError::Digit`] naming the first
/// character that is not `0-9a-f`.
pub fn decode(text: &str) -> Result<Vec<u8>, HexError> {
    let chars: Vec<char> = text.chars().collect();
    if !chars.len().is_multiple_of(2) {
        return Err(HexError::Length {
            expected: chars.len() + 1,
            found: chars.len(),
        });
    }
    chars
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| {
            let value = |j: usize| {
                digit(pair[j]).ok_or(HexError::Digit {
                    position: 2 * i + j + 1,
                    character: pair[j],
                })
            };
            Ok((value(0)? << 4) | value(1)?)
        })
        .collect()
}

/// Exactly `N` bytes from canonical hexadecimal `text` (`2N` digits).
///
/// # Errors
/// [`HexError::Length`] unless `text` has `2N` characters, else as [`decode`].
pub fn decode_array<const N: usize>(text: &str) -> Result<[u8; N], HexError> {
    let found = text.chars().count();
    if found != 2 * N {
        return Err(HexError::Length {
            expected: 2 * N,
            found,
        });
    }
    let bytes = decode(text)?;
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 §10's base16 test vectors, in lower case.
    #[test]
    fn rfc_4648_vectors() {
        for (bytes, text) in [
            ("", ""),
            ("f", "66"),
            ("fo", "666f"),
            ("foo", "666f6f"),
            ("foob", "666f6f62"),
            ("fooba", "666f6f6261"),
            ("foobar", "666f6f626172"),
        ] {
            assert_eq!(encode(bytes.as_bytes()), text);
            assert_eq!(decode(text).unwrap(), bytes.as_bytes());
        }
        assert_eq!(encode(&[0x00, 0x0f, 0xf0, 0xff]), "000ff0ff");
    }

    /// Every non-canonical spelling of a byte is refused, naming the character: a sign (which
    /// `u8::from_str_radix` took), upper case, spaces, non-ASCII.
    #[test]
    fn only_canonical_text_is_read() {
        assert_eq!(
            decode("+f"),
            Err(HexError::Digit {
                position: 1,
                character: '+'
            })
        );
        assert_eq!(
            decode("0F"),
            Err(HexError::Digit {
                position: 2,
                character: 'F'
            })
        );
        assert_eq!(
            decode("a "),
            Err(HexError::Digit {
                position: 2,
                character: ' '
            })
        );
        assert_eq!(
            decode("é0"),
            Err(HexError::Digit {
                position: 1,
                character: 'é'
            })
        );
        assert_eq!(
            decode("abc"),
            Err(HexError::Length {
                expected: 4,
                found: 3
            })
        );
        assert_eq!(
            decode_array::<2>("abcdef"),
            Err(HexError::Length {
                expected: 4,
                found: 6
            })
        );
        assert_eq!(decode_array::<2>("abcd"), Ok([0xab, 0xcd]));
    }

    /// Every byte value survives the round trip, and its text is the one `{:02x}` prints.
    #[test]
    fn every_byte_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        let text = encode(&all);
        assert_eq!(decode(&text).unwrap(), all);
        let printed: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(text, printed);
    }
}
