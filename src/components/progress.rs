//! A job's progress bar (and its failure line).

use yew::prelude::*;

use crate::context::JobStatus;

/// Props of [`JobProgress`].
#[derive(Properties, PartialEq)]
pub struct JobProgressProps {
    /// The job's status.
    pub status: JobStatus,
    /// What the job does ("Computing the classroom").
    pub label: AttrValue,
}

/// A `<progress>` while the job runs, an alert when it failed, nothing otherwise.
#[function_component(JobProgress)]
pub fn job_progress(props: &JobProgressProps) -> Html {
    match &props.status {
        JobStatus::Running(p) => html! {
            <div class="progress" role="status" aria-live="polite">
                <label>
                    { format!("{}: {} ({:.0}%)", props.label, p.stage, p.fraction * 100.0) }
                    <progress max="1" value={p.fraction.to_string()} />
                </label>
            </div>
        },
        JobStatus::Failed(e) => html! { <p class="error" role="alert">{ e }</p> },
        _ => html! {},
    }
}
