//! The DP panel: σ needed under settings A (noise only) and B (noise then orthogonal masking)
//! against ε — seed 004 Table 1 as a chart. Every number is `orthomask_dp::Calibration`.

use orthomask_dp::{Calibration, CalibrationError, CalibrationInput};
use serde::{Deserialize, Serialize};

/// The panel's controls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpParams {
    /// δ.
    pub delta: f64,
    /// Variables `p`.
    pub p: u64,
    /// Records masked together `n`.
    pub n: u64,
}

impl Default for DpParams {
    fn default() -> Self {
        Self {
            delta: 0.01,
            p: 5,
            n: 100,
        }
    }
}

/// One ε of the chart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpPoint {
    /// ε.
    pub epsilon: f64,
    /// Setting A, necessary, eq. (11).
    pub a_necessary: f64,
    /// Setting A, sufficient, eq. (12).
    pub a_sufficient: f64,
    /// Setting B, sufficient, eq. (13).
    pub b_sufficient: f64,
    /// Setting B, explicit, eq. (14).
    pub b_explicit: f64,
}

/// The ε of Table 1 (printed as table rows under the chart).
pub const TABLE_1_EPSILONS: [f64; 3] = [0.1, 0.01, 0.001];

/// `count` values of ε evenly spaced on a log scale from 0.001 to 0.9.
pub fn epsilon_grid(count: usize) -> Vec<f64> {
    let (lo, hi) = (0.001f64.ln(), 0.9f64.ln());
    (0..count)
        .map(|k| (lo + (hi - lo) * k as f64 / (count.max(2) - 1) as f64).exp())
        .collect()
}

/// Calibrate every ε.
///
/// # Errors
/// [`CalibrationError`] with the calibration's one-line reason (e.g. `n ≤ p`, δ ≥ 1/2).
pub fn curve(params: &DpParams, epsilons: &[f64]) -> Result<Vec<DpPoint>, CalibrationError> {
    epsilons
        .iter()
        .map(|&epsilon| {
            Calibration::new(CalibrationInput {
                epsilon,
                delta: params.delta,
                n: params.n,
                p: params.p,
                smallest_block: None,
            })
            .map(|c| DpPoint {
                epsilon,
                a_necessary: c.setting_a_necessary(),
                a_sufficient: c.setting_a_sufficient(),
                b_sufficient: c.setting_b_sufficient(),
                b_explicit: c.setting_b_explicit(),
            })
        })
        .collect()
}

/// The chart's points and Table 1's rows for these parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpResult {
    /// The parameters.
    pub params: DpParams,
    /// The chart.
    pub curve: Vec<DpPoint>,
    /// Table 1's ε rows.
    pub table: Vec<DpPoint>,
}

/// Compute the panel.
///
/// # Errors
/// As [`curve`].
pub fn dp_panel(params: &DpParams) -> Result<DpResult, CalibrationError> {
    Ok(DpResult {
        params: params.clone(),
        curve: curve(params, &epsilon_grid(24))?,
        table: curve(params, &TABLE_1_EPSILONS)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 004 Table 1, row ε = 0.1, δ = 0.01, p = 5, n = 100: 23.3, 25.4, 9.5.
    #[test]
    fn table_1_row_by_hand() {
        let r = dp_panel(&DpParams::default()).unwrap();
        let row = &r.table[0];
        assert_eq!((row.a_necessary * 10.0).round(), 233.0);
        assert_eq!((row.a_sufficient * 10.0).round(), 254.0);
        assert_eq!((row.b_sufficient * 10.0).round(), 95.0);
        assert_eq!(r.curve.len(), 24);
        assert!(r.table.iter().all(|p| p.b_sufficient < p.a_sufficient));
        assert!(
            dp_panel(&DpParams {
                n: 3,
                p: 5,
                delta: 0.01
            })
            .is_err()
        );
    }
}
