//! The views' state, apart from the views: plain data, `Action` enums and `impl Reducible`
//! (yew's `function_todomvc` shape). No HTML here; pages dispatch actions and render.
//!
//! * [`ParticipantState`] — consent, one question per screen, validation, review, sending;
//! * [`AnalysisState`] — the loaded files and the chosen variables;
//! * [`ClassroomState`] — the classroom's controls and step.

use std::rc::Rc;

use orthomask_survey::client::Prepared;
use orthomask_survey::coding::AnswerError;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::upload::Receipt;
use yew::Reducible;

use crate::model::audit::NamedText;
use crate::model::classroom::{ClassroomMethod, ClassroomParams, KeyChoice};
use crate::model::dp::DpParams;
use crate::model::fate::AgainReason;
use crate::model::participation::{Access, Unopened};

// ── Participant ─────────────────────────────────────────────────────────────────────────────

/// Where the participant is.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Fetching the survey definition.
    Loading,
    /// The survey is not shown: no connection, a weak plan, or a refusal.
    Broken(Unopened),
    /// Reading the consent text.
    Consent,
    /// Answering question `index` (0-based; only questions the earlier answers show).
    Question(usize),
    /// Looking at what will leave the device.
    Review,
    /// Sending (attempt number).
    Sending(u32),
    /// Sent: the receipts.
    Done,
    /// Sending failed; everything is kept for another try.
    Failed(String),
    /// No connection: the masked upload waits in the device's outbox and goes out when the
    /// connection returns (issue 13 §1).
    Waiting,
    /// The collector asked the receipt's cohort to answer again, for this reason: spoilt (someone
    /// in it sent invalid data, issue 20 §8) or regrouped (too few records to be masked, issue 43
    /// §3). A new place is being taken and the answers, still on this page, masked afresh.
    AnsweringAgain(AgainReason),
    /// Taking the new place or masking afresh failed (the answers are still here; the page
    /// offers to try again).
    AgainFailed {
        /// Why the participant answers again.
        why: AgainReason,
        /// Why it failed, one line.
        error: String,
    },
}

/// What the page's `aria-live` region says, in the participant's language when shown
/// (`pages::participate` renders it through the catalogue).
#[derive(Clone, Debug, PartialEq)]
pub enum Announcement {
    /// Nothing yet.
    Nothing,
    /// The survey opened.
    Loaded,
    /// Begin was pressed without consent.
    NeedConsent,
    /// Question `number` (1-based) of `total` is on screen.
    Question {
        /// 1-based position.
        number: usize,
        /// Questions in the survey.
        total: usize,
    },
    /// The answer to question `number` does not fit.
    Invalid {
        /// 1-based position.
        number: usize,
        /// Why.
        error: AnswerError,
    },
    /// Every shown question is answered.
    AllAnswered,
    /// Attempt `n` is on its way.
    Sending(u32),
    /// Sent; the receipt is shown.
    Sent,
    /// Kept in the outbox until the connection returns.
    Waiting,
    /// The waiting upload was discarded.
    Discarded,
    /// The survey is not shown, and why.
    Unopened(Unopened),
    /// The cohort was left out (spoilt or regrouped, as said): the answers go again.
    AnsweringAgain(AgainReason),
    /// Sent again in a new cohort (the one before was spoilt or regrouped); the new receipt is
    /// shown.
    SentAgain(AgainReason),
    /// A message from elsewhere (a service, the browser), shown as it came.
    Message(String),
}

/// The participant form. The answers live only here, in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticipantState {
    /// The survey.
    pub survey: Option<Rc<SurveyDefinition>>,
    /// What the page may do with it: send with the collector's credential, or only practise.
    pub access: Option<Access>,
    /// Where the participant is.
    pub phase: Phase,
    /// Whether consent was given.
    pub consent: bool,
    /// What was typed or chosen, per question.
    pub inputs: Vec<String>,
    /// Why each field is invalid, per question (shown once a field was checked).
    pub errors: Vec<Option<AnswerError>>,
    /// What will be sent (masked only).
    pub prepared: Option<Rc<Prepared>>,
    /// The inputs `prepared` was made from: going back and returning with the same answers keeps
    /// the same upload and idempotency token, so a send that reached the service before failing
    /// is not counted twice.
    pub prepared_inputs: Vec<String>,
    /// Why preparing failed.
    pub prepare_error: Option<String>,
    /// Receipts per destination.
    pub receipts: Vec<(String, Receipt)>,
    /// Why the answers were sent again in a new cohort — the last cohort before was spoilt or
    /// regrouped — or `None`: the first cohort holds them.
    pub sent_again: Option<AgainReason>,
    /// What the `aria-live` region says.
    pub announcement: Announcement,
}

impl Default for ParticipantState {
    fn default() -> Self {
        Self {
            survey: None,
            access: None,
            phase: Phase::Loading,
            consent: false,
            inputs: Vec::new(),
            errors: Vec::new(),
            prepared: None,
            prepared_inputs: Vec::new(),
            prepare_error: None,
            receipts: Vec::new(),
            sent_again: None,
            announcement: Announcement::Nothing,
        }
    }
}

/// What can happen to the form.
#[derive(Clone, Debug, PartialEq)]
pub enum ParticipantAction {
    /// The page opens another survey (its route changed): forget the one before, show loading.
    Open,
    /// The definition arrived, checked (or failed: nothing is shown, masked or sent).
    Loaded(Result<(Rc<SurveyDefinition>, Access), Unopened>),
    /// The consent box changed.
    Consent(bool),
    /// Begin answering (needs consent).
    Begin,
    /// A field changed.
    Input {
        /// Question index.
        index: usize,
        /// New text.
        value: String,
    },
    /// Validate this screen and go on to the next question the answers show.
    Next,
    /// Go back one screen (to the previous question the answers show).
    Back,
    /// The masked upload was prepared (or could not be).
    Prepared(Result<Rc<Prepared>, String>),
    /// Attempt `n` is on its way.
    Sending(u32),
    /// Every destination answered with a verified receipt.
    Sent(Vec<(String, Receipt)>),
    /// Sending failed after every retry.
    Failed(String),
    /// No connection: the masked upload is kept in the outbox.
    Waiting,
    /// The participant discarded the waiting upload (nothing of it was sent): back to review.
    Discarded,
    /// Back to the answers from the review or a failure.
    Edit,
    /// The collector says the receipt's cohort was left out and its participants should answer
    /// again, and why (spoilt, issue 20 §8; regrouped, issue 43 §3): take a new place, keeping
    /// the answers.
    LeftOut(AgainReason),
    /// The new place, with the answers masked afresh for it (a new token, new noise, a new
    /// credential) — or why not. Sending follows as for the first submission.
    Reassigned(Result<(Rc<SurveyDefinition>, Access, Rc<Prepared>), String>),
}

impl ParticipantState {
    /// Questions in the survey.
    pub fn question_count(&self) -> usize {
        self.survey.as_ref().map_or(0, |s| s.questions.len())
    }

    /// Whether the page shows the progress bar: from the first question on (not while loading,
    /// broken or asking for consent).
    pub fn shows_progress(&self) -> bool {
        matches!(
            self.phase,
            Phase::Question(_)
                | Phase::Review
                | Phase::Sending(_)
                | Phase::Failed(_)
                | Phase::Done
                | Phase::Waiting
                | Phase::AnsweringAgain(_)
                | Phase::AgainFailed { .. }
        )
    }

    /// Progress through the questions, 0 to 1: every question answered once past the last.
    pub fn progress(&self) -> f64 {
        let total = self.question_count().max(1) as f64;
        match self.phase {
            Phase::Question(i) => i as f64 / total,
            _ if self.shows_progress() => 1.0,
            _ => 0.0,
        }
    }

    /// Which questions the current answers show (skip logic, `show_if`).
    fn shown(&self) -> Vec<bool> {
        self.survey
            .as_ref()
            .map_or_else(Vec::new, |s| s.shown_from_inputs(&self.inputs))
    }

    /// The first question after `after` (or from the start with `None`) that the answers show.
    fn next_shown(&self, after: Option<usize>) -> Option<usize> {
        let from = after.map_or(0, |i| i + 1);
        self.shown()
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(i, shown)| shown.then_some(i))
    }

    /// The last question before `before` that the answers show.
    fn previous_shown(&self, before: usize) -> Option<usize> {
        self.shown()
            .iter()
            .enumerate()
            .take(before)
            .rev()
            .find_map(|(i, shown)| shown.then_some(i))
    }

    fn go_to_question(&mut self, i: usize) {
        self.phase = Phase::Question(i);
        self.announcement = Announcement::Question {
            number: i + 1,
            total: self.question_count(),
        };
    }
}

impl Reducible for ParticipantState {
    type Action = ParticipantAction;

    fn reduce(self: Rc<Self>, action: Self::Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            ParticipantAction::Open => s = ParticipantState::default(),
            // A newly opened survey starts from nothing: no answer, upload or receipt of the
            // survey the page showed before can carry over.
            ParticipantAction::Loaded(Ok((survey, access))) => {
                s = ParticipantState::default();
                s.access = Some(access);
                s.inputs = vec![String::new(); survey.questions.len()];
                s.errors = vec![None; survey.questions.len()];
                s.survey = Some(survey);
                s.phase = Phase::Consent;
                s.announcement = Announcement::Loaded;
            }
            ParticipantAction::Loaded(Err(e)) => {
                s = ParticipantState::default();
                s.announcement = Announcement::Unopened(e.clone());
                s.phase = Phase::Broken(e);
            }
            ParticipantAction::Consent(yes) => s.consent = yes,
            ParticipantAction::Begin => {
                if s.consent && s.phase == Phase::Consent {
                    // The first question is never conditional (a condition needs an earlier one).
                    s.go_to_question(0);
                } else {
                    s.announcement = Announcement::NeedConsent;
                }
            }
            ParticipantAction::Input { index, value } => {
                if let Some(slot) = s.inputs.get_mut(index) {
                    *slot = value;
                    // Clear a shown error as soon as the answer is valid.
                    if let (Some(survey), Some(Some(_))) = (&s.survey, s.errors.get(index))
                        && survey.parse_answer(index, &s.inputs[index]).is_ok()
                    {
                        s.errors[index] = None;
                    }
                }
            }
            ParticipantAction::Next => {
                if let (Phase::Question(i), Some(survey)) = (s.phase.clone(), s.survey.clone()) {
                    match survey.parse_answer(i, &s.inputs[i]) {
                        Err(error) => {
                            s.announcement = Announcement::Invalid {
                                number: i + 1,
                                error: error.clone(),
                            };
                            s.errors[i] = Some(error);
                        }
                        Ok(_) => {
                            s.errors[i] = None;
                            match s.next_shown(Some(i)) {
                                Some(next) => s.go_to_question(next),
                                None => {
                                    s.phase = Phase::Review;
                                    if s.prepared_inputs != s.inputs {
                                        s.prepared = None;
                                    }
                                    s.prepare_error = None;
                                    s.announcement = Announcement::AllAnswered;
                                }
                            }
                        }
                    }
                }
            }
            ParticipantAction::Back => match s.phase {
                Phase::Question(0) => s.phase = Phase::Consent,
                Phase::Question(i) => {
                    let to = s.previous_shown(i).unwrap_or(0);
                    s.go_to_question(to);
                }
                Phase::Review | Phase::Failed(_) => {
                    let last = s.question_count();
                    let to = s.previous_shown(last).unwrap_or(0);
                    s.go_to_question(to);
                }
                _ => {}
            },
            ParticipantAction::Prepared(Ok(p)) => {
                s.prepared = Some(p);
                s.prepared_inputs = s.inputs.clone();
                s.prepare_error = None;
            }
            ParticipantAction::Prepared(Err(e)) => {
                s.announcement = Announcement::Message(e.clone());
                s.prepare_error = Some(e);
            }
            ParticipantAction::Sending(n) => {
                s.phase = Phase::Sending(n);
                s.announcement = Announcement::Sending(n);
            }
            ParticipantAction::Sent(receipts) => {
                s.receipts = receipts;
                s.phase = Phase::Done;
                s.announcement = match s.sent_again {
                    Some(why) => Announcement::SentAgain(why),
                    None => Announcement::Sent,
                };
            }
            ParticipantAction::Failed(e) => {
                s.announcement = Announcement::Message(e.clone());
                s.phase = Phase::Failed(e);
            }
            ParticipantAction::Waiting => {
                s.phase = Phase::Waiting;
                s.announcement = Announcement::Waiting;
            }
            ParticipantAction::Discarded => {
                if s.phase == Phase::Waiting {
                    s.phase = Phase::Review;
                    s.announcement = Announcement::Discarded;
                }
            }
            ParticipantAction::Edit => {
                s.go_to_question(0);
            }
            ParticipantAction::LeftOut(why) => {
                // Only a shown receipt's cohort (or a failed attempt to leave it) can be left.
                if matches!(s.phase, Phase::Done | Phase::AgainFailed { .. }) {
                    s.phase = Phase::AnsweringAgain(why);
                    s.announcement = Announcement::AnsweringAgain(why);
                }
            }
            ParticipantAction::Reassigned(Ok((survey, access, prepared))) => {
                if let Phase::AnsweringAgain(why) = s.phase {
                    // The same answers, in the new cohort: its definition, credential and a
                    // fresh upload; the old receipts no longer count.
                    s.survey = Some(survey);
                    s.access = Some(access);
                    s.prepared = Some(prepared);
                    s.prepared_inputs = s.inputs.clone();
                    s.prepare_error = None;
                    s.receipts.clear();
                    s.sent_again = Some(why);
                    s.phase = Phase::Review;
                }
            }
            ParticipantAction::Reassigned(Err(error)) => {
                if let Phase::AnsweringAgain(why) = s.phase {
                    s.announcement = Announcement::Message(error.clone());
                    s.phase = Phase::AgainFailed { why, error };
                }
            }
        }
        Rc::new(s)
    }
}

/// The classroom step a key moves to from `current` (steps 1 to 4, wrapping), following the
/// WAI-ARIA tabs pattern: right and left arrows, Home and End; `None` for any other key.
pub fn step_after_key(current: u8, key: &str) -> Option<u8> {
    match key {
        "ArrowRight" => Some(current % 4 + 1),
        "ArrowLeft" => Some((current + 2) % 4 + 1),
        "Home" => Some(1),
        "End" => Some(4),
        _ => None,
    }
}

// ── Analysis ────────────────────────────────────────────────────────────────────────────────

/// Which file slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The release.
    Data,
    /// The original.
    Original,
    /// The manifest.
    Manifest,
    /// The data package (`datapackage.json`).
    Package,
}

/// The analyst's files and choices.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AnalysisState {
    /// The release.
    pub data: Option<Rc<NamedText>>,
    /// The original data (optional).
    pub original: Option<Rc<NamedText>>,
    /// The manifest (optional).
    pub manifest: Option<Rc<NamedText>>,
    /// The data package (optional).
    pub package: Option<Rc<NamedText>>,
    /// Response.
    pub y: Option<String>,
    /// Predictors.
    pub x: Vec<String>,
    /// A loading problem.
    pub error: Option<String>,
}

/// What can happen in the analyst view.
#[derive(Clone, Debug, PartialEq)]
pub enum AnalysisAction {
    /// A file arrived.
    Loaded(Slot, Rc<NamedText>),
    /// Loading failed.
    LoadFailed(String),
    /// Choose the response.
    SetY(String),
    /// Add or remove a predictor.
    ToggleX(String),
    /// Set response and predictors at once (deep links).
    SetModel(Option<String>, Vec<String>),
}

impl Reducible for AnalysisState {
    type Action = AnalysisAction;

    fn reduce(self: Rc<Self>, action: Self::Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            AnalysisAction::Loaded(slot, text) => {
                s.error = None;
                match slot {
                    Slot::Data => s.data = Some(text),
                    Slot::Original => s.original = Some(text),
                    Slot::Manifest => s.manifest = Some(text),
                    Slot::Package => s.package = Some(text),
                }
            }
            AnalysisAction::LoadFailed(e) => s.error = Some(e),
            AnalysisAction::SetY(y) => {
                s.x.retain(|x| *x != y);
                s.y = Some(y);
            }
            AnalysisAction::ToggleX(x) => {
                if let Some(k) = s.x.iter().position(|v| *v == x) {
                    s.x.remove(k);
                } else if s.y.as_deref() != Some(&x) {
                    s.x.push(x);
                }
            }
            AnalysisAction::SetModel(y, x) => {
                s.y = y;
                s.x = x;
            }
        }
        Rc::new(s)
    }
}

// ── Classroom ───────────────────────────────────────────────────────────────────────────────

/// The classroom's controls and where the class is.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClassroomState {
    /// Protocol parameters.
    pub params: ClassroomParams,
    /// Step 1 to 4.
    pub step: u8,
    /// The DP panel's parameters.
    pub dp: DpParams,
    /// Whether the collusion panel is open.
    pub collusion: bool,
    /// A control's problem.
    pub error: Option<String>,
}

/// What can happen in the classroom.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassroomAction {
    /// Go to a step.
    Step(u8),
    /// Switch protocol.
    Method(ClassroomMethod),
    /// Participants.
    N(usize),
    /// Participants per cohort (0: one cohort).
    Cohort(usize),
    /// Noise columns.
    P2(usize),
    /// Noise σ.
    Sigma(f64),
    /// Keys.
    Keys(KeyChoice),
    /// Figure 2's variables.
    Variables {
        /// Response.
        y: String,
        /// Predictor.
        x: String,
    },
    /// Toggle collusion.
    Collusion(bool),
    /// DP parameters.
    Dp(DpParams),
    /// A control's input was invalid.
    Invalid(String),
}

impl Reducible for ClassroomState {
    type Action = ClassroomAction;

    fn reduce(self: Rc<Self>, action: Self::Action) -> Rc<Self> {
        let mut s = (*self).clone();
        s.error = None;
        match action {
            ClassroomAction::Step(k) => s.step = k.clamp(1, 4),
            ClassroomAction::Method(m) => s.params.method = m,
            ClassroomAction::N(n) => s.params.n = n,
            ClassroomAction::Cohort(c) => s.params.cohort_size = c,
            ClassroomAction::P2(p) => s.params.p2 = p,
            ClassroomAction::Sigma(v) => s.params.sigma = v,
            ClassroomAction::Keys(k) => s.params.keys = k,
            ClassroomAction::Variables { y, x } => {
                s.params.y = y;
                s.params.x = x;
            }
            ClassroomAction::Collusion(on) => s.collusion = on,
            ClassroomAction::Dp(d) => s.dp = d,
            ClassroomAction::Invalid(e) => s.error = Some(e),
        }
        if s.step == 0 {
            s.step = 1;
        }
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_core::tolerance::HAND_COMPUTED;

    const DEMO: &str = include_str!("../www/surveys/leaps-demo.json");
    const BRANCHING: &str = include_str!("../www/surveys/habits-branching.json");

    fn loaded() -> Rc<ParticipantState> {
        let survey = SurveyDefinition::parse(DEMO, "demo").unwrap();
        Rc::new(ParticipantState::default()).reduce(ParticipantAction::Loaded(Ok((
            Rc::new(survey),
            Access::Demonstration,
        ))))
    }

    /// The answers [`answered_demo`] gives, in question order.
    const DEMO_ANSWERS: [&str; 8] = ["no", "yes", "0.5", "60", "30", "no", "no", "50"];

    /// The demonstration loaded, consented to and answered through to the review.
    fn answered_demo() -> Rc<ParticipantState> {
        let answers = DEMO_ANSWERS;
        let mut s = loaded()
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin);
        for (i, v) in answers.iter().enumerate() {
            s = s
                .reduce(ParticipantAction::Input {
                    index: i,
                    value: (*v).into(),
                })
                .reduce(ParticipantAction::Next);
        }
        s
    }

    #[test]
    fn a_refused_or_newly_opened_survey_keeps_nothing_of_the_one_before() {
        let s = loaded()
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin)
            .reduce(ParticipantAction::Input {
                index: 0,
                value: "yes".into(),
            });
        let opening = s.clone().reduce(ParticipantAction::Open);
        assert_eq!(opening.phase, Phase::Loading);
        assert!(opening.survey.is_none() && opening.inputs.is_empty());
        let refused = s
            .clone()
            .reduce(ParticipantAction::Loaded(Err(Unopened::Refused(
                "forged".into(),
            ))));
        assert_eq!(
            refused.phase,
            Phase::Broken(Unopened::Refused("forged".into()))
        );
        assert_eq!(
            refused.announcement,
            Announcement::Unopened(Unopened::Refused("forged".into()))
        );
        assert!(refused.survey.is_none() && refused.access.is_none());
        assert!(refused.inputs.is_empty() && !refused.consent);
        let survey = SurveyDefinition::parse(DEMO, "demo").unwrap();
        let again = s.reduce(ParticipantAction::Loaded(Ok((
            Rc::new(survey),
            Access::Demonstration,
        ))));
        assert_eq!(again.phase, Phase::Consent);
        assert!(!again.consent);
        assert_eq!(again.inputs, vec![String::new(); 8]);
    }

    #[test]
    fn consent_comes_first_and_errors_are_announced() {
        let s = loaded().reduce(ParticipantAction::Begin);
        assert_eq!(s.phase, Phase::Consent);
        assert_eq!(s.announcement, Announcement::NeedConsent);
        let s = s
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin);
        assert_eq!(s.phase, Phase::Question(0));
        let s = s.reduce(ParticipantAction::Next);
        assert_eq!(s.phase, Phase::Question(0));
        assert_eq!(s.errors[0], Some(AnswerError::Missing));
        assert_eq!(
            s.errors[0].as_ref().map(ToString::to_string).as_deref(),
            Some("this question needs an answer")
        );
        assert_eq!(
            s.announcement,
            Announcement::Invalid {
                number: 1,
                error: AnswerError::Missing
            }
        );
        let s = s.reduce(ParticipantAction::Input {
            index: 0,
            value: "yes".into(),
        });
        assert_eq!(s.errors[0], None, "a valid answer clears the message");
        let s = s.reduce(ParticipantAction::Next);
        assert_eq!(s.phase, Phase::Question(1));
        assert!((s.progress() - 1.0 / 8.0).abs() < HAND_COMPUTED);
    }

    /// The progress bar shows from the first question on, and is full past the last.
    #[test]
    fn the_progress_bar_shows_from_the_first_question_on() {
        let consent = loaded();
        assert!(!consent.shows_progress() && consent.progress() == 0.0);
        let first = consent
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin);
        assert!(first.shows_progress() && first.progress() == 0.0);
        let review = answered_demo();
        assert_eq!(review.phase, Phase::Review);
        assert!(review.shows_progress() && review.progress() == 1.0);
        let broken = review.reduce(ParticipantAction::Loaded(Err(Unopened::NeedsConnection)));
        assert!(!broken.shows_progress() && broken.progress() == 0.0);
    }

    #[test]
    fn a_failure_keeps_every_answer() {
        let mut s = loaded()
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin);
        for (i, v) in ["no", "yes", "0.5", "60", "30", "no", "no", "50"]
            .iter()
            .enumerate()
        {
            s = s
                .reduce(ParticipantAction::Input {
                    index: i,
                    value: (*v).into(),
                })
                .reduce(ParticipantAction::Next);
        }
        assert_eq!(s.phase, Phase::Review);
        let s = s
            .reduce(ParticipantAction::Sending(1))
            .reduce(ParticipantAction::Failed("down".into()));
        assert_eq!(s.phase, Phase::Failed("down".into()));
        assert_eq!(s.inputs[3], "60");
        // No connection: the upload waits; discarding it returns to the review, answers kept.
        let waiting = s.reduce(ParticipantAction::Waiting);
        assert_eq!(
            (&waiting.phase, &waiting.announcement),
            (&Phase::Waiting, &Announcement::Waiting)
        );
        let discarded = waiting.reduce(ParticipantAction::Discarded);
        assert_eq!(discarded.phase, Phase::Review);
        assert_eq!(discarded.inputs[3], "60");
    }

    /// Skip logic: `Next` jumps over questions the answers hide, `Back` returns over them, and
    /// changing the earlier answer brings the question back.
    #[test]
    fn next_and_back_follow_the_branches() {
        let survey = SurveyDefinition::parse(BRANCHING, "habits-branching.json").unwrap();
        let index = |id: &str| survey.questions.iter().position(|q| q.id == id).unwrap();
        let (smokes, cigarettes) = (index("smokes"), index("cigarettes"));
        assert_eq!(
            cigarettes,
            smokes + 1,
            "the bundled file asks the follow-up next"
        );
        let total = survey.questions.len();
        let mut s = Rc::new(ParticipantState::default())
            .reduce(ParticipantAction::Loaded(Ok((
                Rc::new(survey),
                Access::Demonstration,
            ))))
            .reduce(ParticipantAction::Consent(true))
            .reduce(ParticipantAction::Begin);
        while s.phase != Phase::Question(smokes) {
            let Phase::Question(i) = s.phase else {
                panic!("{:?}", s.phase)
            };
            s = s
                .reduce(ParticipantAction::Input {
                    index: i,
                    value: "1".into(),
                })
                .reduce(ParticipantAction::Next);
        }
        let answer = |s: Rc<ParticipantState>, value: &str| {
            s.reduce(ParticipantAction::Input {
                index: smokes,
                value: value.into(),
            })
            .reduce(ParticipantAction::Next)
        };
        let no = answer(s.clone(), "no");
        assert_eq!(
            no.phase,
            Phase::Question(cigarettes + 1),
            "the follow-up is skipped"
        );
        assert_eq!(
            no.announcement,
            Announcement::Question {
                number: cigarettes + 2,
                total
            }
        );
        let back = no.reduce(ParticipantAction::Back);
        assert_eq!(
            back.phase,
            Phase::Question(smokes),
            "and skipped going back"
        );
        let yes = answer(back, "yes");
        assert_eq!(yes.phase, Phase::Question(cigarettes), "asked after a yes");
    }

    /// After a failure, going back and returning with the same answers keeps the prepared upload
    /// (same token, same masked vector); changing an answer prepares a new one.
    #[test]
    fn unchanged_answers_keep_their_upload_and_token() {
        let s = answered_demo();
        let prepared = Rc::new(Prepared {
            destinations: Vec::new(),
            p1: 9,
            p2: 503,
            share_mode: false,
            share_noise_ratio: None,
            one_service_view: None,
            teaching: true,
        });
        let failed = s
            .reduce(ParticipantAction::Prepared(Ok(prepared.clone())))
            .reduce(ParticipantAction::Failed("down".into()));
        let back = failed
            .clone()
            .reduce(ParticipantAction::Back)
            .reduce(ParticipantAction::Next);
        assert_eq!(back.phase, Phase::Review);
        assert!(Rc::ptr_eq(back.prepared.as_ref().unwrap(), &prepared));
        let edited = failed.clone().reduce(ParticipantAction::Edit);
        let mut again = edited;
        for _ in 0..DEMO_ANSWERS.len() {
            again = again.reduce(ParticipantAction::Next);
        }
        assert!(Rc::ptr_eq(again.prepared.as_ref().unwrap(), &prepared));
        let changed = failed
            .reduce(ParticipantAction::Back)
            .reduce(ParticipantAction::Input {
                index: 7,
                value: "51".into(),
            })
            .reduce(ParticipantAction::Next);
        assert_eq!(changed.phase, Phase::Review);
        assert!(changed.prepared.is_none());
    }

    /// A masked upload told apart from another by identity.
    fn an_upload() -> Rc<Prepared> {
        Rc::new(Prepared {
            destinations: Vec::new(),
            p1: 9,
            p2: 503,
            share_mode: false,
            share_noise_ratio: None,
            one_service_view: None,
            teaching: false,
        })
    }

    fn a_receipt(cohort: u32) -> Receipt {
        Receipt {
            survey: "leaps-demo".into(),
            cohort,
            upload_hash: "h".into(),
            received_at: "t".into(),
        }
    }

    /// The demonstration answered and sent: the receipt of cohort 0 is shown.
    fn sent_demo() -> Rc<ParticipantState> {
        answered_demo()
            .reduce(ParticipantAction::Prepared(Ok(an_upload())))
            .reduce(ParticipantAction::Sent(vec![("u".into(), a_receipt(0))]))
    }

    /// The new place taken for answering again, with `upload` prepared for it.
    fn reassigned(upload: &Rc<Prepared>) -> ParticipantAction {
        let survey = Rc::new(SurveyDefinition::parse(DEMO, "demo").unwrap());
        ParticipantAction::Reassigned(Ok((survey, Access::Demonstration, upload.clone())))
    }

    /// Issue 20 §8: when the receipt's cohort is left out, the answers stay and go again in a
    /// new cohort with a fresh upload; the new receipt is announced as such. A stale verdict (the
    /// page no longer shows a receipt) changes nothing.
    #[test]
    fn a_left_out_cohort_sends_the_same_answers_again_in_a_new_one() {
        let spoilt = AgainReason::Spoilt;
        let done = sent_demo();
        assert_eq!(done.announcement, Announcement::Sent);
        assert_eq!(done.sent_again, None);
        // A verdict while the page shows no receipt is stale.
        let review = done.clone().reduce(ParticipantAction::Edit);
        assert_eq!(
            review
                .clone()
                .reduce(ParticipantAction::LeftOut(spoilt))
                .phase,
            review.phase
        );
        let again = done.reduce(ParticipantAction::LeftOut(spoilt));
        assert_eq!(
            (&again.phase, &again.announcement),
            (
                &Phase::AnsweringAgain(spoilt),
                &Announcement::AnsweringAgain(spoilt)
            )
        );
        // Taking the new place failed: the answers stay, and the participant may try again.
        let failed = again
            .clone()
            .reduce(ParticipantAction::Reassigned(Err("down".into())));
        assert_eq!(
            failed.phase,
            Phase::AgainFailed {
                why: spoilt,
                error: "down".into()
            }
        );
        assert_eq!(failed.inputs, DEMO_ANSWERS);
        assert_eq!(
            failed.reduce(ParticipantAction::LeftOut(spoilt)).phase,
            Phase::AnsweringAgain(spoilt)
        );
        let second = an_upload();
        let moved = again.reduce(reassigned(&second));
        assert!(Rc::ptr_eq(moved.prepared.as_ref().unwrap(), &second));
        assert!(
            moved.receipts.is_empty(),
            "the old receipt no longer counts"
        );
        assert_eq!(moved.inputs, DEMO_ANSWERS);
        assert_eq!(moved.sent_again, Some(spoilt));
        let sent = moved.reduce(ParticipantAction::Sent(vec![("u".into(), a_receipt(1))]));
        assert_eq!(
            (&sent.phase, &sent.announcement),
            (&Phase::Done, &Announcement::SentAgain(spoilt))
        );
    }

    /// Issue 43 §3: a regrouped cohort (too few records to be masked) is answered again as a
    /// spoilt one is, and the page keeps saying why — through a failed attempt, the new receipt,
    /// and a later cohort left out for the other reason, which the last note names.
    #[test]
    fn a_regrouped_cohort_is_answered_again_and_the_page_says_why() {
        let regrouped = AgainReason::Regrouped;
        let again = sent_demo().reduce(ParticipantAction::LeftOut(regrouped));
        assert_eq!(
            (&again.phase, &again.announcement),
            (
                &Phase::AnsweringAgain(regrouped),
                &Announcement::AnsweringAgain(regrouped)
            )
        );
        let failed = again.reduce(ParticipantAction::Reassigned(Err("busy".into())));
        assert!(
            matches!(
                failed.phase,
                Phase::AgainFailed {
                    why: AgainReason::Regrouped,
                    ..
                }
            ),
            "{:?}",
            failed.phase
        );
        assert!(failed.shows_progress() && failed.progress() == 1.0);
        // Trying again (the page passes the reason the phase holds on).
        let retried = failed.reduce(ParticipantAction::LeftOut(regrouped));
        assert_eq!(retried.phase, Phase::AnsweringAgain(regrouped));
        let sent = retried
            .reduce(reassigned(&an_upload()))
            .reduce(ParticipantAction::Sent(vec![("u".into(), a_receipt(1))]));
        assert_eq!(sent.sent_again, Some(regrouped));
        assert_eq!(sent.announcement, Announcement::SentAgain(regrouped));
        // The new cohort is then spoilt: the last reason is the one shown.
        let twice = sent
            .reduce(ParticipantAction::LeftOut(AgainReason::Spoilt))
            .reduce(reassigned(&an_upload()))
            .reduce(ParticipantAction::Sent(vec![("u".into(), a_receipt(2))]));
        assert_eq!(twice.sent_again, Some(AgainReason::Spoilt));
        assert_eq!(
            twice.announcement,
            Announcement::SentAgain(AgainReason::Spoilt)
        );
        // A reassignment that arrives when the page is not answering again changes nothing.
        let stale = twice.clone().reduce(reassigned(&an_upload()));
        assert_eq!(stale, twice);
    }

    #[test]
    fn arrow_keys_move_between_classroom_steps() {
        assert_eq!(step_after_key(1, "ArrowRight"), Some(2));
        assert_eq!(step_after_key(4, "ArrowRight"), Some(1));
        assert_eq!(step_after_key(1, "ArrowLeft"), Some(4));
        assert_eq!(step_after_key(3, "ArrowLeft"), Some(2));
        assert_eq!(step_after_key(3, "Home"), Some(1));
        assert_eq!(step_after_key(2, "End"), Some(4));
        assert_eq!(step_after_key(2, "a"), None);
    }

    #[test]
    fn analysis_model_choices_stay_consistent() {
        let s = Rc::new(AnalysisState::default())
            .reduce(AnalysisAction::ToggleX("a".into()))
            .reduce(AnalysisAction::ToggleX("b".into()))
            .reduce(AnalysisAction::SetY("a".into()));
        assert_eq!(s.y.as_deref(), Some("a"));
        assert_eq!(s.x, vec!["b".to_owned()]);
        let s = s.reduce(AnalysisAction::ToggleX("b".into()));
        assert!(s.x.is_empty());
    }
}
