//! Approving a whole plan once: the calls of its effect summary (`cordon_flow::Summary`) that
//! one approval may cover, the card a person answers for them before anything runs, and the
//! check that each call the run then makes falls inside what was approved.
//!
//! A call is covered only where the summary can say everything a card would: its tool asks
//! (`ask`: never `ask_always`, `deny` or a tool with no tier), every label it carries is
//! proved within its sink on every run, and the number of times it is made is bounded. At run
//! time a call passes without its own card only if it is one of those sites (the same place in
//! the plan, so never a fill's), within the approved count, to the destination the card named,
//! with its decision's and arguments' labels within the summary's bounds; any other call, or
//! one the intent check flags, gets its own card as before.

use cordon_flow::{Count, Destination, Site, Summary, Verdict};
use cordon_label::{DcLabel, Label, Tier};
use cordon_runtime::Effect;
use cordon_syntax::Span;

use crate::card::{Card, Shown};

/// The calls one approval covers, and how many of each were made so far.
#[derive(Clone, Debug, Default)]
pub struct PlanApproval {
    sites: Vec<Covered>,
}

#[derive(Clone, Debug)]
struct Covered {
    span: Span,
    /// `Capability.tool`.
    tool: String,
    line: u32,
    max: u64,
    destination: Destination,
    /// Each argument's label at most, in parameter order.
    args: Vec<DcLabel>,
    /// The decision's label at most.
    pc: DcLabel,
    /// What the card says of the call's data.
    data: String,
    used: u64,
}

impl PlanApproval {
    /// The calls of `summary` one approval may cover (see the module's documentation).
    pub fn of(summary: &Summary) -> PlanApproval {
        if !summary.complete {
            return PlanApproval::default();
        }
        let sites = summary.calls.iter().filter_map(covered).collect();
        PlanApproval { sites }
    }

    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// The card a person answers for the whole plan: each covered call with its count, where it
    /// goes and where its data comes from.
    pub fn card(&self, user: &str) -> Card {
        let plain = |text: String| Shown::labelled(text, &Label::bottom(), user);
        let fields = self
            .sites
            .iter()
            .map(|c| {
                let times = if c.max == 1 { "at most once".to_string() } else { format!("at most {} times", c.max) };
                let to = match &c.destination {
                    Destination::Known(d) => format!(", to {d}"),
                    Destination::Computed => ", to a destination the plan computes".to_string(),
                    Destination::None => String::new(),
                };
                (format!("line {}: {}", c.line, c.tool), plain(format!("{times}{to}; with {}", c.data)))
            })
            .collect();
        Card {
            id: 0,
            tool: "plan".into(),
            // Never remembered: each run of a plan asks again.
            tier: Tier::AskAlways,
            action: "run this plan, making these calls without asking again".into(),
            destination: None,
            recipients: Vec::new(),
            content: None,
            fields,
            decided_by: Vec::new(),
            flows: Vec::new(),
            flags: Vec::new(),
            sensitive: Vec::new(),
            grantable: false,
            label_class: String::new(),
            by_model: false,
        }
    }

    /// Whether `effect` (whose card would be `card`) is one of the approved calls; if it is,
    /// it is counted.
    pub fn take(&mut self, effect: &Effect, card: &Card) -> bool {
        let tool = format!("{}.{}", effect.capability, effect.tool);
        let Some(site) = self.sites.iter_mut().find(|c| c.span == effect.span && c.tool == tool) else {
            return false;
        };
        let destination_ok = match &site.destination {
            Destination::Known(d) => card.destinations() == [d.as_str()],
            Destination::Computed | Destination::None => true,
        };
        let labels_ok = effect.pc.dc().flows_to(&site.pc)
            && effect.args.len() == site.args.len()
            && effect.args.iter().zip(&site.args).all(|((_, v), hi)| v.label.dc().flows_to(hi));
        if site.used >= site.max || !destination_ok || !labels_ok {
            return false;
        }
        site.used += 1;
        true
    }
}

/// A site one approval may cover, if it is one.
fn covered(site: &Site) -> Option<Covered> {
    let Count::AtMost(max) = site.count else { return None };
    if site.tiers != (Tier::Ask, Tier::Ask) || site.verdict() != Verdict::Allowed || max == 0 {
        return None;
    }
    let data = site
        .params
        .iter()
        .map(|p| format!("`{}` from {}", p.name, cordon_flow::origins_in_words(&p.origins)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Covered {
        span: site.span,
        tool: site.name(),
        line: site.line,
        max,
        destination: site.destination.clone(),
        args: site.params.iter().map(|p| p.carried.hi.clone()).collect(),
        pc: site.pc.hi.clone(),
        data,
        used: 0,
    })
}
