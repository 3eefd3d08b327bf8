//! The manifest the services publish records the plan's Appendix C bound of a full cohort. That
//! the services and `orthomask pipeline` write the same manifest for the same design is tested
//! where both can run: `crates/cli/tests/manifest_agreement.rs`.

mod common;

use common::*;
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_formats::manifest::Manifest;

/// Uneven cohorts (12 and 9): the manifest records the plan's Appendix C bound of a full cohort,
/// where γ = p₂/m is smallest and the bound binds — not a bound recomputed for the smallest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_records_the_bound_of_a_full_cohort() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("uneven", 12, false, true)).await;
    for (i, link) in (0..21u64).zip(&links(&http, &all, &created, 21).await) {
        participate(&http, link, i).await;
    }
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/uneven/close").await;
    assert_eq!(status, 200, "{view}");
    let (_, served) = wait_for_release(&http, all.collector.url(), "uneven", 60).await;
    let served = Manifest::parse(&served, "manifest.json").unwrap();
    assert_eq!(served.cohorts.sizes, vec![12, 9]);
    let recorded = served.appendix_c.as_ref().unwrap();
    assert_eq!(
        serde_json::to_value(recorded).unwrap(),
        created["appendix_c"],
        "the manifest's bound is the plan's"
    );
    let p2 = served.p2 as f64;
    assert!((recorded.gamma - p2 / 12.0).abs() < PRESERVED_STATISTICS * p2);
    all.stop().await;
}
