//! On the receipt of a live demonstration: let simulated participants fill the rest of the
//! participant's cohort (issue 12 §1), so a newcomer sees the cohort close, the services hand it
//! over and — once the survey team closes the survey — the release. Each simulated participant
//! goes through the participant client exactly as a form does ([`crate::services::simulate`]).

use yew::prelude::*;

use crate::i18n::AppLanguage;
use crate::services::simulate;
use crate::t;

/// Where the filling stands.
#[derive(Clone, Debug, PartialEq)]
enum Filling {
    Idle,
    Counting,
    Joining { joined: usize, of: usize },
    Done { joined: usize },
    Failed(String),
}

/// Properties: the survey and the participant's cohort.
#[derive(Properties, Clone, PartialEq)]
pub struct SimulatedParticipantsProps {
    /// The demonstration's id.
    pub survey: String,
    /// The cohort to fill (the participant's, or the survey's current one).
    pub cohort: u32,
    /// Shown on the survey team's page (which closes and publishes), not on a receipt.
    #[prop_or_default]
    pub on_team_page: bool,
    /// The language of the texts (the participant's on a receipt; the team page is English).
    #[prop_or(AppLanguage::English)]
    pub language: AppLanguage,
}

/// The "let simulated participants join" block.
#[function_component(SimulatedParticipants)]
pub fn simulated_participants(props: &SimulatedParticipantsProps) -> Html {
    let filling = use_state(|| Filling::Idle);
    let on_fill = {
        let (filling, survey, cohort) = (filling.clone(), props.survey.clone(), props.cohort);
        Callback::from(move |_| {
            let (filling, survey) = (filling.clone(), survey.clone());
            filling.set(Filling::Counting);
            wasm_bindgen_futures::spawn_local(async move {
                let places = match simulate::places_left(&survey, cohort).await {
                    Ok(n) => n,
                    Err(e) => return filling.set(Filling::Failed(e)),
                };
                filling.set(Filling::Joining {
                    joined: 0,
                    of: places,
                });
                let progress = {
                    let filling = filling.clone();
                    move |joined| filling.set(Filling::Joining { joined, of: places })
                };
                match simulate::join(&survey, places, &progress).await {
                    Ok(joined) => filling.set(Filling::Done { joined }),
                    Err(e) => filling.set(Filling::Failed(e)),
                }
            });
        })
    };
    let busy = matches!(*filling, Filling::Counting | Filling::Joining { .. });
    let (lang, cohort) = (props.language, props.cohort);
    let status = match &*filling {
        Filling::Idle => String::new(),
        Filling::Counting => t!(lang, "simulate-counting", cohort = cohort),
        Filling::Joining { joined, of } => t!(lang, "simulate-joining", joined = joined, of = of),
        Filling::Done { joined: 0 } => t!(lang, "simulate-already-full", cohort = cohort),
        Filling::Done { joined } => t!(lang, "simulate-done", joined = joined, cohort = cohort),
        Filling::Failed(e) => e.clone(),
    };
    html! {
        <div class="simulated" data-testid="simulated-participants">
            <h2>{ t!(lang, "simulate-heading") }</h2>
            <p>{ t!(lang, "simulate-explain", cohort = cohort) }</p>
            <button class="primary" onclick={on_fill} disabled={busy} data-testid="simulate">
                { t!(lang, "simulate-button") }
            </button>
            <p role="status" aria-live="polite" class={classes!(matches!(*filling, Filling::Failed(_)).then_some("error"))} data-testid="simulate-status">{ status }</p>
            if matches!(*filling, Filling::Done { .. }) && !props.on_team_page {
                <p>
                    { t!(lang, "simulate-next-before") }{ " " }
                    <a href={format!("#/admin?survey={}", props.survey)} data-testid="team-page">{ t!(lang, "simulate-next-link") }</a>
                    { " " }{ t!(lang, "simulate-next-after") }
                </p>
            }
        </div>
    }
}
