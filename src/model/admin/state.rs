//! The builder page's state (no HTML): the builder's fields and the JSON editor's text, kept in
//! step both ways. An edit in the builder rewrites the editor's text; text in the editor that
//! parses as a draft rewrites the builder, text that does not keeps the builder as it was and
//! shows one line with what and where.

use std::rc::Rc;

use yew::Reducible;

use super::builder::DraftForm;
use super::editor;

/// The builder and its JSON editor.
#[derive(Clone, Debug, PartialEq)]
pub struct BuilderState {
    /// The builder's fields.
    pub form: DraftForm,
    /// The editor's text.
    pub text: String,
    /// Why the editor's text is not a draft.
    pub text_error: Option<String>,
}

impl Default for BuilderState {
    fn default() -> Self {
        Self::from_form(DraftForm::default())
    }
}

impl BuilderState {
    fn from_form(form: DraftForm) -> Self {
        let text = form.to_json().map(|j| editor::text(&j)).unwrap_or_default();
        Self {
            form,
            text,
            text_error: None,
        }
    }
}

/// A change to the builder or the editor.
pub enum BuilderAction {
    /// Change the builder's fields.
    Edit(Rc<dyn Fn(&mut DraftForm)>),
    /// New text in the editor.
    Text(String),
}

impl Reducible for BuilderState {
    type Action = BuilderAction;

    fn reduce(self: Rc<Self>, action: BuilderAction) -> Rc<Self> {
        match action {
            BuilderAction::Edit(edit) => {
                let mut form = self.form.clone();
                edit(&mut form);
                // Fields that are not numbers yet leave the editor's text as it was.
                let text = form
                    .to_json()
                    .map_or_else(|_| self.text.clone(), |j| editor::text(&j));
                Rc::new(Self {
                    form,
                    text,
                    text_error: None,
                })
            }
            // The builder follows any text that is a draft's shape; what the schema would still
            // refuse (a field of another kind, an empty title, …) is shown as the editor's error.
            BuilderAction::Text(text) => match editor::parse(&text) {
                Ok(draft) => Rc::new(Self {
                    form: DraftForm::from_draft(&draft),
                    text_error: editor::check(&text).err().map(|e| e.to_string()),
                    text,
                }),
                Err(e) => Rc::new(Self {
                    form: self.form.clone(),
                    text,
                    text_error: Some(e.to_string()),
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_and_editor_follow_each_other() {
        let s = Rc::new(BuilderState::default());
        let s = s.reduce(BuilderAction::Edit(Rc::new(|f| f.id = "abc".into())));
        assert!(s.text.contains("\"id\": \"abc\""), "{}", s.text);
        let edited = s.text.replace("\"abc\"", "\"xyz\"");
        let s = s.reduce(BuilderAction::Text(edited));
        // The builder follows; the still empty title is the editor's one line, as the schema
        // would refuse it too.
        assert_eq!(
            (s.form.id.as_str(), s.text_error.as_deref()),
            ("xyz", Some("survey definition: title: must not be empty"))
        );
        let titled = s.text.replace("\"title\": \"\"", "\"title\": \"T\"");
        let s = s.reduce(BuilderAction::Text(titled));
        // With a title, the line names the next thing to write (the default's empty consent).
        assert_eq!(s.form.title, "T");
        assert!(
            s.text_error
                .as_deref()
                .is_some_and(|e| e.contains("consent")),
            "{:?}",
            s.text_error
        );
        // Invalid text: one line, and the builder keeps its last draft.
        let s = s.reduce(BuilderAction::Text("{\"id\": }".into()));
        assert_eq!(s.form.id, "xyz");
        assert_eq!(
            s.text_error.as_deref(),
            Some("JSON line 1, column 8: expected value")
        );
    }
}
