//! Simulated participants for demonstrations: answers generated for any survey definition, which
//! the web app's "let simulated participants join" sends through the participant client exactly
//! as a participant's form would ([`crate::client`]). A demonstration cohort fills in seconds and
//! its release shows a relationship worth a scatter plot.
//!
//! The answers are not uniform noise: every participant has one latent trait `z ~ N(0, 1)` and
//! each answer follows `u = ρ·z + √(1−ρ²)·e` with its own `e ~ N(0, 1)` ([`LOADING`] = ρ), so any
//! two answers correlate (about ρ² before rounding). `u` is mapped into the question's declared
//! range through the standard normal CDF `Φ`, so every answer is valid by construction:
//!
//! * yes/no: yes when `u > 0`;
//! * integer and number: `min + Φ(u)·(max − min)` (integers rounded);
//! * Likert: point `1 + ⌊Φ(u)·points⌋` (capped at `points`);
//! * categorical: option `⌊Φ(u)·k⌋` (capped at `k − 1`).
//!
//! An optional question is skipped with probability [`SKIP_PROBABILITY`], so the `answered`
//! columns vary too. A question an earlier answer hides (`show_if`, [`crate::branching`]) is
//! [`Answer::Skipped`], decided in order as the answers are drawn, as a participant's form does.
//! Randomness comes from the caller (I/O-free, like the rest of this crate).

use crate::coding::Answer;
use crate::definition::{Question, QuestionKind, SurveyDefinition};
use orthomask_core::random::{UnitUniform, standard_normal};
use rand_core::Rng;

/// ρ: how strongly each answer follows the participant's latent trait.
pub const LOADING: f64 = 0.7;

/// How often a simulated participant skips an optional question.
pub const SKIP_PROBABILITY: f64 = 0.15;

/// One simulated participant's answers to `survey`, in question order (valid for every question,
/// see the module documentation).
pub fn simulated_answers<R: Rng + ?Sized>(survey: &SurveyDefinition, rng: &mut R) -> Vec<Answer> {
    let z = standard_normal(rng);
    let mut answers = Vec::with_capacity(survey.questions.len());
    let mut shown = Vec::with_capacity(survey.questions.len());
    for (i, q) in survey.questions.iter().enumerate() {
        let visible = survey.shown_given(i, &answers, &shown);
        shown.push(visible);
        answers.push(if visible {
            simulated_answer(q, z, rng)
        } else {
            Answer::Skipped
        });
    }
    answers
}

fn simulated_answer<R: Rng + ?Sized>(question: &Question, z: f64, rng: &mut R) -> Answer {
    if question.optional && rng.next_unit() < SKIP_PROBABILITY {
        return Answer::Skipped;
    }
    let e = standard_normal(rng);
    let u = LOADING * z + (1.0 - LOADING * LOADING).sqrt() * e;
    let quantile = standard_normal_cdf(u);
    // A value in 0..k from the quantile; Φ(u) < 1 in floating point except for huge u.
    let bucket = |k: usize| ((quantile * k as f64) as usize).min(k.saturating_sub(1));
    match &question.kind {
        QuestionKind::YesNo => Answer::YesNo(u > 0.0),
        QuestionKind::Integer { min, max } => {
            let span = (*max - *min) as f64;
            Answer::Integer((*min + (quantile * span).round() as i64).clamp(*min, *max))
        }
        QuestionKind::Number { min, max } => {
            Answer::Number((min + quantile * (max - min)).clamp(*min, *max))
        }
        QuestionKind::Likert { points, .. } => {
            Answer::Likert(1 + u8::try_from(bucket(usize::from(*points))).unwrap_or(0))
        }
        QuestionKind::Categorical { options } => Answer::Category(bucket(options.len())),
    }
}

/// `Φ(u)` through the complementary error function of `libm` (accurate to the last digits, and
/// the same in the browser and natively).
fn standard_normal_cdf(u: f64) -> f64 {
    0.5 * libm::erfc(-u / std::f64::consts::SQRT_2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::ULPS_BELOW_ONE;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    fn every_kind() -> SurveyDefinition {
        SurveyDefinition::parse(
            include_str!("../../../www/surveys/wellbeing-optional.json"),
            "wellbeing-optional.json",
        )
        .unwrap()
    }

    #[test]
    fn every_simulated_record_is_valid_for_its_survey() {
        let survey = every_kind();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..500 {
            let answers = simulated_answers(&survey, &mut rng);
            assert_eq!(answers.len(), survey.questions.len());
            // `encode` checks every answer against its question (range, points, options,
            // skipped only when optional).
            survey.encode(&answers).unwrap();
        }
    }

    #[test]
    fn optional_items_are_skipped_about_as_often_as_stated() {
        let survey = every_kind();
        let optional = survey.questions.iter().filter(|q| q.optional).count();
        assert!(optional > 0);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let n = 4000;
        let skipped = (0..n)
            .flat_map(|_| simulated_answers(&survey, &mut rng))
            .filter(|a| *a == Answer::Skipped)
            .count();
        let trials = (n * optional) as f64;
        let rate = skipped as f64 / trials;
        // Binomial: within SKIP_RATE_SIGMAS standard deviations.
        const SKIP_RATE_SIGMAS: f64 = 5.0;
        let sd = (SKIP_PROBABILITY * (1.0 - SKIP_PROBABILITY) / trials).sqrt();
        assert!(
            (rate - SKIP_PROBABILITY).abs() < SKIP_RATE_SIGMAS * sd,
            "skip rate {rate}"
        );
    }

    #[test]
    fn answers_follow_one_latent_trait() {
        // Two numbers over the same range: before clipping at the range ends their normal
        // scores correlate with ρ² = 0.49; through Φ (Spearman-like) the correlation is
        // (6/π)·asin(ρ²/2) ≈ 0.47. A sample of 4000 has a standard error near 0.012, so
        // CORRELATION_TOLERANCE is over 4 of them.
        const CORRELATION_TOLERANCE: f64 = 0.05;
        let survey = SurveyDefinition::parse(
            include_str!("../../../www/surveys/leaps-demo.json"),
            "leaps-demo.json",
        )
        .unwrap();
        let col = |id: &str| survey.questions.iter().position(|q| q.id == id).unwrap();
        let (bbs, adl) = (col("bbs"), col("adl"));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let pairs: Vec<(f64, f64)> = (0..4000)
            .map(|_| {
                let a = simulated_answers(&survey, &mut rng);
                let value = |x: &Answer| match x {
                    Answer::Integer(v) => *v as f64,
                    Answer::Number(v) => *v,
                    other => panic!("unexpected {other:?}"),
                };
                (value(&a[bbs]), value(&a[adl]))
            })
            .collect();
        let n = pairs.len() as f64;
        let (mx, my) = (
            pairs.iter().map(|p| p.0).sum::<f64>() / n,
            pairs.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let cov = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>();
        let vx = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
        let vy = pairs.iter().map(|p| (p.1 - my).powi(2)).sum::<f64>();
        let r = cov / (vx * vy).sqrt();
        let expected = 6.0 / std::f64::consts::PI * (LOADING * LOADING / 2.0).asin();
        assert!(
            (r - expected).abs() < CORRELATION_TOLERANCE,
            "correlation {r}, expected {expected}"
        );
    }

    /// Hidden questions are skipped, shown ones answered: every record encodes (`encode`
    /// refuses an answer to a hidden question) and both branches of each condition occur.
    #[test]
    fn hidden_questions_are_skipped_in_order() {
        use crate::definition::{Condition, ConditionValue, ShowIf};
        let mut survey = every_kind();
        // drinks (optional) only for smokers; mood only when drinks is 10 to 100, a chain.
        survey.questions[1].show_if = Some(ShowIf {
            question: "smoker".into(),
            condition: Condition::Equals(ConditionValue::Text("yes".into())),
        });
        survey.questions[3].show_if = Some(ShowIf {
            question: "drinks".into(),
            condition: Condition::Range {
                min: 10.0,
                max: 100.0,
            },
        });
        survey.validate().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let (mut hidden, mut shown) = ([0usize; 5], [0usize; 5]);
        for _ in 0..500 {
            let answers = simulated_answers(&survey, &mut rng);
            survey.encode(&answers).unwrap();
            let visible = survey.shown(&answers);
            for (i, (a, v)) in answers.iter().zip(&visible).enumerate() {
                if *v {
                    shown[i] += 1;
                } else {
                    assert_eq!(*a, Answer::Skipped);
                    hidden[i] += 1;
                }
            }
            if answers[0] == Answer::YesNo(false) {
                assert!(!visible[1] && !visible[3]);
            }
        }
        assert_eq!(hidden[0] + hidden[2] + hidden[4], 0);
        for i in [1, 3] {
            assert!(
                hidden[i] > 0 && shown[i] > 0,
                "question {i}: {hidden:?} {shown:?}"
            );
        }
    }

    #[test]
    fn the_normal_cdf_has_its_tabled_values() {
        // Abramowitz and Stegun, Table 26.1.
        assert_eq!(standard_normal_cdf(0.0), 0.5);
        assert!((standard_normal_cdf(1.0) - 0.841_344_746_068_543).abs() < ULPS_BELOW_ONE);
        assert!((standard_normal_cdf(-1.959_963_984_540_054) - 0.025).abs() < ULPS_BELOW_ONE);
    }
}
