//! The answers to the requests about a document: hover, go to definition, completion,
//! formatting, the code lens of a plan and its command (`cordon.effects`, the plan's effect
//! summary). Each reads the document's last check ([`super::documents`]) and returns the
//! result's JSON, or the error to answer with. Text shown to a person (hover, details, the
//! summary) passes the terminal guard first: what an editor shows is the characters there are.

use cordon::api::format::{FormatError, format};
use cordon::api::text::guard;
use cordon::ide::{Analysis, CompletionKind};
use lsp_server::ErrorCode;
use lsp_types::{
    CodeLens, CodeLensParams, Command, CompletionItem, CompletionItemKind, CompletionParams, DocumentFormattingParams,
    GotoDefinitionParams, Hover, HoverContents, HoverParams, Location, MarkupContent, MarkupKind, Range,
    TextDocumentPositionParams, TextEdit,
};
use serde_json::Value;

use super::documents::{Doc, Documents, MAX_DOCUMENT, START};

/// The command of a plan's code lens: its effect summary.
pub(super) const EFFECTS: &str = "cordon.effects";

/// Why a request is not answered.
pub(super) type Refusal = (ErrorCode, String);

/// The open document `uri`, or the refusal to answer about one that is not open.
fn open<'d>(docs: &'d Documents, uri: &str) -> Result<&'d Doc, Refusal> {
    docs.get(uri).ok_or_else(|| (ErrorCode::InvalidParams, format!("{} is not an open document", guard(uri))))
}

/// The document at `at`, its check (none for a document too large to check), and the byte
/// offset of `at`'s position.
fn at<'d>(
    docs: &'d Documents,
    at: &TextDocumentPositionParams,
) -> Result<(&'d Doc, Option<&'d Analysis>, usize), Refusal> {
    let doc = open(docs, at.text_document.uri.as_str())?;
    Ok((doc, doc.analysis.as_ref(), doc.text.offset(at.position)))
}

pub(super) fn hover(docs: &Documents, params: HoverParams) -> Result<Value, Refusal> {
    let (doc, analysis, offset) = at(docs, &params.text_document_position_params)?;
    let Some(hover) = analysis.and_then(|a| a.hover(&doc.name, offset)) else { return Ok(Value::Null) };
    let contents = MarkupContent { kind: MarkupKind::Markdown, value: guard(&hover.text) };
    let range = doc.text.range(hover.place.start, hover.place.end);
    Ok(json(Hover { contents: HoverContents::Markup(contents), range: Some(range) }))
}

pub(super) fn definition(docs: &Documents, params: GotoDefinitionParams) -> Result<Value, Refusal> {
    let (doc, analysis, offset) = at(docs, &params.text_document_position_params)?;
    let Some(analysis) = analysis else { return Ok(Value::Null) };
    let Some(place) = analysis.definition(&doc.name, offset) else { return Ok(Value::Null) };
    let Some(uri) = docs.uri_of(&place.file) else { return Ok(Value::Null) };
    let range = match analysis.source(&place.file) {
        Some(_) if place.file == doc.name => doc.text.range(place.start, place.end),
        Some(text) => super::text::Text::new(text.to_string()).range(place.start, place.end),
        None => Range::default(),
    };
    Ok(json(Location { uri, range }))
}

pub(super) fn completion(docs: &Documents, params: CompletionParams) -> Result<Value, Refusal> {
    let (doc, analysis, offset) = at(docs, &params.text_document_position)?;
    let Some(analysis) = analysis else { return Ok(Value::Null) };
    let items: Vec<CompletionItem> = analysis
        .completions(&doc.name, offset, doc.earlier.as_ref())
        .into_iter()
        .map(|c| CompletionItem {
            label: c.label,
            kind: Some(match c.kind {
                CompletionKind::Tool => CompletionItemKind::METHOD,
                CompletionKind::Field => CompletionItemKind::FIELD,
                CompletionKind::Variable => CompletionItemKind::VARIABLE,
                CompletionKind::Function | CompletionKind::Builtin => CompletionItemKind::FUNCTION,
                CompletionKind::Constant => CompletionItemKind::CONSTANT,
                CompletionKind::Type => CompletionItemKind::STRUCT,
            }),
            detail: c.detail.map(|d| guard(&d)),
            ..CompletionItem::default()
        })
        .collect();
    Ok(json(items))
}

/// The whole document formatted, as one edit (none if it is formatted already); nothing for a
/// document with syntax errors, or one too large to check.
pub(super) fn formatting(docs: &Documents, params: DocumentFormattingParams) -> Result<Value, Refusal> {
    let doc = open(docs, params.text_document.uri.as_str())?;
    if doc.text.as_str().len() > MAX_DOCUMENT {
        return Ok(Value::Null);
    }
    match format(doc.text.as_str()) {
        Ok(formatted) if formatted == doc.text.as_str() => Ok(json(Vec::<TextEdit>::new())),
        Ok(formatted) => Ok(json(vec![TextEdit { range: doc.text.whole(), new_text: formatted }])),
        Err(FormatError::Syntax(_)) => Ok(Value::Null),
        Err(e) => Err((ErrorCode::RequestFailed, guard(&e.to_string()))),
    }
}

/// A plan's one code lens, at its start: what it may do.
pub(super) fn code_lens(docs: &Documents, params: CodeLensParams) -> Result<Value, Refusal> {
    let doc = open(docs, params.text_document.uri.as_str())?;
    if doc.policy {
        return Ok(json(Vec::<CodeLens>::new()));
    }
    let command = Command {
        title: "what this plan may do".into(),
        command: EFFECTS.into(),
        arguments: Some(vec![Value::String(doc.uri.as_str().to_string())]),
    };
    Ok(json(vec![CodeLens { range: Range { start: START, end: START }, command: Some(command), data: None }]))
}

/// `cordon.effects [URI]`: the effect summary of the plan `uri` (by default the plan opened or
/// changed last), as `cordon check --effects` prints it.
pub(super) fn effects(docs: &Documents, command: &str, uri: Option<&str>) -> Result<String, Refusal> {
    if command != EFFECTS {
        return Err((ErrorCode::InvalidParams, format!("no command {}: the one command is {EFFECTS}", guard(command))));
    }
    let Some(uri) = uri else { return Err((ErrorCode::InvalidParams, "no plan is open".into())) };
    let doc = open(docs, uri)?;
    let summary = match &doc.analysis {
        Some(analysis) => analysis.effects(),
        None => "This file is too large to check.\n".into(),
    };
    Ok(guard(&summary))
}

/// A result as JSON (serialising the protocol's types cannot fail).
fn json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
