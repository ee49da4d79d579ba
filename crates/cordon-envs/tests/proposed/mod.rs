//! Runs a checked plan against a host the way the boundary would, but seeing every call it
//! proposes, the ones it would refuse on labels included (label failures deferred, each such
//! call then refused as the boundary would have): what the static summary is held to.

use cordon_runtime::boundary::flow_refusal;
use cordon_runtime::{Config, Effect, Limits, Program, Run, Sessions, Step, ToolCall, ToolHost};

/// Each call the run proposed, in order, with the label checks it failed (`effect.flows`).
pub fn proposed(
    program: &Program,
    host: &mut dyn ToolHost,
    user: &str,
    limits: &Limits,
) -> Result<Vec<Effect>, String> {
    let config = Config { limits: limits.clone(), user: user.to_string() };
    let mut run = Run::start(program, &Sessions::default(), &config).map_err(|e| e.message)?;
    run.defer_label_flows(true);
    let mut seen = Vec::new();
    let mut step = run.proceed();
    while let Ok(Step::Effect(effect)) = step {
        step = match effect.flows.first() {
            Some(flow) => run.refuse(flow_refusal(&format!("{}.{}", effect.capability, effect.tool), flow)),
            None => {
                run.commit().map_err(|e| e.message)?;
                let answer = host.perform(&ToolCall::new(&effect));
                run.resume(answer)
            }
        };
        seen.push(effect);
    }
    Ok(seen)
}
