//! General matrix products `C ← α op(A) op(B) + β C` on strided nalgebra views.
//!
//! Transposes cost nothing: `op(A) = Aᵀ` only swaps the strides handed to `matrixmultiply`'s
//! packed, cache-blocked kernels (the same kernels nalgebra uses for large products, chosen at
//! run time: AVX2/FMA natively, portable code on wasm32). Because the kernel is chosen at run time
//! and may fuse multiply-adds, these products are accurate to rounding but **not** bit-identical
//! across machines; the bit-exact paths of the masks never call them.

use nalgebra::{Dim, Matrix, RawStorage, RawStorageMut};

/// Whether an operand enters the product as is or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `A`.
    Plain,
    /// `Aᵀ`.
    Transposed,
}

/// Shape `(rows, cols)` and element strides `(row stride, column stride)` of `op(A)`.
fn operand<R: Dim, C: Dim, S: RawStorage<f64, R, C>>(
    a: &Matrix<f64, R, C, S>,
    op: Op,
) -> ((usize, usize), (isize, isize)) {
    let (rs, cs) = a.strides();
    // Strides of in-memory matrices never exceed isize::MAX elements.
    let (rs, cs) = (rs as isize, cs as isize);
    match op {
        Op::Plain => ((a.nrows(), a.ncols()), (rs, cs)),
        Op::Transposed => ((a.ncols(), a.nrows()), (cs, rs)),
    }
}

/// `C ← α·op(A)·op(B) + β·C`. When `β = 0` the old contents of `C` are ignored (NaN included).
///
/// # Panics
/// When the shapes do not conform (a programming error inside the crate, never user data).
#[allow(clippy::too_many_arguments)]
pub fn gemm<RA, CA, SA, RB, CB, SB, RC, CC, SC>(
    alpha: f64,
    a: &Matrix<f64, RA, CA, SA>,
    op_a: Op,
    b: &Matrix<f64, RB, CB, SB>,
    op_b: Op,
    beta: f64,
    c: &mut Matrix<f64, RC, CC, SC>,
) where
    RA: Dim,
    CA: Dim,
    SA: RawStorage<f64, RA, CA>,
    RB: Dim,
    CB: Dim,
    SB: RawStorage<f64, RB, CB>,
    RC: Dim,
    CC: Dim,
    SC: RawStorageMut<f64, RC, CC>,
{
    let ((m, k), (rsa, csa)) = operand(a, op_a);
    let ((k2, n), (rsb, csb)) = operand(b, op_b);
    assert!(
        k == k2 && c.nrows() == m && c.ncols() == n,
        "gemm: ({m}×{k})·({k2}×{n}) into {}×{}",
        c.nrows(),
        c.ncols()
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if beta == 0.0 {
            c.fill(0.0);
        } else {
            c.scale_mut(beta);
        }
        return;
    }
    let (rsc, csc) = c.strides();
    // SAFETY: the pointers come from live nalgebra matrices whose shapes and strides were checked
    // above to describe an (m×k)·(k×n) → (m×n) product; `c` is borrowed mutably, so it cannot
    // alias `a` or `b`; `matrixmultiply` reads exactly the described elements of `a` and `b` and
    // writes exactly those of `c`.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            alpha,
            a.data.ptr(),
            rsa,
            csa,
            b.data.ptr(),
            rsb,
            csb,
            beta,
            c.data.ptr_mut(),
            rsc as isize,
            csc as isize,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::SAME_OPERATOR;
    use nalgebra::DMatrix;

    fn block(rows: usize, cols: usize, seed: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| {
            ((i * 31 + j * 17 + seed * 7) % 23) as f64 / 23.0 - 0.5
        })
    }

    #[test]
    fn all_transpose_combinations_match_nalgebra() {
        let a = block(7, 5, 1);
        let b = block(5, 6, 2);
        let c0 = block(7, 6, 3);
        let expected = &a * &b * 2.0 + &c0 * 0.5;
        for (ta, tb) in [
            (Op::Plain, Op::Plain),
            (Op::Transposed, Op::Plain),
            (Op::Plain, Op::Transposed),
            (Op::Transposed, Op::Transposed),
        ] {
            let a_in = if ta == Op::Plain {
                a.clone()
            } else {
                a.transpose()
            };
            let b_in = if tb == Op::Plain {
                b.clone()
            } else {
                b.transpose()
            };
            let mut c = c0.clone();
            gemm(2.0, &a_in, ta, &b_in, tb, 0.5, &mut c);
            assert!((c - &expected).amax() < SAME_OPERATOR);
        }
    }

    #[test]
    fn works_on_views_and_ignores_old_contents_when_beta_is_zero() {
        let big = block(10, 10, 4);
        let a = big.view((2, 1), (3, 4));
        let b = big.view((0, 5), (4, 2));
        let mut c = DMatrix::from_element(3, 2, f64::NAN);
        gemm(1.0, &a, Op::Plain, &b, Op::Plain, 0.0, &mut c);
        assert!((c - a * b).amax() < SAME_OPERATOR);
        let mut empty = DMatrix::from_element(3, 2, 5.0);
        gemm(
            1.0,
            &DMatrix::<f64>::zeros(3, 0),
            Op::Plain,
            &DMatrix::<f64>::zeros(0, 2),
            Op::Plain,
            0.0,
            &mut empty,
        );
        assert!(empty.amax() < SAME_OPERATOR);
    }
}
