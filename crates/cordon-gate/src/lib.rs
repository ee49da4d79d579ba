//! The approval gate: the stage of the engine's effect pipeline that sits between the
//! boundary, which admitted a call on its labels and refinements, and the host that performs
//! it. It carries out the policy's `@approval` and `@card` on the real argument values, after
//! the model and outside it.
//!
//! - **Tiers** ([`cordon_label::Tier`], from `@approval`, computed per call): `deny` is
//!   refused whoever approves; `ask_always` shows a card every time; `ask` shows a card unless a
//!   grant covers the tool, every destination and the label class of the data; `none` asks
//!   nobody. The rules ([`rule`]) answer in three values ([`Decision`]), never a bool.
//! - **Cards** ([`Card`]) are built by the host from the call's argument values and the
//!   policy's `@card`: action, destination, the full content, every recipient, the extra fields,
//!   each with its label and where it came from; [`Card::render`] writes one for an 80-column
//!   terminal, escaped and whole.
//! - **Approvers** ([`Approver`]): [`Terminal`], [`Scripted`], [`DenyAll`] (the default without
//!   a terminal), [`ApproveAll`] (benchmarks). An answer can come later ([`Reply::Later`]): the
//!   run is held, and [`Gate::answer`] then `Engine::resume` finish it.
//! - **Intent** ([`IntentCheck`], default [`ProvenanceRules`]) sees only the user's request and
//!   the card: a destination or recipient that came from an outsider flags the card, which is
//!   then shown even under a grant and cannot make one.
//! - **Grants** ([`Grants`]: [`StoreGrants`] over `cordon-store`, or [`MemoryGrants`]) are made
//!   only by a person's "always" on an `ask` card that is not flagged.
//! - **Labels decide when to ask**: a call the boundary refused only on labels is put to the
//!   user as a card showing each offending value, where it came from and what approving means;
//!   a yes vouches for or releases exactly those values for this call (`Verdict::Endorse`),
//!   only where the user may (the runtime checks it again), and never makes a grant.
//! - **A whole plan at once** ([`PlanApproval`], from the plan's effect summary): before the run,
//!   one card lists the `ask` calls the summary proves within their sinks and bounds in number;
//!   a yes ([`Gate::approve_plan`]) lets each such call go without its own card while it stays
//!   inside what the card said (the same place in the plan, at most as often, to the same
//!   destination, labels within the summary's bounds, not flagged); everything else asks.
//!
//! - **What leaves** ([`Egress`], a stage of its own, before the gate): a call whose data for
//!   readers other than the user holds what is never sent (a credential, a card number, an
//!   id: `cordon-egress`'s never tier) is refused with the text rewritten, whoever approves.
//!
//! Invariants: nothing is performed without a decision (an error anywhere is a refusal); deny
//! beats every approval; no card, answer or grant is ever written by the model or read from a
//! tool's result.
//!
//! ```
//! use cordon_engine::{Engine, Ending};
//! use cordon_gate::{Gate, Scripted};
//! use cordon_runtime::{Config, Program, Run, Sessions};
//! use cordon_syntax::SourceMap;
//! use cordon_types::{CheckOptions, check};
//!
//! let mut sources = SourceMap::new();
//! let policy = sources.add("shop.cord", cordon_sim::shop::POLICY);
//! let plan = sources.add("plan.cord", r#"
//!     match shop.message_merchant("tea-house", "is the tea in stock?") {
//!       Ok(_) => "sent",
//!       Err(r) => r.code,
//!     }"#);
//! let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
//! let program = Program::new(outcome.program.as_ref().expect("checks")).expect("compiles");
//!
//! let mut shop = cordon_sim::Shop::builtin().expect("the built-in data");
//! let mut gate = Gate::new(&program, shop.user(), Box::new(Scripted::parse("yes").expect("answers")))
//!     .with_request("ask tea-house whether the tea is in stock");
//! let config = Config { user: shop.user().to_string(), ..Config::default() };
//! let mut run = Run::start(&program, &Sessions::default(), &config).expect("starts");
//! let ending = Engine::new(&mut shop).with_stage(&mut gate).start(&mut run);
//! let Ending::Done(v) = ending else { panic!("{ending:?}") };
//! assert_eq!(v.value.to_string(), "\"sent\"");
//! assert_eq!(gate.stats().cards, 1);
//! ```

mod approver;
mod card;
mod egress;
mod gate;
mod grants;
mod intent;
mod plan;

pub use approver::{
    Answer, ApproveAll, Approver, DenyAll, NotATerminal, ReadLine, Reply, ScriptError, Scripted, StdinLines, Terminal,
};
pub use card::{
    CONFIRM_CHARS, Card, Flag, FlowShown, HIDDEN, HiddenText, Origin, Sensitive, Shown, label_class, named_in, origin,
};
pub use egress::Egress;
pub use gate::{Decision, Gate, Record, Stats, rule};
pub use grants::{Grants, MemoryGrants, StoreGrants};
pub use intent::{IntentCheck, ProvenanceRules};
pub use plan::PlanApproval;
