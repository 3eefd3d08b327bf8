//! The breaches of confidentiality of seed 001 §2.3, each as a check that returns a typed
//! [`Finding`] carrying the numbers behind it.
//!
//! | check | who runs it | on what | severity |
//! |---|---|---|---|
//! | [`check_column_count`] | B | received `Z`, A's announced `p` | reject |
//! | [`check_orthonormal`] | B (and A before sending) | `Z` | reject |
//! | [`check_unit_columns`] | B | `I − ZZᵀ` | reject |
//! | [`check_dependent_rows`] | B | rows of `Z` | reject |
//! | [`check_orthogonal_to_sender`] | A, before sending | `XᵀZ` | reject |
//! | [`check_rare_values`] | each agency, on its own columns | its data | warn |
//! | [`check_cross_prediction`] | any agency, after assembly | shared cross-products | warn |
//!
//! B cannot check that `Z ⟂ X` (it never sees `X`); only A can, and a failure there means A's own
//! computation went wrong (the product would be wrong by `XᵀZZᵀY`), so A refuses to send.
//!
//! The reject checks defend against a `Z` that is not what §2.1 prescribes (a buggy or
//! non-semi-honest sender); the warnings concern what the *values* of the data disclose even
//! through a legitimate protocol (§2.3, second and third paragraphs), which no choice of `Z` can
//! prevent and which the agencies must judge themselves.
//!
//! # What `W` reveals, in general
//! A receives `W = PY` with `P = I − ZZᵀ`, the projector onto `ran(Z)^⟂`. For any vector `v`,
//! `vᵀW = (Pv)ᵀY`: A learns `vᵀY` exactly for every `v ∈ ran(Z)^⟂`, and for any `v` it learns a
//! combination whose share `‖Pv‖²/‖v‖² = 1 − ‖Zᵀv‖²/‖v‖²` lies on `vᵀY`. Since `ran(X) ⊂ ran(Z)^⟂`,
//! this includes `XᵀY`, which A is meant to learn. The breach §2.3 describes is a vector of
//! **small support** in `ran(Z)^⟂` beyond `ran(X)`: it pins down a combination of a few subjects'
//! values. A vector supported on a set `S` of subjects lies in `ran(Z)^⟂` iff `Zᵀv = 0`, i.e. iff
//! the rows `z_k`, `k ∈ S`, are linearly dependent with coefficients `v_k`; more generally the
//! best share over unit `v` supported on `S` is `1 − λ_min(Z_S Z_Sᵀ)` (`Z_S` the rows in `S`).
//!
//! * `|S| = 1`: a (near) zero row `z_j` — column `j` of `P` is (nearly) `e_j` and A reads `y_j`:
//!   [`check_unit_columns`] (share `P_jj = 1 − ‖z_j‖²`).
//! * `|S| = 2`: rows `z_j`, `z_k` (nearly) linearly dependent — two equal rows put `e_j − e_k` in
//!   `ran(Z)^⟂` and A reads `y_j − y_k` exactly, although every column of `P` looks honest:
//!   [`check_dependent_rows`] (share `1 − λ_min` of the 2×2 Gram matrix of the two rows).
//!
//! The thresholds are [`NEAR_UNIT_COLUMN_SHARE`] and [`DEPENDENT_PAIR_SHARE`]. For an honest `Z` (Haar in
//! `ran(X)^⟂`), a small-support vector of `ran(Z)^⟂` lies in `ran(X)` with probability one: it
//! occurs only when `X` itself has a combination of columns supported on those subjects, which
//! `XᵀY` discloses anyway. B cannot tell that case from a malicious `Z` without `X`, and refuses
//! both, naming the subjects. Supports of three or more subjects are not checked: finding the
//! sparsest vector in a subspace (the spark of `Zᵀ`) is NP-hard in general, and the number of
//! subsets grows as `nˢ`; such a `Z` reveals combinations of at least three subjects' values.
//!
//! Not checked: a bogus reply `W` from B. A cannot tell `(I − ZZᵀ)Y` from `(I − ZZᵀ)E` for some
//! chosen `E` (say, unit vectors, which would make `XᵀW` return rows of `X`) without knowing `Y`;
//! the paper's semi-honest assumption covers it and so do we.

use crate::cross_products::{CrossProducts, CrossProductsError};
use crate::feasibility::complement_columns;
use crate::sweep::{Sweep, SweepError};
use nalgebra::{DMatrix, DVector};
use orthomask_core::tolerance::BINARY_FULL_PRECISION;

/// Largest tolerated `max |ZᵀZ − I|`.
///
/// An honest `Z` from [`OrthogonalComplement`](crate::complement::OrthogonalComplement) is
/// orthonormal to a small multiple of `n ε` (about 10⁻¹³ for `n = 1000`), so 10⁻⁹ leaves four
/// orders of magnitude for rounding up to `n ≈ 10⁶` while catching any deliberate rescaling or a
/// `Z` whose columns were never orthonormalised. Below the threshold a rescaling could still leak
/// (`W` would carry `−2δ·ZZᵀY` for a scale `1 + δ`); B therefore never uses `Z` literally but
/// projects with its own orthonormal basis of `ran(Z)` (see [`protocol`](crate::protocol)), which
/// removes any sub-threshold scaling.
pub const ORTHONORMALITY_SLACK: f64 = 1e-9;

/// Largest tolerated `‖Zᵀx_j‖ / ‖x_j‖` over the sender's columns `x_j`: the length of the part of
/// the unit vector `x_j/‖x_j‖` that lies in `ran(Z)`.
///
/// The product's error is `(XᵀY − XᵀW)_{jk} = x_jᵀZZᵀy_k`, at most this times `‖x_j‖‖y_k‖`, so the
/// threshold is the relative accuracy promised for released cross-products (the core's
/// `PRESERVED_STATISTICS`, 10⁻¹⁰). An honest `Z` reaches a small multiple of `n ε`.
pub const SENDER_ORTHOGONALITY_SLACK: f64 = 1e-10;

/// A column `m_j` of `I − ZZᵀ` counts as "close to a unit vector" when its largest entry carries
/// at least this share of its squared length: `max_k m_kj² / ‖m_j‖² ≥ 0.9`.
///
/// # Why 0.9
/// For an orthonormal `Z`, `P = I − ZZᵀ` is a projector, the largest entry of column `j` is the
/// diagonal `P_jj = 1 − ‖z_j‖²` (`z_j` the `j`-th row of `Z`) and the share is `P_jj`. A sees
/// subject `j` through row `j` of `W = PY`: `P_jj y_j + Σ_{k≠j} P_jk y_k`, whose contamination has
/// coefficient length `√(P_jj(1 − P_jj))`; the ratio of signal to contamination is
/// `√(P_jj/(1 − P_jj))`, 1 for an honest `Z` (`P_jj ≈ ½`) and 3 at the threshold. §2.3's bogus
/// `Z` (a column of `I − ZZᵀ` that *is* a unit vector) has share 1.
///
/// For a Haar-random `Z` in `ran(X)^⟂`, `‖z_j‖² = (1 − h_jj)·B` with `h_jj` the leverage of subject
/// `j` in `X` and `B ~ Beta(g/2, (n − p − g)/2)`, mean ≈ ½ and standard deviation ≈
/// `1/√(2(n − p))`. By chance alone the share reaches 0.9 only when `B ≤ 0.1`, four standard
/// deviations below its mean for `n − p = 50`, so false alarms are negligible from a few dozen
/// subjects on (for `n − p` below about 30 they are not; the protocol is not meant for such `n`,
/// §2.2). A subject with leverage `h_jj ≥ 0.8` in `X` crosses it whatever the draw — rightly:
/// `Z` must then nearly vanish on that subject and `W` hands A its values almost undisguised. A
/// column of `X` that is non-zero for a single subject (§2.3's example) forces `h_jj = 1`.
pub const NEAR_UNIT_COLUMN_SHARE: f64 = 0.9;

/// Two rows `z_j`, `z_k` of `Z` count as (nearly) linearly dependent when `W` reveals some unit
/// combination `α·y_j + β·y_k` with at least this share: `1 − λ_min(Z_S Z_Sᵀ) ≥ 0.999`,
/// `S = {j, k}` ([`check_dependent_rows`]).
///
/// # Why 0.999, not [`NEAR_UNIT_COLUMN_SHARE`]
/// The share means what it means for one subject: the revealed combination carries signal to
/// contamination `√(s/(1 − s))`, here at least 31.6. A bogus `Z` built to leak a pair makes the
/// rows exactly dependent (share 1 up to rounding), far above it. The threshold cannot be 0.9 as
/// for single subjects because an honest `Z` has `n(n − 1)/2` pairs, and their largest share is
/// much higher than the largest single one. Simulating honest draws (Gaussian `X`, Haar `Z` in
/// `ran(X)^⟂`, `g = ⌊(n − p)/2⌋`; 2 000–20 000 draws each): at n = 20 (the LEAPS teaching data)
/// the largest pair share exceeds 0.9 in 88–100 % of draws and 0.99 in 0.04–1.2 % (p = 2…5), but
/// 0.999 in none of 20 000 (largest seen 0.9983); at n = 60 it exceeds 0.9 in 0.2 % and from
/// n = 100 on never. So 0.999 refuses every exactly (or nearly exactly) dependent pair and no
/// honest draw the product makes, at the price of letting an honest small-`n` protocol reveal
/// pair combinations at signal-to-contamination ratios of 3 to 30 — which no `Z` can avoid
/// there (the protocol wants `n − p` in the hundreds, §2.2).
pub const DEPENDENT_PAIR_SHARE: f64 = 0.999;

/// An attribute supported on fewer than this many subjects is flagged: a 0/1 indicator with fewer
/// than 5 ones (or fewer than 5 zeros), or any column with fewer than 5 non-zero values.
///
/// # Why 5
/// `x_iᵀy_j` is then the sum of the partner's values over fewer than 5 subjects: one subject
/// discloses its value outright, and for a few subjects, prior knowledge of some of them or a
/// dominant contributor (§2.3's two-firm example) does. This is the minimum-frequency ("threshold")
/// rule of statistical disclosure control, under which statistical agencies do not publish cells
/// with fewer than a minimum number of contributors, commonly set between 3 and 10 (Hundepool et
/// al. 2012, *Statistical Disclosure Control*, Wiley); 5 is a middle value. An indicator with few
/// *zeros* is flagged too because the column sums are shared (§3.1), and `1ᵀy_j − x_iᵀy_j` is the
/// sum over the zeros.
pub const RARE_INDICATOR_MIN_COUNT: usize = 5;

/// An attribute of one agency is flagged when the other agency's attributes (with an intercept)
/// predict it with `R² ≥ 0.95` (§2.3, last paragraph).
///
/// # Why 0.95
/// The residual standard deviation is then at most `√(1 − R²) ≈ 0.22` of the attribute's own
/// standard deviation: from the shared cross-products alone, the partner can predict *every*
/// subject's value to within about a fifth of the attribute's spread.
pub const CROSS_PREDICTION_R_SQUARED: f64 = 0.95;

/// Errors of the checks themselves (not findings).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BreachError {
    /// `Z` and `X` describe different subjects.
    #[error("Z has {z_rows} rows but the data have {x_rows} subjects")]
    RowMismatch {
        /// Rows of `Z`.
        z_rows: usize,
        /// Rows of `X`.
        x_rows: usize,
    },
    /// Indexing the cross-products failed.
    #[error(transparent)]
    CrossProducts(#[from] CrossProductsError),
    /// The cross-products could not be swept.
    #[error(transparent)]
    Sweep(#[from] SweepError),
}

/// How a finding is acted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The protocol must not go on (the message is refused or not sent).
    Reject,
    /// The protocol may go on, but the agencies should judge the disclosure.
    Warn,
}

/// One breach check that fired, with the numbers behind it.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// `Z` does not have the `g = ⌊(n − p)/2⌋` columns §2.1 prescribes for the announced `p`.
    WrongColumnCount {
        /// Columns of the received `Z`.
        found: usize,
        /// `⌊(n − p)/2⌋`.
        prescribed: usize,
        /// `p` as announced by the sender.
        announced_sender_columns: usize,
    },
    /// `ZᵀZ` is not the identity.
    NotOrthonormal {
        /// `max |ZᵀZ − I|` (NaN when `Z` is not finite).
        max_deviation: f64,
        /// [`ORTHONORMALITY_SLACK`].
        threshold: f64,
    },
    /// A column of the sender's data is not orthogonal to `Z`.
    NotOrthogonalToSender {
        /// The worst column of `X` (0-based).
        column: usize,
        /// `‖Zᵀx_j‖ / ‖x_j‖`.
        share_in_z: f64,
        /// [`SENDER_ORTHOGONALITY_SLACK`].
        threshold: f64,
    },
    /// Column `subject` of `I − ZZᵀ` is close to a unit vector.
    NearUnitColumn {
        /// The subject (row and column of `I − ZZᵀ`, 0-based).
        subject: usize,
        /// `max_k m_k² / ‖m‖²` of that column.
        share: f64,
        /// [`NEAR_UNIT_COLUMN_SHARE`].
        threshold: f64,
    },
    /// Rows `j`, `k` of `Z` are (nearly) linearly dependent, so a combination of the two
    /// subjects' values lies (nearly) in `ran(Z)^⟂` and `W` hands it to the sender.
    DependentRows {
        /// The two subjects (rows of `Z`, 0-based, first < second).
        subjects: (usize, usize),
        /// Unit coefficients `(α, β)` of the combination `α·y_j + β·y_k` that `W` reveals best
        /// (`α ≥ 0`; two equal rows give `(1, −1)/√2`).
        combination: (f64, f64),
        /// Its share `1 − λ_min` of the 2×2 Gram matrix of the two rows (1 when dependent).
        share: f64,
        /// [`DEPENDENT_PAIR_SHARE`].
        threshold: f64,
    },
    /// A 0/1 indicator takes one of its values for very few subjects.
    RareIndicator {
        /// The column (0-based, within the agency's data).
        column: usize,
        /// The rare value, 1 or 0.
        rare_value: u8,
        /// How many subjects have it.
        count: usize,
        /// [`RARE_INDICATOR_MIN_COUNT`].
        threshold: usize,
    },
    /// A column that is not an indicator is non-zero for very few subjects.
    SparseColumn {
        /// The column (0-based, within the agency's data).
        column: usize,
        /// How many subjects have a non-zero value.
        nonzero: usize,
        /// [`RARE_INDICATOR_MIN_COUNT`].
        threshold: usize,
    },
    /// A column is nearly a linear combination of the other agency's columns.
    CrossPredictable {
        /// The column (global index in the cross-products, or within the agency's data when
        /// attributed with [`AgencyFinding`]).
        column: usize,
        /// R² of the column on the other agency's columns and an intercept.
        r_squared: f64,
        /// [`CROSS_PREDICTION_R_SQUARED`].
        threshold: f64,
    },
}

impl Finding {
    /// Whether the finding stops the protocol.
    pub fn severity(&self) -> Severity {
        match self {
            Self::WrongColumnCount { .. }
            | Self::NotOrthonormal { .. }
            | Self::NotOrthogonalToSender { .. }
            | Self::NearUnitColumn { .. }
            | Self::DependentRows { .. } => Severity::Reject,
            Self::RareIndicator { .. }
            | Self::SparseColumn { .. }
            | Self::CrossPredictable { .. } => Severity::Warn,
        }
    }
}

/// Whether a refusal may be bad luck of the random draw rather than the data: a near-unit column
/// of `I − ZZᵀ` and a nearly dependent pair of rows of `Z` depend on which `Z` was drawn, so the
/// generating agency may draw again; every other refusal would recur with any `Z`.
pub fn refusal_may_be_chance(findings: &[Finding]) -> bool {
    !findings.is_empty()
        && findings.iter().all(|f| {
            matches!(
                f,
                Finding::NearUnitColumn { .. } | Finding::DependentRows { .. }
            )
        })
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::WrongColumnCount {
                found,
                prescribed,
                announced_sender_columns,
            } => write!(
                f,
                "Z has {found} columns but the protocol prescribes g = ⌊(n − p)/2⌋ = {prescribed} \
                 for p = {announced_sender_columns}; a smaller g lets the sender learn more about \
                 the receiver's data: refuse it"
            ),
            Self::NotOrthonormal {
                max_deviation,
                threshold,
            } => write!(
                f,
                "Z is not orthonormal: max |ZᵀZ − I| = {max_deviation:.3e} > {threshold:.0e}; \
                 I − ZZᵀ is then not a projector and W could disclose the receiver's data: refuse it"
            ),
            Self::NotOrthogonalToSender {
                column,
                share_in_z,
                threshold,
            } => write!(
                f,
                "column {column} of the sender's data has {share_in_z:.3e} of its length in ran(Z) \
                 (> {threshold:.0e}); XᵀW would not equal XᵀY: regenerate Z"
            ),
            Self::NearUnitColumn {
                subject,
                share,
                threshold,
            } => write!(
                f,
                "column {subject} of I − ZZᵀ is close to a unit vector ({share:.3} ≥ {threshold} \
                 of its squared length on one entry): W would reveal that subject's values almost \
                 exactly; refuse Z (if Z is honest, subject {subject} has very high leverage in the \
                 sender's data)"
            ),
            Self::DependentRows {
                subjects: (j, k),
                combination: (alpha, beta),
                share,
                threshold,
            } => write!(
                f,
                "rows {j} and {k} of Z are linearly dependent: W would reveal \
                 {alpha:.3}·y{j} {sign} {magnitude:.3}·y{k} almost exactly ({share:.3} ≥ {threshold} \
                 of it, e.g. y{j} − y{k} for two equal rows); refuse Z (if Z is honest, the \
                 sender's data have a column non-zero only on subjects {j} and {k})",
                sign = if *beta < 0.0 { '−' } else { '+' },
                magnitude = beta.abs()
            ),
            Self::RareIndicator {
                column,
                rare_value,
                count,
                threshold,
            } => write!(
                f,
                "column {column} is a 0/1 indicator equal to {rare_value} for only {count} \
                 subject(s) (< {threshold}); its cross-products reveal the partner's values summed \
                 over those subjects: merge categories or drop the column"
            ),
            Self::SparseColumn {
                column,
                nonzero,
                threshold,
            } => write!(
                f,
                "column {column} is non-zero for only {nonzero} subject(s) (< {threshold}); its \
                 cross-products reveal a weighted sum of the partner's values over those subjects"
            ),
            Self::CrossPredictable {
                column,
                r_squared,
                threshold,
            } => write!(
                f,
                "column {column} is predicted by the other agency's columns with R² = \
                 {r_squared:.4} ≥ {threshold}; the shared cross-products let the other agency \
                 predict every subject's value closely"
            ),
        }
    }
}

/// A finding attributed to an agency: the one whose data or message it is about (0 is A, 1 is B
/// in a two-agency product).
#[derive(Clone, Debug, PartialEq)]
pub struct AgencyFinding {
    /// Index of the agency.
    pub agency: usize,
    /// What was found.
    pub finding: Finding,
}

/// `Z` must have `⌊(n − p)/2⌋` columns for the announced `p` (§2.1 step 1); B checks this because
/// a `Z` with fewer columns leaves B's data with fewer free directions.
pub fn check_column_count(z: &DMatrix<f64>, announced_sender_columns: usize) -> Option<Finding> {
    let prescribed = complement_columns(z.nrows(), announced_sender_columns);
    (z.ncols() != prescribed).then_some(Finding::WrongColumnCount {
        found: z.ncols(),
        prescribed,
        announced_sender_columns,
    })
}

/// `max |ZᵀZ − I| ≤ ORTHONORMALITY_SLACK`, else [`Finding::NotOrthonormal`] (also when `Z` has a
/// non-finite entry).
pub fn check_orthonormal(z: &DMatrix<f64>) -> Option<Finding> {
    let g = z.ncols();
    let gram = z.transpose() * z;
    let max_deviation = if gram.iter().all(|v| v.is_finite()) {
        (gram - DMatrix::identity(g, g)).amax()
    } else {
        f64::NAN
    };
    (max_deviation.is_nan() || max_deviation > ORTHONORMALITY_SLACK).then_some(
        Finding::NotOrthonormal {
            max_deviation,
            threshold: ORTHONORMALITY_SLACK,
        },
    )
}

/// `‖Zᵀx_j‖ / ‖x_j‖ ≤ SENDER_ORTHOGONALITY_SLACK` for every non-zero column `x_j`, else
/// [`Finding::NotOrthogonalToSender`] for the worst column. Run by A, the only party that sees
/// both.
///
/// # Errors
/// [`BreachError::RowMismatch`] when `Z` and `X` have different rows.
pub fn check_orthogonal_to_sender(
    z: &DMatrix<f64>,
    x: &DMatrix<f64>,
) -> Result<Option<Finding>, BreachError> {
    if z.nrows() != x.nrows() {
        return Err(BreachError::RowMismatch {
            z_rows: z.nrows(),
            x_rows: x.nrows(),
        });
    }
    let projections = z.transpose() * x;
    let mut worst: Option<(usize, f64)> = None;
    for j in 0..x.ncols() {
        let norm = x.column(j).norm();
        if norm == 0.0 {
            continue;
        }
        let share = projections.column(j).norm() / norm;
        let share = if share.is_finite() {
            share
        } else {
            f64::INFINITY
        };
        if worst.is_none_or(|(_, s)| share > s) {
            worst = Some((j, share));
        }
    }
    Ok(worst.and_then(|(column, share_in_z)| {
        (share_in_z > SENDER_ORTHOGONALITY_SLACK).then_some(Finding::NotOrthogonalToSender {
            column,
            share_in_z,
            threshold: SENDER_ORTHOGONALITY_SLACK,
        })
    }))
}

/// For each subject `j`, the share of the squared length of column `j` of `I − ZZᵀ` carried by its
/// largest entry; a [`Finding::NearUnitColumn`] for each share at least
/// [`NEAR_UNIT_COLUMN_SHARE`] (or non-finite). Zero columns (subject `j` wholly inside `ran(Z)`,
/// which hides it completely) are skipped.
///
/// # Cost
/// `O(n² g)` time and `O(n)` extra memory: column `j` is `e_j − Z z_jᵀ`, built one at a time.
pub fn check_unit_columns(z: &DMatrix<f64>) -> Vec<Finding> {
    let n = z.nrows();
    let mut findings = Vec::new();
    let mut column = DVector::zeros(n);
    for j in 0..n {
        let row = z.row(j).transpose();
        column.gemv(-1.0, z, &row, 0.0);
        column[j] += 1.0;
        let length = column.norm_squared();
        if length == 0.0 {
            continue;
        }
        let share = column.amax().powi(2) / length;
        if share.is_nan() || share >= NEAR_UNIT_COLUMN_SHARE {
            findings.push(Finding::NearUnitColumn {
                subject: j,
                share,
                threshold: NEAR_UNIT_COLUMN_SHARE,
            });
        }
    }
    findings
}

/// For each pair of subjects `j < k`, the best share `1 − λ_min` with which `W` reveals a
/// combination of their two values (see the module documentation); a
/// [`Finding::DependentRows`] for each share at least [`DEPENDENT_PAIR_SHARE`].
///
/// # Formula
/// With `a = ‖z_j‖²`, `b = ‖z_k‖²`, `c = z_j·z_k`, the Gram matrix `[[a, c], [c, b]]` has
/// `λ_min = (a + b)/2 − √(((a − b)/2)² + c²)`, and its eigenvector `(c, λ_min − a)` (or
/// `(λ_min − b, c)`, whichever is longer) gives the combination. Pairs in which a row has
/// `‖z‖² ≤ 1 − NEAR_UNIT_COLUMN_SHARE` are left to [`check_unit_columns`], which already refuses
/// that subject alone.
///
/// # False alarms
/// See [`DEPENDENT_PAIR_SHARE`]: none in 20 000 honest draws at n = 20. A refusal still counts as
/// one that may be chance ([`refusal_may_be_chance`]), so an honest sender draws again.
///
/// # Cost
/// `O(n² g)` time and `O(n)` extra memory: the inner products of row `j` with all rows are built
/// one row at a time.
pub fn check_dependent_rows(z: &DMatrix<f64>) -> Vec<Finding> {
    let n = z.nrows();
    let alone = 1.0 - NEAR_UNIT_COLUMN_SHARE;
    // Rows left to the single-subject check — and NaN rows, which check_orthonormal refuses —
    // take no part in pairs.
    let paired: Vec<bool> = z.row_iter().map(|row| row.norm_squared() > alone).collect();
    let squared: Vec<f64> = z.row_iter().map(|row| row.norm_squared()).collect();
    let mut findings = Vec::new();
    let mut inner = DVector::zeros(n);
    for j in 0..n {
        if !paired[j] {
            continue;
        }
        let row = z.row(j).transpose();
        inner.gemv(1.0, z, &row, 0.0);
        for k in (j + 1)..n {
            if !paired[k] {
                continue;
            }
            let (a, b, c) = (squared[j], squared[k], inner[k]);
            let half_gap = 0.5 * (a - b);
            let lambda = 0.5 * (a + b) - (half_gap * half_gap + c * c).sqrt();
            let share = 1.0 - lambda;
            if share >= DEPENDENT_PAIR_SHARE {
                let (first, second) = ((c, lambda - a), (lambda - b, c));
                let (alpha, beta) = if first.0.hypot(first.1) >= second.0.hypot(second.1) {
                    first
                } else {
                    second
                };
                let length = alpha.hypot(beta);
                let sign = if alpha < 0.0 { -1.0 } else { 1.0 };
                findings.push(Finding::DependentRows {
                    subjects: (j, k),
                    combination: (sign * alpha / length, sign * beta / length),
                    share,
                    threshold: DEPENDENT_PAIR_SHARE,
                });
            }
        }
    }
    findings
}

/// Everything B checks on a received `Z` before answering: [`check_column_count`],
/// [`check_orthonormal`], [`check_unit_columns`] and [`check_dependent_rows`], in that order.
pub fn inspect_offer(z: &DMatrix<f64>, announced_sender_columns: usize) -> Vec<Finding> {
    let mut findings: Vec<Finding> = check_column_count(z, announced_sender_columns)
        .into_iter()
        .chain(check_orthonormal(z))
        .collect();
    findings.extend(check_unit_columns(z));
    findings.extend(check_dependent_rows(z));
    findings
}

/// An agency's own columns supported on fewer than [`RARE_INDICATOR_MIN_COUNT`] subjects:
/// [`Finding::RareIndicator`] for 0/1 columns (values within the core's `BINARY_FULL_PRECISION`
/// of 0 or 1) with few ones or few zeros, [`Finding::SparseColumn`] for other columns with few
/// non-zero values. All-zero and constant columns disclose nothing through cross-products and are
/// not flagged.
pub fn check_rare_values(data: &DMatrix<f64>) -> Vec<Finding> {
    let threshold = RARE_INDICATOR_MIN_COUNT;
    let mut findings = Vec::new();
    for (column, values) in data.column_iter().enumerate() {
        let near = |v: f64, target: f64| (v - target).abs() <= BINARY_FULL_PRECISION;
        let is_indicator = values.iter().all(|&v| near(v, 0.0) || near(v, 1.0));
        if is_indicator {
            let ones = values.iter().filter(|&&v| near(v, 1.0)).count();
            let zeros = values.len() - ones;
            for (rare_value, count) in [(1u8, ones), (0u8, zeros)] {
                if (1..threshold).contains(&count) {
                    findings.push(Finding::RareIndicator {
                        column,
                        rare_value,
                        count,
                        threshold,
                    });
                }
            }
        } else {
            let nonzero = values.iter().filter(|&&v| v != 0.0).count();
            if (1..threshold).contains(&nonzero) {
                findings.push(Finding::SparseColumn {
                    column,
                    nonzero,
                    threshold,
                });
            }
        }
    }
    findings
}

/// R² of each `target` column on the `predictors` (plus an intercept), from the shared
/// cross-products; a [`Finding::CrossPredictable`] for each R² at least
/// [`CROSS_PREDICTION_R_SQUARED`]. Any agency holding the assembled cross-products can run it.
///
/// Predictors that are constant or linear combinations of earlier predictors are skipped (they
/// add nothing to the fit); constant targets are skipped (their value is their mean, which is
/// shared anyway).
///
/// # Errors
/// [`BreachError::CrossProducts`] for an out-of-range column.
pub fn check_cross_prediction(
    cross_products: &CrossProducts,
    targets: &[usize],
    predictors: &[usize],
) -> Result<Vec<Finding>, BreachError> {
    let columns: Vec<usize> = predictors.iter().chain(targets).copied().collect();
    let centred = cross_products.centred(&columns)?;
    let totals: Vec<f64> = (0..targets.len())
        .map(|t| centred[(predictors.len() + t, predictors.len() + t)])
        .collect();
    let mut sweep = Sweep::new(centred)?;
    for k in 0..predictors.len() {
        match sweep.sweep(k) {
            Ok(()) | Err(SweepError::Aliased { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let scale = totals.iter().fold(0.0_f64, |m, t| m.max(t.abs()));
    let mut findings = Vec::new();
    for (t, (&column, &total)) in targets.iter().zip(&totals).enumerate() {
        if total.is_nan() || total <= scale * f64::EPSILON {
            continue;
        }
        let k = predictors.len() + t;
        let r_squared = 1.0 - sweep.matrix()[(k, k)] / total;
        if r_squared.is_nan() || r_squared >= CROSS_PREDICTION_R_SQUARED {
            findings.push(Finding::CrossPredictable {
                column,
                r_squared,
                threshold: CROSS_PREDICTION_R_SQUARED,
            });
        }
    }
    Ok(findings)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_near_unit_columns_may_be_chance() {
        let near = super::Finding::NearUnitColumn {
            subject: 3,
            share: 0.99,
            threshold: 0.9,
        };
        let skew = super::Finding::NotOrthonormal {
            max_deviation: 0.1,
            threshold: 1e-8,
        };
        assert!(super::refusal_may_be_chance(std::slice::from_ref(&near)));
        assert!(!super::refusal_may_be_chance(&[near, skew]));
        assert!(!super::refusal_may_be_chance(&[]));
    }

    use super::*;
    use crate::complement::OrthogonalComplement;
    use crate::householder::HouseholderQr;
    use crate::tolerance::{DEVIATION_BY_HAND, HAND_COMPUTED, TILT_SHARE, ULPS_BELOW_ONE};
    use orthomask_core::key::{Key, StreamId};
    use orthomask_core::random::fill_standard_normal;

    fn gaussian(rows: usize, cols: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = Key::teaching(seed)
            .stream(StreamId::Scratch(rows as u64))
            .rng();
        let mut buf = vec![0.0; rows * cols];
        fill_standard_normal(&mut rng, &mut buf);
        DMatrix::from_vec(rows, cols, buf)
    }

    /// n = 60, p = 3: an honest Z has g = 28 columns.
    fn honest() -> (DMatrix<f64>, DMatrix<f64>) {
        let x = gaussian(60, 3, 1);
        let z = OrthogonalComplement::of(&x)
            .unwrap()
            .random_frame(28, &Key::teaching(2).stream(StreamId::Scratch(0)))
            .unwrap();
        (x, z)
    }

    #[test]
    fn honest_z_passes_every_check() {
        let (x, z) = honest();
        assert!(inspect_offer(&z, 3).is_empty());
        assert!(check_orthogonal_to_sender(&z, &x).unwrap().is_none());
    }

    #[test]
    fn non_orthonormal_z_is_rejected() {
        let (_, mut z) = honest();
        z.column_mut(4).scale_mut(1.001);
        let finding = check_orthonormal(&z).unwrap();
        match finding {
            // ‖1.001 z‖² − 1 = 0.002001.
            Finding::NotOrthonormal { max_deviation, .. } => {
                assert!(
                    (max_deviation - 0.002_001).abs() < DEVIATION_BY_HAND,
                    "{max_deviation}"
                )
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(finding.severity(), Severity::Reject);
        let mut nan = z.clone();
        nan[(0, 0)] = f64::NAN;
        assert!(matches!(
            check_orthonormal(&nan),
            Some(Finding::NotOrthonormal { .. })
        ));
    }

    #[test]
    fn z_not_orthogonal_to_x_is_rejected() {
        let (x, mut z) = honest();
        // Tilt column 0 of Z towards x₁ and renormalise: Z stays orthonormal to 1e-3 but now
        // has a component along x₁.
        let direction = x.column(1) / x.column(1).norm();
        let tilted = (z.column(0) + direction * 1e-3).normalize();
        z.set_column(0, &tilted);
        match check_orthogonal_to_sender(&z, &x).unwrap() {
            Some(Finding::NotOrthogonalToSender {
                column, share_in_z, ..
            }) => {
                assert_eq!(column, 1);
                assert!(share_in_z > TILT_SHARE, "{share_in_z}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            check_orthogonal_to_sender(&z, &gaussian(5, 1, 3)).unwrap_err(),
            BreachError::RowMismatch {
                z_rows: 60,
                x_rows: 5
            }
        );
    }

    #[test]
    fn z_vanishing_on_a_subject_is_rejected() {
        // §2.3: orthonormal Z with row 7 zero, so column 7 of I − ZZᵀ is e₇ exactly.
        let mut g = gaussian(60, 28, 4);
        g.row_mut(7).fill(0.0);
        let z = HouseholderQr::new(&g).thin_q();
        assert!(check_orthonormal(&z).is_none());
        let findings = check_unit_columns(&z);
        assert_eq!(findings.len(), 1);
        match &findings[0] {
            Finding::NearUnitColumn { subject, share, .. } => {
                assert_eq!(*subject, 7);
                assert!(*share > 1.0 - HAND_COMPUTED);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            inspect_offer(&z, 3)
                .iter()
                .any(|f| matches!(f, Finding::NearUnitColumn { subject: 7, .. }))
        );
    }

    /// By hand: rows `z₀ = (0.3, 0.4)`, `z₁ = (−0.6, −0.8) = −2z₀`: `a = 0.25`, `b = 1`,
    /// `c = −0.5`, so `λ_min = 0.625 − √(0.375² + 0.5²) = 0.625 − 0.625 = 0`, share 1, and the
    /// eigenvector `(c, λ − a) = (−0.5, −0.25)` gives `(2, 1)/√5`: `2z₀ + z₁ = 0`, so `W` reveals
    /// `(2y₀ + y₁)/√5`. The zero row 2 is left to the single-subject check.
    #[test]
    fn dependent_rows_by_hand() {
        let z = DMatrix::from_row_slice(3, 2, &[0.3, 0.4, -0.6, -0.8, 0.0, 0.0]);
        let findings = check_dependent_rows(&z);
        assert_eq!(findings.len(), 1);
        match findings[0] {
            Finding::DependentRows {
                subjects,
                combination: (alpha, beta),
                share,
                ..
            } => {
                assert_eq!(subjects, (0, 1));
                assert!((share - 1.0).abs() < ULPS_BELOW_ONE);
                assert!((alpha - 2.0 / 5f64.sqrt()).abs() < HAND_COMPUTED);
                assert!((beta - 1.0 / 5f64.sqrt()).abs() < HAND_COMPUTED);
            }
            ref other => panic!("unexpected {other:?}"),
        }
        assert_eq!(findings[0].severity(), Severity::Reject);
        assert!(refusal_may_be_chance(&findings));
        // By hand, below the threshold: rows (0.5, 0.5), (0.5, −0.1): a = 0.5, b = 0.26,
        // c = 0.2, λ_min = 0.38 − √(0.12² + 0.2²) = 0.1468, share 0.853 < 0.999.
        let z = DMatrix::from_row_slice(2, 2, &[0.5, 0.5, 0.5, -0.1]);
        assert!(check_dependent_rows(&z).is_empty());
        let message = findings[0].to_string();
        assert!(
            message.contains("rows 0 and 1") && !message.contains('\n'),
            "{message}"
        );
    }

    #[test]
    fn too_few_columns_are_rejected() {
        let (_, z) = honest();
        let narrow = z.columns(0, 20).into_owned();
        assert_eq!(
            check_column_count(&narrow, 3),
            Some(Finding::WrongColumnCount {
                found: 20,
                prescribed: 28,
                announced_sender_columns: 3
            })
        );
        assert!(check_column_count(&z, 3).is_none());
    }

    #[test]
    fn rare_values_are_flagged_and_common_ones_are_not() {
        let n = 50;
        let data = DMatrix::from_fn(n, 5, |i, j| match j {
            0 => f64::from(u8::from(i < 2)),      // 2 ones: rare 1
            1 => f64::from(u8::from(i >= 3)),     // 3 zeros: rare 0
            2 => f64::from(u8::from(i % 2 == 0)), // 25 ones: fine
            3 => {
                if i < 3 {
                    2.5 * i as f64 + 1.0
                } else {
                    0.0
                }
            } // 3 non-zeros: sparse
            _ => i as f64 * 0.3 - 2.0,            // continuous: fine
        });
        let findings = check_rare_values(&data);
        assert_eq!(
            findings,
            vec![
                Finding::RareIndicator {
                    column: 0,
                    rare_value: 1,
                    count: 2,
                    threshold: 5
                },
                Finding::RareIndicator {
                    column: 1,
                    rare_value: 0,
                    count: 3,
                    threshold: 5
                },
                Finding::SparseColumn {
                    column: 3,
                    nonzero: 3,
                    threshold: 5
                },
            ]
        );
        assert!(findings.iter().all(|f| f.severity() == Severity::Warn));
        let common = data.columns(2, 3).into_owned();
        assert_eq!(check_rare_values(&common).len(), 1); // only the sparse column remains
        assert!(check_rare_values(&data.columns(4, 1).into_owned()).is_empty());
    }

    #[test]
    fn cross_predictable_column_is_flagged() {
        let x = gaussian(80, 2, 5);
        let noise = gaussian(80, 2, 6);
        // y₀ = 2 x₀ − x₁ + 0.05 noise (R² ≈ 0.999); y₁ independent noise.
        let mut y = DMatrix::zeros(80, 2);
        y.set_column(
            0,
            &(x.column(0) * 2.0 - x.column(1) + noise.column(0) * 0.05),
        );
        y.set_column(1, &noise.column(1));
        let cp = CrossProducts::direct(&[x, y]).unwrap();
        let findings = check_cross_prediction(&cp, &[2, 3], &[0, 1]).unwrap();
        assert_eq!(findings.len(), 1);
        match findings[0] {
            Finding::CrossPredictable {
                column, r_squared, ..
            } => {
                assert_eq!(column, 2);
                assert!(r_squared > 0.99);
            }
            ref other => panic!("unexpected {other:?}"),
        }
        // The reverse direction: x₀ on (y₀, y₁) has population R² = corr(x₀, 2x₀ − x₁)² = 4/5,
        // below 0.95: silent.
        assert!(
            check_cross_prediction(&cp, &[0], &[2, 3])
                .unwrap()
                .is_empty()
        );
    }
}
