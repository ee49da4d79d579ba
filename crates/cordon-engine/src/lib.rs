//! The engine drives a run: one loop, for every front end (the CLI's `run`, `ask`, `chat` and
//! `demo`, tests, benchmarks, and later servers). A run proceeds until it stops at an effect or
//! a hole; the engine passes each effect through the pipeline and the hosts, each hole to
//! whoever fills holes, and tells its observers what happened ([`Event`]s, the hole filler's
//! among them, in one stream).
//!
//! The pipeline of an effect, in order:
//!
//! 1. **admit**: the boundary's checks on the real values (`cordon-runtime`); a refusal there
//!    ends the run. Nothing changes yet.
//! 2. **stages** ([`Stage`]), in the order given: each answers proceed, hold (the run waits,
//!    intact, until the caller [`Engine::release`]s or [`Engine::refuse`]s the effect) or
//!    refuse (the run ends with the stage's diagnostic). The approval gate, the outgoing-data
//!    check and the credential broker are stages.
//! 3. **commit**: the run uses up the call's linear arguments, counts it and records it as
//!    allowed: only now, when the host is about to perform it.
//! 4. **perform**: the host serving the effect's capability ([`Hosts`]).
//! 5. **complete**: the boundary checks and labels what the host returned, and the run goes on.
//!
//! ```
//! use cordon_engine::{Engine, Ending};
//! use cordon_runtime::{Config, Program, Run, Sessions};
//! use cordon_syntax::SourceMap;
//! use cordon_types::{CheckOptions, check};
//!
//! let mut sources = SourceMap::new();
//! let plan = sources.add("plan.cord", "[1, 2, 3].map(|x| x * x).sum()");
//! let outcome = check(&sources, &[], Some(plan), &CheckOptions::default());
//! let program = Program::new(outcome.program.as_ref().expect("accepted")).expect("compiles");
//! let mut run = Run::start(&program, &Sessions::default(), &Config::default()).expect("starts");
//! let mut no_tools = cordon_engine::Hosts::new();
//! let Ending::Done(value) = Engine::new(&mut no_tools).start(&mut run) else { panic!() };
//! assert_eq!(value.value.to_string(), "14");
//! ```

mod decisions;
mod engine;
mod event;
mod hosts;
mod stage;

pub use decisions::Decisions;
pub use engine::{Ending, Engine, Held, Holes, Report, run, run_observed};
pub use event::{End, Event, Observer, Observers, Problem, RefusedBy, TRANSCRIPT_VERSION, TranscriptLine, Turn, Usage};
pub use hosts::{Host, Hosts};
pub use stage::{Note, Stage, Verdict};
