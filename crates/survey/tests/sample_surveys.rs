//! Every sample survey shipped in `www/surveys/` parses, validates and builds a masking design.

use orthomask_survey::definition::SurveyDefinition;
use std::path::Path;

#[test]
fn every_sample_survey_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/surveys");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("www/surveys exists") {
        let path = entry.expect("readable directory").path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).expect("readable sample");
            let survey = SurveyDefinition::parse(&text, &path.display().to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            let design = survey.design().expect("the sample's design builds");
            assert_eq!(
                design.answers(),
                survey.columns().len(),
                "{}",
                path.display()
            );
            count += 1;
        }
    }
    assert!(count >= 1, "no samples in {}", dir.display());
}
