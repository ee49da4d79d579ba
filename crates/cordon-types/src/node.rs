//! A checked program as the stages after the checker read it: each expression, statement,
//! pattern and declaration seen as what it is, with what the checker resolved at it in hand (a
//! call's callee, a cast's target, the enum an unqualified variant belongs to). The runtime's
//! compiler and the static label analysis read the program through these views and never
//! look at the syntax tree's kinds, so the language's rules for what a name in call position
//! is, or which enum `Some` is of, are written here once.
//!
//! The views borrow the tree and copy what the checker resolved out of [`Resolved`], so a
//! stage can go on changing its own state while it holds one.

use cordon_syntax::Builtin;
use cordon_syntax::ast::{
    Arm, BinOp, Block, ClosureParam, Expr, ExprKind, FnDecl, Ident, Item, ItemKind, Pattern, PatternKind, Stmt,
    Tool as ToolDecl, TypeExpr, TypeExprKind, UnOp,
};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::calls::{Callee, Calls};
use crate::casts::Casts;
use crate::declared::Type;

/// What the checker resolved in a unit of code (a program, a fill, or a fill with the program
/// around it): each call's callee and each cast's target, by the expression's node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub calls: Calls,
    pub casts: Casts,
}

/// An expression, as what it is.
#[derive(Debug)]
pub enum Node<'a> {
    Int(i64),
    Float(f64),
    Decimal(Decimal),
    Str(&'a str),
    Bool(bool),
    Unit,
    /// A name read as a value: a local, a function or a constant (`None` is a `Variant`).
    Name(&'a Ident),
    /// A variant made: `Enum::Variant`, `Enum::Variant(args)`, or `Some`, `Ok` or `Err` called.
    Variant {
        enum_name: &'a str,
        name: &'a str,
        args: &'a [Expr],
    },
    Tuple(&'a [Expr]),
    List(&'a [Expr]),
    Record {
        name: &'a Ident,
        fields: &'a [(Ident, Expr)],
    },
    Field {
        base: &'a Expr,
        name: &'a Ident,
    },
    TupleField {
        base: &'a Expr,
        index: u32,
    },
    Index {
        base: &'a Expr,
        index: &'a Expr,
    },
    /// A call of a name or a value, as the checker resolved it.
    Call {
        callee: Called<'a>,
        args: &'a [Expr],
    },
    /// `receiver.method(args)`: the receiver's tool if the receiver holds a capability (known
    /// only at run time), else what the checker resolved the method to.
    Method {
        receiver: &'a Expr,
        method: &'a Ident,
        args: &'a [Expr],
        otherwise: Otherwise<'a>,
    },
    Unary {
        op: UnOp,
        operand: &'a Expr,
    },
    Binary {
        op: BinOp,
        lhs: &'a Expr,
        rhs: &'a Expr,
    },
    If {
        cond: &'a Expr,
        then: &'a Block,
        else_: Option<&'a Expr>,
    },
    Match {
        scrutinee: &'a Expr,
        arms: &'a [Arm],
    },
    For {
        pat: &'a Pattern,
        iter: &'a Expr,
        body: &'a Block,
    },
    Block(&'a Block),
    Closure {
        params: &'a [ClosureParam],
        body: &'a Expr,
    },
    /// `expr as T`: `target` is `T` as the checker resolved it, `None` in code it did not
    /// check; `written` is `T` as written.
    Cast {
        expr: &'a Expr,
        target: Option<Type>,
        written: &'a TypeExpr,
    },
    /// `agent[T](task, args..)`.
    Hole {
        args: &'a [Expr],
    },
    /// `to_labeled { .. }`.
    ToLabeled(&'a Block),
    /// A malformed expression (only in code the checker rejected).
    Error,
}

/// What a call `f(args)` calls.
#[derive(Clone, Copy, Debug)]
pub enum Called<'a> {
    /// The function the program (or a fill) declares by that name.
    Function(&'a Ident),
    /// The host's value of a measure (only in a refinement).
    Measure(&'a Ident),
    Builtin(Builtin),
    /// The value the callee evaluates to (a closure, a function value); also any call the
    /// checker did not resolve.
    Value(&'a Expr),
}

/// What a method call calls when its receiver holds no capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Otherwise<'a> {
    Builtin(Builtin),
    /// The function of the method's name, the receiver its first argument.
    Function(&'a str),
    /// Nothing: the call fails.
    Nothing,
}

/// A statement of a block.
#[derive(Clone, Copy, Debug)]
pub enum Statement<'a> {
    /// `let pat = value;`
    Let { pat: &'a Pattern, value: &'a Expr, span: cordon_syntax::Span },
    /// `expr;`
    Expr(&'a Expr),
}

/// A pattern, as what it tests and binds.
#[derive(Clone, Copy, Debug)]
pub enum PatternNode<'a> {
    Wild,
    Bind(&'a Ident),
    Int(i64),
    Str(&'a str),
    Bool(bool),
    Unit,
    Tuple(&'a [Pattern]),
    /// A variant and its payload's patterns; `enum_name` is `None` for an unqualified name that
    /// is not `Some`, `None`, `Ok` or `Err` (only in code the checker rejected).
    Variant {
        enum_name: Option<&'a str>,
        name: &'a Ident,
        args: &'a [Pattern],
    },
    /// A malformed pattern (only in code the checker rejected).
    Error,
}

/// A literal: what a measure's default may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Literal<'a> {
    Int(i64),
    Bool(bool),
    Str(&'a str),
}

/// A declaration of a module, as far as the stages after the checker read the syntax of one:
/// the code of functions and constants, what a measure holds, and the names of the types and
/// capabilities whose resolved forms are in [`crate::Declarations`].
#[derive(Clone, Copy, Debug)]
pub enum Declaration<'a> {
    Function(&'a FnDecl),
    Const {
        name: &'a Ident,
        value: &'a Expr,
    },
    /// `measure m(x: T) -> U = default`: `of` is the name of `T` where it is one.
    Measure {
        name: &'a Ident,
        of: Option<&'a str>,
        default: Option<Literal<'a>>,
    },
    Capability {
        name: &'a Ident,
        tools: &'a [ToolDecl],
    },
    Record(&'a Ident),
    Enum(&'a Ident),
    /// Anything else (aliases, linear and opaque types, the entry, releases): read from what
    /// the checker resolved.
    Other,
}

/// The enum a variant written without one (`Some(x)`, `None`, `Ok(x)`, `Err(e)`) belongs to.
fn enum_of_unqualified(variant: &str) -> Option<&'static str> {
    match variant {
        "Some" | "None" => Some("Option"),
        "Ok" | "Err" => Some("Result"),
        _ => None,
    }
}

impl Resolved {
    /// `e`, as what it is.
    pub fn node<'a>(&self, e: &'a Expr) -> Node<'a> {
        match &e.kind {
            ExprKind::Int(i) => Node::Int(*i),
            ExprKind::Float(x) => Node::Float(*x),
            ExprKind::Decimal(d) => Node::Decimal(*d),
            ExprKind::Str(s) => Node::Str(s),
            ExprKind::Bool(b) => Node::Bool(*b),
            ExprKind::Unit => Node::Unit,
            // `None` alone is always the option's variant, whatever else is in scope.
            ExprKind::Name(id) if id.name == "None" => Node::Variant { enum_name: "Option", name: "None", args: &[] },
            ExprKind::Name(id) => Node::Name(id),
            ExprKind::Path { ty, variant } => Node::Variant { enum_name: &ty.name, name: &variant.name, args: &[] },
            ExprKind::Tuple(items) => Node::Tuple(items),
            ExprKind::List(items) => Node::List(items),
            ExprKind::Record { name, fields } => Node::Record { name, fields },
            ExprKind::Field { base, name } => Node::Field { base, name },
            ExprKind::TupleField { base, index, .. } => Node::TupleField { base, index: *index },
            ExprKind::Index { base, index } => Node::Index { base, index },
            ExprKind::Call { callee, args } => self.call(e, callee, args),
            ExprKind::MethodCall { receiver, method, args } => {
                let otherwise = match self.calls.get(e) {
                    Some(Callee::Builtin(b)) => Otherwise::Builtin(*b),
                    Some(Callee::Function) => Otherwise::Function(&method.name),
                    _ => Otherwise::Nothing,
                };
                Node::Method { receiver, method, args, otherwise }
            }
            ExprKind::Unary { op, operand } => Node::Unary { op: *op, operand },
            ExprKind::Binary { op, lhs, rhs } => Node::Binary { op: *op, lhs, rhs },
            ExprKind::If { cond, then, else_ } => Node::If { cond, then, else_: else_.as_deref() },
            ExprKind::Match { scrutinee, arms } => Node::Match { scrutinee, arms },
            ExprKind::For { pat, iter, body } => Node::For { pat, iter, body },
            ExprKind::Block(b) => Node::Block(b),
            ExprKind::Closure { params, body, .. } => Node::Closure { params, body },
            ExprKind::Cast { expr, ty } => Node::Cast { expr, target: self.casts.get(e).cloned(), written: ty },
            ExprKind::Hole { args, .. } => Node::Hole { args },
            ExprKind::ToLabeled(b) => Node::ToLabeled(b),
            ExprKind::Error => Node::Error,
        }
    }

    /// The call `call` of `callee` with `args`: a variant written as a path, a name as the
    /// checker resolved it, or a value.
    fn call<'a>(&self, call: &'a Expr, callee: &'a Expr, args: &'a [Expr]) -> Node<'a> {
        let name = match &callee.kind {
            ExprKind::Path { ty, variant } => return Node::Variant { enum_name: &ty.name, name: &variant.name, args },
            ExprKind::Name(name) => name,
            _ => return Node::Call { callee: Called::Value(callee), args },
        };
        let callee = match self.calls.get(call) {
            Some(Callee::Function) => Called::Function(name),
            Some(Callee::Measure) => Called::Measure(name),
            Some(Callee::Builtin(b)) => Called::Builtin(*b),
            Some(Callee::Constructor) => match enum_of_unqualified(&name.name) {
                Some(enum_name) => return Node::Variant { enum_name, name: &name.name, args },
                None => Called::Value(callee),
            },
            Some(Callee::Value | Callee::Tool) | None => Called::Value(callee),
        };
        Node::Call { callee, args }
    }
}

/// The statements of `block`, in order (its tail, the block's value, is `block.tail`).
pub fn statements(block: &Block) -> impl Iterator<Item = Statement<'_>> {
    block.stmts.iter().map(|s| match s {
        Stmt::Let { pat, value, span, .. } => Statement::Let { pat, value, span: *span },
        Stmt::Expr(e) => Statement::Expr(e),
    })
}

/// `pat`, as what it tests and binds.
pub fn pattern(pat: &Pattern) -> PatternNode<'_> {
    match &pat.kind {
        PatternKind::Wild => PatternNode::Wild,
        PatternKind::Bind(id) => PatternNode::Bind(id),
        PatternKind::Int(i) => PatternNode::Int(*i),
        PatternKind::Str(s) => PatternNode::Str(s),
        PatternKind::Bool(b) => PatternNode::Bool(*b),
        PatternKind::Unit => PatternNode::Unit,
        PatternKind::Tuple(ps) => PatternNode::Tuple(ps),
        PatternKind::Variant { enum_name, name, args } => {
            let enum_name = match enum_name {
                Some(e) => Some(e.name.as_str()),
                None => enum_of_unqualified(&name.name),
            };
            PatternNode::Variant { enum_name, name, args }
        }
        PatternKind::Error => PatternNode::Error,
    }
}

/// `item`, as a declaration.
pub fn declaration(item: &Item) -> Declaration<'_> {
    match &item.kind {
        ItemKind::Fn(f) => Declaration::Function(f),
        ItemKind::Const { name, value, .. } => Declaration::Const { name, value },
        ItemKind::Measure { name, params, default, .. } => {
            let of = params.first().and_then(|p| match &p.ty.kind {
                TypeExprKind::Named { name, .. } => Some(name.name.as_str()),
                _ => None,
            });
            Declaration::Measure { name, of, default: default.as_ref().and_then(literal) }
        }
        ItemKind::Capability { name, tools } => Declaration::Capability { name, tools },
        ItemKind::Record { name, .. } => Declaration::Record(name),
        ItemKind::Enum { name, .. } => Declaration::Enum(name),
        _ => Declaration::Other,
    }
}

/// The value of `e` if it is a literal (a negative integer included).
pub fn literal(e: &Expr) -> Option<Literal<'_>> {
    match &e.kind {
        ExprKind::Int(i) => Some(Literal::Int(*i)),
        ExprKind::Bool(b) => Some(Literal::Bool(*b)),
        ExprKind::Str(s) => Some(Literal::Str(s)),
        ExprKind::Unary { op: UnOp::Neg, operand } => match operand.kind {
            ExprKind::Int(i) => i.checked_neg().map(Literal::Int),
            _ => None,
        },
        _ => None,
    }
}

/// Every name `e` mentions, and whether it holds a hole (whose fill may name anything in
/// scope): a superset of the names a closure of body `e` captures (what it binds itself is
/// counted too, which only captures more).
pub fn mentions(e: &Expr) -> (std::collections::HashSet<String>, bool) {
    fn walk(e: &Expr, names: &mut std::collections::HashSet<String>, hole: &mut bool) {
        match &e.kind {
            ExprKind::Name(id) => {
                names.insert(id.name.clone());
            }
            ExprKind::Hole { .. } => *hole = true,
            _ => {}
        }
        e.for_each_child(&mut |child| walk(child, names, hole));
    }
    let (mut names, mut hole) = (std::collections::HashSet::new(), false);
    walk(e, &mut names, &mut hole);
    (names, hole)
}
