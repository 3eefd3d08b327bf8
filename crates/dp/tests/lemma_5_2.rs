//! The correction (M1) to seed 004's Lemmas 5.1–5.2 (see `orthomask_dp::masked_complement`),
//! checked by quadrature.
//!
//! Given `B₊`, the row `B₁` is uniform on the unit sphere of a `q = n − p` dimensional space, so
//! the inner integral of eq. (24) is, up to a constant,
//!
//! ```text
//! F_q(t) = ∫_{−1}^{1} e^{tu} (1 − u²)^{(q−3)/2} du = ∫_0^π e^{t cos θ} sin^{q−2} θ dθ,
//! ```
//!
//! i.e. `G_{q−1}` in the paper's notation (26), not the `G_q` printed in (25). Lemma 5.2's proof
//! bounds `(ln G_m)′ ≤ t/m`, which for `m = q − 1` would only give `2(n − p − 1)` in (28). The
//! sharper bound `(ln F_q)′(t) < t/q` (from the Bessel recurrence, DLMF 10.29.1) restores the
//! printed `2(n − p)`. These tests compute `(ln F_q)′ = ∫cos θ·e^{t cos θ} sin^{q−2}θ / F_q` by
//! composite Simpson quadrature and check:
//! * the bound `(ln F_q)′(t) < t/q` on a grid of `t` and `q`;
//! * that it is tight as `t → 0` (so an index error could not be absorbed by slack elsewhere);
//! * the ratio bound (27) in the form the proof uses, `F_q(t₂)/F_q(t₁) ≤ e^{|t₂² − t₁²|/(2q)}`;
//! * the quadrature against the closed form for `q = 3`.

use orthomask_dp::tolerance::{QUADRATURE, SMALL_T_TIGHTNESS};

/// Simpson intervals on `[0, π]`. The integrands are smooth and, for `t ≤ 50`, concentrated on a
/// width of about `1/√t ≥ 0.14` around θ = 0; 4 000 intervals resolve that to far below
/// [`QUADRATURE`] (halving the step changes the results by less than 1e-12).
const INTERVALS: usize = 4_000;

/// `(F_q(t)·e^{−t}, F_q′(t)·e^{−t})` by composite Simpson (scaled by `e^{−t}` so that `t = 50`
/// cannot overflow; the scale cancels in every ratio and is undone in the ratio test).
fn inner_integral(q: u32, t: f64) -> (f64, f64) {
    let h = std::f64::consts::PI / INTERVALS as f64;
    let mut value = 0.0;
    let mut derivative = 0.0;
    for i in 0..=INTERVALS {
        let theta = h * i as f64;
        let weight = if i == 0 || i == INTERVALS {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let kernel = (t * (theta.cos() - 1.0)).exp() * theta.sin().powi(q as i32 - 2);
        value += weight * kernel;
        derivative += weight * kernel * theta.cos();
    }
    (value * h / 3.0, derivative * h / 3.0)
}

fn log_derivative(q: u32, t: f64) -> f64 {
    let (value, derivative) = inner_integral(q, t);
    derivative / value
}

/// `(ln F_q)′(t) < t/q` for `q = 2…40`, `t ∈ [0.05, 50]`.
#[test]
fn log_derivative_is_below_t_over_q() {
    for q in [2, 3, 4, 5, 7, 10, 20, 40] {
        for t in [0.05, 0.3, 1.0, 2.5, 7.0, 15.0, 50.0] {
            let r = log_derivative(q, t);
            let bound = t / f64::from(q);
            assert!(r < bound, "q = {q}, t = {t}: {r} ≥ {bound}");
            assert!(r > 0.0 && r < 1.0, "q = {q}, t = {t}: {r}");
        }
    }
}

/// As `t → 0`, `(ln F_q)′(t)·q/t → 1` (series: `I_{ν+1}/I_ν = t/(2ν + 2) + O(t³)`, `2ν + 2 = q`),
/// so `t/q` is the best bound of this form. With the printed index, Lemma 5.2's `t/(q − 1)`
/// holds with room to spare, but `t/q` is what (28) needs.
#[test]
fn the_bound_is_tight_for_small_t() {
    for q in [2, 3, 5, 10] {
        let t = 1e-3;
        let ratio = log_derivative(q, t) * f64::from(q) / t;
        assert!(
            ratio < 1.0 && ratio > 1.0 - SMALL_T_TIGHTNESS,
            "q = {q}: {ratio}"
        );
    }
}

/// Eq. (27) for the integral the proof actually has: `F_q(t₂)/F_q(t₁) ≤ e^{(t₂² − t₁²)/(2q)}`
/// for `t₂ > t₁` (the scale `e^{−t}` of [`inner_integral`] is undone).
#[test]
fn ratio_bound_27_holds_with_the_corrected_index() {
    for q in [2, 3, 6, 15] {
        for (t1, t2) in [(0.1, 0.5), (1.0, 3.0), (0.5, 12.0), (20.0, 30.0)] {
            let (f1, _) = inner_integral(q, t1);
            let (f2, _) = inner_integral(q, t2);
            let log_ratio = f2.ln() + t2 - f1.ln() - t1;
            let bound = (t2 * t2 - t1 * t1) / (2.0 * f64::from(q));
            assert!(
                log_ratio <= bound * (1.0 + QUADRATURE),
                "q = {q}, ({t1}, {t2}): {log_ratio} > {bound}"
            );
        }
    }
}

/// The quadrature agrees with the closed form where there is one: `q = 3` is the uniform
/// density on `[−1, 1]`, `F₃(t) = 2 sinh(t)/t`, `(ln F₃)′ = coth t − 1/t`. (For `q = 1` — one
/// free direction, `n = p + 1` — `B₁ = ±e`, the inner integral is `cosh t` and (M1) is
/// `tanh t < t`.)
#[test]
fn quadrature_matches_the_closed_form_for_q_3() {
    for t in [0.5f64, 2.0, 9.0] {
        let exact = 1.0 / t.tanh() - 1.0 / t;
        assert!((log_derivative(3, t) - exact).abs() < QUADRATURE * exact);
    }
}
