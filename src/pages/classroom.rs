//! The classroom demonstration (`#/classroom`): the 20 LEAPS records of seed 003 Table 2, the
//! four steps with each party's view as tables and heatmaps and who holds which key (seed 000
//! Figure 1), Figure 2 live, Table 6 from the masked data, controls for n, p₂ and σ with the
//! condition (3.7) indicator, the Appendix A attack when p < n, a collusion toggle, and the DP
//! panel. Every computation runs in the worker.

use std::rc::Rc;

use yew::prelude::*;

use super::analyze::counts_table;
use crate::components::input::{target_checked, target_value};
use crate::components::number_control::NumberControl;
use crate::components::plot_canvas::PlotCanvas;
use crate::components::progress::JobProgress;
use crate::components::save_button::SaveButton;
use crate::components::tables::MatrixTable;
use crate::context::{JobStatus, use_job};
use crate::model::analysis::TableSummary;
use crate::model::classroom::{ClassroomMethod, ClassroomResult, KeyChoice, MatrixView, PAPER_KEY};
use crate::model::dp::{DpParams, DpResult};
use crate::model::format::sig;
use crate::model::jobs::{Job, Output};
use crate::plots::Plot;
use crate::services::random;
use crate::state::{ClassroomAction, ClassroomState, step_after_key};

fn heat(view: &MatrixView, name: &str) -> Html {
    html! {
        <PlotCanvas plot={Rc::new(Plot::Heatmap { title: format!("{} (first {} × {})", view.title, view.heat.len(), view.heat.first().map_or(0, Vec::len)), values: view.heat.clone() })}
            width={420} height={300} name={name.to_owned()} />
    }
}

fn number_control(
    id: &str,
    label: &str,
    value: String,
    min: &str,
    step: &str,
    parse: Callback<String>,
) -> Html {
    html! {
        <NumberControl id={id.to_owned()} label={label.to_owned()} value={value} min={min.to_owned()} step={step.to_owned()} on_commit={parse} />
    }
}

/// The classroom page.
#[function_component(Classroom)]
pub fn classroom() -> Html {
    let state = use_reducer(|| ClassroomState {
        step: 1,
        ..ClassroomState::default()
    });
    let job = use_job();
    let dp_job = use_job();
    {
        let job = job.clone();
        use_effect_with(state.params.clone(), move |p| {
            job.run(Job::Classroom(p.clone()))
        });
    }
    {
        let dp_job = dp_job.clone();
        use_effect_with(state.dp.clone(), move |p| dp_job.run(Job::Dp(p.clone())));
    }
    let d = state.dispatcher();
    let positive = |make: fn(usize) -> ClassroomAction, what: &'static str| {
        let d = d.clone();
        Callback::from(move |v: String| match v.trim().parse::<usize>() {
            Ok(n) => d.dispatch(make(n)),
            Err(_) => d.dispatch(ClassroomAction::Invalid(format!(
                "{what}: enter a whole number"
            ))),
        })
    };
    let on_sigma = {
        let d = d.clone();
        Callback::from(move |v: String| match v.trim().parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 => d.dispatch(ClassroomAction::Sigma(s)),
            _ => d.dispatch(ClassroomAction::Invalid(
                "σ: enter a positive number".into(),
            )),
        })
    };
    let on_method = {
        let d = d.clone();
        Callback::from(move |e: Event| {
            d.dispatch(ClassroomAction::Method(if target_value(&e) == "paper" {
                ClassroomMethod::Paper
            } else {
                ClassroomMethod::Modified
            }))
        })
    };
    let on_random_keys = {
        let d = d.clone();
        Callback::from(move |_| {
            let keys = (random::key(), random::key(), random::key());
            match keys {
                (Ok(c), Ok(p), Ok(q)) => d.dispatch(ClassroomAction::Keys(KeyChoice::Random {
                    collector: c.to_hex(),
                    provider: p.to_hex(),
                    participants: q.to_hex(),
                })),
                _ => d.dispatch(ClassroomAction::Invalid(
                    "this browser gave no random numbers".into(),
                )),
            }
        })
    };
    let on_teaching_keys = {
        let d = d.clone();
        Callback::from(move |_| d.dispatch(ClassroomAction::Keys(KeyChoice::Teaching(PAPER_KEY))))
    };
    let failed = matches!(job.status(), JobStatus::Failed(_));
    let result = job.output().filter(|_| !failed).and_then(|o| match &*o {
        Output::Classroom(r) => Some((**r).clone()),
        _ => None,
    });
    let p = &state.params;
    let paper = p.method == ClassroomMethod::Paper;
    html! {
        <section class="classroom">
            <h1>{ "Classroom: triple matrix masking, step by step" }</h1>
            <p>{ "The 20 stroke patients of Wu et al. (2017), Table 2, go through the protocol. Change the design and watch what each party can — and cannot — learn." }</p>
            <fieldset class="controls no-print">
                <legend>{ "Design" }</legend>
                <label for="method">{ "Protocol " }
                    <select id="method" onchange={on_method}>
                        <option value="modified" selected={!paper}>{ "Modified TM² (Ding, Miao & Wu 2020)" }</option>
                        <option value="paper" selected={paper}>{ "The paper's first method (Wu et al. 2017, keys 535–537)" }</option>
                    </select>
                </label>
                { number_control("n", "Participants n ", p.n.to_string(), "1", "1", positive(ClassroomAction::N, "n")) }
                { number_control("cohort", "Per cohort (0 = all) ", p.cohort_size.to_string(), "0", "1", positive(ClassroomAction::Cohort, "cohort size")) }
                { number_control("p2", "Noise columns p₂ ", p.p2.to_string(), "0", "1", positive(ClassroomAction::P2, "p₂")) }
                { number_control("sigma", "Noise σ ", p.sigma.to_string(), "0", "any", on_sigma) }
                if paper { <p class="small">{ "The paper's method fixes n = 20, p₂ = 0 and the MATLAB keys, to reproduce its eq. (1) and Table 3." }</p> }
                <p class="keys" data-testid="keys-label">{ format!("Keys: {}", p.keys.label()) }</p>
                <button type="button" onclick={on_random_keys}>{ "New random keys" }</button>
                <button type="button" onclick={on_teaching_keys}>{ "Teaching keys" }</button>
                if let Some(e) = &state.error { <p class="error" role="alert">{ e }</p> }
            </fieldset>
            <JobProgress status={job.status().clone()} label="Running the protocol" />
            if let Some(r) = result { { body(&r, &state) } }
            { dp_panel(&state, dp_job.status(), dp_job.output()) }
        </section>
    }
}

fn condition(r: &ClassroomResult) -> Html {
    let c = &r.condition;
    html! {
        <div class={classes!("condition", if c.holds { "ok" } else { "bad" })} role="status" aria-live="polite" data-testid="condition">
            <strong>{ if c.holds { "✓ Condition (3.7) holds" } else { "✗ Condition (3.7) does not hold" } }</strong>
            <p>{ &c.text }</p>
            if !r.warnings.is_empty() {
                <ul class="warnings">{ for r.warnings.iter().map(|w| html! { <li>{ format!("Would be refused: {w}") }</li> }) }</ul>
            }
        </div>
    }
}

fn keys_table(r: &ClassroomResult) -> Html {
    html! {
        <div class="table-scroll"><table class="who-knows">
            <caption>{ "Who holds which key, and what each party sees (seed 000, Figure 1)" }</caption>
            <thead><tr><th scope="col">{ "party" }</th><th scope="col">{ "keys" }</th><th scope="col">{ "sees" }</th></tr></thead>
            <tbody>
                <tr><th scope="row">{ "each participant" }</th><td>{ "B (a subkey of the collector's key)" }</td><td>{ "their own row x₁ and their upload xB" }</td></tr>
                <tr><th scope="row">{ "masking service provider" }</th><td>{ "A₂" }</td><td>{ format!("XB ({} × {})", r.n, r.p1 + r.p2) }</td></tr>
                <tr><th scope="row">{ "data collector" }</th><td>{ "B and A₁" }</td><td>{ format!("A₂X₁ per cohort ({} × {})", r.cohort_sizes[0], r.p1) }</td></tr>
                <tr><th scope="row">{ "everybody" }</th><td>{ "none" }</td><td>{ format!("A₁A₂X₁ ({} × {})", r.n, r.p1) }</td></tr>
            </tbody>
        </table></div>
    }
}

/// Move keyboard focus to the element with `id`, if it is there.
fn focus_element(id: &str) {
    use wasm_bindgen::JsCast;
    if let Some(element) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = element.focus();
    }
}

fn steps_nav(state: &UseReducerHandle<ClassroomState>) -> Html {
    let labels = [
        "Step 1: plan",
        "Step 2: participants",
        "Step 3: provider",
        "Step 4: collector",
    ];
    html! {
        <div class="steps no-print" role="tablist" aria-label="Protocol steps">
            { for labels.iter().enumerate().map(|(k, label)| {
                let step = (k + 1) as u8;
                let d = state.dispatcher();
                let selected = state.step == step;
                let current = state.step;
                let keys = d.clone();
                // WAI-ARIA tabs: one tab in the tab order, arrow keys (and Home, End) move between
                // them and select the one they land on.
                let on_key = Callback::from(move |e: KeyboardEvent| {
                    if let Some(next) = step_after_key(current, &e.key()) {
                        e.prevent_default();
                        keys.dispatch(ClassroomAction::Step(next));
                        focus_element(&format!("step-tab-{next}"));
                    }
                });
                html! {
                    <button type="button" role="tab" id={format!("step-tab-{step}")} aria-controls="step-panel"
                        aria-selected={selected.to_string()} tabindex={if selected { "0" } else { "-1" }}
                        class={classes!(selected.then_some("active"))}
                        onkeydown={on_key}
                        onclick={Callback::from(move |_| d.dispatch(ClassroomAction::Step(step)))}>{ *label }</button>
                }
            }) }
        </div>
    }
}

fn body(r: &ClassroomResult, state: &UseReducerHandle<ClassroomState>) -> Html {
    let step = match state.step {
        1 => html! {
            <div role="tabpanel" id="step-panel" aria-labelledby={format!("step-tab-{}", state.step)}>
                <h2>{ "Step 1 — the data collector plans the survey" }</h2>
                <p>{ format!("{} participants in {} cohort(s) answer {} questions; with the QA column (888) each record has p₁ = {} columns, padded with p₂ = {} noise columns: the right mask B is {} × {}.",
                    r.n, r.cohort_sizes.len(), r.p1 - 1, r.p1, r.p2, r.p1 + r.p2, r.p1 + r.p2) }</p>
                { keys_table(r) }
                if let Some(b) = &r.right_mask {
                    <MatrixTable view={b.clone()} digits={4} />
                    <p class="small">{ "This is B₁ of eq. (1) of the paper: MATLAB's rand(9, 9) after rng(535)." }</p>
                }
            </div>
        },
        2 => html! {
            <div role="tabpanel" id="step-panel" aria-labelledby={format!("step-tab-{}", state.step)}>
                <h2>{ "Step 2 — each participant masks their own row" }</h2>
                <p>{ "Participant 1 knows only this row:" }</p>
                <MatrixTable view={MatrixView { title: "x₁ of participant 1".into(), seen_by: "participant 1 only".into(), rows: 1, cols: r.p1, headers: r.headers.clone(), table: vec![r.participant_row.clone()], heat: vec![] }} />
                <p>{ "…and sends only xB (first columns shown):" }</p>
                <MatrixTable view={MatrixView { title: "x·B of participant 1".into(), seen_by: "the provider".into(), rows: 1, cols: r.p1 + r.p2, headers: (1..=r.participant_upload.len()).map(|j| format!("col {j}")).collect(), table: vec![r.participant_upload.clone()], heat: vec![] }} />
                { view_block(&r.views[0], "heat-x") }
            </div>
        },
        3 => html! {
            <div role="tabpanel" id="step-panel" aria-labelledby={format!("step-tab-{}", state.step)}>
                <h2>{ "Step 3 — the masking service provider sees only XB" }</h2>
                <p>{ "It mixes each cohort's rows with its own rotation A₂ (keeping the column of ones fixed) and sends A₂XB to the collector." }</p>
                { view_block(&r.views[1], "heat-xb") }
            </div>
        },
        _ => html! {
            <div role="tabpanel" id="step-panel" aria-labelledby={format!("step-tab-{}", state.step)}>
                <h2>{ "Step 4 — the collector removes B, drops the noise, mixes again and publishes" }</h2>
                { view_block(&r.views[2], "heat-a2x") }
                { view_block(&r.views[3], "heat-release") }
                <SaveButton label="Download the release (CSV)" file_name="classroom-release.csv" mime="text/csv" text={r.release_csv.clone()} />
            </div>
        },
    };
    html! {
        <>
            { condition(r) }
            { steps_nav(state) }
            { step }
            { figure2(r, state) }
            { residual_lesson(r) }
            { table6(r) }
            { attack(r) }
            { collusion(r, state) }
        </>
    }
}

fn view_block(view: &MatrixView, name: &str) -> Html {
    html! {
        <div class="view-block">
            <MatrixTable view={view.clone()} />
            { heat(view, name) }
        </div>
    }
}

fn figure2(r: &ClassroomResult, state: &UseReducerHandle<ClassroomState>) -> Html {
    let choices: Vec<String> = r.headers.iter().filter(|h| *h != "QA").cloned().collect();
    let select = |id: &str, label: &str, current: &str, is_y: bool| {
        let d = state.dispatcher();
        let (y, x) = (state.params.y.clone(), state.params.x.clone());
        let onchange = Callback::from(move |e: Event| {
            let v = target_value(&e);
            let (y, x) = if is_y { (v, x.clone()) } else { (y.clone(), v) };
            d.dispatch(ClassroomAction::Variables { y, x });
        });
        html! {
            <label for={id.to_owned()}>{ label }
                <select id={id.to_owned()} onchange={onchange}>
                    { for choices.iter().map(|c| html! { <option value={c.clone()} selected={c == current}>{ c }</option> }) }
                </select>
            </label>
        }
    };
    html! {
        <section class="figure2">
            <h2>{ "Figure 2, live: the points are scrambled, the fitted line is not" }</h2>
            <div class="no-print">{ select("fig-y", "Response ", &state.params.y, true) }{ select("fig-x", " Predictor ", &state.params.x, false) }</div>
            <div class="side-by-side">
                { for r.figure2.iter().enumerate().map(|(k, p)| match p {
                    Ok(panel) => html! {
                        <div class="panel">
                            <PlotCanvas plot={Rc::new(Plot::Scatter(panel.clone()))} name={format!("classroom-figure2-{k}")} />
                            <p class="equation" data-testid="equation">{ panel.equation() }</p>
                        </div>
                    },
                    Err(e) => html! { <p class="error">{ e }</p> },
                }) }
            </div>
        </section>
    }
}

/// Issue 22 §2: why a release has no residual plots — the same model on a skewed survey and on
/// its release, Q–Q plots side by side (`model::residual_lesson`).
fn residual_lesson(r: &ClassroomResult) -> Html {
    match &r.residual_lesson {
        Err(e) => html! { <p class="error">{ e }</p> },
        Ok(l) => html! {
            <section class="residual-lesson" data-testid="residual-lesson">
                <h2>{ "Why a release has no residual plots" }</h2>
                <p>{ format!(
                    "A survey of {} participants whose errors are far from normal (skewness {:.1}), and the same regression on its masked release: the residual standard error is the same ({} and {}), but the release's residuals are A·e, a random rotation of the raw ones, and look normal (skewness {:.2}). A residual plot of a release would hide exactly what it is meant to show, so the analyst view shows residual plots only of original data.",
                    crate::model::residual_lesson::LESSON_PARTICIPANTS,
                    l.raw_skewness,
                    sig(l.sigma.0, 6),
                    sig(l.sigma.1, 6),
                    l.released_skewness
                ) }</p>
                <div class="side-by-side">
                    <div class="panel">
                        <PlotCanvas plot={Rc::new(Plot::NormalQq(l.raw_qq.clone()))} name="lesson-qq-raw" />
                        <p class="small">{ "Raw data: the large residuals leave the line." }</p>
                    </div>
                    <div class="panel">
                        <PlotCanvas plot={Rc::new(Plot::NormalQq(l.released_qq.clone()))} name="lesson-qq-release" />
                        <p class="small">{ "The release: the same residuals, rotated, look normal." }</p>
                    </div>
                </div>
            </section>
        },
    }
}

fn table6(r: &ClassroomResult) -> Html {
    match &r.table6 {
        Err(e) => html! { <p class="error">{ e }</p> },
        Ok(t) => {
            let summary = |counts: &Vec<Vec<f64>>| TableSummary {
                rows: t.rows.clone(),
                columns: t.columns.clone(),
                row_levels: vec!["1".into(), "0".into()],
                column_levels: vec!["1".into(), "0".into()],
                counts: counts.clone(),
                n: t.vector[3] as usize,
                rounding_residual: None,
                chi_square: None,
                integer_counts: None,
                smallest_expected: None,
                fisher: None,
            };
            html! {
                <section class="table6" data-testid="table6">
                    <h2>{ "Table 6: counts from the masked columns" }</h2>
                    <p>{ format!("From the released (masked) Group column V₁ and MIF column V₂: V₁ᵀV₂ = {}, V₁ᵀV₁ = {}, V₂ᵀV₂ = {}, n = {}.", t.vector[0], t.vector[1], t.vector[2], t.vector[3]) }</p>
                    <div class="side-by-side">
                        <div><h3>{ "From the release" }</h3>{ counts_table(&summary(&t.from_release)) }</div>
                        <div><h3>{ "From the raw data" }</h3>{ counts_table(&summary(&t.from_raw)) }</div>
                    </div>
                </section>
            }
        }
    }
}

fn bits(v: &[u8]) -> String {
    v.iter().map(|b| char::from(b'0' + b)).collect()
}

fn attack(r: &ClassroomResult) -> Html {
    html! {
        <section class="attack" data-testid="attack">
            <h2>{ "The Appendix A attack (Ding, Miao & Wu 2020)" }</h2>
            <p>{ "When the right mask has fewer columns than a cohort has participants (p < n), the rows of XB are linearly dependent, and the provider can test which 0/1 columns are consistent with those dependencies." }</p>
            if r.attack.is_empty() { <p data-testid="attack-note">{ &r.attack_note }</p> }
            { for r.attack.iter().map(|a| html! {
                <div class="attack-column">
                    <h3>{ format!("Looking for {} in the provider's view", a.column) }</h3>
                    <p>{ format!("rank {} of {} rows: {} linear constraints. ", a.rank, a.n, a.constraints) }
                        { match a.candidates {
                            None => format!("All 2^{} columns remain possible.", a.n),
                            Some(k) => format!("Only {k} of the 2^{} possible 0/1 columns survive; the true one is {}among them.", a.n, if a.truth_is_candidate { "" } else { "not " }),
                        } }
                    </p>
                    <div class="table-scroll"><table class="bits">
                        <tr><th scope="row">{ "true column" }</th><td><code>{ bits(&a.truth) }</code></td></tr>
                        if let Some(rec) = &a.recovered {
                            <tr class="recovered"><th scope="row">{ "recovered exactly" }</th><td><code data-testid="recovered">{ bits(rec) }</code></td></tr>
                        }
                        { for a.listed.iter().enumerate().map(|(k, c)| html! {
                            <tr><th scope="row">{ format!("candidate {}", k + 1) }</th><td><code class={classes!((*c == a.truth).then_some("truth"))}>{ bits(c) }</code></td></tr>
                        }) }
                    </table></div>
                </div>
            }) }
            if !r.attack.is_empty() && !r.attack_note.is_empty() { <p class="error">{ &r.attack_note }</p> }
        </section>
    }
}

fn collusion(r: &ClassroomResult, state: &UseReducerHandle<ClassroomState>) -> Html {
    let on_toggle = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| d.dispatch(ClassroomAction::Collusion(target_checked(&e))))
    };
    let rows = |m: &Vec<Vec<f64>>, title: &str, seen: &str| MatrixView {
        title: title.into(),
        seen_by: seen.into(),
        rows: m.len(),
        cols: r.p1,
        headers: r.headers.clone(),
        table: m.clone(),
        heat: vec![],
    };
    html! {
        <section class="collusion">
            <h2>{ "Collusion" }</h2>
            <label class="check"><input type="checkbox" id="collusion" checked={state.collusion} onchange={on_toggle} />
                { "The provider colludes with one participant, who shares the right mask B" }</label>
            if state.collusion {
                { match &r.collusion {
                    Ok(c) => html! {
                        <div data-testid="collusion">
                            <p>{ format!("XB·B⁻¹ gives back every raw record of the cohort: largest difference from the raw data {}. This is why the collusion-resistant extension (shares, seed 000 §3.5) keeps B off the devices.", sig(c.max_error, 2)) }</p>
                            <div class="side-by-side">
                                <MatrixTable view={rows(&c.recovered, "recovered by the colluders", "provider + one participant")} />
                                <MatrixTable view={rows(&c.original, "the raw records", "nobody")} />
                            </div>
                        </div>
                    },
                    Err(e) => html! { <p class="error">{ e }</p> },
                } }
            }
        </section>
    }
}

fn dp_panel(
    state: &UseReducerHandle<ClassroomState>,
    status: &JobStatus,
    output: Option<Rc<Output>>,
) -> Html {
    let current = state.dp.clone();
    let select = |id: &str, label: &str, options: &[(&str, DpParams)]| {
        let d = state.dispatcher();
        let opts: Vec<(String, DpParams)> = options
            .iter()
            .map(|(l, p)| ((*l).to_owned(), p.clone()))
            .collect();
        let lookup = opts.clone();
        let onchange = Callback::from(move |e: Event| {
            let v = target_value(&e);
            if let Some((_, p)) = lookup.iter().find(|(l, _)| *l == v) {
                d.dispatch(ClassroomAction::Dp(p.clone()));
            }
        });
        html! {
            <label for={id.to_owned()}>{ label }
                <select id={id.to_owned()} onchange={onchange}>
                    { for opts.iter().map(|(l, p)| html! { <option value={l.clone()} selected={*p == current}>{ l }</option> }) }
                </select>
            </label>
        }
    };
    let c = &state.dp;
    let with = |f: &dyn Fn(&mut DpParams)| {
        let mut p = c.clone();
        f(&mut p);
        p
    };
    let failed = matches!(status, JobStatus::Failed(_));
    let result: Option<DpResult> = output.filter(|_| !failed).and_then(|o| match &*o {
        Output::Dp(r) => Some((**r).clone()),
        _ => None,
    });
    html! {
        <section class="dp">
            <h2>{ "Differential privacy: how much noise masking saves" }</h2>
            <p>{ "σ each participant must add (on the [−1, 1] scale) for (ε, δ)-DP: setting A adds noise only; setting B adds noise and then releases through a random orthogonal mask — seed 004, Table 1." }</p>
            <div class="no-print">
                { select("dp-delta", "δ ", &[("0.01", with(&|p| p.delta = 0.01)), ("0.001", with(&|p| p.delta = 0.001))]) }
                { select("dp-p", " p ", &[("1", with(&|p| p.p = 1)), ("5", with(&|p| p.p = 5)), ("20", with(&|p| p.p = 20))]) }
                { select("dp-n", " n ", &[("100", with(&|p| p.n = 100)), ("10000", with(&|p| p.n = 10_000))]) }
            </div>
            <JobProgress status={status.clone()} label="Calibrating" />
            if let Some(r) = result {
                <PlotCanvas plot={Rc::new(Plot::DpCurves(r.curve.clone()))} width={560} height={360} name="dp" />
                <div class="table-scroll"><table class="dp-table">
                    <caption>{ format!("δ = {}, p = {}, n = {}", r.params.delta, r.params.p, r.params.n) }</caption>
                    <thead><tr><th scope="col">{ "ε" }</th><th scope="col">{ "A necessary (11)" }</th><th scope="col">{ "A sufficient (12)" }</th><th scope="col">{ "B (13)" }</th><th scope="col">{ "ratio (12)/(13)" }</th></tr></thead>
                    <tbody>{ for r.table.iter().map(|p| html! {
                        <tr><th scope="row">{ p.epsilon }</th><td>{ format!("{:.1}", p.a_necessary) }</td><td>{ format!("{:.1}", p.a_sufficient) }</td><td>{ format!("{:.1}", p.b_sufficient) }</td><td>{ format!("{:.0}", p.a_sufficient / p.b_sufficient) }</td></tr>
                    }) }</tbody>
                </table></div>
            }
        </section>
    }
}
