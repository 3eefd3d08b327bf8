//! The receipts of one submission (one per destination) with the button that saves them: shown
//! when a form's upload went through, and when an upload that waited offline did.

use orthomask_survey::client::{receipt_file, receipts_list_url};
use orthomask_survey::upload::Receipt;
use yew::prelude::*;

use crate::components::save_button::SaveButton;
use crate::i18n::AppLanguage;
use crate::t;

/// Properties of [`Receipts`].
#[derive(Properties, Clone, PartialEq)]
pub struct ReceiptsProps {
    /// The survey id (names the saved file).
    pub survey: String,
    /// Each destination's URL and its checked receipt.
    pub receipts: Vec<(String, Receipt)>,
    /// The participant's language.
    pub language: AppLanguage,
}

/// The receipts and the save button.
#[function_component(Receipts)]
pub fn receipts(props: &ReceiptsProps) -> Html {
    let lang = props.language;
    let file = receipt_file(&props.receipts);
    let name = format!("orthomask-receipt-{}.json", props.survey);
    html! {
        <>
            { for props.receipts.iter().map(|(url, r)| html! {
                <dl>
                    <dt>{ t!(lang, "receipt-received-by") }</dt><dd>{ url }</dd>
                    <dt>{ t!(lang, "receipt-cohort") }</dt><dd>{ r.cohort }</dd>
                    <dt>{ t!(lang, "receipt-time") }</dt><dd>{ &r.received_at }</dd>
                    <dt>{ t!(lang, "receipt-hash") }</dt><dd class="hash" data-testid="receipt-hash">{ &r.upload_hash }</dd>
                    if let Some(list) = receipts_list_url(url, r.cohort) {
                        <dt>{ t!(lang, "receipt-list") }</dt>
                        <dd><a href={list} data-testid="receipt-list">{ t!(lang, "receipt-list-link", cohort = r.cohort) }</a></dd>
                    }
                </dl>
            }) }
            <p>{ t!(lang, "receipt-explain") }</p>
            <SaveButton label={t!(lang, "receipt-save")} class={classes!("primary")} file_name={name} mime="application/json" text={file} />
        </>
    }
}
