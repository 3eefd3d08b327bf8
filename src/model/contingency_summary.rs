//! A contingency table as the analyst view shows it (from `orthomask_stats::contingency`):
//! counts, χ², Fisher's exact test. Its own module because both the analysis and the data
//! package's labelled tables ([`super::labels`]) make them.

use orthomask_stats::contingency::ContingencyTable;
use serde::{Deserialize, Serialize};

/// Largest number of contingency tables shown when no pair is chosen.
pub const MAX_TABLES: usize = 6;

/// A contingency table of two binary columns, from their cross-products.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSummary {
    /// Row factor.
    pub rows: String,
    /// Column factor.
    pub columns: String,
    /// Row level names.
    pub row_levels: Vec<String>,
    /// Column level names.
    pub column_levels: Vec<String>,
    /// Counts, row by row.
    pub counts: Vec<Vec<f64>>,
    /// Records.
    pub n: usize,
    /// Largest distance of a cell from its integer count before rounding.
    pub rounding_residual: Option<f64>,
    /// Pearson χ² and its p-value, when defined.
    pub chi_square: Option<(f64, f64)>,
    /// The counts as integers (a release of 0/1 columns gives them to within rounding): what
    /// the page prints, so no cell shows `6.0000000001` or `-0`.
    pub integer_counts: Option<Vec<Vec<u64>>>,
    /// Smallest expected count under independence (χ² is unreliable below 5).
    pub smallest_expected: Option<f64>,
    /// Fisher's exact test of a 2×2 table of integer counts, as R's `fisher.test` reports it.
    pub fisher: Option<FisherSummary>,
}

/// Fisher's exact test: two-sided p-value, conditional maximum-likelihood odds ratio and its
/// 95 % interval (`orthomask_stats::fisher`, the numbers of R's `fisher.test`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FisherSummary {
    /// Two-sided p-value.
    pub p_value: f64,
    /// Conditional MLE of the odds ratio (`None`: +∞, which JSON cannot carry between the
    /// worker and the page).
    pub odds_ratio: Option<f64>,
    /// Lower end of the 95 % interval.
    pub ci_low: f64,
    /// Upper end of the 95 % interval (`None`: +∞).
    pub ci_high: Option<f64>,
}

impl TableSummary {
    pub(crate) fn from_table(t: &ContingencyTable) -> Self {
        let association = t.association().ok();
        Self {
            rows: t.row_factor().to_owned(),
            columns: t.column_factor().to_owned(),
            row_levels: t.row_levels().to_vec(),
            column_levels: t.column_levels().to_vec(),
            counts: t.rows(),
            n: t.n(),
            rounding_residual: t.rounding_residual(),
            chi_square: association.as_ref().map(|a| (a.chi_square(), a.p_value())),
            integer_counts: t.integer_counts(),
            smallest_expected: association.as_ref().map(|a| a.smallest_expected()),
            fisher: association
                .as_ref()
                .and_then(|a| a.fisher())
                .map(|f| FisherSummary {
                    p_value: f.p_value(),
                    odds_ratio: Some(f.odds_ratio()).filter(|v| v.is_finite()),
                    ci_low: f.ci_low(),
                    ci_high: Some(f.ci_high()).filter(|v| v.is_finite()),
                }),
        }
    }
}
