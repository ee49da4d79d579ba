//! The syntax tree. The parser always produces one, with `Error` nodes where it recovered.
//!
//! An expression, with the types, patterns and blocks it holds, can be saved and loaded (serde):
//! a type the checker resolved keeps a refinement's predicate as its tree, and a saved run keeps
//! the types its casts convert to.

use crate::span::{FileId, Span};
use serde::{Deserialize, Serialize};

/// Identifies an expression node within one parse, so later stages can attach types to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed file: declarations (hoisted) and top-level statements (the plan's body, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub file: FileId,
    pub items: Vec<Item>,
    pub body: Block,
}

impl Module {
    /// The names of the capabilities the module declares.
    pub fn capabilities(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|item| match &item.kind {
            ItemKind::Capability { name, .. } => Some(name.name.as_str()),
            _ => None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The `///` comment lines before the item, joined with '\n', without the slashes.
    pub doc: Option<String>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// `type X = T` where `T` is not a record body.
    TypeAlias {
        name: Ident,
        ty: TypeExpr,
    },
    /// `type X = { f: T, .. }`, or `opaque type X = { .. }` (fields readable, not constructible).
    Record {
        name: Ident,
        fields: Vec<Field>,
        opaque: bool,
    },
    Enum {
        name: Ident,
        variants: Vec<Variant>,
    },
    /// `linear type X`
    Linear {
        name: Ident,
    },
    /// `opaque type X[T, U]`
    Opaque {
        name: Ident,
        params: Vec<Ident>,
    },
    /// `measure m(x: T) -> U` or `measure m(x: T) -> U = literal`: the literal is the
    /// measure's value on a fresh host-made value (a new session the host hands to a plan).
    Measure {
        name: Ident,
        params: Vec<Param>,
        ret: TypeExpr,
        default: Option<Expr>,
    },
    Capability {
        name: Ident,
        tools: Vec<Tool>,
    },
    Fn(FnDecl),
    /// `const X: T = e;`
    Const {
        name: Ident,
        ty: TypeExpr,
        value: Expr,
    },
    /// `entry(p: T, ..) -> U`
    Entry {
        params: Vec<Param>,
        ret: TypeExpr,
    },
    /// `release "group" to L`, with `@approval(..)` after it: the data of the group (labelled
    /// `group("group", ..)`) may go where the label `L` allows, with the user's yes on a card
    /// unless the approval is `none`. Policies only.
    Release {
        group: String,
        group_span: Span,
        to: Expr,
        annotations: Vec<Annotation>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub doc: Option<String>,
    pub name: Ident,
    pub ty: TypeExpr,
    /// `name: T @label(..)`: in a policy, the label of this field in every value a tool returns.
    pub annotations: Vec<Annotation>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub doc: Option<String>,
    pub name: Ident,
    pub payload: Vec<TypeExpr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub name: Ident,
    pub params: Vec<Param>,
    /// `None` means `()`.
    pub ret: Option<TypeExpr>,
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub doc: Option<String>,
    pub name: Ident,
    pub params: Vec<Param>,
    /// `None` means `()`.
    pub ret: Option<TypeExpr>,
    pub annotations: Vec<Annotation>,
    pub span: Span,
}

/// `@name(arg, key = value, ..)`
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: Ident,
    pub args: Vec<AnnotationArg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AnnotationArg {
    pub key: Option<Ident>,
    pub value: Expr,
}

/// Whether a `release` with `annotations` asks the user on a card: unless it says
/// `@approval(none)`. (The checker allows only `@approval(ask)` and `@approval(none)`.)
pub fn release_asks(annotations: &[Annotation]) -> bool {
    let says_none = |a: &Annotation| {
        a.name.name == "approval"
            && matches!(a.args.as_slice(), [arg] if matches!(&arg.value.kind, ExprKind::Name(id) if id.name == "none"))
    };
    !annotations.iter().any(says_none)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TypeExprKind {
    /// `Int`, `Repo`, `List[T]`, `Trusted[Bib]`
    Named {
        name: Ident,
        args: Vec<TypeExpr>,
    },
    /// `(A, B)`; `()` is the empty tuple, `(A)` is just `A`.
    Tuple(Vec<TypeExpr>),
    /// `fn(A, B) -> C`
    Fn {
        params: Vec<TypeExpr>,
        ret: Box<TypeExpr>,
    },
    /// `{v: T | p}`
    Refined {
        var: Ident,
        base: Box<TypeExpr>,
        pred: Box<Expr>,
    },
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The final expression without a semicolon: the block's value.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

impl Block {
    /// Calls `f` on each statement's expression (a `let`'s value), then on the block's value.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        for stmt in &self.stmts {
            match stmt {
                Stmt::Let { value, .. } => f(value),
                Stmt::Expr(e) => f(e),
            }
        }
        if let Some(tail) = &self.tail {
            f(tail);
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// Boxed parts keep statements small (a block holds many).
    Let { pat: Pattern, ty: Option<Box<TypeExpr>>, value: Box<Expr>, span: Span },
    /// An expression followed by `;`, or a block-like expression (`if`, `match`, `for`, `{}`).
    Expr(Expr),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

// A checker keeps the whole tree of a plan while it checks, and a long plan has tens of thousands
// of expressions and statements: a variant that grew would grow them all. The large, rarer parts
// (blocks, patterns and types in expressions, a path's names) are boxed for this.
const _: () = assert!(std::mem::size_of::<Expr>() <= 64);
const _: () = assert!(std::mem::size_of::<Stmt>() <= 96);

impl Expr {
    /// Calls `f` on each expression directly inside this one, in source order (a block's
    /// statements and value, an arm's guard and body; not patterns or types): a walk over a
    /// tree is `f` recursing through this.
    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        match &self.kind {
            ExprKind::Tuple(xs) | ExprKind::List(xs) | ExprKind::Hole { args: xs, .. } => xs.iter().for_each(f),
            ExprKind::Record { fields, .. } => fields.iter().for_each(|(_, x)| f(x)),
            ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => f(base),
            ExprKind::Index { base, index } => {
                f(base);
                f(index);
            }
            ExprKind::Call { callee: first, args } | ExprKind::MethodCall { receiver: first, args, .. } => {
                f(first);
                args.iter().for_each(f);
            }
            ExprKind::Unary { operand, .. } => f(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            ExprKind::If { cond, then, else_ } => {
                f(cond);
                then.for_each_expr(f);
                if let Some(e) = else_ {
                    f(e);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                f(scrutinee);
                for arm in arms {
                    if let Some(g) = &arm.guard {
                        f(g);
                    }
                    f(&arm.body);
                }
            }
            ExprKind::For { iter, body, .. } => {
                f(iter);
                body.for_each_expr(f);
            }
            ExprKind::Block(b) | ExprKind::ToLabeled(b) => b.for_each_expr(f),
            ExprKind::Closure { body, .. } => f(body),
            ExprKind::Cast { expr, .. } => f(expr),
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Decimal(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Unit
            | ExprKind::Name(_)
            | ExprKind::Path { .. }
            | ExprKind::Error => {}
        }
    }
}

impl Expr {
    /// How many times this expression reads the local `name`, where each read runs at most
    /// once each time the expression runs and nothing else could see the local in between:
    /// `None` if it reads it inside a closure or a loop, binds the name again, or holds a hole
    /// (whose prompt shows every local). A compiler may move a value out at such a single
    /// read when the local is not read after the expression.
    pub fn reads_once(&self, name: &str) -> Option<usize> {
        match &self.kind {
            ExprKind::Name(id) => Some(usize::from(id.name == name)),
            ExprKind::Hole { .. } => None,
            ExprKind::Closure { .. } | ExprKind::For { .. } => (!self.mentions(name)).then_some(0),
            ExprKind::Block(b) | ExprKind::ToLabeled(b) => b.reads_once(name),
            ExprKind::Match { scrutinee, arms } => {
                let mut n = scrutinee.reads_once(name)?;
                for arm in arms {
                    if arm.pat.binds(name) {
                        return None;
                    }
                    n += arm.guard.as_ref().map_or(Some(0), |g| g.reads_once(name))? + arm.body.reads_once(name)?;
                }
                Some(n)
            }
            _ => {
                let mut n = Some(0);
                self.for_each_child(&mut |child| n = n.zip(child.reads_once(name)).map(|(a, b)| a + b));
                n
            }
        }
    }

    /// Whether `name` appears anywhere in this expression, read or bound again.
    pub fn mentions(&self, name: &str) -> bool {
        let mut found = match &self.kind {
            ExprKind::Name(id) => id.name == name,
            ExprKind::Closure { params, .. } => params.iter().any(|p| p.name.name == name),
            ExprKind::For { pat, .. } => pat.binds(name),
            ExprKind::Block(b) | ExprKind::ToLabeled(b) => {
                b.stmts.iter().any(|s| matches!(s, Stmt::Let { pat, .. } if pat.binds(name)))
            }
            ExprKind::Match { arms, .. } => arms.iter().any(|a| a.pat.binds(name)),
            _ => false,
        };
        self.for_each_child(&mut |child| found |= child.mentions(name));
        found
    }
}

impl Block {
    /// [`Expr::reads_once`] of the block's statements and value.
    fn reads_once(&self, name: &str) -> Option<usize> {
        let mut n = 0;
        for stmt in &self.stmts {
            n += match stmt {
                Stmt::Let { pat, .. } if pat.binds(name) => return None,
                Stmt::Let { value, .. } => value.reads_once(name)?,
                Stmt::Expr(e) => e.reads_once(name)?,
            };
        }
        Some(n + self.tail.as_ref().map_or(Some(0), |t| t.reads_once(name))?)
    }
}

impl Pattern {
    /// Whether the pattern binds `name`.
    pub fn binds(&self, name: &str) -> bool {
        match &self.kind {
            PatternKind::Bind(id) => id.name == name,
            PatternKind::Tuple(ps) | PatternKind::Variant { args: ps, .. } => ps.iter().any(|p| p.binds(name)),
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnOp {
    Neg,
    Not,
}

/// The large fields of the rarer variants are boxed to keep every [`Expr`] small.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    /// `12.50d`, exact.
    Decimal(rust_decimal::Decimal),
    Str(String),
    Bool(bool),
    /// `()`
    Unit,
    /// A variable, function, constant, or the builtin constructors `Some`, `None`, `Ok`, `Err`.
    Name(Ident),
    /// `Enum::Variant`
    Path {
        ty: Box<Ident>,
        variant: Box<Ident>,
    },
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    /// `Name { field: value, .. }`
    Record {
        name: Box<Ident>,
        fields: Vec<(Ident, Expr)>,
    },
    /// `base.name`
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    /// `base.0`
    TupleField {
        base: Box<Expr>,
        index: u32,
        index_span: Span,
    },
    /// `base[index]`
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `receiver.method(args)`
    MethodCall {
        receiver: Box<Expr>,
        method: Box<Ident>,
        args: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `else_` is a `Block` or another `If`.
    If {
        cond: Box<Expr>,
        then: Box<Block>,
        else_: Option<Box<Expr>>,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Arm>,
    },
    For {
        pat: Box<Pattern>,
        iter: Box<Expr>,
        body: Box<Block>,
    },
    Block(Box<Block>),
    /// `|x, y: Int| -> T body`
    Closure {
        params: Vec<ClosureParam>,
        ret: Option<Box<TypeExpr>>,
        body: Box<Expr>,
    },
    /// `e as T`
    Cast {
        expr: Box<Expr>,
        ty: Box<TypeExpr>,
    },
    /// `agent[T](task, args..)`; `ty` is `None` for `agent(task)`, inferred from context.
    Hole {
        ty: Option<Box<TypeExpr>>,
        args: Vec<Expr>,
    },
    /// `to_labeled { .. }`: runs the block and boxes its value in an opaque `Labeled[T]`,
    /// leaving the caller's program-counter label as it was.
    ToLabeled(Box<Block>),
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosureParam {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arm {
    pub pat: Pattern,
    pub guard: Option<Expr>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PatternKind {
    /// `_`
    Wild,
    /// `x`
    Bind(Ident),
    Int(i64),
    Str(String),
    Bool(bool),
    /// `()`
    Unit,
    Tuple(Vec<Pattern>),
    /// `Some(p)`, `None`, `Ok(p)`, `Err(p)` (`enum_name` is `None`) or `Enum::Variant(p, ..)`.
    /// The names are boxed: a pattern is held inline by every `let`.
    Variant {
        enum_name: Option<Box<Ident>>,
        name: Box<Ident>,
        args: Vec<Pattern>,
    },
    Error,
}
