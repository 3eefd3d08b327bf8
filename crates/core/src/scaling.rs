//! Affine per-column scaling between declared ranges and `[−1, 1]`, and back.
//!
//! # Why
//! Every bound of Ding, Wu, Miao & Chen (seed 004) assumes raw entries with `|x_ij| ≤ 1`
//! (eq. (6)); the proof of its Lemma 5.3 uses it through `‖X₁‖² ≤ p`. Survey variables have their
//! own units, so a device maps each answer from its declared range `[lo, hi]` to `[−1, 1]` before
//! noise is calibrated on that scale ([`DeviceDp`](crate::protocol::tm2::DeviceDp)), and whoever
//! holds the released values maps them back. The same map, applied to every answer column, puts
//! columns of very different magnitudes on one scale before masking.
//!
//! # Formula (seed 004, eq. (6))
//! For column `j` with declared range `[lo_j, hi_j]`, half-width `h_j = (hi_j − lo_j)/2` and
//! centre `c_j = (lo_j + hi_j)/2`:
//!
//! `scale:   x ↦ 2(x − lo_j)/(hi_j − lo_j) − 1`    (`= (x − c_j)/h_j`),
//! `unscale: y ↦ lo_j + (y + 1)(hi_j − lo_j)/2`    (`= c_j + h_j·y`).
//!
//! Values exactly at the ends map exactly to `−1` and `1`, and every value inside the declared
//! range maps inside `[−1, 1]` in floating point too (each step is monotone under rounding), so
//! (6) holds exactly, not just approximately. Noise of standard deviation σ on the scaled scale is
//! `σ·h_j` in the column's own units ([`ColumnRange::half_width`]).
//!
//! # Whole columns commute with the left masks
//! On an `n × p` block the map is `X ↦ (X − 1ₙcᵀ)H⁻¹` with `H = diag(h)`. A left mask `A` with
//! `A·1ₙ = 1ₙ` (every left mask of the protocols) satisfies
//! `A(X − 1ₙcᵀ)H⁻¹ = (AX − 1ₙcᵀ)H⁻¹`, so scaling the columns on the devices and unscaling the
//! collector's `A·(scaled X)` gives exactly `A·X`: `XᵀX` and the column means of the release are
//! those of the raw answers (tested in `scaling_commutes_with_masks_keeping_ones_fixed`).
//!
//! # What a neighbour is
//! Seed 004 protects neighbours that differ by `‖Δ‖ ≤ 1` in one row (its Definition 2.1). Two
//! records inside `[−1, 1]^p` can be up to `2√p` apart; the differential-privacy calibration that
//! accounts for this lives in the `orthomask-dp` crate, not here.

use nalgebra::DMatrix;

/// Errors of range scaling; each names the column (and the row, for whole columns).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScalingError {
    /// A declared range is empty, reversed, a single point or not finite.
    #[error(
        "column {column}: declared range [{lo}, {hi}] is unusable; it needs finite lo < hi with a \
         finite width hi - lo (declare the true bounds of the variable)"
    )]
    DegenerateRange {
        /// Zero-based column index.
        column: usize,
        /// Declared lower end.
        lo: f64,
        /// Declared upper end.
        hi: f64,
    },
    /// A value lies outside its declared range (or is NaN).
    #[error(
        "{}column {column}: value {value} lies outside its declared range [{lo}, {hi}]; fix the \
         value or widen the declared range (clamping silently would change the data)",
        row_prefix(*row)
    )]
    OutOfRange {
        /// Zero-based row index when a whole block was scaled, `None` for a single record.
        row: Option<usize>,
        /// Zero-based column index.
        column: usize,
        /// The offending value.
        value: f64,
        /// Declared lower end.
        lo: f64,
        /// Declared upper end.
        hi: f64,
    },
    /// A scaled value to map back is not finite.
    #[error("{}column {column}: scaled value {value} is not finite", row_prefix(*row))]
    NotFinite {
        /// Zero-based row index when a whole block was unscaled, `None` for a single record.
        row: Option<usize>,
        /// Zero-based column index.
        column: usize,
        /// The offending value.
        value: f64,
    },
    /// A record or block has a different number of columns than ranges were declared.
    #[error("{found} values per record but {expected} column ranges were declared")]
    Width {
        /// Number of declared ranges.
        expected: usize,
        /// Columns received.
        found: usize,
    },
}

fn row_prefix(row: Option<usize>) -> String {
    row.map_or_else(String::new, |r| format!("row {r}, "))
}

/// The declared range `[lo, hi]` of one column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnRange {
    lo: f64,
    hi: f64,
}

impl ColumnRange {
    /// Validate `lo < hi`, both finite with a finite width. `column` only labels the error.
    ///
    /// # Errors
    /// [`ScalingError::DegenerateRange`] otherwise.
    pub fn new(column: usize, lo: f64, hi: f64) -> Result<Self, ScalingError> {
        if lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite() {
            Ok(Self { lo, hi })
        } else {
            Err(ScalingError::DegenerateRange { column, lo, hi })
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

    /// Half-width `h = (hi − lo)/2`: one unit on the `[−1, 1]` scale in the column's own units.
    pub fn half_width(&self) -> f64 {
        0.5 * self.width()
    }

    /// Whether `value` lies in `[lo, hi]` (false for NaN).
    pub fn contains(&self, value: f64) -> bool {
        value >= self.lo && value <= self.hi
    }

    /// `2(x − lo)/(hi − lo) − 1`, unchecked.
    fn scale(&self, x: f64) -> f64 {
        2.0 * ((x - self.lo) / self.width()) - 1.0
    }

    /// `lo + (y + 1)(hi − lo)/2`, unchecked.
    fn unscale(&self, y: f64) -> f64 {
        self.lo + (y + 1.0) * self.half_width()
    }
}

/// Maps records (rows) and whole columns between their declared ranges and `[−1, 1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeScaler {
    ranges: Vec<ColumnRange>,
}

impl RangeScaler {
    /// Build from `(lo, hi)` pairs, one per column, in column order.
    ///
    /// # Errors
    /// [`ScalingError::DegenerateRange`] naming the first unusable range.
    pub fn new(ranges: &[(f64, f64)]) -> Result<Self, ScalingError> {
        let ranges = ranges
            .iter()
            .enumerate()
            .map(|(j, &(lo, hi))| ColumnRange::new(j, lo, hi))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { ranges })
    }

    /// The declared ranges, in column order.
    pub fn ranges(&self) -> &[ColumnRange] {
        &self.ranges
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether no column was declared.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Check that every value of a record lies in its declared range, without scaling.
    ///
    /// # Errors
    /// As [`scale_row`](Self::scale_row).
    pub fn check_row(&self, record: &[f64]) -> Result<(), ScalingError> {
        self.check_width(record.len())?;
        self.ranges
            .iter()
            .zip(record)
            .enumerate()
            .try_for_each(|(column, (r, &value))| check_value(r, None, column, value))
    }

    /// Scale one record: `x_j ↦ 2(x_j − lo_j)/(hi_j − lo_j) − 1 ∈ [−1, 1]`.
    ///
    /// Hand check: range `[10, 20]` maps 10 ↦ −1, 12.5 ↦ −0.5, 15 ↦ 0, 20 ↦ 1.
    ///
    /// # Errors
    /// [`ScalingError::Width`] for a record of the wrong length; [`ScalingError::OutOfRange`] for
    /// a value outside its declared range or NaN (never clamped: clamping would silently change a
    /// participant's answer).
    pub fn scale_row(&self, record: &[f64]) -> Result<Vec<f64>, ScalingError> {
        self.check_row(record)?;
        Ok(self
            .ranges
            .iter()
            .zip(record)
            .map(|(r, &x)| r.scale(x))
            .collect())
    }

    /// Map one scaled record back: `y_j ↦ lo_j + (y_j + 1)(hi_j − lo_j)/2`.
    ///
    /// Values outside `[−1, 1]` are accepted — after noise or masking they are expected — and map
    /// outside `[lo, hi]` accordingly.
    ///
    /// # Errors
    /// [`ScalingError::Width`] for a record of the wrong length; [`ScalingError::NotFinite`] for
    /// an infinite or NaN value.
    pub fn unscale_row(&self, scaled: &[f64]) -> Result<Vec<f64>, ScalingError> {
        self.check_width(scaled.len())?;
        self.ranges
            .iter()
            .zip(scaled)
            .enumerate()
            .map(|(column, (r, &y))| {
                if y.is_finite() {
                    Ok(r.unscale(y))
                } else {
                    Err(ScalingError::NotFinite {
                        row: None,
                        column,
                        value: y,
                    })
                }
            })
            .collect()
    }

    /// Scale every column of an `n × p` block (rows are records), each by its own range.
    ///
    /// # Errors
    /// [`ScalingError::Width`] when the block does not have one column per range;
    /// [`ScalingError::OutOfRange`] naming the first offending row and column.
    pub fn scale_columns(&self, block: &DMatrix<f64>) -> Result<DMatrix<f64>, ScalingError> {
        self.check_width(block.ncols())?;
        let mut out = block.clone();
        for (column, (r, mut values)) in self.ranges.iter().zip(out.column_iter_mut()).enumerate() {
            for (row, x) in values.iter_mut().enumerate() {
                check_value(r, Some(row), column, *x)?;
                *x = r.scale(*x);
            }
        }
        Ok(out)
    }

    /// Map every column of a scaled `n × p` block back to its declared units.
    ///
    /// # Errors
    /// [`ScalingError::Width`] when the block does not have one column per range;
    /// [`ScalingError::NotFinite`] naming the first offending row and column.
    pub fn unscale_columns(&self, scaled: &DMatrix<f64>) -> Result<DMatrix<f64>, ScalingError> {
        self.check_width(scaled.ncols())?;
        let mut out = scaled.clone();
        for (column, (r, mut values)) in self.ranges.iter().zip(out.column_iter_mut()).enumerate() {
            for (row, y) in values.iter_mut().enumerate() {
                if !y.is_finite() {
                    return Err(ScalingError::NotFinite {
                        row: Some(row),
                        column,
                        value: *y,
                    });
                }
                *y = r.unscale(*y);
            }
        }
        Ok(out)
    }

    fn check_width(&self, found: usize) -> Result<(), ScalingError> {
        if found == self.ranges.len() {
            Ok(())
        } else {
            Err(ScalingError::Width {
                expected: self.ranges.len(),
                found,
            })
        }
    }
}

fn check_value(
    range: &ColumnRange,
    row: Option<usize>,
    column: usize,
    value: f64,
) -> Result<(), ScalingError> {
    if range.contains(value) {
        Ok(())
    } else {
        Err(ScalingError::OutOfRange {
            row,
            column,
            value,
            lo: range.lo,
            hi: range.hi,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::{FixedSubspaceHaar, Mask};
    use crate::tolerance::{CLEARLY_CHANGED, PRESERVED_STATISTICS, ROUND_TRIP};

    /// Range `[10, 20]`: 10 ↦ −1, 12.5 ↦ −0.5, 15 ↦ 0, 20 ↦ 1 (all exact in binary).
    /// Range `[−3, 1]`: −3 ↦ −1, −1 ↦ 0, 1 ↦ 1.
    #[test]
    fn hand_solvable_scaling() {
        let s = RangeScaler::new(&[(10.0, 20.0), (-3.0, 1.0)]).unwrap();
        let cases = [
            ([10.0, -3.0], [-1.0, -1.0]),
            ([12.5, -1.0], [-0.5, 0.0]),
            ([15.0, 1.0], [0.0, 1.0]),
            ([20.0, -2.0], [1.0, -0.5]),
        ];
        for (x, want) in cases {
            let got = s.scale_row(&x).unwrap();
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < ROUND_TRIP, "{x:?} ↦ {got:?}, want {want:?}");
            }
        }
        assert!((s.ranges()[0].half_width() - 5.0).abs() < ROUND_TRIP);
    }

    /// `unscale ∘ scale = id` and scaled values stay inside `[−1, 1]` exactly, even for awkward
    /// ranges; rows and whole columns give the same numbers.
    #[test]
    fn round_trip_and_bound() {
        let ranges = [(0.1, 0.7), (-1e6, 3.0), (17.0, 17.000_001), (-5.5, -5.25)];
        let s = RangeScaler::new(&ranges).unwrap();
        let block = DMatrix::from_fn(101, ranges.len(), |k, j| {
            let (lo, hi) = ranges[j];
            (lo + k as f64 / 100.0 * (hi - lo)).clamp(lo, hi)
        });
        let scaled = s.scale_columns(&block).unwrap();
        assert!(scaled.iter().all(|v| (-1.0..=1.0).contains(v)), "{scaled}");
        let back = s.unscale_columns(&scaled).unwrap();
        for (j, &(lo, hi)) in ranges.iter().enumerate() {
            let error = (back.column(j) - block.column(j)).amax();
            assert!(error <= ROUND_TRIP * (hi - lo), "column {j}: {error}");
        }
        for k in [0, 37, 100] {
            let row: Vec<f64> = block.row(k).iter().copied().collect();
            let by_row = s.scale_row(&row).unwrap();
            for (a, b) in by_row.iter().zip(scaled.row(k).iter()) {
                assert!((a - b).abs() <= ROUND_TRIP, "row {k}");
            }
            let unscaled = s.unscale_row(&by_row).unwrap();
            for (a, b) in unscaled.iter().zip(back.row(k).iter()) {
                assert!((a - b).abs() <= ROUND_TRIP * b.abs().max(1.0), "row {k}");
            }
        }
    }

    /// Noisy values outside `[−1, 1]` map back outside the range, linearly: y = 3 on [0, 10] is
    /// 0 + 4·10/2 = 20.
    #[test]
    fn unscale_accepts_noisy_values() {
        let s = RangeScaler::new(&[(0.0, 10.0)]).unwrap();
        assert!((s.unscale_row(&[3.0]).unwrap()[0] - 20.0).abs() < ROUND_TRIP * 10.0);
        let column = s
            .unscale_columns(&DMatrix::from_column_slice(2, 1, &[3.0, -3.0]))
            .unwrap();
        assert!((column[(0, 0)] - 20.0).abs() < ROUND_TRIP * 10.0);
        assert!((column[(1, 0)] + 10.0).abs() < ROUND_TRIP * 10.0);
    }

    /// The module documentation's claim: unscaling `A·scale(X)` gives `A·X` for a left mask with
    /// `A·1ₙ = 1ₙ`, so the release keeps `XᵀX` and the means. Also shown to fail without the
    /// fixed `1ₙ`: a mask that moves `1ₙ` does not commute with the affine map.
    #[test]
    fn scaling_commutes_with_masks_keeping_ones_fixed() {
        let n = 30;
        let ranges = [(0.0, 1.0), (-4e6, 3e6), (1e-3, 2e-3)];
        let s = RangeScaler::new(&ranges).unwrap();
        let x = DMatrix::from_fn(n, 3, |i, j| {
            let (lo, hi) = ranges[j];
            lo + ((i * 7 + j * 5) % 13) as f64 / 12.0 * (hi - lo)
        });
        let a = FixedSubspaceHaar::ones_fixed(n, Key::teaching(3).stream(StreamId::Scratch(0)))
            .unwrap();
        let mut masked_scaled = s.scale_columns(&x).unwrap();
        a.left_apply(&mut masked_scaled).unwrap();
        let release = s.unscale_columns(&masked_scaled).unwrap();
        let mut direct = x.clone();
        a.left_apply(&mut direct).unwrap();
        for (j, &(lo, hi)) in ranges.iter().enumerate() {
            let error = (release.column(j) - direct.column(j)).amax();
            assert!(
                error < PRESERVED_STATISTICS * (hi - lo),
                "column {j}: {error}"
            );
        }
        // Power: a mask that does not keep 1ₙ fixed breaks the identity visibly.
        let moving = FixedSubspaceHaar::keyed(
            &DMatrix::from_fn(n, 1, |i, _| i as f64 + 1.0),
            Key::teaching(3).stream(StreamId::Scratch(1)),
        )
        .unwrap();
        let mut wrong = s.scale_columns(&x).unwrap();
        moving.left_apply(&mut wrong).unwrap();
        let wrong = s.unscale_columns(&wrong).unwrap();
        let mut direct = x.clone();
        moving.left_apply(&mut direct).unwrap();
        assert!((wrong.column(0) - direct.column(0)).amax() > CLEARLY_CHANGED);
    }

    #[test]
    fn errors_name_the_column_and_the_problem() {
        assert_eq!(
            RangeScaler::new(&[(0.0, 1.0), (2.0, 2.0)]),
            Err(ScalingError::DegenerateRange {
                column: 1,
                lo: 2.0,
                hi: 2.0
            })
        );
        assert!(RangeScaler::new(&[(1.0, 0.0)]).is_err());
        assert!(RangeScaler::new(&[(f64::NEG_INFINITY, 0.0)]).is_err());
        assert!(RangeScaler::new(&[(-f64::MAX, f64::MAX)]).is_err());
        let s = RangeScaler::new(&[(0.0, 1.0), (0.0, 5.0)]).unwrap();
        let err = s.scale_row(&[0.5, 5.5]).unwrap_err();
        assert!(matches!(
            err,
            ScalingError::OutOfRange {
                row: None,
                column: 1,
                ..
            }
        ));
        assert!(err.to_string().starts_with("column 1: value 5.5"), "{err}");
        assert!(matches!(
            s.scale_row(&[0.5, f64::NAN]),
            Err(ScalingError::OutOfRange { column: 1, .. })
        ));
        assert_eq!(
            s.scale_row(&[0.5]),
            Err(ScalingError::Width {
                expected: 2,
                found: 1
            })
        );
        assert!(matches!(
            s.unscale_row(&[0.0, f64::INFINITY]),
            Err(ScalingError::NotFinite { column: 1, .. })
        ));
        let mut block = DMatrix::from_element(4, 2, 0.5);
        block[(3, 0)] = -0.25;
        let err = s.scale_columns(&block).unwrap_err();
        assert!(matches!(
            err,
            ScalingError::OutOfRange {
                row: Some(3),
                column: 0,
                ..
            }
        ));
        assert!(err.to_string().starts_with("row 3, column 0:"), "{err}");
        block[(3, 0)] = f64::NAN;
        assert!(matches!(
            s.unscale_columns(&block),
            Err(ScalingError::NotFinite {
                row: Some(3),
                column: 0,
                ..
            })
        ));
        assert!(matches!(
            s.scale_columns(&DMatrix::zeros(2, 3)),
            Err(ScalingError::Width {
                expected: 2,
                found: 3
            })
        ));
    }
}
