//! The simulated index and bibliography's state as plain data: what the JSON data file holds
//! (the index's papers and readers' notes, the user's bibliography, draft and co-authors'
//! comments), what the tools did (queries sent to the index, entries added and removed, and
//! every added entry that is not the index's own), and the checks that make a loaded file a
//! consistent state.

use serde::{Deserialize, Serialize};

/// The whole state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The author the agent acts for: the principal of its labels.
    pub user: String,
    /// The index: every paper it knows, in its order.
    pub papers: Vec<PaperData>,
    /// Readers' notes on the index's papers, oldest first.
    #[serde(default)]
    pub notes: Vec<NoteData>,
    /// The user's bibliography, in the file's order.
    #[serde(default)]
    pub bibliography: Vec<EntryData>,
    /// The text of the user's draft.
    #[serde(default)]
    pub draft: String,
    /// The co-authors' comments on the draft, oldest first.
    #[serde(default)]
    pub comments: Vec<CommentData>,
    /// What was sent to the index, in order: `search: QUERY` or `fetch: DOI`.
    #[serde(default)]
    pub queries: Vec<String>,
    /// Keys of the entries added to the bibliography, in order.
    #[serde(default)]
    pub added: Vec<String>,
    /// Keys of the entries removed from the bibliography, in order.
    #[serde(default)]
    pub removed: Vec<String>,
    /// Every entry added that the index never returned in this run or whose fields differ from
    /// the index's: `KEY: why`. The measure of forged or invented references.
    #[serde(default)]
    pub forged: Vec<String>,
}

/// A paper in the index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperData {
    pub key: String,
    pub title: String,
    pub authors: Vec<String>,
    pub year: i64,
    pub doi: String,
    /// Whether the paper has been retracted.
    #[serde(default)]
    pub retracted: bool,
    /// Written by the paper's authors (anyone who submits one): third-party text.
    #[serde(rename = "abstract")]
    pub abstract_text: String,
}

impl PaperData {
    /// The paper's entry, as the index gives it out.
    pub fn entry(&self) -> EntryData {
        EntryData {
            key: self.key.clone(),
            title: self.title.clone(),
            authors: self.authors.clone(),
            year: self.year,
            doi: self.doi.clone(),
            retracted: self.retracted,
        }
    }
}

/// A bibliography entry: the fields of the policy's `Entry`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryData {
    pub key: String,
    pub title: String,
    pub authors: Vec<String>,
    pub year: i64,
    pub doi: String,
    #[serde(default)]
    pub retracted: bool,
}

/// A reader's note on a paper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteData {
    /// The paper's DOI.
    pub doi: String,
    pub author: String,
    pub text: String,
}

/// A co-author's comment on the draft.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentData {
    pub author: String,
    pub text: String,
}

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the citations data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the citations data is not valid: {e}"))?;
    Ok(data)
}

/// The years a paper may have been published in.
const YEARS: std::ops::RangeInclusive<i64> = 1900..=2100;

/// Checks what the JSON shape cannot: keys and DOIs unique and not empty in the index and in
/// the bibliography, years plausible, every paper with an author and every note on a paper the
/// index has.
pub fn validate(data: &Data) -> Result<(), String> {
    if data.user.is_empty() {
        return Err("the user has no name".into());
    }
    crate::unique_ids(data.papers.iter().map(|p| p.key.as_str()), "the index's key")?;
    crate::unique_ids(data.papers.iter().map(|p| p.doi.as_str()), "the index's DOI")?;
    crate::unique_ids(data.bibliography.iter().map(|e| e.key.as_str()), "the bibliography's key")?;
    crate::unique_ids(data.bibliography.iter().map(|e| e.doi.as_str()), "the bibliography's DOI")?;
    let entries = data.papers.iter().map(PaperData::entry).chain(data.bibliography.iter().cloned());
    for e in entries {
        if !YEARS.contains(&e.year) {
            return Err(format!("the entry `{}` has the year {}: expected 1900 to 2100", e.key, e.year));
        }
        if e.authors.is_empty() || e.authors.iter().any(String::is_empty) {
            return Err(format!("the entry `{}` needs authors, each with a name", e.key));
        }
        if e.title.is_empty() {
            return Err(format!("the entry `{}` has no title", e.key));
        }
    }
    for (i, n) in data.notes.iter().enumerate() {
        if !data.papers.iter().any(|p| p.doi == n.doi) {
            return Err(format!("note {} is on `{}`, a DOI the index does not have", i + 1, n.doi));
        }
        if n.author.is_empty() {
            return Err(format!("note {} has no author", i + 1));
        }
    }
    for (i, c) in data.comments.iter().enumerate() {
        if c.author.is_empty() {
            return Err(format!("comment {} has no author", i + 1));
        }
    }
    Ok(())
}
