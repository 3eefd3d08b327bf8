//! The release manifest: what a release claims about itself, for analysts and auditors.
//!
//! It records the design (method, `n`, `p₁`, `p₂`, σ and its Appendix C bound, cohorts), the
//! quality-assurance result, the column means and cross-products `XᵀX` of the release (equal to
//! the raw data's), the printed precision, and warnings. It never contains a key or a raw value.

use serde::{Deserialize, Serialize};

/// The manifest written next to `release.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Version of the tool that wrote it.
    pub orthomask_version: String,
    /// `modified`, `first`, `second` or `collusion`.
    pub method: String,
    /// Participants.
    pub n: usize,
    /// Data columns including the QA column.
    pub p1: usize,
    /// Noise columns.
    pub p2: usize,
    /// Released column names, in order.
    pub columns: Vec<String>,
    /// Noise standard deviation σ (0 without padding).
    pub sigma: f64,
    /// Largest absolute data value assumed by the bound.
    pub x_max: Option<f64>,
    /// Where `x_max` came from: `declared` (`--x-max`) or `data` (simulation only).
    pub x_max_source: Option<String>,
    /// The Appendix C bound, when it applies.
    pub appendix_c: Option<AppendixC>,
    /// Smallest condition (3.5)/(3.7) margin `λ_min(X₂X₂ᵀ)/λ_max(X₁X₁ᵀ)` over cohorts (simulation
    /// only; > 1 means the condition held).
    pub condition_3_7_margin: Option<f64>,
    /// Cohort structure.
    pub cohorts: Cohorts,
    /// Right mask law: `haar` or `uniform-entries`.
    pub right_mask: String,
    /// Generator: `chacha` or `matlab`.
    pub generator: String,
    /// Columns kept unmasked (partial masking, second method).
    pub kept_columns: Vec<String>,
    /// Columns holding 0/1 answers in the raw data (auditors check their counts).
    #[serde(default)]
    pub binary_columns: Vec<String>,
    /// The quality-assurance check.
    pub qa: Option<Qa>,
    /// Column means of the release (equal to the raw means).
    pub column_means: Vec<ColumnMean>,
    /// `XᵀX` of the release, in column order (equal to the raw cross-products for row masks).
    pub cross_products: Vec<Vec<f64>>,
    /// Decimals the release was rounded to (`null`: round-trip precision).
    pub decimals: Option<u8>,
    /// Differential-privacy noise added on the devices, when used.
    pub dp: Option<DpNoise>,
    /// Whether guessable teaching keys were used.
    pub teaching_keys: bool,
    /// Warnings (unsafe designs run in teaching mode, combined releases, …).
    pub warnings: Vec<String>,
}

/// The Appendix C bound as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppendixC {
    /// Minimum σ.
    pub sigma_min: f64,
    /// Upper bound on the probability that condition (3.5) fails.
    pub failure_probability: f64,
    /// `γ = p₂ / n` of the smallest cohort.
    pub gamma: f64,
    /// δ.
    pub delta: f64,
}

/// Cohort structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cohorts {
    /// Requested cohort size (`null`: one cohort of all participants).
    pub size: Option<usize>,
    /// Actual sizes.
    pub sizes: Vec<usize>,
}

/// The QA result as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Qa {
    /// The constant `c`.
    pub constant: f64,
    /// Whether every cohort passed.
    pub passed: bool,
    /// Worst deviation seen.
    pub max_deviation: f64,
    /// Tolerance of the worst check.
    pub tolerance: f64,
}

/// One column mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnMean {
    /// Column name.
    pub name: String,
    /// Mean.
    pub mean: f64,
}

/// Device-side DP noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpNoise {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// σ of the added noise, on the [−1, 1] scale.
    pub sigma: f64,
    /// The smallest cohort `n_s` σ was calibrated for (seed 004 §4).
    pub smallest_cohort: usize,
    /// Declared range and noise standard deviation of each answer column in its own units
    /// (`σ·(hi − lo)/2`): what a bias-corrected regression subtracts.
    pub columns: Vec<DpColumn>,
}

/// One column's DP noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpColumn {
    /// Column name.
    pub name: String,
    /// Declared lower end.
    pub lo: f64,
    /// Declared upper end.
    pub hi: f64,
    /// Noise standard deviation in the column's units.
    pub sigma: f64,
}

/// Errors reading a manifest.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}: not a valid manifest: {reason}")]
pub struct ManifestError {
    /// File name.
    pub source_name: String,
    /// The JSON parser's message (with line and column).
    pub reason: String,
}

impl Manifest {
    /// Parse a manifest.
    ///
    /// # Errors
    /// [`ManifestError`] with the parser's line and column.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, ManifestError> {
        serde_json::from_str(text).map_err(|e| ManifestError {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })
    }

    /// What the manifest promises, in the terms of the audit checks
    /// ([`orthomask_stats::audit`]).
    ///
    /// # Errors
    /// [`ManifestError`] when the recorded means or cross-products do not match its columns.
    pub fn audit_expectations(
        &self,
        source_name: &str,
    ) -> Result<orthomask_stats::audit::Expected, ManifestError> {
        let p = self.columns.len();
        let bad = |reason: String| ManifestError {
            source_name: source_name.to_owned(),
            reason,
        };
        if self.cross_products.len() != p || self.cross_products.iter().any(|r| r.len() != p) {
            return Err(bad(format!(
                "cross_products must be {p} × {p} for its {p} columns"
            )));
        }
        if self.column_means.len() != p {
            return Err(bad(format!(
                "{} column means for {p} columns",
                self.column_means.len()
            )));
        }
        Ok(orthomask_stats::audit::Expected {
            n: self.n,
            columns: self.columns.clone(),
            means: self.column_means.iter().map(|c| c.mean).collect(),
            cross_products: nalgebra::DMatrix::from_fn(p, p, |i, j| self.cross_products[i][j]),
            qa_constant: self.qa.as_ref().map(|q| q.constant),
            binary_columns: self.binary_columns.clone(),
            kept_columns: self.kept_columns.clone(),
        })
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        // All fields are plain data; serialisation cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

impl Qa {
    /// The manifest's QA entry for a release checked in several cohorts: the worst check, and
    /// whether all passed (`None` without QA checks).
    pub fn summarise(reports: &[orthomask_core::protocol::QaReport]) -> Option<Self> {
        orthomask_core::protocol::QaReport::worst_of(reports).map(|worst| Self {
            constant: worst.constant,
            passed: reports
                .iter()
                .all(orthomask_core::protocol::QaReport::passed),
            max_deviation: worst.max_deviation,
            tolerance: worst.tolerance,
        })
    }
}

/// Named column means of a release, in column order.
pub fn column_means(names: &[String], data: &nalgebra::DMatrix<f64>) -> Vec<ColumnMean> {
    let (means, _) = summary_statistics(data);
    names
        .iter()
        .zip(means)
        .map(|(name, mean)| ColumnMean {
            name: name.clone(),
            mean,
        })
        .collect()
}

/// Column means and `XᵀX` of a matrix, the statistics a manifest records.
pub fn summary_statistics(data: &nalgebra::DMatrix<f64>) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = data.nrows().max(1) as f64;
    let means = data.column_iter().map(|c| c.sum() / n).collect();
    let gram = data.tr_mul(data);
    let rows = gram
        .row_iter()
        .map(|r| r.iter().copied().collect())
        .collect();
    (means, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            orthomask_version: "0".into(),
            method: "modified".into(),
            n: 3,
            p1: 2,
            p2: 4,
            columns: vec!["a".into(), "QA".into()],
            sigma: 1.5,
            x_max: Some(888.0),
            x_max_source: Some("data".into()),
            appendix_c: Some(AppendixC {
                sigma_min: 1.0,
                failure_probability: 0.1,
                gamma: 1.3,
                delta: 0.5,
            }),
            condition_3_7_margin: Some(2.0),
            cohorts: Cohorts {
                size: None,
                sizes: vec![3],
            },
            right_mask: "haar".into(),
            generator: "chacha".into(),
            kept_columns: vec![],
            binary_columns: vec!["a".into()],
            qa: Some(Qa {
                constant: 888.0,
                passed: true,
                max_deviation: 0.0,
                tolerance: 1e-6,
            }),
            column_means: vec![ColumnMean {
                name: "a".into(),
                mean: 1.0,
            }],
            cross_products: vec![vec![1.0]],
            decimals: None,
            dp: None,
            teaching_keys: true,
            warnings: vec![],
        }
    }

    #[test]
    fn round_trip() {
        let m = sample();
        assert_eq!(Manifest::parse(&m.to_json(), "m.json").unwrap(), m);
    }

    #[test]
    fn audit_expectations_check_shapes() {
        let mut m = sample();
        m.columns = vec!["a".into()];
        let e = m.audit_expectations("m.json").unwrap();
        assert_eq!(e.cross_products.shape(), (1, 1));
        assert_eq!(e.qa_constant, Some(888.0));
        m.cross_products = vec![vec![1.0, 2.0]];
        assert!(
            m.audit_expectations("m.json")
                .unwrap_err()
                .to_string()
                .contains("1 × 1")
        );
    }

    #[test]
    fn parse_errors_name_the_file() {
        let e = Manifest::parse("{\"n\": 3}", "m.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.json: not a valid manifest"), "{e}");
    }

    /// By hand: [[1, 2], [3, 4]] has means (2, 3) and XᵀX = [[10, 14], [14, 20]].
    #[test]
    fn summary_by_hand() {
        let (means, gram) = summary_statistics(&nalgebra::DMatrix::from_row_slice(
            2,
            2,
            &[1.0, 2.0, 3.0, 4.0],
        ));
        assert_eq!(means, vec![2.0, 3.0]);
        assert_eq!(gram, vec![vec![10.0, 14.0], vec![14.0, 20.0]]);
    }
}
