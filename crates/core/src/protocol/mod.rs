//! The TM² protocols, one type per party, each holding only what that party may know.
//!
//! * [`tm2`] — the modified protocol of Ding, Miao & Wu (2020) §2 (the default: Gaussian
//!   padding, orthogonal right mask `B`, left masks keeping `1ₙ` fixed) and the first method of
//!   Wu, Chen, Burr & Zhang (2017) §3.1 (invertible `B₁`, quality-assurance column, partial
//!   masking). They share the parties [`tm2::Participant`], [`tm2::MaskingServiceProvider`] and
//!   [`tm2::DataCollector`]; cohorts are supported throughout.
//! * [`second`] — the second method of seed 003 §3.3–3.4 (row operator `A₀`, block-diagonal
//!   `B₁`, `B₂` keeping response and treatment), and its combined release.
//! * [`collusion`] — the collusion-resistant extension of seed 000 §3.5 (additive shares to `K₁`
//!   right-masking providers, `K₂` left-masking providers).
//! * [`design`] — which designs are safe (`p₁ < n ≤ p`, Appendix C noise bound) and the
//!   condition (3.5) margin; [`qa`] — the collectors' quality-assurance checks.
//! * [`simulation`] — every party in one process, for the command line and the classroom.

pub mod accuracy;
pub mod design;
pub mod qa;

pub mod tm2;

pub mod collusion;
pub mod second;
pub mod share_handover;

pub mod simulation;

use crate::key::KeyError;
use crate::mask::MaskError;
use crate::scaling::ScalingError;

pub use design::{DesignError, DesignParameters, DesignReport, NoiseBound, Strictness};
pub use qa::QaReport;

/// Errors of the protocols. Each message is one line naming what is wrong and where.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProtocolError {
    /// An unsafe or invalid design.
    #[error(transparent)]
    Design(#[from] DesignError),
    /// A mask could not be built or applied.
    #[error(transparent)]
    Mask(#[from] MaskError),
    /// A key problem (e.g. MATLAB reproduction asked for with a non-teaching key).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A declared range is unusable or an answer lies outside its declared range.
    #[error(transparent)]
    Scaling(#[from] ScalingError),
    /// A record of the wrong length.
    #[error("record {record} has {found} values but the survey defines {expected}")]
    RecordLength {
        /// 0-based record index within its batch.
        record: usize,
        /// Values the survey defines.
        expected: usize,
        /// Values received.
        found: usize,
    },
    /// NaN or infinity where a number is required.
    #[error("record {record}, value {column} is not a finite number ({value})")]
    NonFinite {
        /// 0-based record (row) index.
        record: usize,
        /// 0-based column index.
        column: usize,
        /// The offending value.
        value: f64,
    },
    /// The collector's quality-assurance check failed: the data were not transformed as agreed.
    #[error(
        "quality-assurance check failed: the constant column should be {constant} after unmasking \
         but record {record} is off by {deviation:.3e} (tolerance {tolerance:.3e}); the upload or \
         the provider's mask was altered, nothing is released"
    )]
    QaFailed {
        /// The agreed constant `c`.
        constant: f64,
        /// Largest deviation found.
        deviation: f64,
        /// Allowed deviation.
        tolerance: f64,
        /// 0-based record with the largest deviation.
        record: usize,
    },
    /// A batch whose size does not match what the protocol step expects.
    #[error("{what}: expected {expected}, got {found}")]
    Shape {
        /// Which batch.
        what: &'static str,
        /// Expected extent.
        expected: usize,
        /// Actual extent.
        found: usize,
    },
    /// A parameter outside its domain.
    #[error("invalid protocol parameter: {what}")]
    InvalidParameter {
        /// What is wrong and what is allowed.
        what: String,
    },
}

/// Reject NaN and infinities, naming the first offending cell.
pub(crate) fn require_finite(m: &nalgebra::DMatrix<f64>) -> Result<(), ProtocolError> {
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let value = m[(i, j)];
            if !value.is_finite() {
                return Err(ProtocolError::NonFinite {
                    record: i,
                    column: j,
                    value,
                });
            }
        }
    }
    Ok(())
}
