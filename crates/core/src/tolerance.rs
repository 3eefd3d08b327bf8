//! Every numerical tolerance of Orthomask, named once.
//!
//! Tests across the workspace import these instead of writing ad-hoc epsilons, so a reader can
//! see in one place how exact each promise is and why.

/// Orthogonality of generated masks, `‖QᵀQ − I‖_max`, and exactness of reflector algebra on
/// O(1) data. Householder products are backward stable: the error is a small multiple of
/// `n·ε_mach` (ε ≈ 2.2e-16) for the sizes we test (n ≤ 500).
pub const ORTHOGONALITY: f64 = 1e-12;

/// Mask followed by unmask must return the input to this relative accuracy (`‖X̂ − X‖_max / ‖X‖_max`).
pub const ROUND_TRIP: f64 = 1e-12;

/// Released cross-products `XᵀX` and column means must match the raw data to this relative
/// accuracy (issue "Masking core": 1e-10 relative).
pub const PRESERVED_STATISTICS: f64 = 1e-10;

/// Two implementations of the same operator (keyed stream vs. dense materialisation) must agree
/// entry-wise to this absolute accuracy on orthogonal matrices (entries bounded by 1).
pub const SAME_OPERATOR: f64 = 1e-12;

/// A released entry of a non-constant column "differs from the raw one" when it moves by more
/// than this, relative to the column's scale.
pub const VISIBLY_MASKED: f64 = 1e-9;

/// Relative slack of the collector's quality-assurance check on the constant column after
/// unmasking; the error grows with the noise scale, so callers multiply by the row scale.
pub const QA_RELATIVE: f64 = 1e-9;

/// Values within this distance of 0 or 1 count as binary in the Appendix A attack when the
/// masked data carry full precision.
pub const BINARY_FULL_PRECISION: f64 = 1e-6;

/// A number printed to `decimals` places matches an exact value when they differ by at most half
/// a unit in the last printed place (plus a hair for binary representation of the printed value).
pub fn printed_precision(decimals: i32) -> f64 {
    0.5 * 10f64.powi(-decimals) * (1.0 + 1e-9)
}
