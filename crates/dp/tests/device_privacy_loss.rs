//! An oracle for `orthomask_dp::device` that shares nothing with it: the privacy loss of the
//! mechanism TM² runs, for actual neighbouring data sets, estimated by Monte Carlo from the
//! released statistics' exact densities (issue 21 §5).
//!
//! # The mechanism and its densities (one answer per record, `p = 1`)
//! Each of `n` devices adds `N(0, σ²)` to its scaled answer, and the collector sees
//! `Y = A(X + C)` with `A` orthogonal and `A·1ₙ = 1ₙ`. Every such `A` keeps
//! `s = 1ₙᵀY/√n` and `r = ‖Y − ȳ1ₙ‖` (it fixes `1ₙ` and preserves norms), and given `(s, r)` a
//! Haar `A` leaves `Y` uniform on the sphere of radius `r` in `1ₙ`'s complement, whatever `X` —
//! so the likelihood ratio of the view between `X` and `X′` is that of `(s, r)`. Under `X`,
//! `s ~ N(1ₙᵀX/√n, σ²)` and `T = r²/σ²` is non-central χ² with `k = n − 1` degrees of freedom
//! and non-centrality `λ = ‖X − x̄1ₙ‖²/σ²` (the definition of the distribution: `Y − ȳ1ₙ` is
//! the projection of `X + C`), independent of `s`. With the classical series of the non-central
//! density (Johnson, Kotz & Balakrishnan, *Continuous Univariate Distributions* 2, §29.2),
//! `f_λ(t)/f_0(t) = e^{−λ/2}·₀F₁(; k/2; λt/4)`, the privacy loss of a view is
//!
//! ```text
//! L = [(s − m′)² − (s − m)²]/(2σ²)  −  (λ − λ′)/2  +  ln ₀F₁(; k/2; λT/4) − ln ₀F₁(; k/2; λ′T/4),
//! ```
//!
//! and the exact privacy profile of the pair is `δ(ε) = E_X[(1 − e^{ε − L})₊]` (the hockey-stick
//! divergence; Balle & Wang 2018, Theorem 5), estimated here over [`SAMPLES`] draws of the
//! devices' noise. The rotation `A` itself is not drawn: `(s, r)` does not depend on it.
//!
//! # What is checked
//! * The column sums are exactly a Gaussian mechanism: the crate's δ of that part equals the
//!   Monte Carlo profile of `s` alone for the extreme pair, to [`MONTE_CARLO_SES`] standard
//!   errors — its sensitivity is measured on the data sets, not taken from the crate.
//! * The complement's bound (M6) and the composed guarantee (D9) are upper bounds of the true
//!   profiles for extreme and random neighbours, in both directions, and the calibrated σ*
//!   meets its target on them. At these sizes the composed bound is conservative by orders of
//!   magnitude (e.g. n = 10, ε = 1: 10⁻² stated at σ*, about 10⁻⁸ true for the extreme pair,
//!   SciPy quadrature), so what this guards is soundness: a formula that claimed less than the
//!   truth fails.
//! * The oracle is not vacuous: at small σ it finds the pair nearly distinguishable.

use orthomask_dp::tolerance::SAME_FUNCTION;
use orthomask_dp::{BudgetSplit, CohortMechanism, gaussian_mechanism_delta};
use rand_chacha::ChaCha12Rng;
use rand_core::SeedableRng;
use rand_distr::{Distribution, StandardNormal, Uniform};

/// Draws of the devices' noise per estimate.
const SAMPLES: usize = 400_000;

/// A Monte Carlo estimate may exceed a bound, or differ from an exact value, by this many
/// standard errors before the test fails (two-sided 6·10⁻⁵ per comparison for a normal
/// estimate).
const MONTE_CARLO_SES: f64 = 4.0;

/// Two neighbouring data sets of scaled answers (`p = 1`): `x` with row 0 replaced.
#[derive(Clone, Debug)]
struct Pair {
    x: Vec<f64>,
    neighbour: Vec<f64>,
}

impl Pair {
    /// Row 0 is 1 and every other −1, against all −1: the records that reach the changed-row
    /// bound `2√(1 − 1/n)` of (D7)–(D8) and the sums' sensitivity `2/√n`.
    fn extreme(n: usize) -> Self {
        let neighbour = vec![-1.0; n];
        let mut x = neighbour.clone();
        x[0] = 1.0;
        Self { x, neighbour }
    }

    /// Answers uniform in [−1, 1] with row 0 replaced by another such answer.
    fn random(n: usize, seed: u64) -> Self {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let unit = Uniform::new_inclusive(-1.0, 1.0).unwrap();
        let x: Vec<f64> = (0..n).map(|_| unit.sample(&mut rng)).collect();
        let mut neighbour = x.clone();
        neighbour[0] = unit.sample(&mut rng);
        Self { x, neighbour }
    }

    fn swapped(&self) -> Self {
        Self {
            x: self.neighbour.clone(),
            neighbour: self.x.clone(),
        }
    }
}

/// `1ₙᵀx/√n` and `‖x − x̄1ₙ‖²`.
fn sum_and_spread(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let total: f64 = x.iter().sum();
    let mean = total / n;
    (
        total / n.sqrt(),
        x.iter().map(|v| (v - mean) * (v - mean)).sum(),
    )
}

/// `ln ₀F₁(; b; z)` for `z ≥ 0` from its series `Σ_j z^j/((b)_j j!)`, all terms positive,
/// summed relative to the largest term.
fn ln_hypergeometric_0f1(b: f64, z: f64) -> f64 {
    if z == 0.0 {
        return 0.0;
    }
    let mut ln_terms = vec![0.0];
    let mut ln_term = 0.0;
    for j in 0.. {
        let jf = f64::from(j);
        ln_term += z.ln() - (b + jf).ln() - (jf + 1.0).ln();
        ln_terms.push(ln_term);
        // Past the peak (ratio below ½) the remaining tail is below twice the last term.
        if z / ((b + jf) * (jf + 1.0)) < 0.5 && ln_term < ln_terms[0] - 40.0 {
            break;
        }
        if ln_terms.len() > 100_000 {
            break;
        }
    }
    let peak = ln_terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    peak + ln_terms.iter().map(|t| (t - peak).exp()).sum::<f64>().ln()
}

/// Which released statistics the privacy loss is taken over.
#[derive(Clone, Copy, Debug, PartialEq)]
enum View {
    /// The column sum `s` alone ((D5)).
    Sums,
    /// The radius `r` of the masked complement alone ((D6)–(D8)).
    Complement,
    /// Both: what the collector sees.
    Whole,
}

/// Monte Carlo estimate of `δ(ε) = E_X[(1 − e^{ε − L})₊]` for the pair, and its standard error.
fn privacy_profile(pair: &Pair, sigma: f64, epsilon: f64, view: View, seed: u64) -> (f64, f64) {
    let n = pair.x.len();
    let k = (n - 1) as f64;
    let (m, spread) = sum_and_spread(&pair.x);
    let (m_neighbour, spread_neighbour) = sum_and_spread(&pair.neighbour);
    let (lambda, lambda_neighbour) = (spread / (sigma * sigma), spread_neighbour / (sigma * sigma));
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    let (mut total, mut total_squares) = (0.0, 0.0);
    let mut y = vec![0.0; n];
    for _ in 0..SAMPLES {
        for (yi, xi) in y.iter_mut().zip(&pair.x) {
            let z: f64 = StandardNormal.sample(&mut rng);
            *yi = xi + sigma * z;
        }
        let (s, r2) = sum_and_spread(&y);
        let t = r2 / (sigma * sigma);
        let sums = ((s - m_neighbour).powi(2) - (s - m).powi(2)) / (2.0 * sigma * sigma);
        let complement = -(lambda - lambda_neighbour) / 2.0
            + ln_hypergeometric_0f1(k / 2.0, lambda * t / 4.0)
            - ln_hypergeometric_0f1(k / 2.0, lambda_neighbour * t / 4.0);
        let loss = match view {
            View::Sums => sums,
            View::Complement => complement,
            View::Whole => sums + complement,
        };
        let value = (1.0 - (epsilon - loss).exp()).max(0.0);
        total += value;
        total_squares += value * value;
    }
    let count = SAMPLES as f64;
    let mean = total / count;
    let variance = (total_squares / count - mean * mean).max(0.0);
    (mean, (variance / count).sqrt())
}

/// By hand: ₀F₁(; b; 0) = 1, ₀F₁(; ½; z²/4) = cosh z, ₀F₁(; 3/2; z²/4) = sinh(z)/z.
#[test]
fn the_series_is_the_hypergeometric_function() {
    assert_eq!(ln_hypergeometric_0f1(2.5, 0.0), 0.0);
    for z in [0.1_f64, 1.0, 7.0, 30.0] {
        let cosh = ln_hypergeometric_0f1(0.5, z * z / 4.0);
        assert!(
            (cosh - z.cosh().ln()).abs() < SAME_FUNCTION,
            "z = {z}: {cosh}"
        );
        let sinh = ln_hypergeometric_0f1(1.5, z * z / 4.0);
        assert!(
            (sinh - (z.sinh() / z).ln()).abs() < SAME_FUNCTION,
            "z = {z}: {sinh}"
        );
    }
}

/// The sums part is a Gaussian mechanism whose δ the crate states exactly: its value equals the
/// Monte Carlo profile of `s` for the extreme pair (sensitivity measured on the data, `2/√n`).
#[test]
fn the_sums_are_exactly_the_gaussian_mechanism_the_crate_states() {
    for (n, sigma) in [(6_usize, 1.0), (12, 0.6)] {
        let mechanism = CohortMechanism::new(1, n as u64).unwrap();
        let pair = Pair::extreme(n);
        for (i, epsilon) in [0.1, 0.5, 1.0].into_iter().enumerate() {
            let stated =
                gaussian_mechanism_delta(mechanism.sum_sensitivity(), sigma, epsilon).unwrap();
            let (estimate, se) = privacy_profile(&pair, sigma, epsilon, View::Sums, 10 + i as u64);
            assert!(
                (estimate - stated).abs() <= MONTE_CARLO_SES * se,
                "n = {n}, ε = {epsilon}: stated {stated:e}, Monte Carlo {estimate:e} ± {se:e}"
            );
        }
    }
}

/// The complement's bound (M6) is at least the true profile of the radius, for the extreme
/// pair both ways and for random neighbours, wherever the bound says something (δ < 1). (It
/// is loose here: 0.48 stated against 7·10⁻⁵ true for n = 6, σ = 2.5, ε = 0.8.)
#[test]
fn the_complement_bound_covers_the_true_profile() {
    for (n, sigma, epsilon) in [(6_usize, 2.5, 0.8), (6, 3.0, 0.5), (12, 2.5, 0.8)] {
        let bound = CohortMechanism::new(1, n as u64)
            .unwrap()
            .complement()
            .delta_at(sigma, epsilon)
            .unwrap();
        assert!(
            bound < 1.0,
            "n = {n}, σ = {sigma}: the bound says nothing ({bound})"
        );
        let pairs = [
            Pair::extreme(n),
            Pair::extreme(n).swapped(),
            Pair::random(n, 1),
            Pair::random(n, 2).swapped(),
        ];
        for (i, pair) in pairs.iter().enumerate() {
            let (estimate, se) =
                privacy_profile(pair, sigma, epsilon, View::Complement, 100 + i as u64);
            assert!(
                estimate - MONTE_CARLO_SES * se <= bound,
                "n = {n}, pair {i}: true {estimate:e} ± {se:e} above the bound {bound:e}"
            );
        }
    }
}

/// The composed guarantee (D9) covers the whole view, and σ* calibrated for (ε, δ) meets δ on
/// the mechanism run; the oracle is not vacuous (at σ = 0.2 the pair is nearly told apart).
#[test]
fn the_composed_guarantee_covers_the_whole_view() {
    for (n, epsilon, delta) in [(6_usize, 1.0, 0.05), (10, 1.0, 0.01), (20, 0.5, 0.01)] {
        let mechanism = CohortMechanism::new(1, n as u64).unwrap();
        let calibrated = mechanism.calibrate(epsilon, delta).unwrap().sigma();
        for (j, sigma) in [0.75 * calibrated, calibrated].into_iter().enumerate() {
            let stated = mechanism.delta_at(sigma, epsilon).unwrap();
            for (i, pair) in [
                Pair::extreme(n),
                Pair::extreme(n).swapped(),
                Pair::random(n, 3),
            ]
            .iter()
            .enumerate()
            {
                let seed = 1000 + 10 * j as u64 + i as u64;
                let (estimate, se) = privacy_profile(pair, sigma, epsilon, View::Whole, seed);
                assert!(
                    estimate - MONTE_CARLO_SES * se <= stated.min(1.0),
                    "n = {n}, σ = {sigma}, pair {i}: true {estimate:e} ± {se:e} above {stated:e}"
                );
                if sigma == calibrated {
                    assert!(estimate - MONTE_CARLO_SES * se <= delta);
                }
            }
        }
    }
    let (near_one, _) = privacy_profile(&Pair::extreme(10), 0.2, 0.5, View::Whole, 7);
    assert!(near_one > 0.5, "the oracle finds δ = {near_one} at σ = 0.2");
}

/// Keeping the split of σ* while the cohort grows gives a valid δ at each size (D11′): the
/// stated `delta_with_split` covers the true profile at the larger size too.
#[test]
fn a_kept_split_covers_larger_cohorts() {
    let mechanism = CohortMechanism::new(1, 6).unwrap();
    let calibration = mechanism.calibrate(1.0, 0.05).unwrap();
    let split: BudgetSplit = calibration.split();
    for n in [9_usize, 15] {
        let stated = mechanism
            .delta_with_split(n as u64, calibration.sigma(), &split)
            .unwrap();
        let (estimate, se) = privacy_profile(
            &Pair::extreme(n),
            calibration.sigma(),
            1.0,
            View::Whole,
            n as u64,
        );
        assert!(estimate - MONTE_CARLO_SES * se <= stated, "n = {n}");
    }
}
