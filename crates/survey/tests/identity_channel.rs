//! Issue 43's adversarial review: the channel below every allowance, through exact identities
//! (`docs/threat-model.md`, "The adversarial review"), and how the collector closes it.
//!
//! The provider alone — holding its own key, hence `A₂,k`, and the cohort's uploads `x_iB_k` —
//! adds `δ·u·(x_jB_k)` to its batch with `u = A₂,k e_j`. After the collector removes `B_k`, the
//! cohort's yes/no column is `A₂x + δ·u·x_j` (in the device's units), whose sum over the records
//! is the honest count plus `±δ/2` in declared units: a count of yes answers is a whole number,
//! so a release of these statistics is off a whole number by a signed amount that says
//! participant `j`'s answer. `δ` is far below every allowance: QA, the padding check and the
//! cohort check all pass. The collector therefore releases the cohort **snapped**
//! (`CohortCheck::snap`): every identity the check decided is made exact, so the count is the
//! honest whole number and nothing is read.

use nalgebra::DMatrix;
use orthomask_core::key::Key;
use orthomask_core::protocol::tm2::{
    DataCollector, MaskingServiceProvider, Participant, UnmaskedCohort,
};
use orthomask_survey::coding::Answer;
use orthomask_survey::cohort_check::{CohortCheck, CohortMoments, Units};
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use orthomask_survey::padding_check::PaddingCheck;
use orthomask_survey::policy::UPLOAD_FALSE_REFUSAL;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

/// The provider's perturbation, on the device's scale: about thirty times below the cohort
/// check's rounding allowance for a yes/no column's count in this design (3.3·10⁻¹¹; at 10⁻¹⁰
/// the check refuses the cohort, "off its lattice"), and about a thousand times above the
/// rounding of a count of twelve — some fifteen bits a cohort for each such identity.
const DELTA: f64 = 1e-12;

/// How far a released count of twelve may lie from a whole number by the release's own rounding
/// (`A₁`, the snap, the sum): a hundred times below `δ/2`, so no answer is read from it.
const COUNT_ROUNDING: f64 = 5e-15;

#[test]
fn a_provider_perturbing_below_every_allowance_reads_nothing_from_the_snapped_release() {
    let draft: SurveyDraft = serde_json::from_value(serde_json::json!({
        "id": "identity", "title": "Identity channel", "consent": "Test.",
        "questions": [
            {"id": "smoker", "label": "Do you smoke?", "kind": "yes_no"},
            {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250}
        ],
        "cohort_size": 12, "invitations": true, "share_mode": false,
    }))
    .unwrap();
    let planned = plan_survey(
        &draft,
        Endpoints {
            provider: "https://msp.example",
            right_services: &[],
        },
    )
    .unwrap();
    let definition = planned.template;
    let design = definition.design().unwrap();
    let collector = DataCollector::new(Key::from_bytes([1; 32]), design.clone()).unwrap();
    let provider = MaskingServiceProvider::new(Key::from_bytes([2; 32]), design.clone());
    let b = collector.right_mask(0).unwrap();
    let device = Participant::new(&design, b.as_ref()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    let smokes = |i: usize| i.is_multiple_of(3);
    let uploads: Vec<Vec<f64>> = (0..12)
        .map(|i| {
            let record = definition
                .encode(&[
                    Answer::YesNo(smokes(i)),
                    Answer::Number(20.0 * i as f64 + 7.5),
                ])
                .unwrap();
            device.mask_record(&record, &mut rng).unwrap()
        })
        .collect();
    let batch = DMatrix::from_row_slice(12, design.p(), &uploads.concat());
    let genuine = provider.mask_cohort(0, &batch).unwrap();
    let cohort_check = CohortCheck::new(&definition, UPLOAD_FALSE_REFUSAL).unwrap();
    let padding_check = PaddingCheck::new(&design, UPLOAD_FALSE_REFUSAL).unwrap();

    for target in [0usize, 1] {
        // `u = A₂e_j`: the provider's own mask applied to a matrix whose first column is `e_j`.
        let mut e = DMatrix::zeros(12, design.p());
        e[(target, 0)] = 1.0;
        let u = provider.mask_cohort(0, &e).unwrap().column(0).into_owned();
        let mut forged = genuine.clone();
        for (i, ui) in u.iter().enumerate() {
            for c in 0..design.p() {
                forged[(i, c)] += DELTA * ui * batch[(target, c)];
            }
        }
        // Every check the collector makes passes.
        let leading = collector.unmask_leading(0, &forged).unwrap();
        padding_check
            .check(&forged, &leading)
            .expect("the padding check passes");
        let unmasked = collector
            .unscale_cohort(0, leading, &forged)
            .expect("QA passes");
        let scale = orthomask_core::protocol::qa::max_row_norm(&forged);
        cohort_check
            .check(
                &CohortMoments::of_rows(&unmasked.data, Units::Declared),
                scale,
            )
            .expect("the cohort check passes");
        let honest = (0..12).filter(|&i| smokes(i)).count() as f64;
        // Released as it came, the count of yes answers would be off a whole number by ±δ/2,
        // the sign the target's answer (a yes moves the record's ±1 coordinate up, a no down).
        let count = |data: &DMatrix<f64>| -> f64 {
            let release = collector
                .release(&[UnmaskedCohort {
                    cohort: 0,
                    data: data.clone(),
                    qa: unmasked.qa.clone(),
                }])
                .unwrap();
            release.data.column(0).sum()
        };
        let unsnapped = count(&unmasked.data);
        let off = unsnapped - unsnapped.round();
        assert_eq!(unsnapped.round(), honest);
        assert!(
            (off.abs() - DELTA / 2.0).abs() < 0.05 * DELTA,
            "participant {target}: the count is {unsnapped}, off by {off:e}"
        );
        assert_eq!(off > 0.0, smokes(target), "the channel: {off:e}");
        // Snapped, as the collector stores and releases it: the honest count, to rounding.
        let (snapped, report) = cohort_check.snap(&unmasked.data, scale).unwrap();
        let report = report.expect("no DP: the identities are snapped");
        assert!(report.largest_change < 1e-9, "{report:?}");
        let released = count(&snapped);
        assert!(
            (released - honest).abs() < COUNT_ROUNDING,
            "participant {target}: the snapped count is {released}, off by {:e}",
            released - honest
        );
    }
}
