//! A masked release of two labelled questions and a hand-written data package: the analyst
//! view's tables carry the labels, with the counts of the raw answers worked out by hand, and the
//! exports compute the same tables from the package.

use super::*;
use crate::model::analysis::{AnalysisRequest, analyze};
use crate::model::exports::{python_snippet, r_snippet};
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};

/// Eight records of (smoker, exercise = Often): by hand, yes × Never 1, yes × Often 2,
/// no × Never 2, no × Often 3.
const RAW: [[f64; 2]; 8] = [
    [1.0, 1.0],
    [1.0, 0.0],
    [0.0, 1.0],
    [0.0, 1.0],
    [0.0, 0.0],
    [1.0, 1.0],
    [0.0, 0.0],
    [0.0, 1.0],
];

/// The package as `orthomask_survey::datapackage` writes it (the parts the view reads).
const PACKAGE: &str = r#"{
  "profile": "data-package", "name": "habits", "description": "test",
  "resources": [{
    "name": "release", "path": "release.csv", "profile": "tabular-data-resource",
    "format": "csv", "mediatype": "text/csv", "encoding": "utf-8", "description": "test",
    "orthomask:factors": [
      {"name": "smoker", "levels": [
        {"label": "yes", "indicator": {"constant": 0, "terms": [{"column": "smoker", "coefficient": 1}]}},
        {"label": "no", "indicator": {"constant": 1, "terms": [{"column": "smoker", "coefficient": -1}]}}]},
      {"name": "exercise", "levels": [
        {"label": "Never", "indicator": {"constant": 1, "terms": [{"column": "exercise=Often", "coefficient": -1}]}},
        {"label": "Often", "indicator": {"constant": 0, "terms": [{"column": "exercise=Often", "coefficient": 1}]}}]}
    ]
  }]
}"#;

fn masked_release() -> String {
    let mut data = DMatrix::from_fn(RAW.len(), 2, |i, j| RAW[i][j]);
    FixedSubspaceHaar::keyed(
        &DMatrix::from_element(RAW.len(), 1, 1.0),
        Key::teaching(29).stream(StreamId::CollectorLeftMask),
    )
    .unwrap()
    .left_apply(&mut data)
    .unwrap();
    let mut text = String::from("smoker,exercise=Often\n");
    for row in data.row_iter() {
        text.push_str(&format!("{},{}\n", row[0], row[1]));
    }
    text
}

fn request(package: Option<&str>) -> AnalysisRequest {
    AnalysisRequest {
        data: NamedText {
            name: "release.csv".into(),
            text: masked_release(),
        },
        original: None,
        manifest: None,
        package: package.map(|text| NamedText {
            name: "datapackage.json".into(),
            text: text.into(),
        }),
        y: None,
        x: Vec::new(),
    }
}

#[test]
fn tables_carry_the_packages_labels_and_the_raw_counts() {
    let r = analyze(&request(Some(PACKAGE)), &mut |_, _| {}).unwrap();
    let [Ok(t)] = &r.tables[..] else {
        panic!("{:?}", r.tables)
    };
    assert_eq!(
        (t.rows.as_str(), t.columns.as_str()),
        ("smoker", "exercise")
    );
    assert_eq!(t.row_levels, ["yes", "no"]);
    assert_eq!(t.column_levels, ["Never", "Often"]);
    assert_eq!(t.integer_counts, Some(vec![vec![1, 2], vec![2, 3]]));
    // The released columns are not codes.
    assert!(masked_release().lines().nth(1).unwrap().contains('.'));
    let rs = r_snippet(&r);
    assert!(rs.contains("pkg <- fromJSON(\"datapackage.json\""), "{rs}");
    assert!(
        rs.contains("print(labelled_table(\"smoker\", \"exercise\"))"),
        "{rs}"
    );
    assert!(!rs.contains("2x2 table of"), "{rs}");
    let py = python_snippet(&r);
    assert!(
        py.contains("pkg = json.loads(read_text(\"datapackage.json\"))"),
        "{py}"
    );
    assert!(
        py.contains("print(labelled_table(\"smoker\", \"exercise\"))"),
        "{py}"
    );
}

#[test]
fn without_a_package_the_tables_stay_those_of_binary_columns_and_a_bad_one_is_one_line() {
    let r = analyze(&request(None), &mut |_, _| {}).unwrap();
    assert!(r.package.is_none());
    assert!(!r_snippet(&r).contains("fromJSON"));
    let r = analyze(&request(Some("{\"resources\": 3}")), &mut |_, _| {}).unwrap();
    let [Err(e)] = &r.tables[..] else {
        panic!("{:?}", r.tables)
    };
    assert!(
        e.starts_with("datapackage.json: not a data package") && !e.contains('\n'),
        "{e}"
    );
    // A package naming a column the release lacks.
    let other = PACKAGE.replace("\"column\": \"smoker\"", "\"column\": \"smokes\"");
    let r = analyze(&request(Some(&other)), &mut |_, _| {}).unwrap();
    let [Err(e)] = &r.tables[..] else {
        panic!("{:?}", r.tables)
    };
    assert!(
        e.contains("\"smoker\" names a column the release lacks"),
        "{e}"
    );
}
