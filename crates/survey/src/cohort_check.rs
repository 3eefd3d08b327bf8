//! Whether a cohort's unmasked statistics could have come from `n` honest devices: the check the
//! collector can make on what it already holds, without seeing a record (issue 43 §5, "a liar
//! moves a release by no more than an answer can").
//!
//! # What the collector holds
//! After unmasking, the collector holds each cohort's `A·X₁` (`n × p₁`; `A` orthogonal with
//! `A·1ₙ = 1ₙ`): basic protocol `A₂,k X₁,k` once `B_k` is removed, share mode `A X_q` from the
//! summed parts. Whatever `A` is, it knows exactly the column sums `s = X₁ᵀ1ₙ` and the Gram matrix
//! `G = X₁ᵀX₁` of the cohort's records (and nothing finer: seed 000, Lemma 3.3). The check takes
//! those two ([`CohortMoments`]), the signed definition (which columns exist, their declared
//! ranges and codings, the QA column, device-side DP) and the rounding scale of the unmasking,
//! and decides whether some cohort of `n` honest records has these statistics. The QA column is
//! the last of the `p₁` (`Tm2Design::qa_column`, right after the answers and the model terms).
//!
//! # Coordinates
//! Column `j` with declared range `[lo_j, hi_j]`, width `w_j = hi_j − lo_j`, is read in unit
//! coordinates `u = (x − lo)/w ∈ [0, 1]` (on the device's scale `u = (y + 1)/2`). Its moments
//! there are affine in `s` and `G`:
//! `Σu_j = (s_j − n lo_j)/w_j`, `Σu_j u_k = (G_jk − lo_j s_k − lo_k s_j + n lo_j lo_k)/(w_j w_k)`.
//! Every condition below is a polynomial `φ` of degree two in one record's values, summed over
//! the records, so it is a linear function of `(n, s, G)`; each is reported in the column's own
//! (declared) units.
//!
//! # The conditions (each necessary: every honest cohort satisfies it)
//! **(C1) One column, exactly.** For `n` values in `[lo, hi]` with `t = Σu`,
//! `k = ⌊t⌋`, `f = t − k`, the set of `(Σx, Σx²)` is exactly
//!
//! ```text
//! n·lo ≤ Σx ≤ n·hi,      (Σx)²/n ≤ Σx² ≤ Q_max(Σx) = n·lo² + 2lo(Σx − n·lo) + w²(k + f²),
//! ```
//!
//! i.e. `Σ(x − lo)(hi − x) ≥ w²·f(1 − f)`. *Proof.* The slice `P = {x ∈ [lo, hi]ⁿ : Σx = S}` is a
//! compact polytope; a vertex has `n` independent active constraints, the equality and `n − 1`
//! bounds, so at most one coordinate lies strictly inside. Those points are the permutations of
//! one point (`k` values at `hi`, one at `lo + f·w`, the rest at `lo`), so all vertices give the
//! same `Σx²`, and a convex function on a polytope attains its maximum at a vertex (Rockafellar
//! 1970, *Convex Analysis*, Cor. 32.3.2): `Σu² ≤ k + f²`. The minimum `S²/n` is Cauchy–Schwarz,
//! attained at equal values; `P` is connected and `Σx²` continuous, so every value between is
//! attained. This sharpens the Bhatia–Davis inequality (*Amer. Math. Monthly* 107 (2000) 353,
//! `Σ(x − lo)(hi − x) ≥ 0`) by `w²f(1 − f) ≤ w²/4`. The lower end `Σx² ≥ (Σx)²/n` is true of any
//! real numbers, a liar's included: it can only refuse statistics that no matrix has (C4).
//!
//! **(C2) Discrete columns.** A yes/no answer, a category indicator and an `answered` indicator
//! are 0 or 1, so `x² = x` and `Σx² = Σx` exactly (on the device's `±1` scale: `Σy² = n`). An
//! integer or Likert answer has `k = (x − lo)/step ∈ {0, …, K}` whole (`K` steps; the half-step
//! lattice when an unanswered question's midpoint is off the grid, since a skipped answer is coded
//! as the midpoint, [`crate::coding`]), so exactly: `Σk ∈ ℤ`; `k(k − 1)` is even, so
//! `Σk(k − 1)/2 ∈ ℤ` (with `Σk ∈ ℤ`: `Σk² ∈ ℤ` and `Σk² ≡ Σk mod 2`); and `Σk² ≥ n·q² + r(2q + 1)`
//! with `Σk = qn + r`, `0 ≤ r < n`, the balanced vector being majorised by every other integer
//! vector with the same sum and `Σk²` Schur-convex (Marshall, Olkin & Arnold 2011, *Inequalities:
//! Theory of Majorization*, §1.A, §3.A). The vertex of (C1) lies on the lattice when `Σk` is whole,
//! so `Q_max` is the same. These are necessary, not exact: `n = 2`, `K = 3`, `(Σk, Σk²) = (3, 7)`
//! passes all of them and no pair gives it (tested). A lattice condition is decided only where
//! the rounding allowance is below [`LATTICE_RESOLUTION`] of a step; elsewhere it is skipped
//! (there it could not refuse anything).
//!
//! **(C2′) The coding's identities**, exact for every honest record ([`crate::coding`],
//! [`crate::terms`]): two indicators of one categorical question are never both 1 (`Σx_a x_b = 0`)
//! and at most one is (`Σ_options Σx ≤ n`); an unanswered question's value column holds its
//! neutral value `m` (0 for 0/1 columns, the midpoint otherwise), `(x − m)(1 − a) = 0` with `a` its
//! `answered` column; and a model term equals its inputs' formula: with `x̃ = x·a = x − m + m·a`
//! for a numeric answer that may be unanswered (`x̃ = x` otherwise, and for 0/1 columns, which a
//! skip sets to 0), a square is `t = x̃²`, a product `t = x̃·z̃`, a centring `t = x̃ − c·a`
//! (`a = 1` when always answered). Cubes and logarithms are not polynomials of degree two and keep
//! only their derived range.
//!
//! **(C3) Pairs of columns.** For `x ∈ [lo_x, hi_x]`, `y ∈ [lo_y, hi_y]` each corner product is
//! non-negative, `(x − lo_x)(y − lo_y) ≥ 0`, `(hi_x − x)(hi_y − y) ≥ 0`,
//! `(x − lo_x)(hi_y − y) ≥ 0`, `(hi_x − x)(y − lo_y) ≥ 0`, and summed over the records each is linear in `s` and `G`: the
//! McCormick inequalities (McCormick 1976, *Math. Programming* 10, 147), exact consequences of the
//! boxes.
//!
//! **(C4) Real records.** `G − ssᵀ/n` (the centred cross-products) is positive semidefinite. This
//! holds for **any** real matrix, so no participant can fail it; it refuses statistics that are not
//! those of one matrix (a party's corrupted arithmetic, `s` and `G` of different cohorts). Weyl's
//! inequality turns the entries' error bounds into an eigenvalue allowance (Frobenius norm).
//!
//! **(C5) Device-side DP.** With DP a device sends `u + e`, `e ~ N(0, ς²)` i.i.d. on every answer
//! column (`ς = σ_dp/2` in unit coordinates; σ_dp on the `[−1, 1]` scale). For a condition
//! `Σᵢφ(uᵢ)` with linear part `c` and quadratic part `M` (symmetric),
//! `Σφ(uᵢ + eᵢ) − Σφ(uᵢ) = Σᵢ∇φ(uᵢ)·eᵢ + Σᵢeᵢᵀ M eᵢ`. The first term is Gaussian with variance at
//! most `nς²ΣⱼBⱼ²`, `Bⱼ` the largest `|∂φ/∂uⱼ|` over the unit box; the second is
//! `ς²Σₗλₗ χ²ₙ,ₗ` over `M`'s eigenvalues `λₗ` (rotate `e` to `M`'s eigenvectors: independent
//! `N(0, ς²)` coordinates). With `Pr[N(0, 1) > z] ≤ e^{−z²/2}` and Laurent & Massart (2000,
//! *Ann. Statist.* 28(5), Lemma 1: `Pr[χ²ₙ ≥ n + 2√(nt) + 2t] ≤ e^{−t}`,
//! `Pr[χ²ₙ ≤ n − 2√(nt)] ≤ e^{−t}`), each condition is widened by those ends at `t = ln(E/α)`,
//! `z = √(2t)`, where `E` counts every one-sided event used (two per Gaussian, two per eigenvalue,
//! two for the sum inside (C1)'s `f`): by the union bound an honest cohort is refused with
//! probability at most `α`. The caller passes the policy's
//! [`UPLOAD_FALSE_REFUSAL`](crate::policy::UPLOAD_FALSE_REFUSAL) (10⁻⁹, now per cohort). The
//! lattice conditions do not survive noise and are not made; the identities become intervals.
//!
//! **(C6) Rounding.** The collector's entries carry the unmasking's rounding. Its worst case is
//! about `p·u·R` per orthogonal operator (`orthomask_core::protocol::accuracy`, "Not a worst
//! case"; `u = 2⁻⁵³`, `R` the record norm, bounded by the rounding scale the collector already
//! passes its QA check), three operators touch the record, and share mode sums parts: the bound
//! per entry on the device's scale is `δ = ENTRY_ROUNDINGS·p·u·scale`, the same worst case the
//! collector's zero-column rule (E9) uses. A condition moves by at most
//! `Σⱼδⱼ(n|cⱼ| + Σₖ|∂²|·Σᵢ|xᵢₖ|) + nΣ|Cⱼₖ|δⱼδₖ` (with `Σᵢ|xᵢₖ| ≤ √(n·Σᵢxᵢₖ²)` from `G` itself),
//! plus the floating-point error of the sums (`γ_n = nu`, Higham 2002, *Accuracy and Stability*,
//! Lemma 3.1) times [`ARITHMETIC_ROUNDINGS`].
//!
//! # The ceiling: how far one liar moves a mean
//! One participant sends any record; the other `n − 1` are honest. Read the liar's column in unit
//! coordinates with the liar at `1 + e` (`e > 0` beyond `hi`; below `lo` is the mirror). With the
//! honest records' `T = Σu`, `V = Σu(1 − u)`, (C1) accepts exactly when
//!
//! ```text
//! (a) e ≤ n − 1 − T,      (b) e(1 + e) + f(1 − f) ≤ V,   f = frac(T + e).
//! ```
//!
//! For a given honest cohort, on each piece where `⌊T + e⌋ = m` write `c = m − T`:
//! `e(1 + e) + f(1 − f) = (e + f)(1 + e − f) = (2e − c)(1 + c)`, linear in `e`, so the largest
//! accepted `e` is the largest `min(m + 1 − T, n − 1 − T, (V/(1 + c) + c)/2)` over the pieces that
//! admit one ([`liar_excess_given`]). Over all honest cohorts, `V ≤ T − T²/(n − 1)` (equal values)
//! and `(T − T²/(n − 1)) − f(1 − f)` is convex on each piece, so the worst case has `T + e = m`
//! whole and `e(1 + e) ≤ (m − e) − (m − e)²/(n − 1)`, i.e.
//! `n·e² + 2(n − 1 − m)e + m² − (n − 1)m ≤ 0`:
//!
//! ```text
//! e*(n) = max over m = 0 … n − 1 of [√((n − 1)(m + 1)(n − 1 − m)) − (n − 1 − m)]/n  ≤  (√n − 1)/2
//! ```
//!
//! ([`liar_excess`]; equality on the right when `n` is a square). A liar whose true answer is `a`
//! moves the column mean by `|x_liar − a|/n ≤ (1 + e*(n))·w/n` ([`mean_shift_ceiling`]), against
//! the `w/n` of an in-range lie (the issue's target):
//!
//! | n | e*(n) | ceiling | target `w/n` | ratio |
//! |---|---|---|---|---|
//! | 5 | 0.6 | 0.32 w | 0.2 w | 1.6 |
//! | 20 | 1.735 416 | 0.136 771 w | 0.05 w | 2.74 |
//! | 100 | 4.5 | 0.055 w | 0.01 w | 5.5 |
//!
//! **No check on `(s, G)` does better.** At the worst case the `n − 1` honest values are all
//! `(m − e*)/(n − 1)` and the liar `1 + e*`: then `Σu = m + 1` and `Σu² = m + 1`, exactly the
//! statistics of the honest cohort with `m + 1` answers at `hi` and the rest at `lo`; with the
//! other columns equal in every record, the whole `(s, G)` is an honest cohort's. Any refusal of
//! it would refuse that honest cohort too. The ceiling grows like `√n/2` times the target; reaching
//! `w/n` needs each record's answers proven in range on their own (Prio-style per-record range
//! proofs), which aggregates cannot replace. Where aggregates do reach it: a **0/1 column**
//! (yes/no, indicator) admits no excess at all (`Σx² = Σx` forces the liar's value to 0 or 1), and
//! a wild lie like the issue's (an age of 280.8 on 18–90, `e = 2.65`; the share-mode `e = 899.5`)
//! exceeds `e*(n)` for every `n ≤ 39` and every cohort the policy allows (`e*(n) < 899.5` for
//! `n < 3.2·10⁶`) respectively, so it is refused whatever the honest answers.
//!
//! **With DP** the allowance widens (C5): the liar's excess solves
//! `e(1 + e) ≤ (n − 1)/4 + 2ςz√n + ς²U_n` (continuous) and `e(1 + e) ≤ 2ςz√n + ς²(U_n − D_n)`
//! (0/1), in widths, an upper bound holding with probability `1 − α` over the honest noise
//! ([`CohortCheck::mean_shift_ceiling`]). The tolerances of (C6) add a few `δ` (about 10⁻⁸ of a
//! range) to each.
//!
//! # What a refusal says
//! [`CohortRefusal`] is one line naming the column (1-based position among the `p₁`, its name and
//! question) and the condition, and how far beyond the allowance the statistic lies: a function of
//! `s` and `G`, which the collector holds anyway. A spoilt cohort's unmasked values are never
//! stored, so what is stored about it should be [`CohortRefusal::public_note`], which names the
//! column and the condition and no number.
//!
//! # How the collector calls it
//! Build [`CohortCheck::new`] once per survey from its signed template with
//! [`UPLOAD_FALSE_REFUSAL`](crate::policy::UPLOAD_FALSE_REFUSAL); for each cohort that passed QA,
//! take the `n × p₁` matrix it recovered — `UnmaskedCohort::data` in the basic protocol,
//! `combine_parts`' matrix in share mode, both in the declared units with the QA column last at
//! `c` — as [`CohortMoments::of_rows`]`(data, Units::Declared)`, and call
//! [`CohortCheck::check`] with the rounding scale the QA check used (basic:
//! `max_row_norm(A₂,k X_k B_k)`; share mode: the sum of the parts' reported scales). A refusal
//! spoils the cohort exactly as a failed QA check does.

mod snap;
pub use snap::SnapReport;

use crate::coding::{ColumnSource, ColumnSpec};
use crate::definition::{Question, QuestionKind, SurveyDefinition, SurveyError, TermKind};
use crate::error::invalid;
use crate::intake_bounds::{chi2_lower, chi2_upper};
use nalgebra::{DMatrix, SymmetricEigen};
use orthomask_core::protocol::accuracy::UNIT_ROUNDOFF;
use std::fmt;

/// Worst-case roundings per unmasked entry, in units of `p·u·scale` on the device's scale (C6):
/// three orthogonal operators (`x̃B`, `A₂`, `Bᵀ`) each at most about `p·u·R`
/// (`orthomask_core::protocol::accuracy`, Higham 2002 Lemma 19.3), times four for share mode's
/// sum of parts and their fixed-point decoding — the twelve of the collector's zero-column rule
/// (E9), `orthomask_core::tolerance::ZERO_COLUMN_ROUNDINGS`. The measured rms error is about
/// `√3·u·R`, hundreds of times below.
pub const ENTRY_ROUNDINGS: f64 = 12.0;

/// Roundings of one entry's own arithmetic on the device and at the collector, in units of
/// `u·(|lo| + |hi|)` of its column: the device computes a term (`x²`, `x·z`) and maps it to
/// `[−1, 1]`, the collector maps it back (`lo + (y + 1)·h`); each is a few correctly rounded
/// operations on numbers no larger than `|lo| + |hi|`.
pub const ENTRY_ARITHMETIC_ROUNDINGS: f64 = 8.0;

/// Safety factor on the `γ_n = n·u` bounds of the sums and of this module's own arithmetic (C6):
/// the bounds are already worst cases, and a factor of four covers the few operations each
/// transformation adds.
pub const ARITHMETIC_ROUNDINGS: f64 = 4.0;

/// A lattice condition (C2) is decided only when its rounding allowance is below this fraction of
/// a step: then "within the allowance of a whole number" cannot be met by the rounding of a
/// statistic half a step away.
pub const LATTICE_RESOLUTION: f64 = 0.25;

/// In which units the statistics arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    /// As the padded record carries them: each answer on `[−1, 1]` when the device scales by
    /// declared ranges (or has DP), in its own units otherwise; the QA column at
    /// `Tm2Design::record_qa_entry` (`±1` when scaled).
    Record,
    /// After `Tm2Design::unscale_unmasked`: the answers in their declared units, the QA column at
    /// the QA constant `c` — what `DataCollector::unmask_cohort` and `combine_parts` return.
    Declared,
}

/// A cohort's statistics as the collector computes them.
#[derive(Clone, Debug, PartialEq)]
pub struct CohortMoments {
    /// Records `n`.
    pub n: usize,
    /// Column sums `s = X₁ᵀ1ₙ`, length `p₁` (answers, model terms, QA column).
    pub sums: Vec<f64>,
    /// Cross-products `G = X₁ᵀX₁`, `p₁ × p₁`.
    pub gram: DMatrix<f64>,
    /// Their units.
    pub units: Units,
}

impl CohortMoments {
    /// `n`, `s` and `G` of an `n × p₁` block (`A·X₁` gives the same as `X₁`).
    pub fn of_rows(rows: &DMatrix<f64>, units: Units) -> Self {
        Self {
            n: rows.nrows(),
            sums: rows.column_iter().map(|c| c.sum()).collect(),
            gram: rows.tr_mul(rows),
            units,
        }
    }
}

/// What a column is, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnRole {
    /// A question's column (its answer, an indicator, or its `answered` indicator).
    Answer,
    /// A model term computed on the device.
    Term,
    /// The QA column.
    Qa,
}

/// A column named for a person: its 1-based position among the `p₁`, its name and question.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnLabel {
    /// 1-based position among the `p₁` data columns.
    pub position: usize,
    /// The column's name (`age`, `region=south`, `hours_answered`, a term's id, `QA`).
    pub name: String,
    /// The question's text, for a question's column.
    pub question: Option<String>,
    /// What kind of column it is.
    pub role: ColumnRole,
}

/// Longest question text a message quotes, in characters.
const QUOTED_LABEL: usize = 60;

impl fmt::Display for ColumnLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {} ({:?}", self.position, self.name)?;
        match (&self.role, &self.question) {
            (ColumnRole::Qa, _) => write!(f, ", the QA column)"),
            (ColumnRole::Term, _) => write!(f, ", a model term)"),
            (ColumnRole::Answer, Some(q)) => {
                let one_line: String = q.split_whitespace().collect::<Vec<_>>().join(" ");
                let short: String = one_line.chars().take(QUOTED_LABEL).collect();
                let more = if one_line.chars().count() > QUOTED_LABEL {
                    "…"
                } else {
                    ""
                };
                write!(f, ", \"{short}{more}\")")
            }
            (ColumnRole::Answer, None) => write!(f, ")"),
        }
    }
}

/// Which corner product of two boxes (C3) a pair's cross-product breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    /// `Σ(x − lo_x)(y − lo_y) ≥ 0`.
    LowLow,
    /// `Σ(x − lo_x)(hi_y − y) ≥ 0`.
    LowHigh,
    /// `Σ(hi_x − x)(y − lo_y) ≥ 0`.
    HighLow,
    /// `Σ(hi_x − x)(hi_y − y) ≥ 0`.
    HighHigh,
}

/// Which necessary condition a cohort's statistics fail (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// (C1) `Σx ≥ n·lo`.
    SumBelowRange,
    /// (C1) `Σx ≤ n·hi`.
    SumAboveRange,
    /// (C1) `Σx² ≤ Q_max(Σx)`.
    SquaresAboveMaximum,
    /// (C4), one column: `Σx² ≥ (Σx)²/n`.
    BelowMeanSquare,
    /// (C2) `Σx² = Σx` of a 0/1 column.
    NotBinary,
    /// (C2) `Σk ∈ ℤ`.
    SumOffLattice,
    /// (C2) `Σk(k − 1)/2 ∈ ℤ`.
    SquaresOffLattice,
    /// (C2) `Σk² ≥ n·q² + r(2q + 1)`.
    SquaresBelowLatticeMinimum,
    /// (C2) `Σk_j k_k ∈ ℤ` for two columns on whole-step lattices.
    ProductOffLattice,
    /// (C2′) two indicators of one question never both 1.
    ExclusiveOptions,
    /// (C2′) at most one indicator of a question per record.
    MoreOptionsThanRecords,
    /// (C2′) an unanswered question's value is its neutral value.
    UnansweredNotNeutral,
    /// (C2′) a model term equals its formula.
    TermValue,
    /// (C3) a corner product.
    Corner(Corner),
    /// The QA column is the constant (`Σ`, `Σ²` and its cross-products).
    QaColumn,
    /// (C4) `G − ssᵀ/n ⪰ 0`.
    NotPositiveSemidefinite,
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::SumBelowRange => {
                "its sum is below what every answer at the declared minimum gives"
            }
            Self::SumAboveRange => {
                "its sum is above what every answer at the declared maximum gives"
            }
            Self::SquaresAboveMaximum => {
                "its sum of squares is larger than any answers in the declared range with this \
                 sum give"
            }
            Self::BelowMeanSquare => {
                "its sum of squares is below (sum)²/n, which no real numbers give"
            }
            Self::NotBinary => {
                "its sum of squares is not its sum, so not every value is one of the two ends"
            }
            Self::SumOffLattice => "its sum is not a whole number of the question's steps",
            Self::SquaresOffLattice => {
                "its sum of k(k − 1)/2 over the answers' step counts k is not a whole number"
            }
            Self::SquaresBelowLatticeMinimum => {
                "its sum of squares is below the least that whole-step answers with this sum give"
            }
            Self::ProductOffLattice => {
                "their cross-product is not a whole number of the two questions' steps"
            }
            Self::ExclusiveOptions => {
                "two options of one question are both chosen in some record (their cross-product \
                 is not 0)"
            }
            Self::MoreOptionsThanRecords => "more options are chosen than there are records",
            Self::UnansweredNotNeutral => {
                "a record marked unanswered carries a value other than the neutral one"
            }
            Self::TermValue => "the model term is not the value its inputs give",
            Self::Corner(Corner::LowLow) => {
                "their cross-product is below what answers in their ranges give (low, low corner)"
            }
            Self::Corner(Corner::LowHigh) => {
                "their cross-product is above what answers in their ranges give (low, high corner)"
            }
            Self::Corner(Corner::HighLow) => {
                "their cross-product is above what answers in their ranges give (high, low corner)"
            }
            Self::Corner(Corner::HighHigh) => {
                "their cross-product is below what answers in their ranges give (high, high \
                 corner)"
            }
            Self::QaColumn => "the QA column is not the agreed constant",
            Self::NotPositiveSemidefinite => {
                "the centred cross-products are not positive semidefinite, which no real records \
                 give"
            }
        })
    }
}

/// Why a cohort's statistics are refused: one line each.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CohortRefusal {
    /// Not the survey's shape.
    #[error("the cohort's statistics have {found} {what}, the survey's records {expected}")]
    Shape {
        /// `"column sums"`, `"rows of cross-products"`, `"columns of cross-products"`.
        what: &'static str,
        /// `p₁`.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// `n = 0`.
    #[error("an empty cohort has no statistics to check")]
    Empty,
    /// A NaN or infinity.
    #[error("{column}: a statistic of the cohort is not a finite number")]
    NotFinite {
        /// The column whose sum or cross-product it is.
        column: ColumnLabel,
    },
    /// A definition (or rate) from which no check can be built.
    #[error("the survey definition gives no cohort check: {reason}")]
    Definition {
        /// Why, in one line.
        reason: String,
    },
    /// A rounding scale that is negative or not finite.
    #[error("the rounding scale {scale} is not a finite number at least 0")]
    Scale {
        /// What was given.
        scale: f64,
    },
    /// A necessary condition fails.
    #[error(
        "{}: {condition}: off by {excess:.4e} beyond the {allowance:.3e} allowed for rounding{}; \
         no {n} honest records give these statistics",
        join_columns(.columns),
        if *.noise { " and DP noise" } else { "" }
    )]
    Violated {
        /// The columns the condition is about (one; two for a pair; more for a question's
        /// indicators or a term and its inputs).
        columns: Vec<ColumnLabel>,
        /// Which condition.
        condition: Condition,
        /// How far beyond the allowance, in the condition's units (the columns' declared units,
        /// their squares or products; steps for a lattice condition; the record's units for the
        /// QA column and the centred Gram matrix's unit coordinates for (C4)).
        excess: f64,
        /// The allowance granted the condition for rounding and noise, in the same units.
        allowance: f64,
        /// Whether the allowance includes DP noise.
        noise: bool,
        /// Records in the cohort.
        n: usize,
    },
}

fn join_columns(columns: &[ColumnLabel]) -> String {
    columns
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" and ")
}

impl CohortRefusal {
    /// The refusal without any number derived from the cohort: which columns and which
    /// condition. What may be stored about a spoilt cohort (whose statistics are not).
    pub fn public_note(&self) -> String {
        match self {
            Self::Violated {
                columns, condition, ..
            } => format!(
                "{}: {condition}; the cohort's statistics are not those of honest records",
                join_columns(columns)
            ),
            Self::NotFinite { column } => {
                format!("{column}: a statistic of the cohort is not a finite number")
            }
            Self::Shape { .. } | Self::Empty | Self::Scale { .. } | Self::Definition { .. } => {
                self.to_string()
            }
        }
    }
}

/// How a column's values are spaced.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Grid {
    /// Two values, its ends.
    Binary,
    /// `lo + k·(hi − lo)/steps` for whole `k`.
    Steps(f64),
    /// Anything in the range.
    Continuous,
}

#[derive(Clone, Debug)]
struct Column {
    label: ColumnLabel,
    lo: f64,
    hi: f64,
    grid: Grid,
}

impl Column {
    fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// `constant + Σ coef·x_j`.
#[derive(Clone, Debug, Default)]
struct Affine {
    constant: f64,
    terms: Vec<(usize, f64)>,
}

impl Affine {
    fn column(j: usize) -> Self {
        Self {
            constant: 0.0,
            terms: vec![(j, 1.0)],
        }
    }
}

/// A polynomial of degree two in one record's values: `constant + Σ linear + Σ quadratic`
/// (`(j, k, c)` with `j ≤ k` is `c·x_j x_k`).
#[derive(Clone, Debug, Default)]
struct Poly {
    constant: f64,
    linear: Vec<(usize, f64)>,
    quadratic: Vec<(usize, usize, f64)>,
}

impl Poly {
    fn product(a: &Affine, b: &Affine) -> Self {
        let mut p = Self {
            constant: a.constant * b.constant,
            ..Self::default()
        };
        p.linear
            .extend(a.terms.iter().map(|&(j, c)| (j, c * b.constant)));
        p.linear
            .extend(b.terms.iter().map(|&(j, c)| (j, c * a.constant)));
        for &(j, x) in &a.terms {
            for &(k, y) in &b.terms {
                p.quadratic.push((j.min(k), j.max(k), x * y));
            }
        }
        p
    }

    fn affine(a: &Affine) -> Self {
        Self {
            constant: a.constant,
            linear: a.terms.clone(),
            quadratic: Vec::new(),
        }
    }

    fn scaled(mut self, factor: f64) -> Self {
        self.constant *= factor;
        self.linear.iter_mut().for_each(|t| t.1 *= factor);
        self.quadratic.iter_mut().for_each(|t| t.2 *= factor);
        self
    }

    fn plus(mut self, other: Self) -> Self {
        self.constant += other.constant;
        self.linear.extend(other.linear);
        self.quadratic.extend(other.quadratic);
        self
    }

    /// Like terms collected, zero coefficients dropped.
    fn merged(self) -> Self {
        let mut linear: Vec<(usize, f64)> = Vec::new();
        for (j, c) in self.linear {
            match linear.iter_mut().find(|t| t.0 == j) {
                Some(t) => t.1 += c,
                None => linear.push((j, c)),
            }
        }
        let mut quadratic: Vec<(usize, usize, f64)> = Vec::new();
        for (j, k, c) in self.quadratic {
            match quadratic.iter_mut().find(|t| t.0 == j && t.1 == k) {
                Some(t) => t.2 += c,
                None => quadratic.push((j, k, c)),
            }
        }
        linear.retain(|t| t.1 != 0.0);
        quadratic.retain(|t| t.2 != 0.0);
        linear.sort_by_key(|t| t.0);
        quadratic.sort_by_key(|t| (t.0, t.1));
        Self {
            constant: self.constant,
            linear,
            quadratic,
        }
    }

    /// The same polynomial in unit coordinates: `x_j = lo_j + w_j·u_j`.
    fn to_unit(&self, columns: &[Column]) -> Self {
        let mut p = Self {
            constant: self.constant,
            ..Self::default()
        };
        for &(j, c) in &self.linear {
            p.constant += c * columns[j].lo;
            p.linear.push((j, c * columns[j].width()));
        }
        for &(j, k, c) in &self.quadratic {
            let (a, b) = (&columns[j], &columns[k]);
            p.constant += c * a.lo * b.lo;
            p.linear.push((k, c * a.lo * b.width()));
            p.linear.push((j, c * b.lo * a.width()));
            p.quadratic.push((j, k, c * a.width() * b.width()));
        }
        p.merged()
    }

    /// The columns it involves, in order.
    fn columns(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .linear
            .iter()
            .map(|t| t.0)
            .chain(self.quadratic.iter().flat_map(|t| [t.0, t.1]))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// What a condition demands of `Φ = Σᵢφ(uᵢ)`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Test {
    /// `Φ ≥ 0`.
    AtLeast,
    /// `Φ ≥ w_j²·f(1 − f)`, `f = frac(Σu_j)`: (C1)'s exact upper end.
    MaxSquares { column: usize },
    /// `Φ = 0`.
    Equal,
    /// `Φ ∈ ℤ` (no DP).
    Integral,
    /// `Φ = Σk_j² ≥ n q² + r(2q + 1)` (no DP).
    LatticeMinimum { column: usize, steps: f64 },
}

#[derive(Clone, Debug)]
struct Form {
    condition: Condition,
    named: Vec<usize>,
    /// In unit coordinates.
    poly: Poly,
    test: Test,
    /// `Σⱼ Bⱼ²` of (C5).
    gradient_bound_squared: f64,
    /// Eigenvalues of the quadratic part (C5).
    eigenvalues: Vec<f64>,
}

impl Form {
    fn new(condition: Condition, named: Vec<usize>, poly: Poly, test: Test) -> Self {
        let poly = poly.merged();
        let involved = poly.columns();
        let local = |j: usize| involved.iter().position(|&c| c == j).unwrap_or(0);
        let d = involved.len();
        // ∂φ/∂u_j = c_j + Σ_k D_jk u_k over the unit box: its largest magnitude B_j.
        let mut gradient_bound_squared = 0.0;
        for &j in &involved {
            let c = poly
                .linear
                .iter()
                .filter(|t| t.0 == j)
                .map(|t| t.1)
                .sum::<f64>();
            let (mut low, mut high) = (c, c);
            for &(a, b, q) in &poly.quadratic {
                let slope = if a == j && b == j {
                    2.0 * q
                } else if a == j || b == j {
                    q
                } else {
                    0.0
                };
                low += slope.min(0.0);
                high += slope.max(0.0);
            }
            let bound = low.abs().max(high.abs());
            gradient_bound_squared += bound * bound;
        }
        let eigenvalues = if poly.quadratic.is_empty() {
            Vec::new()
        } else {
            let mut m = DMatrix::<f64>::zeros(d, d);
            for &(a, b, q) in &poly.quadratic {
                let (i, k) = (local(a), local(b));
                if i == k {
                    m[(i, i)] += q;
                } else {
                    m[(i, k)] += q / 2.0;
                    m[(k, i)] += q / 2.0;
                }
            }
            SymmetricEigen::new(m)
                .eigenvalues
                .iter()
                .copied()
                .filter(|l| *l != 0.0)
                .collect()
        };
        Self {
            condition,
            named,
            poly,
            test,
            gradient_bound_squared,
            eigenvalues,
        }
    }

    /// One-sided events its DP widening uses (C5).
    fn noise_events(&self) -> usize {
        let gap = usize::from(matches!(self.test, Test::MaxSquares { .. }));
        2 + 2 * self.eigenvalues.len() + 2 * gap
    }
}

/// The QA column's place and value.
#[derive(Clone, Copy, Debug)]
struct Qa {
    column: usize,
    /// `c`.
    constant: f64,
    /// The record's entry (`c/|c|` when scaled, `c` otherwise).
    record: f64,
}

/// The checks of one survey's cohorts (module documentation), built once from its definition.
#[derive(Clone, Debug)]
pub struct CohortCheck {
    columns: Vec<Column>,
    qa: Option<(Qa, ColumnLabel)>,
    forms: Vec<Form>,
    scaled: bool,
    /// `ς = σ_dp/2` in unit coordinates.
    dp: Option<f64>,
    p: usize,
    false_refusal: f64,
}

/// The neutral value of a question's value column when unanswered ([`crate::coding`]): 0 for
/// yes/no and indicators, the midpoint of the range otherwise (computed as the coding does).
fn neutral(question: &Question) -> f64 {
    match &question.kind {
        QuestionKind::YesNo | QuestionKind::Categorical { .. } => 0.0,
        QuestionKind::Integer { min, max } => (*min as f64 + *max as f64) / 2.0,
        QuestionKind::Number { min, max } => (min + max) / 2.0,
        QuestionKind::Likert { points, .. } => (1.0 + f64::from(*points)) / 2.0,
    }
}

/// Whether `spec` is a numeric question's own value column (integer, number, Likert).
fn numeric_value(question: &Question, spec: &ColumnSpec) -> bool {
    matches!(
        question.kind,
        QuestionKind::Integer { .. } | QuestionKind::Number { .. } | QuestionKind::Likert { .. }
    ) && spec.name == question.id
}

fn grid_of(question: &Question, spec: &ColumnSpec) -> Grid {
    if question.may_be_unanswered() && spec.name == question.answered_column() {
        return Grid::Binary;
    }
    let steps = |s: f64| {
        // A skipped answer is the midpoint, off the grid when the steps are odd: half steps.
        let s = if question.may_be_unanswered() && s % 2.0 == 1.0 {
            2.0 * s
        } else {
            s
        };
        if s == 1.0 {
            Grid::Binary
        } else {
            Grid::Steps(s)
        }
    };
    match &question.kind {
        QuestionKind::YesNo | QuestionKind::Categorical { .. } => Grid::Binary,
        QuestionKind::Integer { min, max } => steps(*max as f64 - *min as f64),
        QuestionKind::Likert { points, .. } => steps(f64::from(*points) - 1.0),
        QuestionKind::Number { .. } => Grid::Continuous,
    }
}

/// Whether answer column `name`'s answered values are whole numbers (a yes/no, an indicator,
/// an integer, a Likert point): then a term of it can be on a lattice. An unanswered input
/// makes a term 0 ([`crate::terms`]), a whole number too.
fn whole_valued(definition: &SurveyDefinition, specs: &[ColumnSpec], name: &str) -> bool {
    specs
        .iter()
        .find(|c| c.name == name)
        .and_then(|c| match c.source {
            ColumnSource::Question(q) => definition.questions.get(q),
            ColumnSource::Term(_) => None,
        })
        .is_some_and(|q| {
            matches!(
                q.kind,
                QuestionKind::YesNo
                    | QuestionKind::Categorical { .. }
                    | QuestionKind::Integer { .. }
                    | QuestionKind::Likert { .. }
            )
        })
}

/// A model term's lattice: whole numbers when its inputs' values are whole and its formula keeps
/// them so (a power, a product, a centring at a whole number) and its derived range has whole
/// ends; anything in the range otherwise. Its sums and cross-products with other lattice columns
/// are then whole numbers in every honest cohort (C2), which the release must not let anyone
/// perturb unseen (issue 43's adversarial review; [`CohortCheck::snap`]).
fn term_grid(
    definition: &SurveyDefinition,
    specs: &[ColumnSpec],
    term: usize,
    (lo, hi): (f64, f64),
) -> Grid {
    let whole = |name: &str| whole_valued(definition, specs, name);
    let stays_whole = definition.terms.get(term).is_some_and(|t| match &t.kind {
        TermKind::Power { of, .. } => whole(of),
        TermKind::Product { of: [a, b] } => whole(a) && whole(b),
        TermKind::Centre { of, at } => whole(of) && at.fract() == 0.0,
        TermKind::Log { .. } | TermKind::Log1p { .. } => false,
    });
    if !(stays_whole && lo.fract() == 0.0 && hi.fract() == 0.0) {
        return Grid::Continuous;
    }
    let steps = hi - lo;
    if steps == 1.0 {
        Grid::Binary
    } else {
        Grid::Steps(steps)
    }
}

/// `x̃ = x·a` as an affine form of the record's columns, and `a`'s column when the input's
/// question may be unanswered (module documentation, (C2′)).
fn answered_input(
    definition: &SurveyDefinition,
    specs: &[ColumnSpec],
    name: &str,
) -> Option<(Affine, Option<usize>)> {
    let j = specs
        .iter()
        .position(|c| c.name == name && matches!(c.source, ColumnSource::Question(_)))?;
    let ColumnSource::Question(q) = specs[j].source else {
        return None;
    };
    let question = definition.questions.get(q)?;
    if !question.may_be_unanswered() {
        return Some((Affine::column(j), None));
    }
    let a = specs
        .iter()
        .position(|c| c.name == question.answered_column())?;
    if numeric_value(question, &specs[j]) {
        let m = neutral(question);
        Some((
            Affine {
                constant: -m,
                terms: vec![(j, 1.0), (a, m)],
            },
            Some(a),
        ))
    } else {
        Some((Affine::column(j), Some(a)))
    }
}

/// A term's identity `t − formula = 0` in declared units, where it is a polynomial of degree two.
fn term_identity(
    definition: &SurveyDefinition,
    specs: &[ColumnSpec],
    column: usize,
    kind: &TermKind,
) -> Option<Poly> {
    let t = Poly::affine(&Affine::column(column));
    let formula = match kind {
        TermKind::Power { of, exponent: 2 } => {
            let (x, _) = answered_input(definition, specs, of)?;
            Poly::product(&x, &x)
        }
        TermKind::Product { of: [a, b] } => {
            let (x, _) = answered_input(definition, specs, a)?;
            let (z, _) = answered_input(definition, specs, b)?;
            Poly::product(&x, &z)
        }
        TermKind::Centre { of, at } => {
            let (x, answered) = answered_input(definition, specs, of)?;
            let shift = match answered {
                Some(a) => Affine {
                    constant: 0.0,
                    terms: vec![(a, -at)],
                },
                None => Affine {
                    constant: -at,
                    terms: Vec::new(),
                },
            };
            Poly::affine(&x).plus(Poly::affine(&shift))
        }
        _ => return None,
    };
    Some(t.plus(formula.scaled(-1.0)))
}

/// `f(1 − f)`, `f = frac(t)`.
fn gap(t: f64) -> f64 {
    let f = t - t.floor();
    f * (1.0 - f)
}

/// The least `f(1 − f)` over `t ∈ [t̂ − b, t̂ + b]`: 0 when the interval holds a whole number,
/// else at an end (`f(1 − f)` is concave between whole numbers).
fn least_gap(t: f64, b: f64) -> f64 {
    if (t + b).floor() >= t - b || !(t.is_finite() && b.is_finite()) {
        0.0
    } else {
        gap(t - b).min(gap(t + b))
    }
}

/// The statistics in unit coordinates, with their arithmetic error bounds (C6).
struct Unit {
    n: f64,
    sums: Vec<f64>,
    sum_err: Vec<f64>,
    prods: DMatrix<f64>,
    prod_err: DMatrix<f64>,
    /// Per-entry rounding, unit coordinates.
    delta: Vec<f64>,
}

/// What the noise of DP adds to a condition: its two ends (C5).
struct Noise {
    sigma: f64,
    z: f64,
    upper: f64,
    lower: f64,
}

impl CohortCheck {
    /// The checks for cohorts of `definition` (its template: the cohort and key do not matter),
    /// with at most `false_refusal` probability of refusing an honest cohort under device-side
    /// DP (pass [`UPLOAD_FALSE_REFUSAL`](crate::policy::UPLOAD_FALSE_REFUSAL); without DP no
    /// honest cohort is refused).
    ///
    /// # Errors
    /// [`SurveyError::Design`] when the definition's design does not build;
    /// [`SurveyError::Invalid`] for a column whose range is not a finite interval or a rate
    /// outside `(0, 1)`.
    pub fn new(definition: &SurveyDefinition, false_refusal: f64) -> Result<Self, SurveyError> {
        if !(false_refusal > 0.0 && false_refusal < 1.0) {
            return Err(invalid(
                "false_refusal",
                format!("must lie strictly between 0 and 1, got {false_refusal}"),
            ));
        }
        let design = definition.design()?;
        let specs = definition.columns();
        let mut columns = Vec::with_capacity(specs.len());
        for (j, spec) in specs.iter().enumerate() {
            let (lo, hi) = spec.range;
            if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
                return Err(invalid(
                    format!("columns[{j}]"),
                    format!(
                        "{:?} has the range [{lo}, {hi}], not a finite interval",
                        spec.name
                    ),
                ));
            }
            let (question, grid, role) = match spec.source {
                ColumnSource::Question(q) => {
                    let question = definition.questions.get(q).ok_or_else(|| {
                        invalid(format!("columns[{j}]"), "names no question".to_owned())
                    })?;
                    (
                        Some(question.label.clone()),
                        grid_of(question, spec),
                        ColumnRole::Answer,
                    )
                }
                ColumnSource::Term(t) => (
                    None,
                    term_grid(definition, &specs, t, (lo, hi)),
                    ColumnRole::Term,
                ),
            };
            columns.push(Column {
                label: ColumnLabel {
                    position: j + 1,
                    name: spec.name.clone(),
                    question,
                    role,
                },
                lo,
                hi,
                grid,
            });
        }
        let qa = design
            .qa_column()
            .zip(design.qa_constant())
            .zip(design.record_qa_entry())
            .map(|((column, constant), record)| {
                (
                    Qa {
                        column,
                        constant,
                        record,
                    },
                    ColumnLabel {
                        position: column + 1,
                        name: "QA".to_owned(),
                        question: None,
                        role: ColumnRole::Qa,
                    },
                )
            });
        let dp = design.dp().map(|d| d.sigma() / 2.0);
        let forms = forms(definition, &specs, &columns, dp.is_some());
        Ok(Self {
            columns,
            qa,
            forms,
            scaled: design.scaler().is_some(),
            dp,
            p: design.p(),
            false_refusal,
        })
    }

    /// Data columns `p₁` the statistics must have.
    pub fn p1(&self) -> usize {
        self.columns.len() + usize::from(self.qa.is_some())
    }

    /// `t = ln(E/α)` of (C5).
    fn noise_t(&self) -> f64 {
        let events: usize = self.forms.iter().map(Form::noise_events).sum();
        (events.max(1) as f64 / self.false_refusal).ln()
    }

    /// Whether `moments` could be the statistics of `n` honest records of this survey
    /// (module documentation). `rounding_scale` is the scale the collector's QA check used for
    /// the cohort (basic protocol: the largest row norm of `A₂,k X_k B_k`; share mode: the sum of
    /// the parts' reported scales), on the device's scale.
    ///
    /// # Errors
    /// The first [`CohortRefusal`], in this order: shape, finiteness, the QA column, each
    /// column's (C1) and (C2), the questions' and terms' identities (C2′), the pairs (C3), the
    /// centred cross-products (C4).
    pub fn check(&self, moments: &CohortMoments, rounding_scale: f64) -> Result<(), CohortRefusal> {
        let p1 = self.p1();
        if moments.sums.len() != p1 {
            return Err(CohortRefusal::Shape {
                what: "column sums",
                expected: p1,
                found: moments.sums.len(),
            });
        }
        if moments.gram.nrows() != p1 || moments.gram.ncols() != p1 {
            let (what, found) = if moments.gram.nrows() != p1 {
                ("rows of cross-products", moments.gram.nrows())
            } else {
                ("columns of cross-products", moments.gram.ncols())
            };
            return Err(CohortRefusal::Shape {
                what,
                expected: p1,
                found,
            });
        }
        if moments.n == 0 {
            return Err(CohortRefusal::Empty);
        }
        if !(rounding_scale.is_finite() && rounding_scale >= 0.0) {
            return Err(CohortRefusal::Scale {
                scale: rounding_scale,
            });
        }
        for j in 0..p1 {
            let finite =
                moments.sums[j].is_finite() && (0..p1).all(|k| moments.gram[(j, k)].is_finite());
            if !finite {
                return Err(CohortRefusal::NotFinite {
                    column: self.label(j),
                });
            }
        }
        let u = UNIT_ROUNDOFF;
        let entry = ENTRY_ROUNDINGS * self.p as f64 * u * rounding_scale;
        self.check_qa(moments, entry)?;
        let unit = self.unit(moments, entry);
        let noise = self.dp.map(|sigma| {
            let t = self.noise_t();
            Noise {
                sigma,
                z: (2.0 * t).sqrt(),
                upper: chi2_upper(unit.n, t),
                lower: chi2_lower(unit.n, t),
            }
        });
        for form in &self.forms {
            self.check_form(form, &unit, noise.as_ref(), moments.n)?;
        }
        self.check_centred(&unit, moments.n)
    }

    fn label(&self, j: usize) -> ColumnLabel {
        match (&self.qa, self.columns.get(j)) {
            (_, Some(c)) => c.label.clone(),
            (Some((_, label)), None) => label.clone(),
            (None, None) => ColumnLabel {
                position: j + 1,
                name: String::new(),
                question: None,
                role: ColumnRole::Answer,
            },
        }
    }

    /// Offset and width of answer column `j` in the statistics' units.
    fn input_box(&self, j: usize, units: Units) -> (f64, f64) {
        let c = &self.columns[j];
        if self.scaled && units == Units::Record {
            (-1.0, 2.0)
        } else {
            (c.lo, c.width())
        }
    }

    /// The per-entry rounding of answer column `j` in the statistics' units (C6), from the
    /// device-scale bound `entry`.
    fn input_delta(&self, j: usize, units: Units, entry: f64) -> f64 {
        let c = &self.columns[j];
        let own = ENTRY_ARITHMETIC_ROUNDINGS * UNIT_ROUNDOFF * (c.lo.abs() + c.hi.abs());
        match (self.scaled, units) {
            (true, Units::Record) => entry + ENTRY_ARITHMETIC_ROUNDINGS * UNIT_ROUNDOFF * 2.0,
            (true, Units::Declared) => entry * c.width() / 2.0 + own,
            (false, _) => entry + own,
        }
    }

    fn unit(&self, m: &CohortMoments, entry: f64) -> Unit {
        let a = self.columns.len();
        let n = m.n as f64;
        let u = UNIT_ROUNDOFF;
        let safety = ARITHMETIC_ROUNDINGS;
        let boxes: Vec<(f64, f64)> = (0..a).map(|j| self.input_box(j, m.units)).collect();
        let g = |j: usize, k: usize| 0.5 * (m.gram[(j, k)] + m.gram[(k, j)]);
        // The collector's own error in s_j: γ_n·Σ|x| ≤ n·u·√(n·G_jj).
        let raw_sum_err: Vec<f64> = (0..a)
            .map(|j| n * u * (n * g(j, j).max(0.0)).sqrt())
            .collect();
        let mut sums = vec![0.0; a];
        let mut sum_err = vec![0.0; a];
        for j in 0..a {
            let (lo, w) = boxes[j];
            sums[j] = (m.sums[j] - n * lo) / w;
            sum_err[j] = safety * (raw_sum_err[j] + 3.0 * u * (m.sums[j].abs() + n * lo.abs())) / w;
        }
        let mut prods = DMatrix::zeros(a, a);
        let mut prod_err = DMatrix::zeros(a, a);
        for j in 0..a {
            for k in j..a {
                let ((lj, wj), (lk, wk)) = (boxes[j], boxes[k]);
                let terms = [g(j, k), -lj * m.sums[k], -lk * m.sums[j], n * lj * lk];
                let value = terms.iter().sum::<f64>() / (wj * wk);
                let magnitude: f64 = terms.iter().map(|t| t.abs()).sum();
                let collector = n * u * (g(j, j).max(0.0) * g(k, k).max(0.0)).sqrt()
                    + lj.abs() * raw_sum_err[k]
                    + lk.abs() * raw_sum_err[j];
                let err = safety * (collector + 5.0 * u * magnitude) / (wj * wk);
                prods[(j, k)] = value;
                prods[(k, j)] = value;
                prod_err[(j, k)] = err;
                prod_err[(k, j)] = err;
            }
        }
        let delta = (0..a)
            .map(|j| self.input_delta(j, m.units, entry) / boxes[j].1)
            .collect();
        Unit {
            n,
            sums,
            sum_err,
            prods,
            prod_err,
            delta,
        }
    }

    /// The QA column's sum, square sum and cross-products are those of a constant column.
    fn check_qa(&self, m: &CohortMoments, entry: f64) -> Result<(), CohortRefusal> {
        let Some((qa, label)) = &self.qa else {
            return Ok(());
        };
        let q = qa.column;
        let n = m.n as f64;
        let u = UNIT_ROUNDOFF;
        let safety = ARITHMETIC_ROUNDINGS;
        let (value, delta) = match (self.scaled, m.units) {
            (true, Units::Declared) => (
                qa.constant,
                entry * qa.constant.abs() + ENTRY_ARITHMETIC_ROUNDINGS * u * qa.constant.abs(),
            ),
            (_, Units::Record) | (false, Units::Declared) => (qa.record, entry),
        };
        let gqq = m.gram[(q, q)];
        // (other column, Σ or Σ² or cross-product minus a constant column's, allowance).
        let mut checks = vec![
            (
                None,
                m.sums[q] - n * value,
                n * delta
                    + safety
                        * (n * u * (n * gqq.abs()).sqrt()
                            + 2.0 * u * (m.sums[q].abs() + n * value.abs())),
            ),
            (
                None,
                gqq - n * value * value,
                n * (2.0 * value.abs() * delta + delta * delta)
                    + safety * (n * u * gqq.abs() + 2.0 * u * (gqq.abs() + n * value * value)),
            ),
        ];
        for j in 0..self.columns.len() {
            let dj = self.input_delta(j, m.units, entry);
            let gjj = m.gram[(j, j)].max(0.0);
            let cross = 0.5 * (m.gram[(q, j)] + m.gram[(j, q)]);
            let abs_sum = (n * gjj).sqrt() + n * dj;
            let rounding = delta * abs_sum + n * value.abs() * dj + n * delta * dj;
            let arith = safety
                * (n * u * (gqq.abs() * gjj).sqrt()
                    + value.abs() * n * u * (n * gjj).sqrt()
                    + 2.0 * u * (cross.abs() + (value * m.sums[j]).abs()));
            checks.push((Some(j), cross - value * m.sums[j], rounding + arith));
        }
        for (other, found, allowance) in checks {
            if found.abs() > allowance {
                let mut columns = vec![label.clone()];
                columns.extend(other.map(|j| self.columns[j].label.clone()));
                return Err(CohortRefusal::Violated {
                    columns,
                    condition: Condition::QaColumn,
                    excess: found.abs() - allowance,
                    allowance,
                    noise: false,
                    n: m.n,
                });
            }
        }
        Ok(())
    }

    /// `Φ`, its rounding and arithmetic allowance, and its DP noise ends `(low, high)`.
    fn evaluate(&self, form: &Form, unit: &Unit, noise: Option<&Noise>) -> (f64, f64, f64, f64) {
        let p = &form.poly;
        let n = unit.n;
        let mut value = n * p.constant;
        let mut magnitude = (n * p.constant).abs();
        let mut arith = 0.0;
        let mut rounding = 0.0;
        // Σᵢ|u_ik| of the true values, from the observed Σu² (C6).
        let abs_sum = |k: usize| (n * unit.prods[(k, k)].max(0.0)).sqrt() + n * unit.delta[k];
        for &(j, c) in &p.linear {
            let term = c * unit.sums[j];
            value += term;
            magnitude += term.abs();
            arith += c.abs() * unit.sum_err[j];
            rounding += unit.delta[j] * n * c.abs();
        }
        for &(j, k, c) in &p.quadratic {
            let term = c * unit.prods[(j, k)];
            value += term;
            magnitude += term.abs();
            arith += c.abs() * unit.prod_err[(j, k)];
            rounding += if j == k {
                unit.delta[j] * 2.0 * c.abs() * abs_sum(j)
            } else {
                c.abs() * (unit.delta[j] * abs_sum(k) + unit.delta[k] * abs_sum(j))
            };
            rounding += n * c.abs() * unit.delta[j] * unit.delta[k];
        }
        let count = (1 + p.linear.len() + p.quadratic.len()) as f64;
        arith += ARITHMETIC_ROUNDINGS * count * UNIT_ROUNDOFF * magnitude;
        let (low, high) = match noise {
            None => (0.0, 0.0),
            Some(noise) => {
                let s2 = noise.sigma * noise.sigma;
                let linear = noise.sigma * (n * form.gradient_bound_squared).sqrt() * noise.z;
                let (mut low, mut high) = (-linear, linear);
                for &l in &form.eigenvalues {
                    if l > 0.0 {
                        low += s2 * l * noise.lower;
                        high += s2 * l * noise.upper;
                    } else {
                        low += s2 * l * noise.upper;
                        high += s2 * l * noise.lower;
                    }
                }
                (low, high)
            }
        };
        (value, rounding + arith, low, high)
    }

    fn check_form(
        &self,
        form: &Form,
        unit: &Unit,
        noise: Option<&Noise>,
        n: usize,
    ) -> Result<(), CohortRefusal> {
        let (value, tol, low, high) = self.evaluate(form, unit, noise);
        let refuse = |excess: f64, allowance: f64| {
            Err(CohortRefusal::Violated {
                columns: form
                    .named
                    .iter()
                    .map(|&j| self.columns[j].label.clone())
                    .collect(),
                condition: form.condition,
                excess,
                allowance,
                noise: noise.is_some(),
                n,
            })
        };
        match form.test {
            Test::AtLeast => {
                let floor = low - tol;
                if value < floor {
                    return refuse(floor - value, tol - low);
                }
            }
            Test::MaxSquares { column } => {
                let w = self.columns[column].width();
                let b = unit.n * unit.delta[column]
                    + unit.sum_err[column]
                    + noise.map_or(0.0, |x| x.sigma * unit.n.sqrt() * x.z);
                let floor = w * w * least_gap(unit.sums[column], b) + low - tol;
                if value < floor {
                    return refuse(floor - value, tol - low);
                }
            }
            Test::Equal => {
                if value < low - tol {
                    return refuse(low - tol - value, tol - low);
                }
                if value > high + tol {
                    return refuse(value - high - tol, tol + high);
                }
            }
            Test::Integral => {
                if tol < LATTICE_RESOLUTION {
                    let off = (value - value.round()).abs();
                    if off > tol {
                        return refuse(off - tol, tol);
                    }
                }
            }
            Test::LatticeMinimum { column, steps } => {
                let t = steps * unit.sums[column];
                let t_tol = steps * (unit.n * unit.delta[column] + unit.sum_err[column]);
                if t_tol < LATTICE_RESOLUTION {
                    let whole = t.round().clamp(0.0, unit.n * steps);
                    let q = (whole / unit.n).floor();
                    let r = whole - q * unit.n;
                    let least = unit.n * q * q + r * (2.0 * q + 1.0);
                    if value < least - tol {
                        return refuse(least - tol - value, tol);
                    }
                }
            }
        }
        Ok(())
    }

    /// (C4): the centred cross-products in unit coordinates are positive semidefinite.
    fn check_centred(&self, unit: &Unit, n_records: usize) -> Result<(), CohortRefusal> {
        let a = self.columns.len();
        if a == 0 {
            return Ok(());
        }
        let (centred, err) = centred_with_error(unit);
        for j in 0..a {
            if centred[(j, j)] < -err[(j, j)] {
                let w = self.columns[j].width();
                return Err(CohortRefusal::Violated {
                    columns: vec![self.columns[j].label.clone()],
                    condition: Condition::BelowMeanSquare,
                    excess: (-err[(j, j)] - centred[(j, j)]) * w * w,
                    allowance: err[(j, j)] * w * w,
                    noise: false,
                    n: n_records,
                });
            }
        }
        let allowance = err.norm();
        let eigen = SymmetricEigen::new(centred);
        let (index, least) = eigen.eigenvalues.iter().copied().enumerate().fold(
            (0, f64::INFINITY),
            |best, (i, l)| if l < best.1 { (i, l) } else { best },
        );
        if least < -allowance {
            let vector = eigen.eigenvectors.column(index);
            let mut order: Vec<usize> = (0..a).collect();
            order.sort_by(|&x, &y| vector[y].abs().total_cmp(&vector[x].abs()));
            return Err(CohortRefusal::Violated {
                columns: order
                    .iter()
                    .take(2)
                    .map(|&j| self.columns[j].label.clone())
                    .collect(),
                condition: Condition::NotPositiveSemidefinite,
                excess: -allowance - least,
                allowance,
                noise: false,
                n: n_records,
            });
        }
        Ok(())
    }

    /// How far one dishonest participant among `n` can move the mean of answer column `column`
    /// (0-based, among the answers and terms), worst case over the honest records, in the
    /// column's declared units (module documentation, "The ceiling"): `(1 + e)·w/n` with `e`
    /// the largest excess the checks let through — `e*(n)` ([`liar_excess`]) for a continuous or
    /// stepped column, 0 for a 0/1 column; with DP, the widened bounds of the module
    /// documentation at this check's false-refusal rate. `None` for a column it does not have or
    /// `n = 0`. The rounding allowance (a few `δ`, about 10⁻⁸ of a range) is not included.
    pub fn mean_shift_ceiling(&self, column: usize, n: usize) -> Option<f64> {
        let c = self.columns.get(column)?;
        if n == 0 {
            return None;
        }
        let nf = n as f64;
        let excess = match self.dp {
            None if c.grid == Grid::Binary => 0.0,
            None => liar_excess(n),
            Some(sigma) => {
                let t = self.noise_t();
                let z = (2.0 * t).sqrt();
                let (up, down) = (chi2_upper(nf, t), chi2_lower(nf, t));
                let continuous =
                    (nf - 1.0) / 4.0 + 2.0 * sigma * z * nf.sqrt() + sigma * sigma * up;
                let slack = if c.grid == Grid::Binary {
                    (2.0 * sigma * z * nf.sqrt() + sigma * sigma * (up - down)).min(continuous)
                } else {
                    continuous
                };
                // e(1 + e) ≤ slack.
                (-1.0 + (1.0 + 4.0 * slack).sqrt()) / 2.0
            }
        };
        Some((1.0 + excess) * c.width() / nf)
    }
}

/// The centred cross-products `P − ssᵀ/n` in unit coordinates and a bound on each entry's
/// rounding and arithmetic error (C6) — what (C4) judges, and the level below which
/// [`CohortCheck::snap`] treats a direction of the cohort as empty.
fn centred_with_error(unit: &Unit) -> (DMatrix<f64>, DMatrix<f64>) {
    let a = unit.sums.len();
    let n = unit.n;
    let u = UNIT_ROUNDOFF;
    let mut centred = DMatrix::zeros(a, a);
    let mut err = DMatrix::zeros(a, a);
    for j in 0..a {
        for k in 0..a {
            let mean_term = unit.sums[j] * unit.sums[k] / n;
            centred[(j, k)] = unit.prods[(j, k)] - mean_term;
        }
    }
    for j in 0..a {
        for k in 0..a {
            let (dj, dk) = (unit.delta[j], unit.delta[k]);
            let (cj, ck) = (centred[(j, j)].max(0.0), centred[(k, k)].max(0.0));
            let rounding = 2.0 * n.sqrt() * (dk * cj.sqrt() + dj * ck.sqrt()) + 4.0 * n * dj * dk;
            let arith = unit.prod_err[(j, k)]
                + (unit.sums[j].abs() * unit.sum_err[k] + unit.sums[k].abs() * unit.sum_err[j]) / n
                + ARITHMETIC_ROUNDINGS
                    * 4.0
                    * u
                    * (unit.prods[(j, k)].abs() + (unit.sums[j] * unit.sums[k]).abs() / n);
            err[(j, k)] = rounding + arith;
        }
    }
    (centred, err)
}

/// The conditions of a survey, in report order (module documentation).
fn forms(
    definition: &SurveyDefinition,
    specs: &[ColumnSpec],
    columns: &[Column],
    dp: bool,
) -> Vec<Form> {
    let mut out = Vec::new();
    for (j, c) in columns.iter().enumerate() {
        let w = c.width();
        let linear = |coef: f64| Poly {
            linear: vec![(j, coef)],
            ..Poly::default()
        };
        out.push(Form::new(
            Condition::SumBelowRange,
            vec![j],
            linear(w),
            Test::AtLeast,
        ));
        out.push(Form::new(
            Condition::SumAboveRange,
            vec![j],
            Poly {
                constant: w,
                ..linear(-w)
            },
            Test::AtLeast,
        ));
        out.push(Form::new(
            Condition::SquaresAboveMaximum,
            vec![j],
            Poly {
                constant: 0.0,
                linear: vec![(j, w * w)],
                quadratic: vec![(j, j, -w * w)],
            },
            Test::MaxSquares { column: j },
        ));
        match c.grid {
            Grid::Binary => {
                out.push(Form::new(
                    Condition::NotBinary,
                    vec![j],
                    Poly {
                        constant: 0.0,
                        linear: vec![(j, -w * w)],
                        quadratic: vec![(j, j, w * w)],
                    },
                    Test::Equal,
                ));
                if !dp {
                    out.push(Form::new(
                        Condition::SumOffLattice,
                        vec![j],
                        linear(1.0),
                        Test::Integral,
                    ));
                }
            }
            Grid::Steps(steps) if !dp => {
                out.push(Form::new(
                    Condition::SumOffLattice,
                    vec![j],
                    linear(steps),
                    Test::Integral,
                ));
                out.push(Form::new(
                    Condition::SquaresOffLattice,
                    vec![j],
                    Poly {
                        constant: 0.0,
                        linear: vec![(j, -steps / 2.0)],
                        quadratic: vec![(j, j, steps * steps / 2.0)],
                    },
                    Test::Integral,
                ));
                out.push(Form::new(
                    Condition::SquaresBelowLatticeMinimum,
                    vec![j],
                    Poly {
                        quadratic: vec![(j, j, steps * steps)],
                        ..Poly::default()
                    },
                    Test::LatticeMinimum { column: j, steps },
                ));
            }
            Grid::Steps(_) | Grid::Continuous => {}
        }
    }
    // (C2) pairs on lattices: `Σk_j k_k` is a whole number.
    if !dp {
        let steps = |c: &Column| match c.grid {
            Grid::Binary => Some(1.0),
            Grid::Steps(s) => Some(s),
            Grid::Continuous => None,
        };
        for j in 0..columns.len() {
            for k in j + 1..columns.len() {
                if let (Some(sj), Some(sk)) = (steps(&columns[j]), steps(&columns[k])) {
                    out.push(Form::new(
                        Condition::ProductOffLattice,
                        vec![j, k],
                        Poly {
                            quadratic: vec![(j, k, sj * sk)],
                            ..Poly::default()
                        },
                        Test::Integral,
                    ));
                }
            }
        }
    }
    // (C2′) per question: exclusive options, at most one option, neutral values when unanswered.
    for (q, question) in definition.questions.iter().enumerate() {
        let own: Vec<usize> = specs
            .iter()
            .enumerate()
            .filter(|(_, c)| c.source == ColumnSource::Question(q))
            .map(|(j, _)| j)
            .collect();
        let answered = question
            .may_be_unanswered()
            .then(|| {
                own.iter()
                    .copied()
                    .find(|&j| specs[j].name == question.answered_column())
            })
            .flatten();
        let values: Vec<usize> = own
            .iter()
            .copied()
            .filter(|&j| Some(j) != answered)
            .collect();
        if matches!(question.kind, QuestionKind::Categorical { .. }) && values.len() >= 2 {
            for (x, &a) in values.iter().enumerate() {
                for &b in &values[x + 1..] {
                    out.push(Form::new(
                        Condition::ExclusiveOptions,
                        vec![a, b],
                        Poly {
                            quadratic: vec![(a, b, 1.0)],
                            ..Poly::default()
                        },
                        Test::Equal,
                    ));
                }
            }
            out.push(Form::new(
                Condition::MoreOptionsThanRecords,
                values.clone(),
                Poly {
                    constant: 1.0,
                    linear: values.iter().map(|&j| (j, -1.0)).collect(),
                    quadratic: Vec::new(),
                },
                Test::AtLeast,
            ));
        }
        if let Some(a) = answered {
            let m = neutral(question);
            for &v in &values {
                let poly = Poly::product(
                    &Affine {
                        constant: -m,
                        terms: vec![(v, 1.0)],
                    },
                    &Affine {
                        constant: 1.0,
                        terms: vec![(a, -1.0)],
                    },
                );
                out.push(Form::new(
                    Condition::UnansweredNotNeutral,
                    vec![v, a],
                    poly.merged().to_unit(columns),
                    Test::Equal,
                ));
            }
        }
    }
    // (C2′) model terms.
    for (j, spec) in specs.iter().enumerate() {
        let ColumnSource::Term(t) = spec.source else {
            continue;
        };
        let Some(term) = definition.terms.get(t) else {
            continue;
        };
        if let Some(poly) = term_identity(definition, specs, j, &term.kind) {
            let poly = poly.merged();
            let mut named = vec![j];
            named.extend(poly.columns().into_iter().filter(|&k| k != j));
            let unit = poly.to_unit(columns);
            // A linear identity (a centring) holds record by record, so it holds times every
            // column too: `Σ L(u)·u_k = 0` — cross-products anyone can evaluate on the release.
            if !dp && unit.quadratic.is_empty() {
                for k in 0..columns.len() {
                    let mut times = Poly {
                        constant: 0.0,
                        linear: vec![(k, unit.constant)],
                        quadratic: unit
                            .linear
                            .iter()
                            .map(|&(i, c)| (i.min(k), i.max(k), c))
                            .collect(),
                    };
                    times = times.merged();
                    let mut named = named.clone();
                    if !named.contains(&k) {
                        named.push(k);
                    }
                    out.push(Form::new(Condition::TermValue, named, times, Test::Equal));
                }
            }
            out.push(Form::new(Condition::TermValue, named, unit, Test::Equal));
        }
    }
    // (C3) pairs.
    for j in 0..columns.len() {
        for k in j + 1..columns.len() {
            let scale = columns[j].width() * columns[k].width();
            let corner = |corner: Corner, poly: Poly| {
                Form::new(
                    Condition::Corner(corner),
                    vec![j, k],
                    poly.scaled(scale),
                    Test::AtLeast,
                )
            };
            out.push(corner(
                Corner::LowLow,
                Poly {
                    quadratic: vec![(j, k, 1.0)],
                    ..Poly::default()
                },
            ));
            out.push(corner(
                Corner::LowHigh,
                Poly {
                    constant: 0.0,
                    linear: vec![(j, 1.0)],
                    quadratic: vec![(j, k, -1.0)],
                },
            ));
            out.push(corner(
                Corner::HighLow,
                Poly {
                    constant: 0.0,
                    linear: vec![(k, 1.0)],
                    quadratic: vec![(j, k, -1.0)],
                },
            ));
            out.push(corner(
                Corner::HighHigh,
                Poly {
                    constant: 1.0,
                    linear: vec![(j, -1.0), (k, -1.0)],
                    quadratic: vec![(j, k, 1.0)],
                },
            ));
        }
    }
    out
}

/// [`CohortCheck::new`] then [`CohortCheck::check`], for a caller that checks one cohort.
///
/// # Errors
/// [`CohortRefusal`]; [`CohortRefusal::Definition`] when the definition gives no check.
pub fn check_cohort(
    definition: &SurveyDefinition,
    moments: &CohortMoments,
    rounding_scale: f64,
    false_refusal: f64,
) -> Result<(), CohortRefusal> {
    let check =
        CohortCheck::new(definition, false_refusal).map_err(|e| CohortRefusal::Definition {
            reason: e.to_string(),
        })?;
    check.check(moments, rounding_scale)
}

/// `Q_max`: the largest `Σx²` of `n` values in `[lo, hi]` summing to `sum` (C1),
/// `n·lo² + 2lo(sum − n·lo) + w²(k + f²)` with `t = (sum − n·lo)/w = k + f`. `None` when `sum`
/// lies outside `[n·lo, n·hi]` (no such values) or the range is not an interval.
pub fn largest_sum_of_squares(n: usize, lo: f64, hi: f64, sum: f64) -> Option<f64> {
    let (nf, w) = (n as f64, hi - lo);
    let t = (sum - nf * lo) / w;
    if !(w > 0.0 && (0.0..=nf).contains(&t)) {
        return None;
    }
    let k = t.floor();
    let f = t - k;
    Some(nf * lo * lo + 2.0 * lo * (sum - nf * lo) + w * w * (k + f * f))
}

/// `e*(n)`: the largest excess beyond its column's range, in widths, of one liar's value that
/// (C1) lets through in a cohort of `n`, worst case over the `n − 1` honest records (module
/// documentation): `max_m [√((n − 1)(m + 1)(n − 1 − m)) − (n − 1 − m)]/n`, at most `(√n − 1)/2`.
/// 0 for `n ≤ 2`.
pub fn liar_excess(n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let nf = n as f64;
    (0..n)
        .map(|m| {
            let (m, rest) = (m as f64, (n - 1 - m) as f64);
            (((nf - 1.0) * (m + 1.0) * rest).sqrt() - rest) / nf
        })
        .fold(0.0, f64::max)
}

/// The largest a mean moves when one of `n` answers on `[lo, hi]` lies, worst case over the
/// honest answers, when the lie passes (C1): `(1 + e*(n))·(hi − lo)/n` ([`liar_excess`]), against
/// `(hi − lo)/n` for a lie inside the range.
pub fn mean_shift_ceiling(n: usize, lo: f64, hi: f64) -> f64 {
    (1.0 + liar_excess(n)) * (hi - lo) / n.max(1) as f64
}

/// How far beyond each end of its range one liar's value can lie and pass (C1), given the other
/// records' honest values, in the column's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiarExcess {
    /// Largest accepted `x − hi`.
    pub above: f64,
    /// Largest accepted `lo − x`.
    pub below: f64,
}

/// The exact largest excess of one liar's value beyond `hi` (and below `lo`) that (C1) accepts
/// when the other records are `honest` (each in `[lo, hi]`): the piecewise-linear solution of
/// the module documentation. Rounding allowances are not included.
pub fn liar_excess_given(honest: &[f64], lo: f64, hi: f64) -> LiarExcess {
    let w = hi - lo;
    let up: Vec<f64> = honest.iter().map(|x| (x - lo) / w).collect();
    let down: Vec<f64> = up.iter().map(|u| 1.0 - u).collect();
    LiarExcess {
        above: excess_above(&up) * w,
        below: excess_above(&down) * w,
    }
}

/// [`liar_excess_given`] in unit coordinates, above 1.
fn excess_above(honest: &[f64]) -> f64 {
    let last = honest.len() as f64; // n − 1
    let t: f64 = honest.iter().sum();
    let v: f64 = honest.iter().map(|u| u * (1.0 - u)).sum();
    let mut best: f64 = 0.0;
    let mut m = t.floor();
    while m <= last {
        let c = m - t;
        let start = c.max(0.0);
        let end = (c + 1.0).min(last - t);
        let bound = (v / (1.0 + c) + c) / 2.0;
        if start > end || bound < start {
            break;
        }
        best = best.max(bound.min(end));
        m += 1.0;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::Answer;
    use crate::definition::{DpParameters, RecordScaling, Term};
    use crate::policy::UPLOAD_FALSE_REFUSAL;
    use crate::tolerance::{BEYOND_ROUNDING, HAND_COMPUTED, SNAP_MOVES, SNAPPED_EXACT};
    use nalgebra::DVector;
    use orthomask_core::random::{UnitUniform, standard_normal};
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    /// A rounding scale like the basic protocol's: the padded record of the sample (σ ≈ 938,
    /// `p₂` = 503) has norm about 2.1·10⁴.
    const SCALE: f64 = 2.1e4;

    fn question(id: &str, optional: bool, kind: QuestionKind) -> Question {
        Question {
            id: id.into(),
            label: format!("What is your {id}?"),
            help: None,
            optional,
            show_if: None,
            kind,
        }
    }

    fn survey(questions: Vec<Question>, terms: Vec<Term>, dp: Option<f64>) -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        crate::terms::validate_terms(&questions, &terms).unwrap();
        s.questions = questions;
        s.terms = terms;
        s.masking.scaling = RecordScaling::DeclaredRanges;
        s.masking.dp = dp.map(|sigma| DpParameters {
            epsilon: 1.0,
            delta: 1e-6,
            sigma,
        });
        s
    }

    /// One number question on `[lo, hi]`.
    fn one_number(lo: f64, hi: f64) -> SurveyDefinition {
        survey(
            vec![question(
                "x",
                false,
                QuestionKind::Number { min: lo, max: hi },
            )],
            Vec::new(),
            None,
        )
    }

    /// The issue's survey: smoker (yes/no), age (integer 18–90), income (number 0–250).
    fn issue_survey(age_kind: QuestionKind) -> SurveyDefinition {
        survey(
            vec![
                question("smoker", false, QuestionKind::YesNo),
                question("age", false, age_kind),
                question(
                    "income",
                    false,
                    QuestionKind::Number {
                        min: 0.0,
                        max: 250.0,
                    },
                ),
            ],
            Vec::new(),
            None,
        )
    }

    /// Every kind of column: yes/no, integer, number, Likert, categorical, optional number,
    /// optional integer with an off-grid midpoint, and terms of each derivable kind (and two
    /// that keep only their range).
    fn rich(dp: Option<f64>) -> SurveyDefinition {
        let term = |id: &str, kind| Term {
            id: id.into(),
            kind,
        };
        survey(
            vec![
                question("smoker", false, QuestionKind::YesNo),
                question("age", false, QuestionKind::Integer { min: 18, max: 90 }),
                question(
                    "income",
                    false,
                    QuestionKind::Number {
                        min: 0.0,
                        max: 250.0,
                    },
                ),
                question(
                    "mood",
                    false,
                    QuestionKind::Likert {
                        points: 5,
                        low_label: "low".into(),
                        high_label: "high".into(),
                    },
                ),
                question(
                    "region",
                    false,
                    QuestionKind::Categorical {
                        options: vec!["north".into(), "south".into(), "east".into()],
                    },
                ),
                question(
                    "hours",
                    true,
                    QuestionKind::Number {
                        min: 0.0,
                        max: 24.0,
                    },
                ),
                question("pets", true, QuestionKind::Integer { min: 0, max: 3 }),
            ],
            vec![
                term(
                    "age_sq",
                    TermKind::Power {
                        of: "age".into(),
                        exponent: 2,
                    },
                ),
                term(
                    "income_smoker",
                    TermKind::Product {
                        of: ["income".into(), "smoker".into()],
                    },
                ),
                term(
                    "age_c",
                    TermKind::Centre {
                        of: "age".into(),
                        at: 50.0,
                    },
                ),
                term(
                    "hours_sq",
                    TermKind::Power {
                        of: "hours".into(),
                        exponent: 2,
                    },
                ),
                term(
                    "hours_age",
                    TermKind::Product {
                        of: ["hours".into(), "age".into()],
                    },
                ),
                term(
                    "pets_hours",
                    TermKind::Product {
                        of: ["pets".into(), "hours".into()],
                    },
                ),
                term(
                    "income_south",
                    TermKind::Product {
                        of: ["income".into(), "region=south".into()],
                    },
                ),
                term(
                    "hours_c",
                    TermKind::Centre {
                        of: "hours".into(),
                        at: 8.0,
                    },
                ),
                term(
                    "log1p_income",
                    TermKind::Log1p {
                        of: "income".into(),
                    },
                ),
                term(
                    "age_cu",
                    TermKind::Power {
                        of: "age".into(),
                        exponent: 3,
                    },
                ),
            ],
            dp,
        )
    }

    /// `n × p₁` declared-unit rows: the coded records and the QA constant.
    fn rows(d: &SurveyDefinition, records: &[Vec<f64>]) -> DMatrix<f64> {
        let c = d.masking.qa_constant.unwrap();
        let p1 = records[0].len() + 1;
        DMatrix::from_fn(records.len(), p1, |i, j| {
            if j + 1 == p1 { c } else { records[i][j] }
        })
    }

    fn declared(d: &SurveyDefinition, records: &[Vec<f64>]) -> CohortMoments {
        CohortMoments::of_rows(&rows(d, records), Units::Declared)
    }

    fn checker(d: &SurveyDefinition) -> CohortCheck {
        CohortCheck::new(d, UPLOAD_FALSE_REFUSAL).unwrap()
    }

    fn uniform(rng: &mut ChaCha8Rng, n: u64) -> u64 {
        ((rng.next_unit() * n as f64) as u64).min(n - 1)
    }

    #[derive(Clone, Copy, Debug)]
    enum Mode {
        Uniform,
        Ends,
        AllEqual,
        Skips,
    }

    /// An honest participant's answers to `d`, drawn by `mode`.
    fn answers(d: &SurveyDefinition, rng: &mut ChaCha8Rng, mode: Mode) -> Vec<Answer> {
        d.questions
            .iter()
            .map(|q| {
                if q.optional && matches!(mode, Mode::Skips) && rng.next_unit() < 0.5 {
                    return Answer::Skipped;
                }
                let end = rng.next_unit() < 0.5;
                let unit = match mode {
                    Mode::Ends => f64::from(u8::from(end)),
                    _ => rng.next_unit(),
                };
                match &q.kind {
                    QuestionKind::YesNo => Answer::YesNo(end),
                    QuestionKind::Integer { min, max } => Answer::Integer(
                        min + ((unit * (max - min + 1) as f64) as i64).min(max - min),
                    ),
                    QuestionKind::Number { min, max } => Answer::Number(min + unit * (max - min)),
                    QuestionKind::Likert { points, .. } => {
                        Answer::Likert(1 + ((unit * f64::from(*points)) as u8).min(points - 1))
                    }
                    QuestionKind::Categorical { options } => {
                        Answer::Category(uniform(rng, options.len() as u64) as usize)
                    }
                }
            })
            .collect()
    }

    fn honest_records(
        d: &SurveyDefinition,
        rng: &mut ChaCha8Rng,
        n: usize,
        mode: Mode,
    ) -> Vec<Vec<f64>> {
        let first = answers(d, rng, mode);
        (0..n)
            .map(|_| {
                let a = if matches!(mode, Mode::AllEqual) {
                    first.clone()
                } else {
                    answers(d, rng, mode)
                };
                d.encode(&a).unwrap()
            })
            .collect()
    }

    /// `largest_sum_of_squares` by hand: three values in [0, 1] summing to 1.5 reach at most
    /// 1² + 0.5² + 0² = 1.25; two ages in [18, 90] summing to 100 at most 18² + 82² = 7048; a sum
    /// outside `[n·lo, n·hi]` has none.
    #[test]
    fn the_largest_sum_of_squares_by_hand() {
        let close = |a: f64, b: f64| (a - b).abs() <= HAND_COMPUTED * b.abs().max(1.0);
        assert!(close(
            largest_sum_of_squares(3, 0.0, 1.0, 1.5).unwrap(),
            1.25
        ));
        assert!(close(
            largest_sum_of_squares(2, 18.0, 90.0, 100.0).unwrap(),
            7048.0
        ));
        // Corners: all at the top, all at the bottom.
        assert!(close(
            largest_sum_of_squares(2, 18.0, 90.0, 180.0).unwrap(),
            16_200.0
        ));
        assert!(close(
            largest_sum_of_squares(3, 0.0, 1.0, 0.0).unwrap(),
            0.0
        ));
        assert_eq!(largest_sum_of_squares(3, 0.0, 1.0, 3.5), None);
    }

    /// Hand-solvable liars on one column in [0, 1]: with n = 2 no excess passes (`e*(2) = 0`:
    /// the honest 0.5 and a liar at 1.01 give Σ = 1.51, Σ² = 1.2701 > Q_max = 1 + 0.51² =
    /// 1.2601); with n = 3 the honest (1/3, 1/3) and a liar at 4/3 give exactly Σ = 2, Σ² = 2,
    /// the statistics of the honest corners (1, 1, 0), and pass (`e*(3) = 1/3`), while a liar
    /// a little further out is refused.
    #[test]
    fn hand_solvable_liars_at_n_2_and_3() {
        let d = one_number(0.0, 1.0);
        let check = checker(&d);
        let at = |values: &[f64]| {
            let records: Vec<Vec<f64>> = values.iter().map(|v| vec![*v]).collect();
            check.check(&declared(&d, &records), SCALE)
        };
        assert!(at(&[0.5, 1.0]).is_ok());
        let e = at(&[0.5, 1.01]).unwrap_err();
        assert!(
            matches!(
                e,
                CohortRefusal::Violated {
                    condition: Condition::SquaresAboveMaximum,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(liar_excess(2), 0.0);
        assert!((liar_excess(3) - 1.0 / 3.0).abs() < HAND_COMPUTED);
        let third = 1.0 / 3.0;
        assert!(at(&[third, third, 4.0 / 3.0]).is_ok());
        assert!(at(&[1.0, 1.0, 0.0]).is_ok());
        let beyond = at(&[third, third, 4.0 / 3.0 + BEYOND_ROUNDING]).unwrap_err();
        assert!(beyond.to_string().contains("sum of squares"), "{beyond}");
        // The per-configuration ceiling agrees: 1/3 above. Below 0 (the mirror: two honest at
        // 2/3, the liar at 1 + e): Σ = 7/3 + e, Σ² = 8/9 + (1 + e)² ≤ Q_max = 2 + (1/3 + e)²
        // exactly when e ≤ 1/6, and the check says the same.
        let given = liar_excess_given(&[third, third], 0.0, 1.0);
        assert!((given.above - third).abs() < HAND_COMPUTED, "{given:?}");
        assert!((given.below - 1.0 / 6.0).abs() < HAND_COMPUTED, "{given:?}");
        assert!(at(&[third, third, -1.0 / 6.0]).is_ok());
        assert!(at(&[third, third, -1.0 / 6.0 - BEYOND_ROUNDING]).is_err());
        assert_eq!(liar_excess_given(&[0.5], 0.0, 1.0).above, 0.0);
    }

    /// The worst-case excess `e*(n)` and the mean-shift ceiling against values computed by hand
    /// in Python from the closed form (n = 5: m = 3, (√16 − 1)/5 = 0.6; n = 20: m = 11,
    /// (√1824 − 8)/20 = 1.7354156504062623; n = 100: m = 54, (√(99·55·45) − 45)/100 = 4.5), and
    /// the bound `(√n − 1)/2`, reached when `n` is a square.
    #[test]
    fn the_ceiling_by_hand() {
        let close = |a: f64, b: f64| (a - b).abs() <= HAND_COMPUTED * b.abs().max(1.0);
        assert!(close(liar_excess(5), 0.6));
        assert!(close(liar_excess(20), 1.735_415_650_406_262_3));
        assert!(close(liar_excess(100), 4.5));
        assert!(close(mean_shift_ceiling(5, 18.0, 90.0), 1.6 * 72.0 / 5.0));
        assert!(close(mean_shift_ceiling(100, 0.0, 1.0), 0.055));
        for n in 2..200 {
            let bound = ((n as f64).sqrt() - 1.0) / 2.0;
            assert!(liar_excess(n) <= bound + HAND_COMPUTED, "n = {n}");
        }
        assert!(close(liar_excess(4), 0.5));
        assert!(close(liar_excess(49), 3.0));
        // The survey's own ceiling: continuous and stepped columns e*(n), 0/1 columns none.
        let d = issue_survey(QuestionKind::Integer { min: 18, max: 90 });
        let check = checker(&d);
        assert!(close(check.mean_shift_ceiling(1, 5).unwrap(), 23.04));
        assert!(close(check.mean_shift_ceiling(0, 5).unwrap(), 0.2));
        assert_eq!(check.mean_shift_ceiling(7, 5), None);
    }

    /// Independent oracle, continuous column: every tuple of `n ≤ 5` values on a grid of `N`
    /// steps of `[lo, hi]` is enumerated, giving for each grid sum the least and largest `Σx²`.
    /// The vertex of (C1) lies on the grid, so the largest is the exact continuous `Q_max`, and
    /// the least is `S²/n` exactly when `n` divides the grid sum. The check accepts the points
    /// of the set (its ends and a point inside) and refuses every point just outside it.
    #[test]
    fn the_one_column_condition_is_exact_against_enumeration() {
        let (lo, hi) = (-2.0, 7.0);
        let d = one_number(lo, hi);
        let check = checker(&d);
        let c = d.masking.qa_constant.unwrap();
        let w = hi - lo;
        let steps = 6u64;
        for n in 2..=5usize {
            let mut least = vec![f64::INFINITY; n * steps as usize + 1];
            let mut most = vec![f64::NEG_INFINITY; n * steps as usize + 1];
            for code in 0..(steps + 1).pow(n as u32) {
                let mut rest = code;
                let (mut sum_i, mut q) = (0usize, 0.0);
                for _ in 0..n {
                    let i = rest % (steps + 1);
                    rest /= steps + 1;
                    let x = lo + w * i as f64 / steps as f64;
                    sum_i += i as usize;
                    q += x * x;
                }
                least[sum_i] = least[sum_i].min(q);
                most[sum_i] = most[sum_i].max(q);
            }
            let nf = n as f64;
            let point = |s: f64, q: f64| {
                let moments = CohortMoments {
                    n,
                    sums: vec![s, nf * c],
                    gram: DMatrix::from_row_slice(2, 2, &[q, c * s, c * s, nf * c * c]),
                    units: Units::Declared,
                };
                check.check(&moments, 1.0)
            };
            let margin = BEYOND_ROUNDING * w * w * nf;
            for sum_i in 0..=n * steps as usize {
                let s = nf * lo + w * sum_i as f64 / steps as f64;
                let (q_lo, q_hi) = (least[sum_i], most[sum_i]);
                let q_max = largest_sum_of_squares(n, lo, hi, s).unwrap();
                assert!((q_max - q_hi).abs() <= HAND_COMPUTED * q_hi.abs().max(1.0));
                for q in [q_lo, q_hi, (q_lo + q_hi) / 2.0, s * s / nf] {
                    point(s, q).unwrap_or_else(|e| panic!("n = {n}, Σ = {s}, Σ² = {q}: {e}"));
                }
                assert!(point(s, q_hi + margin).is_err(), "n = {n}, Σ = {s}");
                if sum_i % n == 0 {
                    assert!((q_lo - s * s / nf).abs() <= HAND_COMPUTED * q_lo.max(1.0));
                    assert!(point(s, q_lo - margin).is_err(), "n = {n}, Σ = {s}");
                }
            }
            // Sums outside [n·lo, n·hi].
            let edge = nf * w * BEYOND_ROUNDING;
            assert!(point(nf * lo - edge, nf * lo * lo).is_err());
            assert!(point(nf * hi + edge, nf * hi * hi).is_err());
        }
    }

    /// Independent oracle, discrete columns: for integer and Likert questions (and yes/no) every
    /// cohort of `n ≤ 5` is enumerated; every achievable `(Σx, Σx²)` is accepted. Points no
    /// cohort reaches: a sum off the lattice, a parity violation and a sum of squares below the
    /// balanced cohort's are refused; `(Σk, Σk²) = (3, 7)` with two answers in 0…3 is accepted
    /// although no pair gives it (the lattice conditions are necessary, not exact).
    #[test]
    fn discrete_conditions_accept_every_cohort_that_enumeration_finds() {
        let kinds = [
            QuestionKind::Integer { min: 0, max: 3 },
            QuestionKind::Integer { min: 2, max: 6 },
            QuestionKind::Likert {
                points: 4,
                low_label: "a".into(),
                high_label: "b".into(),
            },
            QuestionKind::YesNo,
        ];
        for kind in kinds {
            let d = survey(vec![question("k", false, kind.clone())], Vec::new(), None);
            let check = checker(&d);
            let (lo, hi) = d.columns()[0].range;
            let values = (hi - lo) as u64 + 1;
            let c = d.masking.qa_constant.unwrap();
            for n in 1..=5usize {
                let nf = n as f64;
                let point = |s: f64, q: f64| {
                    let moments = CohortMoments {
                        n,
                        sums: vec![s, nf * c],
                        gram: DMatrix::from_row_slice(2, 2, &[q, c * s, c * s, nf * c * c]),
                        units: Units::Declared,
                    };
                    check.check(&moments, SCALE)
                };
                let mut achieved = std::collections::BTreeSet::new();
                for code in 0..values.pow(n as u32) {
                    let mut rest = code;
                    let (mut s, mut q) = (0i64, 0i64);
                    for _ in 0..n {
                        let x = lo as i64 + (rest % values) as i64;
                        rest /= values;
                        s += x;
                        q += x * x;
                    }
                    achieved.insert((s, q));
                }
                for &(s, q) in &achieved {
                    point(s as f64, q as f64)
                        .unwrap_or_else(|e| panic!("{kind:?}, n = {n}, ({s}, {q}): {e}"));
                }
                // A sum half a step off the lattice.
                let &(s, q) = achieved.iter().next_back().unwrap();
                let off = point(s as f64 - 0.5, q as f64 - (hi - 0.25)).unwrap_err();
                assert!(
                    matches!(
                        off,
                        CohortRefusal::Violated {
                            condition: Condition::SumOffLattice | Condition::NotBinary,
                            ..
                        }
                    ),
                    "{kind:?}, n = {n}: {off}"
                );
            }
        }
        // Parity and the balanced minimum, on 0…3 with n = 2.
        let d = survey(
            vec![question(
                "k",
                false,
                QuestionKind::Integer { min: 0, max: 3 },
            )],
            Vec::new(),
            None,
        );
        let check = checker(&d);
        let c = d.masking.qa_constant.unwrap();
        let point = |s: f64, q: f64| {
            check.check(
                &CohortMoments {
                    n: 2,
                    sums: vec![s, 2.0 * c],
                    gram: DMatrix::from_row_slice(2, 2, &[q, c * s, c * s, 2.0 * c * c]),
                    units: Units::Declared,
                },
                SCALE,
            )
        };
        // (3, 6): parity (Σk² ≢ Σk mod 2); (3, 4.5) is the continuous minimum, below the
        // balanced (1, 2)'s 5; (3, 7): necessary conditions all met, no pair gives it.
        let parity = point(3.0, 6.0).unwrap_err();
        assert!(
            matches!(
                parity,
                CohortRefusal::Violated {
                    condition: Condition::SquaresOffLattice,
                    ..
                }
            ),
            "{parity}"
        );
        let least = point(3.0, 4.5).unwrap_err();
        assert!(
            matches!(
                least,
                CohortRefusal::Violated {
                    condition: Condition::SquaresOffLattice | Condition::SquaresBelowLatticeMinimum,
                    ..
                }
            ),
            "{least}"
        );
        assert!(point(3.0, 7.0).is_ok());
    }

    /// An optional integer with an odd number of steps (0…3, skipped as 1.5) and its `answered`
    /// column: every cohort of up to four records (answers 0–3 or skipped) is accepted; a record
    /// marked unanswered with a value that is not the midpoint is refused.
    #[test]
    fn optional_questions_on_half_steps() {
        let d = survey(
            vec![question(
                "pets",
                true,
                QuestionKind::Integer { min: 0, max: 3 },
            )],
            Vec::new(),
            None,
        );
        let check = checker(&d);
        let options = [
            Answer::Integer(0),
            Answer::Integer(1),
            Answer::Integer(2),
            Answer::Integer(3),
            Answer::Skipped,
        ];
        for n in 1..=4u32 {
            for code in 0..5usize.pow(n) {
                let mut rest = code;
                let records: Vec<Vec<f64>> = (0..n)
                    .map(|_| {
                        let a = options[rest % 5].clone();
                        rest /= 5;
                        d.encode(&[a]).unwrap()
                    })
                    .collect();
                check
                    .check(&declared(&d, &records), SCALE)
                    .unwrap_or_else(|e| panic!("{records:?}: {e}"));
            }
        }
        let liar = vec![vec![1.0, 1.0], vec![3.0, 0.0], vec![2.0, 1.0]];
        let e = check.check(&declared(&d, &liar), SCALE).unwrap_err();
        assert!(
            matches!(
                e,
                CohortRefusal::Violated {
                    condition: Condition::UnansweredNotNeutral,
                    ..
                }
            ),
            "{e}"
        );
    }

    /// The law: random honest cohorts of every kind pass — answers uniform, at the ends, all
    /// equal, with skipped questions — with every entry moved by up to nine tenths of the
    /// rounding the check allows (in either direction), in declared and in record units.
    #[test]
    fn honest_cohorts_pass() {
        /// The share of the per-entry rounding bound the simulated rounding uses.
        const ROUNDING_USED: f64 = 0.9;
        let d = rich(None);
        let check = checker(&d);
        let design = d.design().unwrap();
        let scaler = design.scaler().unwrap().clone();
        let entry = ENTRY_ROUNDINGS * design.p() as f64 * UNIT_ROUNDOFF * SCALE;
        for seed in 0..160u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mode = [Mode::Uniform, Mode::Ends, Mode::AllEqual, Mode::Skips][seed as usize % 4];
            let n = 5 + uniform(&mut rng, 40) as usize;
            let records = honest_records(&d, &mut rng, n, mode);
            let mut block = rows(&d, &records);
            let p1 = block.ncols();
            for i in 0..n {
                for j in 0..p1 {
                    let delta = if j + 1 == p1 {
                        check.qa.as_ref().unwrap().0.constant.abs() * entry
                    } else {
                        check.input_delta(j, Units::Declared, entry)
                    };
                    block[(i, j)] += ROUNDING_USED * delta * (2.0 * rng.next_unit() - 1.0);
                }
            }
            check
                .check(&CohortMoments::of_rows(&block, Units::Declared), SCALE)
                .unwrap_or_else(|e| panic!("seed {seed}, {mode:?}, n = {n}: {e}"));
            // The same cohort on the device's scale.
            let mut scaled = rows(&d, &records);
            let answers = scaler
                .scale_columns(&scaled.columns(0, p1 - 1).into_owned())
                .unwrap();
            scaled.columns_mut(0, p1 - 1).copy_from(&answers);
            scaled
                .column_mut(p1 - 1)
                .fill(design.record_qa_entry().unwrap());
            check
                .check(&CohortMoments::of_rows(&scaled, Units::Record), SCALE)
                .unwrap_or_else(|e| panic!("seed {seed}, {mode:?}, n = {n}, record units: {e}"));
        }
    }

    /// Honest cohorts through the real protocol (devices pad and mask with `B_k`, the provider
    /// applies `A₂,k`, the collector unmasks) pass with the collector's own rounding scale.
    #[test]
    fn honest_cohorts_through_the_protocol_pass() {
        use orthomask_core::key::Key;
        use orthomask_core::protocol::qa::max_row_norm;
        use orthomask_core::protocol::tm2::{DataCollector, MaskingServiceProvider, Participant};
        let d = issue_survey(QuestionKind::Integer { min: 18, max: 90 });
        let check = checker(&d);
        let design = d.design().unwrap();
        let collector = DataCollector::new(Key::from_bytes([1; 32]), design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(Key::from_bytes([2; 32]), design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(&design, b.as_ref()).unwrap();
        for seed in 0..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let mode = [Mode::Uniform, Mode::Ends, Mode::AllEqual, Mode::Uniform][seed as usize];
            let records = honest_records(&d, &mut rng, 20, mode);
            let uploads: Vec<Vec<f64>> = records
                .iter()
                .map(|r| device.mask_record(r, &mut rng).unwrap())
                .collect();
            let flat: Vec<f64> = uploads.concat();
            let batch = DMatrix::from_row_slice(records.len(), design.p(), &flat);
            let doubly = provider.mask_cohort(0, &batch).unwrap();
            let unmasked = collector.unmask_cohort(0, &doubly).unwrap();
            check
                .check(
                    &CohortMoments::of_rows(&unmasked.data, Units::Declared),
                    max_row_norm(&doubly),
                )
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }

    /// With device-side DP (σ on the `[−1, 1]` scale), honest cohorts are refused no more often
    /// than the stated rate: at a rate of 0.05 over 600 cohorts, the refusals stay within the
    /// binomial's five standard deviations above 0.05·600 (in fact none: the union bound is
    /// conservative); at the policy's rate none is refused. The issue's share-mode liar is still
    /// refused under DP.
    #[test]
    fn dp_noise_is_refused_at_most_at_the_stated_rate() {
        /// Standard deviations of a binomial count allowed above its mean.
        const RATE_SIGMAS: f64 = 5.0;
        let rate = 0.05;
        for sigma in [0.3, 2.0] {
            let d = rich(Some(sigma));
            let loose = CohortCheck::new(&d, rate).unwrap();
            let strict = checker(&d);
            let design = d.design().unwrap();
            let scaler = design.scaler().unwrap().clone();
            let cohorts = 300u64;
            let mut refused = 0;
            for seed in 0..cohorts {
                let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
                let mode =
                    [Mode::Uniform, Mode::Ends, Mode::AllEqual, Mode::Skips][seed as usize % 4];
                let n = 5 + uniform(&mut rng, 30) as usize;
                let records = honest_records(&d, &mut rng, n, mode);
                let mut block = rows(&d, &records);
                let p1 = block.ncols();
                let answers = scaler
                    .scale_columns(&block.columns(0, p1 - 1).into_owned())
                    .unwrap();
                block.columns_mut(0, p1 - 1).copy_from(&answers);
                for i in 0..n {
                    for j in 0..p1 - 1 {
                        block[(i, j)] += sigma * standard_normal(&mut rng);
                    }
                }
                block
                    .column_mut(p1 - 1)
                    .fill(design.record_qa_entry().unwrap());
                let moments = CohortMoments::of_rows(&block, Units::Record);
                if loose.check(&moments, SCALE).is_err() {
                    refused += 1;
                }
                strict
                    .check(&moments, SCALE)
                    .unwrap_or_else(|e| panic!("σ = {sigma}, seed {seed}: {e}"));
            }
            let trials = cohorts as f64;
            let allowed = rate * trials + RATE_SIGMAS * (trials * rate * (1.0 - rate)).sqrt();
            assert!(
                f64::from(refused) <= allowed,
                "σ = {sigma}: {refused} refused"
            );
        }
        // The 13 006.8 liar under DP σ = 0.3.
        let d = issue_survey(QuestionKind::Integer { min: 18, max: 90 });
        let mut dp = d.clone();
        dp.masking.dp = Some(DpParameters {
            epsilon: 1.0,
            delta: 1e-6,
            sigma: 0.3,
        });
        let records = share_mode_liar_records();
        let check = checker(&dp);
        let e = check.check(&declared(&dp, &records), SCALE).unwrap_err();
        assert!(e.to_string().contains("DP noise"), "{e}");
        // A liar beyond the DP ceiling is refused whatever the honest records and their noise
        // (within the stated rate): 19 honest ages with noise, the liar's age beyond `hi` by
        // the ceiling's excess and a hundredth more, sent without noise.
        let n = 20;
        let (lo, w) = (18.0, 72.0);
        let excess = check.mean_shift_ceiling(1, n).unwrap() * n as f64 / w - 1.0;
        assert!(excess > liar_excess(n));
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(5000 + seed);
            let mode = [Mode::Uniform, Mode::Ends, Mode::AllEqual][seed as usize % 3];
            let mut records = honest_records(&dp, &mut rng, n - 1, mode);
            for record in &mut records {
                for (j, (a, b)) in [(0.0, 1.0), (lo, lo + w), (0.0, 250.0)].iter().enumerate() {
                    record[j] += sigma_dp_in_units(0.3, *a, *b) * standard_normal(&mut rng);
                }
            }
            records.push(vec![1.0, lo + w * (1.0 + 1.01 * excess), 100.0]);
            assert!(
                check.check(&declared(&dp, &records), SCALE).is_err(),
                "seed {seed}"
            );
        }
    }

    /// DP noise of σ on the `[−1, 1]` scale in the units of a column on `[lo, hi]`.
    fn sigma_dp_in_units(sigma: f64, lo: f64, hi: f64) -> f64 {
        sigma * (hi - lo) / 2.0
    }

    /// The issue's share-mode cohort: four honest records with ages summing to 180 (mean 45) and
    /// one record whose age is 1800 on the `[−1, 1]` scale (600 added in each of three shares):
    /// age 54 + 36·1800 = 64 854.
    fn share_mode_liar_records() -> Vec<Vec<f64>> {
        vec![
            vec![0.0, 30.0, 100.0],
            vec![1.0, 40.0, 20.0],
            vec![0.0, 50.0, 250.0],
            vec![1.0, 60.0, 0.0],
            vec![0.0, 54.0 + 36.0 * 1800.0, 125.0],
        ]
    }

    /// Issue 43 item 5, share mode: the released mean age would be 13 006.8; the check refuses
    /// the cohort, naming the age column and its question, in one line; its public note carries
    /// no number of the cohort.
    #[test]
    fn the_share_mode_liar_is_refused() {
        let d = issue_survey(QuestionKind::Integer { min: 18, max: 90 });
        let records = share_mode_liar_records();
        let mean = records.iter().map(|r| r[1]).sum::<f64>() / 5.0;
        assert!((mean - 13_006.8).abs() < HAND_COMPUTED * mean);
        let e = checker(&d)
            .check(&declared(&d, &records), SCALE)
            .unwrap_err();
        assert!(
            matches!(
                &e,
                CohortRefusal::Violated {
                    condition: Condition::SumAboveRange,
                    columns,
                    ..
                } if columns[0].position == 2
            ),
            "{e}"
        );
        let line = e.to_string();
        assert!(!line.contains('\n'));
        assert!(
            line.starts_with("column 2 (\"age\", \"What is your age?\")"),
            "{line}"
        );
        let note = e.public_note();
        assert!(!note.contains("e4") && !note.contains("6.4"), "{note}");
        assert!(note.contains("column 2"), "{note}");
        // On the device's scale too.
        let design = d.design().unwrap();
        let mut block = rows(&d, &records);
        let answers = design
            .scaler()
            .unwrap()
            .scale_columns(&block.columns(0, 3).into_owned());
        // Range scaling refuses the liar's value; scale by hand as the liar's device did.
        assert!(answers.is_err());
        for i in 0..5 {
            for (j, (lo, hi)) in [(0.0, 1.0), (18.0, 90.0), (0.0, 250.0)].iter().enumerate() {
                block[(i, j)] = 2.0 * (block[(i, j)] - lo) / (hi - lo) - 1.0;
            }
        }
        block.column_mut(3).fill(1.0);
        assert!((block[(4, 1)] - 1800.0).abs() < HAND_COMPUTED * 1800.0);
        let e = checker(&d)
            .check(&CohortMoments::of_rows(&block, Units::Record), SCALE)
            .unwrap_err();
        assert!(e.to_string().starts_with("column 2"), "{e}");
    }

    /// Issue 43 item 5, basic protocol: an age of 280.8 on 18–90 (`e = 2.65` widths) in a cohort
    /// of 20 exceeds `e*(20) ≈ 1.735`, so it is refused whatever the 19 honest ages — swept over
    /// 19 equal ages across the range, the worst case of the ceiling and random cohorts. A
    /// smaller lie (age 130, `e ≈ 0.556`) passes exactly where `liar_excess_given` says (honest
    /// ages near the worst configuration) and is refused elsewhere (honest ages at the ends or
    /// spread), and in every passing case the mean moves by no more than the ceiling. As an
    /// integer question, 280.8 is also off the lattice.
    #[test]
    fn the_basic_protocol_liar_in_a_cohort_of_20() {
        let (lo, hi) = (18.0, 90.0);
        let w = hi - lo;
        let n = 20;
        let d = issue_survey(QuestionKind::Number { min: lo, max: hi });
        let check = checker(&d);
        let ceiling = mean_shift_ceiling(n, lo, hi);
        assert!((280.8 - hi) / w > liar_excess(n));
        let mut rng = ChaCha8Rng::seed_from_u64(43);
        let worst = {
            let e = liar_excess(n);
            // m = 11: the honest all at (m − e)/(n − 1) of the range.
            lo + w * (11.0 - e) / 19.0
        };
        let mut configurations: Vec<Vec<f64>> =
            (0..=72).map(|i| vec![lo + f64::from(i); 19]).collect();
        configurations.push(vec![worst; 19]);
        for _ in 0..40 {
            configurations.push((0..19).map(|_| lo + w * rng.next_unit()).collect());
        }
        let (mut caught, mut passed) = (0, 0);
        for honest in &configurations {
            // The other columns equal in every record (module documentation): the pairs then
            // say what the age column alone says.
            let record = |age: f64| vec![1.0, age, 100.0];
            let with_liar = |liar: f64| {
                let mut records: Vec<Vec<f64>> = honest.iter().map(|&a| record(a)).collect();
                records.push(record(liar));
                records
            };
            let wild = check.check(&declared(&d, &with_liar(280.8)), SCALE);
            assert!(wild.is_err(), "honest {honest:?}");
            let given = liar_excess_given(honest, lo, hi);
            assert!(given.above <= liar_excess(n) * w + HAND_COMPUTED * w);
            let small = 130.0;
            let verdict = check.check(&declared(&d, &with_liar(small)), SCALE);
            let margin = BEYOND_ROUNDING * w;
            if small - hi < given.above - margin {
                assert!(verdict.is_ok(), "honest {honest:?}: {verdict:?}");
                passed += 1;
                // Against the liar's honest answer anywhere in the range.
                assert!((small - lo) / n as f64 <= ceiling);
            } else if small - hi > given.above + margin {
                assert!(verdict.is_err(), "honest {honest:?}");
                caught += 1;
            }
        }
        assert!(caught > 0 && passed > 0, "caught {caught}, passed {passed}");
        // The integer question: 280.8 and 281 are refused by (C1) as above; an age that is no
        // whole number is refused by the lattice (C2) even inside the range.
        let d = issue_survey(QuestionKind::Integer { min: 18, max: 90 });
        let check = checker(&d);
        let honest = vec![vec![1.0, 50.0, 100.0]; 19];
        for (liar, condition) in [
            (280.8, Condition::SquaresAboveMaximum),
            (281.0, Condition::SquaresAboveMaximum),
            (50.5, Condition::SumOffLattice),
        ] {
            let mut records = honest.clone();
            records.push(vec![1.0, liar, 100.0]);
            let e = check.check(&declared(&d, &records), SCALE).unwrap_err();
            assert!(
                matches!(e, CohortRefusal::Violated { condition: c, .. } if c == condition),
                "{liar}: {e}"
            );
        }
    }

    /// A liar just inside the ceiling passes and moves the mean by no more than it says: the
    /// worst configuration of the module documentation (n = 5: four honest at 0.6 of the range,
    /// the liar at 1.6; n = 20), whose statistics are exactly those of an honest cohort with
    /// answers at the ends; a liar just beyond is refused.
    #[test]
    fn a_liar_just_inside_the_ceiling_passes_and_moves_the_mean_no_further() {
        let (lo, hi) = (18.0, 90.0);
        let w = hi - lo;
        let d = issue_survey(QuestionKind::Number { min: lo, max: hi });
        let check = checker(&d);
        for (n, m) in [(5usize, 3.0), (20, 11.0)] {
            let e = liar_excess(n);
            let honest_u = (m - e) / (n as f64 - 1.0);
            let build = |liar_u: f64| -> Vec<Vec<f64>> {
                let mut records = vec![vec![1.0, lo + w * honest_u, 50.0]; n - 1];
                records.push(vec![1.0, lo + w * liar_u, 50.0]);
                records
            };
            let inside = build(1.0 + e - BEYOND_ROUNDING);
            check
                .check(&declared(&d, &inside), SCALE)
                .unwrap_or_else(|err| panic!("n = {n}: {err}"));
            let mean_shift = (inside[n - 1][1] - lo) / n as f64;
            assert!(mean_shift <= mean_shift_ceiling(n, lo, hi), "n = {n}");
            assert!(check.mean_shift_ceiling(1, n).unwrap() >= mean_shift);
            assert!(
                check
                    .check(&declared(&d, &build(1.0 + e + BEYOND_ROUNDING)), SCALE)
                    .is_err()
            );
            // The honest cohort with m + 1 answers at hi and the rest at lo.
            let exact = build(1.0 + e);
            let corners: Vec<Vec<f64>> = (0..n)
                .map(|i| vec![1.0, if i <= m as usize { hi } else { lo }, 50.0])
                .collect();
            let (a, b) = (declared(&d, &exact), declared(&d, &corners));
            for (x, y) in a.sums.iter().zip(&b.sums) {
                assert!((x - y).abs() <= HAND_COMPUTED * y.abs().max(1.0), "n = {n}");
            }
            for (x, y) in a.gram.iter().zip(b.gram.iter()) {
                assert!((x - y).abs() <= HAND_COMPUTED * y.abs().max(1.0), "n = {n}");
            }
        }
    }

    /// 0/1 columns admit no excess (`Σx² = Σx`), two options of one question cannot both be
    /// chosen, and a model term must equal its formula — each refused with its condition.
    #[test]
    fn the_codings_identities_refuse_what_ranges_let_through() {
        let d = rich(None);
        let check = checker(&d);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let records = honest_records(&d, &mut rng, 19, Mode::Uniform);
        let names: Vec<String> = d.columns().into_iter().map(|c| c.name).collect();
        let at = |name: &str| names.iter().position(|c| c == name).unwrap();
        let liar = |change: &dyn Fn(&mut Vec<f64>)| {
            let mut all = records.clone();
            let mut record = d
                .encode(&answers(
                    &d,
                    &mut ChaCha8Rng::seed_from_u64(8),
                    Mode::Uniform,
                ))
                .unwrap();
            change(&mut record);
            all.push(record);
            check.check(&declared(&d, &all), SCALE).unwrap_err()
        };
        let condition = |e: &CohortRefusal| match e {
            CohortRefusal::Violated { condition, .. } => *condition,
            other => panic!("{other}"),
        };
        let smoker = at("smoker");
        let e = liar(&|r| r[smoker] = 0.9);
        assert_eq!(condition(&e), Condition::NotBinary, "{e}");
        let (south, east) = (at("region=south"), at("region=east"));
        let e = liar(&|r| {
            r[south] = 1.0;
            r[east] = 1.0;
        });
        assert_eq!(condition(&e), Condition::ExclusiveOptions, "{e}");
        let age_sq = at("age_sq");
        let e = liar(&|r| r[age_sq] = 900.0 + r[age_sq].max(1000.0) / 2.0);
        assert_eq!(condition(&e), Condition::TermValue, "{e}");
        assert!(e.to_string().contains("\"age_sq\", a model term"), "{e}");
        assert_eq!(check.mean_shift_ceiling(smoker, 20), Some(1.0 / 20.0));
    }

    /// Statistics no matrix has: a cross-product larger than the columns' spreads allow (inside
    /// every corner) is refused by (C4), naming both columns; shapes and NaN are refused first.
    #[test]
    fn statistics_of_no_matrix_are_refused() {
        let d = survey(
            vec![
                question("a", false, QuestionKind::Number { min: 0.0, max: 1.0 }),
                question("b", false, QuestionKind::Number { min: 0.0, max: 1.0 }),
            ],
            Vec::new(),
            None,
        );
        let check = checker(&d);
        let c = d.masking.qa_constant.unwrap();
        // n = 4, Σa = Σb = 2, Σa² = Σb² = 1.5 (centred 0.5), Σab = 1.9 (centred 0.9 > 0.5).
        let moments = |ab: f64| CohortMoments {
            n: 4,
            sums: vec![2.0, 2.0, 4.0 * c],
            gram: DMatrix::from_row_slice(
                3,
                3,
                &[
                    1.5,
                    ab,
                    2.0 * c,
                    ab,
                    1.5,
                    2.0 * c,
                    2.0 * c,
                    2.0 * c,
                    4.0 * c * c,
                ],
            ),
            units: Units::Declared,
        };
        assert!(check.check(&moments(1.4), SCALE).is_ok());
        let e = check.check(&moments(1.9), SCALE).unwrap_err();
        assert!(
            matches!(
                &e,
                CohortRefusal::Violated {
                    condition: Condition::NotPositiveSemidefinite,
                    columns,
                    ..
                } if columns.len() == 2
            ),
            "{e}"
        );
        let mut short = moments(1.4);
        short.sums.pop();
        assert!(matches!(
            check.check(&short, SCALE),
            Err(CohortRefusal::Shape { .. })
        ));
        let mut nan = moments(1.4);
        nan.gram[(0, 1)] = f64::NAN;
        let e = check.check(&nan, SCALE).unwrap_err();
        assert!(e.to_string().starts_with("column 1"), "{e}");
        let mut empty = moments(1.4);
        empty.n = 0;
        assert_eq!(check.check(&empty, SCALE), Err(CohortRefusal::Empty));
        assert!(matches!(
            check.check(&moments(1.4), f64::NAN),
            Err(CohortRefusal::Scale { .. })
        ));
        let mut wrong_qa = moments(1.4);
        wrong_qa.sums[2] += 1.0;
        let e = check.check(&wrong_qa, SCALE).unwrap_err();
        assert!(e.to_string().contains("the QA column"), "{e}");
    }

    /// An orthogonal `n × n` matrix keeping `1ₙ`: a reflection in a unit vector orthogonal to
    /// `1ₙ` (the kind of left mask the protocol applies), from `seed`.
    fn mask_keeping_ones(n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut v = DVector::from_fn(n, |_, _| standard_normal(&mut rng));
        let mean = v.mean();
        v.add_scalar_mut(-mean);
        v /= v.norm();
        DMatrix::identity(n, n) - 2.0 * &v * v.transpose()
    }

    /// Snapping an honest cohort (the protocol's, every coding and term kind of the rich survey,
    /// answers uniform, at the ends, skipped, all equal) moves it by rounding only, and leaves
    /// every identity the check decides exact to rounding; a cohort whose records are all equal
    /// has no direction with spread, and keeps none.
    #[test]
    fn snapping_an_honest_cohort_moves_it_by_rounding_only() {
        use orthomask_core::key::Key;
        use orthomask_core::protocol::qa::max_row_norm;
        use orthomask_core::protocol::tm2::{DataCollector, MaskingServiceProvider, Participant};
        let d = rich(None);
        let check = checker(&d);
        let design = d.design().unwrap();
        let collector = DataCollector::new(Key::from_bytes([1; 32]), design.clone()).unwrap();
        let provider = MaskingServiceProvider::new(Key::from_bytes([2; 32]), design.clone());
        let b = collector.right_mask(0).unwrap();
        let device = Participant::new(&design, b.as_ref()).unwrap();
        for (seed, mode) in [Mode::Uniform, Mode::Ends, Mode::Skips, Mode::AllEqual]
            .into_iter()
            .enumerate()
        {
            let mut rng = ChaCha8Rng::seed_from_u64(300 + seed as u64);
            let records = honest_records(&d, &mut rng, 40, mode);
            let uploads: Vec<f64> = records
                .iter()
                .flat_map(|r| device.mask_record(r, &mut rng).unwrap())
                .collect();
            let batch = DMatrix::from_row_slice(records.len(), design.p(), &uploads);
            let doubly = provider.mask_cohort(0, &batch).unwrap();
            let unmasked = collector.unmask_cohort(0, &doubly).unwrap();
            let scale = max_row_norm(&doubly);
            let (snapped, report) = check
                .snap(&unmasked.data, scale)
                .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
            let report = report.unwrap();
            assert!(report.identities > 0, "{mode:?}");
            assert!(report.largest_change < SNAP_MOVES, "{mode:?}: {report:?}");
            let worst = check
                .identity_residuals(&snapped, scale)
                .into_iter()
                .fold(0.0f64, |w, r| w.max(r.abs()));
            assert!(
                worst < SNAPPED_EXACT,
                "{mode:?}: an identity is off by {worst:e}"
            );
            if matches!(mode, Mode::AllEqual) {
                assert_eq!(report.empty_directions, check.columns.len(), "{report:?}");
            }
            // The snapped cohort passes the check, and is what the release is made of.
            check
                .check(&CohortMoments::of_rows(&snapped, Units::Declared), scale)
                .unwrap();
        }
    }

    /// The adversarial review's channel: one record moved by `δ` below every allowance (a
    /// right-masking service's `δ` on a share, in the cohort's yes/no, integer, Likert and term
    /// columns) leaves the snapped cohort's identity-fixed statistics — its counts, sums of whole
    /// steps, cross-products of lattice columns, term identities — exactly the honest cohort's,
    /// whichever record was moved and whatever its answers: nothing of the record is read. Not
    /// snapped, the count is off a whole number by `δ`, the sign the record's answer.
    #[test]
    fn a_record_moved_below_the_allowances_leaves_no_trace_in_the_snapped_identities() {
        let d = rich(None);
        let check = checker(&d);
        let mut rng = ChaCha8Rng::seed_from_u64(77);
        let records = honest_records(&d, &mut rng, 30, Mode::Uniform);
        let honest = rows(&d, &records);
        let mask = mask_keeping_ones(30, 5);
        let (honest_snapped, _) = check.snap(&(&mask * &honest), SCALE).unwrap();
        let honest_moments = CohortMoments::of_rows(&honest_snapped, Units::Declared);
        let delta = 1e-9;
        for target in [0usize, 1, 2, 3] {
            let mut moved = honest.clone();
            // smoker, age, mood, and the term age_sq.
            for column in [0usize, 1, 3] {
                moved[(target, column)] += delta;
            }
            let moved = &mask * moved;
            let count = moved.column(0).sum();
            assert!(
                ((count - count.round()) - delta).abs() < delta * 1e-3,
                "not snapped, the count carries δ: {count}"
            );
            let (snapped, _) = check.snap(&moved, SCALE).unwrap();
            let m = CohortMoments::of_rows(&snapped, Units::Declared);
            // Smoker (0/1): its count and square sum; age (integer): its sum; smoker × age,
            // smoker × region=south (lattice products): the honest cohort's, to rounding.
            let region_south = 5;
            for (what, got, want) in [
                ("Σ smoker", m.sums[0], honest_moments.sums[0]),
                ("Σ smoker²", m.gram[(0, 0)], honest_moments.gram[(0, 0)]),
                ("Σ age", m.sums[1], honest_moments.sums[1]),
                ("Σ smoker·age", m.gram[(0, 1)], honest_moments.gram[(0, 1)]),
                (
                    "Σ smoker·south",
                    m.gram[(0, region_south)],
                    honest_moments.gram[(0, region_south)],
                ),
            ] {
                assert!(
                    (got - want).abs() < SNAPPED_EXACT * want.abs().max(1.0),
                    "record {target}: {what} = {got}, honest {want}"
                );
            }
        }
    }

    /// Snapping commutes with the left masks (`A·1ₙ = 1ₙ`, orthogonal): snapping `A·Y` gives
    /// `A·snap(Y)`, so a snapped release has the law of a release.
    #[test]
    fn snapping_commutes_with_the_left_masks() {
        let d = rich(None);
        let check = checker(&d);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let y =
            &mask_keeping_ones(25, 1) * rows(&d, &honest_records(&d, &mut rng, 25, Mode::Skips));
        let mut moved = y.clone();
        moved[(4, 0)] += 1e-9;
        let a = mask_keeping_ones(25, 2);
        let (left, _) = check.snap(&(&a * &moved), SCALE).unwrap();
        let (right, _) = check.snap(&moved, SCALE).unwrap();
        let right = &a * right;
        for j in 0..y.ncols() {
            let width = check.columns.get(j).map_or(1.0, Column::width);
            for i in 0..y.nrows() {
                assert!(
                    (left[(i, j)] - right[(i, j)]).abs() < SNAP_MOVES * width,
                    "({i}, {j}): {} against {}",
                    left[(i, j)],
                    right[(i, j)]
                );
            }
        }
    }

    /// With device-side DP no identity is exact: nothing is snapped, the cohort is returned as it
    /// came.
    #[test]
    fn with_device_side_dp_nothing_is_snapped() {
        let d = rich(Some(0.3));
        let check = checker(&d);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let y = rows(&d, &honest_records(&d, &mut rng, 30, Mode::Uniform));
        let (out, report) = check.snap(&y, SCALE).unwrap();
        assert_eq!(report, None);
        assert_eq!(out, y);
    }
}
