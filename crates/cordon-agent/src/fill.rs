//! Filling typed holes with a model: the check-and-retry loop, and [`ModelHoles`], the engine's
//! hole filler for a request.
//!
//! For each hole a run reaches, a [`Filler`] builds the hole's [`prompt`](crate::prompt), asks
//! its provider, takes the one fenced code block out of the reply ([`extract_code`]), adds it
//! to the source map as a file of its own and checks it in the hole's place
//! ([`cordon_types::check_fill`], or [`cordon_types::check_nested_fill`] for a hole inside a
//! fill). Diagnostics go back to the model in their concise form as the next message, up to
//! [`FillConfig::max_attempts`]; a hole that gets no fill ends the run with a hole error the
//! caller sees as a failure. An accepted fill runs with the label of its prompt. Every prompt,
//! reply, rejection and accepted fill is an [`Event`] told to the engine's observers, in order
//! with the run's effects (the transcript is one of them).
//!
//! A model is a sink whose label is its clearance ([`FillConfig::clearance`]; see
//! [`crate::prompt`] for what a prompt shows). A hole reached under a program-counter label
//! that does not flow to the clearance is not asked of the model at all: being asked would tell
//! it which way the decisions before the hole went (a hole per line of a secret file is asked
//! once per line; a hole in a branch on a secret is asked only if the branch ran). The run ends
//! there with a `label-flow` error at the hole that names the model and the clearance it would
//! need, with the decisions' sources as related places.

use std::collections::HashMap;
use std::sync::Arc;

use cordon_egress::{Scanner, redact};
use cordon_engine::{Event, Holes, Observer, Problem, Turn};
use cordon_label::{DcLabel, Label};
use cordon_runtime::effect::Refill;
use cordon_runtime::{ErrorKind, HoleRequest, Run, RunError, Step};
use cordon_syntax::{Diagnostic, FileId, SourceMap, Span, render};
use cordon_types::{CheckOptions, Checked, CheckedFill, FillOutcome, HoleSite, check_fill, check_nested_fill};

use crate::prompt::{Earlier, NotCleared, Prompt, PromptStats, add_history, prompt};
use crate::provider::{Message, Provider, ProviderError, Request, Usage};

/// Replies longer than this many bytes are not read for code.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// At most this many diagnostics go back to the model after one attempt.
const MAX_DIAGNOSTICS: usize = 8;

/// How holes are filled.
#[derive(Debug, Clone)]
pub struct FillConfig {
    /// Replies asked for one hole before it is given up (at least 1).
    pub max_attempts: u32,
    /// How deep holes may nest: a hole of the program is at depth 1, a hole in its fill at 2.
    pub max_depth: usize,
    /// What the model may be shown (a value whose label does not flow here is hidden, and a
    /// hole reached under a program-counter label that does not flow here is not asked).
    pub clearance: DcLabel,
    /// The most tokens a reply may have.
    pub max_tokens: u32,
    /// Names for the clearances the host offers, least first (the CLI's `public` and `user`):
    /// a hole not asked for want of clearance names the least of them that would do.
    pub clearance_names: Vec<(String, DcLabel)>,
    /// The conversation so far, shown (as labels allow) in the prompt of the request's root
    /// hole.
    pub history: Vec<Earlier>,
    /// The principal the run acts for (whom `user()` names in the policy's labels): each
    /// accepted fill's calls are judged for them before it runs (`cordon_flow::analyze_fill`).
    pub user: String,
    /// Whether a person speaking for `user` will be shown cards: a refusal they may lift is
    /// then left to them rather than sent back to the model.
    pub asked: bool,
}

impl Default for FillConfig {
    /// Three attempts, depth four, public values only, 4096-token replies.
    fn default() -> FillConfig {
        FillConfig {
            max_attempts: 3,
            max_depth: 4,
            clearance: DcLabel::untrusted(),
            max_tokens: 4096,
            clearance_names: Vec::new(),
            history: Vec::new(),
            user: "user".to_string(),
            asked: false,
        }
    }
}

/// What filling one hole cost and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoleStats {
    /// The hole's id (`0`, `0.1` for the second hole in the fill of hole `0`, ..).
    pub hole: String,
    /// Replies asked for.
    pub attempts: u32,
    /// Tokens over all attempts.
    pub usage: Usage,
    /// Estimated tokens of the hole's first prompt.
    pub prompt_tokens: u64,
    /// Whether a fill was accepted.
    pub filled: bool,
    /// Why the model gave no answer, when that ended the hole.
    pub model_error: Option<ProviderError>,
}

impl HoleStats {
    /// Adds what a later round at the same hole cost, and how it ended.
    fn add(&mut self, later: HoleStats) {
        self.attempts += later.attempts;
        self.usage += later.usage;
        self.filled = later.filled;
        self.model_error = later.model_error;
    }
}

/// Fills holes with one model: the provider and the settings.
pub struct Filler<'a> {
    provider: &'a mut dyn Provider,
    config: FillConfig,
    /// The outgoing-data check's detectors: what a model is sent has what is never sent
    /// replaced by its placeholder (`[card number]`). None: sent as it is.
    scanner: Option<Arc<Scanner>>,
    /// Each message text already read by the scanner, and its rewrite where it needed one: the
    /// reference and declarations repeat in every prompt, and a conversation only grows.
    read: HashMap<String, Option<String>>,
}

impl std::fmt::Debug for Filler<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filler").field("model", &self.provider.name()).field("config", &self.config).finish()
    }
}

impl<'a> Filler<'a> {
    /// A filler asking `provider`, with the default settings.
    pub fn new(provider: &'a mut dyn Provider) -> Filler<'a> {
        Filler { provider, config: FillConfig::default(), scanner: None, read: HashMap::new() }
    }

    /// The same filler, every prompt it sends read by `scanner` first: a model is a reader
    /// other than the user, and what is never sent (a credential, a card number, the vault's
    /// secrets however encoded) reaches it as a placeholder.
    pub fn with_scanner(mut self, scanner: Arc<Scanner>) -> Filler<'a> {
        self.scanner = Some(scanner);
        self
    }

    /// `messages` as the model is sent them; each text is scanned once.
    fn outgoing(&mut self, messages: &[Message]) -> Vec<Message> {
        let Some(scanner) = &self.scanner else { return messages.to_vec() };
        let mut sent = Vec::with_capacity(messages.len());
        for m in messages {
            let rewrite = self.read.entry(m.content.clone()).or_insert_with(|| {
                let findings = scanner.scan_never(&m.content);
                (!findings.is_empty()).then(|| redact(&m.content, &findings))
            });
            sent.push(Message { role: m.role, content: rewrite.clone().unwrap_or_else(|| m.content.clone()) });
        }
        sent
    }

    /// The same filler with these settings.
    pub fn with_config(mut self, config: FillConfig) -> Filler<'a> {
        self.config = config;
        self
    }

    /// Asks for fills of one hole until one checks or the attempts run out, telling `observer`
    /// each prompt, reply and verdict. The prompt's messages are the start of the
    /// conversation; each rejected reply and its diagnostics are added to it.
    pub fn fill_hole(
        &mut self,
        hole: &str,
        prompt: &Prompt,
        check: &mut dyn FnMut(&str, u32) -> Checking,
        observer: &mut dyn Observer,
    ) -> Filled {
        let conversation = Conversation { messages: prompt.messages.clone(), attempts: 0 };
        self.converse(hole, prompt, conversation, check, observer)
    }

    /// [`Filler::fill_hole`] going on with `conversation`: its attempts count towards
    /// [`FillConfig::max_attempts`], and `prompt`'s messages are not used (its label is).
    fn converse(
        &mut self,
        hole: &str,
        prompt: &Prompt,
        conversation: Conversation,
        check: &mut dyn FnMut(&str, u32) -> Checking,
        observer: &mut dyn Observer,
    ) -> Filled {
        let Conversation { mut messages, attempts: before } = conversation;
        let mut stats = HoleStats {
            hole: hole.to_string(),
            attempts: 0,
            usage: Usage::default(),
            prompt_tokens: prompt.stats.estimated_tokens,
            filled: false,
            model_error: None,
        };
        let max_attempts = self.config.max_attempts.max(1);
        let mut last = Rejection { feedback: "no attempt was made".into(), first: None, at: None };
        for attempt in before + 1..=max_attempts {
            stats.attempts = attempt - before;
            let request = Request {
                messages: self.outgoing(&messages),
                max_tokens: self.config.max_tokens,
                hole: Some(hole.to_string()),
            };
            let turns: Vec<Turn<'_>> =
                request.messages.iter().map(|m| Turn { role: m.role.as_str(), content: &m.content }).collect();
            observer.event(&Event::HolePrompted {
                hole,
                attempt,
                max_attempts,
                model: self.provider.name(),
                label: &prompt.label,
                max_tokens: request.max_tokens,
                messages: &turns,
            });
            let completion = match self.provider.complete(&request) {
                Ok(c) => c,
                Err(e) => {
                    observer.event(&Event::ModelFailed { hole, attempt, error: &e.to_string() });
                    let reason = format!("the model gave no answer: {e}");
                    abandoned(observer, Some(hole), attempt, ErrorKind::Hole.code(), &reason);
                    stats.model_error = Some(e);
                    return Filled { fill: Err(NoFill { reason, rejected_at: None }), stats };
                }
            };
            stats.usage += completion.usage;
            observer.event(&Event::FillReceived { hole, attempt, text: &completion.text, usage: completion.usage });
            let rejection = match extract(&completion.text) {
                Err(problem) => Rejection { feedback: problem, first: None, at: None },
                Ok(Extracted { code, note }) => match check(code, attempt) {
                    Checking::Accepted(fill) => {
                        let file = fill.module().file;
                        observer.event(&Event::FillAccepted { hole, attempt, code, file });
                        stats.filled = true;
                        messages.push(Message::assistant(echo(&completion.text)));
                        let conversation = Conversation { messages, attempts: attempt };
                        return Filled { fill: Ok((fill, conversation)), stats };
                    }
                    Checking::Rejected(mut rejection) => {
                        if let Some(note) = note {
                            rejection.feedback = format!("{}{note}\n", rejection.feedback);
                        }
                        rejection
                    }
                },
            };
            observer.event(&Event::FillRejected {
                hole,
                attempt,
                feedback: &rejection.feedback,
                first: rejection.first.as_ref(),
            });
            messages.push(Message::assistant(echo(&completion.text)));
            messages.push(Message::user(format!(
                "Your fill was rejected:\n{}\nFix it and answer again with exactly one ```cordon block.",
                rejection.feedback
            )));
            last = rejection;
        }
        let first = last.feedback.lines().next().unwrap_or_default().to_string();
        let attempts = before + stats.attempts;
        let plural = if attempts == 1 { "" } else { "s" };
        let reason = format!("no fill checked in {attempts} attempt{plural} (last: {first})");
        abandoned(observer, Some(hole), attempts, ErrorKind::Hole.code(), &reason);
        Filled { fill: Err(NoFill { reason, rejected_at: last.at }), stats }
    }
}

/// Tells `observer` that a hole gets no fill.
fn abandoned(observer: &mut dyn Observer, hole: Option<&str>, attempts: u32, code: cordon_syntax::Code, reason: &str) {
    observer.event(&Event::HoleAbandoned { hole, attempts, code, reason });
}

/// What checking one attempt's code said.
#[derive(Debug)]
pub enum Checking {
    /// The fill checked.
    Accepted(Box<CheckedFill>),
    /// It did not.
    Rejected(Rejection),
}

/// Why a fill was rejected: the diagnostics in the form sent back to the model, and the first
/// of them as data, for the transcript and whoever reads it (nothing reparses the text).
#[derive(Debug, Clone)]
pub struct Rejection {
    pub feedback: String,
    pub first: Option<Problem>,
    /// Where in the fill the first diagnostic points, and what it says: an error about the
    /// hole points into the fill the model last wrote.
    pub at: Option<(Span, String)>,
}

/// How one hole ended: an accepted fill and the conversation that led to it, or why there is
/// none; and its cost.
#[derive(Debug)]
pub struct Filled {
    pub fill: Result<(Box<CheckedFill>, Conversation), NoFill>,
    pub stats: HoleStats,
}

/// Why a hole got no fill: the reason, and where the last fill the model wrote was rejected
/// (when it was, by a diagnostic pointing into it).
#[derive(Debug, Clone)]
pub struct NoFill {
    pub reason: String,
    pub rejected_at: Option<(Span, String)>,
}

/// A hole's conversation with its model: the prompt's messages, then each reply and what was
/// said back to it; and how many replies were asked for.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub messages: Vec<Message>,
    pub attempts: u32,
}

/// A rejected reply as it is kept in the conversation: whole, unless it is over the size cap.
fn echo(reply: &str) -> String {
    if reply.len() > MAX_REPLY_BYTES {
        format!("<a reply of {} bytes, not shown>", reply.len())
    } else {
        reply.to_string()
    }
}

/// The language tag a fill's code block carries (```` ```cordon ````).
pub const FILL_TAG: &str = "cordon";

/// The code a reply holds, and which of its blocks that was when it had several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted<'a> {
    /// The block's content.
    pub code: &'a str,
    /// Which block was taken, when the reply had more than one (told to the model with any
    /// diagnostics, so it knows what was checked).
    pub note: Option<String>,
}

/// The code of a reply: the content of its one fenced block (```` ``` ```` with any info
/// string such as `cordon`); prose around it is ignored. [`extract`] says more.
pub fn extract_code(reply: &str) -> Result<&str, String> {
    extract(reply).map(|extracted| extracted.code)
}

/// The code of a reply. A reply with one fenced block gives that block, whatever its tag. A
/// reply with several (an example and the fill, say) gives the one tagged [`FILL_TAG`], and
/// says so; several blocks of which none or more than one is tagged `cordon` are a problem,
/// never a guess: the host does not choose between two plans. No block, an unclosed block or a
/// reply over [`MAX_REPLY_BYTES`] is a problem too, described for the model.
pub fn extract(reply: &str) -> Result<Extracted<'_>, String> {
    if reply.len() > MAX_REPLY_BYTES {
        return Err(format!(
            "error: the reply is {} bytes, over the {MAX_REPLY_BYTES}-byte limit; answer with a short fill",
            reply.len()
        ));
    }
    // (tag, content) of each closed block, in order.
    let mut blocks: Vec<(&str, &str)> = Vec::new();
    let mut open: Option<(&str, usize)> = None;
    let mut offset = 0;
    for line in reply.split_inclusive('\n') {
        let trimmed = line.trim_start();
        match open {
            None if trimmed.starts_with("```") => {
                let info = trimmed.trim_start_matches('`').trim();
                open = Some((info.split_whitespace().next().unwrap_or_default(), offset + line.len()));
            }
            Some((tag, start)) if line.trim() == "```" => {
                blocks.push((tag, reply.get(start..offset).unwrap_or_default()));
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    if open.is_some() {
        return Err("error: a code block is not closed with ```".to_string());
    }
    let tagged: Vec<usize> =
        blocks.iter().enumerate().filter(|(_, (tag, _))| tag.eq_ignore_ascii_case(FILL_TAG)).map(|(i, _)| i).collect();
    match (blocks.as_slice(), tagged.as_slice()) {
        ([], _) => Err(format!("error: the reply has no code block; put the fill in one ```{FILL_TAG} block")),
        ([(_, code)], _) => Ok(Extracted { code, note: None }),
        (all, [one]) => Ok(Extracted {
            code: all.get(*one).map(|(_, code)| *code).unwrap_or_default(),
            note: Some(format!(
                "note: the reply has {} code blocks; the fill checked is block {} of {}, the one tagged `{FILL_TAG}`",
                all.len(),
                one + 1,
                all.len()
            )),
        }),
        (all, []) => Err(format!(
            "error: the reply has {} code blocks and none is tagged `{FILL_TAG}`; give the fill in exactly one \
             ```{FILL_TAG} block",
            all.len()
        )),
        (all, many) => Err(format!(
            "error: the reply has {} code blocks, {} of them tagged `{FILL_TAG}`; give exactly one ```{FILL_TAG} \
             block (the fill) and tag any other block otherwise",
            all.len(),
            many.len()
        )),
    }
}

/// Errors that most often follow from another one (a value left unused because the line that
/// would use it is wrong): shown after the other errors, so the first one, which the hole's
/// summary quotes, is the cause.
const CONSEQUENCES: &[cordon_syntax::Code] = &[cordon_syntax::Code::LinearUnused];

/// The diagnostics of a rejected fill, in the concise form, at most [`MAX_DIAGNOSTICS`]:
/// errors first (those that often follow from another after the rest), then warnings.
fn rejection(outcome: &FillOutcome, sources: &SourceMap) -> Rejection {
    let consequence = |d: &&Diagnostic| CONSEQUENCES.contains(&d.code);
    let errors = || outcome.diagnostics.iter().filter(|d| d.is_error());
    let mut shown: Vec<&Diagnostic> = errors().filter(|d| !consequence(d)).collect();
    shown.extend(errors().filter(consequence));
    shown.extend(outcome.diagnostics.iter().filter(|d| !d.is_error()));
    let mut out: String = shown.iter().take(MAX_DIAGNOSTICS).map(|d| render::concise(d, sources)).collect();
    if shown.len() > MAX_DIAGNOSTICS {
        out.push_str(&format!("({} more diagnostics not shown)\n", shown.len() - MAX_DIAGNOSTICS));
    }
    if out.is_empty() {
        out.push_str("error: the fill was rejected\n");
    }
    let first = shown.first().map(|d| {
        let span = d.span();
        let (line, _) = sources.file(span.file).line_col(span.start);
        Problem { code: d.code, line, message: d.message.clone() }
    });
    let at = shown.first().map(|d| (d.span(), "where the last fill was rejected".to_string()));
    Rejection { feedback: out, first, at }
}

/// An accepted fill the run entered: holes in it are filled with `check_nested_fill`.
#[derive(Debug)]
struct Entered {
    fill: Box<CheckedFill>,
    /// The label of its prompt: its source text is shown to the models of its holes.
    label: Label,
    id: String,
    depth: usize,
    /// The conversation that wrote it, ending with its reply: where the run goes back to its
    /// hole ([`HoleRequest::again`]), the model is told why in this conversation.
    conversation: Conversation,
}

/// Where a hole the run reached is: its site, its id and depth, its parent fill (if any).
struct Located<'f> {
    site: HoleSite,
    id: String,
    depth: usize,
    parent: Option<&'f Entered>,
}

/// Finds the site of a hole the run reached, from its span.
fn locate<'f>(checked: &Checked, entered: &'f HashMap<FileId, Entered>, request: &HoleRequest) -> Option<Located<'f>> {
    if let Some(parent) = entered.get(&request.span.file) {
        let site = parent.fill.holes().iter().find(|s| s.span == request.span)?;
        let id = format!("{}.{}", parent.id, site.id);
        return Some(Located { site: site.clone(), id, depth: parent.depth + 1, parent: Some(parent) });
    }
    let site = checked.holes().iter().find(|s| s.span == request.span)?;
    Some(Located { site: site.clone(), id: site.id.to_string(), depth: 1, parent: None })
}

/// The engine's hole filler for one request: asks the model through its [`Filler`], checks
/// each fill in its hole's scope, and keeps the fills the run entered (their holes are filled in
/// turn) and how each hole went. Fills are added to the request's `sources`.
pub struct ModelHoles<'r, 'f> {
    sources: &'r mut SourceMap,
    checked: &'r Checked,
    options: &'r CheckOptions,
    filler: &'r mut Filler<'f>,
    entered: HashMap<FileId, Entered>,
    holes: Vec<HoleStats>,
}

impl std::fmt::Debug for ModelHoles<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelHoles").field("filler", &self.filler).field("holes", &self.holes).finish()
    }
}

impl<'r, 'f> ModelHoles<'r, 'f> {
    /// Fills the holes of `checked` (from `sources`, checked with `options`) with `filler`.
    pub fn new(
        sources: &'r mut SourceMap,
        checked: &'r Checked,
        options: &'r CheckOptions,
        filler: &'r mut Filler<'f>,
    ) -> ModelHoles<'r, 'f> {
        ModelHoles { sources, checked, options, filler, entered: HashMap::new(), holes: Vec::new() }
    }

    /// Each hole the run reached, in order, and how it went.
    pub fn holes(&self) -> &[HoleStats] {
        &self.holes
    }
}

/// Why the model gave no answer, if that is how one of `holes` ended.
pub fn model_error(holes: &[HoleStats]) -> Option<&ProviderError> {
    holes.iter().find_map(|hole| hole.model_error.as_ref())
}

impl Holes for ModelHoles<'_, '_> {
    fn fill(&mut self, run: &mut Run, request: HoleRequest, observer: &mut dyn Observer) -> Result<Step, RunError> {
        let filled =
            fill_reached(self.sources, self.checked, self.options, self.filler, &self.entered, &request, observer);
        if let Some(stats) = filled.stats {
            // Coming back to a hole goes on with its count.
            let earlier =
                request.again.as_ref().and_then(|_| self.holes.iter_mut().rev().find(|h| h.hole == stats.hole));
            match earlier {
                Some(earlier) => earlier.add(stats),
                None => self.holes.push(stats),
            }
        }
        match filled.fill {
            Ok(entered) => {
                let file = fill_file(&entered.fill);
                let step = run.fill(&entered.fill, &entered.label);
                self.entered.insert(file, *entered);
                step
            }
            Err(Unfilled::Reason(NoFill { reason, rejected_at })) => Err(run.abandon_hole(&reason, rejected_at)),
            Err(Unfilled::Ends(error)) => Err(run.end_at_hole(*error)),
        }
    }
}

/// The file of a checked fill's source.
fn fill_file(fill: &CheckedFill) -> FileId {
    fill.module().file
}

/// How one reached hole went.
struct Reached {
    fill: Result<Box<Entered>, Unfilled>,
    stats: Option<HoleStats>,
}

/// Why a reached hole has no fill.
enum Unfilled {
    /// The model was asked and gave none, or the hole could not be asked (its site unknown,
    /// too deep): the run ends with a hole error saying this.
    Reason(NoFill),
    /// The run ends with this error: the model may not be asked (`label-flow`), or a refusal
    /// that sent the run back to the hole stands.
    Ends(Box<RunError>),
}

/// Fills a hole the run reached: finds its site, enforces the depth limit, builds its prompt
/// (or, where the run came back to the hole, goes on with the conversation that wrote the
/// refused fill) and runs the fill loop with the right check.
fn fill_reached(
    sources: &mut SourceMap,
    checked: &Checked,
    options: &CheckOptions,
    filler: &mut Filler<'_>,
    entered: &HashMap<FileId, Entered>,
    request: &HoleRequest,
    observer: &mut dyn Observer,
) -> Reached {
    let Some(at) = locate(checked, entered, request) else {
        let reason = "the hole's site is unknown to the host".to_string();
        abandoned(observer, None, 0, ErrorKind::Hole.code(), &reason);
        return Reached { fill: Err(Unfilled::Reason(NoFill { reason, rejected_at: None })), stats: None };
    };
    if at.depth > filler.config.max_depth {
        let reason = format!("holes nest deeper than the limit of {}", filler.config.max_depth);
        abandoned(observer, Some(&at.id), 0, ErrorKind::Hole.code(), &reason);
        return Reached { fill: Err(Unfilled::Reason(NoFill { reason, rejected_at: None })), stats: None };
    }
    let begun = match &request.again {
        None => begin(sources, checked, filler, &at, request),
        Some(refill) => go_back(sources, filler, entered, &at.id, refill, observer),
    };
    let (p, conversation) = match begun {
        Ok(begun) => begun,
        Err(error) => {
            // Replies asked for before the run came back, if it did.
            let asked =
                request.again.as_ref().and_then(|r| entered.get(&r.fill)).map_or(0, |e| e.conversation.attempts);
            abandoned(observer, Some(&at.id), asked, error.kind.code(), &error.message);
            let stats = HoleStats {
                hole: at.id,
                attempts: 0,
                usage: Usage::default(),
                prompt_tokens: 0,
                filled: false,
                model_error: None,
            };
            return Reached { fill: Err(Unfilled::Ends(error)), stats: Some(stats) };
        }
    };
    let (id, depth, site) = (at.id.clone(), at.depth, at.site.id);
    let parent = at.parent.map(|e| e.fill.clone());
    let (prompt_label, user, asked) = (p.label.clone(), filler.config.user.clone(), filler.config.asked);
    let mut check = |code: &str, attempt: u32| {
        let file = sources.add(format!("<fill {id} attempt {attempt}>"), code);
        let outcome = match &parent {
            Some(parent) => check_nested_fill(sources, checked, parent, site, file, options),
            None => check_fill(sources, checked, site, file, options),
        };
        let Some(fill) = outcome.fill else { return Checking::Rejected(rejection(&outcome, sources)) };
        // The labels, before the fill runs: a call it would make that is refused on every path
        // goes back to the model like a type error.
        let found = cordon_flow::analyze_fill(checked, &fill, request, &prompt_label, sources, &user);
        let refused: Vec<_> = found.diagnostics(asked.then_some(&user)).into_iter().filter(|d| d.is_error()).collect();
        if refused.is_empty() {
            Checking::Accepted(Box::new(fill))
        } else {
            Checking::Rejected(rejection(&FillOutcome { diagnostics: refused, fill: None }, sources))
        }
    };
    let filled = filler.converse(&id, &p, conversation, &mut check, observer);
    let fill = filled
        .fill
        .map(|(fill, conversation)| Box::new(Entered { fill, label: p.label, id: id.clone(), depth, conversation }))
        .map_err(Unfilled::Reason);
    Reached { fill, stats: Some(filled.stats) }
}

/// The prompt of a hole reached for the first time, and a conversation that starts with it;
/// or the `label-flow` error of a hole the model may not be asked.
fn begin(
    sources: &SourceMap,
    checked: &Checked,
    filler: &Filler<'_>,
    at: &Located<'_>,
    request: &HoleRequest,
) -> Result<(Prompt, Conversation), Box<RunError>> {
    let mut p = prompt(sources, checked, &at.site, request, &filler.config.clearance)
        .map_err(|not_cleared| Box::new(not_asked(filler, &not_cleared, request)))?;
    if let Some(parent) = at.parent {
        p.label.join_mut(&parent.label);
    } else if at.depth == 1 {
        add_history(&mut p, &filler.config.history, request, &filler.config.clearance);
    }
    let conversation = Conversation { messages: p.messages.clone(), attempts: 0 };
    Ok((p, conversation))
}

/// The run came back to hole `id` because the labels refused a call its fill made before
/// the fill performed anything (`refill`). The model that wrote the fill is told the refusal in
/// the conversation that wrote it, with the prompt's label raised by the refusal's, if it is
/// cleared for the refusal (what chose the refused call) and has attempts left; otherwise the
/// refusal stands and ends the run, with a note saying why the model was not asked again.
fn go_back(
    sources: &SourceMap,
    filler: &Filler<'_>,
    entered: &HashMap<FileId, Entered>,
    id: &str,
    refill: &Refill,
    observer: &mut dyn Observer,
) -> Result<(Prompt, Conversation), Box<RunError>> {
    let stands = |note: String| Box::new(refill.error.clone().with_note(note));
    let Some(refused) = entered.get(&refill.fill) else {
        return Err(stands("the refused fill is unknown to the host".to_string()));
    };
    let diagnostic = refill.error.to_diagnostic();
    let feedback = render::concise(&diagnostic, sources);
    let (line, _) = sources.file(refill.error.span.file).line_col(refill.error.span.start);
    let first = Problem { code: diagnostic.code, line, message: diagnostic.message.clone() };
    let attempt = refused.conversation.attempts;
    observer.event(&Event::FillRefused { hole: id, attempt, feedback: &feedback, first: Some(&first) });
    let clearance = &filler.config.clearance;
    if !refill.label.dc().flows_to(clearance) {
        return Err(stands(format!(
            "the model `{}` was not told of this refusal and not asked again: the refusal depends on data \
             labelled {}, and it is cleared for {}",
            filler.provider.name(),
            refill.label,
            named(filler, clearance),
        )));
    }
    if attempt >= filler.config.max_attempts {
        return Err(stands(format!("the model had no attempts left to write another fill ({attempt} used)")));
    }
    let mut conversation = refused.conversation.clone();
    conversation.messages.push(Message::user(format!(
        "Your fill ran, and a call it made was refused by the labels. Nothing it did was performed; the run is \
         back at this hole:\n{feedback}Write a fill the labels admit and answer again with exactly one ```cordon \
         block."
    )));
    let mut stats = PromptStats::default();
    stats.measure(&conversation.messages);
    let label = refused.label.join(&refill.label);
    Ok((Prompt { messages: conversation.messages.clone(), label, stats }, conversation))
}

/// A clearance by its name among those the host offers (`` `public` (<..>) ``), or as a label.
fn named(filler: &Filler<'_>, clearance: &DcLabel) -> String {
    match filler.config.clearance_names.iter().find(|(_, l)| l == clearance) {
        Some((name, _)) => format!("`{name}` ({clearance})"),
        None => clearance.to_string(),
    }
}

/// The `label-flow` error of a hole the model may not be asked: at the hole, naming the model,
/// its clearance and the clearance it would need, with the sources of the pc as related places.
fn not_asked(filler: &Filler<'_>, not_cleared: &NotCleared, request: &HoleRequest) -> RunError {
    let names = &filler.config.clearance_names;
    let needed = not_cleared.needed();
    let would_need = match names.iter().find(|(_, l)| needed.flows_to(l)) {
        Some((name, label)) => format!("it would need clearance `{name}` ({label})"),
        None if names.is_empty() => format!("it would need clearance {needed}"),
        None => {
            let offered: Vec<String> = names.iter().map(|(name, _)| format!("`{name}`")).collect();
            format!("it would need clearance {needed}, more than any offered ({})", offered.join(", "))
        }
    };
    let mut error = RunError::new(
        ErrorKind::LabelFlow,
        request.span,
        format!(
            "the hole is reached under a decision that depends on {}; the model `{}` is cleared for {}; {would_need}",
            not_cleared.reason(),
            filler.provider.name(),
            named(filler, &not_cleared.clearance),
        ),
    );
    for source in not_cleared.pc.sources() {
        error.related.push((source.span, format!("the decision to reach the hole depends on {}", source.what)));
    }
    error.notes.push(
        "the model was not asked: being asked (the task, the hole's place in the source, that it was reached at \
         all) would tell it which way that decision went"
            .to_string(),
    );
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_with_prose_around_it_is_the_code() {
        assert_eq!(extract_code("Here:\n```cordon\n1 + 2\n```\nDone."), Ok("1 + 2\n"));
        assert_eq!(extract_code("```\nx\n```"), Ok("x\n"));
    }

    #[test]
    fn a_second_plan_smuggled_into_a_reply_is_refused_not_chosen() {
        // Two blocks both tagged as fills: the host never picks one of two plans.
        let two = "Fill:\n```cordon\nsafe()\n```\nOr better:\n```cordon\nevil()\n```\n";
        assert!(problem(two).contains("2 of them tagged `cordon`"), "{}", problem(two));
        // The tag is compared without case: `Cordon` is a second fill too.
        let cased = "```cordon\nsafe()\n```\n```Cordon\nevil()\n```\n";
        assert!(problem(cased).contains("2 of them tagged"));
        // Several untagged blocks: no guess either.
        let untagged = "```\nsafe()\n```\n```\nevil()\n```\n";
        assert!(problem(untagged).contains("none is tagged `cordon`"));
        // A fence inside a block is content, not a second block: one block, tagged `text`.
        let nested = "```text\nexample\n```cordon\nevil()\n```\n";
        assert_eq!(extract(nested), Ok(Extracted { code: "example\n```cordon\nevil()\n", note: None }));
        // A closing fence with anything after it does not close the block.
        assert!(problem("```cordon\na\n``` ```cordon\nb\n").contains("not closed"));
    }

    #[test]
    fn an_example_and_the_fill_give_the_fill_and_say_which() {
        let reply = "For example:\n```rust\nlet x = 1;\n```\nThe fill:\n```cordon extra words\n1 + 2\n```\n";
        let expected = Extracted {
            code: "1 + 2\n",
            note: Some(
                "note: the reply has 2 code blocks; the fill checked is block 2 of 2, the one tagged `cordon`"
                    .to_string(),
            ),
        };
        assert_eq!(extract(reply), Ok(expected));
        assert_eq!(extract("```\nx\n```"), Ok(Extracted { code: "x\n", note: None }));
    }

    /// The problem with a reply that has no usable code.
    fn problem(reply: &str) -> String {
        extract_code(reply).err().unwrap_or_default()
    }

    #[test]
    fn no_block_several_blocks_unclosed_blocks_and_huge_replies_are_problems() {
        assert!(problem("just 1 + 2").contains("no code block"));
        assert!(problem("```\na\n```\n```\nb\n```").contains("2 code blocks and none is tagged"));
        assert!(problem("```cordon\na\n").contains("not closed"));
        let huge = format!("```\n{}\n```", "x".repeat(MAX_REPLY_BYTES));
        assert!(problem(&huge).contains("limit"));
    }
}
