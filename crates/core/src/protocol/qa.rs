//! Quality assurance: did every party apply the agreed transformation?
//!
//! Seed 003 §3.1: each record carries a column of a constant `c`; after the collector removes
//! `B`, the column of `A₂X` must equal `c·1ₙ` because `A₂` keeps `1ₙ` fixed. Seed 003 Remark 4
//! (second method): a row of constants `c` rides along with the noise rows, and after removing `A₀`
//! it must read `c·1ᵀ` because the provider's `B₁` satisfies `1ᵀB₁ = 1ᵀ`.
//!
//! Exact arithmetic would give equality; floating point leaves an error proportional to the
//! magnitude of what was unmasked, so the tolerance is
//! [`QA_RELATIVE`](crate::tolerance::QA_RELATIVE) `× (|c| + scale)` with `scale` the largest
//! row norm of the masked block.

use super::ProtocolError;
use crate::tolerance::QA_RELATIVE;

/// Outcome of a quality-assurance check.
#[derive(Clone, Debug, PartialEq)]
pub struct QaReport {
    /// The agreed constant `c`.
    pub constant: f64,
    /// Largest `|value − c|` observed.
    pub max_deviation: f64,
    /// Allowed deviation.
    pub tolerance: f64,
    /// 0-based index of the value with the largest deviation.
    pub worst: usize,
}

impl QaReport {
    /// Whether every value matched `c` within the tolerance.
    pub fn passed(&self) -> bool {
        self.max_deviation <= self.tolerance
    }

    /// The report as an error when it failed.
    ///
    /// # Errors
    /// [`ProtocolError::QaFailed`] when the check did not pass.
    pub fn require_pass(self) -> Result<Self, ProtocolError> {
        if self.passed() {
            Ok(self)
        } else {
            Err(ProtocolError::QaFailed {
                constant: self.constant,
                deviation: self.max_deviation,
                tolerance: self.tolerance,
                record: self.worst,
            })
        }
    }

    /// Combine reports of several cohorts or records into the worst one.
    pub fn worst_of(reports: &[QaReport]) -> Option<QaReport> {
        reports
            .iter()
            .max_by(|a, b| {
                (a.max_deviation / a.tolerance).total_cmp(&(b.max_deviation / b.tolerance))
            })
            .cloned()
    }
}

/// Check that every value equals `constant`, with tolerance scaled by `scale`.
pub fn check_constant<'a>(
    values: impl IntoIterator<Item = &'a f64>,
    constant: f64,
    scale: f64,
) -> QaReport {
    let tolerance = QA_RELATIVE * (constant.abs() + scale.abs());
    let (worst, max_deviation) = values
        .into_iter()
        .map(|v| {
            if v.is_finite() {
                (v - constant).abs()
            } else {
                f64::INFINITY
            }
        })
        .enumerate()
        .fold(
            (0, 0.0),
            |(wi, wd), (i, d)| if d > wd { (i, d) } else { (wi, wd) },
        );
    QaReport {
        constant,
        max_deviation,
        tolerance,
        worst,
    }
}

/// Largest Euclidean norm of a row of `m`: the scale of rounding errors when `m` is unmasked.
pub fn max_row_norm(m: &nalgebra::DMatrix<f64>) -> f64 {
    m.row_iter().map(|r| r.norm()).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_and_fails_by_hand() {
        let ok = check_constant(&[888.0, 888.0 + 1e-10, 888.0], 888.0, 1000.0);
        assert!(ok.passed());
        let bad = check_constant(&[888.0, 888.5, 888.0], 888.0, 1000.0);
        assert!(!bad.passed());
        assert_eq!(bad.worst, 1);
        assert!(matches!(
            bad.require_pass(),
            Err(ProtocolError::QaFailed { record: 1, .. })
        ));
        let nan = check_constant(&[888.0, f64::NAN], 888.0, 1.0);
        assert!(!nan.passed());
    }
}
