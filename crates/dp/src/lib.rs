//! # orthomask-dp
//!
//! Noise calibration for (ε, δ)-differential privacy with and without orthogonal matrix
//! masking, after Ding, Wu, Miao & Chen, *Reducing Noise Level in Differential Privacy through
//! Matrix Masking* (seed 004 of this project). Given a privacy budget `(ε, δ)`, the number `n`
//! of records masked together and the number `p` of variables, it computes the standard
//! deviation σ of the Gaussian noise each participant must add to their record (scaled to
//! `[−1, 1]^p`):
//!
//! * setting (A), noise only (`Y = X + C`): necessary (11) and sufficient (12) levels;
//! * setting (B), noise then a Haar-random orthogonal mask (`Y = A(X + C)`, what TM² releases):
//!   the sufficient level σ₀ of (13) and its explicit relaxation (14), also for block-diagonal
//!   masks (§4).
//!
//! [`calibration::Calibration`] puts them side by side as in the paper's Table 1, which the
//! integration test `tests/table_1.rs` reproduces entry by entry.
//!
//! The crate is I/O-free (no files, network or serialisation), draws no random numbers (the
//! caller adds the noise with its own generator) and compiles for `wasm32-unknown-unknown`.
//!
//! ## The non-centrality convention
//! Theorem 3.4 writes the quantile as `γ_{δ; 2(n−p), p/σ²}`; Lemmas A.2/A.3 write a parameter
//! `ν` whose square enters the mean. We use the standard `λ = Σ μᵢ²` (mean `df + λ`, SciPy's
//! `nc`, R's `ncp`) with `λ = p/σ²`, because that is what the proof of Lemma 5.3 derives: `Ñ`,
//! "the expectation of the sum of squares" of unit-variance normals, is at most
//! `‖X₁‖²/σ² ≤ p/σ²`. Table 1 confirms that the non-centrality shrinks with σ: reading the
//! third subscript as a fixed `√p` or `p` (as in Corollary 3.5's proof and Lemma A.3) misses
//! 14 and 16 of its 36 σ₀ entries. It cannot tell finer readings apart: at the table's σ₀ the
//! non-centrality is at most 0.14, and `λ = p/σ²`, `λ = (p/σ²)²`, `λ = 2p/σ²` and even `λ = 0`
//! all reproduce every printed entry (checked with SciPy; see `tests/table_1.rs`).
//!
//! ## The mechanism TM² runs
//! Seed 004's setting (B) needs masks Haar on all of `O(n)` and neighbours at distance
//! `‖Δ‖ ≤ 1`; TM²'s masks keep `1ₙ` fixed (releasing the noisy column sums) and its neighbours
//! differ by a whole record. [`device`] derives and calibrates the guarantee for that mechanism
//! under the relation [`device::NEIGHBOUR_RELATION`] (one record replaced by any valid record),
//! composing the exact Gaussian mechanism of the sums ([`gaussian_mechanism`]) with setting (B)
//! on the complement of `1ₙ` for a changed row of any size ([`masked_complement`]).
//! [`Calibration`] keeps the paper's own setting (Table 1).
//!
//! Read in this order: [`tolerance`], [`params`], [`ncx2`], [`setting_a`], [`setting_b`],
//! [`calibration`], [`gaussian_mechanism`], [`masked_complement`], [`device`].

#![warn(missing_docs)]

pub mod tolerance;

pub mod params;

mod root;

pub mod ncx2;

pub mod setting_a;
pub mod setting_b;

pub mod calibration;

pub mod gaussian_mechanism;
pub mod masked_complement;

pub mod device;

pub use calibration::{Calibration, CalibrationError, CalibrationInput};
pub use device::{
    BudgetSplit, CohortMechanism, DeviceCalibration, DeviceDpError, NEIGHBOUR_RELATION,
    NEIGHBOUR_RELATION_DESCRIPTION,
};
pub use gaussian_mechanism::{
    GaussianMechanismError, gaussian_mechanism_delta, gaussian_mechanism_epsilon,
    gaussian_mechanism_sigma,
};
pub use masked_complement::{ChangedRow, LemmaBounds, MaskedComplement};
pub use ncx2::{NcChiSquaredError, NonCentralChiSquared};
pub use params::ParameterError;
pub use setting_a::{ExplicitBounds, NoiseOnly, upper_normal_quantile};
pub use setting_b::{NoiseThenMask, SettingBError};
