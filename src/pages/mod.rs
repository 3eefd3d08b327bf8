//! One module per route.
//!
//! * [`home`] — what Orthomask is, in plain words;
//! * [`participate`] — the participant's survey form, with [`survey_chooser`] (which surveys a
//!   participant may open here) and [`simulated_participants`] (filling a live demonstration);
//! * [`analyze`] — the analyst view;
//! * [`classroom`] — the classroom demonstration;
//! * [`audit`] — the audit view;
//! * [`admin`] — the survey team's page;
//! * [`bench`] — the browser benchmark.

pub mod admin;
pub mod analyze;
pub mod audit;
pub mod bench;
pub mod classroom;
pub mod home;
pub mod participate;
pub mod simulated_participants;
pub mod survey_chooser;
pub mod waiting_uploads;
