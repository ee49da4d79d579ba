//! The abstract interpreter: walks a checked plan as the machine would run it, with abstract
//! values ([`crate::abs`]) for run-time ones, and records every tool call the plan may make.
//!
//! It follows the run time's label rules (`cordon-runtime`'s compiler and machine), always on
//! the safe side: a branch, a `match` or a loop raises the program-counter label by what it
//! depends on until the paths meet, and the value there carries it; a labelled closure raises
//! it for its call; `unlabel` raises it for good; a field, a component or an index joins its
//! container's label; a builtin's result carries at most everything it was given. Where the
//! run time would pick a path the analysis cannot predict, it takes every path and joins them.
//! Loops run their body to a fixed point of the state they carry (an accumulator, the
//! program-counter label) with nothing recorded, then once more recording. A recursive
//! function is analysed once with nothing known of its arguments, its calls counted as
//! unbounded. A typed hole is code no one has seen yet: its result may be anything, and it may
//! call any tool of the capabilities in its scope.

mod builtin_calls;
mod builtins;
mod open;
mod releases;
mod scope;
mod tools;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use cordon_label::{DcLabel, Release};
use cordon_syntax::ast::{BinOp, Block, Expr, FnDecl, Module, Pattern, UnOp};
use cordon_syntax::{SourceMap, Span};
use cordon_types::node::{self, Called, Declaration, Node, Otherwise, PatternNode, Statement};
use cordon_types::{Declarations, Function, LabelKey, Resolved, Tool, ToolAnnotations, Type};

use crate::abs::{Abs, Bounds, Closure, Kind, Origins};
use crate::site::{Count, HoleReach, Site};
use builtins::{Rule, rule};
use scope::Scope;

/// How many abstract steps an analysis may take before it gives up (and says so): far above
/// any plan a model writes, well below a stall.
const MAX_STEPS: u64 = 2_000_000;

/// How many times a loop's body is run for its fixed point before what it carries is widened
/// to "anything".
const MAX_ROUNDS: usize = 6;

/// How deep named functions may call each other before the analysis gives up.
const MAX_CALL_DEPTH: usize = 64;

pub(crate) enum Stop {
    /// A function turned out to be recursive: analyse again, knowing it.
    Restart,
    /// Too many steps, or calls too deep.
    TooBig,
}

type Res<T = Abs> = Result<T, Stop>;

/// What the policies and the plan declare, by name: the types, the tools' and functions'
/// signatures and the policies' annotations as the checker resolved them, and what only the tree
/// holds (the functions' and constants' code, read here once so that the rest of the analysis
/// names no syntax).
pub(crate) struct Decls<'a> {
    /// What the checker resolved: each type, each capability's tools, the releases.
    pub declared: &'a Declarations,
    pub tools: HashMap<(Arc<str>, Arc<str>), ToolDecl<'a>>,
    /// Each function's code, and its signature as the checker resolved it.
    pub fns: HashMap<&'a str, &'a FnDecl>,
    pub signatures: HashMap<&'a str, &'a Function>,
    pub consts: HashMap<&'a str, &'a Expr>,
    /// What the checker resolved in the modules: each node is read through it (a fill's check
    /// resolved its program's too).
    pub resolved: &'a Resolved,
}

/// A tool as the analysis reads it: its signature and the policy's annotations on it, as the
/// checker resolved them; their expressions are evaluated on the call's abstract arguments.
pub(crate) struct ToolDecl<'a> {
    pub sig: &'a Tool,
    pub annotations: &'a ToolAnnotations,
}

impl<'a> ToolDecl<'a> {
    /// The label `@label(..)` gives `key`: a parameter's sink, the decision's (`pc`), the
    /// result's (`returns`).
    pub fn label(&self, key: LabelKey) -> Option<&'a Expr> {
        self.annotations.label(key).map(|e| &**e)
    }

    /// Where its card says the call goes: its destination, else its recipients.
    pub fn destination(&self) -> Option<&'a Expr> {
        let card = self.annotations;
        card.card_line("destination").or_else(|| card.card_line("recipients")).map(|e| &**e)
    }
}

impl<'a> Decls<'a> {
    /// What `declared` and `modules` declare; `fill_functions` are the functions a fill among
    /// `modules` declares (the program's are in `declared`); `resolved` is what the checker
    /// resolved in them.
    pub fn of(
        declared: &'a Declarations,
        fill_functions: &'a [Function],
        modules: &[&'a Module],
        resolved: &'a Resolved,
    ) -> Decls<'a> {
        let signatures = declared.functions().chain(fill_functions).map(|f| (f.name.as_str(), f)).collect();
        let mut tools = HashMap::new();
        for cap in declared.capabilities() {
            for sig in &cap.tools {
                let Some(annotations) = &sig.annotations else { continue };
                tools.insert((cap.name.as_str().into(), sig.name.as_str().into()), ToolDecl { sig, annotations });
            }
        }
        let mut d = Decls { declared, tools, fns: HashMap::new(), signatures, consts: HashMap::new(), resolved };
        for m in modules {
            for item in &m.items {
                match node::declaration(item) {
                    Declaration::Function(f) => {
                        d.fns.insert(f.name.name.as_str(), f);
                    }
                    Declaration::Const { name, value } => {
                        d.consts.insert(name.name.as_str(), value);
                    }
                    _ => {}
                }
            }
        }
        d
    }

    /// Whether `name` is a capability with tools.
    pub fn is_capability(&self, name: &str) -> bool {
        self.tools.keys().any(|(c, _)| &**c == name)
    }

    /// The capability a parameter of type `ty` holds (the one value of its type), if its type
    /// is one with tools.
    pub fn capability_of(&self, ty: &'a Type) -> Option<&'a str> {
        match ty.base() {
            Type::Capability(name) if self.is_capability(name) => Some(name),
            _ => None,
        }
    }
}

pub(crate) struct Analyzer<'a> {
    pub decls: &'a Decls<'a>,
    pub sources: &'a SourceMap,
    pub user: Arc<str>,
    scope: Scope,
    pc: Bounds,
    /// The shape of each tool's result, with its fields' labels: computed once per tool and
    /// per set of known argument values its result refinement may learn from.
    shapes: HashMap<(Arc<str>, Arc<str>, String), Abs>,
    /// The policy's label expressions that name no parameter, by where they are: computed once.
    constant_labels: HashMap<(u32, u32, u32), Bounds>,
    /// How many times the code being analysed may run, per run of the plan.
    mult: Count,
    recording: bool,
    /// The conditions around the code being analysed, as the source says them.
    conds: Vec<String>,
    pub sites: BTreeMap<(u32, u32, u32), Site>,
    pub holes: BTreeMap<(u32, u32, u32), HoleReach>,
    /// The label of each name a pattern binds, by the name's place: joined over every time
    /// the binding is reached.
    pub bindings: BTreeMap<Span, Bounds>,
    calling: Vec<&'a str>,
    pub recursive: HashSet<&'a str>,
    /// Inside a recursive function analysed with nothing known: calls back into the functions
    /// being analysed return anything instead of restarting.
    top_mode: u32,
    consts: HashMap<&'a str, Abs>,
    /// Functions already analysed as a fill might call them: with nothing known.
    top_done: HashSet<&'a str>,
    steps: u64,
    /// The policies' releases, their labels computed ([`Analyzer::compute_releases`]).
    pub releases: Vec<Release>,
}

fn key(span: Span) -> (u32, u32, u32) {
    (span.file.0, span.start, span.end)
}

impl<'a> Analyzer<'a> {
    pub fn new(decls: &'a Decls<'a>, sources: &'a SourceMap, user: &str, recursive: HashSet<&'a str>) -> Analyzer<'a> {
        Analyzer {
            decls,
            sources,
            user: user.into(),
            scope: Scope::default(),
            shapes: HashMap::new(),
            constant_labels: HashMap::new(),
            pc: Bounds::bottom(),
            mult: Count::AtMost(1),
            recording: true,
            conds: Vec::new(),
            sites: BTreeMap::new(),
            holes: BTreeMap::new(),
            bindings: BTreeMap::new(),
            calling: Vec::new(),
            recursive,
            top_mode: 0,
            consts: HashMap::new(),
            top_done: HashSet::new(),
            steps: 0,
            releases: Vec::new(),
        }
    }

    /// Starts the analysis under `pc` (a fill's, at its hole).
    pub fn raise_pc(&mut self, pc: &Bounds) {
        self.pc = self.pc.join(pc);
    }

    pub fn bind(&mut self, name: &str, v: Abs) {
        self.scope.push(name.into(), v);
    }

    fn line(&self, span: Span) -> u32 {
        self.sources.file(span.file).line_col(span.start).0
    }

    fn text(&self, span: Span) -> String {
        let t: String = self.sources.file(span.file).slice(span).split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 48 { format!("{}…", t.chars().take(47).collect::<String>()) } else { t }
    }

    fn step(&mut self) -> Res<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS { Err(Stop::TooBig) } else { Ok(()) }
    }

    fn lookup(&mut self, name: &str) -> Res<Option<Abs>> {
        if let Some(v) = self.scope.get(name) {
            return Ok(Some(v.clone()));
        }
        if let Some(v) = self.consts.get(name) {
            return Ok(Some(v.clone()));
        }
        if let Some((k, e)) = self.decls.consts.get_key_value(name) {
            let saved = std::mem::take(&mut self.scope);
            let v = self.expr(e);
            self.scope = saved;
            let v = v?;
            self.consts.insert(k, v.clone());
            return Ok(Some(v));
        }
        if let Some((k, _)) = self.decls.fns.get_key_value(name) {
            return Ok(Some(Abs::plain(Kind::Func((*k).into()))));
        }
        Ok(None)
    }

    pub fn block(&mut self, b: &Block) -> Res {
        let depth = self.scope.len();
        let result = self.block_inner(b);
        self.scope.truncate(depth);
        result
    }

    fn block_inner(&mut self, b: &Block) -> Res {
        for s in node::statements(b) {
            match s {
                Statement::Let { pat, value, .. } => {
                    let v = self.expr(value)?;
                    self.bind_pattern(pat, &v, &Bounds::bottom());
                }
                Statement::Expr(e) => {
                    self.expr(e)?;
                }
            }
        }
        match &b.tail {
            Some(t) => self.expr(t),
            None => Ok(Abs::plain(Kind::Unit)),
        }
    }

    /// Binds a pattern's names to the parts of `v` (each part joined with the labels of what
    /// holds it, `outer`, as the machine's `bind` does).
    fn bind_pattern(&mut self, pat: &Pattern, v: &Abs, outer: &Bounds) {
        let here = outer.join(&v.label);
        match node::pattern(pat) {
            PatternNode::Bind(id) => {
                let v = v.clone().raised(outer);
                if self.recording {
                    let label = self.bindings.entry(id.span).or_insert_with(Bounds::bottom);
                    *label = label.join(&v.label);
                }
                self.bind(&id.name, v);
            }
            PatternNode::Tuple(ps) => {
                for (i, p) in ps.iter().enumerate() {
                    let part = match &v.kind {
                        Kind::Tuple(xs) => xs.get(i).cloned(),
                        _ => None,
                    };
                    let part = part.unwrap_or_else(|| Abs::unknown(v.label.clone(), v.origins.clone()));
                    self.bind_pattern(p, &part, &here);
                }
            }
            PatternNode::Variant { args, .. } => {
                for (i, p) in args.iter().enumerate() {
                    let part = match &v.kind {
                        Kind::Variant { payload, .. } => payload.get(i).cloned(),
                        _ => None,
                    };
                    let part = part.unwrap_or_else(|| Abs::unknown(v.label.clone(), v.origins.clone()));
                    self.bind_pattern(p, &part, &here);
                }
            }
            _ => {}
        }
    }

    pub fn expr(&mut self, e: &Expr) -> Res {
        self.step()?;
        Ok(match self.decls.resolved.node(e) {
            Node::Int(i) => Abs::literal(Kind::Int(i)),
            Node::Float(_) | Node::Decimal(_) => Abs::literal(Kind::Unknown),
            Node::Str(s) => Abs::literal(Kind::Str(s.into())),
            Node::Bool(b) => Abs::literal(Kind::Bool(b)),
            Node::Unit => Abs::plain(Kind::Unit),
            Node::Name(id) => self.lookup(&id.name)?.unwrap_or_else(Abs::any),
            // A variant without a payload is a literal the plan wrote.
            Node::Variant { name, args: [], .. } => {
                Abs::literal(Kind::Variant { name: Some(name.into()), payload: Vec::new() })
            }
            Node::Variant { name, args, .. } => {
                let payload = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                Abs::plain(Kind::Variant { name: Some(name.into()), payload })
            }
            Node::Tuple(items) => {
                let xs = items.iter().map(|x| self.expr(x)).collect::<Res<Vec<_>>>()?;
                Abs::plain(Kind::Tuple(xs))
            }
            Node::List(items) => {
                let xs = items.iter().map(|x| self.expr(x)).collect::<Res<Vec<_>>>()?;
                let elem = xs.iter().skip(1).fold(xs.first().cloned(), |a, x| a.map(|a| a.either(x)));
                let elem = elem.unwrap_or_else(|| Abs::plain(Kind::Unknown));
                Abs::literal(Kind::List { elem: Box::new(elem), len: Some(items.len() as u64) })
            }
            Node::Record { fields, .. } => {
                let fields =
                    fields.iter().map(|(n, x)| Ok((n.name.as_str().into(), self.expr(x)?))).collect::<Res<Vec<_>>>()?;
                Abs::plain(Kind::Record { opaque: false, ty: None, fields, declared: Vec::new() })
            }
            Node::Field { base, name } => self.expr(base)?.field(&name.name),
            Node::TupleField { base, index } => self.expr(base)?.component(index as usize),
            Node::Index { base, index } => {
                let xs = self.expr(base)?;
                let i = self.expr(index)?;
                xs.element().raised(&xs.label.join(&i.label))
            }
            Node::Call { callee, args } => self.call(callee, args, e.span)?,
            Node::Method { receiver, method, args, otherwise } => {
                self.method(receiver, &method.name, args, otherwise, e.span)?
            }
            Node::Unary { op, operand } => {
                let v = self.expr(operand)?;
                let kind = match (op, &v.kind) {
                    (UnOp::Not, Kind::Bool(b)) => Kind::Bool(!b),
                    (UnOp::Neg, Kind::Int(i)) if *i != i64::MIN => Kind::Int(-i),
                    _ => Kind::Unknown,
                };
                Abs::new(kind, v.label.clone(), v.origins)
            }
            // `&&` and `||` are branches at run time: the result carries the program-counter
            // label where the paths meet, even when the left side is known.
            Node::Binary { op: BinOp::And, lhs, rhs } => {
                let l = self.expr(lhs)?;
                self.branch(&l, lhs, |a| a.expr(rhs), |_| Ok(Abs::literal(Kind::Bool(false))))?
            }
            Node::Binary { op: BinOp::Or, lhs, rhs } => {
                let l = self.expr(lhs)?;
                self.branch(&l, lhs, |_| Ok(Abs::literal(Kind::Bool(true))), |a| a.expr(rhs))?
            }
            Node::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs)?;
                let r = self.expr(rhs)?;
                binary(op, &l, &r)
            }
            Node::If { cond, then, else_ } => {
                let c = self.expr(cond)?;
                let then_ = |a: &mut Analyzer<'a>| a.block(then);
                let else_ = |a: &mut Analyzer<'a>| match else_ {
                    Some(x) => a.expr(x),
                    None => Ok(Abs::plain(Kind::Unit)),
                };
                // A known condition: only that path runs, and its value still carries the
                // program-counter label there, as the run's join gives it.
                self.branch(&c, cond, then_, else_)?
            }
            Node::Match { scrutinee, arms } => self.match_(scrutinee, arms)?,
            Node::For { pat, iter, body } => {
                let xs = self.expr(iter)?;
                let cond = format!("for each {} in {}", self.text(pat.span), self.text(iter.span));
                let (_, pc) = self.in_loop(&xs, cond, None, |a, elem, _| {
                    let depth = a.scope.len();
                    a.bind_pattern(pat, &elem, &Bounds::bottom());
                    let r = a.block(body);
                    a.scope.truncate(depth);
                    r.map(|_| None)
                })?;
                Abs::plain(Kind::Unit).raised(&pc)
            }
            Node::Block(b) => self.block(b)?,
            Node::Closure { params, body } => {
                // What it captures: the names its body mentions that are in scope here.
                // (everything, if it holds a hole: a fill may name anything in scope).
                let (mentioned, holds_hole) = node::mentions(body);
                let env = if holds_hole {
                    self.scope.visible().map(|(n, v)| (n.clone(), v.clone())).collect()
                } else {
                    mentioned
                        .into_iter()
                        .filter_map(|n| self.scope.get(&n).map(|v| (Arc::<str>::from(n.as_str()), v.clone())))
                        .collect()
                };
                Abs::plain(Kind::Closure(Arc::new(Closure { params: params.to_vec(), body: body.clone(), env })))
            }
            Node::Cast { expr, .. } => {
                let v = self.expr(expr)?;
                Abs::unknown(v.label.clone(), v.origins)
            }
            Node::Hole { args } => {
                for a in args {
                    self.expr(a)?;
                }
                let v = self.hole(e.span);
                if self.recording {
                    self.open_reach()?;
                }
                v
            }
            Node::ToLabeled(b) => {
                let saved = self.pc.clone();
                let inner = self.block(b)?;
                let inner_pc = std::mem::replace(&mut self.pc, saved);
                Abs::plain(Kind::Labeled(Box::new(inner.raised(&inner_pc))))
            }
            Node::Error => Abs::any(),
        })
    }
}

/// The longest text the analysis folds from a `+` of two known ones.
const MAX_FOLDED_TEXT: usize = 256;

/// A binary operation: known values folded where the policies' label expressions need them
/// (`d.root == "public"`, `"github:" + org`), the operands' labels joined.
fn binary(op: BinOp, l: &Abs, r: &Abs) -> Abs {
    let label = l.label.join(&r.label);
    let origins = l.origins.union(&r.origins);
    let kind = match (op, &l.kind, &r.kind) {
        (BinOp::Eq, Kind::Str(a), Kind::Str(b)) => Kind::Bool(a == b),
        (BinOp::Ne, Kind::Str(a), Kind::Str(b)) => Kind::Bool(a != b),
        (BinOp::Eq, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a == b),
        (BinOp::Ne, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a != b),
        (BinOp::Eq, Kind::Bool(a), Kind::Bool(b)) => Kind::Bool(a == b),
        (BinOp::Ne, Kind::Bool(a), Kind::Bool(b)) => Kind::Bool(a != b),
        (BinOp::Lt, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a < b),
        (BinOp::Le, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a <= b),
        (BinOp::Gt, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a > b),
        (BinOp::Ge, Kind::Int(a), Kind::Int(b)) => Kind::Bool(a >= b),
        (BinOp::Add, Kind::Int(a), Kind::Int(b)) => a.checked_add(*b).map_or(Kind::Unknown, Kind::Int),
        (BinOp::Sub, Kind::Int(a), Kind::Int(b)) => a.checked_sub(*b).map_or(Kind::Unknown, Kind::Int),
        // A group's name built from a known one (`"github:" + org`); short texts only, so
        // that a loop doubling a text does not grow the analysis.
        (BinOp::Add, Kind::Str(a), Kind::Str(b)) if a.len() + b.len() <= MAX_FOLDED_TEXT => {
            Kind::Str(format!("{a}{b}").into())
        }
        _ => Kind::Unknown,
    };
    // Comparing or combining whole values reveals everything inside them.
    let label = Bounds { lo: label.lo, hi: l.deep(true).hi.join(&r.deep(true).hi) };
    Abs::new(kind, label, origins)
}

impl<'a> Analyzer<'a> {
    /// `if`/`&&`/`||`: each path that may run, with the program-counter label raised by the
    /// condition's; the value where they meet carries the program-counter label they reached.
    fn branch(
        &mut self,
        c: &Abs,
        cond: &Expr,
        then: impl FnOnce(&mut Analyzer<'a>) -> Res,
        else_: impl FnOnce(&mut Analyzer<'a>) -> Res,
    ) -> Res {
        let saved = self.pc.clone();
        let raised = saved.join(&c.label);
        let text = self.text(cond.span);
        let depth = self.scope.len();
        let mut paths: Vec<(Abs, Bounds)> = Vec::new();
        if c.as_bool() != Some(false) {
            self.pc = raised.clone();
            self.conds.push(text.clone());
            self.assume(cond, true);
            let v = then(self)?;
            self.scope.truncate(depth);
            self.conds.pop();
            paths.push((v, self.pc.clone()));
        }
        if c.as_bool() != Some(true) {
            self.pc = raised;
            self.conds.push(format!("not ({text})"));
            self.assume(cond, false);
            let v = else_(self)?;
            self.scope.truncate(depth);
            self.conds.pop();
            paths.push((v, self.pc.clone()));
        }
        self.pc = saved;
        Ok(meet_paths(paths))
    }

    /// An element `filter(f)` kept: what `f`'s condition says of it (`!c.private` on the
    /// channels `filter(|c| !c.private)` keeps).
    fn kept(&mut self, f: &Abs, elem: Abs) -> Abs {
        let Kind::Closure(c) = &f.kind else { return elem };
        let [param] = c.params.as_slice() else { return elem };
        let depth = self.scope.len();
        self.bind(&param.name.name, elem.clone());
        self.assume(&c.body, true);
        let kept = self.scope.get(&param.name.name).cloned().unwrap_or(elem);
        self.scope.truncate(depth);
        kept
    }

    /// What a path knows from its condition: `r.private` is false on the path of
    /// `!r.private`, `c.name` is `"general"` on the path of `c.name == "general"` (or of
    /// `c.name == n` where `n` is known to be `"general"`). Known as a
    /// new binding of `r` that shadows it on that path only; labels stay as they were.
    fn assume(&mut self, cond: &Expr, holds: bool) {
        let resolved = &self.decls.resolved;
        let field_of = |e: &Expr| match resolved.node(e) {
            Node::Field { base, name } => match resolved.node(base) {
                Node::Name(x) => Some((x.name.clone(), name.name.clone())),
                _ => None,
            },
            _ => None,
        };
        let (target, value) = match resolved.node(cond) {
            Node::Unary { op: UnOp::Not, operand } => return self.assume(operand, !holds),
            Node::Binary { op: BinOp::And, lhs, rhs } if holds => {
                self.assume(lhs, true);
                return self.assume(rhs, true);
            }
            Node::Binary { op: BinOp::Or, lhs, rhs } if !holds => {
                self.assume(lhs, false);
                return self.assume(rhs, false);
            }
            Node::Field { .. } => (field_of(cond), Kind::Bool(holds)),
            Node::Binary { op: BinOp::Eq, lhs, rhs } if holds => match (resolved.node(rhs), resolved.node(lhs)) {
                (Node::Str(s), _) => (field_of(lhs), Kind::Str(s.into())),
                (_, Node::Str(s)) => (field_of(rhs), Kind::Str(s.into())),
                // A field equal to a name whose text is known (`r.owner == org`, where a call
                // gave `org`).
                (Node::Name(x), _) | (_, Node::Name(x)) => {
                    let field = if matches!(resolved.node(rhs), Node::Name(_)) { lhs } else { rhs };
                    match self.scope.get(&x.name).map(|v| &v.kind) {
                        Some(Kind::Str(s)) => (field_of(field), Kind::Str(s.clone())),
                        _ => return,
                    }
                }
                _ => return,
            },
            _ => return,
        };
        let Some((var, field)) = target else { return };
        let Some(v) = self.scope.get(&var) else { return };
        let mut v = v.clone();
        let Kind::Record { fields, ty, declared, .. } = &mut v.kind else { return };
        let Some((_, f)) = fields.iter_mut().find(|(n, _)| **n == *field) else { return };
        f.kind = value;
        // The labels its type declares, computed again from what is now known of the fields.
        if let Some(ty) = ty.clone() {
            let env: Vec<(String, Abs)> = fields.iter().map(|(n, a)| (n.to_string(), a.clone())).collect();
            *declared = self.declared_labels(&ty, &env);
        }
        self.bind(&var, v);
    }

    /// The label record type `ty` declares for each of its fields, computed from the fields'
    /// values `env`: the join of the field's labels, as the run joins them (bottom where it
    /// declares none).
    fn declared_labels(&mut self, ty: &str, env: &[(String, Abs)]) -> Vec<Bounds> {
        let declared = self.decls.declared;
        let Some(record) = declared.record(ty) else { return Vec::new() };
        let mut labels = Vec::with_capacity(record.fields.len());
        for field in &record.fields {
            let mut joined = Bounds::bottom();
            for e in &field.labels {
                joined = joined.join(&self.label_expr(e, env).unwrap_or_else(|_| Bounds::any()));
            }
            labels.push(joined);
        }
        labels
    }

    fn match_(&mut self, scrutinee: &Expr, arms: &[cordon_syntax::ast::Arm]) -> Res {
        let s = self.expr(scrutinee)?;
        let saved = self.pc.clone();
        // Matching reads the value's own label, and the labels of the parts its patterns test
        // (a variant inside a tuple, a literal); an arm is tried after those before it failed.
        let raised = arms.iter().fold(saved.join(&s.label), |l, arm| l.join(&inspected(&arm.pat, &s)));
        let scrut = self.text(scrutinee.span);
        let mut paths = Vec::new();
        for arm in arms {
            if let (PatternNode::Variant { name, .. }, Kind::Variant { name: Some(known), .. }) =
                (node::pattern(&arm.pat), &s.kind)
                && name.name != **known
            {
                continue;
            }
            self.pc = raised.clone();
            let depth = self.scope.len();
            self.bind_pattern(&arm.pat, &s, &Bounds::bottom());
            let mut cond = format!("{scrut} matches {}", self.text(arm.pat.span));
            if let Some(g) = &arm.guard {
                let gv = self.expr(g)?;
                self.pc = self.pc.join(&gv.label);
                cond = format!("{cond} if {}", self.text(g.span));
            }
            self.conds.push(cond);
            let v = self.expr(&arm.body)?;
            self.conds.pop();
            self.scope.truncate(depth);
            paths.push((v, self.pc.clone()));
        }
        self.pc = saved;
        if paths.is_empty() {
            return Ok(Abs::plain(Kind::Unit));
        }
        Ok(meet_paths(paths))
    }

    /// A loop over `xs` (a `for`, or a builtin that calls a function per element): the body
    /// runs with the program-counter label raised by the list's, as many times as it has
    /// elements. The body gets an element and the state carried so far (`init` for the
    /// first), and gives the state after it. Returns the state after the loop and the
    /// program-counter label the loop reached (which its value carries).
    fn in_loop(
        &mut self,
        xs: &Abs,
        cond: String,
        init: Option<Abs>,
        mut body: impl FnMut(&mut Analyzer<'a>, Abs, Option<Abs>) -> Res<Option<Abs>>,
    ) -> Res<(Option<Abs>, Bounds)> {
        let saved_pc = self.pc.clone();
        let saved_mult = self.mult;
        let start = saved_pc.join(&xs.label);
        self.pc = start.clone();
        self.mult = self.mult.times(match &xs.kind {
            Kind::List { len: Some(n), .. } => Count::AtMost(*n),
            _ => Count::Unbounded,
        });
        self.conds.push(cond);
        let elem = xs.element();
        let merge = |acc: &Option<Abs>, out: Option<Abs>| match (acc, out) {
            (None, o) => o,
            (Some(a), Some(o)) => Some(a.either(&o)),
            (Some(a), None) => Some(a.clone()),
        };
        let recording = std::mem::replace(&mut self.recording, false);
        let mut acc = init;
        for round in 0.. {
            let pc0 = self.pc.clone();
            let out = body(self, elem.clone(), acc.clone())?;
            let next = merge(&acc, out);
            let stable = self.pc == pc0
                && match (&acc, &next) {
                    (Some(a), Some(b)) => a.same(b),
                    (None, None) => true,
                    _ => false,
                };
            acc = next;
            if stable {
                break;
            }
            if round + 1 >= MAX_ROUNDS {
                acc = acc.map(|a| Abs::unknown(Bounds { lo: DcLabel::bottom(), hi: DcLabel::top() }, a.origins_deep()));
                self.pc.hi = DcLabel::top();
                break;
            }
        }
        self.recording = recording;
        if recording {
            // Once more, recording, in the state the fixed point reached (its lower bound the
            // first round's: the first round runs before anything was raised).
            self.pc.lo = start.lo.clone();
            let out = body(self, elem, acc.clone())?;
            acc = merge(&acc, out);
        }
        self.conds.pop();
        self.mult = saved_mult;
        let inside = Bounds { lo: start.lo, hi: self.pc.hi.clone() };
        self.pc = saved_pc;
        Ok((acc, inside))
    }

    fn call(&mut self, callee: Called<'_>, args: &[Expr], span: Span) -> Res {
        match callee {
            Called::Function(name) => {
                if let Some((k, _)) = self.decls.fns.get_key_value(name.name.as_str()) {
                    let k: &'a str = k;
                    let argv = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                    return self.call_fn(k, argv);
                }
                // A function no module here declares: whatever else the name is, called.
                let f = self.lookup(&name.name)?.unwrap_or_else(Abs::any);
                let argv = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                self.call_value(f, argv, span)
            }
            Called::Builtin(b) => {
                if let (Rule::Loop, [first, rest @ ..]) = (rule(b), args) {
                    let xs = self.expr(first)?;
                    let rest = rest.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                    return self.higher_order(b, xs, rest, span);
                }
                let argv = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                Ok(self.builtin(b, &argv))
            }
            Called::Measure(_) => {
                // Only in refinements: the host's value, public.
                for a in args {
                    self.expr(a)?;
                }
                Ok(Abs::plain(Kind::Unknown))
            }
            Called::Value(callee) => {
                let f = self.expr(callee)?;
                let argv = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
                self.call_value(f, argv, span)
            }
        }
    }

    fn method(&mut self, receiver: &Expr, name: &str, args: &[Expr], otherwise: Otherwise<'_>, span: Span) -> Res {
        let r = self.expr(receiver)?;
        if let Otherwise::Builtin(b) = otherwise
            && rule(b) == Rule::Loop
        {
            let rest = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
            return self.higher_order(b, r, rest, span);
        }
        let argv = args.iter().map(|a| self.expr(a)).collect::<Res<Vec<_>>>()?;
        // A capability's receiver makes any method call a call of its tool, as at run time.
        if let Kind::Capability(cap) = &r.kind
            && let Some(tool) = self.decls.tools.get(&(cap.clone(), name.into()))
        {
            return self.tool_call(cap.clone(), tool, argv, span);
        }
        let all: Vec<Abs> = std::iter::once(r).chain(argv).collect();
        match otherwise {
            Otherwise::Builtin(b) => Ok(self.builtin(b, &all)),
            Otherwise::Function(f) => match self.decls.fns.get_key_value(f) {
                Some((k, _)) => self.call_fn(k, all),
                None => Ok(Abs::any()),
            },
            Otherwise::Nothing => Ok(Abs::any()),
        }
    }

    /// Calls a function value: a closure runs in the scope it was made in, a labelled one with
    /// the program-counter label raised by its label for the call.
    fn call_value(&mut self, f: Abs, args: Vec<Abs>, span: Span) -> Res {
        let raise = !f.label.is_bottom();
        let saved = self.pc.clone();
        if raise {
            self.pc = self.pc.join(&f.label);
        }
        let result = match &f.kind {
            Kind::Closure(c) => {
                let outer = std::mem::replace(&mut self.scope, Scope::of(c.env.iter().cloned()));
                for (p, a) in c.params.iter().zip(args) {
                    self.bind(&p.name.name, a);
                }
                let r = self.expr(&c.body);
                self.scope = outer;
                r?
            }
            Kind::Func(name) => match self.decls.fns.get_key_value(&**name) {
                Some((k, _)) => self.call_fn(k, args)?,
                None => Abs::any(),
            },
            // Code no one has seen (a function a fill made): as open as a hole.
            _ => self.hole(span),
        };
        if raise {
            let inside = std::mem::replace(&mut self.pc, saved);
            return Ok(result.raised(&inside));
        }
        Ok(result)
    }

    /// Calls a named function: its body analysed with these arguments. A recursive one is
    /// analysed once with nothing known (see [`Analyzer::analyze_open`]).
    fn call_fn(&mut self, name: &'a str, args: Vec<Abs>) -> Res {
        if self.calling.contains(&name) {
            if self.top_mode > 0 {
                return Ok(Abs::any());
            }
            self.recursive.insert(name);
            return Err(Stop::Restart);
        }
        if self.recursive.contains(name) {
            self.analyze_open(name)?;
            return Ok(Abs::unknown(Bounds { lo: self.pc.lo.clone(), hi: DcLabel::top() }, Origins::default()));
        }
        if self.calling.len() >= MAX_CALL_DEPTH {
            return Err(Stop::TooBig);
        }
        let Some(f) = self.decls.fns.get(name) else { return Ok(Abs::any()) };
        self.calling.push(name);
        let outer = std::mem::take(&mut self.scope);
        for (p, a) in f.params.iter().zip(args) {
            self.bind(&p.name.name, a);
        }
        let r = self.block(&f.body);
        self.scope = outer;
        self.calling.pop();
        r
    }
}

/// The labels a pattern reads when it is matched against `v` (the machine's `bind`): each
/// part it tests with a literal or a variant, with the labels of what holds it. Bound and
/// ignored parts are not read.
fn inspected(pat: &Pattern, v: &Abs) -> Bounds {
    match (node::pattern(pat), &v.kind) {
        (PatternNode::Wild | PatternNode::Bind(_) | PatternNode::Unit | PatternNode::Error, _) => Bounds::bottom(),
        (PatternNode::Tuple(ps), Kind::Tuple(xs)) => {
            let inner = ps.iter().zip(xs).fold(Bounds::bottom(), |l, (p, x)| l.join(&inspected(p, x)));
            if inner.is_bottom() { inner } else { inner.join(&v.label) }
        }
        (PatternNode::Variant { args, .. }, Kind::Variant { payload, .. }) => {
            args.iter().zip(payload).fold(v.label.clone(), |l, (p, x)| l.join(&inspected(p, x)))
        }
        // A literal, or a shape not known here: everything inside may be read.
        _ => v.deep(true),
    }
}

/// Paths that meet (`if`, `match`): the value is one of theirs, and carries the
/// program-counter label each reached.
fn meet_paths(paths: Vec<(Abs, Bounds)>) -> Abs {
    let mut it = paths.into_iter();
    let Some((first, pc)) = it.next() else { return Abs::plain(Kind::Unit) };
    let (v, pc) = it.fold((first, pc), |(v, pc), (w, qc)| (v.either(&w), pc.either(&qc)));
    v.raised(&pc)
}
