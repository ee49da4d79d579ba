//! The boundary every effect crosses. Before a tool call leaves the interpreter, [`admit`]
//! checks it on the real values, whatever the checker concluded: host-made arguments must be
//! ones the host made (and linear ones unused), refined parameters must hold (measures read
//! from the host's own record), and each argument, joined with the program-counter label, must
//! flow to the sink the policy declares. When the tool answers, [`complete`] checks the result
//! against the declared type, makes the host-made values in it, records the measures its
//! refinement defines, and labels it. Entry arguments are made here too, and the sessions a
//! plan hands back are collected here.

use std::sync::Arc;

use cordon_syntax::Span;
use serde_json::{Map as JsonMap, Value as Json};

use crate::builtins::{deep_label, deep_label_within};
use crate::code::{EntryDecl, ToolDecl};
use crate::ctx::Ctx;
use crate::effect::{Effect, Flow};
use crate::error::{ErrorKind, RunError};
use crate::host::{Scalar, Sessions, StoredValue, host_id};
use crate::machine::Call;
use crate::made;
use crate::shape::{Refined, Shape, TypeDecl};
use crate::trace::TraceEntry;
use crate::value::{HostId, Record, Val, Value, Variant};
use cordon_label::{DcLabel, Label, Release, Source, describe_flow};

/// Checks a tool call on the real values and, if it may go ahead, returns it as a proposed
/// effect. Nothing changes yet: no linear value is used up, no call counted, nothing recorded
/// as allowed; that happens in [`commit`], when the host is about to perform it. A refusal is
/// recorded in the trace.
pub fn admit(ctx: &mut Ctx, call: Call) -> Result<Effect, RunError> {
    let program = ctx.program.clone();
    let Call { capability, tool, args, pc, span } = call;
    let Some(decl) = program.tool(&capability, &tool) else {
        let message = format!("the capability `{capability}` has no tool `{tool}`");
        return Err(RunError::new(ErrorKind::Type, span, message));
    };
    let mut effect = Effect {
        capability: decl.capability.clone(),
        tool: decl.name.clone(),
        args: decl.params.iter().map(|(n, _)| n.clone()).zip(args).collect(),
        pc,
        span,
        consumes: Vec::new(),
        flows: Vec::new(),
        sinks: Vec::new(),
    };
    let checked = check_call(ctx, decl, &effect).and_then(|(consumes, sinks, flows)| {
        effect.consumes = consumes;
        effect.sinks = sinks;
        effect.flows = flows;
        // Deferred, the failed label checks go with the effect to a stage that asks the user.
        match label_refusal(&effect, None) {
            Some(e) if !ctx.defer_label_flows => Err(e),
            _ => Ok(()),
        }
    });
    match checked {
        Ok(()) => Ok(effect),
        Err(mut e) => {
            if e.span == Span::default() {
                e.span = span;
            }
            refused(ctx, &effect, &e);
            Err(e)
        }
    }
}

/// The value a refused call gives the plan, if its tool declares it may be refused: its result
/// type is `Result[T, Refused]` where `Refused` is a record of `code` and `reason` strings, and
/// it takes no linear value (whose successor the plan would then lack). The refusal carries the
/// labels of what chose the call, as its result would have.
pub fn refusal_value(ctx: &mut Ctx, effect: &Effect, e: &RunError) -> Option<Val> {
    let program = ctx.program.clone();
    let decl = program.tool(&effect.capability, &effect.tool)?;
    let Shape::Result(_, refused) = &decl.ret else { return None };
    let Shape::Record(ty) = &**refused else { return None };
    let Some(TypeDecl::Record { fields, opaque }) = program.decls.types.get(ty) else { return None };
    let names: Vec<&str> = fields.iter().map(|(n, _)| &**n).collect();
    if names != ["code", "reason"] || !effect.consumes.is_empty() {
        return None;
    }
    let fields = vec![
        ("code".into(), Val::plain(Value::str(e.kind.code().as_str()))),
        ("reason".into(), Val::plain(Value::str(&e.message))),
    ];
    let record = match opaque {
        true => made::seal(Record::new(ty.clone(), fields, Some(ctx.host.fresh_id()))),
        false => Record::new(ty.clone(), fields, None),
    };
    let record = Value::Record(Arc::new(record));
    let refusal = Value::Variant(Arc::new(Variant::new("Result".into(), "Err".into(), vec![Val::plain(record)])));
    Some(Val { value: refusal, label: chosen(ctx, effect) })
}

/// Records that `effect` was refused (by the boundary, or by a stage after it), and what the
/// refusal depends on (the context's `refused`).
pub fn refused(ctx: &mut Ctx, effect: &Effect, e: &RunError) {
    refused_showing(ctx, effect, e, effect.args.clone());
}

/// As [`refused`], with the arguments recorded as `shown` (a stage's rewrite of what it would
/// not let leave); what the refusal depends on is still computed from the real ones.
pub fn refused_showing(ctx: &mut Ctx, effect: &Effect, e: &RunError, shown: Vec<(Arc<str>, Val)>) {
    ctx.trace.push(TraceEntry::blocked_showing(effect, e, shown));
    ctx.refused = Some(chosen(ctx, effect));
}

/// The host is about to perform an admitted effect: its linear arguments are used up, the call
/// is counted, and it is recorded as allowed (with `shown` for its arguments, where given).
pub fn commit(ctx: &mut Ctx, effect: &Effect, shown: Option<Vec<(Arc<str>, Val)>>) {
    for id in &effect.consumes {
        ctx.host.consume(*id);
    }
    ctx.tool_calls += 1;
    ctx.trace.push(TraceEntry::allowed_showing(effect, shown.unwrap_or_else(|| effect.args.clone())));
}

/// What `admit` found: the linear values the call uses up, each argument's sink, and the label
/// checks the call failed.
type Checked = (Vec<HostId>, Vec<DcLabel>, Vec<Flow>);

/// Everything `admit` checks, changing nothing.
fn check_call(ctx: &mut Ctx, decl: &ToolDecl, effect: &Effect) -> Result<Checked, RunError> {
    let name = format!("{}.{}", decl.capability, decl.name);
    if effect.args.len() != decl.params.len() {
        return Err(RunError::new(
            ErrorKind::Type,
            effect.span,
            format!("`{name}` called with the wrong number of arguments"),
        ));
    }
    if ctx.tool_calls >= ctx.limits.max_tool_calls {
        return Err(RunError::new(
            ErrorKind::Limit,
            effect.span,
            format!("the run made more tool calls than its limit of {}", ctx.limits.max_tool_calls),
        ));
    }
    let args: Vec<Val> = effect.args.iter().map(|(_, v)| v.clone()).collect();
    let in_argument = |pname: &str| format!("in the argument `{pname}` of `{name}`");
    // Every argument is genuine before any refinement is read: a refinement may read another
    // argument's measures, which the host knows only of values it may still be given.
    let mut consumed = Vec::new();
    for ((pname, _), arg) in decl.params.iter().zip(&args) {
        genuine(ctx, &arg.value, &mut consumed).map_err(|e| e.with_note(in_argument(pname)))?;
    }
    for ((pname, shape), arg) in decl.params.iter().zip(&args) {
        conforms(ctx, shape, arg, &args, Role::Argument).map_err(|e| e.with_note(in_argument(pname)))?;
    }
    let (sinks, flows) = check_sinks(ctx, decl, effect)?;
    Ok((consumed, sinks, flows))
}

/// Every argument and the decision to call have a sink, declared or default, and the call goes
/// ahead only if each flows to its own. An argument is checked joined with the pc: a literal
/// written in a branch on a secret is as chosen by the secret as a value computed from it.
/// The default sink of a parameter is public and vouched for by the user (a policy that forgets
/// a sink gets safety, not a leak); the decision's default is the meet of the parameters'.
/// Every failure is found, in a fixed order (the decision's sink, then each argument's own
/// label and the decision, parameter by parameter); [`label_refusal`] decides on them. The
/// arguments' sinks go with the effect, for the stages that judge what leaves.
fn check_sinks(ctx: &mut Ctx, decl: &ToolDecl, effect: &Effect) -> Result<(Vec<DcLabel>, Vec<Flow>), RunError> {
    let releases = releases(ctx)?;
    let args = || effect.args.iter().map(|(_, v)| v.clone());
    let default = DcLabel::endorsed(&ctx.user);
    let mut sinks = Vec::with_capacity(decl.sinks.len());
    for sink in &decl.sinks {
        sinks.push(match sink {
            Some(code) => label_value(ctx.eval(code, args())?)?,
            None => default.clone(),
        });
    }
    let decision = match &decl.decision_sink {
        _ if effect.pc.is_bottom() => None,
        Some(code) => Some(label_value(ctx.eval(code, args())?)?),
        None => Some(sinks.iter().cloned().reduce(|a, b| a.meet(&b)).unwrap_or(default)),
    };
    let mut flows = Vec::new();
    // A label check the call fails, unless a release no one need agree to covers it.
    let fails = |carried: &Label, sink: &DcLabel, param: Option<&str>, value: Option<&Val>| {
        if carried.flows_to(sink) {
            return None;
        }
        let dc = carried.dc();
        if !releases.is_empty() && dc.released(sink, &releases, false).flows_to(sink) {
            return None;
        }
        let mut flow = Flow {
            param: param.map(str::to_string),
            value: value.cloned(),
            carried: carried.clone(),
            sink: sink.clone(),
            releasable: dc.released(sink, &releases, true),
            as_received: false,
            received: Vec::new(),
        };
        let let_out = flow.let_out();
        if let (false, Some(v)) = (let_out.is_empty(), value) {
            flow.as_received = ctx.received.as_is(v, &let_out);
            if !flow.as_received {
                flow.received = ctx.received.parts(v, &let_out);
            }
        }
        Some(flow)
    };
    // The bottom pc (a decision that depended on nothing) flows to every sink.
    if let Some(decision) = &decision {
        flows.extend(fails(&effect.pc, decision, None, None));
    }
    for ((pname, arg), sink) in effect.args.iter().zip(&sinks) {
        let own = arg_label(ctx, arg);
        flows.extend(fails(&own, sink, Some(pname), Some(arg)));
        flows.extend(fails(&effect.pc, sink, Some(pname), None));
    }
    Ok((sinks, flows))
}

/// The policies' releases for this run's user, computed at the first call that needs them.
fn releases(ctx: &mut Ctx) -> Result<Arc<[Release]>, RunError> {
    if let Some(releases) = &ctx.releases {
        return Ok(releases.clone());
    }
    let program = ctx.program.clone();
    let mut releases = Vec::with_capacity(program.releases.len());
    for r in &program.releases {
        let to = label_value(ctx.eval(&r.to, Vec::new())?)?;
        releases.push(Release { group: r.group.to_string(), to, card: r.card });
    }
    let releases: Arc<[Release]> = releases.into();
    ctx.releases = Some(releases.clone());
    Ok(releases)
}

/// The one decision on a call's failed label checks ([`Effect::flows`]): the refusal the call
/// gets if it is performed with `approver`'s approval (`None`: nobody's), or `None` when it may
/// go ahead. Without approval every failed check refuses it; a principal's approval covers a
/// check only where the principal may vouch for the value in its own name or release what is
/// secret to it alone, never another's secret. The refusal names the first check not covered.
pub fn label_refusal(effect: &Effect, approver: Option<&str>) -> Option<RunError> {
    let covered = |flow: &Flow| approver.is_some_and(|p| flow.approvable_by(p));
    let flow = effect.flows.iter().find(|flow| !covered(flow))?;
    let mut e = flow_refusal(&format!("{}.{}", effect.capability, effect.tool), flow);
    if let Some(p) = approver {
        e = e.with_note(format!("`{p}` may not vouch for or release this: only its owner may"));
    }
    e.span = effect.span;
    Some(e)
}

/// The refusal of a call for one label check it failed: what the boundary says when it refuses
/// the call itself. `name` is `Capability.tool`.
pub fn flow_refusal(name: &str, flow: &Flow) -> RunError {
    match (&flow.param, &flow.value) {
        (None, _) => decision_error(name, &flow.carried, &flow.sink),
        (Some(pname), Some(arg)) => flow_error(name, pname, arg, &flow.carried, &flow.sink),
        (Some(pname), None) => decision_error(name, &flow.carried, &flow.sink)
            .with_note(format!("the argument `{pname}` was chosen under that decision, and its sink is {}", flow.sink)),
    }
}

/// What passing `arg` to a tool reveals, and so what the tool's answer depends on: its label and
/// the labels of everything inside it, except the fields of host-made records. Those are the
/// host's own (the boundary checked they are unchanged), so passing one back says only which one
/// was chosen: its own label.
fn arg_label(ctx: &Ctx, arg: &Val) -> Label {
    deep_label_within(arg, &|r| r.host().is_none() || !ctx.program.decls.is_opaque_record(r.ty()))
}

/// What chose a call: the decision to make it and what it was asked. A tool's answer (and a
/// new session's state, and a refusal) depends on no more and no less.
fn chosen(ctx: &Ctx, effect: &Effect) -> Label {
    let mut label = effect.pc.clone();
    for (_, a) in &effect.args {
        label.join_mut(&arg_label(ctx, a));
    }
    label
}

/// The decision to call (the pc) may not flow to a sink: name what the decision depended on,
/// never the argument (a constant does not carry a secret; the branch it was written in does).
fn decision_error(tool: &str, pc: &Label, sink: &DcLabel) -> RunError {
    let mut e = RunError::new(
        ErrorKind::LabelFlow,
        Span::default(),
        format!(
            "`{tool}` blocked: the decision to make this call depends on data labelled {pc}, which may not flow to {sink}"
        ),
    );
    for s in pc.sources() {
        explain(&mut e, s, format!("the decision to make this call depends on {}", s.what));
    }
    e.notes.push(describe_flow(&pc.dc(), sink));
    e
}

/// Points at where a label came from, or says it in a note where it has no place in the code
/// (a field label a tool's result got from its type).
fn explain(e: &mut RunError, source: &Source, text: String) {
    if source.span == Span::default() {
        e.notes.push(text);
    } else {
        e.related.push((source.span, text));
    }
}

fn flow_error(tool: &str, param: &str, arg: &Val, carried: &Label, sink: &DcLabel) -> RunError {
    let mut shown = arg.value.to_string();
    if shown.chars().count() > 60 {
        shown = format!("{}...", shown.chars().take(57).collect::<String>());
    }
    let mut e = RunError::new(
        ErrorKind::LabelFlow,
        Span::default(),
        format!("`{tool}` blocked: the argument `{param}` ({shown}) carries {carried}, which may not flow to {sink}"),
    );
    for s in carried.sources() {
        explain(&mut e, s, format!("`{param}` depends on {}", s.what));
    }
    e.notes.push(describe_flow(&carried.dc(), sink));
    e
}

fn label_value(v: Val) -> Result<DcLabel, RunError> {
    match v.value {
        Value::Label(l) => Ok((*l).clone()),
        other => {
            Err(RunError::new(ErrorKind::Type, Span::default(), format!("a label annotation gave {}", other.kind())))
        }
    }
}

/// Every host-made value inside `v` is one the host made: opaque records unchanged since the
/// host returned them, handles registered, linear values unused (and used once by this call).
fn genuine(ctx: &Ctx, v: &Value, consumed: &mut Vec<HostId>) -> Result<(), RunError> {
    let forged = |what: String| Err(RunError::new(ErrorKind::Forged, Span::default(), what));
    match v {
        Value::Handle(h) => {
            if ctx.host.is_live(h.id, &h.ty) {
                if consumed.contains(&h.id) {
                    return forged(format!("the linear value `{}` is used twice in one call", h.ty));
                }
                consumed.push(h.id);
            } else if !ctx.host.is_handle(h.id, &h.ty) {
                let linear =
                    ctx.program.decls.types.get(&h.ty).is_some_and(|d| matches!(d, crate::shape::TypeDecl::Linear));
                return forged(if linear {
                    format!("this `{}` was already used (linear values are used once)", h.ty)
                } else {
                    format!("this `{}` was not made by the host", h.ty)
                });
            }
            Ok(())
        }
        Value::Record(r) => {
            // A record named after a linear or opaque type (`Token {}`): only code the checker
            // never saw builds one, and the host makes those values as handles.
            let handle_type = ctx.program.decls.types.get(r.ty());
            if matches!(handle_type, Some(crate::shape::TypeDecl::Linear | crate::shape::TypeDecl::Opaque)) {
                return forged(format!("this `{}` was not made by the host", r.ty()));
            }
            if ctx.program.decls.is_opaque_record(r.ty()) && !ctx.host.made_record(r) {
                return forged(format!("this `{}` was not made by the host", r.ty()));
            }
            r.values().iter().try_for_each(|f| genuine(ctx, &f.value, consumed))
        }
        Value::Tuple(items) => items.iter().try_for_each(|x| genuine(ctx, &x.value, consumed)),
        Value::List(items) => items.iter().try_for_each(|x| genuine(ctx, &x.value, consumed)),
        Value::Variant(x) => x.payload.iter().try_for_each(|p| genuine(ctx, &p.value, consumed)),
        Value::Labeled(inner) => genuine(ctx, &inner.value, consumed),
        _ => Ok(()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Argument,
    Result,
}

/// `v` has the shape and satisfies its refinements; `scope` binds the names refinements may
/// mention (the call's arguments).
fn conforms(ctx: &mut Ctx, shape: &Shape, v: &Val, scope: &[Val], role: Role) -> Result<(), RunError> {
    let mismatch = |want: &str| {
        let kind = if role == Role::Argument { ErrorKind::Type } else { ErrorKind::Contract };
        Err(RunError::new(kind, Span::default(), format!("expected {want}, found {}", v.value.kind())))
    };
    match (shape, &v.value) {
        (Shape::Int, Value::Int(_))
        | (Shape::Float, Value::Float(_))
        | (Shape::Decimal, Value::Decimal(_))
        | (Shape::Bool, Value::Bool(_))
        | (Shape::Str, Value::Str(_))
        | (Shape::Unit, Value::Unit)
        | (Shape::Func, Value::Func(_))
        | (Shape::Label, Value::Label(_))
        | (Shape::Labeled, Value::Labeled(_)) => Ok(()),
        (Shape::Tuple(ss), Value::Tuple(items)) if ss.len() == items.len() => {
            ss.iter().zip(items.iter()).try_for_each(|(s, x)| conforms(ctx, s, x, scope, role))
        }
        (Shape::List(s), Value::List(items)) => items.iter().try_for_each(|x| conforms(ctx, s, x, scope, role)),
        (Shape::Option(s), Value::Variant(x)) if &*x.enum_name == "Option" => match (&*x.name, x.payload.as_slice()) {
            ("Some", [p]) => conforms(ctx, s, p, scope, role),
            ("None", []) => Ok(()),
            _ => mismatch("an Option"),
        },
        (Shape::Result(a, b), Value::Variant(x)) if &*x.enum_name == "Result" => match (&*x.name, x.payload.as_slice())
        {
            ("Ok", [p]) => conforms(ctx, a, p, scope, role),
            ("Err", [p]) => conforms(ctx, b, p, scope, role),
            _ => mismatch("a Result"),
        },
        (Shape::Map(k, w), Value::Variant(x)) if &*x.enum_name == "Map" => match x.payload.first().map(|p| &p.value) {
            Some(Value::List(entries)) => entries.iter().try_for_each(|e| match &e.value {
                Value::Tuple(kv) => match kv.as_slice() {
                    [a, b] => conforms(ctx, k, a, scope, role).and_then(|()| conforms(ctx, w, b, scope, role)),
                    _ => mismatch("a Map"),
                },
                _ => mismatch("a Map"),
            }),
            _ => mismatch("a Map"),
        },
        (Shape::Date, Value::Time(t)) if matches!(**t, crate::time::Time::Date(_)) => Ok(()),
        (Shape::DateTime, Value::Time(t)) if matches!(**t, crate::time::Time::DateTime(_)) => Ok(()),
        (Shape::Duration, Value::Time(t)) if matches!(**t, crate::time::Time::Duration(_)) => Ok(()),
        (Shape::Record(n), Value::Record(r)) if r.ty() == n => Ok(()),
        (Shape::Enum(n), Value::Variant(x)) if x.enum_name == *n => Ok(()),
        (Shape::Linear(n) | Shape::Opaque(n), Value::Handle(h)) if h.ty == *n => Ok(()),
        (Shape::Capability(n), Value::Capability(c)) if c == n => Ok(()),
        (Shape::Refined(r), _) => {
            conforms(ctx, &r.base, v, scope, role)?;
            holds(ctx, r, v, scope, role)
        }
        (Shape::Record(n) | Shape::Enum(n) | Shape::Linear(n) | Shape::Opaque(n) | Shape::Capability(n), _) => {
            mismatch(&format!("a `{n}`"))
        }
        (other, _) => mismatch(&other.to_string()),
    }
}

/// Evaluates a refinement on the real values.
fn holds(ctx: &mut Ctx, r: &Refined, v: &Val, scope: &[Val], role: Role) -> Result<(), RunError> {
    let result = ctx.eval(&r.pred, std::iter::once(v.clone()).chain(scope.iter().cloned()))?;
    if result.value == Value::Bool(true) {
        return Ok(());
    }
    let (kind, what) = match role {
        Role::Argument => (ErrorKind::Recheck, "does not hold on the real values"),
        Role::Result => (ErrorKind::Contract, "does not hold on what the tool returned"),
    };
    let mut e = RunError::new(kind, Span::default(), format!("the refinement on `{}` {what}", r.var));
    e.related.push((r.span, "the refinement".into()));
    Err(e)
}

/// Turns what a tool returned into a program value: checks it against the declared result,
/// makes its host-made parts, records the measures its refinement defines, and labels it.
pub fn complete(ctx: &mut Ctx, effect: &Effect, result: Result<Json, String>) -> Result<Val, RunError> {
    let completed = adopt_result(ctx, effect, result);
    ctx.host.forget_used(&effect.consumes);
    completed
}

/// [`complete`] while the linear values the call used up are still known: the result's
/// refinements may read their measures (`tainted(s2) == tainted(s)`).
fn adopt_result(ctx: &mut Ctx, effect: &Effect, result: Result<Json, String>) -> Result<Val, RunError> {
    let program = ctx.program.clone();
    let (capability, tool) = (&effect.capability, &effect.tool);
    let Some(decl) = program.tool(capability, tool) else {
        return Err(RunError::new(ErrorKind::Type, effect.span, format!("no tool `{capability}.{tool}`")));
    };
    let value = match result {
        Ok(v) => v,
        Err(message) => {
            let e = RunError::new(ErrorKind::Tool, effect.span, format!("`{capability}.{tool}` failed: {message}"));
            ctx.trace.push(TraceEntry::failed(effect, &e));
            return Err(e);
        }
    };
    let args: Vec<Val> = effect.args.iter().map(|(_, v)| v.clone()).collect();
    let adopted = adopt(ctx, &decl.ret, &value, &args, &mut Path::default()).map_err(|mut e| {
        e.span = effect.span;
        e.message = match e.kind {
            ErrorKind::Limit => format!("`{capability}.{tool}` returned more than the run may hold: {}", e.message),
            _ => format!("`{capability}.{tool}` returned something other than it declares: {}", e.message),
        };
        ctx.trace.push(TraceEntry::failed(effect, &e));
        e
    })?;
    // What a tool returns depends on what it was asked (a file chosen by untrusted text is
    // untrusted) and on the decision to ask: the arguments' and pc's labels join the policy's.
    // They also decided the measures of any new linear value (is the next session tainted?).
    let chosen = chosen(ctx, effect);
    mark_linear(ctx, &adopted, &chosen);
    let dc = match &decl.returns_label {
        Some(code) => label_value(ctx.eval(code, args.iter().cloned())?)?,
        None => DcLabel::closed(&ctx.user),
    };
    let label = chosen.join(&result_label(dc, effect));
    let val = label_result(adopted, &label);
    let whole = deep_label(&val);
    ctx.received.add(&val, &whole);
    ctx.trace.push(TraceEntry::returned(effect, &val, whole));
    Ok(val)
}

/// Records `decided` as what decided the measures of the linear values in `v`.
fn mark_linear(ctx: &mut Ctx, v: &Value, decided: &Label) {
    match v {
        Value::Handle(h) if ctx.host.is_live(h.id, &h.ty) => ctx.host.set_decided_by(h.id, decided.clone()),
        Value::Tuple(items) => items.iter().for_each(|x| mark_linear(ctx, &x.value, decided)),
        Value::Variant(x) => x.payload.iter().for_each(|p| mark_linear(ctx, &p.value, decided)),
        _ => {}
    }
}

/// A label for a tool's result: the policy's label, remembering the call it came from.
fn result_label(dc: DcLabel, effect: &Effect) -> Label {
    let what = format!("the result of `{}.{}`", effect.capability, effect.tool);
    Label::new(dc, Source { what: what.into(), span: effect.span })
}

/// Puts a tool result's label on its data. The host-made values in a result tuple (the next
/// session) stay unlabelled: they reveal nothing, and labelling them would taint everything
/// later calls return.
fn label_result(v: Value, label: &Label) -> Val {
    match v {
        Value::Tuple(items) => {
            let items: Vec<Val> = items
                .iter()
                .map(|x| if matches!(x.value, Value::Handle(_)) { x.clone() } else { x.clone().with_label(label) })
                .collect();
            Val::plain(Value::Tuple(Arc::new(items)))
        }
        Value::Handle(_) => Val::plain(v),
        v => Val { value: v, label: label.clone() },
    }
}

/// How deeply a tool's answer may nest: as deep as `serde_json` parses text, and shallow
/// enough for the decoder's recursion on any thread's stack.
const MAX_RESULT_DEPTH: usize = 128;

/// Decodes what a tool returned (JSON, see [`crate::effect::ToolHost`]) into a value of the
/// declared result `shape`: sizes are checked before anything is allocated, host-made values
/// are made where the shape has them (whatever the host put there), opaque records are
/// registered, record fields get the labels their type declares, and refinements must hold.
/// Anything that does not fit is a contract error naming where (`.issues[3].title`).
fn adopt(ctx: &mut Ctx, shape: &Shape, j: &Json, scope: &[Val], at: &mut Path) -> Result<Value, RunError> {
    let wrong = |want: &str, at: &Path| contract(at, format!("expected {want}, found {}", json_kind(j)));
    let max_depth = ctx.limits.max_value_depth.min(MAX_RESULT_DEPTH);
    if at.depth() > max_depth {
        return Err(contract(at, format!("the value nests deeper than {max_depth}")));
    }
    Ok(match (shape, j) {
        (Shape::Linear(ty), _) => Value::handle(ty.clone(), ctx.host.make_linear(ty)),
        (Shape::Opaque(ty), _) => Value::handle(ty.clone(), ctx.host.make_handle(ty)),
        (Shape::Unit, Json::Null) => Value::Unit,
        (Shape::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Shape::Int, Json::Number(n)) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => return Err(wrong("an Int", at)),
        },
        (Shape::Float, Json::Number(n)) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        // A decimal comes as a string (`"12.50"`), or as a JSON number (below).
        (Shape::Decimal, Json::String(s)) => match crate::decimal::parse(s) {
            Some(d) => Value::decimal(d),
            None => return Err(wrong("a Decimal (a string such as \"12.50\")", at)),
        },
        // Dates, instants and durations come as ISO 8601 strings; an instant needs its offset.
        (Shape::Date | Shape::DateTime | Shape::Duration, Json::String(s)) => {
            let parsed = match shape {
                Shape::Date => crate::time::parse_date(s),
                Shape::DateTime => crate::time::parse_datetime(s),
                _ => crate::time::parse_duration(s),
            };
            match parsed {
                Some(t) => Value::time(t),
                None => return Err(wrong(&format!("a {shape} in ISO 8601"), at)),
            }
        }
        // A JSON number that is not an integer came through a binary float: it is taken as the
        // decimal its shortest text says only where that text has at most 15 significant
        // digits, which it then holds exactly; a longer one cannot be known and is refused.
        (Shape::Decimal, Json::Number(n)) => match (n.as_i64(), n.as_f64().and_then(crate::decimal::from_float_text)) {
            (Some(i), _) => Value::decimal(crate::decimal::from_int(i)),
            (None, Some(d)) => Value::decimal(d),
            (None, None) => {
                return Err(wrong(
                    "a Decimal (a string such as \"12.50\", or a number of at most 15 significant digits)",
                    at,
                ));
            }
        },
        (Shape::Str, Json::String(s)) => crate::builtins::string(s.clone(), ctx).map_err(|e| at.locate(e))?,
        (Shape::Tuple(ss), Json::Array(items)) if ss.len() == items.len() => {
            let mut out = Vec::with_capacity(items.len());
            for (i, (s, x)) in ss.iter().zip(items).enumerate() {
                out.push(Val::plain(at.within(Step::Index(i), |at| adopt(ctx, s, x, scope, at))?));
            }
            Value::Tuple(Arc::new(out))
        }
        (Shape::List(s), Json::Array(items)) => {
            crate::builtins::check_list_len(items.len(), ctx).map_err(|e| at.locate(e))?;
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                out.push(Val::plain(at.within(Step::Index(i), |at| adopt(ctx, s, x, scope, at))?));
            }
            Value::List(Arc::new(out))
        }
        (Shape::Option(_), Json::Null) => Value::none(),
        (Shape::Option(s), j) => Value::some(adopt(ctx, s, j, scope, at)?),
        (Shape::Result(a, b), Json::Object(o)) if o.len() == 1 => {
            let (name, payload) = o.iter().next().map(|(k, v)| (k.as_str(), v)).unwrap_or_default();
            let s = match name {
                "Ok" => a,
                "Err" => b,
                _ => return Err(wrong("`{\"Ok\": ..}` or `{\"Err\": ..}`", at)),
            };
            let value = at.within(Step::Field(name.into()), |at| adopt(ctx, s, payload, scope, at))?;
            Value::Variant(Arc::new(Variant::new("Result".into(), name.into(), vec![Val::plain(value)])))
        }
        (Shape::Record(ty), Json::Object(o)) => record(ctx, ty, o, scope, at)?,
        (Shape::Enum(ty), j) => variant(ctx, ty, j, scope, at)?,
        (Shape::Refined(r), j) => {
            let made = adopt(ctx, &r.base, j, scope, at)?;
            let val = Val::plain(made.clone());
            if let Some(id) = host_id(&made) {
                for def in &r.defines {
                    let m = ctx.eval(&def.value, std::iter::once(val.clone()).chain(scope.iter().cloned()))?;
                    if let Some(s) = Scalar::from_value(&m.value) {
                        ctx.host.set_measure(&def.measure, id, s);
                    }
                }
            }
            holds(ctx, r, &val, scope, Role::Result).map_err(|e| at.locate(e))?;
            made
        }
        (Shape::Func | Shape::Label | Shape::Labeled | Shape::Capability(_), _) => {
            return Err(contract(at, format!("a tool cannot return {shape}")));
        }
        (Shape::Record(n), _) => return Err(wrong(&format!("a `{n}`"), at)),
        (shape, _) => return Err(wrong(&shape.to_string(), at)),
    })
}

/// A record of type `ty` from a JSON object: every declared field, decoded against its shape
/// (fields the type does not declare are ignored), then labelled as the type declares; an opaque
/// record is registered as the host's.
fn record(
    ctx: &mut Ctx,
    ty: &Arc<str>,
    o: &JsonMap<String, Json>,
    scope: &[Val],
    at: &mut Path,
) -> Result<Value, RunError> {
    let program = ctx.program.clone();
    let Some(declared) = program.decls.field_shapes.get(ty) else {
        return Err(contract(at, format!("`{ty}` is not a record type")));
    };
    crate::builtins::Budget::allocate(ctx, declared.len() as u64 * crate::builtins::SLOT_BYTES)?;
    let mut fields = Vec::with_capacity(declared.len());
    for (name, s) in declared {
        let Some(j) = o.get(&**name) else {
            return Err(contract(at, format!("expected a `{ty}` with the field `{name}`")));
        };
        let value = at.within(Step::Field(name.clone()), |at| adopt(ctx, s, j, scope, at))?;
        fields.push((name.clone(), Val::plain(value)));
    }
    label_fields(ctx, ty, &mut fields)?;
    if !program.decls.is_opaque_record(ty) {
        return Ok(Value::Record(Arc::new(Record::new(ty.clone(), fields, None))));
    }
    let made = made::seal(Record::new(ty.clone(), fields, Some(ctx.host.fresh_id())));
    Ok(Value::Record(Arc::new(made)))
}

/// A value of the enum `ty`: `"Name"` for a variant without payload, `{"Name": payload}` for one
/// with one, `{"Name": [payload, ..]}` for one with several.
fn variant(ctx: &mut Ctx, ty: &Arc<str>, j: &Json, scope: &[Val], at: &mut Path) -> Result<Value, RunError> {
    let program = ctx.program.clone();
    let Some(variants) = program.decls.variant_shapes.get(ty) else {
        return Err(contract(at, format!("`{ty}` is not an enum type")));
    };
    let (name, payload): (&str, Vec<&Json>) = match j {
        Json::String(name) => (name, Vec::new()),
        Json::Object(o) if o.len() == 1 => match o.iter().next() {
            Some((name, Json::Array(items))) if variants.iter().any(|(v, s)| **v == **name && s.len() != 1) => {
                (name, items.iter().collect())
            }
            Some((name, one)) => (name, vec![one]),
            None => ("", Vec::new()),
        },
        _ => return Err(contract(at, format!("expected a `{ty}`, found {}", json_kind(j)))),
    };
    let Some((name, shapes)) = variants.iter().find(|(v, _)| **v == *name) else {
        return Err(contract(at, format!("`{ty}` has no variant `{name}`")));
    };
    if shapes.len() != payload.len() {
        let message = format!("`{ty}::{name}` takes {} values, found {}", shapes.len(), payload.len());
        return Err(contract(at, message));
    }
    let mut values = Vec::with_capacity(payload.len());
    for (i, (s, p)) in shapes.iter().zip(payload).enumerate() {
        values.push(Val::plain(at.within(Step::Index(i), |at| adopt(ctx, s, p, scope, at))?));
    }
    Ok(Value::Variant(Arc::new(Variant::new(ty.clone(), name.clone(), values))))
}

/// Where in a tool's result a decoder is: `.issues[3].title`, for errors.
#[derive(Default)]
struct Path(Vec<Step>);

enum Step {
    Field(Arc<str>),
    Index(usize),
}

impl Path {
    fn depth(&self) -> usize {
        self.0.len()
    }

    /// Runs `f` one step further in.
    fn within<T>(&mut self, step: Step, f: impl FnOnce(&mut Path) -> T) -> T {
        self.0.push(step);
        let out = f(self);
        self.0.pop();
        out
    }

    /// `e`, saying where in the result it happened.
    fn locate(&self, mut e: RunError) -> RunError {
        if !self.0.is_empty() {
            e.message = format!("at `{self}`: {}", e.message);
        }
        e
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for step in &self.0 {
            match step {
                Step::Field(name) => write!(f, ".{name}")?,
                Step::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A result that does not fit its declared type.
fn contract(at: &Path, message: String) -> RunError {
    at.locate(RunError::new(ErrorKind::Contract, Span::default(), message))
}

/// What kind of JSON value `j` is, for errors.
fn json_kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// Gives a tool result's record fields (in declared order) the labels their type declares
/// (`body: String @label(untrusted())`): who wrote a field, not only who returned the record.
fn label_fields(ctx: &mut Ctx, ty: &str, fields: &mut [(Arc<str>, Val)]) -> Result<(), RunError> {
    let program = ctx.program.clone();
    let Some(labels) = program.field_labels.get(ty) else {
        return Ok(());
    };
    for label in labels {
        let dc = label_value(ctx.eval(&label.code, fields.iter().map(|(_, v)| v.clone()))?)?;
        if let Some((_, field)) = fields.get_mut(label.field) {
            field.label.join_mut(&Label::new(dc, Source { what: label.source.clone(), span: Span::default() }));
        }
    }
    Ok(())
}

/// Makes the plan's inputs: capabilities, and linear values continued from `sessions` (or
/// fresh, with their measures' declared defaults). Each must satisfy the entry's refinements.
pub fn entry_args(ctx: &mut Ctx, entry: &EntryDecl, sessions: &Sessions) -> Result<Vec<Val>, RunError> {
    let mut args = Vec::with_capacity(entry.params.len());
    for (name, shape) in &entry.params {
        let base = match shape {
            Shape::Refined(r) => &r.base,
            s => s,
        };
        let value = match base {
            Shape::Capability(c) => Value::Capability(c.into()),
            Shape::Linear(ty) => {
                let id = ctx.host.make_linear(ty);
                let stored = sessions.values.get(&**name).filter(|s| s.ty == **ty);
                if let Some(s) = stored {
                    let what = format!("the state of `{name}` kept from an earlier request");
                    let source = Source { what: what.into(), span: Span::default() };
                    ctx.host.set_decided_by(id, Label::new(s.label.clone(), source));
                }
                // A fresh value has its measures' defaults; a continued one only what was kept
                // of it (a run that failed while making it may have kept no measure, and a
                // default would then forget a taint).
                for m in ctx.program.measures.values() {
                    if m.of.as_deref() != Some(&**ty) {
                        continue;
                    }
                    let known = match stored {
                        Some(s) => s.measures.get(&*m.name).cloned(),
                        None => m.default.as_ref().and_then(Scalar::from_value),
                    };
                    if let Some(v) = known {
                        ctx.host.set_measure(&m.name, id, v);
                    }
                }
                Value::handle(ty.clone(), id)
            }
            other => {
                return Err(RunError::new(
                    ErrorKind::Type,
                    Span::default(),
                    format!(
                        "the host cannot supply the entry parameter `{name}` of type `{other}`: it supplies capabilities and linear values"
                    ),
                ));
            }
        };
        args.push(Val::plain(value));
    }
    for ((name, shape), arg) in entry.params.iter().zip(&args) {
        conforms(ctx, shape, arg, &args, Role::Argument)
            .map_err(|e| e.with_note(format!("the entry parameter `{name}` does not satisfy the policy's entry")))?;
    }
    Ok(args)
}

/// The linear values to keep for the next request: for each linear entry parameter, the
/// newest value of its type (after a finished run, the one the plan handed back; after a
/// failed one, the latest the run made, so that a taint is never forgotten). Each keeps the
/// label of what decided its state: the call that made it, the paths it was handed back
/// through (`handed_back`, the plan's result), and, after a failure, what the failure may have
/// depended on (`failure`).
pub fn sessions_now(
    ctx: &Ctx,
    entry: Option<&EntryDecl>,
    before: &Sessions,
    handed_back: Option<&Val>,
    failure: Option<&Label>,
) -> Sessions {
    let mut out = before.clone();
    let Some(entry) = entry else { return out };
    for (name, shape) in &entry.params {
        let base = match shape {
            Shape::Refined(r) => &r.base,
            s => s,
        };
        if let Shape::Linear(ty) = base
            && let Some(id) = ctx.host.newest_linear(ty)
        {
            let mut label = ctx.host.decided_by(id);
            if let Some(path) = handed_back.and_then(|v| path_label(v, id)) {
                label.join_mut(&path);
            }
            if let Some(f) = failure {
                label.join_mut(f);
            }
            let stored = StoredValue { ty: ty.to_string(), measures: ctx.host.measures_of(id), label: label.dc() };
            out.values.insert(name.to_string(), stored);
        }
    }
    out
}

/// The join of the labels on the way from `v` to the handle `id` inside it (`v`'s and the
/// handle's own included), if `v` holds it.
fn path_label(v: &Val, id: HostId) -> Option<Label> {
    let inside = match &v.value {
        Value::Handle(h) if h.id == id => Some(Label::bottom()),
        Value::Tuple(items) | Value::List(items) => items.iter().find_map(|x| path_label(x, id)),
        Value::Variant(x) => x.payload.iter().find_map(|p| path_label(p, id)),
        Value::Record(r) => r.values().iter().find_map(|x| path_label(x, id)),
        _ => None,
    };
    inside.map(|l| l.join(&v.label))
}

/// The plan's result may hold only genuine host-made values: the linear values it hands back
/// must be unused ones.
pub fn returned(ctx: &Ctx, v: &Val) -> Result<(), RunError> {
    let mut consumed = Vec::new();
    genuine(ctx, &v.value, &mut consumed).map_err(|e| e.with_note("in the plan's result"))
}
