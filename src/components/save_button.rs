//! A button that saves text as a file.

use yew::prelude::*;

use crate::services::download;

/// Props of [`SaveButton`].
#[derive(Properties, PartialEq)]
pub struct SaveButtonProps {
    /// Button text.
    pub label: AttrValue,
    /// File name offered.
    pub file_name: AttrValue,
    /// MIME type.
    pub mime: AttrValue,
    /// Contents.
    pub text: AttrValue,
    /// Extra classes.
    #[prop_or_default]
    pub class: Classes,
}

/// Saves `text` as `file_name` when pressed; a failure is shown as one line.
#[function_component(SaveButton)]
pub fn save_button(props: &SaveButtonProps) -> Html {
    let error = use_state_eq(|| None::<String>);
    let on_click = {
        let (name, mime, text, error) = (
            props.file_name.clone(),
            props.mime.clone(),
            props.text.clone(),
            error.setter(),
        );
        Callback::from(move |_| error.set(download::save(&name, &mime, &text).err()))
    };
    html! {
        <>
            <button type="button" class={props.class.clone()} onclick={on_click}>{ props.label.clone() }</button>
            if let Some(e) = &*error { <span class="error" role="alert">{ e }</span> }
        </>
    }
}
