//! Bracketing root finder (Brent–Dekker) used for quantiles and for σ₀ of eq. (13).
//!
//! Brent's method keeps a bracket `[b, c]` with a sign change at all times and tries inverse
//! quadratic or secant steps, falling back to bisection whenever those do not shrink the
//! bracket fast enough. It therefore converges whenever bisection would (any continuous
//! function with a sign change), usually superlinearly. The function may fail (its evaluation
//! returns `Err`), in which case the error is passed through untouched.
//!
//! Reference: R. P. Brent, *Algorithms for Minimization without Derivatives* (1973), ch. 4,
//! procedure `zero`.
//!
//! Why our own rather than a crate's: the function searched here can fail (a non-central χ²
//! quantile that does not converge) and its error must come back untouched, while the root
//! finders we looked at (`roots`' `find_root_brent`) take functions that cannot fail; and the
//! iteration cap is this crate's named tolerance ([`MAX_ROOT_ITERATIONS`]).

use crate::tolerance::MAX_ROOT_ITERATIONS;

/// Why a root search stopped without a root.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RootFailure<E> {
    /// Evaluating the function failed.
    Function(E),
    /// `f(lo)` and `f(hi)` have the same strict sign: there is no bracket.
    NotBracketed,
    /// [`MAX_ROOT_ITERATIONS`] were used up.
    NoConvergence,
}

/// Find `x ∈ [lo, hi]` with `f(x) = 0`, given `f(lo)·f(hi) ≤ 0`.
///
/// Stops when the bracket is narrower than `2·(rel_tol·|x| + abs_tol)` (plus a few ulps).
pub(crate) fn brent<E>(
    mut f: impl FnMut(f64) -> Result<f64, E>,
    lo: f64,
    hi: f64,
    rel_tol: f64,
    abs_tol: f64,
) -> Result<f64, RootFailure<E>> {
    let mut a = lo;
    let mut b = hi;
    let mut fa = f(a).map_err(RootFailure::Function)?;
    let mut fb = f(b).map_err(RootFailure::Function)?;
    if (fa > 0.0 && fb > 0.0) || (fa < 0.0 && fb < 0.0) {
        return Err(RootFailure::NotBracketed);
    }
    // `c` is the other end of the bracket; `a` the previous iterate. `a_is_c` records whether
    // the two coincide (then only a secant step is possible).
    let mut c = a;
    let mut fc = fa;
    let mut a_is_c = true;
    let mut d = b - a;
    let mut e = d;
    for _ in 0..MAX_ROOT_ITERATIONS {
        if (fb > 0.0 && fc > 0.0) || (fb < 0.0 && fc < 0.0) {
            c = a;
            fc = fa;
            a_is_c = true;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
            a_is_c = true;
        }
        let tol = 2.0 * f64::EPSILON * b.abs() + 0.5 * (rel_tol * b.abs() + abs_tol);
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb.abs() < f64::MIN_POSITIVE {
            return Ok(b);
        }
        if e.abs() >= tol && fa.abs() > fb.abs() {
            let s = fb / fa;
            let (mut p, mut q);
            if a_is_c {
                // Secant step.
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                // Inverse quadratic interpolation through (a, fa), (b, fb), (c, fc).
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            if 2.0 * p < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = d;
            }
        } else {
            d = m;
            e = d;
        }
        a = b;
        fa = fb;
        a_is_c = false;
        b += if d.abs() > tol { d } else { tol.copysign(m) };
        fb = f(b).map_err(RootFailure::Function)?;
    }
    Err(RootFailure::NoConvergence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::STEP_LOCATED;
    use core::convert::Infallible;

    fn ok(f: impl Fn(f64) -> f64) -> impl FnMut(f64) -> Result<f64, Infallible> {
        move |x| Ok(f(x))
    }

    /// `x² − 2 = 0` on `[0, 2]`: the root is `√2`.
    #[test]
    fn finds_square_root_of_two() {
        let r = brent(ok(|x| x * x - 2.0), 0.0, 2.0, 1e-15, 0.0).unwrap();
        assert!((r - 2f64.sqrt()).abs() < 4.0 * f64::EPSILON);
    }

    /// `cos x = x` has its root at the Dottie number 0.739085133215160641655…
    #[test]
    fn finds_dottie_number() {
        let r = brent(ok(|x| x.cos() - x), 0.0, 1.0, 1e-15, 0.0).unwrap();
        assert!((r - 0.739_085_133_215_160_6).abs() < 4.0 * f64::EPSILON);
    }

    /// A step function has no root but a sign change at 0.3; Brent must shrink onto it.
    #[test]
    fn converges_on_a_discontinuity_like_bisection() {
        let r = brent(
            ok(|x| if x < 0.3 { 1.0 } else { -1.0 }),
            0.0,
            1.0,
            0.0,
            1e-12,
        )
        .unwrap();
        assert!((r - 0.3).abs() < STEP_LOCATED);
    }

    #[test]
    fn reports_missing_bracket_and_passes_errors_through() {
        assert_eq!(
            brent(ok(|x| x * x + 1.0), -1.0, 1.0, 1e-12, 0.0),
            Err(RootFailure::NotBracketed)
        );
        let failing = |_x: f64| -> Result<f64, &'static str> { Err("boom") };
        assert_eq!(
            brent(failing, 0.0, 1.0, 1e-12, 0.0),
            Err(RootFailure::Function("boom"))
        );
    }
}
