//! Tests and measures of association on a table of counts: Pearson's χ² (with Yates'
//! continuity correction for 2×2), odds ratio and relative risk with 95% confidence intervals,
//! and, for 2×2 tables of integer counts, Fisher's exact test ([`crate::fisher`]), which is the
//! test to read when an expected count is below [`SMALL_EXPECTED_COUNT`].
//!
//! On a table recovered from a masked release ([`contingency`](crate::contingency)) these are
//! identical to the raw data's, because the counts are (seed 003 §2.1: "the usual analysis,
//! including the chi-squared test and estimation of relative risk and odds ratio, will yield
//! identical results").
//!
//! # 2×2 layout
//! `[[t₀₀, t₀₁], [t₁₀, t₁₁]]` with the first row the exposed group and the first column the
//! outcome of interest (seed 003 Table 6: LTP first, "Yes" first; statsmodels `Table2x2`).
//!
//! # Zero cells
//! The odds ratio, relative risk and their intervals use the Haldane–Anscombe correction:
//! when any cell is 0, 0.5 is added to **every** cell before estimating (Agresti 2013,
//! *Categorical Data Analysis* §3.1.1); [`RatioEstimate::zero_cell_shift`] tells when it
//! happened. The χ² tests always use the counts as they are. (statsmodels 0.15's
//! `Table2x2(shift_zeros=True)` instead replaces only the zero cells by 0.5.)

use nalgebra::DMatrix;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

use crate::fisher::FisherExact;
use crate::inference::CONFIDENCE_LEVEL;

/// The χ² approximation is considered unreliable when an expected count is below this
/// (Cochran's rule, the condition under which R's `chisq.test` warns "Chi-squared approximation
/// may be incorrect"); Fisher's exact test is then the one to report.
pub const SMALL_EXPECTED_COUNT: f64 = 5.0;

/// Errors of the association measures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssociationError {
    /// Fewer than 2 rows or columns.
    #[error(
        "a {rows}×{columns} table has no association to test; it needs at least 2 rows and 2 columns"
    )]
    TooSmall {
        /// Rows.
        rows: usize,
        /// Columns.
        columns: usize,
    },
    /// A count is negative or not finite.
    #[error("cell ({row}, {column}) (1-based) is {value}; counts must be finite and non-negative")]
    BadCount {
        /// 1-based row.
        row: usize,
        /// 1-based column.
        column: usize,
        /// The value.
        value: f64,
    },
    /// A row or column total is zero, so expected counts vanish.
    #[error(
        "{axis} {index} (1-based) has total 0, so its expected counts are 0 and the χ² test is undefined; drop that level"
    )]
    EmptyMargin {
        /// "row" or "column".
        axis: &'static str,
        /// 1-based index.
        index: usize,
    },
}

/// A χ² test of independence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChiSquareTest {
    statistic: f64,
    df: usize,
    p_value: f64,
    continuity_corrected: bool,
}

impl ChiSquareTest {
    /// The χ² statistic.
    pub fn statistic(&self) -> f64 {
        self.statistic
    }

    /// Degrees of freedom `(r − 1)(c − 1)`.
    pub fn df(&self) -> usize {
        self.df
    }

    /// Upper-tail p-value `P(χ²_df ≥ statistic)`.
    pub fn p_value(&self) -> f64 {
        self.p_value
    }

    /// Whether Yates' continuity correction was applied.
    pub fn continuity_corrected(&self) -> bool {
        self.continuity_corrected
    }
}

/// A ratio measure (odds ratio or relative risk) with its Wald interval on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioEstimate {
    estimate: f64,
    log_std_error: f64,
    ci_low: f64,
    ci_high: f64,
    zero_cell_shift: bool,
}

impl RatioEstimate {
    fn new(estimate: f64, log_std_error: f64, zero_cell_shift: bool) -> Self {
        let z = normal_quantile();
        Self {
            estimate,
            log_std_error,
            ci_low: (estimate.ln() - z * log_std_error).exp(),
            ci_high: (estimate.ln() + z * log_std_error).exp(),
            zero_cell_shift,
        }
    }

    /// Point estimate.
    pub fn estimate(&self) -> f64 {
        self.estimate
    }

    /// Standard error of the log estimate.
    pub fn log_std_error(&self) -> f64 {
        self.log_std_error
    }

    /// Lower end of the 95% interval, `exp(log estimate − 1.96·SE)`.
    pub fn ci_low(&self) -> f64 {
        self.ci_low
    }

    /// Upper end of the 95% interval, `exp(log estimate + 1.96·SE)`.
    pub fn ci_high(&self) -> f64 {
        self.ci_high
    }

    /// Whether 0.5 was added to every cell because some cell was 0.
    pub fn zero_cell_shift(&self) -> bool {
        self.zero_cell_shift
    }
}

/// The 97.5% standard normal quantile (1.959963984540054).
fn normal_quantile() -> f64 {
    Normal::standard().inverse_cdf(1.0 - (1.0 - CONFIDENCE_LEVEL) / 2.0)
}

/// χ² tests and, for 2×2 tables, odds ratio and relative risk.
#[derive(Debug, Clone, PartialEq)]
pub struct Association {
    expected: DMatrix<f64>,
    pearson: ChiSquareTest,
    yates: Option<ChiSquareTest>,
    odds_ratio: Option<RatioEstimate>,
    relative_risk: Option<RatioEstimate>,
    fisher: Option<FisherExact>,
}

impl Association {
    /// Analyse an `r × c` table of counts (integers or real cross-product counts).
    ///
    /// # Formula
    /// * Expected counts `E_ij = R_i·C_j / N` (row and column totals, grand total).
    /// * Pearson: `X² = Σ (O_ij − E_ij)² / E_ij ~ χ²_{(r−1)(c−1)}`.
    /// * Yates (2×2 only): `X²_Y = Σ (|O_ij − E_ij| − h)² / E_ij` with
    ///   `h = min(0.5, min_ij |O_ij − E_ij|)`, the form of R's `chisq.test` and scipy's
    ///   `chi2_contingency(correction=True)`.
    /// * Odds ratio (2×2): `OR = t₀₀t₁₁ / (t₀₁t₁₀)`, Woolf's
    ///   `SE(log OR) = √(1/t₀₀ + 1/t₀₁ + 1/t₁₀ + 1/t₁₁)`.
    /// * Relative risk (2×2): `RR = [t₀₀/(t₀₀ + t₀₁)] / [t₁₀/(t₁₀ + t₁₁)]`,
    ///   `SE(log RR) = √(1/t₀₀ − 1/(t₀₀ + t₀₁) + 1/t₁₀ − 1/(t₁₀ + t₁₁))` (Katz et al. 1978).
    /// * Intervals: `exp(log ratio ∓ z₀.₉₇₅·SE)`; zero cells handled as in the module docs.
    ///
    /// # Errors
    /// [`AssociationError::TooSmall`], [`AssociationError::BadCount`],
    /// [`AssociationError::EmptyMargin`].
    pub fn new(counts: &DMatrix<f64>) -> Result<Self, AssociationError> {
        let (r, c) = counts.shape();
        if r < 2 || c < 2 {
            return Err(AssociationError::TooSmall {
                rows: r,
                columns: c,
            });
        }
        for i in 0..r {
            for j in 0..c {
                let value = counts[(i, j)];
                if !(value.is_finite() && value >= 0.0) {
                    return Err(AssociationError::BadCount {
                        row: i + 1,
                        column: j + 1,
                        value,
                    });
                }
            }
        }
        let row_totals: Vec<f64> = counts.row_iter().map(|row| row.sum()).collect();
        let column_totals: Vec<f64> = counts.column_iter().map(|col| col.sum()).collect();
        for (axis, totals) in [("row", &row_totals), ("column", &column_totals)] {
            if let Some(k) = totals.iter().position(|&t| t <= 0.0) {
                return Err(AssociationError::EmptyMargin { axis, index: k + 1 });
            }
        }
        let total: f64 = row_totals.iter().sum();
        let expected = DMatrix::from_fn(r, c, |i, j| row_totals[i] * column_totals[j] / total);
        let df = (r - 1) * (c - 1);
        let deviations = counts - &expected;

        let chi_square = |shift: f64| -> f64 {
            deviations
                .iter()
                .zip(expected.iter())
                .map(|(d, e)| {
                    let gap = d.abs() - shift;
                    gap * gap / e
                })
                .sum()
        };
        let test = |statistic: f64, continuity_corrected: bool| {
            // df ≥ 1 here, so the distribution exists; a NaN p-value cannot arise from it.
            let p_value = ChiSquared::new(df as f64).map_or(f64::NAN, |d| d.sf(statistic));
            ChiSquareTest {
                statistic,
                df,
                p_value,
                continuity_corrected,
            }
        };
        let pearson = test(chi_square(0.0), false);

        let (yates, odds_ratio, relative_risk) = if (r, c) == (2, 2) {
            let smallest = deviations.iter().fold(f64::INFINITY, |m, d| m.min(d.abs()));
            let yates = test(chi_square(smallest.min(0.5)), true);
            let shift = counts.iter().any(|&t| t == 0.0);
            let t = if shift {
                counts.add_scalar(0.5)
            } else {
                counts.clone()
            };
            let (t00, t01, t10, t11) = (t[(0, 0)], t[(0, 1)], t[(1, 0)], t[(1, 1)]);
            let odds_ratio = RatioEstimate::new(
                t00 * t11 / (t01 * t10),
                (1.0 / t00 + 1.0 / t01 + 1.0 / t10 + 1.0 / t11).sqrt(),
                shift,
            );
            let relative_risk = RatioEstimate::new(
                (t00 / (t00 + t01)) / (t10 / (t10 + t11)),
                (1.0 / t00 - 1.0 / (t00 + t01) + 1.0 / t10 - 1.0 / (t10 + t11)).sqrt(),
                shift,
            );
            (Some(yates), Some(odds_ratio), Some(relative_risk))
        } else {
            (None, None, None)
        };
        // Fisher's test needs integer counts (a rounded table has them exactly; real-valued
        // cross-products do not) and positive margins, which were checked above.
        let integer = |v: f64| v.fract() == 0.0 && v < u64::MAX as f64;
        let fisher = if (r, c) == (2, 2) && counts.iter().all(|&v| integer(v)) {
            let cell = |i: usize, j: usize| counts[(i, j)] as u64;
            FisherExact::new([[cell(0, 0), cell(0, 1)], [cell(1, 0), cell(1, 1)]]).ok()
        } else {
            None
        };
        Ok(Self {
            expected,
            pearson,
            yates,
            odds_ratio,
            relative_risk,
            fisher,
        })
    }

    /// Fisher's exact test (2×2 tables of integer counts only): two-sided p-value, conditional
    /// maximum-likelihood odds ratio and its exact interval, as R's `fisher.test`.
    pub fn fisher(&self) -> Option<&FisherExact> {
        self.fisher.as_ref()
    }

    /// The smallest expected count under independence.
    pub fn smallest_expected(&self) -> f64 {
        self.expected.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Whether some expected count is below [`SMALL_EXPECTED_COUNT`], so that the χ² p-values
    /// are approximations to distrust (and, for a 2×2 table, Fisher's exact test is the one to
    /// read).
    pub fn small_expected_counts(&self) -> bool {
        self.smallest_expected() < SMALL_EXPECTED_COUNT
    }

    /// Expected counts under independence.
    pub fn expected(&self) -> &DMatrix<f64> {
        &self.expected
    }

    /// Pearson's χ² test without continuity correction.
    pub fn pearson(&self) -> &ChiSquareTest {
        &self.pearson
    }

    /// Pearson's χ² with Yates' continuity correction (2×2 tables only; R's `chisq.test`
    /// default for 2×2).
    pub fn yates(&self) -> Option<&ChiSquareTest> {
        self.yates.as_ref()
    }

    /// The uncorrected Pearson statistic (the JSON `chi_square`).
    pub fn chi_square(&self) -> f64 {
        self.pearson.statistic
    }

    /// p-value of the uncorrected Pearson test (the JSON `p_value`).
    pub fn p_value(&self) -> f64 {
        self.pearson.p_value
    }

    /// Odds ratio of the first column between the first and second row (2×2 only).
    pub fn odds_ratio(&self) -> Option<&RatioEstimate> {
        self.odds_ratio.as_ref()
    }

    /// Risk of the first column in the first row relative to the second row (2×2 only).
    pub fn relative_risk(&self) -> Option<&RatioEstimate> {
        self.relative_risk.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{HAND_SOLVED_RELATIVE, REFERENCE_RELATIVE, relative_difference};

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        relative_difference(a, b) < tolerance
    }

    /// By hand: [[10, 10], [10, 10]] has E = O, so X² = 0, p = 1; Yates shift
    /// h = min(0.5, 0) = 0 keeps X² = 0; OR = RR = 1, SE(log OR) = √(4/10),
    /// SE(log RR) = √(2/10 − 2/20) = √0.1.
    #[test]
    fn independent_table_by_hand() {
        let a = Association::new(&DMatrix::from_element(2, 2, 10.0)).unwrap();
        assert!(a.chi_square().abs() < HAND_SOLVED_RELATIVE);
        assert!(close(a.p_value(), 1.0, HAND_SOLVED_RELATIVE));
        assert!(a.yates().unwrap().statistic().abs() < HAND_SOLVED_RELATIVE);
        let or = a.odds_ratio().unwrap();
        assert!(close(or.estimate(), 1.0, HAND_SOLVED_RELATIVE));
        assert!(close(
            or.log_std_error(),
            0.4f64.sqrt(),
            HAND_SOLVED_RELATIVE
        ));
        assert!(close(or.ci_low() * or.ci_high(), 1.0, HAND_SOLVED_RELATIVE));
        let rr = a.relative_risk().unwrap();
        assert!(close(
            rr.log_std_error(),
            0.1f64.sqrt(),
            HAND_SOLVED_RELATIVE
        ));
        assert!(!rr.zero_cell_shift());
        assert_eq!(a.pearson().df(), 1);
    }

    /// Reference: `[[4, 0], [3, 5]]`, scipy 1.17.1
    /// `scipy.stats.chi2_contingency(zero, correction=False)` → chi2 = 4.285714285714286,
    /// p = 0.03843393023678176; `correction=True` → chi2 = 2.0999999999999996,
    /// p = 0.1472991386226718. statsmodels 0.15.0 on the Haldane–Anscombe table,
    /// `Table2x2(zero + 0.5, shift_zeros=False)`: oddsratio = 14.142857142857142,
    /// oddsratio_confint(0.05) = (0.5682330375076177, 352.00418659322304),
    /// riskratio = 2.3142857142857145,
    /// riskratio_confint(0.05) = (0.9700214515433363, 5.5214432204829045).
    /// (Script: `tests/reference/statsmodels_reference.py`.)
    #[test]
    fn zero_cell_table_matches_scipy_and_statsmodels() {
        let a = Association::new(&DMatrix::from_row_slice(2, 2, &[4.0, 0.0, 3.0, 5.0])).unwrap();
        let r = REFERENCE_RELATIVE;
        assert!(close(a.chi_square(), 4.285714285714286, r));
        assert!(close(a.p_value(), 0.03843393023678176, r));
        let yates = a.yates().unwrap();
        assert!(yates.continuity_corrected());
        assert!(close(yates.statistic(), 2.0999999999999996, r));
        assert!(close(yates.p_value(), 0.1472991386226718, r));
        let or = a.odds_ratio().unwrap();
        assert!(or.zero_cell_shift());
        assert!(close(or.estimate(), 14.142857142857142, r));
        assert!(close(or.ci_low(), 0.5682330375076177, r));
        assert!(close(or.ci_high(), 352.00418659322304, r));
        let rr = a.relative_risk().unwrap();
        assert!(close(rr.estimate(), 2.3142857142857145, r));
        assert!(close(rr.ci_low(), 0.9700214515433363, r));
        assert!(close(rr.ci_high(), 5.5214432204829045, r));
    }

    #[test]
    fn larger_tables_have_no_ratios_and_bad_tables_are_refused() {
        let a = Association::new(&DMatrix::from_row_slice(
            2,
            3,
            &[3.0, 5.0, 4.0, 3.0, 3.0, 2.0],
        ))
        .unwrap();
        assert_eq!(a.pearson().df(), 2);
        assert!(a.yates().is_none() && a.odds_ratio().is_none() && a.relative_risk().is_none());
        assert_eq!(
            Association::new(&DMatrix::from_element(1, 3, 1.0)).unwrap_err(),
            AssociationError::TooSmall {
                rows: 1,
                columns: 3
            }
        );
        assert_eq!(
            Association::new(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 0.0, 0.0])).unwrap_err(),
            AssociationError::EmptyMargin {
                axis: "row",
                index: 2
            }
        );
        assert!(matches!(
            Association::new(&DMatrix::from_row_slice(2, 2, &[1.0, -2.0, 1.0, 1.0])),
            Err(AssociationError::BadCount {
                row: 1,
                column: 2,
                ..
            })
        ));
    }
}
