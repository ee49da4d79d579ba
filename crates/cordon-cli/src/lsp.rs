//! `cordon lsp`: a language server for Cordon policies and plans, on stdio (the Language Server
//! Protocol, with `lsp-server`'s messages and `lsp-types`' types; synchronous, one thread
//! checks and answers, another reads).
//!
//! It offers: diagnostics as a document changes (whole-text sync; the checker's, with every
//! label, note and help, a refinement's counterexample among them), hover (a binding's type
//! with its refinement, a declaration as written with its doc and annotations, a builtin's
//! line of the reference), go to definition (into the policies' files too), completion (after
//! `x.` the tools of `x`'s capability or its record's fields, else the names in scope and the
//! builtins), whole-document formatting with `cordon fmt`'s formatter, and, on a plan, a code
//! lens whose command `cordon.effects` answers with its effect summary (and shows it as a message,
//! for the editors that do nothing with a command's answer). What each is made of is
//! the library's (`cordon::ide`); which policies a plan is checked against is
//! `lsp/documents.rs`'s; the framing is `lsp/wire.rs`'s.
//!
//! Whatever the client sends, the server answers or ignores it and goes on: a malformed
//! message gets an error answer, an unknown request `MethodNotFound`, a request about a
//! document that is not open `InvalidParams`, a position past the end is read as the end. It
//! stops at `exit` (exit code 0 after `shutdown`, else 1, as the protocol says) or when its
//! input ends (1).

mod answers;
mod documents;
mod text;
mod wire;

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, TryRecvError};

use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::{
    CodeLensOptions, CompletionOptions, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, ExecuteCommandOptions, HoverProviderCapability, MessageType, OneOf, ServerCapabilities,
    ShowMessageParams, TextDocumentSyncCapability, TextDocumentSyncKind,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::outcome::{Error, Report};
use answers::Refusal;
use documents::Documents;
use wire::Incoming;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Talk over standard input and output (the only way; accepted because editors pass it)
    #[arg(long)]
    pub stdio: bool,
}

/// Where the server is in the protocol's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Before `initialize`: only `initialize` and `exit` are taken.
    Starting,
    Running,
    /// After `shutdown`: only `exit` is taken.
    ShutDown,
}

/// Serves the protocol on stdio until `exit` or the end of the input.
pub fn run(_: &Args) -> Result<Report, Error> {
    let (to, from) = mpsc::channel();
    std::thread::spawn(move || wire::read_all(std::io::stdin().lock(), &to));
    let mut out = std::io::stdout().lock();
    let mut server = Server { stage: Stage::Starting, docs: Documents::new() };
    let clean = loop {
        let incoming = match from.try_recv() {
            Ok(incoming) => incoming,
            // Nothing more queued: check what changed, then wait.
            Err(TryRecvError::Empty) => {
                let published = guarded(|| server.docs.check_dirty());
                if send_all(&mut out, published).is_err() {
                    break false;
                }
                match from.recv() {
                    Ok(incoming) => incoming,
                    Err(_) => break false,
                }
            }
            Err(TryRecvError::Disconnected) => break false,
        };
        let written = match incoming {
            Incoming::Message(Message::Notification(n)) if n.method == "exit" => break server.stage == Stage::ShutDown,
            Incoming::Message(message) => {
                let replies = guarded(|| server.handle(message));
                send_all(&mut out, replies)
            }
            Incoming::Malformed { id, code, message } => wire::write_malformed(&mut out, id, code, &message),
            Incoming::End => break false,
        };
        if written.is_err() {
            break false; // the client is gone
        }
    };
    Ok(Report { stdout: String::new(), accepted: clean, error: None })
}

/// `f`'s result, or nothing if it panicked (a bug, written to stderr, the server's log): the
/// server goes on.
fn guarded<T: Default>(f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_default()
}

fn send_all(out: &mut impl Write, messages: impl IntoIterator<Item = impl Into<Message>>) -> std::io::Result<()> {
    messages.into_iter().try_for_each(|m| wire::write(out, &m.into()))
}

/// The server's state.
#[derive(Debug)]
struct Server {
    stage: Stage,
    docs: Documents,
}

impl Server {
    /// Handles one message: what to send back.
    fn handle(&mut self, message: Message) -> Vec<Message> {
        match message {
            Message::Request(request) => {
                let id = request.id.clone();
                let mut out: Vec<Message> = Vec::new();
                // A panic inside answering still answers the request.
                let answered = catch_unwind(AssertUnwindSafe(|| self.request(request, &mut out)));
                let result = answered.unwrap_or_else(|_| {
                    Err((ErrorCode::InternalError, "cordon lsp: internal error (a bug; see the server's log)".into()))
                });
                out.push(Message::Response(match result {
                    Ok(value) => Response::new_ok(id, value),
                    Err((code, message)) => Response::new_err(id, code as i32, message),
                }));
                out
            }
            Message::Notification(n) => self.notification(n).into_iter().map(Message::Notification).collect(),
            // The server asks the client nothing, so no answer is awaited.
            Message::Response(_) => Vec::new(),
        }
    }

    /// Answers `request`; notifications it causes first (the diagnostics of a document checked
    /// to answer it) go to `out`.
    fn request(&mut self, request: Request, out: &mut Vec<Message>) -> Result<Value, Refusal> {
        match (self.stage, request.method.as_str()) {
            (Stage::Starting, "initialize") => {
                self.docs.initialize(&request.params);
                self.stage = Stage::Running;
                Ok(initialize_result())
            }
            (Stage::Starting, _) => {
                Err((ErrorCode::ServerNotInitialized, "the server is not initialized yet: send `initialize`".into()))
            }
            (Stage::ShutDown, _) => Err((ErrorCode::InvalidRequest, "the server is shut down: send `exit`".into())),
            (Stage::Running, "initialize") => {
                Err((ErrorCode::InvalidRequest, "the server is already initialized".into()))
            }
            (Stage::Running, "shutdown") => {
                self.stage = Stage::ShutDown;
                Ok(Value::Null)
            }
            (Stage::Running, method) => {
                if let Some(uri) = document_of(&request.params) {
                    out.extend(self.docs.check_if_dirty(&uri).map(Message::Notification));
                }
                let docs = &self.docs;
                match method {
                    "textDocument/hover" => answers::hover(docs, params(request.params)?),
                    "textDocument/definition" => answers::definition(docs, params(request.params)?),
                    "textDocument/completion" => answers::completion(docs, params(request.params)?),
                    "textDocument/formatting" => answers::formatting(docs, params(request.params)?),
                    "textDocument/codeLens" => answers::code_lens(docs, params(request.params)?),
                    "workspace/executeCommand" => {
                        let command: lsp_types::ExecuteCommandParams = params(request.params)?;
                        let uri = command.arguments.first().and_then(Value::as_str).map(str::to_string);
                        let uri = uri.or_else(|| self.docs.last_plan().map(str::to_string));
                        if let Some(uri) = &uri {
                            out.extend(self.docs.check_if_dirty(uri).map(Message::Notification));
                        }
                        let summary = answers::effects(&self.docs, &command.command, uri.as_deref())?;
                        // Shown too, for the editors that do nothing with a command's result.
                        let shown = ShowMessageParams { typ: MessageType::INFO, message: summary.clone() };
                        out.push(Message::Notification(Notification::new("window/showMessage".into(), shown)));
                        Ok(Value::String(summary))
                    }
                    _ => Err((ErrorCode::MethodNotFound, format!("no method {}", cordon::api::text::guard(method)))),
                }
            }
        }
    }

    /// Takes a notification: what it causes to be sent now (a closed document's diagnostics
    /// cleared). Unknown notifications, and every one before `initialize` or after
    /// `shutdown`, are dropped, as the protocol says.
    fn notification(&mut self, n: Notification) -> Option<Notification> {
        if self.stage != Stage::Running {
            return None;
        }
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let open: DidOpenTextDocumentParams = params(n.params).ok()?;
                let doc = open.text_document;
                self.docs.open(doc.uri, doc.version, doc.text);
                None
            }
            "textDocument/didChange" => {
                let change: DidChangeTextDocumentParams = params(n.params).ok()?;
                let doc = change.text_document;
                self.docs.change(doc.uri.as_str(), doc.version, change.content_changes);
                None
            }
            "textDocument/didClose" => {
                let close: DidCloseTextDocumentParams = params(n.params).ok()?;
                self.docs.close(close.text_document.uri.as_str())
            }
            // A policy's file may have changed under the plans that read it.
            "textDocument/didSave" | "workspace/didChangeWatchedFiles" => {
                self.docs.touch_all();
                None
            }
            "workspace/didChangeConfiguration" => {
                if let Some(settings) = n.params.get("settings") {
                    self.docs.configure(settings);
                }
                None
            }
            _ => None,
        }
    }
}

/// The document a request's parameters name.
fn document_of(params: &Value) -> Option<String> {
    params.get("textDocument")?.get("uri")?.as_str().map(str::to_string)
}

/// A request's or a notification's parameters, read as `P`.
fn params<P: DeserializeOwned>(params: Value) -> Result<P, Refusal> {
    serde_json::from_value(params).map_err(|e| (ErrorCode::InvalidParams, format!("parameters that do not fit: {e}")))
}

/// What the server can do.
fn initialize_result() -> Value {
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..CompletionOptions::default()
        }),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![answers::EFFECTS.into()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    };
    json!({
        "capabilities": capabilities,
        "serverInfo": { "name": "cordon", "version": env!("CORDON_VERSION") },
    })
}
