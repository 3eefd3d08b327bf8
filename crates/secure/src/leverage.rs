//! Hat-matrix diagonals (leverages) `h_ii = d_iᵀ(D₀ᵀD₀)⁻¹d_i` (seed 001 §3.2), and what can be
//! computed of them when the predictors are split across agencies.
//!
//! # What the paper says, and what is possible
//! §3.2 states that the diagonal of `H = D₀(D₀ᵀD₀)⁻¹D₀ᵀ` "can be securely computed" without giving
//! a method. `(D₀ᵀD₀)⁻¹` is shared, but `h_ii` is a quadratic form in subject `i`'s *whole row*
//! `d_i`. With the predictors of `D₀` split between agencies `a` and `b`, it contains the terms
//! `x_{ia}ᵀ C_ab x_{ib}` — products of two agencies' values *for the same subject*. The secure
//! matrix product computes sums over subjects (`XᵀY`), never per-subject products, and secure
//! summation adds per-subject values but cannot multiply them; a per-subject cross term needs a
//! secure multiplication protocol that the paper does not have. (Lifting the per-subject products
//! into a matrix product — one pseudo-subject per pair (subject, coefficient) — does not help: the
//! sparsity pattern is public, and `ZᵀX = 0` then gives away each row's direction.)
//!
//! This module therefore provides, stating for each who computes it:
//!
//! * [`hat_diagonal`] — the exact `h_ii`, by an agency that holds **every predictor of the model**
//!   (for instance when one agency owns all predictors and another the response): it needs only
//!   its own rows and the shared `(D₀ᵀD₀)⁻¹`.
//! * [`LeverageBounds`] — for split predictors, bounds every agency can obtain without revealing
//!   its rows:
//!   * **lower bound**, local: `H_a`, the projection on agency `a`'s own predictors (with the
//!     constant when the model has one), satisfies `H_a ≤ H` (`ran H_a ⊆ ran H`), so
//!     `h_ii ≥ h^{(a)}_ii` ([`local_leverage`]);
//!   * **upper bound**, by secure summation: with `(D₀ᵀD₀)⁻¹ = LLᵀ`, `h_ii = ‖Σ_a L_aᵀ d_{ia}‖²`
//!     where `L_a` are the rows of `L` for agency `a`'s terms; each agency computes the length
//!     `s_ia = ‖L_aᵀ d_{ia}‖` of its own part ([`leverage_share`]), the lengths are added by
//!     [`secure_sum`](crate::secure_sum), and the triangle inequality gives
//!     `h_ii ≤ min(1, (Σ_a s_ia)²)`.
//!
//! The bounds classify a subject as certainly above or certainly below the usual high-leverage
//! cutoff `2k/n` (Hoaglin & Welsch 1978, Am. Stat. 32(1)) when they do not straddle it
//! ([`LeverageBounds::classify`]); the number of such subjects is what the agencies can report.

use crate::householder::HouseholderQr;
use crate::regression::{OlsFit, Term};
use crate::tolerance::COLLINEARITY;
use nalgebra::{DMatrix, DVector};

/// Errors of the leverage computations.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LeverageError {
    /// A block does not match the fit.
    #[error("{what}: expected {expected}, found {found}")]
    Shape {
        /// What was compared.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Found size.
        found: usize,
    },
    /// The agency's own design is rank deficient.
    #[error(
        "column {column} of the agency's design is a linear combination of the ones before it; drop it"
    )]
    DependentColumn {
        /// The column (0-based; the constant, if added, is column 0).
        column: usize,
    },
    /// `(D₀ᵀD₀)⁻¹` is not positive definite (cannot happen for a fit that succeeded).
    #[error("(D₀ᵀD₀)⁻¹ is not positive definite")]
    NotPositiveDefinite,
    /// Bounds were built from pieces of different lengths, or from none.
    #[error("the bound pieces do not describe the same {subjects} subjects")]
    Inconsistent {
        /// Subjects expected.
        subjects: usize,
    },
}

/// The exact leverages `h_ii = d_iᵀ(D₀ᵀD₀)⁻¹d_i`, computed by an agency that holds every predictor
/// of `fit`. `predictors` has the model's predictor columns in the order of
/// [`OlsFit::terms`] (the constant, if any, is added here).
///
/// # Errors
/// [`LeverageError::Shape`] when `predictors` is not n × (number of predictor terms).
pub fn hat_diagonal(
    fit: &OlsFit,
    predictors: &DMatrix<f64>,
) -> Result<DVector<f64>, LeverageError> {
    let intercept = fit.has_intercept();
    let expected = fit.terms().len() - usize::from(intercept);
    check_shape(fit, predictors, expected)?;
    let c = fit.unscaled_covariance();
    let k = fit.terms().len();
    let row = |i: usize| {
        DVector::from_iterator(
            k,
            intercept
                .then_some(1.0)
                .into_iter()
                .chain(predictors.row(i).iter().copied()),
        )
    };
    Ok(DVector::from_fn(predictors.nrows(), |i, _| {
        let d = row(i);
        d.dot(&(c * &d))
    }))
}

/// Leverages of subject rows in the model on agency `a`'s own columns `block` (plus the constant
/// when `intercept`): `h^{(a)}_ii = ‖row i of Q‖²` with `Q` an orthonormal basis of the columns.
/// A lower bound on the full model's leverages when `block` holds the agency's predictors in the
/// model. Local: no communication.
///
/// # Errors
/// [`LeverageError::DependentColumn`] when the agency's design is rank deficient.
pub fn local_leverage(
    block: &DMatrix<f64>,
    intercept: bool,
) -> Result<DVector<f64>, LeverageError> {
    let n = block.nrows();
    let offset = usize::from(intercept);
    let mut design = DMatrix::zeros(n, block.ncols() + offset);
    if intercept {
        design.column_mut(0).fill(1.0);
    }
    design.view_mut((0, offset), block.shape()).copy_from(block);
    let qr = HouseholderQr::new(&design);
    if let Some((column, _)) = qr.dependent_column(COLLINEARITY) {
        return Err(LeverageError::DependentColumn { column });
    }
    let q = qr.thin_q();
    Ok(DVector::from_fn(n, |i, _| q.row(i).norm_squared()))
}

/// Agency `a`'s share `s_ia = ‖L_aᵀ d_{ia}‖` for the upper bound (see the
/// [module documentation](self)). `columns[k]` is the global index of `block`'s column `k`;
/// exactly one agency passes `include_intercept = true` so that every term of the model is
/// counted once.
///
/// # Errors
/// [`LeverageError::Shape`] for a block that does not have `n` rows or `columns.len()` columns,
/// [`LeverageError::NotPositiveDefinite`].
pub fn leverage_share(
    fit: &OlsFit,
    block: &DMatrix<f64>,
    columns: &[usize],
    include_intercept: bool,
) -> Result<DVector<f64>, LeverageError> {
    check_shape(fit, block, columns.len())?;
    let k = fit.terms().len();
    let l = fit
        .unscaled_covariance()
        .clone()
        .cholesky()
        .ok_or(LeverageError::NotPositiveDefinite)?
        .l();
    let intercept_row = if include_intercept {
        fit.position(Term::Intercept)
    } else {
        None
    };
    let own: Vec<(usize, Option<usize>)> = columns
        .iter()
        .enumerate()
        .filter_map(|(local, &c)| fit.position(Term::Column(c)).map(|t| (t, Some(local))))
        .chain(intercept_row.map(|t| (t, None)))
        .collect();
    Ok(DVector::from_fn(block.nrows(), |i, _| {
        let mut part = DVector::zeros(k);
        for &(t, local) in &own {
            let value = local.map_or(1.0, |c| block[(i, c)]);
            part.axpy(value, &l.row(t).transpose(), 1.0);
        }
        part.norm()
    }))
}

fn check_shape(fit: &OlsFit, block: &DMatrix<f64>, columns: usize) -> Result<(), LeverageError> {
    if block.nrows() != fit.subjects() {
        return Err(LeverageError::Shape {
            what: "rows",
            expected: fit.subjects(),
            found: block.nrows(),
        });
    }
    if block.ncols() != columns {
        return Err(LeverageError::Shape {
            what: "columns",
            expected: columns,
            found: block.ncols(),
        });
    }
    Ok(())
}

/// Per-subject bounds `lower_i ≤ h_ii ≤ upper_i` for predictors split across agencies.
#[derive(Clone, Debug, PartialEq)]
pub struct LeverageBounds {
    lower: DVector<f64>,
    upper: DVector<f64>,
}

/// How many subjects the bounds place above, below, or on both sides of a cutoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeverageCounts {
    /// Subjects whose lower bound exceeds the cutoff: certainly high leverage.
    pub high: usize,
    /// Subjects whose upper bound is at most the cutoff: certainly not high leverage.
    pub low: usize,
    /// Subjects the bounds cannot decide.
    pub undetermined: usize,
}

impl LeverageBounds {
    /// Combine the agencies' local leverages (lower bound: their maximum) with the securely summed
    /// shares `Σ_a s_ia` (upper bound: `min(1, (Σ_a s_ia)²)`).
    ///
    /// # Errors
    /// [`LeverageError::Inconsistent`] when there are no local leverages or the lengths differ.
    pub fn new(
        local: &[DVector<f64>],
        summed_shares: &DVector<f64>,
    ) -> Result<Self, LeverageError> {
        let subjects = summed_shares.len();
        if local.is_empty() || local.iter().any(|h| h.len() != subjects) {
            return Err(LeverageError::Inconsistent { subjects });
        }
        let lower = DVector::from_fn(subjects, |i, _| {
            local.iter().map(|h| h[i]).fold(0.0, f64::max)
        });
        let upper = summed_shares.map(|s| (s * s).min(1.0));
        Ok(Self { lower, upper })
    }

    /// Lower bounds.
    pub fn lower(&self) -> &DVector<f64> {
        &self.lower
    }

    /// Upper bounds.
    pub fn upper(&self) -> &DVector<f64> {
        &self.upper
    }

    /// Count subjects certainly above, certainly not above, and possibly above `cutoff` (use
    /// [`high_leverage_cutoff`] for the usual `2k/n`).
    pub fn classify(&self, cutoff: f64) -> LeverageCounts {
        let high = self.lower.iter().filter(|&&h| h > cutoff).count();
        let low = self.upper.iter().filter(|&&h| h <= cutoff).count();
        LeverageCounts {
            high,
            low,
            undetermined: self.lower.len() - high - low,
        }
    }
}

/// The high-leverage cutoff `2k/n` of Hoaglin & Welsch (1978): twice the average leverage.
pub fn high_leverage_cutoff(fit: &OlsFit) -> f64 {
    2.0 * fit.terms().len() as f64 / fit.subjects() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cross_products::CrossProducts;
    use crate::secure_sum::secure_sum;
    use crate::tolerance::{REGRESSION_AGREEMENT, SECURE_SUM_PER_SHARE};
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    /// Agency 0: two predictors; agency 1: one predictor (with an outlying subject 0) and the
    /// response.
    fn data() -> (DMatrix<f64>, DMatrix<f64>) {
        let n = 40;
        let mut rng = Key::teaching(5).stream(StreamId::Scratch(5000)).rng();
        let mut z = vec![0.0; 4 * n];
        fill_standard_normal(&mut rng, &mut z);
        let a = DMatrix::from_fn(n, 2, |i, j| z[i + n * j] + 0.5 * z[i + 2 * n] * j as f64);
        let b = DMatrix::from_fn(n, 2, |i, j| {
            if j == 0 {
                if i == 0 { 8.0 } else { z[i + 2 * n] }
            } else {
                1.0 + a[(i, 0)] - a[(i, 1)] + 0.5 * z[i + 3 * n]
            }
        });
        (a, b)
    }

    fn direct_hat(design: &DMatrix<f64>) -> DVector<f64> {
        let q = design.clone().qr().q();
        DVector::from_fn(design.nrows(), |i, _| q.row(i).norm_squared())
    }

    #[test]
    fn exact_hat_diagonal_matches_qr_and_sums_to_k() {
        let (a, b) = data();
        let cp = CrossProducts::direct(&[a.clone(), b.clone()]).unwrap();
        // All predictors at agency 0: it computes h exactly.
        let fit = OlsFit::fit(&cp, 3, &[0, 1], true).unwrap();
        let h = hat_diagonal(&fit, &a).unwrap();
        let design = DMatrix::from_fn(40, 3, |i, j| if j == 0 { 1.0 } else { a[(i, j - 1)] });
        assert!((&h - direct_hat(&design)).amax() < REGRESSION_AGREEMENT);
        assert!((h.sum() - 3.0).abs() < REGRESSION_AGREEMENT);
        assert!((&h - local_leverage(&a, true).unwrap()).amax() < REGRESSION_AGREEMENT);
        assert_eq!(
            hat_diagonal(&fit, &b.columns(0, 1).into_owned()).unwrap_err(),
            LeverageError::Shape {
                what: "columns",
                expected: 2,
                found: 1
            }
        );
    }

    /// Predictors split between the agencies: the bounds from local leverages and securely
    /// summed shares contain the exact leverages, and the outlying subject 0 is certainly high.
    #[test]
    fn bounds_contain_the_exact_leverages() {
        let (a, b) = data();
        let cp = CrossProducts::direct(&[a.clone(), b.clone()]).unwrap();
        let fit = OlsFit::fit(&cp, 3, &[0, 1, 2], true).unwrap();
        let design = DMatrix::from_fn(40, 4, |i, j| match j {
            0 => 1.0,
            1 | 2 => a[(i, j - 1)],
            _ => b[(i, 0)],
        });
        let exact = direct_hat(&design);

        let own_b = b.columns(0, 1).into_owned();
        let local = [
            local_leverage(&a, true).unwrap(),
            local_leverage(&own_b, true).unwrap(),
        ];
        let share_b = leverage_share(&fit, &b, &[2, 3], true).unwrap();
        let share_a = leverage_share(&fit, &a, &[0, 1], false).unwrap();
        let mut rng = Key::teaching(6).stream(StreamId::Scratch(6)).rng();
        let summed = secure_sum(&[share_b, share_a], &mut rng).unwrap();
        let bounds = LeverageBounds::new(&local, &summed).unwrap();
        let slack = REGRESSION_AGREEMENT + 4.0 * SECURE_SUM_PER_SHARE;
        for i in 0..40 {
            assert!(bounds.lower()[i] <= exact[i] + slack, "subject {i}: lower");
            assert!(exact[i] <= bounds.upper()[i] + slack, "subject {i}: upper");
        }
        let cutoff = high_leverage_cutoff(&fit);
        assert!((cutoff - 0.2).abs() < REGRESSION_AGREEMENT);
        assert!(exact[0] > cutoff);
        let counts = bounds.classify(cutoff);
        assert!(counts.high >= 1, "{counts:?}");
        assert_eq!(counts.high + counts.low + counts.undetermined, 40);
        assert_eq!(
            LeverageBounds::new(&[], &summed).unwrap_err(),
            LeverageError::Inconsistent { subjects: 40 }
        );
    }

    #[test]
    fn dependent_local_design_is_refused() {
        let block = DMatrix::from_fn(10, 1, |_, _| 3.0);
        assert_eq!(
            local_leverage(&block, true).unwrap_err(),
            LeverageError::DependentColumn { column: 1 }
        );
    }
}
