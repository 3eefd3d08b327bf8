//! Randomness from the browser (`crypto.getRandomValues` through getrandom's `wasm_js`).

use orthomask_core::key::Key;
use orthomask_survey::client::token_from_bytes;

/// A fresh idempotency token (192 random bits).
///
/// # Errors
/// One line when the browser gives no random numbers.
pub fn token() -> Result<String, String> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).map_err(|e| format!("this browser gave no random numbers: {e}"))?;
    Ok(token_from_bytes(&bytes))
}

/// A fresh 256-bit key.
///
/// # Errors
/// One line when the browser gives no random numbers.
pub fn key() -> Result<Key, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("this browser gave no random numbers: {e}"))?;
    Ok(Key::from_entropy(bytes))
}
