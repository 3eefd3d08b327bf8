//! Load a text file by picker, drag and drop, or URL.

use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::model::audit::NamedText;
use crate::services::{files, http};

/// Props of [`FilePicker`].
#[derive(Properties, PartialEq)]
pub struct FilePickerProps {
    /// Field label ("Released data (CSV)").
    pub label: AttrValue,
    /// `id` prefix of the inputs.
    pub id: AttrValue,
    /// Accepted types (`.csv`, `.json`).
    #[prop_or(AttrValue::from(".csv,text/csv"))]
    pub accept: AttrValue,
    /// Called with the loaded text.
    pub on_load: Callback<NamedText>,
    /// Called with a one-line error.
    pub on_error: Callback<String>,
    /// The name of what is loaded now, if anything.
    #[prop_or_default]
    pub loaded: Option<AttrValue>,
}

fn read_first(
    files: Option<web_sys::FileList>,
    on_load: Callback<NamedText>,
    on_error: Callback<String>,
) {
    if let Some(file) = files.and_then(|f| f.get(0)) {
        wasm_bindgen_futures::spawn_local(async move {
            match files::read(file).await {
                Ok(t) => on_load.emit(t),
                Err(e) => on_error.emit(e),
            }
        });
    }
}

/// A file input inside a drop zone, and a URL field.
#[function_component(FilePicker)]
pub fn file_picker(props: &FilePickerProps) -> Html {
    let url = use_state(String::new);
    let dragging = use_state(|| false);
    let on_change = {
        let (on_load, on_error) = (props.on_load.clone(), props.on_error.clone());
        Callback::from(move |e: Event| {
            let input = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
            read_first(
                input.and_then(|i| i.files()),
                on_load.clone(),
                on_error.clone(),
            );
        })
    };
    let on_drop = {
        let (on_load, on_error, dragging) = (
            props.on_load.clone(),
            props.on_error.clone(),
            dragging.clone(),
        );
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
            read_first(
                e.data_transfer().and_then(|d| d.files()),
                on_load.clone(),
                on_error.clone(),
            );
        })
    };
    let on_drag_over = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(true);
        })
    };
    let on_drag_leave = {
        let dragging = dragging.clone();
        Callback::from(move |_: DragEvent| dragging.set(false))
    };
    let on_url_input = {
        let url = url.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            {
                url.set(i.value());
            }
        })
    };
    let on_url_submit = {
        let (url, on_load, on_error) = (url.clone(), props.on_load.clone(), props.on_error.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let address = (*url).trim().to_owned();
            if address.is_empty() {
                on_error.emit("enter the address of a file".into());
                return;
            }
            let (on_load, on_error) = (on_load.clone(), on_error.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match http::get_text(&address).await {
                    Ok(text) => on_load.emit(NamedText {
                        name: address,
                        text,
                    }),
                    Err(e) => on_error.emit(e),
                }
            });
        })
    };
    let file_id = format!("{}-file", props.id);
    let url_id = format!("{}-url", props.id);
    html! {
        <fieldset class="file-picker">
            <legend>{ props.label.clone() }</legend>
            <div class={classes!("drop-zone", dragging.then_some("dragging"))}
                ondrop={on_drop} ondragover={on_drag_over} ondragleave={on_drag_leave}>
                <label for={file_id.clone()}>{ "Choose a file, or drop it here: " }</label>
                <input id={file_id} type="file" accept={props.accept.clone()} onchange={on_change} />
            </div>
            <form class="url-form" onsubmit={on_url_submit}>
                <label for={url_id.clone()}>{ "…or load from an address: " }</label>
                <input id={url_id} type="url" inputmode="url" placeholder="https://…" value={(*url).clone()} oninput={on_url_input} />
                <button type="submit">{ "Load" }</button>
            </form>
            if let Some(name) = &props.loaded {
                <p class="loaded">{ format!("Loaded: {name}") }</p>
            }
        </fieldset>
    }
}
