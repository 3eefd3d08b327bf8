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
    use crate::manifest::{Provenance, Released, build};
    use crate::plan::{CohortBounds, Plan, PlanRequest};
    use crate::tolerance::HAND_COMPUTED;
    use orthomask_core::protocol::QaReport;
    use orthomask_formats::manifest::Cohorts;

    /// The manifest the builder writes for a release of one answer column and QA.
    fn manifest() -> Manifest {
        let cohorts = CohortBounds {
            smallest: 3,
            largest: 3,
        };
        let plan = Plan::new(&PlanRequest::new(1, Some(888.0), cohorts, 888.0)).unwrap();
        let columns = vec!["a".to_owned(), "QA".to_owned()];
        let data = DMatrix::from_row_slice(3, 2, &[1.0, 888.0, 0.0, 888.0, 1.0, 888.0]);
        let qa = [QaReport {
            constant: 888.0,
            max_deviation: 0.0,
            tolerance: 1e-9,
            worst: 0,
        }];
        let released = Released {
            columns: &columns,
            data: &data,
            qa: &qa,
            decimals: None,
        };
        let provenance = Provenance::modified(
            Cohorts {
                size: None,
                sizes: vec![3],
            },
            vec!["a".into()],
        );
        build(&plan, &released, provenance)
    }

    #[test]
    fn expectations_check_shapes() {
        let mut m = manifest();
        let e = expectations(&m, "m.json").unwrap();
        assert_eq!(e.cross_products.shape(), (2, 2));
        // a = (1, 0, 1): mean 2/3, Σa² = 2, Σa·888 = 1 776.
        assert!((e.means[0] - 2.0 / 3.0).abs() < HAND_COMPUTED);
        assert!((e.cross_products[(0, 0)] - 2.0).abs() < HAND_COMPUTED);
        assert!((e.cross_products[(0, 1)] - 1776.0).abs() < HAND_COMPUTED * 1776.0);
        assert!(
            e.qa_constant
                .is_some_and(|c| (c - 888.0).abs() < HAND_COMPUTED)
        );
        m.cross_products = vec![vec![1.0, 2.0]];
        let error = expectations(&m, "m.json").unwrap_err().to_string();
        assert!(error.starts_with("m.json: not a valid manifest") && error.contains("2 × 2"));
        let mut m = manifest();
        m.column_means.pop();
        assert!(expectations(&m, "m.json").is_err());
    }
}
