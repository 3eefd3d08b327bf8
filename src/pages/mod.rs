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

use wasm_bindgen::JsCast;

/// The value of the `<input>` or `<select>` an event came from.
pub fn target_value(e: &yew::Event) -> String {
    let Some(target) = e.target() else {
        return String::new();
    };
    if let Some(i) = target.dyn_ref::<web_sys::HtmlInputElement>() {
        i.value()
    } else if let Some(s) = target.dyn_ref::<web_sys::HtmlSelectElement>() {
        s.value()
    } else {
        String::new()
    }
}

/// Whether the checkbox an event came from is checked.
pub fn target_checked(e: &yew::Event) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .is_some_and(|i| i.checked())
}
