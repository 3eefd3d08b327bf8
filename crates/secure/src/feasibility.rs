//! When the secure matrix product may run at all: the shapes, the number `g` of columns of `Z`,
//! and which of two agencies should generate `Z`.
//!
//! Notation of seed 001 (Karr, Lin, Reiter & Sanil 2004, §2.1): `n` subjects, Agency A (the
//! *sender* of `Z`) holds `X` (n × p), Agency B (the *receiver* of `Z`) holds `Y` (n × q).
//!
//! # Conditions
//! 1. `p ≥ 1`, `q ≥ 1`: each agency contributes at least one column.
//! 2. `n ≥ p + q`: §2.1 assumes the matrices have full column rank and the agencies go on to use
//!    the integrated covariance matrix (§3.1), which is singular unless the combined `[X Y]` can
//!    have full column rank `p + q`.
//! 3. `g = ⌊(n − p)/2⌋ ≥ 1`, i.e. `n ≥ p + 2`: with `g = 0` there is no `Z`, `W = Y`, and A
//!    receives B's data in the clear.
//! 4. `g + q < n`: B learns `g` linear constraints on each column of `X` from `ZᵀX = 0` and `q`
//!    more from `XᵀY = WᵀX` (see [`disclosure`](crate::disclosure)); when `g + q ≥ n` these pin
//!    every column of `X` down exactly. The paper only asks for `n ≫ pq` (§2.2) and does not state
//!    this bound; a careful implementation must, because its accounting counts subspace
//!    dimensions where it means constraints.

/// Errors: the dimensions do not allow a safe secure product.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FeasibilityError {
    /// One agency holds no columns.
    #[error("agency {agency} has no columns; each agency must contribute at least one attribute")]
    NoColumns {
        /// "A" (sender of `Z`) or "B" (receiver).
        agency: &'static str,
    },
    /// The two data matrices do not have the same subjects.
    #[error(
        "agency A has {sender_rows} subjects but agency B has {receiver_rows}; align both on the \
         common subjects (same order) before running the protocol"
    )]
    RowMismatch {
        /// Rows of `X`.
        sender_rows: usize,
        /// Rows of `Y`.
        receiver_rows: usize,
    },
    /// `n < p + q`: the combined data cannot have full column rank.
    #[error(
        "{subjects} subjects are too few for {sender_columns} + {receiver_columns} attributes: the \
         combined data need n ≥ p + q = {needed} to have full column rank (seed 001 §2.1); use \
         fewer attributes"
    )]
    TooFewSubjects {
        /// `n`.
        subjects: usize,
        /// `p`.
        sender_columns: usize,
        /// `q`.
        receiver_columns: usize,
        /// `p + q`.
        needed: usize,
    },
    /// `g = ⌊(n − p)/2⌋ = 0`: no masking subspace.
    #[error(
        "with {subjects} subjects and {sender_columns} sender attributes, g = ⌊(n − p)/2⌋ = 0: \
         there is no Z and agency B would send its data in the clear; need n ≥ p + 2"
    )]
    NoComplement {
        /// `n`.
        subjects: usize,
        /// `p`.
        sender_columns: usize,
    },
    /// `g + q ≥ n`: agency B could solve for `X`.
    #[error(
        "agency B would learn g + q = {complement_columns} + {receiver_columns} ≥ n = {subjects} \
         independent linear constraints on every column of agency A's data and could solve for it; \
         swap the roles, use fewer attributes of B, or more subjects"
    )]
    ReceiverWouldRecoverSender {
        /// `n`.
        subjects: usize,
        /// `g`.
        complement_columns: usize,
        /// `q`.
        receiver_columns: usize,
    },
}

/// `g = ⌊(n − p)/2⌋`, the number of columns of `Z` prescribed by seed 001 §2.1 step 1 (0 when
/// `n ≤ p`).
pub fn complement_columns(subjects: usize, sender_columns: usize) -> usize {
    subjects.saturating_sub(sender_columns) / 2
}

/// Checked dimensions of one two-agency secure product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dimensions {
    subjects: usize,
    sender_columns: usize,
    receiver_columns: usize,
}

impl Dimensions {
    /// Check conditions 1–4 of the [module documentation](self) for `n` subjects, `p` columns at
    /// the sender A and `q` at the receiver B.
    ///
    /// # Errors
    /// [`FeasibilityError::NoColumns`], [`FeasibilityError::TooFewSubjects`],
    /// [`FeasibilityError::NoComplement`] or [`FeasibilityError::ReceiverWouldRecoverSender`], in
    /// that order of checking.
    pub fn new(
        subjects: usize,
        sender_columns: usize,
        receiver_columns: usize,
    ) -> Result<Self, FeasibilityError> {
        if sender_columns == 0 {
            return Err(FeasibilityError::NoColumns { agency: "A" });
        }
        if receiver_columns == 0 {
            return Err(FeasibilityError::NoColumns { agency: "B" });
        }
        let needed = sender_columns + receiver_columns;
        if subjects < needed {
            return Err(FeasibilityError::TooFewSubjects {
                subjects,
                sender_columns,
                receiver_columns,
                needed,
            });
        }
        let g = complement_columns(subjects, sender_columns);
        if g == 0 {
            return Err(FeasibilityError::NoComplement {
                subjects,
                sender_columns,
            });
        }
        if g + receiver_columns >= subjects {
            return Err(FeasibilityError::ReceiverWouldRecoverSender {
                subjects,
                complement_columns: g,
                receiver_columns,
            });
        }
        Ok(Self {
            subjects,
            sender_columns,
            receiver_columns,
        })
    }

    /// Like [`Dimensions::new`], first checking that both matrices have the same rows.
    ///
    /// # Errors
    /// [`FeasibilityError::RowMismatch`] or any error of [`Dimensions::new`].
    pub fn of_shapes(
        sender: (usize, usize),
        receiver: (usize, usize),
    ) -> Result<Self, FeasibilityError> {
        if sender.0 != receiver.0 {
            return Err(FeasibilityError::RowMismatch {
                sender_rows: sender.0,
                receiver_rows: receiver.0,
            });
        }
        Self::new(sender.0, sender.1, receiver.1)
    }

    /// `n`, the number of common subjects.
    pub fn subjects(&self) -> usize {
        self.subjects
    }

    /// `p`, the columns of the sender A (who generates `Z`).
    pub fn sender_columns(&self) -> usize {
        self.sender_columns
    }

    /// `q`, the columns of the receiver B (who returns `W`).
    pub fn receiver_columns(&self) -> usize {
        self.receiver_columns
    }

    /// `g = ⌊(n − p)/2⌋`, the columns of `Z`.
    pub fn complement_columns(&self) -> usize {
        complement_columns(self.subjects, self.sender_columns)
    }

    /// Directions left free in each column of `X` after B's `g + q` generic constraints:
    /// `n − g − q ≥ 1`.
    pub fn sender_freedom(&self) -> usize {
        self.subjects - self.complement_columns() - self.receiver_columns
    }

    /// Directions left free in each column of `Y` after A learns `W = (I − ZZᵀ)Y`: `g ≥ 1`.
    pub fn receiver_freedom(&self) -> usize {
        self.complement_columns()
    }

    /// The smaller of the two freedoms: how well the worse-protected agency is protected.
    pub fn weakest_freedom(&self) -> usize {
        self.sender_freedom().min(self.receiver_freedom())
    }
}

/// Which of two agencies generates `Z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generator {
    /// The first agency is the sender A.
    First,
    /// The second agency is the sender A.
    Second,
}

/// Choose which of two agencies (with `first_columns` and `second_columns` attributes) should
/// generate `Z`, and return the checked dimensions for that choice.
///
/// # Interpretation
/// The paper labels the agencies so that the sender has fewer columns (`p < q`, §2.1) without
/// saying why. Counting constraints exactly (see [`disclosure`](crate::disclosure)), the sender's
/// columns keep `n − g − q` free directions and the receiver's keep `g`; with `g ≈ (n − p)/2`
/// the minimum of the two is larger when the agency with *more* columns sends `Z`. We pick the
/// feasible role that maximises [`Dimensions::weakest_freedom`] (ties: the first agency sends),
/// which is the paper's own minimax argument (§2.2) applied to the exact counts.
///
/// # Errors
/// The error of the first agency's role when neither role is feasible.
pub fn choose_generator(
    subjects: usize,
    first_columns: usize,
    second_columns: usize,
) -> Result<(Generator, Dimensions), FeasibilityError> {
    let first = Dimensions::new(subjects, first_columns, second_columns);
    let second = Dimensions::new(subjects, second_columns, first_columns);
    match (first, second) {
        (Ok(a), Ok(b)) if b.weakest_freedom() > a.weakest_freedom() => Ok((Generator::Second, b)),
        (Ok(a), _) => Ok((Generator::First, a)),
        (Err(_), Ok(b)) => Ok((Generator::Second, b)),
        (Err(e), Err(_)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_follows_the_paper() {
        // n = 100, p = 3: g = ⌊97/2⌋ = 48; B keeps 100 − 48 − 5 = 47 free directions per column.
        let d = Dimensions::new(100, 3, 5).unwrap();
        assert_eq!(d.complement_columns(), 48);
        assert_eq!(d.sender_freedom(), 47);
        assert_eq!(d.receiver_freedom(), 48);
        assert_eq!(complement_columns(2, 5), 0);
    }

    #[test]
    fn each_condition_has_its_error() {
        assert_eq!(
            Dimensions::new(10, 0, 2),
            Err(FeasibilityError::NoColumns { agency: "A" })
        );
        assert_eq!(
            Dimensions::new(10, 2, 0),
            Err(FeasibilityError::NoColumns { agency: "B" })
        );
        assert_eq!(
            Dimensions::new(4, 3, 2),
            Err(FeasibilityError::TooFewSubjects {
                subjects: 4,
                sender_columns: 3,
                receiver_columns: 2,
                needed: 5
            })
        );
        // n = p + 1 = p + q: full rank possible, but g = 0.
        assert_eq!(
            Dimensions::new(4, 3, 1),
            Err(FeasibilityError::NoComplement {
                subjects: 4,
                sender_columns: 3
            })
        );
        // n = 10, p = 1, q = 6: g = 4 and 4 + 6 ≥ 10.
        assert_eq!(
            Dimensions::new(10, 1, 6),
            Err(FeasibilityError::ReceiverWouldRecoverSender {
                subjects: 10,
                complement_columns: 4,
                receiver_columns: 6
            })
        );
        assert!(Dimensions::new(10, 1, 5).is_ok());
        assert_eq!(
            Dimensions::of_shapes((10, 1), (11, 2)),
            Err(FeasibilityError::RowMismatch {
                sender_rows: 10,
                receiver_rows: 11
            })
        );
    }

    #[test]
    fn generator_choice_maximises_the_weakest_freedom() {
        // n = 20, 2 and 12 columns. First sends: g = 9, 9 + 12 ≥ 20, infeasible.
        // Second sends: g = 4, sender freedom 20 − 4 − 2 = 14, receiver freedom 4.
        let (who, d) = choose_generator(20, 2, 12).unwrap();
        assert_eq!(who, Generator::Second);
        assert_eq!(d.weakest_freedom(), 4);
        // n = 100, 2 and 10: first sends → g = 49, min(49, 41) = 41; second → g = 45,
        // min(45, 53) = 45. The agency with more columns sends.
        assert_eq!(choose_generator(100, 2, 10).unwrap().0, Generator::Second);
        // Equal columns: tie, the first sends.
        assert_eq!(choose_generator(50, 3, 3).unwrap().0, Generator::First);
        assert!(matches!(
            choose_generator(3, 2, 2),
            Err(FeasibilityError::TooFewSubjects { .. })
        ));
    }
}
