//! What each agency learns about the other's data, counted in linear constraints (seed 001
//! §2.2).
//!
//! # The paper's accounting
//! A learns "`g + pq` constraints" on `Y` (the `pq` entries of `XᵀY`, and "the `g`-dimensional
//! subspace that the `Yᵢ` lie in, as given by `W`"); B learns "`n − g + pq` constraints" on `X`
//! (the `pq` entries, and "the `(n − g)`-dimensional subspace that the `Xᵢ` lie in").
//!
//! # The exact count
//! The paper counts the *dimension of the subspace* a column is known to lie in where it says
//! *constraints*; the two are complementary (`n` minus each other). Counted as independent linear
//! equations on the unknown entries:
//!
//! * **A about `Y`** (`nq` unknowns): `W = (I − ZZᵀ)Y` fixes the component of each `Y_j` in the
//!   `(n − g)`-dimensional range of `I − ZZᵀ`: `n − g` equations per column, `(n − g)·q` in all.
//!   `XᵀY = XᵀW` adds nothing, A could compute it from `W`. Each `Y_j` keeps `g` free directions.
//! * **B about `X`** (`np` unknowns): `ZᵀX = 0` gives `g` equations per column and `XᵀY = WᵀX`
//!   gives `rank(W)` more (independent of the first, since `W ⟂ Z`): `(g + rank W)·p` in all.
//!   Generically `rank W = q` (it is `q` whenever `Y` has full rank and `ran Y ∩ ran Z = {0}`,
//!   which holds with probability one for a Haar-random `Z` when `g + q < n`). Each `X_i` keeps
//!   `n − g − rank W` free directions.
//!
//! The counts are those of the protocol's messages. The column sums the agencies share (§3.1)
//! add one known constraint per column on either side, whichever variant (raw or centred
//! columns) is run.
//!
//! Both the paper's numbers and the exact ones are reported, side by side; with `g ≈ n/2` they
//! tell the same story, which is why the paper's conclusion (approximate symmetry) stands.

use crate::feasibility::Dimensions;

/// Linear constraints one agency learned about the other's data matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstraintCount {
    paper: usize,
    independent: usize,
    unknowns: usize,
    free_per_column: usize,
}

impl ConstraintCount {
    /// The count as seed 001 §2.2 states it.
    pub fn paper(&self) -> usize {
        self.paper
    }

    /// The number of independent linear equations on the other's entries (see the
    /// [module documentation](self)).
    pub fn independent(&self) -> usize {
        self.independent
    }

    /// The number of unknown entries, `n` × the other's columns.
    pub fn unknowns(&self) -> usize {
        self.unknowns
    }

    /// Directions of each of the other's columns that stay unknown.
    pub fn free_per_column(&self) -> usize {
        self.free_per_column
    }
}

/// Both directions of disclosure in one secure product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disclosure {
    sender_learned: ConstraintCount,
    receiver_learned: ConstraintCount,
}

impl Disclosure {
    /// The counts for feasible dimensions with the generic reply rank `rank W = q`.
    pub fn generic(dims: &Dimensions) -> Self {
        Self::with_reply_rank(dims, dims.receiver_columns())
    }

    /// The counts when the reply `W` has rank `reply_rank` (at most `q`; B can measure it).
    pub fn with_reply_rank(dims: &Dimensions, reply_rank: usize) -> Self {
        let n = dims.subjects();
        let p = dims.sender_columns();
        let q = dims.receiver_columns();
        let g = dims.complement_columns();
        let rank = reply_rank.min(q);
        Self {
            sender_learned: ConstraintCount {
                paper: g + p * q,
                independent: (n - g) * q,
                unknowns: n * q,
                free_per_column: g,
            },
            receiver_learned: ConstraintCount {
                paper: n - g + p * q,
                independent: (g + rank) * p,
                unknowns: n * p,
                free_per_column: n - g - rank,
            },
        }
    }

    /// What the sender A learned about the receiver's `Y`.
    pub fn sender_learned(&self) -> &ConstraintCount {
        &self.sender_learned
    }

    /// What the receiver B learned about the sender's `X`.
    pub fn receiver_learned(&self) -> &ConstraintCount {
        &self.receiver_learned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// n = 100, p = 2, q = 3: g = 49.
    /// Paper: A 49 + 6 = 55, B 100 − 49 + 6 = 57.
    /// Exact: A (100 − 49)·3 = 153 of 300, 49 free per column; B (49 + 3)·2 = 104 of 200,
    /// 48 free per column.
    #[test]
    fn counts_by_hand() {
        let d = Disclosure::generic(&Dimensions::new(100, 2, 3).unwrap());
        let a = d.sender_learned();
        assert_eq!(
            (
                a.paper(),
                a.independent(),
                a.unknowns(),
                a.free_per_column()
            ),
            (55, 153, 300, 49)
        );
        let b = d.receiver_learned();
        assert_eq!(
            (
                b.paper(),
                b.independent(),
                b.unknowns(),
                b.free_per_column()
            ),
            (57, 104, 200, 48)
        );
    }

    #[test]
    fn lower_reply_rank_gives_fewer_constraints_to_b() {
        let dims = Dimensions::new(100, 2, 3).unwrap();
        let d = Disclosure::with_reply_rank(&dims, 1);
        assert_eq!(d.receiver_learned().independent(), 100);
        assert_eq!(d.receiver_learned().free_per_column(), 50);
        // A's knowledge of Y does not depend on the rank of W.
        assert_eq!(
            d.sender_learned(),
            Disclosure::generic(&dims).sender_learned()
        );
    }
}
