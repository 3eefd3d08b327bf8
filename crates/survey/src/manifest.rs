//! The one manifest builder: from a [`Plan`] and what the collector released to the
//! `manifest.json` analysts and auditors read (`orthomask_formats::manifest::Manifest`).
//!
//! `orthomask pipeline` and the data collector service both call [`build`], so a release of the
//! same design gets the same manifest from either (`crates/server/tests/manifest_agreement.rs`).
//! What the plan decided — `p₁`, `p₂`, σ, the `x_max` the bound assumed, the Appendix C bound of
//! the largest cohort (where `γ = p₂/m` is smallest and the bound binds; ARCHITECTURE.md,
//! "Cohorts"), the DP noise — is copied from the plan, never recomputed; what the release shows
//! (column means, `XᵀX`, the QA result) is computed from the release.

use crate::definition::Term;
pub use crate::plan::ShareSplit;
use crate::plan::{Plan, ReleaseAccuracy};
use crate::share_view::OneServiceView;
use nalgebra::DMatrix;
use orthomask_core::protocol::QaReport;
use orthomask_formats::manifest::{
    Cohorts, ColumnMean, ColumnUnmaskingError, Generator, Manifest, Method, Qa, ReceiptRoot,
    RightMask, ShareViewRecord, UnmaskingError, XMaxSource,
};

/// What the collector released.
#[derive(Clone, Copy, Debug)]
pub struct Released<'a> {
    /// Released column names, in order.
    pub columns: &'a [String],
    /// The released matrix (`n × p₁`).
    pub data: &'a DMatrix<f64>,
    /// The QA check of every cohort.
    pub qa: &'a [QaReport],
    /// Decimals the release was rounded to (`None`: round-trip precision).
    pub decimals: Option<u8>,
}

/// How the release was produced, beyond the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The protocol.
    pub method: Method,
    /// The law of the right mask.
    pub right_mask: RightMask,
    /// The generator of the masks.
    pub generator: Generator,
    /// Where the declared part of `x_max` came from.
    pub x_max_source: XMaxSource,
    /// The cohort rule and the cohorts released.
    pub cohorts: Cohorts,
    /// Columns kept unmasked (partial masking, second method).
    pub kept_columns: Vec<String>,
    /// Columns holding 0/1 answers in the raw data.
    pub binary_columns: Vec<String>,
    /// The condition (3.5)/(3.7) margin of this run (simulations only: nobody else sees `X₂`).
    pub condition_3_7_margin: Option<f64>,
    /// Whether guessable teaching keys were used.
    pub teaching_keys: bool,
    /// Warnings (unsafe designs run in teaching mode, withheld cohorts, …).
    pub warnings: Vec<String>,
    /// Each released cohort's checked receipt list at each accepting service (the data
    /// collector's; empty where there are no services, as in `orthomask pipeline`).
    pub receipt_roots: Vec<ReceiptRoot>,
    /// Share mode: what one right-masking service alone learns (`crate::share_view`).
    pub share_view: Option<OneServiceView>,
    /// Share mode: how the records were split (the unmasking error grows with the share noise).
    pub shares: Option<ShareSplit>,
    /// The model terms the definition declared (which released columns are `x²`, `x·z`, …).
    pub model_terms: Vec<Term>,
}

impl Provenance {
    /// The modified TM² as the services run it: a Haar right mask, ChaCha streams, a declared
    /// `x_max`, no kept columns, no margin, no teaching keys, no warnings. Callers change what
    /// differs (`Provenance { warnings, ..Provenance::modified(…) }`).
    pub fn modified(cohorts: Cohorts, binary_columns: Vec<String>) -> Self {
        Self {
            method: Method::Modified,
            right_mask: RightMask::Haar,
            generator: Generator::Chacha,
            x_max_source: XMaxSource::Declared,
            cohorts,
            kept_columns: Vec::new(),
            binary_columns,
            condition_3_7_margin: None,
            teaching_keys: false,
            warnings: Vec::new(),
            receipt_roots: Vec::new(),
            share_view: None,
            shares: None,
            model_terms: Vec::new(),
        }
    }
}

/// The manifest of a release made under `plan`.
pub fn build(plan: &Plan, released: &Released<'_>, provenance: Provenance) -> Manifest {
    let (_, cross_products) = summary_statistics(released.data);
    // The QA column is released last (the plan's `p₁` counts it last too).
    let qa_column = plan
        .qa_constant
        .and(released.columns.last())
        .map(String::as_str);
    let accuracy = plan
        .appendix_c
        .as_ref()
        .and_then(|_| plan.release_accuracy(provenance.shares).ok());
    let obfuscation = crate::obfuscation::guarantee(
        plan,
        provenance.method,
        &provenance.kept_columns,
        qa_column,
        provenance.cohorts.sizes.len(),
    );
    Manifest {
        orthomask_version: env!("CARGO_PKG_VERSION").to_owned(),
        method: provenance.method,
        n: released.data.nrows(),
        p1: plan.p1,
        p2: plan.p2,
        columns: released.columns.to_vec(),
        sigma: plan.sigma,
        x_max: Some(plan.x_max),
        x_max_source: Some(provenance.x_max_source),
        appendix_c: plan.appendix_c.clone(),
        condition_3_7_margin: provenance.condition_3_7_margin,
        cohorts: provenance.cohorts,
        right_mask: provenance.right_mask,
        generator: provenance.generator,
        kept_columns: provenance.kept_columns,
        binary_columns: provenance.binary_columns,
        qa: qa_summary(released.qa),
        column_means: column_means(released.columns, released.data),
        cross_products,
        decimals: released.decimals,
        dp: plan.dp.clone(),
        teaching_keys: provenance.teaching_keys,
        warnings: provenance
            .warnings
            .into_iter()
            .chain(accuracy.as_ref().and_then(|a| a.note.clone()))
            .collect(),
        builds: crate::app_build::release_builds(&provenance.receipt_roots),
        receipt_roots: provenance.receipt_roots,
        unmasking_error: accuracy.map(|a| unmasking_error(plan, released.columns, &a)),
        share_view: provenance.share_view.map(|v| ShareViewRecord {
            services: v.services,
            signal_to_noise: v.signal_to_noise,
            epsilon: v.epsilon,
            delta: v.delta,
        }),
        obfuscation,
        model_terms: provenance.model_terms,
    }
}

/// The release's expected unmasking error ([`Plan::release_accuracy`]: (E1)–(E2), or (E5) in
/// share mode), per released column in its own units: `h_j·E` for an answer scaled by a range
/// of half-width `h_j`, `|c|·E` for the QA column of a scaled record (carried as ±1), `E`
/// itself for unscaled records. Absent (in [`build`]) where the model does not apply: without
/// padding under an orthogonal right mask (no Appendix C bound: the first and second methods of
/// seed 003), or for a plan whose design does not build, which no release can have been made
/// under.
fn unmasking_error(plan: &Plan, columns: &[String], release: &ReleaseAccuracy) -> UnmaskingError {
    let accuracy = &release.accuracy;
    let half_widths: Vec<f64> = match &plan.scaling {
        Some(ranges) => ranges
            .iter()
            .map(|r| 0.5 * (r.hi - r.lo))
            .chain(
                plan.qa_constant
                    .map(|c| if c == 0.0 { 1.0 } else { c.abs() }),
            )
            .collect(),
        None => vec![1.0; columns.len()],
    };
    UnmaskingError {
        scaled_by_declared_ranges: accuracy.scaled,
        record_norm: accuracy.record_norm,
        expected_entry_error: accuracy.expected_entry_error,
        expected_digits_lost: accuracy.expected_digits_lost(),
        model: orthomask_core::protocol::accuracy::ROUNDING_MODEL.to_owned(),
        columns: columns
            .iter()
            .zip(half_widths)
            .map(|(name, h)| ColumnUnmaskingError {
                name: name.clone(),
                expected_error: accuracy.in_units_of(h),
            })
            .collect(),
    }
}

/// The manifest's QA entry for a release checked in several cohorts: the worst check, and
/// whether all passed (`None` without QA checks).
pub fn qa_summary(reports: &[QaReport]) -> Option<Qa> {
    QaReport::worst_of(reports).map(|worst| Qa {
        constant: worst.constant,
        passed: reports.iter().all(QaReport::passed),
        max_deviation: worst.max_deviation,
        tolerance: worst.tolerance,
    })
}

/// Named column means of a release, in column order.
pub fn column_means(names: &[String], data: &DMatrix<f64>) -> Vec<ColumnMean> {
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
pub fn summary_statistics(data: &DMatrix<f64>) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = data.nrows().max(1) as f64;
    let means = data.column_iter().map(|c| c.sum() / n).collect();
    let gram = data.tr_mul(data);
    let rows = gram
        .row_iter()
        .map(|r| r.iter().copied().collect())
        .collect();
    (means, rows)
}

/// Columns of raw data holding only 0s and 1s, both present: what a simulation, which has no
/// question types, records as binary.
pub fn observed_binary_columns(names: &[String], raw: &DMatrix<f64>) -> Vec<String> {
    names
        .iter()
        .enumerate()
        .filter(|(j, _)| {
            let mut column = BinaryColumn::default();
            raw.column(*j).iter().for_each(|&v| column.observe(v));
            column.is_binary()
        })
        .map(|(_, name)| name.clone())
        .collect()
}

/// Whether a column read value by value is binary in the sense of [`observed_binary_columns`]:
/// for data streamed from a file, which is never held whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BinaryColumn {
    zero: bool,
    one: bool,
    other: bool,
}

impl BinaryColumn {
    /// One more value of the column.
    pub fn observe(&mut self, value: f64) {
        if value == 0.0 {
            self.zero = true;
        } else if value == 1.0 {
            self.one = true;
        } else {
            self.other = true;
        }
    }

    /// Only 0s and 1s so far, both present.
    pub fn is_binary(&self) -> bool {
        self.zero && self.one && !self.other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{CohortBounds, PlanRequest};
    use crate::tolerance::{DIGITS_BY_HAND, HAND_COMPUTED};

    /// By hand: [[1, 2], [3, 4]] has means (2, 3) and XᵀX = [[10, 14], [14, 20]].
    #[test]
    fn summary_by_hand() {
        let (means, gram) =
            summary_statistics(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]));
        for (got, want) in means.iter().zip([2.0, 3.0]) {
            assert!((got - want).abs() < HAND_COMPUTED);
        }
        for (row, want) in gram.iter().zip([[10.0, 14.0], [14.0, 20.0]]) {
            for (got, want) in row.iter().zip(want) {
                assert!((got - want).abs() < HAND_COMPUTED);
            }
        }
    }

    /// The plan's decisions are copied, the release's statistics computed: a plan for cohorts of
    /// 20 to 30 records the bound of 30, whatever cohorts were released.
    #[test]
    fn the_manifest_records_the_plans_bound_and_the_releases_statistics() {
        let cohorts = CohortBounds {
            smallest: 20,
            largest: 30,
        };
        let plan = Plan::new(&PlanRequest::new(1, Some(888.0), cohorts, 888.0)).unwrap();
        let columns = vec!["a".to_owned(), "QA".to_owned()];
        let data = DMatrix::from_row_slice(2, 2, &[1.0, 888.0, 0.0, 888.0]);
        let qa = [QaReport {
            constant: 888.0,
            max_deviation: 1e-12,
            tolerance: 1e-9,
            worst: 0,
        }];
        let m = build(
            &plan,
            &Released {
                columns: &columns,
                data: &data,
                qa: &qa,
                decimals: None,
            },
            Provenance::modified(
                Cohorts {
                    size: Some(30),
                    sizes: vec![2],
                },
                observed_binary_columns(&columns, &data),
            ),
        );
        assert_eq!(m.appendix_c, plan.appendix_c);
        let gamma = m.appendix_c.as_ref().unwrap().gamma;
        assert!((gamma - plan.p2 as f64 / 30.0).abs() < HAND_COMPUTED);
        assert_eq!((m.n, m.p1, m.p2), (2, 2, plan.p2));
        assert!((m.column_means[0].mean - 0.5).abs() < HAND_COMPUTED);
        assert!((m.cross_products[1][1] - 2.0 * 888.0 * 888.0).abs() < HAND_COMPUTED * 1e6);
        assert_eq!(m.binary_columns, ["a"]);
        assert!(m.qa.as_ref().is_some_and(|q| q.passed));
    }

    /// The expected unmasking error against values computed in Python from (E1)–(E2) and (E5)
    /// by hand for this design (one answer scaled to ±1, the QA entry ±1, m = 20, p₂ = 503,
    /// σ² = (1 + 10⁻⁹)²/((√(503/20) − 1)²·½)): R = 8.025383126297404,
    /// E = √3·2⁻⁵³·R = 1.543251229580218e-15, 1.143 expected digits; per column in its own
    /// units `h_j·E` (half-width 10) and `|c|·E` (QA 888); with two shares of τ = 100,
    /// `R² = R²/2 + τ²` gives E = 1.9260564932035342e-14.
    #[test]
    fn the_unmasking_error_follows_the_scaling_and_the_shares() {
        let cohorts = CohortBounds {
            smallest: 20,
            largest: 20,
        };
        let mut request = PlanRequest::new(1, Some(888.0), cohorts, 888.0);
        request.ranges = Some(vec![crate::plan::DeclaredRange {
            name: "a".into(),
            lo: 10.0,
            hi: 30.0,
        }]);
        let plan = Plan::new(&request).unwrap();
        let columns = vec!["a".to_owned(), "QA".to_owned()];
        let data = DMatrix::from_row_slice(2, 2, &[12.0, 888.0, 25.0, 888.0]);
        let manifest = |shares: Option<ShareSplit>| {
            build(
                &plan,
                &Released {
                    columns: &columns,
                    data: &data,
                    qa: &[],
                    decimals: None,
                },
                Provenance {
                    shares,
                    ..Provenance::modified(
                        Cohorts {
                            size: Some(20),
                            sizes: vec![2],
                        },
                        Vec::new(),
                    )
                },
            )
            .unmasking_error
            .unwrap()
        };
        const E: f64 = 1.543_251_229_580_218e-15;
        let close = |got: f64, want: f64| (got - want).abs() <= HAND_COMPUTED * want;
        let basic = manifest(None);
        assert!(basic.scaled_by_declared_ranges);
        assert!(close(basic.record_norm, 8.025_383_126_297_404));
        assert!(close(basic.expected_entry_error, E));
        assert!((basic.expected_digits_lost - 1.143_026_401_852_953_7).abs() < DIGITS_BY_HAND);
        assert!(basic.model.contains("not a bound"), "{}", basic.model);
        assert!(close(basic.columns[0].expected_error, 10.0 * E));
        assert!(close(basic.columns[1].expected_error, 888.0 * E));
        let split = ShareSplit {
            services: 2,
            share_sigma: 100.0,
        };
        let shared = manifest(Some(split));
        assert!(close(shared.record_norm, 100.160_887_511_852_3));
        assert!(close(
            shared.expected_entry_error,
            1.926_056_493_203_534_2e-14
        ));
    }
}
