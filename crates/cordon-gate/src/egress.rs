//! The outgoing-data check as a stage of the effect pipeline: every argument a call sends to a
//! sink that anyone but the user may read (a message, an issue, a web address, an MCP tool's
//! argument: whatever the policy's `@label(param = ..)` does not keep secret to the user) is
//! scanned, every string in it and every number written out, and a call whose data holds
//! what is never sent (the never tier of `cordon-egress`: the vault's secrets however encoded,
//! private keys, provider tokens, card numbers, IBANs, bank accounts, national ids, password
//! assignments) is refused, whoever approves: it runs before the approval gate, so no card is
//! shown for it and no grant covers it.
//!
//! The refusal is a rewrite, not only a failure: its diagnostic gives, for each argument, the
//! text with each finding replaced by a placeholder (`[card number]`), the finding's category
//! and where it was, so the plan (and the model) can send the rewritten text instead. The
//! sensitive text itself is in no diagnostic, and the trace keeps the rewritten arguments in
//! place of the real ones (`Verdict::Withhold`); every event about the call shows them too, from
//! its proposal on (`Stage::screen`), so no transcript or audit row holds the text.

use std::sync::Arc;

use cordon_egress::{Category, Finding, Scanner, Tier, redact};
use cordon_engine::{Stage, Verdict};
use cordon_label::{DcLabel, Formula};
use cordon_runtime::effect::Effect;
use cordon_runtime::value::Record;
use cordon_runtime::{ErrorKind, RunError, Val, Value};

/// The stage: the scanner, and the principal whose own sinks need no check.
#[derive(Debug)]
pub struct Egress {
    scanner: Arc<Scanner>,
    user: String,
}

/// A call's arguments, by parameter.
type Args = Vec<(Arc<str>, Val)>;

/// What one text in an argument held: where in the argument it is, and its findings.
struct Found {
    /// The parameter, then the field, element or payload path (`body`, `order.note`, `lines[2]`).
    at: String,
    findings: Vec<Finding>,
    rewritten: String,
}

impl Egress {
    /// The check with `scanner` (built with the vault's secrets) for a run acting for `user`.
    pub fn new(scanner: Arc<Scanner>, user: &str) -> Egress {
        Egress { scanner, user: user.to_string() }
    }
}

impl Stage for Egress {
    fn name(&self) -> &str {
        "egress"
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        match self.rewrite(effect) {
            Some((found, shown)) => Verdict::Withhold { error: refusal(effect, &found), shown },
            None => Verdict::Proceed,
        }
    }

    /// A call is told of with what it sends to others that is never sent, or needs consent,
    /// replaced by placeholders, from its proposal on: one this stage refuses, and one the
    /// user agrees to send alike (the audit log says a health detail went to the dentist, not
    /// which).
    fn screen(&self, effect: &Effect) -> Option<Effect> {
        let (found, shown) = leaving(&self.scanner, &[Tier::Never, Tier::Consent], effect, &self.user);
        if found.is_empty() {
            return None;
        }
        let mut screened = effect.clone();
        screened.args = shown;
        Some(screened)
    }
}

impl Egress {
    /// What `effect` sends that is never sent, and its arguments with each such text rewritten;
    /// `None` if it sends none.
    fn rewrite(&self, effect: &Effect) -> Option<(Vec<Found>, Args)> {
        let (found, shown) = leaving(&self.scanner, &[Tier::Never], effect, &self.user);
        (!found.is_empty()).then_some((found, shown))
    }
}

/// What `effect` sends to readers other than `user` that needs their consent (the consent
/// tier: health, finances, beliefs, precise location, ..): each such text, where it is, the
/// kinds of data it holds, and the text with each replaced by its placeholder.
pub(crate) fn needs_consent(scanner: &Scanner, effect: &Effect, user: &str) -> Vec<(String, Vec<Category>, String)> {
    let (found, _) = leaving(scanner, &[Tier::Consent], effect, user);
    found.into_iter().map(|f| (f.at, f.findings.iter().map(|x| x.category).collect(), f.rewritten)).collect()
}

/// `text` with every finding of either tier replaced by its placeholder, if it has one: a
/// card shows what it sends masked, so no record of the card holds it.
pub(crate) fn masked(scanner: &Scanner, text: &str) -> Option<String> {
    let findings = scanner.scan(text);
    (!findings.is_empty()).then(|| redact(text, &findings))
}

/// The categories of the consent tier that `text` (the user's own words) speaks of.
pub(crate) fn consent_categories(scanner: &Scanner, text: &str) -> Vec<Category> {
    scanner.scan(text).into_iter().map(|f| f.category).filter(|c| c.tier() == Tier::Consent).collect()
}

/// The texts of `effect`'s arguments bound for readers other than `user` that hold findings
/// of `tiers`, and the arguments with each such text rewritten.
fn leaving(scanner: &Scanner, tiers: &[Tier], effect: &Effect, user: &str) -> (Vec<Found>, Args) {
    let mut found = Vec::new();
    let mut shown = Vec::with_capacity(effect.args.len());
    for (i, (param, value)) in effect.args.iter().enumerate() {
        let rewritten = if leaves(&effect.sink(i), user) {
            rewrite(scanner, tiers, value, param.to_string(), &mut found)
        } else {
            value.clone()
        };
        shown.push((param.clone(), rewritten));
    }
    (found, shown)
}

/// Whether what goes to `sink` may be read by anyone but `user`: data secret to the user alone
/// could not flow there.
fn leaves(sink: &DcLabel, user: &str) -> bool {
    !sink.secrecy.implies(&Formula::principal(user))
}

/// `v` with every finding of `tiers` in its texts replaced by a placeholder; each text that had
/// one is added to `found`, at the path `at`.
fn rewrite(scanner: &Scanner, tiers: &[Tier], v: &Val, at: String, found: &mut Vec<Found>) -> Val {
    rewrite_texts(v, at, &mut |text, at| scan(scanner, tiers, text, at, found))
}

/// `v` with each text in it that `f` rewrites replaced: every string, and every number as the
/// digits it is sent as (a card number typed as an integer is one too). `f` is given the text
/// and where it is in the argument (`body`, `order.note`, `lines[2]`).
pub(crate) fn rewrite_texts(v: &Val, at: String, f: &mut dyn FnMut(&str, &str) -> Option<String>) -> Val {
    let value = match &v.value {
        Value::Str(s) => match f(s, &at) {
            Some(rewritten) => Value::str(&rewritten),
            None => return v.clone(),
        },
        Value::Int(_) | Value::Decimal(_) | Value::Float(_) => match f(&v.value.to_string(), &at) {
            Some(rewritten) => Value::str(&rewritten),
            None => return v.clone(),
        },
        Value::Tuple(items) => Value::Tuple(Arc::new(each(items, &at, f))),
        Value::List(items) => Value::List(Arc::new(each(items, &at, f))),
        Value::Record(r) => {
            let fields =
                r.fields().map(|(name, x)| (name.clone(), rewrite_texts(x, format!("{at}.{name}"), f))).collect();
            Value::Record(Arc::new(Record::new(r.ty().clone(), fields, r.host())))
        }
        Value::Variant(x) => {
            let payload = each(&x.payload, &format!("{at}({})", x.name), f);
            Value::Variant(Arc::new(cordon_runtime::value::Variant::new(x.enum_name.clone(), x.name.clone(), payload)))
        }
        Value::Labeled(inner) => Value::Labeled(Arc::new(rewrite_texts(inner, at, f))),
        // Nothing else carries text the host sends.
        _ => return v.clone(),
    };
    Val { value, label: v.label.clone() }
}

fn each(items: &[Val], at: &str, f: &mut dyn FnMut(&str, &str) -> Option<String>) -> Vec<Val> {
    items.iter().enumerate().map(|(i, x)| rewrite_texts(x, format!("{at}[{i}]"), f)).collect()
}

/// The rewrite of `text` if it holds findings of `tiers` (recorded in `found`).
fn scan(scanner: &Scanner, tiers: &[Tier], text: &str, at: &str, found: &mut Vec<Found>) -> Option<String> {
    let all = match tiers.contains(&Tier::Consent) {
        true => scanner.scan(text),
        false => scanner.scan_never(text),
    };
    let findings: Vec<Finding> = all.into_iter().filter(|f| tiers.contains(&f.category.tier())).collect();
    if findings.is_empty() {
        return None;
    }
    let rewritten = redact(text, &findings);
    found.push(Found { at: at.to_string(), findings, rewritten: rewritten.clone() });
    Some(rewritten)
}

/// The refusal: what was found where, and each text rewritten; never the sensitive text.
fn refusal(effect: &Effect, found: &[Found]) -> RunError {
    let tool = format!("{}.{}", effect.capability, effect.tool);
    let mut kinds: Vec<&str> =
        found.iter().flat_map(|f| &f.findings).map(|f| f.category.placeholder().trim_matches(['[', ']'])).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut e = RunError::new(
        ErrorKind::SensitiveData,
        effect.span,
        format!(
            "`{tool}` refused: it would send what is never sent ({}) to readers other than you, whoever approves",
            words(&kinds)
        ),
    );
    for f in found {
        let places: Vec<String> = f
            .findings
            .iter()
            .map(|x| format!("{} at bytes {}..{}", x.category.name(), x.span.start, x.span.end))
            .collect();
        e.notes.push(format!("`{}` holds {}", f.at, places.join(", ")));
        e.notes.push(format!("`{}` rewritten: {:?}", f.at, f.rewritten));
    }
    e.notes.push("send the rewritten text instead: each placeholder stands where the data was".to_string());
    e
}

/// `a`, `a and b`, `a, b and c`.
fn words(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
