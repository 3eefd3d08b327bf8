//! What a manifest promises, in the terms of the audit checks (`orthomask_stats::audit`): the
//! bridge between the format and the statistics, so neither depends on the other.

use nalgebra::DMatrix;
use orthomask_formats::manifest::Manifest;
use orthomask_stats::audit::Expected;

/// A manifest whose recorded statistics do not fit its own columns.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{source_name}: not a valid manifest: {reason}")]
pub struct ExpectationError {
    /// File name or URL of the manifest.
    pub source_name: String,
    /// What does not fit.
    pub reason: String,
}

/// The audit's expectations from a manifest read from `source_name`.
///
/// # Errors
/// [`ExpectationError`] when the recorded means or cross-products do not match its columns.
pub fn expectations(manifest: &Manifest, source_name: &str) -> Result<Expected, ExpectationError> {
    let p = manifest.columns.len();
    let bad = |reason: String| ExpectationError {
        source_name: source_name.to_owned(),
        reason,
    };
    if manifest.cross_products.len() != p || manifest.cross_products.iter().any(|r| r.len() != p) {
        return Err(bad(format!(
            "cross_products must be {p} × {p} for its {p} columns"
        )));
    }
    if manifest.column_means.len() != p {
        return Err(bad(format!(
            "{} column means for {p} columns",
            manifest.column_means.len()
        )));
    }
    Ok(Expected {
        n: manifest.n,
        columns: manifest.columns.clone(),
        means: manifest.column_means.iter().map(|c| c.mean).collect(),
        cross_products: DMatrix::from_fn(p, p, |i, j| manifest.cross_products[i][j]),
        qa_constant: manifest.qa.as_ref().map(|q| q.constant),
        binary_columns: manifest.binary_columns.clone(),
        kept_columns: manifest.kept_columns.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::HAND_COMPUTED;
    use orthomask_formats::manifest::{Cohorts, ColumnMean, Generator, Method, Qa, RightMask};

    fn manifest() -> Manifest {
        Manifest {
            orthomask_version: "0".into(),
            method: Method::Modified,
            n: 3,
            p1: 1,
            p2: 4,
            columns: vec!["a".into()],
            sigma: 1.5,
            x_max: Some(888.0),
            x_max_source: None,
            appendix_c: None,
            condition_3_7_margin: None,
            cohorts: Cohorts {
                size: None,
                sizes: vec![3],
            },
            right_mask: RightMask::Haar,
            generator: Generator::Chacha,
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
            teaching_keys: false,
            warnings: vec![],
        }
    }

    #[test]
    fn expectations_check_shapes() {
        let mut m = manifest();
        let e = expectations(&m, "m.json").unwrap();
        assert_eq!(e.cross_products.shape(), (1, 1));
        assert!(
            e.qa_constant
                .is_some_and(|c| (c - 888.0).abs() < HAND_COMPUTED)
        );
        m.cross_products = vec![vec![1.0, 2.0]];
        let error = expectations(&m, "m.json").unwrap_err().to_string();
        assert!(error.starts_with("m.json: not a valid manifest") && error.contains("1 × 1"));
        m.cross_products = vec![vec![1.0]];
        m.column_means.clear();
        assert!(expectations(&m, "m.json").is_err());
    }
}
