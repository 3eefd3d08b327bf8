//! Reading a form control from the event it sent: shared by the widgets and the pages.

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
