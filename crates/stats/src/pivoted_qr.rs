//! Least squares by a column-equilibrated, column-pivoted Householder QR, with a numerical rank
//! and the columns it drops.
//!
//! # Algorithm
//! 1. **Equilibrate**: scale every column of `Z` to unit length, `Z̃ = Z·D`,
//!    `D = diag(1/‖z_j‖)`. Householder QR is backward stable column by column, so its accuracy
//!    depends on `κ(Z̃)`, not on how the columns are scaled; equilibrating also makes every
//!    remaining norm below relative to the column's own length, and lets pivoting compare
//!    columns fairly. An all-zero column cannot be scaled and is dropped at once.
//! 2. **Pivot** (Businger & Golub 1965): at step `k` bring forward the column with the largest
//!    norm outside the span of the columns already chosen — except that the intercept, when
//!    pinned, is always the first pivot (as in R's `lm`, whose first column is never aliased), so
//!    that its Householder "effect" can be left out of the regression sum of squares.
//! 3. **Rank**: stop when the largest remaining norm is at most [`PIVOTED_RANK_RELATIVE`] (of the
//!    unit length each column started with). The columns left over are dropped: each lies within
//!    that distance of the span of the chosen ones. Since `σ_min(Z̃) ≤ |R_rr|` and
//!    `σ_max(Z̃) ≥ |R₁₁| = 1`, keeping a column with remaining norm `t` means `κ(Z̃) ≥ 1/t`.
//! 4. The response is carried along (`Qᵀy`), so `β̃ = R⁻¹(Qᵀy)₁…r`, `RSS = ‖(Qᵀy)_{r+1…n}‖²`
//!    and, unscaled, `β = D·β̃` on the chosen columns.
//!
//! A dropped column `z̃_j` is `Z̃_chosen·c + (remainder of norm ≤ tolerance)` with
//! `c = R₁₁⁻¹R₁ⱼ`; the chosen terms whose `|c_k|` is at least [`ALIAS_NAMING_SHARE`] of the
//! largest are the ones it is "collinear with".

use nalgebra::{DMatrix, DVector};

use crate::tolerance::{ALIAS_NAMING_SHARE, PIVOTED_RANK_RELATIVE};

/// A column the factorisation dropped, with what it depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedColumn {
    /// Index of the column in `Z`.
    pub column: usize,
    /// Indices (in `Z`) of the chosen columns it is collinear with, in column order.
    pub collinear_with: Vec<usize>,
    /// Its norm outside the span of the chosen columns, relative to its own norm (0 for an
    /// all-zero column).
    pub remaining_share: f64,
}

/// `[Z y]` factorised as described in the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotedQr {
    /// Column order chosen by the pivoting: `order[k]` is the column of `Z` in position `k`.
    order: Vec<usize>,
    rank: usize,
    /// `‖z_j‖` for every column of `Z`.
    norms: Vec<f64>,
    /// The factorised `Z̃` in pivoted order: `R` on and above the diagonal of its first `rank`
    /// rows.
    factor: DMatrix<f64>,
    /// `Qᵀy`.
    rotated_response: DVector<f64>,
    dropped: Vec<DroppedColumn>,
}

impl PivotedQr {
    /// Factorise `Z` (`n × p`, `n > p`) together with `y`; with `pin_first`, column 0 is the
    /// first pivot whatever its norm.
    pub fn new(z: &DMatrix<f64>, y: &DVector<f64>, pin_first: bool) -> Self {
        let (n, p) = z.shape();
        let norms: Vec<f64> = z.column_iter().map(|c| c.norm()).collect();
        let mut factor = z.clone();
        for (j, &norm) in norms.iter().enumerate() {
            if norm > 0.0 {
                factor.column_mut(j).scale_mut(1.0 / norm);
            }
        }
        let mut response = y.clone();
        let mut order: Vec<usize> = (0..p).collect();
        let mut rank = 0;
        for k in 0..p.min(n) {
            // Remaining norms are recomputed, not downdated: p is small, and recomputing avoids
            // the cancellation that downdating suffers once most of a column is gone.
            let remaining = |j: usize| factor.view((k, j), (n - k, 1)).norm();
            let (pivot, length) = if k == 0 && pin_first {
                (0, remaining(0))
            } else {
                // The first of equally long columns wins, so ties keep the user's order.
                (k..p).fold((k, remaining(k)), |best, j| {
                    let length = remaining(j);
                    if length > best.1 { (j, length) } else { best }
                })
            };
            if length.is_nan() || length <= PIVOTED_RANK_RELATIVE {
                break;
            }
            factor.swap_columns(k, pivot);
            order.swap(k, pivot);
            reflect(&mut factor, &mut response, k, length);
            rank = k + 1;
        }
        let mut qr = Self {
            order,
            rank,
            norms,
            factor,
            rotated_response: response,
            dropped: Vec::new(),
        };
        qr.dropped = qr.describe_dropped();
        qr
    }

    /// Numerical rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Columns of `Z` kept, in pivot order.
    pub fn kept(&self) -> &[usize] {
        &self.order[..self.rank]
    }

    /// Columns dropped, in column order.
    pub fn dropped(&self) -> &[DroppedColumn] {
        &self.dropped
    }

    /// `‖z_j‖` of column `j` of `Z`.
    pub fn column_norm(&self, j: usize) -> f64 {
        self.norms[j]
    }

    /// The `r × r` upper-triangular factor of the kept, equilibrated columns, in pivot order.
    pub fn r(&self) -> DMatrix<f64> {
        self.factor
            .view((0, 0), (self.rank, self.rank))
            .upper_triangle()
    }

    /// The first `r` entries of `Qᵀy` (the "effects", in pivot order).
    pub fn effects(&self) -> DVector<f64> {
        self.rotated_response.rows(0, self.rank).into_owned()
    }

    /// Residual sum of squares `‖(Qᵀy)_{r+1…n}‖²`.
    pub fn residual_sum_of_squares(&self) -> f64 {
        let n = self.rotated_response.len();
        self.rotated_response
            .rows(self.rank, n - self.rank)
            .norm_squared()
    }

    /// Name the dependencies of every dropped column (module documentation).
    fn describe_dropped(&self) -> Vec<DroppedColumn> {
        let r = self.r();
        let n = self.factor.nrows();
        let mut dropped: Vec<DroppedColumn> = self.order[self.rank..]
            .iter()
            .enumerate()
            .map(|(offset, &column)| {
                let position = self.rank + offset;
                if self.norms[column] == 0.0 {
                    return DroppedColumn {
                        column,
                        collinear_with: Vec::new(),
                        remaining_share: 0.0,
                    };
                }
                let top = self.factor.view((0, position), (self.rank, 1)).into_owned();
                let remaining_share = self
                    .factor
                    .view((self.rank, position), (n - self.rank, 1))
                    .norm();
                let coefficients = r.solve_upper_triangular(&top).unwrap_or(top);
                let largest = coefficients.amax();
                let mut collinear_with: Vec<usize> = coefficients
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| largest > 0.0 && c.abs() >= ALIAS_NAMING_SHARE * largest)
                    .map(|(k, _)| self.order[k])
                    .collect();
                collinear_with.sort_unstable();
                DroppedColumn {
                    column,
                    collinear_with,
                    remaining_share,
                }
            })
            .collect();
        dropped.sort_by_key(|d| d.column);
        dropped
    }
}

/// Apply the Householder reflection that maps `factor[k.., k]` (of length `length > 0`) onto
/// `∓length·e₁` to the columns `k..` of `factor` and to `response`.
fn reflect(factor: &mut DMatrix<f64>, response: &mut DVector<f64>, k: usize, length: f64) {
    let n = factor.nrows();
    let head = factor[(k, k)];
    // α has the sign opposite to the head, so that v = x − α e₁ suffers no cancellation.
    let alpha = if head >= 0.0 { -length } else { length };
    let mut v: DVector<f64> = factor.column(k).rows(k, n - k).into_owned();
    v[0] -= alpha;
    let v_norm2 = v.norm_squared();
    let beta = 2.0 / v_norm2;
    for j in k..factor.ncols() {
        let mut column = factor.column_mut(j);
        let mut column = column.rows_mut(k, n - k);
        let dot = v.dot(&column);
        column.axpy(-beta * dot, &v, 1.0);
    }
    let mut tail = response.rows_mut(k, n - k);
    let dot = v.dot(&tail);
    tail.axpy(-beta * dot, &v, 1.0);
    // Exact zeros below the diagonal (the reflection makes them zero up to rounding).
    factor[(k, k)] = alpha;
    for i in (k + 1)..n {
        factor[(i, k)] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{EXACT_DEPENDENCY_SHARE, HAND_SOLVED_RELATIVE};

    /// By hand: `z₀ = (1, 1, 1, 1)`, `z₁ = (0, 1, 2, 3)`, `z₂ = 2·z₁ + z₀ = (1, 3, 5, 7)`:
    /// rank 2. With `z₀` pinned, the unit-scaled columns have parts outside `span(z₀)`
    /// `(−1.5, −0.5, 0.5, 1.5)/√14` (norm `√(5/14) = 0.598`) and `(−3, −1, 1, 3)/√84`
    /// (norm `√(20/84) = 0.488`), so `z₁` is chosen next and `z₂` is dropped, collinear with
    /// `z₀` and `z₁` (its remainder is then exactly 0, up to rounding).
    #[test]
    fn exact_dependency_is_dropped_and_named() {
        let z = DMatrix::from_row_slice(
            4,
            3,
            &[1.0, 0.0, 1.0, 1.0, 1.0, 3.0, 1.0, 2.0, 5.0, 1.0, 3.0, 7.0],
        );
        let y = DVector::from_row_slice(&[1.0, 3.0, 2.0, 4.0]);
        let qr = PivotedQr::new(&z, &y, true);
        assert_eq!(qr.rank(), 2);
        assert_eq!(qr.kept(), [0, 1]);
        let [d] = qr.dropped() else {
            panic!("one dropped column expected: {:?}", qr.dropped())
        };
        assert_eq!((d.column, d.collinear_with.as_slice()), (2, &[0, 1][..]));
        assert!(d.remaining_share < EXACT_DEPENDENCY_SHARE);
        // y = 1.3 + 0.8 x, RSS 1.8 (the hand-solved simple regression of `linear`).
        assert!((qr.residual_sum_of_squares() - 1.8).abs() < HAND_SOLVED_RELATIVE);
    }

    /// A zero column is dropped with share 0 and no dependencies; pinning keeps column 0 first
    /// even when another column is longer.
    #[test]
    fn zero_column_and_pinning() {
        let z = DMatrix::from_row_slice(3, 3, &[1.0, 0.0, 10.0, 1.0, 0.0, -3.0, 1.0, 0.0, 2.0]);
        let y = DVector::from_row_slice(&[1.0, 2.0, 4.0]);
        let qr = PivotedQr::new(&z, &y, true);
        assert_eq!(qr.kept(), [0, 2]);
        assert_eq!(
            qr.dropped(),
            [DroppedColumn {
                column: 1,
                collinear_with: vec![],
                remaining_share: 0.0
            }]
        );
        assert!((qr.column_norm(2) - 113f64.sqrt()).abs() < HAND_SOLVED_RELATIVE);
    }
}
