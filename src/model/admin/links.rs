//! What the page offers once a survey has invitations or a release: the invitations as CSV, the
//! analyst and audit views' links (`#/analyze?data=…&y=…&x=…`, `#/audit?data=…&manifest=…`, the
//! parameters `pages::analyze` and `pages::audit` read) and the published receipt lists.

use orthomask_survey::api::Invitation;

/// The invitations as CSV: `participant_url,token`, one participant per row.
pub fn invitations_csv(invitations: &[Invitation]) -> String {
    let mut out = String::from("participant_url,token\n");
    for i in invitations {
        out.push_str(&csv_field(&i.participant_url));
        out.push(',');
        out.push_str(&csv_field(&i.token));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it must be (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Percent-encode a query parameter's value (everything but RFC 3986's unreserved characters).
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The model the analyst link opens: the first column that is not binary is the response
/// (the first column when all are), every other column but `QA` a predictor.
pub fn default_model(columns: &[String], binary: &[String]) -> Option<(String, Vec<String>)> {
    let data: Vec<&String> = columns.iter().filter(|c| c.as_str() != "QA").collect();
    let y = data
        .iter()
        .find(|c| !binary.contains(c))
        .or(data.first())
        .copied()?;
    let x = data
        .iter()
        .filter(|c| *c != &y)
        .map(|c| (*c).clone())
        .collect();
    Some((y.clone(), x))
}

/// The analyst view of `release` with response `y` and predictors `x`.
pub fn analyst_link(release: &str, y: &str, x: &[String]) -> String {
    let x = x.iter().map(|c| encode(c)).collect::<Vec<_>>().join(",");
    format!("#/analyze?data={}&y={}&x={x}", encode(release), encode(y))
}

/// [`analyst_link`] with the release's data package, whose labels name the tables' levels.
pub fn labelled_analyst_link(release: &str, package: &str, y: &str, x: &[String]) -> String {
    format!(
        "{}&package={}",
        analyst_link(release, y, x),
        encode(package)
    )
}

/// The audit view of `release` and its `manifest`.
pub fn audit_link(release: &str, manifest: &str) -> String {
    format!(
        "#/audit?data={}&manifest={}",
        encode(release),
        encode(manifest)
    )
}

/// The receipt list of `cohort` at every service that took uploads: the provider (basic
/// protocol) or each right-masking service (share mode), as `openapi.yaml`'s
/// `GET /api/surveys/{survey}/cohorts/{cohort}/receipts`.
pub fn receipt_lists(
    survey: &str,
    cohort: u32,
    share_services: usize,
    msp: &str,
    rights: &[String],
) -> Vec<String> {
    let bases: Vec<&str> = if share_services == 0 {
        vec![msp]
    } else {
        rights
            .iter()
            .take(share_services)
            .map(String::as_str)
            .collect()
    };
    bases
        .into_iter()
        .map(|b| {
            format!(
                "{}/api/surveys/{survey}/cohorts/{cohort}/receipts",
                b.trim_end_matches('/')
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invitations_become_one_row_each() {
        let inv = |t: &str| Invitation {
            token: t.into(),
            definition_url: "http://c/api/surveys/s/definition".into(),
            participant_url: format!("http://c/#/participate?survey=s&invite={t}"),
        };
        assert_eq!(
            invitations_csv(&[inv("ab"), inv("cd")]),
            "participant_url,token\nhttp://c/#/participate?survey=s&invite=ab,ab\nhttp://c/#/participate?survey=s&invite=cd,cd\n"
        );
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }

    #[test]
    fn the_analyst_link_names_a_numeric_response_and_the_other_columns() {
        let cols: Vec<String> = ["smoker", "age", "region=s", "mood", "mood_answered", "QA"]
            .map(String::from)
            .into();
        let binary: Vec<String> = ["smoker", "region=s", "mood_answered"]
            .map(String::from)
            .into();
        let (y, x) = default_model(&cols, &binary).unwrap();
        assert_eq!(
            (y.as_str(), x.join(",")),
            ("age", "smoker,region=s,mood,mood_answered".to_owned())
        );
        assert_eq!(
            analyst_link("http://127.0.0.1:9/api/surveys/s/release.csv", &y, &x),
            "#/analyze?data=http%3A%2F%2F127.0.0.1%3A9%2Fapi%2Fsurveys%2Fs%2Frelease.csv&y=age&x=smoker,region%3Ds,mood,mood_answered"
        );
        assert_eq!(
            labelled_analyst_link("http://c/r.csv", "http://c/d.json", "y", &[]),
            "#/analyze?data=http%3A%2F%2Fc%2Fr.csv&y=y&x=&package=http%3A%2F%2Fc%2Fd.json"
        );
        // All binary: the first column is the response.
        let (y, x) = default_model(&cols[..1], &binary).unwrap();
        assert_eq!((y.as_str(), x.len()), ("smoker", 0));
        assert_eq!(default_model(&[], &[]), None);
    }

    #[test]
    fn the_audit_link_and_the_receipt_lists() {
        assert_eq!(
            audit_link("http://c/r.csv", "http://c/m.json"),
            "#/audit?data=http%3A%2F%2Fc%2Fr.csv&manifest=http%3A%2F%2Fc%2Fm.json"
        );
        let rights = vec!["http://r0/".to_owned(), "http://r1".to_owned()];
        assert_eq!(
            receipt_lists("s", 2, 0, "http://m/", &rights),
            ["http://m/api/surveys/s/cohorts/2/receipts"]
        );
        assert_eq!(
            receipt_lists("s", 0, 2, "http://m", &rights),
            [
                "http://r0/api/surveys/s/cohorts/0/receipts",
                "http://r1/api/surveys/s/cohorts/0/receipts"
            ]
        );
    }
}
