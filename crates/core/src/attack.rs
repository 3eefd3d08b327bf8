//! The Appendix A attack of Ding, Miao & Wu (2020) (seed 000): why `p < n` is refused.
//!
//! # The attack
//! The provider sees `M_R = XB` (`n × p`) with `B` invertible. Split the rows into a set `a` of
//! `r = rank(M_R)` linearly independent rows and the rest `b`. Then `M_b = C M_a` for a unique
//! `C = M_b M_a⁺` that the provider can compute, and since `M = XB` with `B` invertible,
//! `X_b = C X_a` for **every** column of `X`. If the attacker knows that some column of `X` is
//! binary, its values `x_a ∈ {0, 1}^r` must make `C x_a` binary too. With `p < n` there are
//! `n − r > 0` such constraints, and a non-integer coefficient (`a₃/a₂` in the paper's 3 × 2
//! example) rules most assignments out: often only the true column (and, when `1ₙ` lies in the
//! column space, its complement and the other binary columns) survives.
//!
//! With `p ≥ n` and `X` of full rank (the modified TM²: `p₂ ≥ n` Gaussian columns), `r = n`, there
//! are no constraints, all `2ⁿ` binary vectors stay possible, and nothing is recovered — Lemma
//! 3.3's permutation ambiguity is the most any party can be left with.
//!
//! # Search
//! Depth-first over `x_a` with interval pruning: at depth `d`, constraint `j` can still reach
//! `s_j + [Σ_{k≥d} min(0, C_jk), Σ_{k≥d} max(0, C_jk)]`; a branch dies as soon as some interval
//! misses both 0 and 1 (within the tolerance). A node budget bounds the work.

use nalgebra::DMatrix;

/// Relative size below which a row's residual counts as dependent on the rows already chosen.
const RANK_RELATIVE: f64 = 1e-9;

/// Errors of the attack.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AttackError {
    /// The masked matrix is empty.
    #[error("the masked data have no rows or no columns")]
    Empty,
    /// NaN or infinity in the masked data.
    #[error("masked value at row {row}, column {column} is not finite")]
    NonFinite {
        /// 0-based row.
        row: usize,
        /// 0-based column.
        column: usize,
    },
    /// The search exceeded its node budget.
    #[error(
        "the binary search over 2^{rank} assignments exceeded {budget} nodes; raise the budget or the tolerance"
    )]
    SearchTooLarge {
        /// Number of free binary unknowns.
        rank: usize,
        /// The node budget.
        budget: u64,
    },
    /// A tolerance outside (0, 0.5).
    #[error("the binary tolerance must lie in (0, 0.5), got {0}")]
    BadTolerance(f64),
}

/// Which binary vectors survived.
#[derive(Clone, Debug, PartialEq)]
pub enum Consistent {
    /// No row is a combination of the others: every one of the `2ⁿ` binary vectors is possible.
    All {
        /// `n`.
        rows: usize,
    },
    /// The surviving non-zero binary vectors (length `n`, rows in input order).
    Listed(Vec<Vec<u8>>),
}

/// What the attack learned.
#[derive(Clone, Debug, PartialEq)]
pub struct AttackOutcome {
    /// Rows `n` of the masked data.
    pub rows: usize,
    /// Columns `p`.
    pub columns: usize,
    /// `rank(M_R)`.
    pub rank: usize,
    /// Linear constraints `n − rank` every column of `X` satisfies.
    pub constraints: usize,
    /// The surviving binary vectors.
    pub consistent: Consistent,
    /// Search nodes visited.
    pub nodes: u64,
}

impl AttackOutcome {
    /// The recovered binary column, when exactly one non-constant vector survived.
    pub fn recovered(&self) -> Option<&[u8]> {
        match &self.consistent {
            Consistent::Listed(list) => {
                let non_constant: Vec<&Vec<u8>> = list
                    .iter()
                    .filter(|v| v.iter().any(|&b| b != v[0]))
                    .collect();
                (non_constant.len() == 1).then(|| non_constant[0].as_slice())
            }
            Consistent::All { .. } => None,
        }
    }

    /// Whether `column` is among the surviving candidates (for demonstrations that know the truth).
    pub fn is_candidate(&self, column: &[u8]) -> bool {
        match &self.consistent {
            Consistent::All { rows } => column.len() == *rows,
            Consistent::Listed(list) => list.iter().any(|v| v == column),
        }
    }
}

/// Choose `rank` independent rows greedily by largest residual (pivoted Gram–Schmidt on rows).
fn independent_rows(m: &DMatrix<f64>) -> Vec<usize> {
    let (n, p) = m.shape();
    let mut residual = m.clone();
    let norms: Vec<f64> = (0..n).map(|i| m.row(i).norm()).collect();
    let mut chosen = Vec::new();
    let mut used = vec![false; n];
    for _ in 0..p.min(n) {
        let best = (0..n)
            .filter(|&i| !used[i])
            .map(|i| (i, residual.row(i).norm()))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, norm)) = best else { break };
        if norm <= RANK_RELATIVE * norms[i].max(f64::MIN_POSITIVE) {
            break;
        }
        used[i] = true;
        chosen.push(i);
        let q = residual.row(i) / norm;
        for (k, &is_used) in used.iter().enumerate() {
            if !is_used {
                let coefficient = residual.row(k).dot(&q);
                let update = &q * coefficient;
                let mut row = residual.row_mut(k);
                row -= update;
            }
        }
    }
    chosen
}

/// Run the Appendix A attack on the provider's view `m_r` (`n × p`), looking for binary columns
/// of the unmasked data. `tolerance` is how far from 0 or 1 a value may be (use
/// [`BINARY_FULL_PRECISION`](crate::tolerance::BINARY_FULL_PRECISION) for round-trip data).
///
/// # Errors
/// [`AttackError`] for empty or non-finite input, a bad tolerance, or an exhausted node budget.
pub fn appendix_a_attack(
    m_r: &DMatrix<f64>,
    tolerance: f64,
    node_budget: u64,
) -> Result<AttackOutcome, AttackError> {
    let (n, p) = m_r.shape();
    if n == 0 || p == 0 {
        return Err(AttackError::Empty);
    }
    if !(tolerance > 0.0 && tolerance < 0.5) {
        return Err(AttackError::BadTolerance(tolerance));
    }
    for j in 0..p {
        for i in 0..n {
            if !m_r[(i, j)].is_finite() {
                return Err(AttackError::NonFinite { row: i, column: j });
            }
        }
    }
    let a = independent_rows(m_r);
    let r = a.len();
    if r == n {
        return Ok(AttackOutcome {
            rows: n,
            columns: p,
            rank: r,
            constraints: 0,
            consistent: Consistent::All { rows: n },
            nodes: 0,
        });
    }
    let b: Vec<usize> = (0..n).filter(|i| !a.contains(i)).collect();
    let m_a = m_r.select_rows(&a);
    let m_b = m_r.select_rows(&b);
    // C M_a = M_b. With M_aᵀ = Q R (thin QR, R invertible since the rows are independent),
    // M_a = Rᵀ Qᵀ, so C Rᵀ = M_b Q, i.e. R Cᵀ = (M_b Q)ᵀ: one upper-triangular solve.
    let qr = m_a.transpose().qr();
    let (q, rr) = (qr.q(), qr.r());
    let rhs = (&m_b * q).transpose();
    let c_t = rr.solve_upper_triangular(&rhs).ok_or(AttackError::Empty)?;
    let c = c_t.transpose(); // (n − r) × r

    let search = Search::new(&c, tolerance, node_budget);
    let (assignments, nodes) = search.run().map_err(|()| AttackError::SearchTooLarge {
        rank: r,
        budget: node_budget,
    })?;
    let mut listed = Vec::new();
    for x_a in assignments {
        let mut v = vec![0u8; n];
        for (k, &row) in a.iter().enumerate() {
            v[row] = x_a[k];
        }
        for (j, &row) in b.iter().enumerate() {
            let s: f64 = (0..r).map(|k| c[(j, k)] * f64::from(x_a[k])).sum();
            v[row] = u8::from(s > 0.5);
        }
        if v.contains(&1) {
            listed.push(v);
        }
    }
    Ok(AttackOutcome {
        rows: n,
        columns: p,
        rank: r,
        constraints: n - r,
        consistent: Consistent::Listed(listed),
        nodes,
    })
}

/// Depth-first search over binary assignments with interval pruning.
struct Search<'a> {
    c: &'a DMatrix<f64>,
    tolerance: f64,
    budget: u64,
    /// `suffix_min[d][j] = Σ_{k≥d} min(0, C_jk)`, likewise max.
    suffix_min: Vec<Vec<f64>>,
    suffix_max: Vec<Vec<f64>>,
}

impl<'a> Search<'a> {
    fn new(c: &'a DMatrix<f64>, tolerance: f64, budget: u64) -> Self {
        let (m, r) = c.shape();
        let mut suffix_min = vec![vec![0.0; m]; r + 1];
        let mut suffix_max = vec![vec![0.0; m]; r + 1];
        for d in (0..r).rev() {
            for j in 0..m {
                let v = c[(j, d)];
                suffix_min[d][j] = suffix_min[d + 1][j] + v.min(0.0);
                suffix_max[d][j] = suffix_max[d + 1][j] + v.max(0.0);
            }
        }
        Self {
            c,
            tolerance,
            budget,
            suffix_min,
            suffix_max,
        }
    }

    fn feasible(&self, depth: usize, sums: &[f64]) -> bool {
        let t = self.tolerance;
        sums.iter().enumerate().all(|(j, s)| {
            let lo = s + self.suffix_min[depth][j] - t;
            let hi = s + self.suffix_max[depth][j] + t;
            (lo <= 0.0 && 0.0 <= hi) || (lo <= 1.0 && 1.0 <= hi)
        })
    }

    fn run(&self) -> Result<(Vec<Vec<u8>>, u64), ()> {
        let (m, r) = self.c.shape();
        let mut found = Vec::new();
        let mut nodes = 0u64;
        let mut assignment = vec![0u8; r];
        let mut sums = vec![0.0; m];
        self.visit(0, &mut assignment, &mut sums, &mut found, &mut nodes)?;
        Ok((found, nodes))
    }

    fn visit(
        &self,
        depth: usize,
        assignment: &mut Vec<u8>,
        sums: &mut Vec<f64>,
        found: &mut Vec<Vec<u8>>,
        nodes: &mut u64,
    ) -> Result<(), ()> {
        *nodes += 1;
        if *nodes > self.budget {
            return Err(());
        }
        if !self.feasible(depth, sums) {
            return Ok(());
        }
        if depth == assignment.len() {
            found.push(assignment.clone());
            return Ok(());
        }
        for bit in [0u8, 1] {
            assignment[depth] = bit;
            if bit == 1 {
                for (j, s) in sums.iter_mut().enumerate() {
                    *s += self.c[(j, depth)];
                }
            }
            let outcome = self.visit(depth + 1, assignment, sums, found, nodes);
            if bit == 1 {
                for (j, s) in sums.iter_mut().enumerate() {
                    *s -= self.c[(j, depth)];
                }
            }
            outcome?;
        }
        assignment[depth] = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Key, StreamId};
    use crate::mask::{DenseInvertible, HaarOrthogonal, Mask};
    use crate::random::{MatlabTwister, fill_standard_normal};
    use crate::tolerance::BINARY_FULL_PRECISION;

    const BUDGET: u64 = 10_000_000;

    /// The paper's 3 × 2 example (A.1): X = [(1, a₁), (0, a₂), (0, a₃)] with a₃/a₂ = 0.7 not an
    /// integer; any invertible B; the attack returns X₁ = (1, 0, 0).
    #[test]
    fn recovers_the_papers_three_by_two_example() {
        let x = DMatrix::from_row_slice(3, 2, &[1.0, 0.4, 0.0, 2.0, 0.0, 1.4]);
        let b = DenseInvertible::uniform_entries(2, &mut MatlabTwister::new(7)).unwrap();
        let mut m_r = x.clone();
        b.right_apply(&mut m_r).unwrap();
        let outcome = appendix_a_attack(&m_r, BINARY_FULL_PRECISION, BUDGET).unwrap();
        assert_eq!(outcome.constraints, 1);
        assert_eq!(outcome.recovered(), Some(&[1u8, 0, 0][..]));
    }

    fn design_with_one_binary_column(n: usize, p: usize) -> (DMatrix<f64>, Vec<u8>) {
        let mut rng = Key::teaching(77).stream(StreamId::Scratch(n as u64)).rng();
        let mut x = DMatrix::zeros(n, p);
        let mut noise = vec![0.0; n * (p - 1)];
        fill_standard_normal(&mut rng, &mut noise);
        let truth: Vec<u8> = (0..n).map(|i| u8::from((i * 7 + 3) % 5 < 2)).collect();
        for i in 0..n {
            x[(i, 0)] = f64::from(truth[i]);
            for j in 1..p {
                x[(i, j)] = 10.0 * noise[i * (p - 1) + j - 1];
            }
        }
        (x, truth)
    }

    #[test]
    fn recovers_a_binary_column_when_p_is_below_n() {
        let (x, truth) = design_with_one_binary_column(40, 6);
        let b = HaarOrthogonal::keyed(
            6,
            Key::teaching(5).stream(StreamId::RightMask { cohort: 0 }),
        )
        .unwrap();
        let mut m_r = x;
        b.right_apply(&mut m_r).unwrap();
        let outcome = appendix_a_attack(&m_r, BINARY_FULL_PRECISION, BUDGET).unwrap();
        assert_eq!(outcome.rank, 6);
        assert_eq!(outcome.recovered(), Some(truth.as_slice()));
    }

    #[test]
    fn recovers_nothing_on_a_safe_design() {
        let (x, truth) = design_with_one_binary_column(20, 26);
        let b = HaarOrthogonal::keyed(
            26,
            Key::teaching(5).stream(StreamId::RightMask { cohort: 0 }),
        )
        .unwrap();
        let mut m_r = x;
        b.right_apply(&mut m_r).unwrap();
        let outcome = appendix_a_attack(&m_r, BINARY_FULL_PRECISION, BUDGET).unwrap();
        assert_eq!(outcome.constraints, 0);
        assert_eq!(outcome.consistent, Consistent::All { rows: 20 });
        assert_eq!(outcome.recovered(), None);
        assert!(outcome.is_candidate(&truth));
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            appendix_a_attack(&DMatrix::zeros(0, 2), 1e-6, BUDGET).unwrap_err(),
            AttackError::Empty
        );
        let mut m = DMatrix::from_element(3, 2, 1.0);
        m[(1, 1)] = f64::INFINITY;
        assert_eq!(
            appendix_a_attack(&m, 1e-6, BUDGET).unwrap_err(),
            AttackError::NonFinite { row: 1, column: 1 }
        );
        assert_eq!(
            appendix_a_attack(&DMatrix::identity(3, 2), 0.7, BUDGET).unwrap_err(),
            AttackError::BadTolerance(0.7)
        );
    }

    #[test]
    fn budget_is_enforced() {
        let (x, _) = design_with_one_binary_column(40, 6);
        assert!(matches!(
            appendix_a_attack(&x, 0.49, 3),
            Err(AttackError::SearchTooLarge { .. })
        ));
    }
}
