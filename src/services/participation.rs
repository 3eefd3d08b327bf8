//! Open the survey a participant link names (issue 10 §3): from the collector that served the
//! page — its deployment, and a place taken with `POST` (the invitation in the JSON body, issue
//! 20 §7), both from this origin and checked by
//! [`model::participation::accept`](crate::model::participation::accept) — or a bundled
//! demonstration from the app's own files. Never from an address taken from the link.

use std::cell::RefCell;

use futures::channel::oneshot;
use orthomask_survey::app_build::FileDigest;
use orthomask_survey::client::{Client, Destination, Prepared};
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::upload::Receipt;

use super::clock::{mark, sleep};
use super::http::{
    FetchError, RetryPolicy, SendError, fetch_text, get_text, post_json, send_upload,
};
use super::random;
use crate::model::own_build;
use crate::model::participation::{
    self, Access, DEPLOYMENT_PATH, Source, Unopened, definition_path, demonstration_path,
    place_request,
};
use crate::model::retry_wait_ms;

/// The longest `Retry-After` the page waits through while taking a place (a longer one is shown
/// as the collector's refusal, and the participant opens the link again later).
const LONGEST_WAIT_S: u32 = 30;

/// Take a place in `survey` (`POST` [`definition_path`] with [`place_request`]): the collector's
/// signed offer, as text. While the collector is busy (429, 503) it is asked again, at most
/// [`RetryPolicy::default`]'s attempts, after its `Retry-After` — a refused request took no
/// place, and an invitation keeps its place across requests anyway.
///
/// Not [`send_upload`]'s loop: only a busy answer is asked again (a network failure or another
/// refusal is reported at once), a `Retry-After` longer than [`LONGEST_WAIT_S`] is reported,
/// and it floors the one wait it answers (stretched as every retry is: `retry_wait_ms`).
///
/// # Errors
/// [`FetchError`] of the last attempt.
pub async fn take_place(survey: &str, invite: Option<&str>) -> Result<String, FetchError> {
    let (path, body) = (definition_path(survey), place_request(invite));
    let policy = RetryPolicy::default();
    let mut delay = policy.first_delay_ms;
    let mut attempt = 1;
    loop {
        match post_json(&path, &body).await {
            Err(e) if attempt < policy.attempts => match e.busy() {
                Some(after) if after.unwrap_or(0) <= LONGEST_WAIT_S => {
                    sleep(retry_wait_ms(delay, after, super::random::unit())).await;
                    delay = delay.saturating_mul(2);
                    attempt += 1;
                }
                _ => return Err(e),
            },
            answer => return answer,
        }
    }
}

fn unopened(e: FetchError) -> Unopened {
    match e {
        FetchError::Unreachable(_) => Unopened::NeedsConnection,
        refused @ (FetchError::Invalid(_) | FetchError::Status { .. }) => {
            Unopened::Refused(refused.to_string())
        }
    }
}

/// An opened survey: its definition, what the page may do with it, and for a collector's
/// survey the deployment description it was accepted against (as the collector served it), so
/// that a new place in it ([`open`] again, after a left-out cohort) is checked against the same
/// deployment without fetching it again.
#[derive(Debug)]
pub struct Opened {
    /// The survey.
    pub survey: SurveyDefinition,
    /// Send with the collector's credential, or only practise.
    pub access: Access,
    /// The text of [`DEPLOYMENT_PATH`] the offer was accepted against (a collector's survey).
    pub deployment: Option<String>,
}

/// The collector's deployment description ([`DEPLOYMENT_PATH`], same origin), as text.
///
/// # Errors
/// [`Unopened`]: no connection, or the collector's refusal.
async fn deployment() -> Result<String, Unopened> {
    fetch_text("GET", DEPLOYMENT_PATH, None, None)
        .await
        .map_err(unopened)
}

/// The page's build digest from its `files` (`super::app_build::own_files`), checked against the builds
/// `deployment` accepts ([`crate::model::own_build`]).
///
/// # Errors
/// [`Unopened::Refused`] with the one line of [`own_build::OwnBuildError`].
fn own_build(
    deployment: &str,
    (loaded, cached): (Result<Vec<FileDigest>, String>, Vec<FileDigest>),
) -> Result<String, Unopened> {
    let refused = |e: own_build::OwnBuildError| Unopened::Refused(e.to_string());
    let accepted = own_build::accepted_builds(deployment).map_err(refused)?;
    own_build::own_build(&accepted, loaded, &cached).map_err(refused)
}

/// Take a place in `survey` ([`take_place`]) and check the collector's offer against
/// `deployment` (the text of [`deployment`]).
///
/// # Errors
/// [`Unopened`]: no connection, the collector's refusal, a weak plan, or why the offer is not
/// trusted.
async fn take_place_and_accept(
    deployment: &str,
    survey: &str,
    invite: Option<&str>,
) -> Result<(SurveyDefinition, Access), Unopened> {
    mark("orthomask:place asked");
    // The place's request goes out in `take_place`'s first step, before this task next waits: a
    // first render held for it (`start_opening`) runs after that.
    if let Some(asked) = PLACE_ASKED.with(|asked| asked.borrow_mut().take()) {
        let _ = asked.send(());
    }
    let offer = take_place(survey, invite).await.map_err(unopened)?;
    mark("orthomask:place answered");
    let reached = if invite.is_some() {
        participation::Reached::ByInvitation
    } else {
        participation::Reached::Openly
    };
    let accepted = participation::accept(
        deployment,
        &offer,
        survey,
        &definition_path(survey),
        reached,
    )
    .map_err(Unopened::from);
    mark("orthomask:offer checked");
    accepted
}

/// Fetch and check the survey `source` names. For a collector's survey: its deployment — the
/// one `accepted` at an earlier opening of the same link, else fetched — and a place in it.
///
/// # Errors
/// [`Unopened`]: no connection, a weak plan, or one line — the request that failed (with the
/// collector's message) or why the offer is not trusted. Nothing has been masked or sent when
/// this fails.
pub async fn open(source: &Source, accepted: Option<&str>) -> Result<Opened, Unopened> {
    match source {
        Source::Collector { survey, invite } => {
            mark("orthomask:opening");
            // The deployment and the page's own files are read at once (on a slow network each
            // is a round trip, and neither needs the other).
            let (deployment, files) = futures::future::join(
                async {
                    let text = match accepted {
                        Some(text) => Ok(text.to_owned()),
                        None => deployment().await,
                    };
                    mark("orthomask:deployment read");
                    text
                },
                async {
                    let files = super::app_build::own_files().await;
                    mark("orthomask:own files read");
                    files
                },
            )
            .await;
            let deployment = deployment?;
            // The page's own build first (issue 27 §2): a build the deployment does not accept
            // takes no place and masks nothing.
            let build = own_build(&deployment, files)?;
            mark("orthomask:build checked");
            let (survey, access) =
                take_place_and_accept(&deployment, survey, invite.as_deref()).await?;
            let access = match access {
                Access::Collector(credential, _) => Access::Collector(credential, build),
                other => other,
            };
            Ok(Opened {
                survey,
                access,
                deployment: Some(deployment),
            })
        }
        Source::Demonstration { name } => {
            let path = demonstration_path(name);
            let text = get_text(&path).await.map_err(Unopened::Refused)?;
            let (survey, access) = participation::open_demonstration(&text, &path)
                .map_err(|e| Unopened::Refused(e.to_string()))?;
            Ok(Opened {
                survey,
                access,
                deployment: None,
            })
        }
    }
}

/// An opening [`start_opening`] started: the link it opens, and where its outcome will be.
type StartedOpening = (Source, oneshot::Receiver<Result<Opened, Unopened>>);

thread_local! {
    /// The opening [`start_opening`] started, until the form takes it.
    static STARTED: RefCell<Option<StartedOpening>> = const { RefCell::new(None) };
    /// Told when that opening has asked for its place (dropped when it ends without asking).
    static PLACE_ASKED: RefCell<Option<oneshot::Sender<()>>> = const { RefCell::new(None) };
}

/// How long the participant's module holds its first render for the opening it started to ask
/// for its place ([`start_opening`]), at most. On a repeat visit the opening asks within a few
/// tens of milliseconds; the bound is for a network that has not answered the deployment yet,
/// where the page is then drawn while the opening waits, as without the hold.
pub const LONGEST_FIRST_RENDER_HOLD_MS: u32 = 200;

/// Start opening `source`, the collector's survey the page's link names ([`open`]: its
/// deployment, the page's own build, a place), as the participant's module starts, before it
/// draws its first screen (issue 25). The answer resolves once the opening has asked for its
/// place, or has ended without asking (a refusal, no connection).
///
/// Why the module waits for it (at most [`LONGEST_FIRST_RENDER_HOLD_MS`]) before drawing: on a
/// slow phone, drawing the first screen takes about as long as the place's round trip, and the
/// opening needs nothing from it. Drawn first, the screen holds the page's thread while the
/// opening's last steps (the deployment's text, the build's digest) wait behind it, and the place
/// is asked only afterwards; asked first, the round trip and the drawing overlap. The form takes
/// this opening over for its first opening of the same link ([`open_first`]); what is opened,
/// checked and refused is unchanged.
pub fn start_opening(source: Source) -> impl Future<Output = ()> {
    let (answer, answered) = oneshot::channel();
    let (asked, place_asked) = oneshot::channel();
    PLACE_ASKED.with(|slot| *slot.borrow_mut() = Some(asked));
    let opening = source.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let opened = open(&opening, None).await;
        // Ended without asking for a place: the render need wait no longer.
        PLACE_ASKED.with(|slot| slot.borrow_mut().take());
        let _ = answer.send(opened);
    });
    STARTED.with(|started| *started.borrow_mut() = Some((source, answered)));
    async move {
        let hold = sleep(i32::try_from(LONGEST_FIRST_RENDER_HOLD_MS).unwrap_or(i32::MAX));
        futures::future::select(Box::pin(place_asked), Box::pin(hold)).await;
    }
}

/// The form's first opening of `source`: the one [`start_opening`] started, when it started one
/// for this very link (taken over once), else [`open`] now.
///
/// # Errors
/// [`Unopened`], as [`open`].
pub async fn open_first(source: &Source) -> Result<Opened, Unopened> {
    let started = STARTED.with(|started| started.borrow_mut().take());
    if let Some((started_source, answered)) = started
        && started_source == *source
        && let Ok(opened) = answered.await
    {
        return opened;
    }
    open(source, None).await
}

/// Mask `answers` on this device for `survey`: a fresh idempotency token and a fresh device key
/// from the browser, the collector's credential on every upload of a collector's survey. What a
/// participant's form and a simulated participant ([`super::simulate`]) both send.
///
/// # Errors
/// One line: the browser gave no random numbers, or the answers do not fit the survey.
pub fn prepare(
    survey: &SurveyDefinition,
    access: &Access,
    answers: &[Answer],
) -> Result<Prepared, String> {
    let token = random::token()?;
    let key = random::key()?;
    let client = Client::new(survey).map_err(|e| e.to_string())?;
    let client = match access {
        Access::Collector(credential, build) => {
            client.with_credential(credential.clone()).with_build(build)
        }
        Access::Demonstration => client,
    };
    client
        .prepare(answers, &token, &key)
        .map_err(|e| e.to_string())
}

/// Send every upload of a prepared submission (one, or one share per right-masking service) in
/// turn with retries, each receipt checked against its upload. `attempt(n)` is told of each
/// attempt. The form sends through [`super::outbox::deliver`], which also forgets a submission
/// that waited offline.
///
/// # Errors
/// [`SendError`] from [`send_upload`]; uploads already sent stay sent (a retry with the same
/// token returns the same receipt).
pub async fn send(
    destinations: &[Destination],
    attempt: &dyn Fn(u32),
) -> Result<Vec<(String, Receipt)>, SendError> {
    let mut receipts = Vec::with_capacity(destinations.len());
    for dest in destinations {
        let receipt = send_upload(&dest.url, &dest.upload, RetryPolicy::default(), attempt).await?;
        receipts.push((dest.url.clone(), receipt));
    }
    Ok(receipts)
}
