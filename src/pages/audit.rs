//! The audit view (`#/audit?data=URL&manifest=URL`): `orthomask_stats::audit` in the browser,
//! pass / warn / fail with the numbers behind each check, printable; and "is my upload in the
//! release?": a saved receipt file checked against the manifest with a service's published list
//! or inclusion proof (`model::audit::run_receipt_check`, issue 10 §5); and which app builds
//! produced the records, against the release's `builds.json` (`&builds=URL`, issue 27 §3;
//! `model::audit_builds`).

use std::rc::Rc;

use yew::prelude::*;

use crate::components::file_picker::FilePicker;
use crate::components::progress::JobProgress;
use crate::context::{JobStatus, use_job, use_query};
use crate::model::audit::{NamedText, run_receipt_check};
use crate::model::audit_builds::build_rows;
use crate::model::format::sig;
use crate::model::jobs::{Job, Output};
use crate::services::{http, query};

/// The audit page.
#[function_component(Audit)]
pub fn audit() -> Html {
    let params = use_query();
    let release = use_state(|| None::<Rc<NamedText>>);
    let manifest = use_state(|| None::<Rc<NamedText>>);
    let error = use_state(|| None::<String>);
    let receipt = use_state(|| None::<Rc<NamedText>>);
    let builds = use_state(|| None::<Rc<NamedText>>);
    let evidence = use_state(Vec::<NamedText>::new);
    let job = use_job();
    {
        let (release, manifest, builds, error) = (
            release.setter(),
            manifest.setter(),
            builds.setter(),
            error.setter(),
        );
        use_effect_with(params.clone(), move |params| {
            for (key, target) in [
                ("data", release),
                ("manifest", manifest),
                ("builds", builds),
            ] {
                if let Some(url) = query::get(params, key) {
                    let error = error.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        match http::get_text(&url).await {
                            Ok(text) => target.set(Some(Rc::new(NamedText { name: url, text }))),
                            Err(e) => error.set(Some(e)),
                        }
                    });
                }
            }
        });
    }
    {
        let job = job.clone();
        use_effect_with(((*release).clone(), (*manifest).clone()), move |(r, m)| {
            if let Some(r) = r {
                job.run(Job::Audit {
                    release: (**r).clone(),
                    manifest: m.as_deref().cloned(),
                });
            }
        });
    }
    let set = |target: UseStateHandle<Option<Rc<NamedText>>>| {
        Callback::from(move |t: NamedText| target.set(Some(Rc::new(t))))
    };
    let on_error = {
        let error = error.clone();
        Callback::from(move |e: String| error.set(Some(e)))
    };
    let failed = matches!(job.status(), JobStatus::Failed(_));
    let result = job.output().filter(|_| !failed).and_then(|o| match &*o {
        Output::Audit(a) => Some((**a).clone()),
        _ => None,
    });
    // Cheap (a few hashes): computed here, not in the worker.
    let receipt_check = match (&*manifest, &*receipt) {
        (Some(m), Some(r)) if !evidence.is_empty() => {
            Some(run_receipt_check(m, r, &evidence).map_err(|e| e.to_string()))
        }
        _ => None,
    };
    // Cheap too: the manifest's few builds matched with builds.json.
    let build_check = manifest
        .as_deref()
        .map(|m| build_rows(m, builds.as_deref()))
        .filter(|rows| !matches!(rows, Ok(r) if r.is_empty()));
    let add_evidence = {
        let evidence = evidence.clone();
        Callback::from(move |t: NamedText| {
            let mut all: Vec<NamedText> = (*evidence).clone();
            all.retain(|e| e.name != t.name);
            all.push(t);
            evidence.set(all);
        })
    };
    let evidence_names = (!evidence.is_empty()).then(|| {
        AttrValue::from(
            evidence
                .iter()
                .map(|e| e.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        )
    });
    let on_print = Callback::from(|_| {
        if let Some(w) = web_sys::window() {
            let _ = w.print();
        }
    });
    html! {
        <section class="audit">
            <h1>{ "Audit a release" }</h1>
            <p class="no-print">{ "Checks the quality-assurance column, compares means and cross-products with the manifest, checks that binary columns still give integer counts, and flags small cells and columns that were not masked." }</p>
            <div class="pickers no-print">
                <FilePicker id="audit-data" label="Released data (CSV)" on_load={set(release.clone())} on_error={on_error.clone()}
                    loaded={release.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
                <FilePicker id="audit-manifest" label="Manifest (JSON, optional)" accept=".json,application/json" on_load={set(manifest.clone())} on_error={on_error.clone()}
                    loaded={manifest.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
            </div>
            <h2 class="no-print">{ "Which app builds produced the records?" }</h2>
            <p class="no-print">{ "Every upload names the build of the web app that made it, and the manifest counts them. Give the builds.json kept beside the release (public commit → build digest, from scripts/reproduce.sh) to see whether each is the build of a public commit." }</p>
            <div class="pickers no-print">
                <FilePicker id="audit-builds" label="Public builds (builds.json)" accept=".json,application/json" on_load={set(builds.clone())} on_error={on_error.clone()}
                    loaded={builds.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
            </div>
            if let Some(check) = build_check {
                {{
                    match check {
                        Err(e) => html! { <p class="error" role="alert" data-testid="builds-error">{ e }</p> },
                        Ok(rows) => html! {
                            <div class="report" data-testid="builds-report">
                                <div class="table-scroll"><table class="checks">
                                    <thead><tr><th scope="col">{ "result" }</th><th scope="col">{ "build" }</th><th scope="col">{ "uploads" }</th><th scope="col">{ "details" }</th></tr></thead>
                                    <tbody>
                                        { for rows.iter().map(|r| html! {
                                            <tr class={r.status} data-build={r.digest.clone()}>
                                                <td class="result"><span class={classes!("status", r.status)}>{ match r.status { "pass" => "✓ pass", "warn" => "! warn", _ => "✗ fail" } }</span></td>
                                                <th scope="row"><code class="hash">{ if r.digest.is_empty() { "(none named)" } else { &r.digest } }</code></th>
                                                <td class="numbers">{ r.uploads }</td>
                                                <td>{ &r.detail }</td>
                                            </tr>
                                        }) }
                                    </tbody>
                                </table></div>
                            </div>
                        },
                    }
                }}
            }
            <h2 class="no-print">{ "Is my upload in the release?" }</h2>
            <p class="no-print">{ "Give the manifest above, the receipt file the participant page saved, and the receipt list (or inclusion proof) the service published for your cohort: the list must lead to the root the release records for that cohort and service, and hold your upload." }</p>
            <div class="pickers no-print">
                <FilePicker id="audit-receipt" label="Receipt file (JSON)" accept=".json,application/json" on_load={set(receipt.clone())} on_error={on_error.clone()}
                    loaded={receipt.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
                <FilePicker id="audit-evidence" label="Published receipt list or inclusion proof (JSON; add one per service)" accept=".json,application/json" on_load={add_evidence} on_error={on_error.clone()}
                    loaded={evidence_names} />
            </div>
            if let Some(check) = receipt_check {
                {{
                    match check {
                        Err(e) => html! { <p class="error" role="alert" data-testid="receipt-error">{ e }</p> },
                        Ok(rows) => {
                            let passed = rows.iter().filter(|r| r.status == "pass").count();
                            let overall = if passed == rows.len() { "pass" } else { "fail" };
                            html! {
                                <div class="report" data-testid="receipt-report">
                                    <p class={classes!("status", overall)} data-testid="receipt-overall">
                                        { format!("Receipts: {} — {passed} of {} in the release", overall.to_uppercase(), rows.len()) }
                                    </p>
                                    <div class="table-scroll"><table class="checks">
                                        <thead><tr><th scope="col">{ "result" }</th><th scope="col">{ "receipt" }</th><th scope="col">{ "details" }</th></tr></thead>
                                        <tbody>
                                            { for rows.iter().map(|r| html! {
                                                <tr class={r.status.clone()} data-receipt={r.upload_hash.clone()}>
                                                    <td class="result"><span class={classes!("status", r.status.clone())}>{ if r.status == "pass" { "✓ pass" } else { "✗ fail" } }</span></td>
                                                    <th scope="row">{ format!("cohort {} at {}: {}", r.cohort, r.service, r.upload_hash) }</th>
                                                    <td>{ &r.detail }</td>
                                                </tr>
                                            }) }
                                        </tbody>
                                    </table></div>
                                </div>
                            }
                        }
                    }
                }}
            }
            if let Some(e) = &*error { <p class="error" role="alert">{ e }</p> }
            <JobProgress status={job.status().clone()} label="Auditing" />
            if let Some(a) = result {
                {{
                    let (pass, warn, fail) = a.tally();
                    html! {
                        <div class="report" data-testid="audit-report">
                            <p class={classes!("status", a.overall.clone())} data-testid="overall">
                                { format!("Overall: {} — {pass} passed, {warn} warnings, {fail} failed", a.overall.to_uppercase()) }
                            </p>
                            <p>{ format!("{}: {} rows, columns {}; {}", a.name, a.n, a.columns.join(", "),
                                a.manifest.as_ref().map_or_else(|| "no manifest".to_owned(), |m| format!("compared with {m}"))) }</p>
                            <div class="table-scroll"><table class="checks">
                                <thead><tr><th scope="col">{ "result" }</th><th scope="col">{ "check" }</th><th scope="col">{ "details" }</th><th scope="col">{ "numbers" }</th></tr></thead>
                                <tbody>
                                    { for a.checks.iter().map(|c| html! {
                                        <tr class={c.status.clone()} data-check={c.id.clone()}>
                                            <td class="result"><span class={classes!("status", c.status.clone())}>{ match c.status.as_str() { "pass" => "✓ pass", "warn" => "! warn", _ => "✗ fail" } }</span></td>
                                            <th scope="row">{ &c.id }</th>
                                            <td>{ &c.detail }</td>
                                            <td class="numbers">{ c.numbers.iter().map(|(k, v)| format!("{k} = {}", sig(*v, 6))).collect::<Vec<_>>().join("; ") }</td>
                                        </tr>
                                    }) }
                                </tbody>
                            </table></div>
                            if !a.statements.is_empty() {
                                <section aria-labelledby="stated-title" data-testid="audit-statements">
                                    <h3 id="stated-title">{ "What the manifest states (not checkable from the numbers)" }</h3>
                                    <dl>
                                        { for a.statements.iter().map(|st| html! {
                                            <>
                                                <dt>{ &st.topic }</dt>
                                                <dd data-statement={st.topic.clone()}>{ &st.text }</dd>
                                            </>
                                        }) }
                                    </dl>
                                </section>
                            }
                            <button type="button" class="no-print" onclick={on_print}>{ "Print" }</button>
                        </div>
                    }
                }}
            }
        </section>
    }
}
