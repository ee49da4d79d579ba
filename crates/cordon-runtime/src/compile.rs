//! Compiles checked syntax trees to the interpreter's code: names become frame slots, closures
//! list what they capture, control flow becomes jumps, and every place where a decision depends
//! on a value raises the program-counter label (`RaisePc`) until the paths join (`JoinPc`).
//!
//! A call compiles to what the checker resolved it to ([`Resolved`]); a call the checker did not
//! resolve calls a value, and a method call whose receiver is not a capability fails at run
//! time. A declared type (a record's field, a tool's parameter, the entry's) becomes the shape of
//! what the checker resolved it to ([`Declarations`]), and so does a cast's target ([`Resolved`]);
//! only a fill no check resolved has its casts' targets resolved as written. Beyond that,
//! compilation does not rely on the checker's types: the interpreter is dynamically typed, so
//! that code which never went through the checker (tests of the runtime's own re-checks) fails
//! cleanly instead of misbehaving.
//!
//! The program is read through the checker's views of it (`cordon_types::node`), never by the
//! syntax tree's kinds. This module holds the compiler's state and the matches on those views (of
//! an expression, a statement, a pattern, a declaration). Each kind of expression is lowered, from
//! the parts the match hands it, by the module of its family, which matches on none: `data`
//! (variants, tuples, lists, records, fields, casts), `operators`, `control` (`if`, `match`,
//! loops, `to_labeled`), `calls` (calls, closures, holes) and `builtins` (builtins and methods).
//! `policy` lowers the policy's declarations.

use std::collections::HashMap;
use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::{BinOp, Block, ClosureParam, Expr, FnDecl, Ident, Item, Module, Pattern, TypeExpr};
use cordon_types::node::{self, Called, Declaration, Literal, Node, PatternNode, Statement};
use cordon_types::{Declarations, Resolved, Type, WrittenTypes};

use crate::code::{
    Access, Code, Compiled, CompiledFill, ConstDecl, ConstId, EntryDecl, FillRecord, FnId, Globals, HoleScope,
    MeasureDecl, Op, Operand, Origin, Pat, ReleaseDecl, Slot,
};
pub use crate::error::CompileError;
use crate::shape::{Decls, Shape};
use crate::value::{CodeId, CodeRef, Func, Value};
use cordon_syntax::Builtin;

mod body;
mod builtins;
mod calls;
mod control;
mod data;
mod operators;
mod policy;

use body::Body;

/// The operand an op that only pushes a slot or an integer provides.
fn operand(op: &Op) -> Option<Operand> {
    match op {
        Op::Load(s) => Some(Operand::Slot(*s)),
        Op::Push(Value::Int(i)) => Some(Operand::Int(*i)),
        _ => None,
    }
}

/// Whether `op` is a comparison (its result is always a Bool).
fn is_comparison(op: BinOp) -> bool {
    matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
}

/// Compiles the policies and the plan, whose calls and casts are what `resolved` says and whose
/// types are what `declared` says (the checker's resolution of them).
pub fn compile(
    policies: &[Module],
    plan: Option<&Module>,
    resolved: &Resolved,
    declared: &Arc<Declarations>,
) -> Result<Compiled, CompileError> {
    let origin = Origin {
        policies: policies.iter().map(|m| m.file).collect(),
        plan: plan.map(|m| m.file),
        resolved: resolved.clone(),
        fills: Vec::new(),
    };
    let modules: Vec<&Module> = policies.iter().chain(plan).collect();
    let items: Vec<&Item> = modules.iter().flat_map(|m| m.items.iter()).collect();
    let mut decls = Decls::of(declared);
    let mut c = Compiler {
        globals: Globals::default(),
        bodies: Vec::new(),
        codes: Vec::new(),
        declared: declared.clone(),
        written: None,
        resolved: resolved.clone(),
        in_refinement: false,
        code_base: 0,
        holes: Vec::new(),
        field_names: HashMap::new(),
    };
    let mut fn_decls: Vec<&FnDecl> = Vec::new();
    let mut const_items: Vec<(&Ident, &Expr)> = Vec::new();
    let mut measures = HashMap::new();
    for item in &items {
        match node::declaration(item) {
            Declaration::Function(d) if !c.globals.fns.contains_key(&d.name.name) => {
                c.globals.fns.insert(d.name.name.clone(), fn_decls.len() as FnId);
                fn_decls.push(d);
            }
            Declaration::Const { name, value } if !c.globals.consts.contains_key(&name.name) => {
                c.globals.consts.insert(name.name.clone(), const_items.len() as ConstId);
                const_items.push((name, value));
            }
            Declaration::Measure { name, of, default } => {
                c.globals.measures.insert(name.name.clone(), ());
                let (name, of): (Arc<str>, _) = (name.name.as_str().into(), of.map(Arc::from));
                measures.insert(name.clone(), MeasureDecl { name, of, default: default.map(value_of) });
            }
            _ => {}
        }
    }
    let mut fns = Vec::new();
    for d in &fn_decls {
        let names: Vec<&str> = d.params.iter().map(|p| p.name.name.as_str()).collect();
        let code = c.body_code(&d.name.name, &names, |c| c.block(&d.body))?;
        fns.push(Arc::new(Func::new(code, Vec::new())));
    }
    let mut consts = Vec::new();
    for (name, value) in const_items {
        let init = c.body_code(&name.name, &[], |c| c.expr(value))?;
        consts.push(ConstDecl { name: name.name.as_str().into(), init });
    }
    let mut tools = Vec::new();
    let mut field_labels = HashMap::new();
    for item in &items {
        match node::declaration(item) {
            Declaration::Capability { name, tools: ts } => {
                for t in ts {
                    let Some(tool) = declared.capability(&name.name).and_then(|c| c.tool(&t.name.name)) else {
                        return c.unresolved(&t.name);
                    };
                    tools.push(c.tool(&name.name, tool)?);
                }
            }
            Declaration::Record(name) => {
                let Some(record) = declared.record(&name.name) else { return c.unresolved(name) };
                let mut shapes = Vec::with_capacity(record.fields.len());
                for f in &record.fields {
                    shapes.push((f.name.as_str().into(), c.shape(&f.ty, &[], record.span)?));
                }
                decls.field_shapes.entry(name.name.as_str().into()).or_insert(shapes);
                if record.fields.iter().any(|f| !f.labels.is_empty()) {
                    let labels = c.field_labels(record)?;
                    field_labels.entry(name.name.as_str().into()).or_insert(labels);
                }
            }
            Declaration::Enum(name) => {
                let Some(e) = declared.enumeration(&name.name) else { return c.unresolved(name) };
                let mut shapes = Vec::with_capacity(e.variants.len());
                for v in &e.variants {
                    let payload = v.payload.iter().map(|t| c.shape(t, &[], e.span)).collect::<Res<Vec<_>>>()?;
                    shapes.push((v.name.as_str().into(), payload));
                }
                decls.variant_shapes.entry(name.name.as_str().into()).or_insert(shapes);
            }
            _ => {}
        }
    }
    let mut releases = Vec::new();
    for release in declared.releases() {
        let to = c.label_code("release", &[], &release.to)?;
        releases.push(ReleaseDecl { group: release.group.as_str().into(), to, card: release.asks });
    }
    // The entry as the checker composed it from the policies'; one it could not compose is an
    // error only in code the checker rejected.
    if let (_, Some((span, message))) = cordon_syntax::entry::of(policies) {
        return Err(CompileError { message, span });
    }
    let entry = match declared.entry() {
        Some(entry) => {
            let names: Vec<&str> = entry.params.iter().map(|p| p.name.as_str()).collect();
            let mut shapes = Vec::new();
            for p in &entry.params {
                shapes.push((p.name.as_str().into(), c.shape(&p.ty, &names, entry.span)?));
            }
            Some(EntryDecl { params: shapes, ret: c.shape(&entry.ret, &names, entry.span)? })
        }
        None => None,
    };
    let plan = match plan {
        Some(m) => {
            let names: Vec<String> =
                entry.as_ref().map_or(Vec::new(), |e| e.params.iter().map(|p| p.0.to_string()).collect());
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            Some(c.body_code("<plan>", &names, |c| c.block(&m.body))?)
        }
        None => None,
    };
    Ok(Compiled {
        codes: c.codes,
        decls,
        declared: c.declared,
        fns,
        consts,
        tools,
        releases,
        field_labels,
        measures,
        entry,
        plan,
        holes: c.holes,
        globals: c.globals,
        origin,
    })
}

/// Where a fill's casts' targets come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillCasts {
    /// What the checker resolved them to, in the fill's [`Resolved`].
    Resolved,
    /// The types written after their `as`, resolved against the program's declarations and the
    /// fill's own types: a fill no check resolved (the runtime's tests of its own re-checks).
    AsWritten,
}

/// Compiles a model's fill for the hole `site` of `program`. The fill's body is a closure
/// whose captures are the hole's scope (in `HoleScope::names` order) and whose parameters are
/// the hole's extra arguments, named `arg_names`; its calls call what `resolved` says, and its
/// casts convert to what `casts` says they do (targets resolved as written are kept in its
/// record as if the checker had resolved them). Its functions and holes are appended after the
/// program's.
pub fn compile_fill(
    program: &Compiled,
    site: usize,
    fill: &Module,
    arg_names: &[String],
    resolved: &Resolved,
    casts: FillCasts,
) -> Result<CompiledFill, CompileError> {
    let Some(scope) = program.holes.get(site) else {
        return Err(CompileError { message: format!("there is no hole {site}"), span: fill.body.span });
    };
    let items: Vec<&Item> = fill.items.iter().collect();
    let mut c = Compiler {
        globals: program.globals.clone(),
        bodies: Vec::new(),
        codes: Vec::new(),
        declared: program.declared.clone(),
        written: (casts == FillCasts::AsWritten).then(|| WrittenTypes::of(&fill.items)),
        resolved: match casts {
            FillCasts::Resolved => resolved.clone(),
            // What the checker made of the casts is not read: they are resolved as written.
            FillCasts::AsWritten => Resolved { calls: resolved.calls.clone(), casts: Default::default() },
        },
        in_refinement: false,
        code_base: program.codes.len() as u32,
        holes: Vec::new(),
        field_names: HashMap::new(),
    };
    let hole_base = program.holes.len();
    let fn_base = program.fns.len();
    let fn_decls: Vec<&FnDecl> = items
        .iter()
        .filter_map(|i| match node::declaration(i) {
            Declaration::Function(d) => Some(d),
            _ => None,
        })
        .collect();
    for (i, d) in fn_decls.iter().enumerate() {
        c.globals.fns.insert(d.name.name.clone(), (fn_base + i) as FnId);
    }
    // The fill's constants follow the program's, as its functions do.
    let const_items: Vec<(&Ident, &Expr)> = items
        .iter()
        .filter_map(|i| match node::declaration(i) {
            Declaration::Const { name, value } => Some((name, value)),
            _ => None,
        })
        .collect();
    let const_base = program.consts.len();
    for (i, (name, _)) in const_items.iter().enumerate() {
        c.globals.consts.insert(name.name.clone(), (const_base + i) as ConstId);
    }
    let mut fns = Vec::new();
    for d in &fn_decls {
        let names: Vec<&str> = d.params.iter().map(|p| p.name.name.as_str()).collect();
        let code = c.body_code(&d.name.name, &names, |c| c.block(&d.body))?;
        fns.push(Arc::new(Func::new(code, Vec::new())));
    }
    let mut consts = Vec::new();
    for (name, value) in const_items {
        let init = c.body_code(&name.name, &[], |c| c.expr(value))?;
        consts.push(ConstDecl { name: name.name.as_str().into(), init });
    }
    let mut body = Body::new(true);
    body.captures = scope.names.iter().map(|(n, a)| (n.to_string(), *a)).collect();
    c.bodies.push(body);
    for a in arg_names {
        c.bind(a);
    }
    let result = c.block(&fill.body);
    let body = c.bodies.pop().expect("pushed above");
    result?;
    let body = c.finish("<fill>", arg_names.len() as u16, body);
    // Holes inside the fill were numbered from 0 while it compiled; they follow the program's.
    for code in &mut c.codes {
        for op in &mut code.ops {
            if let Op::Hole { site, .. } = op {
                *site += hole_base as u32;
            }
        }
    }
    let record = FillRecord { site, file: fill.file, arg_names: arg_names.to_vec(), resolved: c.resolved };
    Ok(CompiledFill { codes: c.codes, fns, consts, holes: c.holes, body, record })
}

/// The value of a literal (a measure's default).
fn value_of(literal: Literal) -> Value {
    match literal {
        Literal::Int(i) => Value::Int(i),
        Literal::Bool(b) => Value::Bool(b),
        Literal::Str(s) => Value::str(s),
    }
}

pub(crate) struct Compiler {
    globals: Globals,
    bodies: Vec<Body>,
    /// The bodies compiled so far, indexed by [`CodeId`].
    codes: Vec<Code>,
    /// The program's types, as the checker resolved them.
    declared: Arc<Declarations>,
    /// The types a fill no check resolved declares, against which (and `declared`) its casts'
    /// targets are resolved as written; `None` for checked code, whose casts are in `casts`.
    written: Option<WrittenTypes>,
    /// What each call of the code being compiled calls, and what each cast converts to.
    resolved: Resolved,
    /// Compiling a refinement predicate: the only code that may read a measure. Elsewhere a
    /// measure would let a program branch on what the host knows (is this session tainted?)
    /// without that decision carrying any label.
    in_refinement: bool,
    /// The `CodeId` of `codes[0]` (a fill's code follows the program's).
    code_base: u32,
    holes: Vec<HoleScope>,
    /// One `Arc` for each field name, wherever the program writes it: a field access finds its
    /// field in a record the program made by comparing pointers.
    field_names: HashMap<String, Arc<str>>,
}

type Res<T = ()> = Result<T, CompileError>;

impl Compiler {
    fn err<T>(&self, span: Span, message: impl Into<String>) -> Res<T> {
        Err(CompileError { message: message.into(), span })
    }

    /// The field name `name`, as every other mention of it holds it.
    fn field_name(&mut self, name: &str) -> Arc<str> {
        match self.field_names.get(name) {
            Some(n) => n.clone(),
            None => self.field_names.entry(name.to_string()).or_insert_with(|| name.into()).clone(),
        }
    }

    fn body(&mut self) -> &mut Body {
        let n = self.bodies.len() - 1;
        &mut self.bodies[n]
    }

    /// Compiles a body with the given parameters into its own code.
    fn body_code(&mut self, name: &str, params: &[&str], f: impl FnOnce(&mut Compiler) -> Res) -> Res<CodeRef> {
        self.bodies.push(Body::new(false));
        for p in params {
            self.bind(p);
        }
        let result = f(self);
        let body = self.bodies.pop().expect("pushed above");
        result?;
        Ok(self.finish(name, params.len() as u16, body))
    }

    /// Appends `op`, fusing it with the ops before it into one where a common shape allows
    /// (superinstructions: dispatching an op costs more than the work of a `Load` or a
    /// `Push`). A fused op behaves exactly as the sequence it replaces, labels included. Only
    /// the last ops are fused, never across a position a jump lands on, and never a jump whose
    /// position a caller holds to patch, so positions already handed out stay valid.
    fn emit(&mut self, op: Op, span: Span) -> u32 {
        let b = self.body();
        let fused = match (&op, b.ops.as_slice()) {
            (Op::Binary(bin), [.., x, y]) if b.fusable(2) && operand(x).is_some() && operand(y).is_some() => {
                let (lhs, rhs) = (operand(x).unwrap_or(Operand::Top), operand(y).unwrap_or(Operand::Top));
                Some((2, Op::BinaryWith { op: *bin, lhs, rhs }, Some(span)))
            }
            (Op::Binary(bin), [.., y]) if b.fusable(1) && operand(y).is_some() => {
                let rhs = operand(y).unwrap_or(Operand::Top);
                Some((1, Op::BinaryWith { op: *bin, lhs: Operand::Top, rhs }, Some(span)))
            }
            (Op::Field(name), [.., Op::Load(slot)]) if b.fusable(1) => {
                Some((1, Op::LoadField { slot: *slot, name: name.clone() }, Some(span)))
            }
            // The comparison keeps its span: it is the op of the three that can fail.
            (Op::JumpIfFalse(t), [.., Op::BinaryWith { op: bin, lhs, rhs }, Op::RaisePc])
                if b.fusable(2) && is_comparison(*bin) =>
            {
                Some((2, Op::CompareBranch { op: *bin, lhs: *lhs, rhs: *rhs, target: *t }, None))
            }
            (Op::JumpIfFalse(t), [.., Op::Binary(bin), Op::RaisePc]) if b.fusable(2) && is_comparison(*bin) => {
                Some((2, Op::CompareBranch { op: *bin, lhs: Operand::Top, rhs: Operand::Top, target: *t }, None))
            }
            (Op::JumpIfFalse(t), [.., Op::RaisePc]) if b.fusable(1) => Some((1, Op::RaiseJumpIfFalse(*t), Some(span))),
            _ => None,
        };
        if let Some((n, op, span)) = fused {
            let at = b.fuse(n, op);
            if let Some(span) = span {
                b.spans[at as usize] = span;
            }
            return at;
        }
        b.ops.push(op);
        b.spans.push(span);
        (b.ops.len() - 1) as u32
    }

    /// The current position, as the target of a jump: no op before it may be fused with one
    /// after it.
    fn target(&mut self) -> u32 {
        let b = self.body();
        b.barrier = b.ops.len() as u32;
        b.barrier
    }

    /// Points the jump at `at` to the current position.
    fn patch(&mut self, at: u32) {
        let target = self.target();
        match &mut self.body().ops[at as usize] {
            Op::Jump(t)
            | Op::JumpIfFalse(t)
            | Op::RaiseJumpIfFalse(t)
            | Op::CompareBranch { target: t, .. }
            | Op::Match { fail: t, .. }
            | Op::IterNext { exit: t, .. } => *t = target,
            _ => {}
        }
    }

    fn new_slot(&mut self) -> Slot {
        let b = self.body();
        b.slots += 1;
        b.slots - 1
    }

    fn bind(&mut self, name: &str) -> Slot {
        let s = self.new_slot();
        self.body().scope.push((name.to_string(), s));
        s
    }

    /// Finds a local or captured name, capturing it from enclosing bodies if needed.
    fn resolve(&mut self, level: usize, name: &str) -> Option<Access> {
        let b = &self.bodies[level];
        if let Some((_, s)) = b.scope.iter().rev().find(|(n, _)| n == name) {
            return Some(Access::Slot(*s));
        }
        if let Some(i) = b.captures.iter().position(|(n, _)| n == name) {
            return Some(Access::Capture(i as u16));
        }
        if !b.is_closure || level == 0 {
            return None;
        }
        let outer = self.resolve(level - 1, name)?;
        let b = &mut self.bodies[level];
        b.captures.push((name.to_string(), outer));
        Some(Access::Capture((b.captures.len() - 1) as u16))
    }

    /// The slot of `e`'s value if `e` names a local of the body being compiled.
    fn local_slot(&mut self, e: &Expr) -> Option<Slot> {
        let Node::Name(id) = self.resolved.node(e) else { return None };
        let top = self.bodies.len() - 1;
        match self.resolve(top, &id.name)? {
            Access::Slot(s) => Some(s),
            Access::Capture(_) => None,
        }
    }

    fn load_name(&mut self, name: &str, span: Span) -> Res {
        let top = self.bodies.len() - 1;
        if let Some(access) = self.resolve(top, name) {
            let op = match access {
                Access::Slot(s) if self.body().take_once == Some(s) => {
                    self.body().take_once = None;
                    Op::Take(s)
                }
                Access::Slot(s) => Op::Load(s),
                Access::Capture(i) => Op::LoadCapture(i),
            };
            self.emit(op, span);
            return Ok(());
        }
        if let Some(&f) = self.globals.fns.get(name) {
            self.emit(Op::LoadFn(f), span);
        } else if let Some(&k) = self.globals.consts.get(name) {
            self.emit(Op::LoadConst(k), span);
        } else {
            return self.err(span, format!("`{name}` is not defined"));
        }
        Ok(())
    }

    /// Every name visible here, innermost binding of each, with how to reach it: what a hole's
    /// fill may name. Inside a closure, reaching a name captures it.
    fn visible_names(&mut self) -> Vec<(Arc<str>, Access)> {
        let mut names: Vec<String> = Vec::new();
        for b in self.bodies.iter().rev() {
            let here = b.scope.iter().rev().map(|(n, _)| n).chain(b.captures.iter().map(|(n, _)| n));
            for n in here {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            // A function body sees nothing of the bodies around it.
            if !b.is_closure {
                break;
            }
        }
        let top = self.bodies.len() - 1;
        names.into_iter().filter_map(|n| self.resolve(top, &n).map(|a| (Arc::from(n.as_str()), a))).collect()
    }

    fn block(&mut self, b: &Block) -> Res {
        let depth = self.body().scope.len();
        for s in node::statements(b) {
            match s {
                Statement::Let { pat, value, span } => {
                    self.expr(value)?;
                    self.bind_pattern(pat, span)?;
                }
                Statement::Expr(e) => {
                    self.expr(e)?;
                    self.emit(Op::Pop, e.span);
                }
            }
        }
        match &b.tail {
            Some(t) => self.expr(t)?,
            None => {
                self.emit(Op::Push(Value::Unit), b.span);
            }
        }
        self.body().scope.truncate(depth);
        Ok(())
    }

    /// Pops the value on top into an irrefutable pattern's bindings (added to the scope).
    fn bind_pattern(&mut self, pat: &Pattern, span: Span) -> Res {
        if let PatternNode::Bind(id) = node::pattern(pat) {
            let s = self.bind(&id.name);
            self.emit(Op::Store(s), span);
            return Ok(());
        }
        let p = self.pattern(pat)?;
        self.emit(Op::Destructure(Arc::new(p)), span);
        Ok(())
    }

    fn pattern(&mut self, pat: &Pattern) -> Res<Pat> {
        Ok(match node::pattern(pat) {
            PatternNode::Wild => Pat::Wild,
            PatternNode::Bind(id) => Pat::Bind(self.bind(&id.name)),
            PatternNode::Int(i) => Pat::Int(i),
            PatternNode::Str(s) => Pat::Str(s.into()),
            PatternNode::Bool(b) => Pat::Bool(b),
            PatternNode::Unit => Pat::Unit,
            PatternNode::Tuple(ps) => Pat::Tuple(ps.iter().map(|p| self.pattern(p)).collect::<Res<_>>()?),
            PatternNode::Variant { enum_name: Some(enum_name), name, args } => {
                let args = args.iter().map(|p| self.pattern(p)).collect::<Res<_>>()?;
                Pat::Variant { enum_name: enum_name.into(), name: name.name.as_str().into(), args }
            }
            PatternNode::Variant { enum_name: None, name, .. } => {
                return self.err(pat.span, format!("`{}` is not a variant", name.name));
            }
            PatternNode::Error => return self.err(pat.span, "a malformed pattern"),
        })
    }

    fn exprs(&mut self, es: &[Expr]) -> Res {
        for e in es {
            self.expr(e)?;
        }
        Ok(())
    }

    /// Compiles `e`, leaving its value on the stack: the one match on the kinds of expressions,
    /// each lowered by the module of its family.
    fn expr(&mut self, e: &Expr) -> Res {
        let span = e.span;
        match self.resolved.node(e) {
            Node::Int(i) => self.push(Value::Int(i), span),
            Node::Decimal(d) => self.push(Value::decimal(d), span),
            Node::Float(x) => self.push(Value::Float(x), span),
            Node::Str(s) => self.push(Value::str(s), span),
            Node::Bool(b) => self.push(Value::Bool(b), span),
            Node::Unit => self.push(Value::Unit, span),
            Node::Name(id) => self.load_name(&id.name, span),
            Node::Variant { enum_name, name, args } => self.variant(enum_name, name, args, span),
            Node::Tuple(items) => self.tuple(items, span),
            Node::List(items) => self.list(items, span),
            Node::Record { name, fields } => self.record(&name.name, fields, span),
            Node::Field { base, name } => self.field(base, &name.name, span),
            Node::TupleField { base, index } => self.tuple_field(base, index, span),
            Node::Index { base, index } => self.index(base, index, span),
            Node::Call { callee, args } => self.call(callee, args, span),
            Node::Method { receiver, method, args, otherwise } => {
                self.method(receiver, &method.name, args, otherwise, span)
            }
            Node::Unary { op, operand } => self.unary(op, operand, span),
            Node::Binary { op, lhs, rhs } => self.binary(op, lhs, rhs, span),
            Node::If { cond, then, else_ } => self.if_(cond, then, else_, span),
            Node::Match { scrutinee, arms } => self.match_(scrutinee, arms, span),
            Node::For { pat, iter, body } => self.for_(pat, iter, body, span),
            Node::Block(b) => self.block(b),
            Node::Closure { params, body } => self.closure(params, body, span),
            Node::Cast { expr, target, written } => self.cast(e, expr, (target, written), span),
            Node::Hole { args } => self.hole(args, span),
            Node::ToLabeled(b) => self.labeled(b, span),
            Node::Error => self.err(span, "a malformed expression"),
        }
    }

    fn push(&mut self, v: Value, span: Span) -> Res {
        self.emit(Op::Push(v), span);
        Ok(())
    }

    /// The bounds of `e` if it is a call of the builtin `range` (not of a function or a local
    /// that took its name).
    fn range_call<'e>(&mut self, e: &'e Expr) -> Option<[&'e Expr; 2]> {
        match self.resolved.node(e) {
            Node::Call { callee: Called::Builtin(Builtin::Range), args: [from, to] } => Some([from, to]),
            _ => None,
        }
    }

    /// A closure written in place with `arity` parameters: its parameters and body.
    fn literal_closure<'e>(&self, e: &'e Expr, arity: usize) -> Option<(&'e [ClosureParam], &'e Expr)> {
        match self.resolved.node(e) {
            Node::Closure { params, body } if params.len() == arity => Some((params, body)),
            _ => None,
        }
    }

    /// The text of `e` if it is a string literal.
    fn string_literal<'e>(&self, e: &'e Expr) -> Option<&'e str> {
        match self.resolved.node(e) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether `e` is an integer literal (which `emit` fuses into the operation that takes it).
    fn is_int_literal(&self, e: &Expr) -> bool {
        matches!(self.resolved.node(e), Node::Int(_))
    }

    /// The run-time shape of a type declared at `at`; refinements become predicates over the
    /// refined value and then the names in `scope` (a tool's or the entry's parameters).
    pub fn shape(&mut self, ty: &Type, scope: &[&str], at: Span) -> Res<Shape> {
        crate::shape::shape(self, ty, scope, at)
    }

    /// The run-time shape of what the cast `cast` converts to: `target`, as the checker resolved
    /// it; in a fill no check resolved, `written`, the type after its `as`, resolved here.
    fn cast_shape(&mut self, cast: &Expr, target: Option<Type>, written: &TypeExpr) -> Res<Shape> {
        let target = match (target, &self.written) {
            (Some(target), _) => target,
            (None, Some(local)) => match self.resolved.casts.record_written(cast, written, &self.declared, local) {
                Ok(target) => target,
                Err(e) => return self.err(e.span, e.message),
            },
            // A cast with no record is in code the checker rejected: its target has an error.
            (None, None) => {
                return self.err(written.span, "the checker did not resolve the type this cast converts to");
            }
        };
        self.shape(&target, &[], written.span)
    }

    /// A declaration (a record, an enum, a tool) whose types the checker did not resolve: only
    /// code it rejected has one.
    fn unresolved<T>(&self, name: &Ident) -> Res<T> {
        self.err(name.span, format!("`{}` has a type the checker did not resolve", name.name))
    }

    /// Compiles a refinement predicate: slot 0 is the refined value, then `scope`.
    pub fn predicate(&mut self, var: &str, pred: &Expr, scope: &[&str]) -> Res<CodeRef> {
        let names: Vec<&str> = std::iter::once(var).chain(scope.iter().copied()).collect();
        let outer = std::mem::replace(&mut self.in_refinement, true);
        let code = self.body_code(&format!("{{{var} | ..}}"), &names, |c| c.expr(pred));
        self.in_refinement = outer;
        code
    }

    /// Ends a body with its `Return` and adds it to the program's code.
    fn finish(&mut self, name: &str, params: u16, mut body: Body) -> CodeId {
        // A jump to the `JoinPc` still finds it; none may target the `Return` (`fusable`).
        if matches!(body.ops.last(), Some(Op::JoinPc)) && body.fusable(1) {
            body.fuse(1, Op::JoinPcReturn);
        } else {
            body.ops.push(Op::Return);
            body.spans.push(body.spans.last().copied().unwrap_or_default());
        }
        // A jump to a return returns where it is (the branch of an `if` that ends a body):
        // the same op at the same place in the code, one dispatch fewer.
        for i in 0..body.ops.len() {
            if let Some(&Op::Jump(t)) = body.ops.get(i)
                && let Some(ret @ (Op::Return | Op::JoinPcReturn)) = body.ops.get(t as usize)
            {
                let (ret, span) = (ret.clone(), body.spans.get(t as usize).copied().unwrap_or_default());
                body.ops[i] = ret;
                body.spans[i] = span;
            }
        }
        let id = CodeId::new(self.code_base + self.codes.len() as u32);
        self.codes.push(Code {
            name: name.into(),
            params,
            slots: body.slots.max(params),
            ops: body.ops,
            spans: body.spans,
        });
        id
    }
}

impl crate::shape::Predicates for Compiler {
    fn predicate(&mut self, var: &str, pred: &Expr, scope: &[&str]) -> Res<CodeRef> {
        Compiler::predicate(self, var, pred, scope)
    }
}
