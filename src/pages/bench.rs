//! The browser benchmark (`#/bench`, `#/bench?run=1` starts at once): masking one record at
//! p = 1 000 and 10 000 and a regression on a 100 000 × 20 release, each timed in the Web Worker
//! with `performance.now()`. The results are printed as a table and as JSON for
//! `scripts/bench-web.sh`, which also watches the page for long tasks.

use yew::prelude::*;

use crate::components::progress::JobProgress;
use crate::context::{JobStatus, use_job, use_query};
use crate::model::bench::{BenchCase, BenchResult};
use crate::model::jobs::{Job, Output};
use crate::services::query;

/// The benchmark page.
#[function_component(Bench)]
pub fn bench() -> Html {
    let params = use_query();
    let job = use_job();
    let results = use_state(Vec::<BenchResult>::new);
    let index = use_state(|| None::<usize>);
    let error = use_state(|| None::<String>);
    // Run the cases one after another.
    {
        let (job, index) = (job.clone(), index.clone());
        use_effect_with(*index, move |i| {
            if let Some(case) = i.and_then(|i| BenchCase::ALL.get(i)) {
                job.run(Job::Bench(*case));
            }
        });
    }
    {
        let (results, index, error) = (results.clone(), index.clone(), error.clone());
        use_effect_with(job.status().clone(), move |status| match status {
            JobStatus::Done(o) => {
                if let Output::Bench(r) = &**o {
                    let mut all = (*results).clone();
                    if !all.iter().any(|x| x.case == r.case) {
                        all.push(r.clone());
                        results.set(all);
                        index.set(index.map(|i| i + 1));
                    }
                }
            }
            JobStatus::Failed(e) => error.set(Some(e.clone())),
            _ => {}
        });
    }
    let start = {
        let (results, index, error) = (results.clone(), index.clone(), error.clone());
        Callback::from(move |_| {
            results.set(Vec::new());
            error.set(None);
            index.set(Some(0));
        })
    };
    {
        let start = start.clone();
        let auto = query::get(&params, "run").is_some();
        use_effect_with(auto, move |auto| {
            if *auto {
                start.emit(());
            }
        });
    }
    let finished = results.len() == BenchCase::ALL.len();
    let json = serde_json::to_string(&*results).unwrap_or_default();
    html! {
        <section class="bench">
            <h1>{ "Browser benchmark" }</h1>
            <p>{ "Times the work a participant's browser does on submit (build B from its key and mask one record) and an analyst's regression on a large release. The computations run in a Web Worker, so this page stays responsive." }</p>
            <button type="button" class="primary" onclick={start.reform(|_: MouseEvent| ())}>{ "Run the benchmark" }</button>
            <JobProgress status={job.status().clone()} label="Benchmark" />
            if let Some(e) = &*error { <p class="error" role="alert">{ e }</p> }
            <div class="table-scroll"><table class="bench-results">
                <thead><tr><th scope="col">{ "operation" }</th><th scope="col">{ "median (ms)" }</th><th scope="col">{ "fastest (ms)" }</th><th scope="col">{ "runs" }</th></tr></thead>
                <tbody>{ for results.iter().map(|r| html! {
                    <tr><th scope="row">{ r.case.label() }</th><td>{ format!("{:.2}", r.median_ms) }</td><td>{ format!("{:.2}", r.min_ms) }</td><td>{ r.repetitions }</td></tr>
                }) }</tbody>
            </table></div>
            if finished { <pre id="bench-json" data-testid="bench-json">{ json }</pre> }
        </section>
    }
}
