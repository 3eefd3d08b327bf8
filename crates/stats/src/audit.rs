//! Audit and disclosure checks on a release: what an auditor verifies in the browser or with
//! `orthomask audit`, each check reporting pass / warn / fail with the numbers behind it.
//!
//! # What is checked
//! * **QA column** — a column named `QA` must be constant (seed 003 §3.1: after unmasking the QA
//!   column is `c·1ₙ`, and `A₁1ₙ = 1ₙ` keeps it so in the release).
//! * **Against the manifest** — row count, column names, column means and `XᵀX` must equal what the
//!   collector recorded (row masks keeping `1ₙ` preserve both exactly).
//! * **Binary columns** — for a 0/1 column `z`, `1ᵀz = zᵀz = count`; both survive a row mask, so a
//!   released binary column must have `Σ x = Σ x² =` an integer, and two binary columns an integer
//!   cross-product `z₁ᵀz₂` within `[max(0, c₁ + c₂ − n), min(c₁, c₂)]`.
//! * **Small cells** — a 2×2 table of two binary columns with a cell below 5 (seed 003 §2.1 asks
//!   for cell suppression or other disclosure control then).
//! * **Sparse indicators** — a binary column non-zero (or zero) for fewer than 5 subjects (seed 001
//!   §2.3 warns about exactly these).
//! * **Visibly masked** — a binary column that still holds only 0s and 1s was not masked (unless
//!   the manifest lists it as kept unmasked).
//!
//! # Tolerances from the printed precision
//! A file printed to `d` decimals has entries within `h = ½·10⁻ᵈ` of the exact release. Then a
//! column sum is within `n·h`, a column mean within `h`, and a cross-product `Σ xᵢyᵢ` within
//! `h·(Σ|xᵢ| + Σ|yᵢ|) + n·h²`. Round-trip files (`h = 0`) are compared to
//! [`AUDIT_FULL_PRECISION_RELATIVE`].

use crate::tolerance::{AUDIT_FULL_PRECISION_RELATIVE, SMALL_CELL};
use nalgebra::DMatrix;

/// Outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Nothing wrong.
    Pass,
    /// Worth a look (disclosure risk, missing information).
    Warn,
    /// The release contradicts what it should be.
    Fail,
}

impl Status {
    /// `"pass"`, `"warn"` or `"fail"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Warn => "warn",
            Self::Fail => "fail",
        }
    }
}

/// One check with the numbers behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Stable identifier, e.g. `qa_column`, `column_means`, `small_cell:Group×MIF`.
    pub id: String,
    /// Outcome.
    pub status: Status,
    /// One line for people, with the numbers.
    pub detail: String,
    /// The numbers, named.
    pub numbers: Vec<(String, f64)>,
}

/// What the collector recorded about the release (from its manifest).
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// Rows.
    pub n: usize,
    /// Column names in order.
    pub columns: Vec<String>,
    /// Column means in column order.
    pub means: Vec<f64>,
    /// `XᵀX` in column order.
    pub cross_products: DMatrix<f64>,
    /// The QA constant, if the release has a QA column.
    pub qa_constant: Option<f64>,
    /// Columns that hold 0/1 answers in the raw data.
    pub binary_columns: Vec<String>,
    /// Columns published unmasked on purpose (partial masking, second method).
    pub kept_columns: Vec<String>,
}

/// A release to audit: its columns as published (not the core's `protocol::tm2::Release`, which
/// is what the collector computes).
#[derive(Clone, Debug)]
pub struct ReleaseUnderAudit<'a> {
    /// Column names.
    pub names: &'a [String],
    /// Values, one row per record.
    pub data: &'a DMatrix<f64>,
    /// Decimals the file was printed with (`None`: round-trip precision).
    pub decimals: Option<u8>,
}

/// The result of an audit.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditReport {
    /// Every check, in a stable order.
    pub checks: Vec<Check>,
}

impl AuditReport {
    /// The worst status (`Pass` for an empty report).
    pub fn overall(&self) -> Status {
        self.checks
            .iter()
            .map(|c| c.status)
            .max()
            .unwrap_or(Status::Pass)
    }
}

fn check(
    id: impl Into<String>,
    status: Status,
    detail: impl Into<String>,
    numbers: &[(&str, f64)],
) -> Check {
    Check {
        id: id.into(),
        status,
        detail: detail.into(),
        numbers: numbers.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
    }
}

/// Half a unit in the last printed place (0 for round-trip files).
fn half_unit(decimals: Option<u8>) -> f64 {
    decimals.map_or(0.0, |d| 0.5 * 10f64.powi(-i32::from(d)))
}

/// `|a − b| ≤ bound + relative slack`.
fn close(a: f64, b: f64, bound: f64) -> bool {
    (a - b).abs() <= bound + AUDIT_FULL_PRECISION_RELATIVE * a.abs().max(b.abs()).max(1.0)
}

/// Run every check. `expected` comes from the manifest when the auditor has one.
pub fn audit(release: &ReleaseUnderAudit<'_>, expected: Option<&Expected>) -> AuditReport {
    let data = release.data;
    let (n, p) = data.shape();
    let h = half_unit(release.decimals);
    let nf = n as f64;
    let mut checks = Vec::new();
    let index = |name: &str| release.names.iter().position(|c| c == name);

    // Precision the tolerances below are derived from.
    checks.push(match release.decimals {
        None => check(
            "precision",
            Status::Pass,
            "round-trip precision: statistics can be compared exactly",
            &[],
        ),
        Some(d) => check(
            "precision",
            Status::Pass,
            format!("printed to {d} decimals: entries are within {h} of the exact release"),
            &[("decimals", f64::from(d)), ("half_unit", h)],
        ),
    });

    // QA column.
    let qa_constant = expected.and_then(|e| e.qa_constant);
    checks.push(match index("QA") {
        Some(j) => {
            let column = data.column(j);
            let c = qa_constant.unwrap_or(column[0]);
            let deviation = column.iter().map(|v| (v - c).abs()).fold(0.0, f64::max);
            let allowed = h + AUDIT_FULL_PRECISION_RELATIVE * c.abs().max(1.0);
            let ok = deviation <= allowed;
            check(
                "qa_column",
                if ok { Status::Pass } else { Status::Fail },
                format!("QA column should be constant {c}: largest deviation {deviation:.3e} (allowed {allowed:.1e})"),
                &[("constant", c), ("max_deviation", deviation)],
            )
        }
        None if qa_constant.is_some() => check("qa_column", Status::Fail, "the manifest declares a QA constant but the release has no QA column", &[]),
        None => check("qa_column", Status::Warn, "no QA column: the collector's quality-assurance check cannot be re-done", &[]),
    });

    if let Some(e) = expected {
        checks.extend(against_manifest(release, e, h));
    } else {
        checks.push(check(
            "manifest",
            Status::Warn,
            "no manifest: means and XᵀX cannot be compared with what the collector recorded",
            &[],
        ));
    }

    // Binary columns: declared in the manifest, or detected by Σx = Σx² ∈ ℕ.
    let sums: Vec<f64> = (0..p).map(|j| data.column(j).sum()).collect();
    let squares: Vec<f64> = (0..p).map(|j| data.column(j).norm_squared()).collect();
    let abs_sums: Vec<f64> = (0..p)
        .map(|j| data.column(j).iter().map(|v| v.abs()).sum())
        .collect();
    let sum_bound = nf * h;
    let square_bound = |j: usize| 2.0 * h * abs_sums[j] + nf * h * h;
    let is_integer = |x: f64, bound: f64| close(x, x.round(), bound);
    let declared: Vec<usize> = expected
        .map(|e| e.binary_columns.iter().filter_map(|c| index(c)).collect())
        .unwrap_or_default();
    let binary: Vec<usize> = if expected.is_some() {
        declared.clone()
    } else {
        (0..p)
            .filter(|&j| Some(j) != index("QA"))
            .filter(|&j| {
                close(sums[j], squares[j], sum_bound + square_bound(j))
                    && is_integer(sums[j], sum_bound)
                    && sums[j].round() > 0.0
            })
            .collect()
    };
    for &j in &binary {
        let name = &release.names[j];
        let count = sums[j];
        let consistent = close(sums[j], squares[j], sum_bound + square_bound(j))
            && is_integer(count, sum_bound)
            && (-0.5..=nf + 0.5).contains(&count);
        checks.push(check(
            format!("binary_counts:{name}"),
            if consistent { Status::Pass } else { Status::Fail },
            format!(
                "{name}: sum {count:.6} and sum of squares {:.6} {} (a 0/1 column has both equal to its count)",
                squares[j],
                if consistent { "agree on an integer count" } else { "do not agree on an integer count" }
            ),
            &[("sum", count), ("sum_of_squares", squares[j])],
        ));
        let k = count.round();
        if consistent && (k < SMALL_CELL || nf - k < SMALL_CELL) {
            checks.push(check(
                format!("sparse_indicator:{name}"),
                Status::Warn,
                format!("{name} is 1 for {k} of {n} subjects: so few (or so many) that the column identifies individuals"),
                &[("count", k), ("n", nf)],
            ));
        }
        let kept = expected.is_some_and(|e| e.kept_columns.contains(name));
        let raw_looking = data
            .column(j)
            .iter()
            .all(|v| close(*v, 0.0, h) || close(*v, 1.0, h));
        // A column every subject answered alike is c·1ₙ, which any mask keeping 1ₙ fixed leaves
        // as it is: its release shows every answer because its mean does, whatever the masks,
        // so it says nothing about whether the survey was masked (it is warned about above).
        let constant = consistent && (k == 0.0 || k == nf);
        if raw_looking && !kept && !constant {
            checks.push(check(
                format!("visibly_masked:{name}"),
                Status::Fail,
                format!(
                    "{name} still holds only 0s and 1s: the released values are the raw answers"
                ),
                &[],
            ));
        }
    }
    // Pairs of binary columns: integer cross-products, and small cells.
    for (a, &i) in binary.iter().enumerate() {
        for &j in &binary[a + 1..] {
            let (ni, nj) = (&release.names[i], &release.names[j]);
            let cross = data.column(i).dot(&data.column(j));
            let bound = h * (abs_sums[i] + abs_sums[j]) + nf * h * h;
            let (ci, cj) = (sums[i].round(), sums[j].round());
            let d = cross.round();
            let feasible = d >= (ci + cj - nf).max(0.0) && d <= ci.min(cj);
            let ok = is_integer(cross, bound) && feasible;
            checks.push(check(
                format!("cross_product:{ni}×{nj}"),
                if ok { Status::Pass } else { Status::Fail },
                format!(
                    "{ni}ᵀ{nj} = {cross:.6}: {}",
                    if ok {
                        "an integer count within its possible range"
                    } else {
                        "not a feasible integer count"
                    }
                ),
                &[("cross_product", cross)],
            ));
            if ok {
                // Seed 003 Table 1: d = z₁ᵀz₂, b = c₂ − d, c = c₁ − d, a = n − c₁ − c₂ + d.
                let cells = [nf - ci - cj + d, cj - d, ci - d, d];
                let smallest = cells.iter().copied().fold(f64::INFINITY, f64::min);
                if smallest < SMALL_CELL {
                    checks.push(check(
                        format!("small_cell:{ni}×{nj}"),
                        Status::Warn,
                        format!("the {ni} × {nj} table has a cell of {smallest} (cells 00, 01, 10, 11 = {}, {}, {}, {}): suppress or coarsen before publishing its counts", cells[0], cells[1], cells[2], cells[3]),
                        &[("a", cells[0]), ("b", cells[1]), ("c", cells[2]), ("d", cells[3])],
                    ));
                }
            }
        }
    }
    AuditReport { checks }
}

fn against_manifest(release: &ReleaseUnderAudit<'_>, e: &Expected, h: f64) -> Vec<Check> {
    let data = release.data;
    let (n, p) = data.shape();
    let nf = n as f64;
    let mut out = Vec::new();
    out.push(if e.n == n {
        check(
            "row_count",
            Status::Pass,
            format!("{n} rows, as recorded"),
            &[("n", nf)],
        )
    } else {
        check(
            "row_count",
            Status::Fail,
            format!("{n} rows but the manifest records {}", e.n),
            &[("n", nf), ("expected", e.n as f64)],
        )
    });
    if e.columns != release.names {
        out.push(check(
            "columns",
            Status::Fail,
            format!(
                "columns [{}] differ from the manifest's [{}]",
                release.names.join(", "),
                e.columns.join(", ")
            ),
            &[],
        ));
        return out;
    }
    out.push(check(
        "columns",
        Status::Pass,
        "column names as recorded",
        &[],
    ));
    if e.means.len() != p || e.cross_products.shape() != (p, p) {
        out.push(check(
            "manifest_shape",
            Status::Fail,
            "the manifest's means or XᵀX do not match the number of columns",
            &[],
        ));
        return out;
    }
    let means = data.row_mean();
    let (worst_mean, worst_j) = (0..p)
        .map(|j| ((means[j] - e.means[j]).abs(), j))
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
    let mean_ok = (0..p).all(|j| close(means[j], e.means[j], h));
    out.push(check(
        "column_means",
        if mean_ok { Status::Pass } else { Status::Fail },
        format!(
            "column means {}: largest difference {worst_mean:.3e} ({})",
            if mean_ok {
                "match the manifest"
            } else {
                "differ from the manifest"
            },
            release.names[worst_j]
        ),
        &[("max_difference", worst_mean)],
    ));
    let gram = data.tr_mul(data);
    let abs_sums: Vec<f64> = (0..p)
        .map(|j| data.column(j).iter().map(|v| v.abs()).sum())
        .collect();
    let mut worst = (0.0, 0, 0);
    let mut ok = true;
    for i in 0..p {
        for j in 0..p {
            let diff = (gram[(i, j)] - e.cross_products[(i, j)]).abs();
            let bound = h * (abs_sums[i] + abs_sums[j]) + nf * h * h;
            if !close(gram[(i, j)], e.cross_products[(i, j)], bound) {
                ok = false;
            }
            if diff > worst.0 {
                worst = (diff, i, j);
            }
        }
    }
    out.push(check(
        "cross_products",
        if ok { Status::Pass } else { Status::Fail },
        format!(
            "XᵀX {}: largest difference {:.3e} ({} × {})",
            if ok {
                "matches the manifest"
            } else {
                "differs from the manifest"
            },
            worst.0,
            release.names[worst.1],
            release.names[worst.2]
        ),
        &[("max_difference", worst.0)],
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    fn expected_for(names: &[String], data: &DMatrix<f64>, binary: &[&str]) -> Expected {
        Expected {
            n: data.nrows(),
            columns: names.to_vec(),
            means: data.row_mean().iter().copied().collect(),
            cross_products: data.tr_mul(data),
            qa_constant: Some(888.0),
            binary_columns: binary.iter().map(|s| (*s).to_owned()).collect(),
            kept_columns: vec![],
        }
    }

    /// Eight records of two binary columns and a QA column, released through the Householder
    /// reflection `A = I − 2vvᵀ/vᵀv` with `v ⟂ 1` (orthogonal, `A·1 = 1`), a legitimate row mask.
    fn masked_example() -> (Vec<String>, DMatrix<f64>, DMatrix<f64>) {
        let raw = DMatrix::from_row_slice(
            8,
            3,
            &[
                1.0, 0.0, 888.0, 1.0, 1.0, 888.0, 0.0, 1.0, 888.0, 1.0, 1.0, 888.0, 0.0, 0.0,
                888.0, 1.0, 0.0, 888.0, 0.0, 1.0, 888.0, 1.0, 1.0, 888.0,
            ],
        );
        // A = I − (2/n)·(v vᵀ)/(vᵀv)·n with v ⟂ 1: a Householder reflection along v = e₁ − e₂ + e₃ − e₄
        // keeps 1 fixed (v ⟂ 1) and is orthogonal.
        let v = nalgebra::DVector::from_vec(vec![1.0, -1.0, 1.0, -1.0, 0.5, -0.5, 0.0, 0.0]);
        let a = DMatrix::identity(8, 8) - (&v * v.transpose()) * (2.0 / v.norm_squared());
        (names(&["Group", "MIF", "QA"]), raw.clone(), a * raw)
    }

    #[test]
    fn a_faithful_release_passes() {
        let (names, raw, masked) = masked_example();
        let e = expected_for(&names, &raw, &["Group", "MIF"]);
        let report = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &masked,
                decimals: None,
            },
            Some(&e),
        );
        let failing: Vec<&Check> = report
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .collect();
        assert!(failing.is_empty(), "{failing:#?}");
        // n = 8, Group count 5, MIF count 5, d = 3: cells a = 1, b = 2, c = 2, d = 3 → small cells.
        assert!(
            report
                .checks
                .iter()
                .any(|c| c.id == "small_cell:Group×MIF" && c.status == Status::Warn)
        );
        assert_eq!(report.overall(), Status::Warn);
    }

    #[test]
    fn tampering_and_unmasked_columns_fail() {
        let (names, raw, mut masked) = masked_example();
        let e = expected_for(&names, &raw, &["Group", "MIF"]);
        masked[(3, 0)] += 0.01;
        let report = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &masked,
                decimals: None,
            },
            Some(&e),
        );
        let failed: Vec<&str> = report
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .map(|c| c.id.as_str())
            .collect();
        assert!(
            failed.contains(&"column_means") && failed.contains(&"cross_products"),
            "{failed:?}"
        );
        assert!(failed.contains(&"binary_counts:Group"), "{failed:?}");
        let unmasked = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &raw,
                decimals: None,
            },
            Some(&e),
        );
        assert!(
            unmasked
                .checks
                .iter()
                .any(|c| c.id == "visibly_masked:Group" && c.status == Status::Fail)
        );
        // Everybody answered alike: the column is the same after any mask keeping 1ₙ, so it is
        // not taken for an unmasked release (found when every simulated participant of a live
        // demonstration said yes), only warned about as identifying.
        let mut alike = masked.clone();
        let g = names.iter().position(|c| c == "Group").unwrap();
        alike.column_mut(g).fill(1.0);
        let r = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &alike,
                decimals: None,
            },
            None,
        );
        let status = |id: &str| r.checks.iter().find(|c| c.id == id).map(|c| c.status);
        assert_eq!(status("visibly_masked:Group"), None);
        assert_eq!(status("binary_counts:Group"), Some(Status::Pass));
        assert_eq!(status("sparse_indicator:Group"), Some(Status::Warn));
        let mut bad_qa = masked.clone();
        bad_qa[(2, 2)] = 887.0;
        let r = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &bad_qa,
                decimals: None,
            },
            None,
        );
        assert_eq!(
            r.checks
                .iter()
                .find(|c| c.id == "qa_column")
                .unwrap()
                .status,
            Status::Fail
        );
    }

    /// Each binary column is masked consistently, but `MIF` by a different reflection than
    /// `Group` (as if the columns of two releases were spliced): both columns still pass their own
    /// count checks, while their cross-product is no longer a feasible integer count. A manifest
    /// promising another number of records fails `row_count`. With 5 of 8 subjects in `Group`, 3
    /// are outside it: the indicator is sparse enough to identify individuals.
    #[test]
    fn spliced_columns_fail_the_cross_product_and_sparse_indicators_warn() {
        let (names, raw, masked) = masked_example();
        let v = nalgebra::DVector::from_vec(vec![0.0, 1.0, 0.0, 0.0, -1.0, 0.5, 0.0, -0.5]);
        let other = DMatrix::identity(8, 8) - (&v * v.transpose()) * (2.0 / v.norm_squared());
        let mut spliced = masked.clone();
        spliced.set_column(1, &(&other * raw.column(1)));
        let report = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &spliced,
                decimals: None,
            },
            None,
        );
        let status = |id: &str| report.checks.iter().find(|c| c.id == id).map(|c| c.status);
        assert_eq!(status("binary_counts:Group"), Some(Status::Pass));
        assert_eq!(status("binary_counts:MIF"), Some(Status::Pass));
        assert_eq!(status("cross_product:Group×MIF"), Some(Status::Fail));
        assert_eq!(status("sparse_indicator:Group"), Some(Status::Warn));

        let mut e = expected_for(&names, &raw, &["Group", "MIF"]);
        e.n = 9;
        let report = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &masked,
                decimals: None,
            },
            Some(&e),
        );
        let row_count = report.checks.iter().find(|c| c.id == "row_count").unwrap();
        assert_eq!(row_count.status, Status::Fail);
        assert!(!row_count.numbers.is_empty(), "{row_count:?}");
    }

    /// Printed to two decimals, the release still passes: the bounds grow with the rounding.
    #[test]
    fn printed_precision_widens_the_bounds() {
        let (names, raw, masked) = masked_example();
        let e = expected_for(&names, &raw, &["Group", "MIF"]);
        let rounded = masked.map(|v| (v * 100.0).round() / 100.0);
        let strict = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &rounded,
                decimals: None,
            },
            Some(&e),
        );
        assert_eq!(strict.overall(), Status::Fail);
        let fair = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &rounded,
                decimals: Some(2),
            },
            Some(&e),
        );
        assert!(
            fair.checks.iter().all(|c| c.status != Status::Fail),
            "{:#?}",
            fair.checks
        );
    }

    #[test]
    fn without_a_manifest_binary_columns_are_detected() {
        let (names, _, masked) = masked_example();
        let report = audit(
            &ReleaseUnderAudit {
                names: &names,
                data: &masked,
                decimals: None,
            },
            None,
        );
        assert!(
            report
                .checks
                .iter()
                .any(|c| c.id == "binary_counts:Group" && c.status == Status::Pass)
        );
        assert!(
            report
                .checks
                .iter()
                .any(|c| c.id == "manifest" && c.status == Status::Warn)
        );
    }
}
