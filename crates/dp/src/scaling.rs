//! Participant-side scaling of a record to `[−1, 1]^p` before noise is added, and back.
//!
//! # Why
//! Every bound of seed 004 assumes the raw entries satisfy `|x_ij| ≤ 1` (eq. (6)); the proof
//! of Lemma 5.3 uses it through `‖X₁‖² ≤ p`. Real survey variables have their own units, so a
//! participant maps each variable from its declared range `[lo, hi]` to `[−1, 1]`, adds
//! `N(0, σ²)` noise with σ from [`crate::calibration::Calibration`], and the analyst maps the
//! released (noisy, masked, unmasked) values back with [`RecordScaler::unscale`].
//!
//! # Formula
//! `scale: x ↦ 2(x − lo)/(hi − lo) − 1`, `unscale: y ↦ lo + (y + 1)(hi − lo)/2`.
//! The map is affine, so linear-model statistics computed on scaled data transform back
//! exactly; noise of standard deviation σ on the scaled scale is `σ·(hi − lo)/2` in the
//! variable's own units.
//!
//! # Caveat: what a neighbour is
//! Seed 004 protects neighbours that differ by `‖Δ‖ ≤ 1` in one row (Definition 2.1). Two
//! records inside `[−1, 1]^p` can be up to `2√p` apart, so σ from (11)–(14) protects a
//! participant against changes of L₂ size 1 on the scaled scale, not against replacing the
//! whole record; for that, setting (A) needs σ multiplied by `2√p` (per-pair bound (10) with
//! `‖Δ‖ = 2√p`, [`crate::setting_a::NoiseOnly::sufficient_sigma_for_pair`]), and seed 004 gives
//! no setting-(B) bound beyond `‖Δ‖ ≤ 1`.
//!
//! Values exactly at the ends map exactly to `−1` and `1`, and every value inside the declared
//! range maps inside `[−1, 1]` in floating point too (rounding is monotone), so (6) holds
//! exactly, not just approximately.

/// Errors of range scaling.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScalingError {
    /// A declared range is empty, reversed, a single point or not finite.
    #[error(
        "variable {variable}: declared range [{lo}, {hi}] is unusable; it needs finite lo < hi \
         with a finite width hi − lo (declare the true bounds of the variable)"
    )]
    DegenerateRange {
        /// Zero-based index of the variable.
        variable: usize,
        /// Declared lower end.
        lo: f64,
        /// Declared upper end.
        hi: f64,
    },
    /// A value lies outside its declared range (or is NaN).
    #[error(
        "variable {variable}: value {value} lies outside its declared range [{lo}, {hi}]; \
         fix the value or widen the declared range (clamping silently would change the data)"
    )]
    OutOfRange {
        /// Zero-based index of the variable.
        variable: usize,
        /// The offending value.
        value: f64,
        /// Declared lower end.
        lo: f64,
        /// Declared upper end.
        hi: f64,
    },
    /// A scaled value to map back is not finite.
    #[error("variable {variable}: scaled value {value} is not finite")]
    NotFinite {
        /// Zero-based index of the variable.
        variable: usize,
        /// The offending value.
        value: f64,
    },
    /// The record has a different number of variables than ranges were declared.
    #[error("record has {found} values but {expected} variable ranges were declared")]
    LengthMismatch {
        /// Number of declared ranges.
        expected: usize,
        /// Length of the record.
        found: usize,
    },
}

/// The declared range `[lo, hi]` of one variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariableRange {
    lo: f64,
    hi: f64,
}

impl VariableRange {
    /// Validate `lo < hi`, both finite with finite width. `variable` only labels errors.
    ///
    /// # Errors
    /// [`ScalingError::DegenerateRange`] otherwise.
    pub fn new(variable: usize, lo: f64, hi: f64) -> Result<Self, ScalingError> {
        if lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite() {
            Ok(Self { lo, hi })
        } else {
            Err(ScalingError::DegenerateRange { variable, lo, hi })
        }
    }

    /// Lower end `lo`.
    pub fn lo(&self) -> f64 {
        self.lo
    }

    /// Upper end `hi`.
    pub fn hi(&self) -> f64 {
        self.hi
    }

    /// Width `hi − lo`.
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// Maps records between their declared per-variable ranges and `[−1, 1]^p`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordScaler {
    ranges: Vec<VariableRange>,
}

impl RecordScaler {
    /// Build from `(lo, hi)` pairs, one per variable, in record order.
    ///
    /// # Errors
    /// [`ScalingError::DegenerateRange`] naming the first unusable range.
    pub fn new(ranges: &[(f64, f64)]) -> Result<Self, ScalingError> {
        let ranges = ranges
            .iter()
            .enumerate()
            .map(|(j, &(lo, hi))| VariableRange::new(j, lo, hi))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { ranges })
    }

    /// The declared ranges, in record order.
    pub fn ranges(&self) -> &[VariableRange] {
        &self.ranges
    }

    /// Number of variables `p`.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether no variable was declared.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Scale a record: `x_j ↦ 2(x_j − lo_j)/(hi_j − lo_j) − 1 ∈ [−1, 1]`.
    ///
    /// Hand check: range `[10, 20]` maps 10 ↦ −1, 12.5 ↦ −0.5, 15 ↦ 0, 20 ↦ 1.
    ///
    /// # Errors
    /// [`ScalingError::LengthMismatch`] for a record of the wrong length;
    /// [`ScalingError::OutOfRange`] for a value outside its declared range or NaN (never
    /// clamped: clamping would silently change a participant's answer).
    pub fn scale(&self, record: &[f64]) -> Result<Vec<f64>, ScalingError> {
        self.check_len(record)?;
        self.ranges
            .iter()
            .zip(record)
            .enumerate()
            .map(|(variable, (r, &value))| {
                if value >= r.lo && value <= r.hi {
                    Ok(2.0 * ((value - r.lo) / r.width()) - 1.0)
                } else {
                    Err(ScalingError::OutOfRange {
                        variable,
                        value,
                        lo: r.lo,
                        hi: r.hi,
                    })
                }
            })
            .collect()
    }

    /// Map scaled values back: `y_j ↦ lo_j + (y_j + 1)(hi_j − lo_j)/2`.
    ///
    /// Values outside `[−1, 1]` are accepted — after noise they are expected — and map
    /// outside `[lo, hi]` accordingly.
    ///
    /// # Errors
    /// [`ScalingError::LengthMismatch`] for a record of the wrong length;
    /// [`ScalingError::NotFinite`] for an infinite or NaN value.
    pub fn unscale(&self, scaled: &[f64]) -> Result<Vec<f64>, ScalingError> {
        self.check_len(scaled)?;
        self.ranges
            .iter()
            .zip(scaled)
            .enumerate()
            .map(|(variable, (r, &value))| {
                if value.is_finite() {
                    Ok(r.lo + (value + 1.0) * 0.5 * r.width())
                } else {
                    Err(ScalingError::NotFinite { variable, value })
                }
            })
            .collect()
    }

    fn check_len(&self, record: &[f64]) -> Result<(), ScalingError> {
        if record.len() == self.ranges.len() {
            Ok(())
        } else {
            Err(ScalingError::LengthMismatch {
                expected: self.ranges.len(),
                found: record.len(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ROUND_TRIP;

    /// Range `[10, 20]`: 10 ↦ −1, 12.5 ↦ −0.5, 15 ↦ 0, 20 ↦ 1 (all exact in binary).
    /// Range `[−3, 1]`: −3 ↦ −1, −1 ↦ 0, 1 ↦ 1.
    #[test]
    fn hand_solvable_scaling() {
        let s = RecordScaler::new(&[(10.0, 20.0), (-3.0, 1.0)]).unwrap();
        let cases = [
            ([10.0, -3.0], [-1.0, -1.0]),
            ([12.5, -1.0], [-0.5, 0.0]),
            ([15.0, 1.0], [0.0, 1.0]),
            ([20.0, -2.0], [1.0, -0.5]),
        ];
        for (x, want) in cases {
            let got = s.scale(&x).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < ROUND_TRIP, "{x:?} ↦ {got:?}, want {want:?}");
            }
        }
    }

    /// `unscale ∘ scale = id` and scaled values stay inside `[−1, 1]` exactly, even for
    /// awkward ranges.
    #[test]
    fn round_trip_and_bound() {
        let ranges = [(0.1, 0.7), (-1e6, 3.0), (17.0, 17.000_001), (-5.5, -5.25)];
        let s = RecordScaler::new(&ranges).unwrap();
        for k in 0..=100 {
            let t = f64::from(k) / 100.0;
            let x: Vec<f64> = ranges.iter().map(|&(lo, hi)| lo + t * (hi - lo)).collect();
            let x: Vec<f64> = x
                .iter()
                .zip(&ranges)
                .map(|(v, &(lo, hi))| v.clamp(lo, hi))
                .collect();
            let y = s.scale(&x).unwrap();
            assert!(y.iter().all(|v| (-1.0..=1.0).contains(v)), "{y:?}");
            let back = s.unscale(&y).unwrap();
            for ((b, v), &(lo, hi)) in back.iter().zip(&x).zip(&ranges) {
                assert!((b - v).abs() <= ROUND_TRIP * (hi - lo), "{b} vs {v}");
            }
        }
    }

    /// Noisy values outside `[−1, 1]` map back outside the range, linearly: y = 3 on [0, 10]
    /// is 0 + 4·10/2 = 20.
    #[test]
    fn unscale_accepts_noisy_values() {
        let s = RecordScaler::new(&[(0.0, 10.0)]).unwrap();
        let back = s.unscale(&[3.0]).unwrap();
        assert!((back[0] - 20.0).abs() < ROUND_TRIP * 10.0);
    }

    #[test]
    fn errors_name_the_variable_and_the_problem() {
        assert_eq!(
            RecordScaler::new(&[(0.0, 1.0), (2.0, 2.0)]),
            Err(ScalingError::DegenerateRange {
                variable: 1,
                lo: 2.0,
                hi: 2.0
            })
        );
        assert!(RecordScaler::new(&[(1.0, 0.0)]).is_err());
        assert!(RecordScaler::new(&[(f64::NEG_INFINITY, 0.0)]).is_err());
        assert!(RecordScaler::new(&[(-f64::MAX, f64::MAX)]).is_err());
        let s = RecordScaler::new(&[(0.0, 1.0), (0.0, 5.0)]).unwrap();
        let err = s.scale(&[0.5, 5.5]).unwrap_err();
        assert!(matches!(err, ScalingError::OutOfRange { variable: 1, .. }));
        assert!(err.to_string().contains("widen the declared range"));
        assert!(matches!(
            s.scale(&[0.5, f64::NAN]),
            Err(ScalingError::OutOfRange { variable: 1, .. })
        ));
        assert_eq!(
            s.scale(&[0.5]),
            Err(ScalingError::LengthMismatch {
                expected: 2,
                found: 1
            })
        );
        assert!(matches!(
            s.unscale(&[0.0, f64::INFINITY]),
            Err(ScalingError::NotFinite { variable: 1, .. })
        ));
    }
}
