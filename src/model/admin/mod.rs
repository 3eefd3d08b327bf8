//! The survey team's page (`#/admin`), without the browser: what the builder turns into a draft,
//! what the JSON editor accepts, the plan the collector will choose, the status the services
//! report (read as `orthomask_survey::api`'s types, the ones the services write), the invitation file and the links to the analyst and audit views.
//!
//! * [`builder`] — the question builder's state and the one function that makes a draft of it
//!   ([`builder::DraftForm::draft`]), and back ([`builder::DraftForm::from_draft`]);
//! * [`editor`] — the JSON editor: text → [`SurveyDraft`](orthomask_survey::draft::SurveyDraft) or
//!   one line with what and where;
//! * [`state`] — the builder page's reducer: builder and editor kept in step both ways;
//! * [`preview`] — `plan_survey` run in the browser with the deployment's endpoints: the design
//!   the collector will choose, or its one-line refusal;
//! * [`terms_form`] — the builder's model-term control: one term's fields → a declared term;
//! * [`links`] — the invitations CSV, the analyst and audit views' links, the receipt lists;
//! * [`xlsform`] — "Import XLSForm": a workbook's bytes → the editor's text of its draft.

pub mod builder;
pub mod editor;
pub mod links;
pub mod preview;
pub mod state;
pub mod terms_form;
pub mod xlsform;
