//! Party key files: one JSON object with a 64-hex-digit key per party.
//!
//! ```json
//! {"collector": "…64 hex…", "provider": "…64 hex…", "participants": "…64 hex…"}
//! ```
//!
//! A real deployment keeps the collector's and the provider's keys on different machines; a single
//! file holding both exists only for simulations (`orthomask pipeline --key-file`).

use orthomask_core::key::{Key, KeyError};
use orthomask_core::protocol::simulation::PartyKeys;
use serde::{Deserialize, Serialize};

/// Errors reading a key file.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Not the expected JSON object.
    #[error(
        "{source_name}: not a key file ({reason}); expected {{\"collector\": hex, \"provider\": hex, \"participants\": hex}}"
    )]
    Format {
        /// File name.
        source_name: String,
        /// The JSON parser's message.
        reason: String,
    },
    /// A key that is not 64 hex digits.
    #[error("{source_name}: key {role:?}: {error}")]
    Key {
        /// File name.
        source_name: String,
        /// Which party's key.
        role: &'static str,
        /// What is wrong with it.
        error: KeyError,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    collector: String,
    provider: String,
    participants: String,
}

/// Parse a key file.
///
/// # Errors
/// [`KeyFileError`] naming the file and the offending key.
pub fn parse_key_file(text: &str, source_name: &str) -> Result<PartyKeys, KeyFileError> {
    let file: KeyFile = serde_json::from_str(text).map_err(|e| KeyFileError::Format {
        source_name: source_name.to_owned(),
        reason: e.to_string(),
    })?;
    let key = |role: &'static str, hex: &str| {
        Key::from_hex(hex).map_err(|error| KeyFileError::Key {
            source_name: source_name.to_owned(),
            role,
            error,
        })
    };
    Ok(PartyKeys {
        collector: key("collector", &file.collector)?,
        provider: key("provider", &file.provider)?,
        participants: key("participants", &file.participants)?,
    })
}

/// Write a key file (pretty JSON).
pub fn write_key_file(keys: &PartyKeys) -> String {
    let file = KeyFile {
        collector: keys.collector.to_hex(),
        provider: keys.provider.to_hex(),
        participants: keys.participants.to_hex(),
    };
    // Serialising three strings cannot fail.
    serde_json::to_string_pretty(&file).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let keys = PartyKeys::from_entropy([[0x1f; 32], [0x2e; 32], [0x3d; 32]]);
        let back = parse_key_file(&write_key_file(&keys), "k.json").unwrap();
        assert_eq!(back.collector.to_hex(), keys.collector.to_hex());
        assert_eq!(back.provider.to_hex(), keys.provider.to_hex());
        assert_eq!(back.participants.to_hex(), keys.participants.to_hex());
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse_key_file("{}", "k.json").unwrap_err().to_string();
        assert!(e.starts_with("k.json: not a key file"), "{e}");
        let short = r#"{"collector": "abc", "provider": "00", "participants": "00"}"#;
        let e = parse_key_file(short, "k.json").unwrap_err().to_string();
        assert!(
            e.contains("\"collector\"") && e.contains("64 hexadecimal"),
            "{e}"
        );
    }
}
