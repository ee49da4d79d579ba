//! What each name written in a file stands for, read from the syntax tree alone: for editors
//! (`cordon lsp`'s hover, go to definition and completion), never for checking.
//!
//! [`Index::new`] reads the modules of one check (the policies, then the plan) once: every
//! declaration (the items, a capability's tools, a record's fields, an enum's variants, and
//! every local binding with the part of its file where it is visible) and every name written,
//! with what it is there (a declaration, a use, `receiver.member`, a field of a record literal).
//! A use is resolved by the language's scoping: the innermost visible local of that name, else
//! the entry's parameter (in the plan's statements), else the item. What a member stands for
//! depends on the receiver's type, which the caller knows from the checker ([`Index::member`]
//! finds it once the type is known).
//!
//! The checker resolves names for every stage that acts on them (`Checked::resolved`); this index
//! only shows, and on a tree the parser recovered it still finds what is there.

use crate::ast::{
    Annotation, Block, Expr, ExprKind, Ident, Item, ItemKind, Module, Pattern, PatternKind, Stmt, TypeExpr,
    TypeExprKind,
};
use crate::builtins::Builtin;
use crate::span::{FileId, Span};

/// What a declaration declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclKind {
    /// A name a `let` binds.
    Let,
    /// A parameter of a function, a tool, a measure, a closure or the entry.
    Param,
    /// A name a pattern of `match` or `for` binds, or a refinement's variable.
    Bound,
    Function,
    Constant,
    Measure,
    TypeAlias,
    Record,
    Enum,
    Linear,
    Opaque,
    Capability,
    Tool,
    Field,
    Variant,
}

impl DeclKind {
    /// Does it declare a type (whose name is written where types are)?
    pub fn is_type(self) -> bool {
        use DeclKind::*;
        matches!(self, TypeAlias | Record | Enum | Linear | Opaque | Capability)
    }

    /// Is it a local binding, with a type the checker infers?
    pub fn is_local(self) -> bool {
        matches!(self, DeclKind::Let | DeclKind::Param | DeclKind::Bound)
    }

    /// What a reader calls it.
    pub fn noun(self) -> &'static str {
        use DeclKind::*;
        match self {
            Let => "let binding",
            Param => "parameter",
            Bound => "binding",
            Function => "function",
            Constant => "constant",
            Measure => "measure",
            TypeAlias => "type",
            Record => "record",
            Enum => "enum",
            Linear => "linear type",
            Opaque => "opaque type",
            Capability => "capability",
            Tool => "tool",
            Field => "field",
            Variant => "variant",
        }
    }
}

/// One declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    /// The declared name, where it is written.
    pub name: Ident,
    pub kind: DeclKind,
    /// The declaration as written, without a function's body: what a reader is shown of it.
    pub head: Span,
    pub doc: Option<String>,
    /// The name of its declared type (a parameter's, a field's, a constant's, an annotated
    /// `let`'s; a tool's or a function's result; what an alias stands for), under a
    /// refinement: `Repo` for `{r: Repo | !r.private}`.
    pub type_name: Option<String>,
    /// The capability of a tool, the record of a field, the enum of a variant.
    pub parent: Option<String>,
    /// Its `@label(..)` arguments (a tool's or a field's): each key (`returns`, `pc`, a
    /// parameter's name; none for a field's label) and where its value is written.
    pub labels: Vec<(Option<String>, Span)>,
    /// For a `let` whose value is a method call, `x.tool(..)`: that call, whose result it binds.
    pub value: Option<Member>,
}

/// `receiver.name` or `receiver.name(..)`: a field, a tool or a builtin, by the receiver's type.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The receiver as the names it is made of: `[gh]` in `gh.repo(..)`, `[issue, author]` in
    /// `issue.author.name`; empty when it is something else (a call, an index).
    pub receiver: Vec<Ident>,
    pub name: Ident,
    /// Called: `x.name(..)`.
    pub call: bool,
}

/// What a name written in a file is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Name<'i> {
    /// A declaration's own name.
    Declared(&'i Decl),
    /// A name that stands for a declaration (`None`: nothing visible declares it), or a
    /// builtin when nothing declares it and it is called or labels.
    Used { id: &'i Ident, decl: Option<&'i Decl>, builtin: Option<Builtin> },
    /// A member: which one depends on the receiver's type. The builtin of its name, if it is
    /// called and one has that name.
    Member(&'i Member, Option<Builtin>),
    /// A name whose parent type is written beside it: a field of a record literal
    /// (`Repo { name: .. }`), the variant of `Enum::Variant`.
    Of { id: &'i Ident, parent: &'i str },
}

/// Where a declaration can be named from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scope {
    /// An item: everywhere.
    Item,
    /// A tool, a field or a variant: through its parent.
    Member,
    /// A local: in `visible`; `top`: a statement of a module's body, which no item's body sees.
    Local { visible: Span, top: bool },
    /// The entry's parameter: in the plan's statements, and in the entry's declaration.
    Entry { item: Span },
}

/// A name written in a file, and what it is there.
#[derive(Clone, Debug)]
enum What {
    Decl(usize),
    /// A use; `ty`: where a type is written.
    Use {
        ty: bool,
    },
    Member(Member),
    Of(String),
}

/// The declarations and names of one check's modules.
#[derive(Clone, Debug, Default)]
pub struct Index {
    decls: Vec<(Decl, Scope)>,
    names: Vec<(Ident, What)>,
    plan: Option<FileId>,
    /// The plan's items: no statement's binding is visible inside them.
    plan_items: Vec<Span>,
}

impl Index {
    /// The index of `policies` and `plan`.
    pub fn new(policies: &[&Module], plan: Option<&Module>) -> Index {
        let mut index = Index { plan: plan.map(|p| p.file), ..Index::default() };
        index.plan_items = plan.map(|p| p.items.iter().map(|i| i.span).collect()).unwrap_or_default();
        for module in policies.iter().copied().chain(plan) {
            Walk { index: &mut index, file: module.file }.module(module);
        }
        index
    }

    /// What the name at `offset` of `file` is (a name touching `offset` on either side).
    pub fn at(&self, file: FileId, offset: u32) -> Option<Name<'_>> {
        let (id, what) = self
            .names
            .iter()
            .filter(|(id, _)| id.span.file == file && id.span.start <= offset && offset <= id.span.end)
            .filter(|(id, _)| !id.name.is_empty())
            .min_by_key(|(id, _)| id.span.end.saturating_sub(id.span.start))?;
        Some(match what {
            What::Decl(i) => Name::Declared(&self.decls.get(*i)?.0),
            What::Use { ty } => {
                let decl = self.resolve(file, id.span.start, &id.name, *ty);
                let builtin = if decl.is_none() && !ty { Builtin::from_name(&id.name) } else { None };
                Name::Used { id, decl, builtin }
            }
            What::Member(member) => {
                Name::Member(member, if member.call { Builtin::from_name(&member.name.name) } else { None })
            }
            What::Of(parent) => Name::Of { id, parent },
        })
    }

    /// What `name`, written at `offset` of `file`, stands for: a value (or, with `ty`, a type).
    pub fn resolve(&self, file: FileId, offset: u32, name: &str, ty: bool) -> Option<&Decl> {
        if !ty {
            let local = self
                .decls
                .iter()
                .filter(|(d, scope)| d.name.name == name && self.visible_at(*scope, file, offset))
                .max_by_key(|(d, scope)| (matches!(scope, Scope::Local { .. }), d.name.span.start));
            if let Some((decl, _)) = local {
                return Some(decl);
            }
        }
        self.item(name, ty)
    }

    /// The item called `name`: a type (with `ty`) or a function, constant or measure.
    pub fn item(&self, name: &str, ty: bool) -> Option<&Decl> {
        self.decls
            .iter()
            .find(|(d, scope)| *scope == Scope::Item && d.name.name == name && d.kind.is_type() == ty)
            .map(|(d, _)| d)
    }

    /// The member `name` of the type `parent`: a capability's tool, a record's field, an
    /// enum's variant.
    pub fn member(&self, parent: &str, name: &str) -> Option<&Decl> {
        self.members(parent).into_iter().find(|d| d.name.name == name)
    }

    /// The members of the type `parent`, in the order they are declared.
    pub fn members(&self, parent: &str) -> Vec<&Decl> {
        self.decls
            .iter()
            .filter(|(d, scope)| *scope == Scope::Member && d.parent.as_deref() == Some(parent))
            .map(|(d, _)| d)
            .collect()
    }

    /// What a name written at `offset` of `file` may stand for: the visible locals (the
    /// innermost of each name), the entry's parameters, then the items, types last.
    pub fn visible(&self, file: FileId, offset: u32) -> Vec<&Decl> {
        let visible = |scope: &Scope| self.visible_at(*scope, file, offset);
        let mut locals: Vec<&Decl> = self
            .decls
            .iter()
            .filter(|(_, scope)| matches!(scope, Scope::Local { .. }) && visible(scope))
            .map(|(d, _)| d)
            .collect();
        locals.sort_by_key(|d| std::cmp::Reverse(d.name.span.start));
        let inputs = self.decls.iter().filter(|(_, scope)| matches!(scope, Scope::Entry { .. }) && visible(scope));
        let mut out: Vec<&Decl> = Vec::new();
        for d in locals.into_iter().chain(inputs.map(|(d, _)| d)) {
            if !out.iter().any(|o| o.name.name == d.name.name) {
                out.push(d);
            }
        }
        let items = self.decls.iter().filter(|(_, scope)| *scope == Scope::Item).map(|(d, _)| d);
        let (types, values): (Vec<&Decl>, Vec<&Decl>) = items.partition(|d| d.kind.is_type());
        out.extend(values);
        out.extend(types);
        out
    }

    /// The local bindings of `name` in `file`, in the order they are written: the n-th of them
    /// is the same binding after an edit elsewhere in the file.
    pub fn locals_named(&self, file: FileId, name: &str) -> Vec<&Decl> {
        let mut found: Vec<&Decl> = self
            .decls
            .iter()
            .filter(|(d, scope)| {
                matches!(scope, Scope::Local { .. } | Scope::Entry { .. })
                    && d.name.span.file == file
                    && d.name.name == name
            })
            .map(|(d, _)| d)
            .collect();
        found.sort_by_key(|d| d.name.span.start);
        found
    }

    /// Whether a declaration of scope `scope` can be named at `offset` of `file`.
    fn visible_at(&self, scope: Scope, file: FileId, offset: u32) -> bool {
        let within = |s: Span| s.file == file && s.start <= offset && offset <= s.end;
        let in_plan_statements = self.plan == Some(file) && !self.plan_items.iter().any(|s| within(*s));
        match scope {
            Scope::Item | Scope::Member => false,
            Scope::Local { visible, top } => within(visible) && (!top || in_plan_statements || self.plan != Some(file)),
            Scope::Entry { item } => within(item) || in_plan_statements,
        }
    }
}

/// The name of the type `ty` names, under a refinement.
fn type_name(ty: &TypeExpr) -> Option<String> {
    match &ty.kind {
        TypeExprKind::Named { name, .. } => Some(name.name.clone()),
        TypeExprKind::Refined { base, .. } => type_name(base),
        _ => None,
    }
}

/// The names a receiver is made of (see [`Member::receiver`]).
fn chain(e: &Expr) -> Vec<Ident> {
    match &e.kind {
        ExprKind::Name(id) => vec![id.clone()],
        ExprKind::Field { base, name } => {
            let mut names = chain(base);
            if !names.is_empty() {
                names.push(name.clone());
            }
            names
        }
        _ => Vec::new(),
    }
}

/// The `@label(..)` arguments among `annotations`.
fn labels(annotations: &[Annotation]) -> Vec<(Option<String>, Span)> {
    annotations
        .iter()
        .filter(|a| a.name.name == "label")
        .flat_map(|a| a.args.iter().map(|arg| (arg.key.as_ref().map(|k| k.name.clone()), arg.value.span)))
        .collect()
}

/// A declaration with nothing but its name, kind and head.
fn decl(name: &Ident, kind: DeclKind, head: Span) -> Decl {
    Decl { name: name.clone(), kind, head, doc: None, type_name: None, parent: None, labels: Vec::new(), value: None }
}

/// The walk over one file's module that fills the index.
struct Walk<'x> {
    index: &'x mut Index,
    file: FileId,
}

impl Walk<'_> {
    fn declare(&mut self, decl: Decl, scope: Scope) {
        let name = decl.name.clone();
        self.index.decls.push((decl, scope));
        self.index.names.push((name, What::Decl(self.index.decls.len() - 1)));
    }

    fn local(&mut self, decl: Decl, visible: Span, top: bool) {
        self.declare(decl, Scope::Local { visible, top });
    }

    fn written(&mut self, id: &Ident, what: What) {
        self.index.names.push((id.clone(), what));
    }

    fn span(&self, start: u32, end: u32) -> Span {
        Span::new(self.file, start, end.max(start))
    }

    fn module(&mut self, module: &Module) {
        for item in &module.items {
            self.item(item);
        }
        self.block(&module.body, u32::MAX, true);
    }

    /// A parameter `name: T`, visible in `visible`.
    fn param(&mut self, p: &crate::ast::Param, visible: Span) {
        let d = Decl { type_name: type_name(&p.ty), ..decl(&p.name, DeclKind::Param, p.name.span.to(p.ty.span)) };
        self.local(d, visible, false);
        self.ty(&p.ty);
    }

    fn item(&mut self, item: &Item) {
        let with = |d: Decl| Decl { doc: item.doc.clone(), ..d };
        match &item.kind {
            ItemKind::TypeAlias { name, ty } => {
                let d = Decl { type_name: type_name(ty), ..decl(name, DeclKind::TypeAlias, item.span) };
                self.declare(with(d), Scope::Item);
                self.ty(ty);
            }
            ItemKind::Record { name, fields, .. } => {
                let head = self.span(item.span.start, name.span.end);
                self.declare(with(decl(name, DeclKind::Record, head)), Scope::Item);
                for f in fields {
                    let end = f.annotations.last().map_or(f.ty.span.end, |a| a.span.end);
                    let field = Decl {
                        doc: f.doc.clone(),
                        type_name: type_name(&f.ty),
                        parent: Some(name.name.clone()),
                        labels: labels(&f.annotations),
                        ..decl(&f.name, DeclKind::Field, self.span(f.name.span.start, end))
                    };
                    self.declare(field, Scope::Member);
                    self.ty(&f.ty);
                    self.annotations(&f.annotations);
                }
            }
            ItemKind::Enum { name, variants } => {
                let head = self.span(item.span.start, name.span.end);
                self.declare(with(decl(name, DeclKind::Enum, head)), Scope::Item);
                for v in variants {
                    let variant = Decl {
                        doc: v.doc.clone(),
                        parent: Some(name.name.clone()),
                        ..decl(&v.name, DeclKind::Variant, v.span)
                    };
                    self.declare(variant, Scope::Member);
                    v.payload.iter().for_each(|t| self.ty(t));
                }
            }
            ItemKind::Linear { name } => self.declare(with(decl(name, DeclKind::Linear, item.span)), Scope::Item),
            ItemKind::Opaque { name, .. } => self.declare(with(decl(name, DeclKind::Opaque, item.span)), Scope::Item),
            ItemKind::Measure { name, params, ret, default } => {
                self.declare(with(decl(name, DeclKind::Measure, item.span)), Scope::Item);
                params.iter().for_each(|p| self.param(p, item.span));
                self.ty(ret);
                if let Some(d) = default {
                    self.expr(d);
                }
            }
            ItemKind::Capability { name, tools } => {
                let head = self.span(item.span.start, name.span.end);
                self.declare(with(decl(name, DeclKind::Capability, head)), Scope::Item);
                for tool in tools {
                    let d = Decl {
                        doc: tool.doc.clone(),
                        type_name: tool.ret.as_ref().and_then(type_name),
                        parent: Some(name.name.clone()),
                        labels: labels(&tool.annotations),
                        ..decl(&tool.name, DeclKind::Tool, tool.span)
                    };
                    self.declare(d, Scope::Member);
                    tool.params.iter().for_each(|p| self.param(p, tool.span));
                    if let Some(ret) = &tool.ret {
                        self.ty(ret);
                    }
                    self.annotations(&tool.annotations);
                }
            }
            ItemKind::Fn(f) => {
                let head = self.span(item.span.start, f.body.span.start);
                let d =
                    Decl { type_name: f.ret.as_ref().and_then(type_name), ..decl(&f.name, DeclKind::Function, head) };
                self.declare(with(d), Scope::Item);
                f.params.iter().for_each(|p| self.param(p, item.span));
                if let Some(ret) = &f.ret {
                    self.ty(ret);
                }
                self.block(&f.body, f.body.span.end, false);
            }
            ItemKind::Const { name, ty, value } => {
                let d = Decl { type_name: type_name(ty), ..decl(name, DeclKind::Constant, item.span) };
                self.declare(with(d), Scope::Item);
                self.ty(ty);
                self.expr(value);
            }
            ItemKind::Entry { params, ret } => {
                for p in params {
                    let d = Decl {
                        type_name: type_name(&p.ty),
                        ..decl(&p.name, DeclKind::Param, p.name.span.to(p.ty.span))
                    };
                    self.declare(d, Scope::Entry { item: item.span });
                    self.ty(&p.ty);
                }
                self.ty(ret);
            }
            ItemKind::Release { to, annotations, .. } => {
                self.expr(to);
                self.annotations(annotations);
            }
        }
    }

    fn annotations(&mut self, annotations: &[Annotation]) {
        for a in annotations {
            a.args.iter().for_each(|arg| self.expr(&arg.value));
        }
    }

    /// A block whose bindings are visible up to `end`; `top`: a module's body.
    fn block(&mut self, b: &Block, end: u32, top: bool) {
        for stmt in &b.stmts {
            match stmt {
                Stmt::Let { pat, ty, value, span } => {
                    self.expr(value);
                    if let Some(t) = ty {
                        self.ty(t);
                    }
                    let head = self.span(span.start, ty.as_ref().map_or(pat.span.end, |t| t.span.end));
                    let value = match &value.kind {
                        ExprKind::MethodCall { receiver, method, .. } => {
                            Some(Member { receiver: chain(receiver), name: Ident::clone(method), call: true })
                        }
                        _ => None,
                    };
                    let like = Decl { head, type_name: ty.as_deref().and_then(type_name), value, ..decl_of(pat) };
                    self.pattern(pat, &like, self.span(span.end, end), top);
                }
                Stmt::Expr(e) => self.expr(e),
            }
        }
        if let Some(tail) = &b.tail {
            self.expr(tail);
        }
    }

    /// The names `p` binds, each declared like `like` (a `let`'s head, type and value go to a
    /// name bound alone; a name inside a tuple or a variant is a plain binding), visible in
    /// `visible`.
    fn pattern(&mut self, p: &Pattern, like: &Decl, visible: Span, top: bool) {
        match &p.kind {
            PatternKind::Bind(id) => {
                let head = if like.kind == DeclKind::Bound { id.span } else { like.head };
                self.local(Decl { name: id.clone(), head, ..like.clone() }, visible, top);
            }
            PatternKind::Tuple(parts) => {
                let inner = Decl { value: like.value.clone(), ..decl(&like.name, like.kind, like.head) };
                for part in parts {
                    self.pattern(part, &Decl { head: part.span, ..inner.clone() }, visible, top);
                }
            }
            PatternKind::Variant { enum_name, name, args } => {
                if let Some(e) = enum_name {
                    self.written(e, What::Use { ty: true });
                    self.written(name, What::Of(e.name.clone()));
                }
                for arg in args {
                    self.pattern(arg, &decl(&like.name, DeclKind::Bound, arg.span), visible, top);
                }
            }
            PatternKind::Wild
            | PatternKind::Int(_)
            | PatternKind::Str(_)
            | PatternKind::Bool(_)
            | PatternKind::Unit
            | PatternKind::Error => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(id) => self.written(id, What::Use { ty: false }),
            ExprKind::Path { ty, variant } => {
                self.written(ty, What::Use { ty: true });
                self.written(variant, What::Of(ty.name.clone()));
            }
            ExprKind::Record { name, fields } => {
                self.written(name, What::Use { ty: true });
                for (field, value) in fields {
                    self.written(field, What::Of(name.name.clone()));
                    self.expr(value);
                }
            }
            ExprKind::Field { base, name } => {
                self.expr(base);
                self.written(name, What::Member(Member { receiver: chain(base), name: name.clone(), call: false }));
            }
            ExprKind::MethodCall { receiver, method, args } => {
                self.expr(receiver);
                let member = Member { receiver: chain(receiver), name: Ident::clone(method), call: true };
                self.written(method, What::Member(member));
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::If { cond, then, else_ } => {
                self.expr(cond);
                self.block(then, then.span.end, false);
                if let Some(e) = else_ {
                    self.expr(e);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms {
                    self.pattern(&arm.pat, &bound(&arm.pat), arm.span, false);
                    if let Some(g) = &arm.guard {
                        self.expr(g);
                    }
                    self.expr(&arm.body);
                }
            }
            ExprKind::For { pat, iter, body } => {
                self.expr(iter);
                self.pattern(pat, &bound(pat), body.span, false);
                self.block(body, body.span.end, false);
            }
            ExprKind::Block(b) | ExprKind::ToLabeled(b) => self.block(b, b.span.end, false),
            ExprKind::Closure { params, ret, body } => {
                for p in params {
                    let head = p.ty.as_ref().map_or(p.name.span, |t| p.name.span.to(t.span));
                    let d =
                        Decl { type_name: p.ty.as_ref().and_then(type_name), ..decl(&p.name, DeclKind::Param, head) };
                    self.local(d, body.span, false);
                    if let Some(t) = &p.ty {
                        self.ty(t);
                    }
                }
                if let Some(t) = ret {
                    self.ty(t);
                }
                self.expr(body);
            }
            ExprKind::Cast { expr, ty } => {
                self.expr(expr);
                self.ty(ty);
            }
            ExprKind::Hole { ty, args } => {
                if let Some(t) = ty {
                    self.ty(t);
                }
                args.iter().for_each(|a| self.expr(a));
            }
            _ => e.for_each_child(&mut |child| self.expr(child)),
        }
    }

    fn ty(&mut self, t: &TypeExpr) {
        match &t.kind {
            TypeExprKind::Named { name, args } => {
                self.written(name, What::Use { ty: true });
                args.iter().for_each(|a| self.ty(a));
            }
            TypeExprKind::Tuple(parts) => parts.iter().for_each(|p| self.ty(p)),
            TypeExprKind::Fn { params, ret } => {
                params.iter().for_each(|p| self.ty(p));
                self.ty(ret);
            }
            TypeExprKind::Refined { var, base, pred } => {
                self.ty(base);
                let d = Decl { type_name: type_name(base), ..decl(var, DeclKind::Bound, var.span) };
                self.local(d, t.span, false);
                self.expr(pred);
            }
            TypeExprKind::Error => {}
        }
    }
}

/// A `let`'s declaration before its names are known.
fn decl_of(pat: &Pattern) -> Decl {
    decl(&Ident { name: String::new(), span: pat.span }, DeclKind::Let, pat.span)
}

/// A name bound by the pattern of a `match` arm or a `for`, before it is known.
fn bound(pat: &Pattern) -> Decl {
    decl(&Ident { name: String::new(), span: pat.span }, DeclKind::Bound, pat.span)
}
