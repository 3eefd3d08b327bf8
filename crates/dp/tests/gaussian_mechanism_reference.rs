//! The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8) against independent
//! references: mpmath at 50 digits, and a direct numerical integration of the hockey-stick
//! divergence written here.

use orthomask_dp::tolerance::{GAUSSIAN_INVERSE_CHECK, QUADRATURE, REFERENCE_GAUSSIAN};
use orthomask_dp::{
    gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma,
};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// `(Δ, σ, ε, δ)` with δ from mpmath 1.4.1 at 50 digits,
/// `ncdf(Δ/(2σ) − εσ/Δ) − exp(ε)·ncdf(−Δ/(2σ) − εσ/Δ)`
/// (`tests/reference/device_mechanism_reference.py`). They span δ from 0.2 down to 1e-15,
/// cancellation between the two terms (σ/Δ = 200) and ε = 10.
const MPMATH: [(f64, f64, f64, f64); 7] = [
    (1.0, 1.0, 0.5, 0.238_421_708_134_876_63),
    (0.2, 8.56, 0.0005, 0.009_075_272_243_962_597),
    (0.4, 3.0, 1.0, 9.026_931_560_691_821e-16),
    (1.0, 4.0, 1.0, 2.924_272_104_856_407e-6),
    (2.0, 1.0, 3.0, 0.183_813_076_544_472_16),
    (0.05, 10.0, 0.01, 4.266_620_736_798_585_6e-5),
    (1.0, 0.3, 10.0, 0.057_496_922_269_049_72),
];

#[test]
fn profile_matches_mpmath() {
    for (sens, sigma, eps, want) in MPMATH {
        let got = gaussian_mechanism_delta(sens, sigma, eps).unwrap();
        assert!(
            rel(got, want) < REFERENCE_GAUSSIAN,
            "Δ = {sens}, σ = {sigma}, ε = {eps}: {got} vs {want}"
        );
    }
}

/// `δ(ε) = sup_S P₀(S) − e^ε P₁(S)` for `P₀ = N(0, σ²)`, `P₁ = N(Δ, σ²)`. The supremum is attained
/// on `S = {x : p₀(x) > e^ε p₁(x)} = (−∞, x*)`, `x* = Δ/2 − εσ²/Δ` (the log-ratio
/// `(Δ² − 2xΔ)/(2σ²)` exceeds ε exactly there), so `δ = ∫_{−∞}^{x*} (p₀ − e^ε p₁) dx`, integrated
/// here by composite Simpson on `[x* − 40σ, x*]` (the part below is `< e^{−800}`).
fn hockey_stick(sens: f64, sigma: f64, eps: f64) -> f64 {
    let density = |x: f64, mean: f64| {
        let z = (x - mean) / sigma;
        (-0.5 * z * z).exp() / (sigma * (2.0 * std::f64::consts::PI).sqrt())
    };
    let top = 0.5 * sens - eps * sigma * sigma / sens;
    let bottom = top - 40.0 * sigma;
    let intervals = 200_000;
    let h = (top - bottom) / intervals as f64;
    let mut sum = 0.0;
    for i in 0..=intervals {
        let x = bottom + h * i as f64;
        let weight = if i == 0 || i == intervals {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        sum += weight * (density(x, 0.0) - eps.exp() * density(x, sens));
    }
    sum * h / 3.0
}

#[test]
fn profile_matches_direct_integration() {
    for (sens, sigma, eps) in [
        (1.0, 1.0, 0.5),
        (0.2, 8.56, 0.0005),
        (2.0, 1.0, 3.0),
        (1.0, 2.0, 0.1),
    ] {
        let closed = gaussian_mechanism_delta(sens, sigma, eps).unwrap();
        let integral = hockey_stick(sens, sigma, eps);
        assert!(
            rel(closed, integral) < QUADRATURE,
            "Δ = {sens}, σ = {sigma}, ε = {eps}: {closed} vs {integral}"
        );
    }
}

/// The profile decreases in ε and in σ; σ* decreases in ε and δ.
#[test]
fn profile_and_calibration_are_monotone() {
    let mut previous = f64::INFINITY;
    for i in 0..40 {
        let eps = 0.1 * f64::from(i);
        let d = gaussian_mechanism_delta(1.0, 1.5, eps).unwrap();
        assert!(d < previous, "ε = {eps}");
        previous = d;
    }
    let mut previous = f64::INFINITY;
    for i in 1..40 {
        let sigma = 0.25 * f64::from(i);
        let d = gaussian_mechanism_delta(1.0, sigma, 0.5).unwrap();
        assert!(d < previous, "σ = {sigma}");
        previous = d;
    }
    let s1 = gaussian_mechanism_sigma(1.0, 0.5, 1e-6).unwrap();
    assert!(gaussian_mechanism_sigma(1.0, 1.0, 1e-6).unwrap() < s1);
    assert!(gaussian_mechanism_sigma(1.0, 0.5, 1e-4).unwrap() < s1);
}

/// Balle & Wang's calibration never needs more noise than the classical
/// `σ = Δ·√(2 ln(1.25/δ))/ε` (Dwork & Roth 2014, Theorem A.1, ε < 1), and the classical σ does
/// deliver (ε, δ) by the exact profile.
#[test]
fn analytic_calibration_is_below_the_classical_one() {
    for (eps, delta) in [(0.1, 1e-5), (0.5, 1e-3), (0.9, 1e-8)] {
        let classical = (2.0f64 * (1.25f64 / delta).ln()).sqrt() / eps;
        let analytic = gaussian_mechanism_sigma(1.0, eps, delta).unwrap();
        assert!(analytic < classical, "ε = {eps}, δ = {delta}");
        assert!(gaussian_mechanism_delta(1.0, classical, eps).unwrap() <= delta);
        // σ* meets δ with equality; ε*(σ*) returns ε.
        let back = gaussian_mechanism_epsilon(1.0, analytic, delta).unwrap();
        assert!(rel(back, eps) < GAUSSIAN_INVERSE_CHECK, "{back} vs {eps}");
    }
}
