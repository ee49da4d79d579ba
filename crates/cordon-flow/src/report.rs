//! What the summary says to people and to models: the effect summary as text, and the
//! check-time errors (a call that must break its sink, a call the policy always denies).

use cordon_label::{DcLabel, Tier, describe_flow};
use cordon_syntax::{Code, Diagnostic};

use crate::{Count, Destination, Origin, Origins, Site, Summary, Verdict};

/// One error per call, the one the boundary would give first (the decision's sink, then each
/// argument's): it tells the model what to change.
const MAX_ERRORS_PER_CALL: usize = 1;

impl Summary {
    /// The check-time errors: every call the policy denies whoever approves
    /// (`approval-denied`), and every argument or decision whose label fails its sink on
    /// every run that reaches the call (`label-flow`), in the shape the run time would give.
    ///
    /// `approver` is the principal a person at the gate speaks for, if one will be asked: a
    /// refusal that person may lift (vouching for data in their own name, releasing their own
    /// secret) is then a warning, since the run will show them a card for it instead.
    pub fn diagnostics(&self, approver: Option<&str>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for site in &self.calls {
            let name = site.name();
            if site.tiers.0 == Tier::Deny {
                out.push(
                    Diagnostic::error(
                        Code::ApprovalDenied,
                        site.span,
                        format!("`{name}` is never performed: the policy denies it, whoever approves"),
                    )
                    .with_primary_label("denied by `@approval(deny)`")
                    .with_help("leave this call out; tell the user what they would have to do themselves"),
                );
                continue;
            }
            let mut errors = Vec::new();
            if site.decision == Verdict::Must {
                errors.push(decision_error(&name, site, &site.pc.lo, &site.decision_sink.hi));
            }
            for p in &site.params {
                if p.verdict == Verdict::Must {
                    let message = format!(
                        "`{name}` would be blocked: the argument `{}` carries {}, which may not flow to {}",
                        p.name, p.carried.lo, p.sink.hi
                    );
                    let mut d = Diagnostic::error(Code::LabelFlow, site.span, message)
                        .with_primary_label(format!("`{}` is {}", p.name, what_fails(&p.carried.lo, &p.sink.hi)))
                        .with_note(describe_flow(&p.carried.lo, &p.sink.hi));
                    if !p.origins.known.is_empty() {
                        d = d.with_note(format!("`{}` comes from {}", p.name, origins_in_words(&p.origins)));
                    }
                    errors.push(d.with_help(
                        "this call is refused on every run that reaches it: send only what this sink may carry, or return it to the user",
                    ));
                } else if p.decision == Verdict::Must && site.decision != Verdict::Must {
                    errors.push(
                        decision_error(&name, site, &site.pc.lo, &p.sink.hi)
                            .with_note(format!("the argument `{}` is chosen under that decision", p.name)),
                    );
                }
            }
            // What the user's yes may lift: what is theirs, and what a release with a card lets out.
            let liftable = |lo: &DcLabel, sink: &DcLabel| {
                approver.is_some_and(|p| lo.released(sink, &self.releases, true).flows_to_with(sink, p))
            };
            let lifted = site.decision != Verdict::Must || liftable(&site.pc.lo, &site.decision_sink.hi);
            let lifted = lifted
                && site.params.iter().all(|p| {
                    (p.verdict != Verdict::Must || liftable(&p.carried.lo, &p.sink.hi))
                        && (p.decision != Verdict::Must || liftable(&site.pc.lo, &p.sink.hi))
                });
            for d in errors.into_iter().take(MAX_ERRORS_PER_CALL) {
                out.push(if lifted { needs_approval(d) } else { d });
            }
        }
        out
    }

    /// The effect summary, for a person, at most 80 columns wide.
    pub fn render(&self) -> String {
        let mut out = Lines::default();
        if !self.complete {
            out.line(0, "The plan is too large to summarise: the run time checks each call as it comes.");
            return out.text;
        }
        if self.calls.is_empty() && self.holes.is_empty() {
            out.line(0, "The plan calls no tool.");
            return out.text;
        }
        for site in &self.calls {
            out.line(
                0,
                &format!(
                    "line {}: {}, {}{}",
                    site.line,
                    site.name(),
                    count_in_words(site.count),
                    tier_in_words(site.tiers)
                ),
            );
            for c in &site.conditions {
                out.line(2, &format!("when {c}"));
            }
            if let Destination::Known(d) = &site.destination {
                out.line(2, &format!("to {d}"));
            }
            for p in &site.params {
                out.line(
                    2,
                    &format!("{}: from {}{}", p.name, origins_in_words(&p.origins), verdict_in_words(p.verdict)),
                );
                out.line(4, &format!("at most {}", p.carried.hi.describe()));
                if p.verdict != Verdict::Allowed {
                    out.line(4, &format!("may go where {}", sink_in_words(&p.sink.lo)));
                }
            }
            if !site.pc.is_bottom() {
                let decision = site.params.iter().map(|p| p.decision).fold(site.decision, Verdict::max);
                out.line(2, &format!("the decision to call{}", verdict_in_words(decision)));
                out.line(4, &format!("depends on data at most {}", site.pc.hi.describe()));
            }
        }
        for h in &self.holes {
            let caps = if h.capabilities.is_empty() { "no tool".to_string() } else { h.capabilities.join(", ") };
            out.line(0, &format!("line {}: a hole; its fill may call any tool of: {caps}", h.line));
        }
        let may = self.calls.iter().filter(|c| c.verdict() == Verdict::May).count();
        let must = self.calls.iter().filter(|c| c.verdict() == Verdict::Must).count();
        out.line(
            0,
            &format!(
                "{} call site{}: {} within every sink, {may} decided at run time, {must} refused",
                self.calls.len(),
                if self.calls.len() == 1 { "" } else { "s" },
                self.calls.len() - may - must
            ),
        );
        out.text
    }
}

/// Text wrapped at 80 columns, a wrapped line indented two more than its first.
#[derive(Default)]
struct Lines {
    text: String,
}

impl Lines {
    const WIDTH: usize = 80;

    fn line(&mut self, indent: usize, words: &str) {
        let mut current = " ".repeat(indent);
        let mut empty = true;
        for word in words.split(' ').filter(|w| !w.is_empty()) {
            let width = current.chars().count() + usize::from(!empty) + word.chars().count();
            if !empty && width > Self::WIDTH {
                self.text.push_str(&current);
                self.text.push('\n');
                current = " ".repeat(indent + 2);
                empty = true;
            }
            if !empty {
                current.push(' ');
            }
            current.push_str(word);
            empty = false;
        }
        self.text.push_str(&current);
        self.text.push('\n');
    }
}

/// A refusal the person at the gate may lift, as a warning: the run will ask them.
fn needs_approval(mut d: Diagnostic) -> Diagnostic {
    d.severity = cordon_syntax::Severity::Warning;
    d.message = d.message.replacen("would be blocked", "will need your approval", 1);
    d.help = Some("at run time you are shown a card for this call, with where its data came from".into());
    d
}

/// What of `carried`, the least a value carries on any run, may not flow to `sink`, in words:
/// who may read it where the sink is more public, who vouches for it at most where the sink asks
/// for more. (The rest of the best case would mislead: a value from bob's message is "vouched
/// for by everyone" at best only because it might have been the plan's own.)
fn what_fails(carried: &DcLabel, sink: &DcLabel) -> String {
    let mut parts = Vec::new();
    if !sink.secrecy.implies(&carried.secrecy) {
        parts.push(carried.secrecy_in_words());
    }
    if !carried.integrity.implies(&sink.integrity) {
        parts.push(format!("vouched for by {} at most", carried.integrity_in_words()));
    }
    parts.join(", and ")
}

fn decision_error(name: &str, site: &Site, pc: &cordon_label::DcLabel, sink: &cordon_label::DcLabel) -> Diagnostic {
    let mut d = Diagnostic::error(
        Code::LabelFlow,
        site.span,
        format!("`{name}` would be blocked: the decision to make this call depends on data labelled {pc}, which may not flow to {sink}"),
    )
    .with_primary_label("decided by data the sink may not see")
    .with_note(describe_flow(pc, sink));
    if !site.conditions.is_empty() {
        d = d.with_note(format!("the call is made when {}", site.conditions.join(", and ")));
    }
    d.with_help(
        "decide whether to call from the user's request and the plan's own values, not from what a tool returned",
    )
}

fn verdict_in_words(v: Verdict) -> &'static str {
    match v {
        Verdict::Allowed => "",
        Verdict::May => " (may be refused)",
        Verdict::Must => " (refused)",
    }
}

fn count_in_words(c: Count) -> String {
    match c {
        Count::AtMost(1) => "at most once".into(),
        Count::AtMost(n) => format!("at most {n} times"),
        Count::Unbounded => "any number of times".into(),
    }
}

fn tier_in_words((least, most): (Tier, Tier)) -> String {
    let one = |t: Tier| match t {
        Tier::None => "",
        Tier::Ask => "asks first",
        Tier::AskAlways => "asks every time",
        Tier::Deny => "denied",
    };
    match (least, most) {
        (Tier::None, Tier::None) => String::new(),
        (a, b) if a == b => format!(", {}", one(a)),
        (_, b) => format!(", may {}", one(b).replace("asks", "ask").replace("denied", "be denied")),
    }
}

fn sink_in_words(sink: &cordon_label::DcLabel) -> String {
    let readers =
        if sink.secrecy.is_true() { "anyone may read it".to_string() } else { format!("{} may read it", sink.secrecy) };
    let vouch = if sink.integrity.is_true() {
        "no one need vouch for it".to_string()
    } else if sink.integrity.is_false() {
        "only the plan's own values".to_string()
    } else {
        format!("{} must vouch for it", sink.integrity)
    };
    format!("{readers} and {vouch}")
}

/// "the plan's text, the input `s` and the result of `GitHub.read_file` (line 9)".
pub fn origins_in_words(o: &Origins) -> String {
    if o.known.is_empty() {
        return "nothing in particular".into();
    }
    let words: Vec<String> = o
        .known
        .iter()
        .map(|x| match x {
            Origin::Literal => "the plan's text".to_string(),
            Origin::Input { name } => format!("the input `{name}`"),
            Origin::Result { tool, line } => format!("the result of `{tool}` (line {line})"),
            Origin::Fill { line } => format!("a model's fill (line {line})"),
        })
        .collect();
    let mut s = match words.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    };
    if o.more {
        s.push_str(" and more");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::what_fails;
    use cordon_label::DcLabel;

    #[test]
    fn a_refusal_names_only_what_fails() {
        // bob's link at best: the workspace's, and the plan's own only as far as the analysis knows.
        let link = DcLabel::group("workspace", &[]);
        assert_eq!(what_fails(&link, &DcLabel::untrusted()), "secret to the group workspace");
        assert_eq!(what_fails(&DcLabel::endorsed("bob"), &DcLabel::endorsed("alice")), "vouched for by bob at most");
        let both = DcLabel::secret("alice").join(&DcLabel::endorsed("bob"));
        assert_eq!(what_fails(&both, &DcLabel::endorsed("alice")), "secret to alice, and vouched for by bob at most");
    }
}
