//! Issue 21 §4: the survey team is told, when it creates a survey, how many digits its release
//! is expected to lose to masking — and where the cohort is too large for the policy's two, why
//! and which size would do.

mod common;

use common::*;
use orthomask_survey::tolerance::DIGITS_BY_HAND;

/// Share mode: the shares' noise that hides the answers from each of the three right-masking
/// services costs 2.69 expected digits for cohorts of 10 (Python, from (E5) for this design:
/// `R² = R²_basic/3 + 4·100²·2`), which no plan choice lowers: the answer says so, and what the
/// basic protocol would lose (1.27).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_mode_states_what_its_shares_cost() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let shares = create_survey(&http, &all, &draft("shares", 10, true, true)).await;
    let digits = shares["expected_digits_lost"].as_f64().unwrap();
    assert!(
        (digits - 2.690_210_241_134_132_7).abs() < DIGITS_BY_HAND,
        "{digits}"
    );
    let note = shares["accuracy_note"].as_str().unwrap();
    assert!(
        note.contains("in share mode each record is split into 3 shares")
            && note.contains("the basic protocol would lose 1.3"),
        "{note}"
    );
    all.stop().await;
}

/// Cohorts of 250 with the test survey's four answer columns would lose 2.16 digits with the
/// failure target's columns: the plan adds columns and the loss is at most 2, no note. Cohorts
/// of 2 000 cannot keep two digits with any number of columns ((E8): ½·log₁₀(3·(5 + 2 000·4))
/// = 2.19): the answer says so and names the cohort size that would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_states_the_expected_digits_and_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let fits = create_survey(&http, &all, &draft("fits", 250, false, true)).await;
    let digits = fits["expected_digits_lost"].as_f64().unwrap();
    assert!(digits <= 2.0 && digits > 1.9, "{digits}");
    assert!(fits["accuracy_note"].is_null(), "{fits}");
    assert!(fits["p2"].as_u64().unwrap() > 1140, "{fits}");

    let large = create_survey(&http, &all, &draft("large", 2000, false, true)).await;
    let digits = large["expected_digits_lost"].as_f64().unwrap();
    assert!(digits > 2.0, "{digits}");
    let note = large["accuracy_note"].as_str().unwrap();
    assert!(
        note.contains("no number of noise columns loses fewer than 2.2"),
        "{note}"
    );
    assert!(note.contains("cohorts of at most"), "{note}");
    all.stop().await;
}
