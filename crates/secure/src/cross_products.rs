//! The integrated cross-products: everything the agencies share after the protocol (seed 001
//! §3.1).
//!
//! With `D = [D₁ … D_m]` the attributes of all agencies (columns numbered globally, agency by
//! agency in the order given), the agencies share the column sums `s = Dᵀ1` (hence the means
//! `d̄ = s/n`) and the *centred* cross-products `C = (D − 1d̄ᵀ)ᵀ(D − 1d̄ᵀ)`, i.e. the sample
//! covariance matrix `C/(n − 1)` that §3.1 says the agencies complete. Everything else — in
//! particular the augmented matrix `[1 D]ᵀ[1 D] = [[n, sᵀ], [s, C + ssᵀ/n]]` — is a function of
//! `n`, `s` and `C`.
//!
//! Who computes what: agency `a` computes its column sums and its diagonal block of `C` locally
//! (after subtracting its own means, which it shares anyway); the off-diagonal blocks come from
//! the secure product run on the agencies' centred columns ([`assembly`](crate::assembly)).
//!
//! # Interpretation: the constant stays out of the protocol, and the data are centred first
//! The paper places the column of ones with agency A₁ (§3.1, `D₁ = 1`) and multiplies raw
//! columns. The products with the constant are column sums each agency computes itself, so we
//! keep the constant out of the protocol. And since the means are shared, each agency may centre
//! its columns before the protocol at no cost in disclosure; the product of centred columns is
//! the covariance block itself, without the cancellation `DᵀD − ssᵀ/n` suffers when means are
//! large against the spread (relative error about `ε (mean/sd)²`). The crate therefore stores
//! `s` and `C`, not `[1 D]ᵀ[1 D]`.

use nalgebra::{DMatrix, DVector};

/// Errors when building or indexing cross-products.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CrossProductsError {
    /// No data were given.
    #[error("no agency data were given")]
    NoAgencies,
    /// An agency's block has a different number of subjects.
    #[error(
        "agency {agency} has {found} subjects but agency 0 has {expected}; align the subjects first"
    )]
    RowMismatch {
        /// Offending agency.
        agency: usize,
        /// Subjects of agency 0.
        expected: usize,
        /// Subjects of the offending agency.
        found: usize,
    },
    /// The data contain NaN or an infinity.
    #[error("agency {agency} has a missing or non-finite value")]
    NonFinite {
        /// Offending agency.
        agency: usize,
    },
    /// A column index is out of range.
    #[error("column {column} does not exist: the integrated data have {columns} columns")]
    ColumnOutOfRange {
        /// Requested column (global, 0-based).
        column: usize,
        /// Number of columns.
        columns: usize,
    },
    /// A supplied matrix has the wrong shape or is not symmetric.
    #[error("the augmented cross-product matrix must be symmetric ({expected}×{expected}); {what}")]
    BadMatrix {
        /// Expected order `m + 1`.
        expected: usize,
        /// What is wrong.
        what: &'static str,
    },
}

/// The shared cross-products of the integrated data, with the owner of each column.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossProducts {
    subjects: usize,
    sums: DVector<f64>,
    centred: DMatrix<f64>,
    owners: Vec<usize>,
    offsets: Vec<usize>,
}

impl CrossProducts {
    /// What an omniscient third party holding all data would compute directly (column sums, and
    /// cross-products of the centred columns). The reference the secure assembly is tested against
    /// (the paper's notion of optimality, §2.1), and the right constructor when one agency holds
    /// everything.
    ///
    /// # Errors
    /// [`CrossProductsError::NoAgencies`], [`CrossProductsError::RowMismatch`],
    /// [`CrossProductsError::NonFinite`].
    pub fn direct(blocks: &[DMatrix<f64>]) -> Result<Self, CrossProductsError> {
        let subjects = check_blocks(blocks)?;
        let columns: usize = blocks.iter().map(|b| b.ncols()).sum();
        let mut all = DMatrix::zeros(subjects, columns);
        let mut at = 0;
        for block in blocks {
            all.view_mut((0, at), (subjects, block.ncols()))
                .copy_from(block);
            at += block.ncols();
        }
        let (sums, centred_columns) = centre(&all);
        let centred = centred_columns.transpose() * &centred_columns;
        Ok(Self::from_parts(
            subjects,
            sums,
            centred,
            blocks.iter().map(|b| b.ncols()),
        ))
    }

    /// Wrap pieces assembled elsewhere in the crate. `widths[a]` is the number of columns of
    /// agency `a`.
    pub(crate) fn from_parts(
        subjects: usize,
        sums: DVector<f64>,
        centred: DMatrix<f64>,
        widths: impl Iterator<Item = usize>,
    ) -> Self {
        let mut owners = Vec::new();
        let mut offsets = Vec::new();
        for (agency, width) in widths.enumerate() {
            offsets.push(owners.len());
            owners.extend(std::iter::repeat_n(agency, width));
        }
        debug_assert_eq!(centred.nrows(), owners.len());
        debug_assert_eq!(sums.len(), owners.len());
        Self {
            subjects,
            sums,
            centred,
            owners,
            offsets,
        }
    }

    /// Build from an augmented matrix `[1 D]ᵀ[1 D]` supplied by a caller (for example one read
    /// back from an earlier session), checking its shape and symmetry. The centred
    /// cross-products are then recovered as `DᵀD − ssᵀ/n`, with the cancellation that implies.
    ///
    /// # Errors
    /// [`CrossProductsError::BadMatrix`] when the order is not `Σ widths + 1`, the matrix is not
    /// symmetric, contains a non-finite value, or its `(0, 0)` entry is not `n`.
    pub fn from_augmented(
        subjects: usize,
        matrix: &DMatrix<f64>,
        widths: &[usize],
    ) -> Result<Self, CrossProductsError> {
        let expected = widths.iter().sum::<usize>() + 1;
        if matrix.shape() != (expected, expected) {
            return Err(CrossProductsError::BadMatrix {
                expected,
                what: "wrong shape",
            });
        }
        if matrix.iter().any(|v| !v.is_finite()) {
            return Err(CrossProductsError::BadMatrix {
                expected,
                what: "non-finite entry",
            });
        }
        let scale = matrix.amax().max(1.0);
        if (matrix - matrix.transpose()).amax() > f64::EPSILON * 64.0 * scale {
            return Err(CrossProductsError::BadMatrix {
                expected,
                what: "not symmetric",
            });
        }
        if (matrix[(0, 0)] - subjects as f64).abs() > 0.5 {
            return Err(CrossProductsError::BadMatrix {
                expected,
                what: "entry (0, 0) must be n",
            });
        }
        let m = expected - 1;
        let sums = matrix.view((1, 0), (m, 1)).column(0).into_owned();
        let n = subjects as f64;
        let centred = DMatrix::from_fn(m, m, |i, j| matrix[(i + 1, j + 1)] - sums[i] * sums[j] / n);
        Ok(Self::from_parts(
            subjects,
            sums,
            centred,
            widths.iter().copied(),
        ))
    }

    /// `n`.
    pub fn subjects(&self) -> usize {
        self.subjects
    }

    /// `m`, the number of attributes (the constant not counted).
    pub fn columns(&self) -> usize {
        self.owners.len()
    }

    /// The number of agencies.
    pub fn agencies(&self) -> usize {
        self.offsets.len()
    }

    /// The column sums `s = Dᵀ1`.
    pub fn sums(&self) -> &DVector<f64> {
        &self.sums
    }

    /// The augmented matrix `[1 D]ᵀ[1 D] = [[n, sᵀ], [s, C + ssᵀ/n]]`; attribute `j` is
    /// row/column `j + 1`.
    pub fn augmented(&self) -> DMatrix<f64> {
        let m = self.columns();
        let n = self.subjects as f64;
        DMatrix::from_fn(m + 1, m + 1, |i, j| match (i, j) {
            (0, 0) => n,
            (0, j) => self.sums[j - 1],
            (i, 0) => self.sums[i - 1],
            (i, j) => self.centred[(i - 1, j - 1)] + self.sums[i - 1] * self.sums[j - 1] / n,
        })
    }

    /// Which agency owns attribute `j`.
    ///
    /// # Errors
    /// [`CrossProductsError::ColumnOutOfRange`].
    pub fn owner(&self, column: usize) -> Result<usize, CrossProductsError> {
        self.check(column)?;
        Ok(self.owners[column])
    }

    /// Attribute `j`'s index within its owner's block.
    ///
    /// # Errors
    /// [`CrossProductsError::ColumnOutOfRange`].
    pub fn local_index(&self, column: usize) -> Result<usize, CrossProductsError> {
        let owner = self.owner(column)?;
        Ok(column - self.offsets[owner])
    }

    /// Global indices of agency `a`'s attributes.
    pub fn columns_of(&self, agency: usize) -> Vec<usize> {
        (0..self.columns())
            .filter(|&j| self.owners[j] == agency)
            .collect()
    }

    /// The sample means `s / n`.
    pub fn means(&self) -> DVector<f64> {
        &self.sums / self.subjects as f64
    }

    /// Centred cross-products `C_SS` of the given attributes.
    ///
    /// # Errors
    /// [`CrossProductsError::ColumnOutOfRange`].
    pub fn centred(&self, columns: &[usize]) -> Result<DMatrix<f64>, CrossProductsError> {
        for &j in columns {
            self.check(j)?;
        }
        Ok(self.centred.select_rows(columns).select_columns(columns))
    }

    /// Uncentred cross-products `D_SᵀD_S = C_SS + s_S s_Sᵀ/n` of the given attributes.
    ///
    /// # Errors
    /// [`CrossProductsError::ColumnOutOfRange`].
    pub fn raw(&self, columns: &[usize]) -> Result<DMatrix<f64>, CrossProductsError> {
        let centred = self.centred(columns)?;
        let n = self.subjects as f64;
        Ok(DMatrix::from_fn(columns.len(), columns.len(), |r, c| {
            centred[(r, c)] + self.sums[columns[r]] * self.sums[columns[c]] / n
        }))
    }

    /// The sample covariance matrix `C/(n − 1)` of all attributes: what seed 001 §3.1 says the
    /// agencies share.
    pub fn covariance(&self) -> DMatrix<f64> {
        &self.centred / (self.subjects as f64 - 1.0)
    }

    fn check(&self, column: usize) -> Result<(), CrossProductsError> {
        if column < self.columns() {
            Ok(())
        } else {
            Err(CrossProductsError::ColumnOutOfRange {
                column,
                columns: self.columns(),
            })
        }
    }
}

/// Column sums of `block` and the block with its column means subtracted (two passes, so the
/// centred values are accurate however large the means).
pub(crate) fn centre(block: &DMatrix<f64>) -> (DVector<f64>, DMatrix<f64>) {
    let sums = block.row_sum().transpose();
    let n = block.nrows() as f64;
    let mut centred = block.clone();
    for (mut column, sum) in centred.column_iter_mut().zip(sums.iter()) {
        column.add_scalar_mut(-sum / n);
    }
    (sums, centred)
}

/// Common subject count of the blocks, after checking they agree and are finite.
pub(crate) fn check_blocks(blocks: &[DMatrix<f64>]) -> Result<usize, CrossProductsError> {
    let first = blocks.first().ok_or(CrossProductsError::NoAgencies)?;
    let subjects = first.nrows();
    for (agency, block) in blocks.iter().enumerate() {
        if block.nrows() != subjects {
            return Err(CrossProductsError::RowMismatch {
                agency,
                expected: subjects,
                found: block.nrows(),
            });
        }
        if block.iter().any(|v| !v.is_finite()) {
            return Err(CrossProductsError::NonFinite { agency });
        }
    }
    Ok(subjects)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::HAND_COMPUTED;

    /// Agency 0: x = (1, 2, 3); agency 1: y = (1, 3, 2).
    /// M = [[3, 6, 6], [6, 14, 13], [6, 13, 14]]; means (2, 2);
    /// centred: Sxx = 2, Sxy = 1, Syy = 2; covariance = centred / 2.
    #[test]
    fn by_hand() {
        let x = DMatrix::from_column_slice(3, 1, &[1.0, 2.0, 3.0]);
        let y = DMatrix::from_column_slice(3, 1, &[1.0, 3.0, 2.0]);
        let cp = CrossProducts::direct(&[x, y]).unwrap();
        let expected =
            DMatrix::from_row_slice(3, 3, &[3.0, 6.0, 6.0, 6.0, 14.0, 13.0, 6.0, 13.0, 14.0]);
        assert!((cp.augmented() - &expected).amax() < HAND_COMPUTED);
        let back = CrossProducts::from_augmented(3, &expected, &[1, 1]).unwrap();
        assert!(
            (back.centred(&[0, 1]).unwrap() - cp.centred(&[0, 1]).unwrap()).amax() < HAND_COMPUTED
        );
        assert!((cp.sums() - DVector::from_row_slice(&[6.0, 6.0])).amax() < HAND_COMPUTED);
        assert_eq!(
            (
                cp.columns(),
                cp.agencies(),
                cp.owner(1).unwrap(),
                cp.local_index(1).unwrap()
            ),
            (2, 2, 1, 0)
        );
        let centred = cp.centred(&[0, 1]).unwrap();
        assert!(
            (centred - DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 2.0])).amax() < HAND_COMPUTED
        );
        assert!(
            (cp.covariance() - DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.5, 1.0])).amax()
                < HAND_COMPUTED
        );
        assert!((cp.means() - DVector::from_row_slice(&[2.0, 2.0])).amax() < HAND_COMPUTED);
        assert_eq!(cp.columns_of(1), vec![1]);
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(
            CrossProducts::direct(&[]).unwrap_err(),
            CrossProductsError::NoAgencies
        );
        let a = DMatrix::zeros(3, 1);
        let b = DMatrix::zeros(4, 1);
        assert_eq!(
            CrossProducts::direct(&[a.clone(), b]).unwrap_err(),
            CrossProductsError::RowMismatch {
                agency: 1,
                expected: 3,
                found: 4
            }
        );
        let mut c = DMatrix::zeros(3, 2);
        c[(1, 1)] = f64::INFINITY;
        assert_eq!(
            CrossProducts::direct(&[a.clone(), c]).unwrap_err(),
            CrossProductsError::NonFinite { agency: 1 }
        );
        let cp = CrossProducts::direct(&[a]).unwrap();
        assert_eq!(
            cp.owner(1).unwrap_err(),
            CrossProductsError::ColumnOutOfRange {
                column: 1,
                columns: 1
            }
        );
        let asymmetric = DMatrix::from_row_slice(2, 2, &[3.0, 1.0, 2.0, 5.0]);
        assert!(matches!(
            CrossProducts::from_augmented(3, &asymmetric, &[1]),
            Err(CrossProductsError::BadMatrix {
                what: "not symmetric",
                ..
            })
        ));
    }
}
