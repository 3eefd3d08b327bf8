//! XLSForm's language columns: `label::Español (es)` is the `label` in the language tagged `es`.
//!
//! The main language (the draft's `language`) is the tag of the settings' `default_language`
//! (`English (en)`, a bare tag, or the name of a label column's language); without one it is
//! `en` when the survey sheet has a plain `label` column, else the first tagged label column's.
//! Its texts are in its tagged column when there is one, else in the plain column (`label`,
//! `hint`). Every other tag of a survey `label::…` column is a translation, and every
//! translation is complete: a text the main language has must be there in each.

use crate::error::{ImportError, Refusal};
use crate::sheets::{Row, Table};
use orthomask_survey::languages::valid_language_tag;
use std::collections::BTreeMap;

/// The main language and the others, by tag.
#[derive(Clone, Debug)]
pub(crate) struct Languages {
    pub main: String,
    pub others: Vec<String>,
}

/// A column's base name and, for `base::Name (tag)`, its language.
pub(crate) struct Column<'a> {
    pub base: String,
    pub language: Option<Language<'a>>,
}

/// A language as a column names it.
pub(crate) struct Language<'a> {
    pub name: &'a str,
    /// `None`: the column names no `(tag)`.
    pub tag: Option<&'a str>,
}

/// Split `label::Español (es)` into `label`, `Español` and `es`.
pub(crate) fn split(column: &str) -> Column<'_> {
    let Some((base, language)) = column.split_once("::") else {
        return Column {
            base: column.trim().to_ascii_lowercase(),
            language: None,
        };
    };
    let language = language.trim();
    let tag = language
        .rfind('(')
        .filter(|_| language.ends_with(')'))
        .map(|open| language[open + 1..language.len() - 1].trim())
        .filter(|tag| valid_language_tag(tag));
    let name = language.split('(').next().unwrap_or_default().trim();
    Column {
        base: base.trim().to_ascii_lowercase(),
        language: Some(Language { name, tag }),
    }
}

/// The tag of a `default_language` value, or why it has none.
fn tag_of(value: &str, survey: &Table) -> Result<String, String> {
    if let Some(Language { tag: Some(tag), .. }) = split(&format!("x::{value}")).language {
        return Ok(tag.to_owned());
    }
    if valid_language_tag(value) {
        return Ok(value.to_owned());
    }
    survey
        .columns
        .iter()
        .filter_map(|c| split(c).language)
        .find(|l| l.name == value && l.tag.is_some())
        .and_then(|l| l.tag.map(str::to_owned))
        .ok_or_else(|| format!("{value:?} names no language tag: write e.g. \"English (en)\""))
}

impl Languages {
    /// The languages of a form, from its survey sheet's label columns and `default_language`.
    pub fn resolve(survey: &Table, default_language: Option<&str>) -> Result<Self, Refusal> {
        let mut tags: Vec<String> = Vec::new();
        for column in &survey.columns {
            if let Column {
                base,
                language: Some(Language { tag: Some(tag), .. }),
            } = split(column)
                && base == "label"
                && !tags.iter().any(|t| t == tag)
            {
                tags.push(tag.to_owned());
            }
        }
        let main = match default_language.filter(|d| !d.is_empty()) {
            Some(value) => tag_of(value, survey).map_err(|why| Refusal::Setting {
                column: "default_language".into(),
                why,
            })?,
            None if survey.column("label").is_some() || tags.is_empty() => {
                orthomask_survey::languages::DEFAULT_LANGUAGE.to_owned()
            }
            None => tags[0].clone(),
        };
        let mut others: Vec<String> = tags.into_iter().filter(|t| *t != main).collect();
        others.sort();
        Ok(Self { main, others })
    }
}

/// Where one text (`label`, `hint`, `form_title`) of a sheet is, in each language.
#[derive(Clone, Debug)]
pub(crate) struct TextColumns {
    base: &'static str,
    main: Option<usize>,
    others: BTreeMap<String, (usize, String)>,
}

/// One text of a row in each language.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Texts {
    pub main: String,
    pub others: BTreeMap<String, String>,
}

impl TextColumns {
    /// Find `base`'s columns in `table`; a `base::Name` column without a tag is refused.
    pub fn find(
        table: &Table,
        base: &'static str,
        languages: &Languages,
    ) -> Result<Self, ImportError> {
        let mut main_tagged = None;
        let mut others = BTreeMap::new();
        for (i, column) in table.columns.iter().enumerate() {
            let split = split(column);
            if split.base != base {
                continue;
            }
            match split.language {
                None => {}
                Some(Language { tag: None, .. }) => {
                    return Err(ImportError::Row {
                        sheet: table.name,
                        row: table.header_row,
                        reason: Refusal::LanguageTag(column.clone()),
                    });
                }
                Some(Language { tag: Some(tag), .. }) if tag == languages.main => {
                    main_tagged = Some(i)
                }
                Some(Language { tag: Some(tag), .. })
                    if languages.others.iter().any(|t| t == tag) =>
                {
                    others.insert(tag.to_owned(), (i, column.clone()));
                }
                Some(Language { .. }) => {}
            }
        }
        Ok(Self {
            base,
            main: main_tagged.or_else(|| table.column(base)),
            others,
        })
    }

    /// The row's text in every language (`""` where a column is absent).
    pub fn read(&self, row: &Row, languages: &Languages) -> Texts {
        Texts {
            main: row.get(self.main).to_owned(),
            others: languages
                .others
                .iter()
                .map(|tag| {
                    let at = self.others.get(tag).map(|(i, _)| *i);
                    (tag.clone(), row.get(at).to_owned())
                })
                .collect(),
        }
    }

    /// The row's text in every language, refused when the main language has one and another
    /// language does not.
    pub fn complete(
        &self,
        table: &Table,
        row: &Row,
        languages: &Languages,
    ) -> Result<Texts, ImportError> {
        let texts = self.read(row, languages);
        if !texts.main.is_empty()
            && let Some((tag, _)) = texts.others.iter().find(|(_, t)| t.is_empty())
        {
            let column = self
                .others
                .get(tag)
                .map_or_else(|| format!("{}::{tag}", self.base), |(_, name)| name.clone());
            return Err(ImportError::Row {
                sheet: table.name,
                row: row.number,
                reason: Refusal::Untranslated(column),
            });
        }
        Ok(texts)
    }
}

impl Texts {
    /// Each language's texts of `parts` joined by a blank line (notes and a hint → help).
    pub fn join(parts: &[Texts]) -> Self {
        let join = |texts: Vec<&str>| {
            texts
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let tags: Vec<&String> = parts
            .first()
            .map(|p| p.others.keys().collect())
            .unwrap_or_default();
        Self {
            main: join(parts.iter().map(|p| p.main.as_str()).collect()),
            others: tags
                .into_iter()
                .map(|tag| {
                    let texts = parts
                        .iter()
                        .map(|p| p.others.get(tag).map_or("", String::as_str));
                    (tag.clone(), join(texts.collect()))
                })
                .collect(),
        }
    }

    /// The text in language `tag` (the main text for the main language).
    pub fn get(&self, tag: &str) -> &str {
        self.others.get(tag).map_or("", String::as_str)
    }
}
