//! Runs a checked plan against a host the way the boundary would, but seeing every call it
//! proposes, the ones it would refuse on labels included (label failures deferred, each such
//! call then refused as the boundary would have), and holds those calls to the static summary
//! (`cordon_flow`). Shared by the tests of `cordon-sim` and `cordon-flow` (by `#[path]`); the
//! runtime's own tests do not include it.

// Each user of this module uses some of it.
#![allow(dead_code)]

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

/// Holds the calls a run proposed to `summary`: each is a site of it, made no more often than
/// it says; its decision's label and each argument's own label lie within the site's bounds; an
/// argument or decision the summary says flows fails no check, and an argument it says must fail
/// does fail.
pub fn within(summary: &cordon_flow::Summary, effects: &[Effect]) -> Result<(), String> {
    use cordon_flow::Verdict;
    let mut seen: std::collections::HashMap<(u32, u32), u64> = std::collections::HashMap::new();
    for effect in effects {
        let at = format!("the call of `{}` at {}..{}", effect.tool, effect.span.start, effect.span.end);
        let site = summary
            .calls
            .iter()
            .find(|s| s.span == effect.span)
            .ok_or_else(|| format!("{at} is not in the summary"))?;
        let n = seen.entry((effect.span.start, effect.span.end)).or_default();
        *n += 1;
        if !site.count.allows(*n) {
            return Err(format!("{at} was made {n} times; the summary says {:?}", site.count));
        }
        let pc = effect.pc.dc();
        if !pc.flows_to(&site.pc.hi) || !site.pc.lo.flows_to(&pc) {
            return Err(format!("{at}: the decision's label {pc} is outside {:?}", site.pc));
        }
        for ((name, arg), p) in effect.args.iter().zip(&site.params) {
            let own = arg.label.dc();
            if !own.flows_to(&p.carried.hi) || !p.carried.lo.flows_to(&own) {
                return Err(format!("{at}: `{name}` is labelled {own}, outside {:?}", p.carried));
            }
            let failed = effect.flows.iter().any(|f| f.param.as_deref() == Some(&**name) && f.value.is_some());
            match (p.verdict, failed) {
                (Verdict::Allowed, true) => {
                    return Err(format!("{at}: `{name}` failed its sink; the summary said it flows"));
                }
                (Verdict::Must, false) => return Err(format!("{at}: `{name}` flowed; the summary said it must fail")),
                _ => {}
            }
        }
        let decision_failed = effect.flows.iter().any(|f| f.value.is_none());
        let decision = site.params.iter().map(|p| p.decision).fold(site.decision, Verdict::max);
        if decision == Verdict::Allowed && decision_failed {
            return Err(format!("{at}: the decision failed a sink; the summary said it flows"));
        }
    }
    Ok(())
}
