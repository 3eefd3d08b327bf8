//! Turning command-line key arguments into keys, with the teaching-key warning.

use crate::io::warn;
use anyhow::{Context, Result, bail};
use orthomask_core::key::Key;
use orthomask_core::protocol::simulation::PartyKeys;

/// Warning printed whenever a numeric teaching key is used.
pub fn teaching_warning(number: u64) -> String {
    format!(
        "key {number} is a short teaching key: reproducible and guessable by anyone; never use it for real data"
    )
}

/// 256 bits of entropy from the operating system (the core takes entropy, never reads it).
fn os_entropy() -> Result<[u8; 32]> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).context("the operating system random source failed")?;
    Ok(bytes)
}

/// A fresh 256-bit production key from the operating system.
pub fn fresh_key() -> Result<Key> {
    Ok(Key::from_entropy(os_entropy()?))
}

/// Fresh production keys for collector, provider and participants from the operating system.
pub fn fresh_party_keys() -> Result<PartyKeys> {
    Ok(PartyKeys::from_entropy([
        os_entropy()?,
        os_entropy()?,
        os_entropy()?,
    ]))
}

/// `--teaching-key N` if given (warned about), else a fresh 256-bit key from the OS.
pub fn teaching_or_fresh(teaching: Option<u64>) -> Result<Key> {
    Ok(match teaching {
        Some(n) => {
            warn(&teaching_warning(n));
            Key::teaching(n)
        }
        None => fresh_key()?,
    })
}

/// Parse `--key K`: a number (teaching key, warned about) or 64 hex digits.
pub fn parse_key(text: &str) -> Result<Key> {
    let text = text.trim();
    if !text.is_empty() && text.len() <= 20 && text.bytes().all(|b| b.is_ascii_digit()) {
        let Ok(number) = text.parse::<u64>() else {
            bail!("key {text:?} is too large for a teaching key")
        };
        warn(&teaching_warning(number));
        return Ok(Key::teaching(number));
    }
    Key::from_hex(text)
        .map_err(|e| anyhow::anyhow!("--key: {e} (or give a short number for a teaching key)"))
}
