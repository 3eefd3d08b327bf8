//! Contingency tables from cross-products of (possibly masked) indicator columns.
//!
//! # Formula (seed 003 §2.1, Table 1; Remark 1)
//! For 0/1 columns `Z₁`, `Z₂` of length `n`: `Z₁ᵀZ₁ = c + d` (ones in `Z₁`), `Z₂ᵀZ₂ = b + d`,
//! `Z₁ᵀZ₂ = d`, hence `a = n − (c + d) − (b + d) + d`. An orthogonal release `A·Z` has the
//! same cross-products, `(AZ₁)ᵀ(AZ₂) = Z₁ᵀZ₂`, so the table — and every test built on it — is
//! the same for the masked columns, although their entries are no longer 0/1. This needs no
//! `A·1ₙ = 1ₙ`: for a 0/1 column `1ₙᵀZ = ZᵀZ`.
//!
//! A factor with `k` levels enters through indicator columns (Remark 1): either all `k` of
//! them ([`Factor::complete`]) or `k − 1`, the last level being "none of the others"
//! ([`Factor::with_reference`]; a binary column is the case `k = 2`, [`Factor::binary`]).
//! With explicit row levels `r_i`, column levels `c_j` and optional remainder levels `R`, `C`:
//!
//! * `N_ij = r_iᵀc_j`,
//! * `N_iC = r_iᵀr_i − Σ_j N_ij`, `N_Rj = c_jᵀc_j − Σ_i N_ij`,
//! * `N_RC = n − Σ (all other cells)`.
//!
//! Levels are listed explicit levels first, remainder last: a binary factor reads "1" then
//! "0", the layout of seed 003 Table 6 (LTP, "Yes" first), so the 2×2 measures of
//! [`association`](crate::association) compare the first row with the second.

use nalgebra::{DMatrix, DVector};

use crate::association::{Association, AssociationError};
use crate::tolerance::MAX_COUNT_ROUNDING;

/// Errors when building factors and tables.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContingencyError {
    /// Indicator columns of a factor, or the two factors, differ in length.
    #[error(
        "factor {factor:?} has {found} records but {expected} were expected; all indicator columns must come from the same release"
    )]
    LengthMismatch {
        /// Factor name.
        factor: String,
        /// Expected number of records.
        expected: usize,
        /// Records found.
        found: usize,
    },
    /// The number of level names differs from what the indicator columns need.
    #[error(
        "factor {factor:?} has {indicators} indicator columns but {levels} level names; give one name per indicator column"
    )]
    LevelCount {
        /// Factor name.
        factor: String,
        /// Indicator columns given.
        indicators: usize,
        /// Level names given.
        levels: usize,
    },
    /// Too few levels for a table.
    #[error(
        "factor {factor:?} has {levels} level(s); a contingency table needs at least 2 per factor"
    )]
    TooFewLevels {
        /// Factor name.
        factor: String,
        /// Levels the factor would have.
        levels: usize,
    },
    /// A level name repeats.
    #[error("factor {factor:?} names level {level:?} twice; level names must be unique")]
    DuplicateLevel {
        /// Factor name.
        factor: String,
        /// The repeated level.
        level: String,
    },
    /// A value is NaN or infinite.
    #[error(
        "factor {factor:?}, level {level:?}, record {row} (1-based) is not finite; remove missing records first"
    )]
    NonFinite {
        /// Factor name.
        factor: String,
        /// Level whose indicator column holds the value.
        level: String,
        /// 1-based record number.
        row: usize,
    },
    /// A cross-product count is too far from an integer (or negative).
    #[error(
        "cell ({row:?}, {column:?}) comes out as {value:.4}, not a count within ±{MAX_COUNT_ROUNDING}; the columns are not 0/1 indicators of the same records (or were released with too few decimals)"
    )]
    NotACount {
        /// Row level.
        row: String,
        /// Column level.
        column: String,
        /// The real-valued cell.
        value: f64,
    },
    /// The indicators of a complete factor do not add up to `n`.
    #[error(
        "the {levels} indicator columns of factor {factor:?} cover {covered:.3} of the {n} records; declare a reference level for the rest (Factor::with_reference) or check the indicators"
    )]
    IncompleteLevels {
        /// Factor name.
        factor: String,
        /// Number of levels.
        levels: usize,
        /// `Σ_j z_jᵀz_j`.
        covered: f64,
        /// Records.
        n: usize,
    },
}

/// A categorical variable represented by indicator columns (raw 0/1 or masked).
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    name: String,
    explicit_levels: Vec<String>,
    remainder: Option<String>,
    indicators: DMatrix<f64>,
}

impl Factor {
    /// A binary column: levels `"1"` (the column) and `"0"` (the rest), in that order.
    ///
    /// # Errors
    /// [`ContingencyError::NonFinite`].
    pub fn binary(name: &str, column: &[f64]) -> Result<Self, ContingencyError> {
        Self::with_reference(
            name,
            vec!["1".to_owned()],
            DMatrix::from_column_slice(column.len(), 1, column),
            "0",
        )
    }

    /// `k − 1` indicator columns (`n × (k − 1)`, one per named level) and a `reference` level
    /// standing for "none of them", listed last.
    ///
    /// # Errors
    /// [`ContingencyError::LevelCount`], [`ContingencyError::TooFewLevels`] (no indicator),
    /// [`ContingencyError::DuplicateLevel`], [`ContingencyError::NonFinite`].
    pub fn with_reference(
        name: &str,
        levels: Vec<String>,
        indicators: DMatrix<f64>,
        reference: &str,
    ) -> Result<Self, ContingencyError> {
        Self::build(name, levels, indicators, Some(reference.to_owned()))
    }

    /// All `k` indicator columns (`n × k`), one per named level; they must add up to `1ₙ` in the
    /// raw data (checked on the table through the total count).
    ///
    /// # Errors
    /// [`ContingencyError::LevelCount`], [`ContingencyError::TooFewLevels`] (`k < 2`),
    /// [`ContingencyError::DuplicateLevel`], [`ContingencyError::NonFinite`].
    pub fn complete(
        name: &str,
        levels: Vec<String>,
        indicators: DMatrix<f64>,
    ) -> Result<Self, ContingencyError> {
        Self::build(name, levels, indicators, None)
    }

    fn build(
        name: &str,
        levels: Vec<String>,
        indicators: DMatrix<f64>,
        remainder: Option<String>,
    ) -> Result<Self, ContingencyError> {
        let factor = || name.to_owned();
        if levels.len() != indicators.ncols() {
            return Err(ContingencyError::LevelCount {
                factor: factor(),
                indicators: indicators.ncols(),
                levels: levels.len(),
            });
        }
        let total = levels.len() + usize::from(remainder.is_some());
        if indicators.ncols() == 0 || total < 2 {
            return Err(ContingencyError::TooFewLevels {
                factor: factor(),
                levels: total,
            });
        }
        let all: Vec<&String> = levels.iter().chain(remainder.iter()).collect();
        for (k, level) in all.iter().enumerate() {
            if all[..k].contains(level) {
                return Err(ContingencyError::DuplicateLevel {
                    factor: factor(),
                    level: (*level).clone(),
                });
            }
        }
        for (j, column) in indicators.column_iter().enumerate() {
            if let Some(i) = column.iter().position(|v| !v.is_finite()) {
                return Err(ContingencyError::NonFinite {
                    factor: factor(),
                    level: levels[j].clone(),
                    row: i + 1,
                });
            }
        }
        Ok(Self {
            name: name.to_owned(),
            explicit_levels: levels,
            remainder,
            indicators,
        })
    }

    /// Factor name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All level names, explicit levels first and the reference level (if any) last.
    pub fn levels(&self) -> Vec<String> {
        self.explicit_levels
            .iter()
            .chain(self.remainder.iter())
            .cloned()
            .collect()
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.indicators.nrows()
    }

    /// The indicator columns (`n × explicit levels`).
    pub fn indicators(&self) -> &DMatrix<f64> {
        &self.indicators
    }
}

/// Whether the cross-product counts are rounded to integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountRounding {
    /// The indicator columns are declared 0/1 in the raw data: round every cell to the nearest
    /// integer and report the largest rounding residual.
    ToIntegers,
    /// Keep the real-valued cross-products (for weighted indicators, or to inspect them).
    Keep,
}

/// An `r × c` table of counts with its level names.
#[derive(Debug, Clone, PartialEq)]
pub struct ContingencyTable {
    row_factor: String,
    column_factor: String,
    row_levels: Vec<String>,
    column_levels: Vec<String>,
    counts: DMatrix<f64>,
    n: usize,
    rounding_residual: Option<f64>,
}

impl ContingencyTable {
    /// Cross-classify `rows` by `columns` using only cross-products of their indicator columns
    /// and `n` (see the module documentation for the formulas).
    ///
    /// # Errors
    /// [`ContingencyError::LengthMismatch`] when the factors have different `n`;
    /// [`ContingencyError::IncompleteLevels`] when a complete factor's indicators do not cover
    /// `n` records (within [`MAX_COUNT_ROUNDING`]); [`ContingencyError::NotACount`] when a cell
    /// is negative beyond [`MAX_COUNT_ROUNDING`] or, with [`CountRounding::ToIntegers`], further
    /// than that from an integer.
    pub fn new(
        rows: &Factor,
        columns: &Factor,
        rounding: CountRounding,
    ) -> Result<Self, ContingencyError> {
        let n = rows.n();
        if columns.n() != n {
            return Err(ContingencyError::LengthMismatch {
                factor: columns.name.clone(),
                expected: n,
                found: columns.n(),
            });
        }
        let (r, c) = (&rows.indicators, &columns.indicators);
        let cross = r.tr_mul(c);
        let row_self = self_products(r);
        let column_self = self_products(c);
        for (factor, products) in [(rows, &row_self), (columns, &column_self)] {
            if factor.remainder.is_none() {
                check_complete(factor, products.sum(), n)?;
            }
        }

        let (mr, mc) = (cross.nrows(), cross.ncols());
        let nr = mr + usize::from(rows.remainder.is_some());
        let nc = mc + usize::from(columns.remainder.is_some());
        let mut counts = DMatrix::zeros(nr, nc);
        counts.view_mut((0, 0), (mr, mc)).copy_from(&cross);
        if nc > mc {
            for i in 0..mr {
                counts[(i, mc)] = row_self[i] - cross.row(i).sum();
            }
        }
        if nr > mr {
            for j in 0..mc {
                counts[(mr, j)] = column_self[j] - cross.column(j).sum();
            }
        }
        if nr > mr && nc > mc {
            counts[(mr, mc)] = n as f64 - (counts.sum() - counts[(mr, mc)]);
        }

        let row_levels = rows.levels();
        let column_levels = columns.levels();
        let not_a_count = |i: usize, j: usize, value: f64| ContingencyError::NotACount {
            row: row_levels[i].clone(),
            column: column_levels[j].clone(),
            value,
        };
        let mut rounding_residual = None;
        for i in 0..nr {
            for j in 0..nc {
                let value = counts[(i, j)];
                if value < -MAX_COUNT_ROUNDING {
                    return Err(not_a_count(i, j, value));
                }
                if rounding == CountRounding::ToIntegers {
                    let residual = (value - value.round()).abs();
                    if residual > MAX_COUNT_ROUNDING {
                        return Err(not_a_count(i, j, value));
                    }
                    rounding_residual = Some(rounding_residual.unwrap_or(0.0f64).max(residual));
                    // A rounded count is a non-negative integer: a cell of −1e-13 becomes +0,
                    // never −0 (which would print as "-0").
                    let rounded = value.round();
                    counts[(i, j)] = if rounded <= 0.0 { 0.0 } else { rounded };
                }
            }
        }
        Ok(Self {
            row_factor: rows.name.clone(),
            column_factor: columns.name.clone(),
            row_levels,
            column_levels,
            counts,
            n,
            rounding_residual,
        })
    }

    /// The 2×2 table of two binary columns (seed 003 Table 1), rounded to integers: rows
    /// `z₁ = 1, 0`, columns `z₂ = 1, 0`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_binary_columns(
        row_name: &str,
        z1: &[f64],
        column_name: &str,
        z2: &[f64],
    ) -> Result<Self, ContingencyError> {
        Self::new(
            &Factor::binary(row_name, z1)?,
            &Factor::binary(column_name, z2)?,
            CountRounding::ToIntegers,
        )
    }

    /// The counts as integers when they were rounded ([`CountRounding::ToIntegers`]), rows in
    /// [`row_levels`](Self::row_levels) order; `None` for kept real-valued cross-products.
    /// Front ends print these (no decimals, no `-0`).
    pub fn integer_counts(&self) -> Option<Vec<Vec<u64>>> {
        self.rounding_residual?;
        // Rounded cells are exact non-negative integers (see `new`), so the casts are exact.
        Some(
            self.counts
                .row_iter()
                .map(|r| r.iter().map(|&v| v as u64).collect())
                .collect(),
        )
    }

    /// Row × column counts (`r × c`), rows in [`row_levels`](Self::row_levels) order.
    pub fn counts(&self) -> &DMatrix<f64> {
        &self.counts
    }

    /// Counts as nested rows, the JSON `table` layout.
    pub fn rows(&self) -> Vec<Vec<f64>> {
        self.counts
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect()
    }

    /// Name of the row factor.
    pub fn row_factor(&self) -> &str {
        &self.row_factor
    }

    /// Name of the column factor.
    pub fn column_factor(&self) -> &str {
        &self.column_factor
    }

    /// Row level names.
    pub fn row_levels(&self) -> &[String] {
        &self.row_levels
    }

    /// Column level names.
    pub fn column_levels(&self) -> &[String] {
        &self.column_levels
    }

    /// Row totals.
    pub fn row_totals(&self) -> DVector<f64> {
        DVector::from_iterator(self.counts.nrows(), self.counts.row_iter().map(|r| r.sum()))
    }

    /// Column totals.
    pub fn column_totals(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.counts.ncols(),
            self.counts.column_iter().map(|c| c.sum()),
        )
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// With [`CountRounding::ToIntegers`]: the largest `|count − round(count)|` over the cells,
    /// a measure of how exactly the release preserved the cross-products (about 1e-12 at full
    /// precision, 0.0281 for Group × MIF from the two-decimal Table 5 of seed 003). `None` when not rounded.
    pub fn rounding_residual(&self) -> Option<f64> {
        self.rounding_residual
    }

    /// χ² tests, odds ratio and relative risk of this table.
    ///
    /// # Errors
    /// See [`Association::new`].
    pub fn association(&self) -> Result<Association, AssociationError> {
        Association::new(&self.counts)
    }
}

/// `z_jᵀz_j` for every column.
fn self_products(z: &DMatrix<f64>) -> DVector<f64> {
    DVector::from_iterator(z.ncols(), z.column_iter().map(|c| c.norm_squared()))
}

fn check_complete(factor: &Factor, covered: f64, n: usize) -> Result<(), ContingencyError> {
    if (covered - n as f64).abs() > MAX_COUNT_ROUNDING {
        return Err(ContingencyError::IncompleteLevels {
            factor: factor.name.clone(),
            levels: factor.explicit_levels.len(),
            covered,
            n,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::INTEGER_COUNT_RESIDUAL;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|&s| s.to_owned()).collect()
    }

    /// By hand (Table 1 of seed 003): z₁ = (0,0,0,1,1,1,1), z₂ = (0,1,1,0,1,1,0):
    /// a = 1 (0,0), b = 2 (0,1), c = 2 (1,0), d = 2 (1,1). Rows "1","0": [[d, c], [b, a]].
    #[test]
    fn binary_columns_give_table_1() {
        let z1 = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let z2 = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let t = ContingencyTable::from_binary_columns("Z1", &z1, "Z2", &z2).unwrap();
        assert_eq!(t.rows(), vec![vec![2.0, 2.0], vec![2.0, 1.0]]);
        assert_eq!(t.row_levels(), ["1", "0"]);
        assert_eq!(t.column_levels(), ["1", "0"]);
        assert_eq!(t.row_totals().as_slice(), [4.0, 3.0]);
        assert_eq!(t.column_totals().as_slice(), [4.0, 3.0]);
        assert_eq!((t.n(), t.row_factor(), t.column_factor()), (7, "Z1", "Z2"));
        assert_eq!(t.rounding_residual(), Some(0.0));
        assert_eq!(t.integer_counts(), Some(vec![vec![2, 2], vec![2, 1]]));
    }

    /// Masked cross-products come out a hair off the integers, and a zero cell may come out
    /// negative: with z₁ = (1, 0, 0, 1) and z₂ = (1 + e)·1₄, e = 1e-14, the remainder cell is
    /// `4 − z₁ᵀz₁ − z₂ᵀz₂ + z₁ᵀz₂ = 4 − 2 − 4(1 + e)² + 2(1 + e) ≈ −6e`. Rounding gives exact
    /// integers (+0, never −0) and reports the largest residual.
    #[test]
    fn rounded_counts_are_exact_integers() {
        let z1 = [1.0, 0.0, 0.0, 1.0];
        let z2 = [1.0 + 1e-14; 4];
        let t = ContingencyTable::from_binary_columns("a", &z1, "b", &z2).unwrap();
        assert_eq!(t.integer_counts(), Some(vec![vec![2, 0], vec![2, 0]]));
        assert!(t.counts().iter().all(|v| v.is_sign_positive()));
        assert!(t.rounding_residual().unwrap() < INTEGER_COUNT_RESIDUAL);
        let kept = ContingencyTable::new(
            &Factor::binary("a", &z1).unwrap(),
            &Factor::binary("b", &z2).unwrap(),
            CountRounding::Keep,
        )
        .unwrap();
        assert_eq!(kept.integer_counts(), None);
    }

    /// By hand, 3 × 2 with a reference level: colour ∈ {red, green, blue (reference)} over
    /// 6 records (red, red, green, blue, blue, blue) against y = (1, 0, 1, 1, 0, 0).
    /// red: 1 yes 1 no; green: 1 yes 0 no; blue: 1 yes 2 no.
    #[test]
    fn multi_level_factor_with_reference() {
        let red = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let green = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        let indicators = DMatrix::from_fn(6, 2, |i, j| if j == 0 { red[i] } else { green[i] });
        let colour = Factor::with_reference(
            "colour",
            names(&["red", "green"]),
            indicators.clone(),
            "blue",
        )
        .unwrap();
        let y = Factor::binary("y", &[1.0, 0.0, 1.0, 1.0, 0.0, 0.0]).unwrap();
        let t = ContingencyTable::new(&colour, &y, CountRounding::ToIntegers).unwrap();
        assert_eq!(
            t.rows(),
            vec![vec![1.0, 1.0], vec![1.0, 0.0], vec![1.0, 2.0]]
        );
        assert_eq!(t.row_levels(), ["red", "green", "blue"]);

        // The same factor given completely.
        let blue = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let full = indicators.insert_column(2, 0.0);
        let mut full = full;
        full.set_column(2, &DVector::from_column_slice(&blue));
        let colour = Factor::complete("colour", names(&["red", "green", "blue"]), full).unwrap();
        let t2 = ContingencyTable::new(&colour, &y, CountRounding::ToIntegers).unwrap();
        assert_eq!(t2.counts(), t.counts());
        // Transposed roles.
        let t3 = ContingencyTable::new(&y, &colour, CountRounding::Keep).unwrap();
        assert_eq!(t3.counts(), &t.counts().transpose());
        assert_eq!(t3.rounding_residual(), None);
    }

    #[test]
    fn bad_factors_and_non_counts_are_refused() {
        assert!(matches!(
            Factor::complete("f", names(&["a"]), DMatrix::from_element(3, 1, 1.0)),
            Err(ContingencyError::TooFewLevels { levels: 1, .. })
        ));
        assert!(matches!(
            Factor::with_reference("f", names(&["a", "b"]), DMatrix::zeros(3, 1), "c"),
            Err(ContingencyError::LevelCount { .. })
        ));
        assert!(matches!(
            Factor::with_reference("f", names(&["a"]), DMatrix::zeros(3, 1), "a"),
            Err(ContingencyError::DuplicateLevel { .. })
        ));
        assert!(matches!(
            Factor::binary("f", &[0.0, f64::NAN]),
            Err(ContingencyError::NonFinite { row: 2, .. })
        ));
        let x = Factor::binary("x", &[0.0, 1.0, 1.0]).unwrap();
        let short = Factor::binary("s", &[0.0, 1.0]).unwrap();
        assert!(matches!(
            ContingencyTable::new(&x, &short, CountRounding::Keep),
            Err(ContingencyError::LengthMismatch { .. })
        ));
        // Non-indicator values: x·h = 0.7 is 0.3 away from any count.
        let half = Factor::binary("h", &[0.35, 0.35, 0.35]).unwrap();
        assert!(matches!(
            ContingencyTable::new(&x, &half, CountRounding::ToIntegers),
            Err(ContingencyError::NotACount { .. })
        ));
        // Two of three levels declared complete.
        let partial = Factor::complete(
            "p",
            names(&["a", "b"]),
            DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
        )
        .unwrap();
        assert!(matches!(
            ContingencyTable::new(&partial, &x, CountRounding::ToIntegers),
            Err(ContingencyError::IncompleteLevels {
                levels: 2,
                n: 3,
                ..
            })
        ));
    }
}
