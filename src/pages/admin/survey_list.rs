//! The surveys of the collector: id, title, status, created; each opens its detail.

use yew::prelude::*;

use crate::services::admin as api;
use orthomask_survey::api::SurveyList as List;

/// Props of [`SurveyList`].
#[derive(Properties, PartialEq)]
pub struct SurveyListProps {
    /// The admin token.
    pub token: AttrValue,
    /// Told the id of the survey to open.
    pub on_open: Callback<String>,
}

/// The list of surveys.
#[function_component(SurveyList)]
pub fn survey_list(props: &SurveyListProps) -> Html {
    let list = use_state(|| None::<Result<List, String>>);
    {
        let list = list.setter();
        use_effect_with(props.token.clone(), move |token| {
            let token = token.to_string();
            wasm_bindgen_futures::spawn_local(
                async move { list.set(Some(api::list(&token).await)) },
            );
        });
    }
    let body = match &*list {
        None => html! { <p role="status">{ "Loading the surveys…" }</p> },
        Some(Err(e)) => html! { <p class="error" role="alert">{ e }</p> },
        Some(Ok(l)) if l.surveys.is_empty() => html! { <p>{ "No survey yet." }</p> },
        Some(Ok(l)) => html! {
            <div class="table-scroll">
                <table class="surveys" data-testid="survey-list">
                    <thead><tr>
                        <th scope="col">{ "Survey" }</th><th scope="col">{ "Title" }</th>
                        <th scope="col">{ "Status" }</th><th scope="col">{ "Created" }</th><th scope="col"><span class="visually-hidden">{ "Open" }</span></th>
                    </tr></thead>
                    <tbody>
                        { for l.surveys.iter().map(|s| {
                            let open = { let (cb, id) = (props.on_open.clone(), s.survey.clone()); Callback::from(move |_| cb.emit(id.clone())) };
                            html! {
                                <tr data-survey={s.survey.clone()}>
                                    <th scope="row">{ &s.survey }</th>
                                    <td>{ &s.title }
                                        if s.demonstration { <span class="badge">{ "demonstration" }</span> }
                                    </td>
                                    <td>{ s.status.word() }</td>
                                    <td>{ &s.created_at }</td>
                                    <td><button type="button" onclick={open} aria-label={format!("Open survey {}", s.survey)}>{ "Open" }</button></td>
                                </tr>
                            }
                        }) }
                    </tbody>
                </table>
            </div>
        },
    };
    html! {
        <section aria-labelledby="surveys-title">
            <h2 id="surveys-title">{ "Surveys" }</h2>
            { body }
        </section>
    }
}
