//! Approval cards: what a person is shown before a call is performed, built by the host from the
//! call's real argument values (never by the model) and rendered outside the model.
//!
//! A card shows the action, the destination, the full content, every recipient and the extra
//! fields the policy's `@card` lists, and what only Cordon knows about each: its label (secret to
//! whom, vouched for by whom) and where it came from (the user's request, a tool's result, text
//! an outsider wrote), read from the value's label and the sources recorded with it. It also
//! shows what the decision to make the call depended on, the intent check's flags, and, for a
//! call the labels refused, each value to vouch for or release and what approving means.
//!
//! [`Card::render`] writes it for a terminal of a given width: every line fits, long content
//! is wrapped and shown whole (a terminal approver pages it; nothing is cut), and control,
//! invisible and direction-changing characters are escaped, so what is shown is what is sent.

use cordon_label::{DcLabel, Formula, Label, Tier};
use cordon_runtime::{CardField, Effect, Program, RunError, Val, Value, deep_label};
use cordon_text::escape;
use serde::Serialize;

/// One approval card.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Card {
    /// Its number in this gate (from 1): what an asynchronous answer names.
    pub id: u64,
    /// `Capability.tool`.
    pub tool: String,
    pub tier: Tier,
    /// `@card(action = ..)`, else the tool's name.
    pub action: String,
    pub destination: Option<Shown>,
    pub recipients: Vec<Shown>,
    pub content: Option<Shown>,
    /// The other fields `@card` lists, by key; every argument by name when the tool has no
    /// `@card`.
    pub fields: Vec<(String, Shown)>,
    /// What the decision to make this call depended on, when anything did.
    pub decided_by: Vec<String>,
    /// Values the labels refused for this call, which approving vouches for or releases.
    pub flows: Vec<FlowShown>,
    /// What the intent check found wrong (each needs the person's attention): a flagged card
    /// leads with them, is approved only by typing the end of the flagged value, and never
    /// makes a grant.
    pub flags: Vec<Flag>,
    /// What the call would send to readers other than the user that needs the user's consent
    /// (health, finances, ..), which their own words did not give: the card shows every value
    /// with such data masked, and never makes a grant.
    pub sensitive: Vec<Sensitive>,
    /// Whether "always" may be answered: a grant would be remembered for this tool, these
    /// destinations and this label class.
    pub grantable: bool,
    /// The label class of the call's data, as grants name it.
    pub label_class: String,
    /// Whether a model wrote the plan (`cordon ask`): then what the host made is still chosen
    /// by the model, and a destination or recipient the request does not name is flagged.
    #[serde(skip)]
    pub by_model: bool,
}

/// What the intent check found wrong with a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// The finding, in a sentence (the card escapes it).
    pub says: String,
    /// The value it is about (a destination, a recipient), when it is about one: the person
    /// types its last characters to approve.
    pub value: Option<String>,
}

impl Flag {
    /// A finding about the call as a whole.
    pub fn about_call(says: String) -> Flag {
        Flag { says, value: None }
    }
}

/// A text a call would send that needs the user's consent: where it is (`body`, `msg.text`),
/// the kinds of data it holds (`health detail`) and the text with each replaced by its
/// placeholder; never the data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sensitive {
    pub at: String,
    pub kinds: Vec<String>,
    pub rewritten: String,
}

/// Characters of the flagged value a person types to approve a flagged card.
pub const CONFIRM_CHARS: usize = 4;

/// A value as a card shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shown {
    /// The value: a string as it is, anything else as the language writes it.
    pub text: String,
    /// What the value carries, joined with what the decision to call depended on.
    #[serde(serialize_with = "display")]
    pub label: DcLabel,
    pub origin: Origin,
    /// Where its label came from (`the result of \`Shop.reviews\``, `the field \`Review.text\``).
    pub sources: Vec<String>,
    /// For a value the card accounts for but never shows (`@card(hidden = ..)`, a new
    /// password): the value itself, for the intent check. `text` then says only that it is
    /// there; this is never rendered, recorded or serialized.
    #[serde(skip)]
    pub hidden: Option<HiddenText>,
}

/// A text no card shows and no record keeps: its `Debug` does not print it either.
#[derive(Clone, PartialEq, Eq)]
pub struct HiddenText(String);

impl HiddenText {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for HiddenText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HiddenText(<hidden>)")
    }
}

/// What a card shows in place of a hidden text.
pub const HIDDEN: &str = "<hidden>";

/// Where a value came from, read from its integrity: who vouches for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// The user vouches for it: the user's request, or the plan's own text written while the
    /// model had seen nothing else.
    Request,
    /// Everyone vouches for it, and it came from a tool: the host's own facts (a product's
    /// merchant, an order's amount, a message's sender).
    Host,
    /// Everyone vouches for it as the plan's own text, but a model wrote the plan (`cordon
    /// ask`) and the user's request does not name it: the model's words, not the user's.
    Model,
    /// Only these principals vouch for it (a tool's facts, a merchant's message, an author's
    /// review), written as a formula: `mallory`, `shop`.
    VouchedBy { who: String },
    /// No one vouches for it (a web page, a tool result the policy does not vouch for).
    Nobody,
}

/// A value the labels refused for this call, and what approving it means.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowShown {
    /// The parameter, or `None` for the decision to make the call at all.
    pub param: Option<String>,
    pub value: Shown,
    /// The sink it may not flow to.
    #[serde(serialize_with = "display")]
    pub sink: DcLabel,
    /// What approving means, in words: "you vouch for ..", "you release .. to ..".
    pub meaning: String,
    /// The groups whose data a release of the policy lets out on this yes.
    pub let_out: Vec<String>,
    /// Whether the value is a text the run received as it is (a link as it was posted), not one
    /// built from the groups' data ([`cordon_runtime::Flow::as_received`]).
    pub as_received: bool,
    /// Where it was built from the groups' data: the parts of it that are that data word for
    /// word ([`cordon_runtime::Flow::received`]), marked on the card.
    pub received: Vec<String>,
}

fn display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl Shown {
    /// `v` as shown on a card: its label joined with `pc` (a value chosen under a decision is
    /// as chosen by what the decision depended on).
    pub fn of(v: &Val, pc: &Label, user: &str) -> Shown {
        let text = match &v.value {
            Value::Str(s) => s.as_str().to_string(),
            other => other.to_string(),
        };
        let own = deep_label(v);
        let mut shown = Shown::labelled(text, &own.join(pc), user);
        // Where a value came from is its own label's: the plan's text chosen under a decision
        // on the host's facts is still the plan's text, not a host's fact (what the decision
        // depended on is the card's "decided by").
        if shown.origin == Origin::Host && own.dc().integrity.is_false() && own.sources().is_empty() {
            shown.origin = Origin::Request;
            shown.sources.clear();
        }
        shown
    }

    /// A text with the label `label`.
    pub fn labelled(text: String, label: &Label, user: &str) -> Shown {
        let dc = label.dc();
        let mut origin = origin(&dc, user);
        if origin == Origin::Request && dc.integrity.is_false() && !label.sources().is_empty() {
            origin = Origin::Host;
        }
        let sources = label.sources().iter().map(|s| s.what.to_string()).collect();
        Shown { text, label: dc, origin, sources, hidden: None }
    }

    /// `v` as a card accounts for it without showing it: where it came from and its label, its
    /// length, never its text.
    pub fn hidden(v: &Val, pc: &Label, user: &str) -> Shown {
        let mut shown = Shown::of(v, pc, user);
        let n = shown.text.chars().count();
        let text = std::mem::replace(&mut shown.text, format!("{HIDDEN} ({n} characters)"));
        shown.hidden = Some(HiddenText(text));
        shown
    }

    /// The text the intent check reads: the value itself, hidden or not.
    pub fn checked_text(&self) -> &str {
        self.hidden.as_ref().map_or(&self.text, HiddenText::as_str)
    }

    /// "secret to alice" or "public", "vouched for by ..": the label in words.
    pub fn label_words(&self) -> String {
        format!("{}; vouched for by {}", secrecy_words(&self.label.secrecy), integrity_words(&self.label.integrity))
    }

    /// Where it came from, in words.
    pub fn origin_words(&self) -> String {
        let what = match &self.origin {
            Origin::Request => "the user's request".to_string(),
            Origin::Host => "the host's own facts".to_string(),
            Origin::Model => "the plan the model wrote (the user's request does not name it)".to_string(),
            Origin::VouchedBy { who } => format!("data written by {}", words(who)),
            Origin::Nobody => "data no one vouches for".to_string(),
        };
        if self.sources.is_empty() || self.origin == Origin::Request {
            what
        } else {
            format!("{what} ({})", self.sources.join("; "))
        }
    }
}

/// Who vouches for data labelled `dc`, as an [`Origin`].
pub fn origin(dc: &DcLabel, user: &str) -> Origin {
    if dc.integrity.implies(&Formula::principal(user)) {
        Origin::Request
    } else if dc.integrity.is_true() {
        Origin::Nobody
    } else {
        Origin::VouchedBy { who: dc.integrity.to_string() }
    }
}

pub(crate) fn secrecy_words(f: &Formula) -> String {
    if f.is_true() { "public".into() } else { format!("secret to {}", words(&f.to_string())) }
}

/// A formula over principals in words: `a | b` is "a or b", `a & b` "a and b".
pub(crate) fn words(formula: &str) -> String {
    formula.replace(" | ", " or ").replace(" & ", " and ").replace("group:", "the group ")
}

pub(crate) fn integrity_words(f: &Formula) -> String {
    if f.is_false() {
        "everyone (the plan's own text or the host's facts)".into()
    } else if f.is_true() {
        "no one".into()
    } else {
        words(&f.to_string())
    }
}

/// The label class of a call's data, as grants are keyed: `public`, or `secret:` and who the
/// data is secret to. A grant for public data does not cover secret data, nor one person's
/// secret another's.
pub fn label_class(effect: &Effect) -> String {
    let mut label = effect.pc.clone();
    for (_, v) in &effect.args {
        label.join_mut(&deep_label(v));
    }
    let secrecy = label.dc().secrecy;
    if secrecy.is_true() { "public".into() } else { format!("secret:{secrecy}") }
}

impl Card {
    /// The card for `effect`, whose tier is `tier`: its fields computed by the policy's `@card`
    /// on the real arguments. `user` is the principal the agent acts for.
    pub fn build(program: &Program, effect: &Effect, tier: Tier, user: &str) -> Result<Card, RunError> {
        let fields = program.card(effect)?;
        let mut card = Card {
            id: 0,
            tool: format!("{}.{}", effect.capability, effect.tool),
            tier,
            action: effect.tool.to_string(),
            destination: None,
            recipients: Vec::new(),
            content: None,
            fields: Vec::new(),
            decided_by: effect.pc.sources().iter().map(|s| s.what.to_string()).collect(),
            flows: Vec::new(),
            flags: Vec::new(),
            sensitive: Vec::new(),
            grantable: false,
            label_class: label_class(effect),
            by_model: false,
        };
        if fields.is_empty() {
            // No `@card`: every argument, so nothing the call carries goes unseen.
            for (name, v) in &effect.args {
                if !matches!(v.value, Value::Capability(_)) {
                    card.fields.push((name.to_string(), Shown::of(v, &effect.pc, user)));
                }
            }
            return Ok(card);
        }
        for CardField { key, value } in fields {
            match key.as_str() {
                "action" => {
                    card.action = match &value.value {
                        Value::Str(s) => s.as_str().to_string(),
                        other => other.to_string(),
                    }
                }
                "destination" => card.destination = Some(Shown::of(&value, &effect.pc, user)),
                "content" => card.content = Some(Shown::of(&value, &effect.pc, user)),
                "recipients" => match &value.value {
                    Value::List(items) => {
                        let outer = value.label.join(&effect.pc);
                        card.recipients.extend(items.iter().map(|r| Shown::of(r, &outer, user)));
                    }
                    _ => card.recipients.push(Shown::of(&value, &effect.pc, user)),
                },
                "hidden" => card.fields.push((key, Shown::hidden(&value, &effect.pc, user))),
                _ => card.fields.push((key, Shown::of(&value, &effect.pc, user))),
            }
        }
        Ok(card)
    }

    /// Hides each hidden value wherever else the card would show it (a value the labels
    /// refused, shown with what approving it means).
    pub fn hide_everywhere(&mut self) {
        let hidden: Vec<String> = self
            .fields
            .iter()
            .filter_map(|(_, v)| v.hidden.as_ref())
            .map(|h| h.as_str().to_string())
            .filter(|h| !h.is_empty())
            .collect();
        for v in self.shown_mut().filter(|v| v.hidden.is_none()) {
            for h in &hidden {
                if v.text.contains(h.as_str()) {
                    v.text = v.text.replace(h.as_str(), HIDDEN);
                }
            }
        }
    }

    /// Where the call goes, as grants match it: the destination and every recipient.
    pub fn destinations(&self) -> Vec<&str> {
        self.destination.iter().chain(&self.recipients).map(|s| s.text.as_str()).collect()
    }

    /// The card as text for a terminal `width` columns wide (at least 40): every line fits,
    /// nothing is left out, and every character that is not plain printable text is escaped
    /// (every line goes through [`escape`]). A flagged card leads with its flags and asks for
    /// the end of the flagged value instead of a `y`.
    pub fn render(&self, width: usize) -> String {
        let mut out = self.lines(width);
        out.wrapped("", "", &self.answer_line());
        out.lines.join("\n")
    }

    /// [`Card::render`] without its last lines, which say what to type at a terminal: for a page
    /// that offers its own buttons.
    pub fn render_without_answer(&self, width: usize) -> String {
        self.lines(width).lines.join("\n")
    }

    fn lines(&self, width: usize) -> Lines {
        let width = width.max(40);
        let mut out = Lines { width, lines: Vec::new() };
        let what = match self.tier {
            Tier::AskAlways => "asked every time",
            Tier::Ask => "may be remembered",
            Tier::Deny => "never performed",
            Tier::None => "label check",
        };
        let title = format!("== approve? {} [{} - {what}] ", self.tool, self.tier);
        let fill = width.saturating_sub(escape(&title).chars().count());
        out.text(&format!("{title}{}", "=".repeat(fill)));
        if !self.flags.is_empty() {
            out.text("!! FLAGGED: this call may not be what the user asked for. Check each line below;");
            out.text("!! approving sends it exactly as shown.");
            for flag in &self.flags {
                out.wrapped("!! - ", "!!   ", &flag.says);
            }
        }
        if !self.sensitive.is_empty() {
            out.text("!! SENSITIVE: this call sends, to readers other than you, what needs your consent");
            out.text("!! (shown masked below; approving sends it as it is, for this call only):");
            for s in &self.sensitive {
                out.wrapped("!! - ", "!!   ", &format!("`{}` holds {}", s.at, s.kinds.join(", ")));
            }
        }
        out.field("action", &self.action);
        if let Some(d) = &self.destination {
            out.shown("destination", d);
        }
        for (i, r) in self.recipients.iter().enumerate() {
            let key = if self.recipients.len() == 1 { "recipient".to_string() } else { format!("recipient {}", i + 1) };
            out.shown(&key, r);
        }
        for (key, v) in &self.fields {
            out.shown(key, v);
        }
        if let Some(c) = &self.content {
            let lines = c.text.split('\n').count();
            let bytes = c.text.len();
            let s = |n: usize| if n == 1 { "" } else { "s" };
            out.text(&format!("content ({lines} line{}, {bytes} byte{}, shown whole):", s(lines), s(bytes)));
            for line in c.text.split('\n') {
                out.wrapped("  | ", "  | ", line);
            }
            out.wrapped("  ", "  ", &format!("label: {}", c.label_words()));
            out.wrapped("  ", "  ", &format!("from: {}", c.origin_words()));
        }
        if !self.decided_by.is_empty() {
            out.wrapped("decided by   ", "             ", &self.decided_by.join("; "));
        }
        out.wrapped("data         ", "             ", &format!("label class `{}`", self.label_class));
        if !self.flows.is_empty() {
            out.text("the labels refused this call; approving it, for this call only:");
            for f in &self.flows {
                let what = f.param.as_deref().map_or("the decision to call".to_string(), |p| format!("`{p}`"));
                out.wrapped("  - ", "    ", &format!("{what} = {}", f.value.text));
                out.wrapped("    ", "    ", &format!("from: {}", f.value.origin_words()));
                out.wrapped("    ", "    ", &format!("means: {}", f.meaning));
                if !f.received.is_empty() {
                    let parts: Vec<String> = f.received.iter().map(|p| format!("`{p}`")).collect();
                    out.wrapped(
                        "    ",
                        "    ",
                        &format!("the group's data in it, word for word: {}", parts.join(", ")),
                    );
                }
            }
        }
        out
    }

    /// What the person may answer, in words.
    fn answer_line(&self) -> String {
        if let Some((what, _)) = self.confirmation() {
            return format!(
                "answer: to approve, type the last {CONFIRM_CHARS} characters of {what} as shown above; n = no \
                 (y is not enough on a flagged card, and it is never remembered)"
            );
        }
        let always = if self.grantable {
            format!(
                ", always = yes, and do not ask again for {} to {} with {} data",
                self.tool,
                self.destinations().join(", ").if_empty("anywhere"),
                self.label_class
            )
        } else {
            String::new()
        };
        format!("answer: y = yes, n = no{always}")
    }

    /// For a flagged card: what the person must type the end of to approve it (in words) and
    /// the characters to type: the last [`CONFIRM_CHARS`] of the first flagged value as the
    /// card shows it (escaped), else of the first destination or recipient, else of the tool.
    /// `None` for a card with no flag.
    pub fn confirmation(&self) -> Option<(String, String)> {
        self.flags.first()?;
        // What a person can read the end of: not empty, not only spaces.
        let readable = |v: &&str| !escape(v).trim_end().is_empty();
        let flagged = self.flags.iter().filter_map(|f| f.value.as_deref()).find(readable);
        let (what, value) = match flagged.or_else(|| self.destinations().into_iter().find(readable)) {
            Some(value) => (format!("`{value}`"), value),
            None => (format!("the tool `{}`", self.tool), self.tool.as_str()),
        };
        let shown: Vec<char> = escape(value).trim_end().chars().collect();
        let tail: String = shown[shown.len().saturating_sub(CONFIRM_CHARS)..].iter().collect();
        Some((what, tail))
    }

    /// In a plan a model wrote (`cordon ask`), the plan's own text is the model's: every value
    /// the card would show as "from the user's request" only because it is the plan's text (no
    /// one but everyone vouches for it, and it came from no tool) is the model's, unless
    /// `request` names it.
    pub fn attribute_plan_text_to_model(&mut self, request: &str) {
        self.by_model = true;
        for v in self.shown_mut() {
            let plan_text = v.origin == Origin::Request && v.label.integrity.is_false();
            let text = v.checked_text();
            if plan_text && !named_in(request, text) && text != request {
                v.origin = Origin::Model;
            }
        }
    }
}

impl Card {
    /// Every value the card shows.
    pub fn shown_mut(&mut self) -> impl Iterator<Item = &mut Shown> {
        self.destination
            .iter_mut()
            .chain(&mut self.recipients)
            .chain(&mut self.content)
            .chain(self.fields.iter_mut().map(|(_, v)| v))
            .chain(self.flows.iter_mut().map(|f| &mut f.value))
    }
}

trait IfEmpty {
    fn if_empty(self, other: &str) -> String;
}

impl IfEmpty for String {
    fn if_empty(self, other: &str) -> String {
        if self.is_empty() { other.to_string() } else { self }
    }
}

/// Lines of a card being rendered, each at most `width` characters.
struct Lines {
    width: usize,
    lines: Vec<String>,
}

const KEY_WIDTH: usize = 13;

/// Every text given to it is escaped here, once: no line of a card can show a character as
/// anything but itself.
impl Lines {
    fn text(&mut self, line: &str) {
        self.wrapped("", "", line);
    }

    /// `key  value`, then the value's label and origin on lines of their own.
    fn shown(&mut self, key: &str, v: &Shown) {
        self.field(key, &v.text);
        let pad = " ".repeat(KEY_WIDTH);
        self.wrapped(&pad, &pad, &format!("label: {}", v.label_words()));
        self.wrapped(&pad, &pad, &format!("from: {}", v.origin_words()));
    }

    fn field(&mut self, key: &str, text: &str) {
        let pad = " ".repeat(KEY_WIDTH);
        let shown = escape(key);
        let first = if shown.chars().count() < KEY_WIDTH {
            format!("{shown}{}", " ".repeat(KEY_WIDTH - shown.chars().count()))
        } else {
            self.wrapped("", "", key);
            pad.clone()
        };
        self.wrapped(&first, &pad, text);
    }

    /// `text` after `first` on its first line and `rest` on the others, broken at spaces where
    /// it can be and inside words where it must: nothing is dropped.
    fn wrapped(&mut self, first: &str, rest: &str, text: &str) {
        let text = escape(text);
        let text = text.as_str();
        let mut prefix = first;
        let mut line = String::new();
        let mut used = 0;
        let room = |prefix: &str| self.width.saturating_sub(prefix.chars().count()).max(10);
        let mut any = false;
        for word in split_keeping_spaces(text) {
            let n = word.chars().count();
            if used + n > room(prefix) && used > 0 {
                self.lines.push(format!("{prefix}{}", line.trim_end()));
                any = true;
                prefix = rest;
                line.clear();
                used = 0;
                if word.trim().is_empty() {
                    continue;
                }
            }
            if n > room(prefix) {
                // A word longer than a line: broken into pieces that fit.
                for c in word.chars() {
                    if used == room(prefix) {
                        self.lines.push(format!("{prefix}{line}"));
                        any = true;
                        prefix = rest;
                        line.clear();
                        used = 0;
                    }
                    line.push(c);
                    used += 1;
                }
                continue;
            }
            line.push_str(word);
            used += n;
        }
        if !line.is_empty() || !any {
            self.lines.push(format!("{prefix}{}", line.trim_end()));
        }
    }
}

/// `text` split after each run of spaces, so joining the pieces gives it back.
fn split_keeping_spaces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c == ' ' {
            in_space = true;
        } else if in_space {
            out.push(&text[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Does the request name `text` on its own (not inside a longer word, address or name)?
/// Matching ignores case; texts shorter than 3 characters never match, but a number matches the
/// same number standing alone in the request, however short.
pub fn named_in(request: &str, text: &str) -> bool {
    // A number is named by the same number standing alone, however short (`buy 2`).
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        let numbers = request.split(|c: char| !(c.is_ascii_digit() || c == '.'));
        return numbers.map(|n| n.trim_end_matches('.')).any(|n| n == text);
    }
    if text.chars().count() < 3 {
        return false;
    }
    let (hay, needle) = (request.to_lowercase(), text.to_lowercase());
    let part_of_name = |c: char| c.is_alphanumeric() || matches!(c, '@' | '.' | '_' | '-' | '+' | '/' | ':');
    let mut from = 0;
    while let Some(i) = hay.get(from..).and_then(|h| h.find(&needle)) {
        let start = from + i;
        let end = start + needle.len();
        let before = hay[..start].chars().next_back();
        // A trailing full stop ends a sentence, not an address.
        let after = hay[end..].chars().next();
        let after_ok = match after {
            None => true,
            Some('.') => hay[end + 1..].chars().next().is_none_or(|c| !part_of_name(c)),
            Some(c) => !part_of_name(c),
        };
        if before.is_none_or(|c| !part_of_name(c)) && after_ok {
            return true;
        }
        from = start + needle.len().max(1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_character_and_fits() {
        let text = format!("{} {} end", "word ".repeat(40), "x".repeat(200));
        let mut lines = Lines { width: 80, lines: Vec::new() };
        lines.wrapped("  | ", "  | ", &text);
        assert!(lines.lines.iter().all(|l| l.chars().count() <= 80), "{:#?}", lines.lines);
        let back: String = lines.lines.iter().map(|l| l.trim_start_matches("  | ")).collect::<Vec<_>>().join(" ");
        assert_eq!(back.replace(' ', ""), text.replace(' ', ""));
    }
}
