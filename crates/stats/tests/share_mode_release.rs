//! A regression on a share-mode release (seed 000 §3.5) equals the regression on the raw answers
//! to 1e-9 relative, as the services' end-to-end test demands, under the services' own design.
//!
//! The shares cancel in floating point, so the release carries absolute errors of a few `ε_mach`
//! times the shares' row norms. The scenario is the end-to-end survey's (four answers up to 250,
//! QA constant 888, cohorts of 20, the services' plan: `p₂ = 503`, σ a hair above the Appendix C
//! bound, ≈ 755): its F statistic divides by a small residual sum of squares and is the most
//! sensitive number of the fit. History of the worst of 300 trials: every coordinate split at
//! `τ = 100·max(x_max, σ)`, 9.7e-10 (1.3e-9 seen in CI); only the answers split at
//! `τ = 100·x_max` (`collusion::share_sigma`) into `K₁ − 1` noise shares and a remainder,
//! 1.7e-10 (then with `p₂ = 446`, σ = 494.53); symmetric zero-sum shares `x/K₁ + Gᵢ − Ḡ`, the
//! collector's own mask on the release and the plan's larger σ, 2.0e-10.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::Strictness;
use orthomask_core::protocol::collusion::share_sigma;
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for};
use orthomask_core::protocol::simulation::{CollusionKeys, Safety, run_collusion};
use orthomask_core::protocol::tm2::{DEFAULT_QA_CONSTANT, Tm2Design};
use orthomask_core::random::BitSource;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::{
    RELEASE_REGRESSION_RELATIVE, SHARE_SIGMA_BY_HAND, relative_difference,
};

/// Independent key sets tried (each a fresh release of fresh answers).
const TRIALS: u64 = 8;

/// Participants per cohort in the end-to-end survey.
const N: usize = 20;

/// Uniform on [0, 1) from 53 random bits.
fn uniform(bits: &mut impl BitSource) -> f64 {
    (bits.next_bits() >> 11) as f64 / (1u64 << 53) as f64
}

/// Answers shaped like the end-to-end test's: smoker, age, income (hundreds), wellbeing score.
fn answers(seed: u64) -> DMatrix<f64> {
    let mut bits = Key::teaching(seed).stream(StreamId::Scratch(0)).rng();
    let mut rows = Vec::with_capacity(N * 4);
    for i in 0..N {
        // Three smokers in ten, so both groups are always present.
        let smoker = f64::from(i % 10 < 3);
        let age = 18.0 + (uniform(&mut bits) * 72.0).floor();
        let income = 10.0 + uniform(&mut bits) * 200.0;
        let noise = 8.0 * (uniform(&mut bits) - 0.5);
        let score = (20.0 + 0.4 * age + 0.12 * income - 6.0 * smoker + noise).clamp(0.0, 100.0);
        rows.extend([smoker, age, income, score]);
    }
    DMatrix::from_row_slice(N, 4, &rows)
}

fn fit(values: DMatrix<f64>) -> LinearRegression {
    let names = ["smoker", "age", "income", "score"]
        .map(str::to_owned)
        .to_vec();
    let data = Dataset::new(names, values).unwrap();
    LinearRegression::fit(
        &data,
        "score",
        &["smoker", "age", "income"],
        Intercept::Included,
    )
    .unwrap()
}

/// The largest relative difference between two fits over every number the e2e test compares.
fn worst_difference(raw: &LinearRegression, release: &LinearRegression) -> f64 {
    let mut worst: f64 = 0.0;
    for (a, b) in raw.coefficients().iter().zip(release.coefficients()) {
        worst = worst
            .max(relative_difference(a.estimate(), b.estimate()))
            .max(relative_difference(a.std_error(), b.std_error()));
    }
    worst
        .max(relative_difference(raw.r_squared(), release.r_squared()))
        .max(relative_difference(raw.sigma(), release.sigma()))
        .max(relative_difference(
            raw.f_statistic().unwrap(),
            release.f_statistic().unwrap(),
        ))
}

/// The services' plan for cohorts of `N` (`crates/server/src/plan.rs`): the fewest noise columns
/// with Pr[condition (3.5) fails] ≤ 1e-6 at δ = 0.5, σ a hair above the Appendix C bound for
/// values up to the QA constant 888.
fn services_design() -> (Tm2Design, Safety) {
    let (delta, x_max) = (0.5, DEFAULT_QA_CONSTANT);
    let p2 = noise_columns_for(N, delta, 1e-6).unwrap();
    let sigma = appendix_c_bound(N, 5, p2, x_max, delta).unwrap().sigma_min * (1.0 + 1e-9);
    let safety = Safety {
        x_max,
        delta,
        strictness: Strictness::Refuse,
    };
    (Tm2Design::modified(4, p2, sigma).unwrap(), safety)
}

#[test]
fn share_mode_release_regresses_like_the_raw_answers() {
    let (design, safety) = services_design();
    // The declared ranges of the e2e survey: income up to 250 is the largest.
    let tau = share_sigma(&design, 250.0);
    assert!((tau - 25_000.0).abs() < SHARE_SIGMA_BY_HAND * tau);
    let mut worst: f64 = 0.0;
    for trial in 0..TRIALS {
        let raw = answers(1_000 + trial);
        let keys = CollusionKeys {
            collector: Key::teaching(6_000 + trial),
            right: vec![Key::teaching(2_000 + trial), Key::teaching(3_000 + trial)],
            left: vec![Key::teaching(4_000 + trial)],
            participants: Key::teaching(5_000 + trial),
        };
        let run = run_collusion(&raw, &design, &keys, tau, safety).unwrap();
        assert!(run.qa.as_ref().is_some_and(|qa| qa.passed()));
        // The release is A_c·A·(answers, QA); the QA column is constant and drops out of the fit.
        let release = run.release.columns(0, 4).into_owned();
        let difference = worst_difference(&fit(raw), &fit(release));
        assert!(
            difference < RELEASE_REGRESSION_RELATIVE,
            "trial {trial}: release differs from raw by {difference:e} relative"
        );
        worst = worst.max(difference);
    }
    eprintln!("share mode, {TRIALS} trials: worst relative difference {worst:e}");
}
