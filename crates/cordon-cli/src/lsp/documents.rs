//! The open documents, which policies a plan is checked against, and each document's check and
//! diagnostics.
//!
//! A document that declares a capability or an entry is a policy, checked alone as
//! `cordon check --policy FILE` checks it. Any other is a plan, checked against the policies
//! the client named (`initializationOptions: {"policies": [..]}`, paths relative to the
//! workspace's root, or `settings.cordon.policies` in `workspace/didChangeConfiguration`),
//! each one's text taken from the editor if it is open there, else from its file; with none
//! named, against the policy documents open in the editor. A document is checked again after
//! it changes and after any policy changes, when the client has nothing more queued, or before
//! a request about it is answered, with the checker's default limits (its solver timeout and
//! its whole check's), so no document keeps the server busy for long.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use cordon::Source;
use cordon::api::CheckOptions;
use cordon::api::text::guard;
use cordon::ide::{Analysis, Problem, is_policy};
use lsp_server::Notification;
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position,
    PublishDiagnosticsParams, Range, TextDocumentContentChangeEvent, Uri,
};
use serde_json::Value;

use super::text::Text;

/// The largest document checked: past it, a document is kept but not checked.
pub(super) const MAX_DOCUMENT: usize = 4 << 20;

/// One open document.
#[derive(Debug)]
pub(super) struct Doc {
    pub(super) uri: Uri,
    /// The name its diagnostics and the checker know it by: its path, or its URI.
    pub(super) name: String,
    path: Option<PathBuf>,
    version: i32,
    pub(super) text: Text,
    /// It declares a capability or an entry.
    pub(super) policy: bool,
    /// Its last check (none for a document too large to check).
    pub(super) analysis: Option<Analysis>,
    /// The last check of it that got past parsing: the bindings' types while it does not.
    pub(super) earlier: Option<Analysis>,
}

/// The open documents and what they are checked with.
#[derive(Debug)]
pub(super) struct Documents {
    root: Option<PathBuf>,
    /// The policies the client named, as paths.
    policies: Vec<PathBuf>,
    /// Whom `user()` names in the policies' labels.
    user: String,
    open: BTreeMap<String, Doc>,
    /// Documents to check again.
    dirty: BTreeSet<String>,
    /// The plan opened or changed last: what `cordon.effects` with no argument is about.
    last_plan: Option<String>,
}

impl Documents {
    pub(super) fn new() -> Documents {
        Documents {
            root: None,
            policies: Vec::new(),
            user: "user".into(),
            open: BTreeMap::new(),
            dirty: BTreeSet::new(),
            last_plan: None,
        }
    }

    /// Takes the workspace's root and the options from `initialize`'s parameters.
    pub(super) fn initialize(&mut self, params: &Value) {
        let root = params.get("rootUri").and_then(Value::as_str).and_then(path_of).or_else(|| {
            let folder = params.get("workspaceFolders")?.get(0)?.get("uri")?.as_str()?;
            path_of(folder)
        });
        self.root = root.or_else(|| params.get("rootPath").and_then(Value::as_str).map(PathBuf::from));
        if let Some(options) = params.get("initializationOptions") {
            self.configure(options);
        }
    }

    /// Takes `{"policies": [..], "user": ".."}`, from `initializationOptions` or from the
    /// `cordon` section of the client's settings; every document is checked again.
    pub(super) fn configure(&mut self, options: &Value) {
        let options = options.get("cordon").unwrap_or(options);
        if let Some(paths) = options.get("policies").and_then(Value::as_array) {
            let base = self.root.clone().unwrap_or_default();
            self.policies = paths.iter().filter_map(Value::as_str).map(|p| base.join(p)).collect();
        }
        if let Some(user) = options.get("user").and_then(Value::as_str) {
            self.user = user.to_string();
        }
        let open: Vec<String> = self.open.keys().cloned().collect();
        for uri in open {
            self.reclassify(&uri);
        }
        self.touch_all();
    }

    /// Says again whether the open document `uri` is a policy; whether it was one or is.
    fn reclassify(&mut self, uri: &str) -> bool {
        let Some(doc) = self.open.get(uri) else { return false };
        let (was, is) = (doc.policy, self.is_policy(doc.path.as_deref(), doc.text.as_str()));
        if let Some(doc) = self.open.get_mut(uri) {
            doc.policy = is;
        }
        was || is
    }

    /// Whether the document at `path` holding `text` is a policy: it is named as one, or it
    /// declares a capability or an entry.
    fn is_policy(&self, path: Option<&Path>, text: &str) -> bool {
        path.is_some_and(|p| self.policies.iter().any(|q| q == p)) || (text.len() <= MAX_DOCUMENT && is_policy(text))
    }

    /// Every open document is to be checked again (a policy may have changed on disk).
    pub(super) fn touch_all(&mut self) {
        self.dirty.extend(self.open.keys().cloned());
    }

    pub(super) fn open(&mut self, uri: Uri, version: i32, text: String) {
        let path = path_of(uri.as_str());
        let name = path.as_ref().map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string());
        let policy = self.is_policy(path.as_deref(), &text);
        let text = Text::new(text);
        let key = uri.as_str().to_string();
        let doc = Doc { uri, name, path, version, text, policy, analysis: None, earlier: None };
        self.changed(&key, doc.policy);
        self.open.insert(key, doc);
    }

    /// Applies `changes` to the open document `uri`, in order (none if it is not open).
    pub(super) fn change(&mut self, uri: &str, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        let Some(doc) = self.open.get_mut(uri) else { return };
        for change in changes {
            doc.text = doc.text.changed(change);
        }
        doc.version = version;
        let policy = self.reclassify(uri);
        self.changed(uri, policy);
    }

    /// Closes `uri`: its diagnostics are cleared.
    pub(super) fn close(&mut self, uri: &str) -> Option<Notification> {
        let doc = self.open.remove(uri)?;
        self.dirty.remove(uri);
        if self.last_plan.as_deref() == Some(uri) {
            self.last_plan = None;
        }
        if doc.policy {
            self.touch_all(); // the plans read its file now, or no longer check against it
        }
        Some(publish(doc.uri, None, Vec::new()))
    }

    /// `uri` changed: it is checked again, and so is every plan if it is (or was) a policy.
    fn changed(&mut self, uri: &str, policy: bool) {
        if policy {
            self.touch_all();
        } else {
            self.last_plan = Some(uri.to_string());
        }
        self.dirty.insert(uri.to_string());
    }

    /// The plan opened or changed last, if it is still open.
    pub(super) fn last_plan(&self) -> Option<&str> {
        self.last_plan.as_deref()
    }

    pub(super) fn get(&self, uri: &str) -> Option<&Doc> {
        self.open.get(uri)
    }

    /// Checks every document that changed, and says what each now has wrong.
    pub(super) fn check_dirty(&mut self) -> Vec<Notification> {
        let dirty = std::mem::take(&mut self.dirty);
        dirty.iter().filter_map(|uri| self.check(uri)).collect()
    }

    /// Checks `uri` now if it changed since its last check.
    pub(super) fn check_if_dirty(&mut self, uri: &str) -> Option<Notification> {
        if self.dirty.remove(uri) { self.check(uri) } else { None }
    }

    /// Checks the open document `uri`: its diagnostics.
    fn check(&mut self, uri: &str) -> Option<Notification> {
        let doc = self.open.get(uri)?;
        let size = doc.text.as_str().len();
        if size > MAX_DOCUMENT {
            let message = format!("this file is too large to check ({size} bytes; at most {MAX_DOCUMENT})");
            let range = Range::default();
            let diagnostic = Diagnostic::new(range, Some(DiagnosticSeverity::WARNING), None, None, message, None, None);
            let (uri, version) = (doc.uri.clone(), doc.version);
            if let Some(doc) = self.open.get_mut(uri.as_str()) {
                doc.analysis = None;
            }
            return Some(publish(uri, Some(version), vec![diagnostic]));
        }
        let options = CheckOptions::default();
        let source = Source::new(doc.name.clone(), doc.text.as_str());
        let (analysis, unread) = if doc.policy {
            (Analysis::check(&[source], None, &options, &self.user), Vec::new())
        } else {
            let (policies, unread) = self.policies_for(uri);
            (Analysis::check(&policies, Some(&source), &options, &self.user), unread)
        };
        let mut texts = HashMap::new();
        let problems = analysis.problems(&doc.name);
        let mut diagnostics: Vec<Diagnostic> =
            problems.iter().map(|p| self.diagnostic(p, &analysis, &doc.text, &mut texts)).collect();
        diagnostics.extend(unread);
        let (uri, version) = (doc.uri.clone(), doc.version);
        let doc = self.open.get_mut(uri.as_str())?;
        if analysis.typed() {
            doc.earlier = None;
        } else if let Some(previous) = doc.analysis.take().filter(Analysis::typed) {
            doc.earlier = Some(previous);
        }
        doc.analysis = Some(analysis);
        Some(publish(uri, Some(version), diagnostics))
    }

    /// The policies the plan `uri` is checked against, and a diagnostic for each that cannot
    /// be read.
    fn policies_for(&self, uri: &str) -> (Vec<Source>, Vec<Diagnostic>) {
        if self.policies.is_empty() {
            let open = self.open.iter().filter(|(u, d)| d.policy && u.as_str() != uri);
            return (open.map(|(_, d)| Source::new(d.name.clone(), d.text.as_str())).collect(), Vec::new());
        }
        let mut sources = Vec::new();
        let mut unread = Vec::new();
        for path in &self.policies {
            if let Some(doc) = self.open.values().find(|d| d.path.as_deref() == Some(path.as_path())) {
                sources.push(Source::new(doc.name.clone(), doc.text.as_str()));
                continue;
            }
            match Source::read(path) {
                Ok(source) => sources.push(source),
                Err(e) => {
                    let message = guard(&format!("{e}: the plan is checked without this policy"));
                    let severity = Some(DiagnosticSeverity::ERROR);
                    unread.push(Diagnostic::new(Range::default(), severity, None, None, message, None, None));
                }
            }
        }
        (sources, unread)
    }

    /// `problem` as the protocol says it, on `text`; its related places in other files are
    /// placed in their text as `analysis` checked it (each file's lines found once, in `texts`).
    fn diagnostic<'p>(
        &self,
        problem: &'p Problem,
        analysis: &Analysis,
        text: &Text,
        texts: &mut HashMap<&'p str, Text>,
    ) -> Diagnostic {
        let mut related = Vec::new();
        for (place, message) in &problem.related {
            let Some(uri) = self.uri_of(&place.file) else { continue };
            let Some(source) = analysis.source(&place.file) else { continue };
            let there = texts.entry(place.file.as_str()).or_insert_with(|| Text::new(source.to_string()));
            let location = Location { uri, range: there.range(place.start, place.end) };
            related.push(DiagnosticRelatedInformation { location, message: guard(message) });
        }
        Diagnostic {
            range: text.range(problem.place.start, problem.place.end),
            severity: Some(if problem.error { DiagnosticSeverity::ERROR } else { DiagnosticSeverity::WARNING }),
            code: Some(NumberOrString::String(problem.code.clone())),
            source: Some("cordon".into()),
            message: guard(&problem.message),
            related_information: (!related.is_empty()).then_some(related),
            ..Diagnostic::default()
        }
    }

    /// The URI of the file a check named `name`: an open document's, or its path's.
    pub(super) fn uri_of(&self, name: &str) -> Option<Uri> {
        if let Some(doc) = self.open.values().find(|d| d.name == name) {
            return Some(doc.uri.clone());
        }
        let path = Path::new(name);
        let url = url::Url::from_file_path(path).ok()?;
        Uri::from_str(url.as_str()).ok()
    }
}

/// The path of a `file:` URI.
fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok().filter(|u| u.scheme() == "file")?.to_file_path().ok()
}

/// The notification that `uri` has these diagnostics now.
fn publish(uri: Uri, version: Option<i32>, diagnostics: Vec<Diagnostic>) -> Notification {
    let params = PublishDiagnosticsParams { uri, diagnostics, version };
    Notification::new("textDocument/publishDiagnostics".into(), params)
}

/// The start of a document.
pub(super) const START: Position = Position { line: 0, character: 0 };
