//! Validation of the privacy and design parameters shared by every calibration.
//!
//! Seed 004 states each result under conditions: Definition 2.2 needs `ε > 0` and `0 < δ < 1`;
//! Theorem 3.2 (setting (A)) adds `ε < 1` and `δ < 1/2`; Corollary 3.3 adds `δ < 0.05`;
//! Corollary 3.5 adds `ε < 1`; Theorem 3.4 (setting (B)) needs `n > p ≥ 1`; the block-diagonal
//! remark of §4 needs the smallest block `n_s > p`. The checks live here so every result
//! reports a violated condition with the same words.

/// A privacy or design parameter outside the region where the cited result holds.
///
/// Every message says which value is wrong, which condition of seed 004 it violates, and what
/// to do instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParameterError {
    /// ε is zero, negative, infinite or NaN.
    #[error(
        "ε = {epsilon} is not a valid privacy budget: (ε, δ)-DP (seed 004, Definition 2.2) needs \
         a finite ε > 0; pass e.g. --epsilon 0.1"
    )]
    EpsilonNotPositive {
        /// The rejected value.
        epsilon: f64,
    },
    /// ε is at least 1 where the cited result assumes ε < 1.
    #[error(
        "ε = {epsilon} is too large for {result} of seed 004, which holds only for ε < 1; \
         choose ε < 1 (smaller ε means stronger privacy and more noise)"
    )]
    EpsilonNotBelowOne {
        /// The rejected value.
        epsilon: f64,
        /// The result whose condition is violated, e.g. "Theorem 3.2".
        result: &'static str,
    },
    /// δ is not strictly between 0 and 1 (or is NaN).
    #[error(
        "δ = {delta} is not a valid failure probability: (ε, δ)-DP needs 0 < δ < 1; pass e.g. \
         --delta 0.001 (typically much smaller than 1/n)"
    )]
    DeltaOutOfRange {
        /// The rejected value.
        delta: f64,
    },
    /// δ is at least the limit a cited result assumes.
    #[error(
        "δ = {delta} is too large for {result} of seed 004, which holds only for δ < {limit}; \
         choose a smaller δ"
    )]
    DeltaTooLarge {
        /// The rejected value.
        delta: f64,
        /// The strict upper limit of the result.
        limit: f64,
        /// The result whose condition is violated, e.g. "Corollary 3.3".
        result: &'static str,
    },
    /// `p = 0`: a record must have at least one variable.
    #[error("p = 0 variables: a record must have at least one variable (p ≥ 1)")]
    NoVariables,
    /// The mask has no more rows than there are variables.
    #[error(
        "n = {n} rows but p = {p} variables: Theorem 3.4 of seed 004 needs n > p (the noise \
         is hidden in the n − p directions the data do not span); collect more records or \
         release fewer variables"
    )]
    TooFewRows {
        /// Number of rows (records) masked together.
        n: u64,
        /// Number of variables per record.
        p: u64,
    },
    /// A block-diagonal mask whose smallest block is not larger than `p`.
    #[error(
        "smallest orthogonal block has n_s = {smallest} rows but p = {p} variables: the \
         block-diagonal mask of seed 004 §4 needs n_s > p; use fewer, larger blocks"
    )]
    BlockTooSmall {
        /// Size of the smallest block.
        smallest: u64,
        /// Number of variables per record.
        p: u64,
    },
    /// The smallest block is declared larger than the whole data set.
    #[error(
        "smallest block n_s = {smallest} exceeds the number of rows n = {n}: blocks partition \
         the n rows, so n_s ≤ n; check --block-min"
    )]
    BlockLargerThanData {
        /// Size of the smallest block.
        smallest: u64,
        /// Number of rows of the whole data set.
        n: u64,
    },
    /// No block sizes were given for a block-diagonal mask.
    #[error("a block-diagonal mask needs at least one block size")]
    NoBlocks,
    /// The sum of the block sizes does not fit in 64 bits.
    #[error("the block sizes add up to more than 2⁶⁴ − 1 rows")]
    BlockSizesOverflow,
    /// A cohort too small for the device-side mechanism: the masked complement of `1ₙ` has
    /// `n_s − 1` rows and needs `n_s − 1 > p`.
    #[error(
        "the smallest cohort has n_s = {cohort} records but p = {p} answer columns: device-side \
         DP under masks keeping 1ₙ fixed needs n_s ≥ p + 2 (the n_s − 1 directions orthogonal to \
         1ₙ must outnumber the columns); use larger cohorts or fewer columns"
    )]
    CohortTooSmall {
        /// Records in the smallest cohort.
        cohort: u64,
        /// Answer columns per record.
        p: u64,
    },
    /// Bounds on a changed row that cannot describe two records.
    #[error(
        "changed-row bounds a = {norm}, d = {change} are invalid: both must be finite and > 0, \
         and d ≤ 2a (two rows of norm at most a differ by at most 2a)"
    )]
    InvalidRowBound {
        /// Bound `a` on the norm of the changed row.
        norm: f64,
        /// Bound `d` on the change.
        change: f64,
    },
    /// ‖Δ‖ is negative, infinite or NaN.
    #[error(
        "‖Δ‖ = {norm} is not a valid distance between neighbouring records: it must be finite \
         and ≥ 0 (seed 004, Definition 2.1 bounds it by 1)"
    )]
    InvalidDeltaNorm {
        /// The rejected value.
        norm: f64,
    },
}

/// `ε` must be finite and positive (Definition 2.2).
pub(crate) fn check_epsilon(epsilon: f64) -> Result<(), ParameterError> {
    if epsilon.is_finite() && epsilon > 0.0 {
        Ok(())
    } else {
        Err(ParameterError::EpsilonNotPositive { epsilon })
    }
}

/// `ε` must be positive and below one for `result`.
pub(crate) fn check_epsilon_below_one(
    epsilon: f64,
    result: &'static str,
) -> Result<(), ParameterError> {
    check_epsilon(epsilon)?;
    if epsilon < 1.0 {
        Ok(())
    } else {
        Err(ParameterError::EpsilonNotBelowOne { epsilon, result })
    }
}

/// `δ` must lie strictly between 0 and 1 (Definition 2.2).
pub(crate) fn check_delta(delta: f64) -> Result<(), ParameterError> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(ParameterError::DeltaOutOfRange { delta })
    }
}

/// `δ` must lie in `(0, limit)` for `result`.
pub(crate) fn check_delta_below(
    delta: f64,
    limit: f64,
    result: &'static str,
) -> Result<(), ParameterError> {
    check_delta(delta)?;
    if delta < limit {
        Ok(())
    } else {
        Err(ParameterError::DeltaTooLarge {
            delta,
            limit,
            result,
        })
    }
}

/// `n > p ≥ 1` (Theorem 3.4).
pub(crate) fn check_rows(n: u64, p: u64) -> Result<(), ParameterError> {
    if p == 0 {
        Err(ParameterError::NoVariables)
    } else if n <= p {
        Err(ParameterError::TooFewRows { n, p })
    } else {
        Ok(())
    }
}

/// `p < n_s ≤ n` for a block-diagonal mask (seed 004 §4).
pub(crate) fn check_smallest_block(n: u64, smallest: u64, p: u64) -> Result<(), ParameterError> {
    check_rows(n, p)?;
    if smallest <= p {
        Err(ParameterError::BlockTooSmall { smallest, p })
    } else if smallest > n {
        Err(ParameterError::BlockLargerThanData { smallest, n })
    } else {
        Ok(())
    }
}

/// Total rows `n = n₁ + … + n_k` and smallest block `n_s` of a block-diagonal mask.
///
/// # Errors
/// [`ParameterError::NoBlocks`] for an empty list, [`ParameterError::BlockSizesOverflow`] if the
/// sizes do not add up in a `u64`.
pub fn block_rows(block_sizes: &[u64]) -> Result<(u64, u64), ParameterError> {
    let smallest = block_sizes
        .iter()
        .copied()
        .min()
        .ok_or(ParameterError::NoBlocks)?;
    let n = block_sizes
        .iter()
        .try_fold(0u64, |acc, &b| acc.checked_add(b))
        .ok_or(ParameterError::BlockSizesOverflow)?;
    Ok((n, smallest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks 30 + 25 + 40: `n = 95`, `n_s = 25`.
    #[test]
    fn block_rows_adds_sizes_and_finds_smallest() {
        assert_eq!(block_rows(&[30, 25, 40]), Ok((95, 25)));
        assert_eq!(block_rows(&[]), Err(ParameterError::NoBlocks));
        assert_eq!(
            block_rows(&[u64::MAX, 1]),
            Err(ParameterError::BlockSizesOverflow)
        );
    }

    #[test]
    fn boundaries_are_excluded_as_the_paper_states() {
        assert!(check_epsilon(0.0).is_err());
        assert!(check_epsilon(f64::NAN).is_err());
        assert!(check_epsilon(f64::INFINITY).is_err());
        assert!(check_epsilon_below_one(1.0, "Theorem 3.2").is_err());
        assert!(check_epsilon_below_one(0.999, "Theorem 3.2").is_ok());
        assert!(check_delta(0.0).is_err());
        assert!(check_delta(1.0).is_err());
        assert!(check_delta(f64::NAN).is_err());
        assert!(check_delta_below(0.5, 0.5, "Theorem 3.2").is_err());
        assert!(check_delta_below(0.05, 0.05, "Corollary 3.3").is_err());
        assert!(check_rows(5, 5).is_err());
        assert!(check_rows(6, 0).is_err());
        assert!(check_rows(6, 5).is_ok());
        assert!(check_smallest_block(100, 5, 5).is_err());
        assert!(check_smallest_block(100, 101, 5).is_err());
        assert!(check_smallest_block(100, 6, 5).is_ok());
    }

    #[test]
    fn messages_say_what_to_do() {
        let m = ParameterError::TooFewRows { n: 3, p: 5 }.to_string();
        assert!(m.contains("n = 3") && m.contains("p = 5") && m.contains("collect more"));
        let m = ParameterError::EpsilonNotBelowOne {
            epsilon: 2.0,
            result: "Theorem 3.2",
        }
        .to_string();
        assert!(m.contains("Theorem 3.2") && m.contains("choose ε < 1"));
    }
}
