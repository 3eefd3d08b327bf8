//! The analyst view (`#/analyze?data=URL&y=COL&x=COL,COL[&original=URL][&manifest=URL][&package=URL]`): load a
//! release by picker, drag and drop or URL; pick variables; regression, contingency tables,
//! logistic regression, audit summary, plots; exports. All computing runs in the worker.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::file_picker::FilePicker;
use crate::components::input::{target_checked, target_value};
use crate::components::plot_canvas::PlotCanvas;
use crate::components::progress::JobProgress;
use crate::components::save_button::SaveButton;
use crate::components::tables::CoefficientTable;
use crate::context::{JobStatus, use_job, use_query};
use crate::model::analysis::{
    AnalysisRequest, AnalysisResult, DeclaredTest, ExactTests, TableSummary,
};
use crate::model::audit::NamedText;
use crate::model::exports::{coefficients_csv, python_snippet, r_snippet, result_json};
use crate::model::format::{exact, p_value, sig};
use crate::model::jobs::{Job, Output};
use crate::plots::Plot;
use crate::services::{http, query};
use crate::state::{AnalysisAction, AnalysisState, Slot};

/// The analyst page.
#[function_component(Analyze)]
pub fn analyze() -> Html {
    let params = use_query();
    let state = use_reducer(AnalysisState::default);
    let job = use_job();

    // Deep link: fetch the files and set the model once.
    {
        let dispatch = state.dispatcher();
        use_effect_with(params.clone(), move |params| {
            let y = query::get(params, "y");
            let x = query::list(params, "x");
            if y.is_some() || !x.is_empty() {
                dispatch.dispatch(AnalysisAction::SetModel(y, x));
            }
            for (key, slot) in [
                ("data", Slot::Data),
                ("original", Slot::Original),
                ("manifest", Slot::Manifest),
                ("package", Slot::Package),
            ] {
                if let Some(url) = query::get(params, key) {
                    let dispatch = dispatch.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        match http::get_text(&url).await {
                            Ok(text) => dispatch.dispatch(AnalysisAction::Loaded(
                                slot,
                                Rc::new(NamedText { name: url, text }),
                            )),
                            Err(e) => dispatch.dispatch(AnalysisAction::LoadFailed(e)),
                        }
                    });
                }
            }
        });
    }
    // Re-run whenever the files or the model change.
    {
        let job = job.clone();
        let key = (
            state.data.clone(),
            state.original.clone(),
            state.manifest.clone(),
            state.package.clone(),
            state.y.clone(),
            state.x.clone(),
        );
        use_effect_with(key, move |(data, original, manifest, package, y, x)| {
            if let Some(data) = data {
                job.run(Job::Analyze(AnalysisRequest {
                    data: (**data).clone(),
                    original: original.as_deref().cloned(),
                    manifest: manifest.as_deref().cloned(),
                    package: package.as_deref().cloned(),
                    y: y.clone(),
                    x: x.clone(),
                }));
            }
        });
    }

    let loader = |slot: Slot| {
        let d = state.dispatcher();
        Callback::from(move |t: NamedText| d.dispatch(AnalysisAction::Loaded(slot, Rc::new(t))))
    };
    let on_error = {
        let d = state.dispatcher();
        Callback::from(move |e: String| d.dispatch(AnalysisAction::LoadFailed(e)))
    };
    let failed = matches!(job.status(), JobStatus::Failed(_));
    let result = job.output().filter(|_| !failed).and_then(|o| match &*o {
        Output::Analysis(r) => Some((**r).clone()),
        _ => None,
    });
    html! {
        <section class="analyze">
            <h1>{ "Analyse a masked release" }</h1>
            <p>{ "The release keeps the raw data's means and cross-products, so regressions and 2×2 tables computed here equal those of the raw answers. Everything is computed in this browser." }</p>
            <div class="pickers no-print">
                <FilePicker id="data" label="Released data (CSV)" on_load={loader(Slot::Data)} on_error={on_error.clone()}
                    loaded={state.data.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
                <FilePicker id="original" label="Original data, if you have it (CSV, optional)" on_load={loader(Slot::Original)} on_error={on_error.clone()}
                    loaded={state.original.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
                <FilePicker id="manifest" label="Release manifest (JSON, optional)" accept=".json,application/json" on_load={loader(Slot::Manifest)} on_error={on_error.clone()}
                    loaded={state.manifest.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
                <FilePicker id="package" label="Data package, for the questions' labels (datapackage.json, optional)" accept=".json,application/json" on_load={loader(Slot::Package)} on_error={on_error}
                    loaded={state.package.as_ref().map(|d| AttrValue::from(d.name.clone()))} />
            </div>
            if let Some(e) = &state.error { <p class="error" role="alert">{ e }</p> }
            <JobProgress status={job.status().clone()} label="Analysing" />
            if let Some(r) = result { { results(&r, &state) } }
        </section>
    }
}

fn results(r: &AnalysisResult, state: &UseReducerHandle<AnalysisState>) -> Html {
    // The model as chosen (the reducer), or as the analysis defaulted it before any choice.
    let (y, x) = match &state.y {
        Some(y) => (y.clone(), state.x.clone()),
        None => (r.y.clone(), r.x.clone()),
    };
    let adopt_defaults = {
        let (d, chosen, ry, rx) = (
            state.dispatcher(),
            state.y.is_some(),
            r.y.clone(),
            r.x.clone(),
        );
        move || {
            if !chosen {
                d.dispatch(AnalysisAction::SetModel(Some(ry.clone()), rx.clone()));
            }
        }
    };
    let on_y = {
        let (d, adopt) = (state.dispatcher(), adopt_defaults.clone());
        Callback::from(move |e: Event| {
            adopt();
            d.dispatch(AnalysisAction::SetY(target_value(&e)));
        })
    };
    let predictors = r.headers.iter().filter(|h| **h != y).map(|h| {
        let (d, adopt) = (state.dispatcher(), adopt_defaults.clone());
        let name = h.clone();
        let id = format!("x-{h}");
        html! {
            <label for={id.clone()} class="check">
                <input type="checkbox" id={id} checked={x.contains(h)}
                    onchange={Callback::from(move |e: Event| { let _ = target_checked(&e); adopt(); d.dispatch(AnalysisAction::ToggleX(name.clone())) })} />
                { h }
            </label>
        }
    });
    let stem = r
        .name
        .rsplit('/')
        .next()
        .unwrap_or("release")
        .trim_end_matches(".csv")
        .to_owned();
    html! {
        <>
            <p class="summary">{ format!("{}: {} records, {} columns{}.", r.name, r.n, r.headers.len(),
                r.decimals.map_or_else(|| ", full precision".to_owned(), |d| format!(", printed to {d} decimals"))) }</p>
            <fieldset class="variables no-print">
                <legend>{ "Model" }</legend>
                <label for="response">{ "Response " }
                    <select id="response" onchange={on_y}>
                        { for r.headers.iter().map(|h| html! { <option value={h.clone()} selected={*h == y}>{ h }</option> }) }
                    </select>
                </label>
                <div class="predictors" role="group" aria-label="Predictors">{ "Predictors: " }{ for predictors }</div>
            </fieldset>
            { linear_section(r) }
            { figure2(r) }
            { diagnostics(r) }
            { exact_tests_section(r) }
            { tables_section(r) }
            { logistic_section(r) }
            { audit_section(r) }
            <section class="exports no-print">
                <h2>{ "Export" }</h2>
                if let Ok(s) = &r.linear {
                    <SaveButton label="Coefficients (CSV)" file_name={format!("{stem}-coefficients.csv")} mime="text/csv" text={coefficients_csv(s)} />
                }
                <SaveButton label="All results (JSON)" file_name={format!("{stem}-analysis.json")} mime="application/json" text={result_json(r)} />
                <SaveButton label="R script" file_name={format!("{stem}-analysis.R")} mime="text/plain" text={r_snippet(r)} />
                <SaveButton label="Python script" file_name={format!("{stem}-analysis.py")} mime="text/plain" text={python_snippet(r)} />
                <details><summary>{ "R" }</summary><pre data-testid="r-snippet">{ r_snippet(r) }</pre></details>
                <details><summary>{ "Python" }</summary><pre data-testid="python-snippet">{ python_snippet(r) }</pre></details>
            </section>
        </>
    }
}

fn linear_section(r: &AnalysisResult) -> Html {
    match &r.linear {
        Err(e) => {
            html! { <section><h2>{ "Linear regression" }</h2><p class="error" role="alert">{ e }</p></section> }
        }
        Ok(s) => {
            let text = s
                .coefficients
                .iter()
                .map(|c| format!("{} = {}", c.name, exact(c.estimate)))
                .collect::<Vec<_>>()
                .join("; ");
            html! {
                <section class="linear">
                    <h2>{ format!("Linear regression of {} on {}", s.response, s.predictors.join(", ")) }</h2>
                    <CoefficientTable rows={s.coefficients.clone()} statistic="t" caption={format!("n = {}, residual df = {}", s.n, s.df_resid)} test_id="linear-coefficients" />
                    <p>{ format!("R² = {}, adjusted R² = {}, residual standard error = {}", sig(s.r_squared, 6), sig(s.adj_r_squared, 6), sig(s.sigma, 6)) }
                        if let (Some(f), Some(p)) = (s.f_statistic, s.f_p_value) { { format!(", F = {} (p = {})", sig(f, 5), p_value(p)) } }
                    </p>
                    <p class="coefficients-text" data-testid="coefficients-text">{ format!("Coefficients: {text}") }</p>
                </section>
            }
        }
    }
}

fn figure2(r: &AnalysisResult) -> Html {
    if r.figure2.is_empty() {
        return html! {};
    }
    html! {
        <section class="figure2">
            <h2>{ "Scatter plots with the fitted line" }</h2>
            <p>{ if r.figure2.len() > 1 { "Left: the original data; right: the masked release. The points are scrambled, yet the fitted line is the same (seed 003, Figure 2)." } else { "Load the original data as well to see it side by side with the release (seed 003, Figure 2)." } }</p>
            <div class="side-by-side">
                { for r.figure2.iter().enumerate().map(|(k, p)| match p {
                    Ok(panel) => html! {
                        <div class="panel">
                            <PlotCanvas plot={Rc::new(Plot::Scatter(panel.clone()))} name={format!("figure2-{k}")} />
                            <p class="equation" data-testid="equation">{ panel.equation() }</p>
                        </div>
                    },
                    Err(e) => html! { <p class="error" role="alert">{ e }</p> },
                }) }
            </div>
        </section>
    }
}

fn diagnostics(r: &AnalysisResult) -> Html {
    match &r.diagnostics {
        // A release alone: one line saying why there are no per-row diagnostics (issue 22 §2).
        Err(why) => html! {
            <section class="diagnostics">
                <h2>{ "Residual diagnostics" }</h2>
                <p class="small" data-testid="no-row-diagnostics">{ why }</p>
            </section>
        },
        Ok(d) => html! {
            <section class="diagnostics">
                <h2>{ "Residual diagnostics of the original data" }</h2>
                <p class="small" data-testid="row-diagnostics-source">{ "The same model fitted on the original data you loaded: a release's residuals are a random rotation of these, so only the original shows their shape." }</p>
                <div class="side-by-side">
                    <PlotCanvas plot={Rc::new(Plot::ResidualsVsFitted(d.residual_vs_fitted.clone()))} name="residuals" />
                    <PlotCanvas plot={Rc::new(Plot::NormalQq(d.qq.clone()))} name="qq" />
                </div>
                if d.total_points > d.residual_vs_fitted.len() {
                    <p class="small">{ format!("Showing {} of {} points.", d.residual_vs_fitted.len(), d.total_points) }</p>
                }
            </section>
        },
    }
}

/// What the release gives exactly about the model (issue 22 §2): AIC/BIC, VIFs, the residuals'
/// correlation with the columns not in the model, and the F test of dropping each predictor.
fn exact_tests_section(r: &AnalysisResult) -> Html {
    let Ok(t) = &r.exact_tests else {
        // The linear section already says why the model could not be fitted.
        return html! {};
    };
    let number = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| sig(v, 6));
    html! {
        <section class="exact-tests" data-testid="exact-tests">
            <h2>{ "Exact tests on the release" }</h2>
            <p class="small">{ "Functions of the columns' cross-products and means, which the mask keeps: the release gives the same numbers as the original data." }</p>
            <p data-testid="information-criteria">{ format!("log-likelihood = {}, AIC = {}, BIC = {} (normal errors)", number(t.log_likelihood), number(t.aic), number(t.bic)) }</p>
            { match &t.drop_tests {
                Ok(rows) if !rows.is_empty() => html! {
                    <table data-testid="drop-tests">
                        <caption>{ "F test of dropping each predictor (the model against the model without it), with its variance inflation factor" }</caption>
                        <thead><tr><th scope="col">{ "predictor" }</th><th scope="col">{ "F" }</th><th scope="col">{ "df" }</th><th scope="col">{ "p" }</th><th scope="col">{ "VIF" }</th></tr></thead>
                        <tbody>
                            { for rows.iter().map(|row| {
                                let vif = t.vif.as_ref().ok().and_then(|v| v.iter().find(|v| v.name == row.name)).map(|v| v.vif);
                                html! {
                                    <tr>
                                        <th scope="row">{ &row.name }</th>
                                        <td>{ number(row.f) }</td>
                                        <td>{ format!("{}, {}", row.df, row.df_resid) }</td>
                                        <td>{ row.p.map_or_else(|| "—".to_owned(), p_value) }</td>
                                        <td>{ number(vif) }</td>
                                    </tr>
                                }
                            }) }
                        </tbody>
                    </table>
                },
                Ok(_) => html! {},
                Err(e) => html! { <p class="error">{ e }</p> },
            } }
            if let Err(e) = &t.vif {
                <p class="small">{ format!("No variance inflation factors: {e}") }</p>
            }
            { declared_tests_table(r, t) }
            if !t.residual_correlations.is_empty() {
                <p data-testid="residual-correlations">{ "Correlation of the residuals with the columns not in the model (far from zero: the column, or a function of it, may belong in the model): " }
                    { t.residual_correlations.iter().map(|c| format!("{} {}", c.column, c.correlation.map_or_else(|| "— (constant)".to_owned(), |v| sig(v, 4)))).collect::<Vec<_>>().join(", ") }
                </p>
            }
        </section>
    }
}

/// The tests of the survey's declared terms (RESET on powers, Chow on groups), when the model
/// has any and the manifest declares them.
fn declared_tests_table(r: &AnalysisResult, t: &ExactTests) -> Html {
    if t.declared_tests.is_empty() {
        return html! {};
    }
    let number = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| sig(v, 6));
    html! {
        <table data-testid="declared-tests">
            <caption>{ "F tests of the model terms the survey declared (computed on the devices, so exact on the release)" }</caption>
            <thead><tr><th scope="col">{ "test" }</th><th scope="col">{ "against" }</th><th scope="col">{ "F" }</th><th scope="col">{ "df" }</th><th scope="col">{ "p" }</th></tr></thead>
            <tbody>
                { for t.declared_tests.iter().map(|row| match row {
                    Ok(row) => {
                        let (kind, title) = match &row.test {
                            DeclaredTest::Reset => ("reset".to_owned(), format!("RESET-style: the powers {}", row.added.join(", "))),
                            DeclaredTest::Chow { group } => (format!("chow:{group}"), format!("Chow: the group {group} ({})", row.added.join(", "))),
                        };
                        let reduced = if row.reduced.is_empty() { "1".to_owned() } else { row.reduced.join(" + ") };
                        html! {
                            <tr data-test={kind}>
                                <th scope="row">{ title }</th>
                                <td>{ format!("{} ~ {reduced}", r.y) }</td>
                                <td class="f" data-exact={row.f.map(|f| f.to_string())}>{ number(row.f) }</td>
                                <td>{ format!("{}, {}", row.df, row.df_resid) }</td>
                                <td class="p" data-exact={row.p.map(|p| p.to_string())}>{ row.p.map_or_else(|| "—".to_owned(), p_value) }</td>
                            </tr>
                        }
                    }
                    Err(e) => html! { <tr><td colspan="5" class="error">{ e }</td></tr> },
                }) }
            </tbody>
        </table>
    }
}

/// Six significant digits without trailing zeros (`6`, not `6.00000`).
fn cell(value: f64) -> String {
    let text = sig(value, 6);
    if text.contains('.') && !text.contains('e') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// The cells of a table as the page prints them: integers when the release holds 0/1 columns
/// (it does to within rounding, so no `6.0000001` or `-0`), else six significant digits.
fn printed_cells(t: &TableSummary) -> Vec<Vec<String>> {
    match &t.integer_counts {
        Some(rows) => rows
            .iter()
            .map(|r| r.iter().map(u64::to_string).collect())
            .collect(),
        None => t
            .counts
            .iter()
            .map(|r| r.iter().map(|c| cell(*c)).collect())
            .collect(),
    }
}

/// A 2×2 table with totals, χ² and, for tables of counts, Fisher's exact test.
pub fn counts_table(t: &TableSummary) -> Html {
    let cells = printed_cells(t);
    let total = |values: Vec<f64>| -> String {
        let sum: f64 = values.iter().sum();
        if t.integer_counts.is_some() {
            format!("{}", sum.round().abs())
        } else {
            cell(sum)
        }
    };
    let row_totals: Vec<String> = t.counts.iter().map(|r| total(r.clone())).collect();
    let col_totals: Vec<String> = (0..t.column_levels.len())
        .map(|j| total(t.counts.iter().map(|r| r[j]).collect()))
        .collect();
    let sparse = t.smallest_expected.is_some_and(|e| e < 5.0);
    html! {
        <div class="table-scroll"><table class="counts" data-rows={t.rows.clone()} data-columns={t.columns.clone()}>
            <caption>{ format!("{} × {}", t.rows, t.columns) }
                if let Some((chi, p)) = t.chi_square { { format!(" — χ² = {}, p = {}", sig(chi, 4), p_value(p)) } }
                if let Some(f) = &t.fisher {
                    <span class="fisher">{ format!(
                        "; Fisher's exact test p = {}, odds ratio {} (95 % CI {} to {})",
                        p_value(f.p_value),
                        f.odds_ratio.map_or_else(|| "∞".to_owned(), |v| sig(v, 4)),
                        sig(f.ci_low, 4),
                        f.ci_high.map_or_else(|| "∞".to_owned(), |v| sig(v, 4))
                    ) }</span>
                }
                if sparse {
                    <span class="warning">{ format!(
                        " — an expected count is {} (below 5): read Fisher's exact test, not χ²",
                        sig(t.smallest_expected.unwrap_or_default(), 3)
                    ) }</span>
                }
            </caption>
            <thead><tr><th></th>
                { for t.column_levels.iter().map(|l| html! { <th scope="col">{ format!("{} = {l}", t.columns) }</th> }) }
                <th scope="col">{ "total" }</th></tr></thead>
            <tbody>
                { for cells.iter().enumerate().map(|(i, row)| html! {
                    <tr><th scope="row">{ format!("{} = {}", t.rows, t.row_levels[i]) }</th>
                        { for row.iter().map(|c| html! { <td>{ c }</td> }) }
                        <td>{ row_totals[i].clone() }</td></tr>
                }) }
                <tr><th scope="row">{ "total" }</th>{ for col_totals.iter().map(|c| html! { <td>{ c }</td> }) }<td>{ t.n }</td></tr>
            </tbody>
        </table></div>
    }
}

fn tables_section(r: &AnalysisResult) -> Html {
    let tables = &r.tables;
    html! {
        <section class="tables">
            if let Some(p) = &r.package {
                <h2>{ "Contingency tables of the questions, with their labels" }</h2>
                <p class="small" data-testid="labelled-tables">{ format!(
                    "Labels from {}. Each level's count comes from cross-products of the released columns, which equal the raw ones; the released columns themselves are masked numbers, not codes.",
                    p.name
                ) }</p>
            } else {
                <h2>{ "Contingency tables of binary columns" }</h2>
            }
            if tables.is_empty() {
                <p>{ "No pair of binary columns was found (a released 0/1 column keeps Σx = Σx² = its count)." }</p>
            }
            <div class="side-by-side">
                { for tables.iter().map(|t| match t {
                    Ok(t) => counts_table(t),
                    Err(e) => html! { <p class="error">{ e }</p> },
                }) }
            </div>
        </section>
    }
}

fn logistic_section(r: &AnalysisResult) -> Html {
    html! {
        <section class="logistic">
            <h2>{ "Logistic regression" }</h2>
            { match &r.logistic {
                Ok(l) => html! {
                    <>
                        <CoefficientTable rows={l.coefficients.clone()} statistic="z" caption={format!("{} on {}: deviance {} (null {}), {} iterations", l.response, r.x.join(", "), sig(l.deviance, 6), sig(l.null_deviance, 6), l.iterations)} test_id="logistic-coefficients" />
                    </>
                },
                Err(e) => html! { <p>{ format!("Not available for this response: {e}") }</p> },
            } }
        </section>
    }
}

fn audit_section(r: &AnalysisResult) -> Html {
    html! {
        <section class="audit-summary">
            <h2>{ "Audit summary" }</h2>
            { match &r.audit {
                Ok(a) => {
                    let (pass, warn, fail) = a.tally();
                    html! {
                        <>
                            <p class={classes!("status", a.overall.clone())}>{ format!("{} — {pass} passed, {warn} warnings, {fail} failed", a.overall.to_uppercase()) }</p>
                            <ul>{ for a.checks.iter().filter(|c| c.status != "pass").map(|c| html! { <li><strong>{ &c.status }</strong>{ format!(" {}: {}", c.id, c.detail) }</li> }) }</ul>
                        </>
                    }
                }
                Err(e) => html! { <p class="error">{ e }</p> },
            } }
        </section>
    }
}
