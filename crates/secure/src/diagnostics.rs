//! Residual diagnostics that keep each agency's data at home (seed 001 §3.2).
//!
//! What is computed, and by whom:
//!
//! 1. **Residual–attribute correlations** ([`residual_correlations`]), by *any* agency from the
//!    shared cross-products and `β̂` alone: `D_jᵀE₀ = D_jᵀD_i − D_jᵀD₀β̂`, `1ᵀE₀` and `E₀ᵀE₀ = RSS`
//!    are all entries of the cross-product matrix, so the "secure matrix product" §3.2 asks for
//!    is the one already run during [`assembly`](crate::assembly). Note that with an intercept the
//!    correlation with every attribute *in* the model is zero by the normal equations
//!    (`D₀ᵀE₀ = 0`); §3.2's remark that "these correlations will be far from zero" when the model
//!    fits poorly can only concern attributes *outside* `D₀`. Agencies that want to probe for
//!    curvature or interactions add the transformed columns (`D_j²`, `D_j D_k` within one agency)
//!    to their blocks before the assembly; their correlations with the residuals then come out
//!    here.
//! 2. **Fitted values** `D₀β̂₀`, by the holder of the response: each agency computes its part
//!    `Σ_{j ∈ a} β̂_j D_j` locally ([`fitted_share`]), and the parts are added by
//!    [`secure_sum`](crate::secure_sum) with the response holder as initiator, so that it alone
//!    learns `D₀β̂₀` (§3.2, "Alternatively … secure summation protocol").
//! 3. **Residual summary** ([`ResidualSummary`]), by the holder of the response from
//!    `E₀ = D_i − D₀β̂₀`, which it keeps: the number of standardised residuals beyond a threshold
//!    (the outlier count §3.2 says may be reported) and the correlation of the normal quantile plot
//!    (a one-number summary of the plot §3.2 describes).

use crate::cross_products::{CrossProducts, CrossProductsError};
use crate::regression::{OlsFit, Term};
use nalgebra::{DMatrix, DVector};
use statrs::distribution::{ContinuousCDF, Normal};

/// Errors of the diagnostics.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DiagnosticsError {
    /// The fit was not computed from these cross-products.
    #[error("the fit refers to column {column}, which these cross-products do not have")]
    ForeignFit {
        /// The missing column.
        column: usize,
    },
    /// Indexing the cross-products failed.
    #[error(transparent)]
    CrossProducts(#[from] CrossProductsError),
    /// The residuals have no variation (a perfect fit), so correlations are undefined.
    #[error("the residuals have no variation; correlations with them are undefined")]
    NoResidualVariation,
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
    /// A standard normal distribution could not be built (it cannot fail).
    #[error("normal distribution: {0}")]
    Distribution(String),
}

/// Correlation of the residuals with one attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidualCorrelation {
    /// The attribute (global column index).
    pub column: usize,
    /// Whether it is a predictor of the model (then the correlation is 0 with an intercept).
    pub in_model: bool,
    /// Sample correlation of `E₀` and `D_j`.
    pub correlation: f64,
}

/// Sample correlations of the residuals `E₀` with every attribute other than the response,
/// computed from the cross-products (see the [module documentation](self)). Constant attributes
/// are left out (their correlation is undefined).
///
/// # Formula
/// With `X` the cross-products (centred `C` for a model with an intercept, raw `DᵀD` without),
/// `s` the column sums (taken as 0 in the centred case) and `T` the slope terms:
/// `s_jE = X_{j,i} − Σ_{t∈T} β̂_t X_{j,t}`, `s_E = s_i − Σ_{t∈T} β̂_t s_t`, and
/// `corr = (s_jE − s_E s_j/n) / √((RSS − s_E²/n)(X_jj − s_j²/n))`.
///
/// # Errors
/// [`DiagnosticsError::ForeignFit`], [`DiagnosticsError::NoResidualVariation`].
pub fn residual_correlations(
    cross_products: &CrossProducts,
    fit: &OlsFit,
) -> Result<Vec<ResidualCorrelation>, DiagnosticsError> {
    let m = cross_products.columns();
    if fit.response() >= m {
        return Err(DiagnosticsError::ForeignFit {
            column: fit.response(),
        });
    }
    let intercept = fit.has_intercept();
    // Slope terms (global columns) and their coefficients; the intercept is absorbed by centring.
    let mut slopes = Vec::new();
    for (term, &beta) in fit.terms().iter().zip(fit.coefficients().iter()) {
        match *term {
            Term::Intercept => {}
            Term::Column(c) if c < m => slopes.push((c, beta)),
            Term::Column(c) => return Err(DiagnosticsError::ForeignFit { column: c }),
        }
    }
    let all: Vec<usize> = (0..m).collect();
    // With an intercept everything is centred (sums are then zero); without, raw.
    let (cross, sums) = if intercept {
        (
            cross_products
                .centred(&all)
                .map_err(|_| DiagnosticsError::ForeignFit { column: m })?,
            DVector::zeros(m),
        )
    } else {
        (
            cross_products
                .raw(&all)
                .map_err(|_| DiagnosticsError::ForeignFit { column: m })?,
            cross_products.sums().clone(),
        )
    };
    let n = cross_products.subjects() as f64;
    let response = fit.response();
    let with_residual = |row: &dyn Fn(usize) -> f64| {
        row(response) - slopes.iter().map(|&(t, b)| b * row(t)).sum::<f64>()
    };
    let residual_sum = with_residual(&|t| sums[t]);
    let residual_variation = fit.residual_sum_of_squares() - residual_sum * residual_sum / n;
    if residual_variation.is_nan() || residual_variation <= 0.0 {
        return Err(DiagnosticsError::NoResidualVariation);
    }
    let mut out = Vec::new();
    for column in (0..m).filter(|&c| c != response) {
        let variation = cross[(column, column)] - sums[column] * sums[column] / n;
        let size = cross[(column, column)].abs();
        if variation.is_nan() || variation <= f64::EPSILON * size {
            continue;
        }
        let covariation = with_residual(&|t| cross[(column, t)]) - residual_sum * sums[column] / n;
        out.push(ResidualCorrelation {
            column,
            in_model: slopes.iter().any(|&(t, _)| t == column),
            correlation: covariation / (residual_variation * variation).sqrt(),
        });
    }
    Ok(out)
}

/// One agency's part of the fitted values, `Σ_k β̂_{columns[k]} block[:, k]`, plus `β̂₀` when
/// `include_intercept` (exactly one agency, normally the response holder, includes it).
/// `columns[k]` is the global index of the block's column `k`; columns not in the model add
/// nothing.
///
/// # Errors
/// [`DiagnosticsError::Shape`] when the block does not have `n` rows or `columns.len()` columns.
pub fn fitted_share(
    fit: &OlsFit,
    block: &DMatrix<f64>,
    columns: &[usize],
    include_intercept: bool,
) -> Result<DVector<f64>, DiagnosticsError> {
    if block.nrows() != fit.subjects() {
        return Err(DiagnosticsError::Shape {
            what: "rows of the block",
            expected: fit.subjects(),
            found: block.nrows(),
        });
    }
    if block.ncols() != columns.len() {
        return Err(DiagnosticsError::Shape {
            what: "columns of the block",
            expected: columns.len(),
            found: block.ncols(),
        });
    }
    let mut share = DVector::zeros(block.nrows());
    if include_intercept && let Some(t) = fit.position(Term::Intercept) {
        share.add_scalar_mut(fit.coefficients()[t]);
    }
    for (k, &column) in columns.iter().enumerate() {
        if let Some(t) = fit.position(Term::Column(column)) {
            share.axpy(fit.coefficients()[t], &block.column(k), 1.0);
        }
    }
    Ok(share)
}

/// What the response holder reports about its residuals without revealing them.
#[derive(Clone, Debug, PartialEq)]
pub struct ResidualSummary {
    standardised: Vec<f64>,
    residual_sum_of_squares: f64,
    normal_probability_correlation: f64,
}

impl ResidualSummary {
    /// Summarise `residuals` (`E₀`, length `n`) of `fit`.
    ///
    /// # Formula
    /// Standardised residuals `e_i / σ̂` with `σ̂² = RSS/(n − k)` from the fit (the
    /// "semistudentised" residuals of Kutner et al., *Applied Linear Statistical Models*; the
    /// studentised ones need the leverages, see [`leverage`](crate::leverage)). The normal
    /// probability plot correlation is the sample correlation of the sorted residuals with the
    /// normal scores `Φ⁻¹((i − 3/8)/(n + 1/4))` (Blom 1958); it is near 1 when the plot is a
    /// straight line (Filliben 1975, Technometrics 17(1)).
    ///
    /// # Example (by hand)
    /// Residuals `(−½, 1, −½)`: sorted `(−½, −½, 1)`, scores `(−c, 0, c)`, so the correlation is
    /// `(½c + c) / (√(3/2)·√2·c) = √3/2` whatever `c`.
    ///
    /// # Errors
    /// [`DiagnosticsError::Shape`] when `residuals` does not have `n` entries.
    pub fn new(residuals: &DVector<f64>, fit: &OlsFit) -> Result<Self, DiagnosticsError> {
        let n = fit.subjects();
        if residuals.len() != n {
            return Err(DiagnosticsError::Shape {
                what: "residuals",
                expected: n,
                found: residuals.len(),
            });
        }
        let sigma = fit.sigma_squared().sqrt();
        let standardised = residuals.iter().map(|e| e / sigma).collect();
        let normal =
            Normal::new(0.0, 1.0).map_err(|e| DiagnosticsError::Distribution(e.to_string()))?;
        let mut sorted: Vec<f64> = residuals.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let scores: Vec<f64> = (1..=n)
            .map(|i| normal.inverse_cdf((i as f64 - 0.375) / (n as f64 + 0.25)))
            .collect();
        Ok(Self {
            standardised,
            residual_sum_of_squares: residuals.norm_squared(),
            normal_probability_correlation: correlation(&sorted, &scores),
        })
    }

    /// The number of subjects whose standardised residual exceeds `threshold` in absolute value
    /// (e.g. 3).
    pub fn count_beyond(&self, threshold: f64) -> usize {
        self.standardised
            .iter()
            .filter(|z| z.abs() > threshold)
            .count()
    }

    /// `E₀ᵀE₀` from the residuals themselves; it should match the fit's RSS from cross-products,
    /// a check that the secure summation and the assembly agree.
    pub fn residual_sum_of_squares(&self) -> f64 {
        self.residual_sum_of_squares
    }

    /// Correlation of the normal probability plot.
    pub fn normal_probability_correlation(&self) -> f64 {
        self.normal_probability_correlation
    }
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    sab / (saa * sbb).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::assemble;
    use crate::secure_sum::secure_sum;
    use crate::tolerance::{HAND_COMPUTED, REGRESSION_AGREEMENT, SECURE_SUM_PER_SHARE};
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    /// Agency 0: x and a quadratic probe x²; agency 1: y = 1 + x + 0.5 x² + noise.
    fn data() -> (DMatrix<f64>, DMatrix<f64>) {
        let n = 60;
        let mut rng = Key::teaching(3).stream(StreamId::Scratch(4000)).rng();
        let mut noise = vec![0.0; 2 * n];
        fill_standard_normal(&mut rng, &mut noise);
        let a = DMatrix::from_fn(n, 2, |i, j| {
            let x = noise[i];
            if j == 0 { x } else { x * x }
        });
        let b = DMatrix::from_fn(n, 1, |i, _| {
            1.0 + a[(i, 0)] + 0.5 * a[(i, 1)] + 0.3 * noise[n + i]
        });
        (a, b)
    }

    /// The linear model misses the curvature: residuals correlate with the probe x², not with x
    /// (in the model), and the cross-product formula agrees with residuals computed directly.
    #[test]
    fn residual_correlations_match_direct_residuals() {
        let (a, b) = data();
        let assembly = assemble(&[a.clone(), b.clone()], |g, p| {
            Key::teaching(80 + g as u64).stream(StreamId::Scratch(p as u64))
        })
        .unwrap();
        let cp = assembly.cross_products();
        let fit = OlsFit::fit(cp, 2, &[0], true).unwrap();
        let correlations = residual_correlations(cp, &fit).unwrap();
        assert_eq!(correlations.len(), 2);
        let beta = fit.coefficients();
        let residuals = DVector::from_fn(60, |i, _| b[(i, 0)] - beta[0] - beta[1] * a[(i, 0)]);
        for rc in &correlations {
            let probe: Vec<f64> = a.column(rc.column).iter().copied().collect();
            let direct = correlation(residuals.as_slice(), &probe);
            assert!(
                (rc.correlation - direct).abs() < REGRESSION_AGREEMENT,
                "{rc:?} vs {direct}"
            );
        }
        assert!(
            correlations[0].in_model && correlations[0].correlation.abs() < REGRESSION_AGREEMENT
        );
        assert!(!correlations[1].in_model && correlations[1].correlation > 0.5);
    }

    /// Fitted values assembled by secure summation of local shares equal D₀β̂, and the residual
    /// sum of squares from them matches the fit's.
    #[test]
    fn fitted_values_by_secure_summation() {
        let (a, b) = data();
        let cp = CrossProducts::direct(&[a.clone(), b.clone()]).unwrap();
        let fit = OlsFit::fit(&cp, 2, &[0, 1], true).unwrap();
        // Agency 1 (response holder) has no predictor; it initiates and adds the intercept.
        let share_b = fitted_share(&fit, &b, &[2], true).unwrap();
        let share_a = fitted_share(&fit, &a, &[0, 1], false).unwrap();
        let mut rng = Key::teaching(9).stream(StreamId::Scratch(9)).rng();
        let fitted = secure_sum(&[share_b, share_a], &mut rng).unwrap();
        let beta = fit.coefficients();
        let direct = DVector::from_fn(60, |i, _| {
            beta[0] + beta[1] * a[(i, 0)] + beta[2] * a[(i, 1)]
        });
        assert!(
            (&fitted - &direct).amax()
                <= 2.0 * SECURE_SUM_PER_SHARE + HAND_COMPUTED * direct.amax()
        );
        let residuals = b.column(0) - fitted;
        let summary = ResidualSummary::new(&residuals, &fit).unwrap();
        let rss = fit.residual_sum_of_squares();
        assert!((summary.residual_sum_of_squares() - rss).abs() < REGRESSION_AGREEMENT * rss);
        // The true model is fitted and the noise is normal: a straight probability plot.
        assert!(summary.normal_probability_correlation() > 0.95);
        assert!(matches!(
            fitted_share(&fit, &a, &[0], false),
            Err(DiagnosticsError::Shape {
                what: "columns of the block",
                ..
            })
        ));
    }

    /// The example of [`ResidualSummary::new`], and outlier counts on the hand regression
    /// x = (1, 2, 3), y = (1, 3, 2) with σ̂ = √(3/2): standardised residuals
    /// (−½, 1, −½)/√(3/2) ≈ (−0.41, 0.82, −0.41).
    #[test]
    fn residual_summary_by_hand() {
        let cp = CrossProducts::direct(&[
            DMatrix::from_column_slice(3, 1, &[1.0, 2.0, 3.0]),
            DMatrix::from_column_slice(3, 1, &[1.0, 3.0, 2.0]),
        ])
        .unwrap();
        let fit = OlsFit::fit(&cp, 1, &[0], true).unwrap();
        let summary =
            ResidualSummary::new(&DVector::from_row_slice(&[-0.5, 1.0, -0.5]), &fit).unwrap();
        assert!(
            (summary.normal_probability_correlation() - 3f64.sqrt() / 2.0).abs() < HAND_COMPUTED
        );
        assert_eq!(summary.count_beyond(0.5), 1);
        assert_eq!(summary.count_beyond(0.3), 3);
        assert_eq!(summary.count_beyond(1.0), 0);
        assert!(matches!(
            ResidualSummary::new(&DVector::zeros(2), &fit),
            Err(DiagnosticsError::Shape {
                what: "residuals",
                expected: 3,
                found: 2
            })
        ));
    }
}
