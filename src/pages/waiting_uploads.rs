//! Masked uploads that waited on this device from an earlier visit (issue 13 §1): listed at the
//! top of the participant page, sent as soon as the page opens online or the connection returns
//! (the window's `online` event), each with its receipt once it went through — or discarded by
//! the participant. The form's own submission, while it waits, is shown by the form instead
//! (`exclude`).
//!
//! A receipt obtained on this visit is followed up as the form's is ([`crate::services::fate`]),
//! one watch per cohort however many of its uploads were sent, proving the place with the nonce
//! of the credential the stored upload kept: if the collector left the cohort out — spoilt
//! because someone in it sent invalid data (issue 20 §8), or regrouped because too few people
//! had answered in it for its answers to be masked (issue 43 §3) — the panel says which for each
//! of them; it kept only masked numbers, so it cannot send the answers again, and asks the
//! participant to answer again through their link.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use orthomask_survey::upload::Receipt;
use yew::prelude::*;

use crate::components::receipts::Receipts;
use crate::i18n::AppLanguage;
use crate::model::fate::{AgainReason, credential_nonce};
use crate::model::outbox::WaitingSubmission;
use crate::services::browser::{OnlineListener, is_online};
use crate::services::http::SendError;
use crate::services::{fate, outbox};
use crate::t;

/// Where one stored submission stands.
#[derive(Clone, Debug, PartialEq)]
enum Status {
    Waiting,
    Sending,
    Sent(Vec<(String, Receipt)>),
    /// Sent, but its cohort was then left out (spoilt or regrouped, as said): the answers are
    /// not on this device, so the participant answers again through their link.
    LeftOut(AgainReason, Vec<(String, Receipt)>),
    /// Refused: the entry failed the deployment's checks (edited to send elsewhere, a forged
    /// credential), or the service answered no (an expired credential, a closed cohort). It
    /// stays until discarded.
    Refused(String),
    /// Not a waiting submission (only discarding makes sense).
    Unreadable(String),
}

#[derive(Clone, Debug, PartialEq)]
struct Entry {
    key: String,
    waiting: Option<Rc<WaitingSubmission>>,
    status: Status,
}

/// Properties of [`WaitingUploads`].
#[derive(Properties, Clone, PartialEq)]
pub struct WaitingUploadsProps {
    /// The participant's language.
    pub language: AppLanguage,
    /// The token of the submission the form itself is showing (not listed twice).
    #[prop_or_default]
    pub exclude: Option<String>,
}

/// The listed submissions, changed only through [`Change`] (sends finish in any order).
#[derive(Clone, Debug, Default, PartialEq)]
struct Entries(Vec<Entry>);

/// What happens to the list.
enum Change {
    Loaded(Vec<Entry>),
    Status(String, Status),
    Removed(String),
}

impl Reducible for Entries {
    type Action = Change;

    fn reduce(self: Rc<Self>, change: Change) -> Rc<Self> {
        let mut entries = self.0.clone();
        match change {
            Change::Loaded(loaded) => entries = loaded,
            Change::Status(key, status) => {
                if let Some(e) = entries.iter_mut().find(|e| e.key == key) {
                    e.status = status;
                }
            }
            Change::Removed(key) => entries.retain(|e| e.key != key),
        }
        Rc::new(Self(entries))
    }
}

/// The cohorts whose fate the panel follows, each with the entries sent to it on this visit
/// (key and receipts): one watch per (survey, cohort), whatever the number of its entries.
type Watched = Rc<RefCell<HashMap<(String, u32), Vec<(String, Vec<(String, Receipt)>)>>>>;

thread_local! {
    /// The waiting uploads of this tab being delivered now, and those delivered. The panel may
    /// be asked to send an upload twice before its status says "sending" — it opens online and
    /// the browser's `online` event arrives before the next render, a click meets an automatic
    /// send, or the panel is shown again (a new instance that read the store before the first
    /// delivery removed the entry) — and an upload must leave the device once. A delivery that
    /// failed may be tried again; one that succeeded is never repeated from this tab. The
    /// services would store a repeat once (the token), but it is still a second copy sent.
    static DELIVERIES: RefCell<(HashSet<String>, HashSet<String>)> = RefCell::default();
}

/// Claim the delivery of `key` for this tab: false when it is under way or done.
fn claim_delivery(key: &str) -> bool {
    DELIVERIES.with(|d| {
        let (sending, delivered) = &mut *d.borrow_mut();
        !delivered.contains(key) && sending.insert(key.to_owned())
    })
}

/// The delivery of `key` ended, delivered or not.
fn end_delivery(key: &str, delivered: bool) {
    DELIVERIES.with(|d| {
        let (sending, done) = &mut *d.borrow_mut();
        sending.remove(key);
        if delivered {
            done.insert(key.to_owned());
        }
    });
}

/// Send one waiting submission and record the outcome; once sent, follow its cohort's fate
/// while the panel is shown (`alive`) — joining the watch of that cohort when one is running.
fn deliver(
    dispatch: UseReducerDispatcher<Entries>,
    key: String,
    waiting: Rc<WaitingSubmission>,
    watched: Watched,
    alive: Rc<Cell<bool>>,
) {
    if !claim_delivery(&key) {
        return;
    }
    dispatch.dispatch(Change::Status(key.clone(), Status::Sending));
    wasm_bindgen_futures::spawn_local(async move {
        let delivered = outbox::deliver_stored(&waiting).await;
        end_delivery(&key, delivered.is_ok());
        let receipts = match delivered {
            Ok(receipts) => receipts,
            Err(SendError::Unreachable(_)) => {
                dispatch.dispatch(Change::Status(key, Status::Waiting));
                return;
            }
            Err(SendError::Failed(e)) => {
                dispatch.dispatch(Change::Status(key, Status::Refused(e)));
                return;
            }
        };
        dispatch.dispatch(Change::Status(key.clone(), Status::Sent(receipts.clone())));
        let cohort = (waiting.survey.clone(), waiting.cohort);
        let first = {
            let mut watched = watched.borrow_mut();
            let sent = watched.entry(cohort.clone()).or_default();
            sent.push((key, receipts));
            sent.len() == 1
        };
        if !first {
            return;
        }
        // The stored upload kept its credential: its nonce proves a place in the cohort.
        let nonce = credential_nonce(&waiting.destinations);
        let verdict = fate::watch(&cohort.0, cohort.1, nonce, &alive).await;
        // Every entry of the cohort sent while it was watched gets its outcome; one sent later
        // starts a new watch.
        let sent = watched.borrow_mut().remove(&cohort).unwrap_or_default();
        if let Some(why) = verdict.and_then(|f| AgainReason::of(f.fate))
            && alive.get()
        {
            for (key, receipts) in sent {
                dispatch.dispatch(Change::Status(key, Status::LeftOut(why, receipts)));
            }
        }
    });
}

/// The panel; nothing when no upload waits.
#[function_component(WaitingUploads)]
pub fn waiting_uploads(props: &WaitingUploadsProps) -> Html {
    let lang = props.language;
    let entries = use_reducer(Entries::default);
    // Whether the panel is still shown: follow-ups of its receipts stop when it goes.
    let alive = use_memo((), |()| Rc::new(Cell::new(true)));
    // The cohorts followed, with their sent entries.
    let watched = use_memo((), |()| Watched::default());
    {
        let alive = (*alive).clone();
        use_effect_with((), move |()| move || alive.set(false));
    }
    // Load once.
    {
        let dispatch = entries.dispatcher();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                let Ok(stored) = outbox::all().await else {
                    return;
                };
                let loaded: Vec<Entry> = stored
                    .into_iter()
                    .map(|(key, entry)| match entry {
                        Ok(w) => Entry {
                            key,
                            waiting: Some(Rc::new(w)),
                            status: Status::Waiting,
                        },
                        Err(e) => Entry {
                            key,
                            waiting: None,
                            status: Status::Unreadable(e.to_string()),
                        },
                    })
                    .collect();
                dispatch.dispatch(Change::Loaded(loaded));
            });
        });
    }
    // Whenever something waits and the browser is (or comes back) online, send it.
    let waiting: Vec<(String, Rc<WaitingSubmission>)> = entries
        .0
        .iter()
        .filter(|e| e.status == Status::Waiting && Some(&e.key) != props.exclude.as_ref())
        .filter_map(|e| e.waiting.clone().map(|w| (e.key.clone(), w)))
        .collect();
    {
        let (dispatch, watched, alive) =
            (entries.dispatcher(), (*watched).clone(), (*alive).clone());
        use_effect_with(waiting, move |waiting| {
            let send_all = {
                let (dispatch, waiting) = (dispatch.clone(), waiting.clone());
                move || {
                    for (key, w) in &waiting {
                        deliver(
                            dispatch.clone(),
                            key.clone(),
                            w.clone(),
                            watched.clone(),
                            alive.clone(),
                        );
                    }
                }
            };
            let listener = (!waiting.is_empty()).then(|| {
                if is_online() {
                    send_all();
                }
                OnlineListener::new(send_all)
            });
            move || drop(listener)
        });
    }
    let shown: Vec<&Entry> = entries
        .0
        .iter()
        .filter(|e| Some(&e.key) != props.exclude.as_ref())
        .collect();
    if shown.is_empty() {
        return html! {};
    }
    let discard = |key: String| {
        let dispatch = entries.dispatcher();
        Callback::from(move |_| {
            let (dispatch, key) = (dispatch.clone(), key.clone());
            wasm_bindgen_futures::spawn_local(async move {
                if outbox::remove(&key).await.is_ok() {
                    dispatch.dispatch(Change::Removed(key));
                }
            });
        })
    };
    let send_now = |e: &Entry| {
        let (dispatch, key, waiting) = (entries.dispatcher(), e.key.clone(), e.waiting.clone());
        let (watched, alive) = ((*watched).clone(), (*alive).clone());
        Callback::from(move |_| {
            if let Some(w) = waiting.clone() {
                deliver(
                    dispatch.clone(),
                    key.clone(),
                    w,
                    watched.clone(),
                    alive.clone(),
                );
            }
        })
    };
    html! {
        <section class="waiting" aria-labelledby="waiting-title" data-testid="waiting-uploads">
            <h2 id="waiting-title">{ t!(lang, "waiting-heading") }</h2>
            if shown.iter().any(|e| matches!(e.status, Status::Waiting | Status::Sending)) {
                <p>{ t!(lang, "waiting-explain") }</p>
            }
            <ul>
                { for shown.iter().map(|e| {
                    let line = e.waiting.as_ref().map_or_else(String::new, |w| t!(lang, "waiting-item",
                        survey = w.survey, cohort = w.cohort, count = w.values_per_upload()));
                    html! {
                        <li data-testid="waiting-item">
                            <p>{ line }</p>
                            { match &e.status {
                                Status::Waiting => html! {
                                    <div class="buttons">
                                        <button type="button" class="primary" onclick={send_now(e)}>{ t!(lang, "waiting-send-now") }</button>
                                        <button type="button" onclick={discard(e.key.clone())}>{ t!(lang, "waiting-discard") }</button>
                                    </div>
                                },
                                Status::Sending => html! { <p role="status">{ t!(lang, "waiting-sending") }</p> },
                                Status::Sent(receipts) => html! {
                                    <div class="receipt" role="status">
                                        <h3>{ t!(lang, "receipt-heading") }</h3>
                                        <Receipts survey={e.waiting.as_ref().map(|w| w.survey.clone()).unwrap_or_default()} receipts={receipts.clone()} language={lang} />
                                    </div>
                                },
                                Status::LeftOut(why, receipts) => html! {
                                    <div class="receipt">
                                        <p class="error" role="alert" data-testid="waiting-left-out">{ match why {
                                            AgainReason::Spoilt => t!(lang, "waiting-left-out"),
                                            AgainReason::Regrouped => t!(lang, "waiting-left-out-regrouped"),
                                        } }</p>
                                        <Receipts survey={e.waiting.as_ref().map(|w| w.survey.clone()).unwrap_or_default()} receipts={receipts.clone()} language={lang} />
                                    </div>
                                },
                                Status::Refused(reason) | Status::Unreadable(reason) => html! {
                                    <>
                                        <p class="error" role="alert">{ t!(lang, "waiting-refused", reason = reason) }</p>
                                        <button type="button" onclick={discard(e.key.clone())}>{ t!(lang, "waiting-discard") }</button>
                                    </>
                                },
                            } }
                        </li>
                    }
                }) }
            </ul>
        </section>
    }
}
