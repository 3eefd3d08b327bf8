//! Shared fixtures of the integration tests: the paper's tables and the masks applied to them.
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

pub mod least_squares;

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_stats::dataset::Dataset;

/// Seed 003 Table 2: 20 raw LEAPS records.
pub const TABLE2: &str = include_str!("../../../../data/paper/leaps_table2.csv");
/// Seed 003 Table 5: the published release `A₁A₂X`, printed to two decimals.
pub const TABLE5: &str = include_str!("../../../../data/paper/leaps_table5_released.csv");

/// Parse a paper table (`data/paper/*.csv`: one header line, comma-separated numbers).
pub fn paper_table(text: &str) -> Dataset {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let names: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|s| s.trim().to_owned())
        .collect();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|c| c.trim().parse().unwrap()).collect())
        .collect();
    let values = DMatrix::from_fn(rows.len(), names.len(), |i, j| rows[i][j]);
    Dataset::new(names, values).unwrap()
}

/// `A·X` for `A` Haar among orthogonal matrices with `A·1ₙ = 1ₙ`, from teaching key `key`.
pub fn mask_rows(data: &Dataset, key: u64, stream: u64) -> Dataset {
    let a = FixedSubspaceHaar::ones_fixed(
        data.nrows(),
        Key::teaching(key).stream(StreamId::Scratch(stream)),
    )
    .unwrap();
    let mut values = data.values().clone();
    a.left_apply(&mut values).unwrap();
    Dataset::new(data.names().to_vec(), values).unwrap()
}

/// `‖a − b‖_max / ‖b‖_max`: matrix-relative difference (entries near 0 are judged on the
/// scale of the whole matrix, as the masking core's `PRESERVED_STATISTICS` promise is).
pub fn matrix_relative(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).amax() / b.amax()
}
