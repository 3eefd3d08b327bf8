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

/// A uniform number in `[0, 1)` (for jitter: 0.5 when the browser gives no random numbers).
pub fn unit() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.5;
    }
    // The top 53 bits: every double in [0, 1) with that spacing, equally likely.
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1_u64 << 53) as f64
}
