//! Column means, covariance and correlation matrices.
//!
//! # Why they survive masking
//! For a release `A·X` with `A` orthogonal and `A·1ₙ = 1ₙ` (seed 003 §2.1, Theorem 1 of Ting
//! et al. 2008): `1ₙᵀA·X = (Aᵀ1ₙ)ᵀX = 1ₙᵀX`, so the means agree, and `(AX)ᵀ(AX) = XᵀX`, so the
//! centred cross-products `XᵀX − n·x̄x̄ᵀ` and everything built from them agree. With an `A` that
//! does not fix `1ₙ` only `XᵀX` survives and the means computed here would be wrong.

use nalgebra::{DMatrix, DVector};

use crate::dataset::Dataset;
use crate::tolerance::RANK_RELATIVE;

/// Errors of the descriptive summaries.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DescriptiveError {
    /// Fewer than two records: the sample covariance divides by `n − 1`.
    #[error("a sample covariance needs at least 2 records, the dataset has {n}")]
    TooFewRecords {
        /// Records available.
        n: usize,
    },
    /// A column is constant, so its correlations are undefined.
    #[error(
        "column {column:?} is constant (variance {variance:e}); its correlations are undefined, leave it out"
    )]
    ZeroVariance {
        /// The constant column.
        column: String,
        /// Its sample variance.
        variance: f64,
    },
}

/// Means and sample covariance of every column of a [`Dataset`].
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    names: Vec<String>,
    n: usize,
    means: DVector<f64>,
    covariance: DMatrix<f64>,
    norms: DVector<f64>,
}

impl Moments {
    /// Compute means and covariance.
    ///
    /// # Formula
    /// `x̄_j = (1/n)·Σᵢ x_ij`; `S = (X − 1ₙx̄ᵀ)ᵀ(X − 1ₙx̄ᵀ) / (n − 1)` (two passes: centring
    /// first avoids the cancellation of `XᵀX − n·x̄x̄ᵀ`).
    ///
    /// # Errors
    /// [`DescriptiveError::TooFewRecords`] when `n < 2`.
    pub fn new(data: &Dataset) -> Result<Self, DescriptiveError> {
        let n = data.nrows();
        if n < 2 {
            return Err(DescriptiveError::TooFewRecords { n });
        }
        let x = data.values();
        let means = DVector::from_iterator(x.ncols(), x.column_iter().map(|c| c.mean()));
        let mut centred = x.clone();
        for (mut column, mean) in centred.column_iter_mut().zip(means.iter()) {
            column.add_scalar_mut(-mean);
        }
        let covariance = centred.tr_mul(&centred) / (n as f64 - 1.0);
        let norms = DVector::from_iterator(x.ncols(), x.column_iter().map(|c| c.norm()));
        Ok(Self {
            names: data.names().to_vec(),
            n,
            means,
            covariance,
            norms,
        })
    }

    /// Column names, in the order of the rows and columns of the matrices.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Column means `x̄`.
    pub fn means(&self) -> &DVector<f64> {
        &self.means
    }

    /// Sample covariance matrix `S` (divisor `n − 1`).
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// Sample standard deviations `√S_jj`.
    pub fn std_devs(&self) -> DVector<f64> {
        self.covariance.diagonal().map(f64::sqrt)
    }

    /// Correlation matrix `R_jk = S_jk / √(S_jj·S_kk)`, with exact ones on the diagonal.
    ///
    /// # Errors
    /// [`DescriptiveError::ZeroVariance`] naming the first constant column (for example the
    /// quality-assurance column of seed 003 Table 2, constant 888). A column counts as constant
    /// when its centred norm `√((n−1)·S_jj)` is at most [`RANK_RELATIVE`] times its norm `‖x_j‖`:
    /// a masked constant column `888·A·1ₙ` carries rounding noise of relative size 1e-16, whose
    /// "correlations" would be meaningless.
    pub fn correlation(&self) -> Result<DMatrix<f64>, DescriptiveError> {
        let sd = self.std_devs();
        let scale = (self.n as f64 - 1.0).sqrt();
        if let Some(j) = (0..sd.len()).find(|&j| sd[j] * scale <= RANK_RELATIVE * self.norms[j]) {
            return Err(DescriptiveError::ZeroVariance {
                column: self.names[j].clone(),
                variance: self.covariance[(j, j)],
            });
        }
        let p = sd.len();
        Ok(DMatrix::from_fn(p, p, |j, k| {
            if j == k {
                1.0
            } else {
                self.covariance[(j, k)] / (sd[j] * sd[k])
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, relative_difference};

    /// By hand: x = (1, 2, 3, 4), y = (2, 4, 6, 9). Means 2.5 and 5.25;
    /// S_xx = 5/3, S_yy = (3.25² + 1.25² + 0.75² + 3.75²)/3 = 26.75/3,
    /// S_xy = (1.5·3.25 + 0.5·1.25 + 0.5·0.75 + 1.5·3.75)/3 = 11.5/3,
    /// r = 11.5 / √(5·26.75).
    #[test]
    fn hand_solved_moments() {
        let d = Dataset::from_columns(vec![
            ("x".into(), vec![1.0, 2.0, 3.0, 4.0]),
            ("y".into(), vec![2.0, 4.0, 6.0, 9.0]),
        ])
        .unwrap();
        let m = Moments::new(&d).unwrap();
        let close = |a: f64, b: f64| relative_difference(a, b) < HAND_SOLVED_RELATIVE;
        assert_eq!(m.n(), 4);
        assert!(close(m.means()[0], 2.5) && close(m.means()[1], 5.25));
        assert!(close(m.covariance()[(0, 0)], 5.0 / 3.0));
        assert!(close(m.covariance()[(1, 1)], 26.75 / 3.0));
        assert!(close(m.covariance()[(0, 1)], 11.5 / 3.0));
        assert!(close(m.covariance()[(1, 0)], 11.5 / 3.0));
        let r = m.correlation().unwrap();
        assert!(close(r[(0, 1)], 11.5 / (5.0f64 * 26.75).sqrt()));
        assert!(close(r[(1, 1)], 1.0));
        assert!(close(m.std_devs()[0], (5.0f64 / 3.0).sqrt()));
    }

    #[test]
    fn degenerate_inputs_are_refused() {
        let one = Dataset::from_columns(vec![("x".into(), vec![1.0])]).unwrap();
        assert_eq!(
            Moments::new(&one).unwrap_err(),
            DescriptiveError::TooFewRecords { n: 1 }
        );
        let constant = Dataset::from_columns(vec![
            ("x".into(), vec![1.0, 2.0]),
            ("QA".into(), vec![888.0, 888.0]),
        ])
        .unwrap();
        assert_eq!(
            Moments::new(&constant).unwrap().correlation().unwrap_err(),
            DescriptiveError::ZeroVariance {
                column: "QA".into(),
                variance: 0.0
            }
        );
    }
}
