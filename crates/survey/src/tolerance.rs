//! The tolerances of this crate's tests, named once (the masking tolerances themselves are
//! `orthomask_core::tolerance`'s).

/// Numbers worked out by hand from small integers and simple fractions (codings, declared
/// maxima, midpoints): only the last bit of an `f64` may differ.
pub const HAND_COMPUTED: f64 = 1e-12;

/// Absolute accuracy with which a device's upload, unmasked with its `B_k`, gives back the padded
/// record. The record carries the QA constant 888 and padding of σ ≈ 10³ over `p` ≈ 500
/// coordinates, so its norm is about 2·10⁴; a Householder stream is backward stable to a few
/// `p·ε_mach` relative, about 10⁻¹¹ here, and 10⁻⁹ leaves two orders to spare.
pub const RECORD_ROUND_TRIP: f64 = 1e-9;

/// A masked value "shows" an answer when it lies this close to it; every uploaded value must lie
/// farther from every raw answer (the masks move values by amounts of the noise scale, 10²–10³).
pub const SHOWS_ANSWER: f64 = 1e-6;
