//! From named columns to a regression problem: the response vector `y` and the design matrix
//! `Z` (intercept column first when asked for), with the names of the coefficients.
//!
//! Shared by [`linear`](crate::linear), [`logistic`](crate::logistic) and
//! [`bias_corrected`](crate::bias_corrected), so that all three name, order and validate their
//! terms the same way.
//!
//! # Intercept and masking
//! An intercept adds the column `1ₙ`. On a release `A·X` this is only right when `A·1ₙ = 1ₙ`
//! (seed 003 §2.1: then `1ₙ` is a column of `A·[1ₙ, X]`); with another orthogonal `A` the
//! analyst must use the released `A·1ₙ` as a predictor and fit without intercept.

use nalgebra::{DMatrix, DVector};

use crate::dataset::{Dataset, DatasetError};
use crate::tolerance::RANK_RELATIVE;

/// Name of the intercept term in every coefficient table (R's convention).
pub const INTERCEPT_NAME: &str = "(Intercept)";

/// Whether the model has a constant term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intercept {
    /// `y ~ 1 + x₁ + …`: the design starts with `1ₙ`; R² and F are centred.
    Included,
    /// `y ~ 0 + x₁ + …`: no constant; R² and F are uncentred, as R's `lm(y ~ 0 + x)` reports.
    Excluded,
}

/// Errors when setting up a regression problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DesignError {
    /// A named column does not exist (or another dataset problem).
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// The response is also listed as a predictor.
    #[error("the response {name:?} is also listed as a predictor; remove it from the predictors")]
    ResponseAmongPredictors {
        /// The column name.
        name: String,
    },
    /// A predictor is listed twice.
    #[error("predictor {name:?} is listed twice; list each predictor once")]
    RepeatedPredictor {
        /// The column name.
        name: String,
    },
    /// No intercept and no predictors: nothing to estimate.
    #[error("the model has no terms: add predictors or include the intercept")]
    NoTerms,
    /// `n ≤ p`: no degrees of freedom left for the error.
    #[error(
        "{n} observations cannot estimate {p} coefficients with inference (need n > p); drop predictors or collect more records"
    )]
    TooFewObservations {
        /// Records.
        n: usize,
        /// Coefficients, intercept included.
        p: usize,
    },
    /// A design column is (numerically) a linear combination of the ones before it.
    #[error(
        "the design is rank deficient: {column:?} is a linear combination of the terms before it (|R_jj|/‖z_j‖ = {ratio:.2e} ≤ {RANK_RELATIVE:.0e}); drop it or one of the terms it depends on (a constant column duplicates the intercept)"
    )]
    RankDeficient {
        /// The first dependent term.
        column: String,
        /// `|R_jj| / ‖z_j‖` for that term.
        ratio: f64,
    },
}

/// A regression problem: `y` (`n`), `Z` (`n × p`) and the `p` coefficient names.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    response: String,
    names: Vec<String>,
    matrix: DMatrix<f64>,
    y: DVector<f64>,
    intercept: Intercept,
}

impl Design {
    /// Take `response` and `predictors` (in that order) from `data`, prefixing `1ₙ` when the
    /// intercept is included.
    ///
    /// # Errors
    /// [`DesignError::Dataset`] for unknown names, [`DesignError::ResponseAmongPredictors`],
    /// [`DesignError::RepeatedPredictor`], [`DesignError::NoTerms`],
    /// [`DesignError::TooFewObservations`] when `n ≤ p`.
    pub fn new(
        data: &Dataset,
        response: &str,
        predictors: &[&str],
        intercept: Intercept,
    ) -> Result<Self, DesignError> {
        let y = data.column(response)?;
        for (k, &name) in predictors.iter().enumerate() {
            if name == response {
                return Err(DesignError::ResponseAmongPredictors {
                    name: name.to_owned(),
                });
            }
            if predictors[..k].contains(&name) {
                return Err(DesignError::RepeatedPredictor {
                    name: name.to_owned(),
                });
            }
        }
        // Indices, not copies: the matrix below is the one copy of the predictors.
        let columns = predictors
            .iter()
            .map(|name| data.index_of(name))
            .collect::<Result<Vec<_>, _>>()?;
        let offset = usize::from(intercept == Intercept::Included);
        let p = columns.len() + offset;
        if p == 0 {
            return Err(DesignError::NoTerms);
        }
        let n = data.nrows();
        if n <= p {
            return Err(DesignError::TooFewObservations { n, p });
        }
        let mut matrix = DMatrix::from_element(n, p, 1.0);
        for (j, &index) in columns.iter().enumerate() {
            matrix
                .column_mut(j + offset)
                .copy_from(&data.values().column(index));
        }
        let mut names = Vec::with_capacity(p);
        if offset == 1 {
            names.push(INTERCEPT_NAME.to_owned());
        }
        names.extend(predictors.iter().map(|&s| s.to_owned()));
        Ok(Self {
            response: response.to_owned(),
            names,
            matrix,
            y,
            intercept,
        })
    }

    /// Name of the response column.
    pub fn response(&self) -> &str {
        &self.response
    }

    /// Coefficient names, `"(Intercept)"` first when included.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The design matrix `Z` (`n × p`).
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.matrix
    }

    /// The response `y`.
    pub fn y(&self) -> &DVector<f64> {
        &self.y
    }

    /// Whether the first column is the intercept.
    pub fn intercept(&self) -> Intercept {
        self.intercept
    }

    /// Number of records `n`.
    pub fn n(&self) -> usize {
        self.matrix.nrows()
    }

    /// Number of coefficients `p` (intercept included).
    pub fn p(&self) -> usize {
        self.matrix.ncols()
    }

    /// Check the leading `p × p` block of the `R` factor of a Householder QR of `W·Z` (`W`
    /// diagonal with positive entries, the identity for least squares, `√D̂` for IRLS) for
    /// dependent columns.
    ///
    /// # Formula
    /// `|R_jj|` is the norm of the part of column `j` of `W·Z` orthogonal to the columns before
    /// it; the column is dependent when `|R_jj| ≤ RANK_RELATIVE · ‖(W·Z)_j‖` (R's `lm` rule).
    ///
    /// # Errors
    /// [`DesignError::RankDeficient`] naming the first dependent term.
    pub(crate) fn check_rank(
        &self,
        weighted: &DMatrix<f64>,
        r: &DMatrix<f64>,
    ) -> Result<(), DesignError> {
        for j in 0..self.p() {
            let norm = weighted.column(j).norm();
            let ratio = if norm == 0.0 {
                0.0
            } else {
                r[(j, j)].abs() / norm
            };
            if ratio <= RANK_RELATIVE {
                return Err(DesignError::RankDeficient {
                    column: self.names[j].clone(),
                    ratio,
                });
            }
        }
        Ok(())
    }

    /// `R⁻¹·B` by back-substitution, for an `R` that passed [`check_rank`](Self::check_rank)
    /// (so every pivot is non-zero and this cannot fail in practice).
    ///
    /// # Errors
    /// [`DesignError::RankDeficient`] naming the first zero pivot.
    pub(crate) fn solve_r(
        &self,
        r: &DMatrix<f64>,
        b: &DMatrix<f64>,
    ) -> Result<DMatrix<f64>, DesignError> {
        r.solve_upper_triangular(b).ok_or_else(|| {
            let j = (0..self.p())
                .find(|&j| r[(j, j)] == 0.0)
                .unwrap_or(self.p() - 1);
            DesignError::RankDeficient {
                column: self.names[j].clone(),
                ratio: 0.0,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Dataset {
        Dataset::from_columns(vec![
            ("y".into(), vec![1.0, 2.0, 3.0, 5.0]),
            ("a".into(), vec![1.0, 0.0, 1.0, 0.0]),
            ("b".into(), vec![2.0, 0.0, 2.0, 0.0]),
            ("c".into(), vec![0.0, 1.0, 0.0, 1.0]),
        ])
        .unwrap()
    }

    #[test]
    fn intercept_comes_first() {
        let d = Design::new(&data(), "y", &["c", "a"], Intercept::Included).unwrap();
        assert_eq!(d.names(), [INTERCEPT_NAME, "c", "a"]);
        assert_eq!(d.matrix().column(0).as_slice(), [1.0; 4]);
        assert_eq!(d.matrix().column(2).as_slice(), [1.0, 0.0, 1.0, 0.0]);
        assert_eq!(d.y().as_slice(), [1.0, 2.0, 3.0, 5.0]);
        let no = Design::new(&data(), "y", &["c"], Intercept::Excluded).unwrap();
        assert_eq!((no.n(), no.p()), (4, 1));
    }

    #[test]
    fn malformed_models_are_refused() {
        let d = data();
        assert!(matches!(
            Design::new(&d, "y", &["y"], Intercept::Included),
            Err(DesignError::ResponseAmongPredictors { .. })
        ));
        assert!(matches!(
            Design::new(&d, "y", &["a", "a"], Intercept::Included),
            Err(DesignError::RepeatedPredictor { .. })
        ));
        assert_eq!(
            Design::new(&d, "y", &[], Intercept::Excluded),
            Err(DesignError::NoTerms)
        );
        assert_eq!(
            Design::new(&d, "y", &["a", "b", "c"], Intercept::Included),
            Err(DesignError::TooFewObservations { n: 4, p: 4 })
        );
        assert!(matches!(
            Design::new(&d, "z", &[], Intercept::Included),
            Err(DesignError::Dataset(DatasetError::UnknownColumn { .. }))
        ));
    }

    #[test]
    fn dependent_columns_are_named() {
        let d = Design::new(&data(), "y", &["a", "b"], Intercept::Excluded).unwrap();
        let r = d.matrix().clone().qr().r();
        assert!(matches!(
            d.check_rank(d.matrix(), &r),
            Err(DesignError::RankDeficient { ref column, .. }) if column == "b"
        ));
        // a + c = 1ₙ duplicates the intercept.
        let d = Design::new(&data(), "y", &["a", "c"], Intercept::Included).unwrap();
        let r = d.matrix().clone().qr().r();
        assert!(matches!(
            d.check_rank(d.matrix(), &r),
            Err(DesignError::RankDeficient { ref column, .. }) if column == "c"
        ));
    }
}
