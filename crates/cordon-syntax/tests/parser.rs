//! Lexer and parser tests. Each case is data: source text and the expected tree (in a compact
//! S-expression rendering, see `render`) or the expected diagnostics `(line, code)`.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashSet;
use std::fmt::Write as _;

use cordon_syntax::ast::*;
use cordon_syntax::lexer::{TokenKind, lex};
use cordon_syntax::parser::MAX_DIAGNOSTICS;
use cordon_syntax::{Diagnostic, FileId, MAX_NESTING, Parsed, SourceMap, Span, parse};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

// ---- Rendering ------------------------------------------------------------------------------

fn r_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Decimal(v) => format!("{v}d"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Unit => "()".to_string(),
        ExprKind::Name(n) => n.name.clone(),
        ExprKind::Path { ty, variant } => format!("{}::{}", ty.name, variant.name),
        ExprKind::Tuple(items) => format!("(tuple{})", r_list(items)),
        ExprKind::List(items) => format!("[{}]", r_list(items).trim_start()),
        ExprKind::Record { name, fields } => {
            let fields: String = fields.iter().map(|(f, v)| format!(" {}={}", f.name, r_expr(v))).collect();
            format!("(record {}{fields})", name.name)
        }
        ExprKind::Field { base, name } => format!("(. {} {})", r_expr(base), name.name),
        ExprKind::TupleField { base, index, .. } => format!("(. {} {index})", r_expr(base)),
        ExprKind::Index { base, index } => format!("(index {} {})", r_expr(base), r_expr(index)),
        ExprKind::Call { callee, args } => format!("(call {}{})", r_expr(callee), r_list(args)),
        ExprKind::MethodCall { receiver, method, args } => {
            format!("(method {} {}{})", r_expr(receiver), method.name, r_list(args))
        }
        ExprKind::Unary { op, operand } => {
            let op = match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
            };
            format!("({op} {})", r_expr(operand))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", op.as_str(), r_expr(lhs), r_expr(rhs))
        }
        ExprKind::If { cond, then, else_ } => match else_ {
            Some(e) => format!("(if {} {} {})", r_expr(cond), r_block(then), r_expr(e)),
            None => format!("(if {} {})", r_expr(cond), r_block(then)),
        },
        ExprKind::Match { scrutinee, arms } => {
            let arms: String = arms
                .iter()
                .map(|a| match &a.guard {
                    Some(g) => format!(" ({} if {} => {})", r_pat(&a.pat), r_expr(g), r_expr(&a.body)),
                    None => format!(" ({} => {})", r_pat(&a.pat), r_expr(&a.body)),
                })
                .collect();
            format!("(match {}{arms})", r_expr(scrutinee))
        }
        ExprKind::For { pat, iter, body } => {
            format!("(for {} {} {})", r_pat(pat), r_expr(iter), r_block(body))
        }
        ExprKind::Block(b) => r_block(b),
        ExprKind::Closure { params, ret, body } => {
            let params: Vec<String> = params
                .iter()
                .map(|p| match &p.ty {
                    Some(t) => format!("{}: {}", p.name.name, r_ty(t)),
                    None => p.name.name.clone(),
                })
                .collect();
            let ret = ret.as_ref().map(|t| format!(" -> {}", r_ty(t))).unwrap_or_default();
            format!("(closure |{}|{ret} {})", params.join(", "), r_expr(body))
        }
        ExprKind::Cast { expr, ty } => format!("(as {} {})", r_expr(expr), r_ty(ty)),
        ExprKind::Hole { ty, args } => {
            let ty = ty.as_ref().map(|t| format!("[{}]", r_ty(t))).unwrap_or_default();
            format!("(agent{ty}{})", r_list(args))
        }
        ExprKind::ToLabeled(b) => format!("(to_labeled {})", r_block(b)),
        ExprKind::Error => "ERR".to_string(),
    }
}

fn r_list(items: &[Expr]) -> String {
    items.iter().map(|e| format!(" {}", r_expr(e))).collect()
}

fn r_block(b: &Block) -> String {
    let mut parts: Vec<String> = b.stmts.iter().map(r_stmt).collect();
    if let Some(t) = &b.tail {
        parts.push(r_expr(t));
    }
    format!("{{{}}}", parts.join(" "))
}

fn r_stmt(s: &Stmt) -> String {
    match s {
        Stmt::Let { pat, ty: Some(ty), value, .. } => {
            format!("let {}: {} = {};", r_pat(pat), r_ty(ty), r_expr(value))
        }
        Stmt::Let { pat, ty: None, value, .. } => format!("let {} = {};", r_pat(pat), r_expr(value)),
        Stmt::Expr(e) => format!("{};", r_expr(e)),
    }
}

fn r_ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named { name, args } if args.is_empty() => name.name.clone(),
        TypeExprKind::Named { name, args } => format!("{}[{}]", name.name, r_tys(args)),
        TypeExprKind::Tuple(items) if items.len() == 1 => format!("({},)", r_tys(items)),
        TypeExprKind::Tuple(items) => format!("({})", r_tys(items)),
        TypeExprKind::Fn { params, ret } => format!("fn({}) -> {}", r_tys(params), r_ty(ret)),
        TypeExprKind::Refined { var, base, pred } => {
            format!("{{{}: {} | {}}}", var.name, r_ty(base), r_expr(pred))
        }
        TypeExprKind::Error => "ERR".to_string(),
    }
}

fn r_tys(items: &[TypeExpr]) -> String {
    items.iter().map(r_ty).collect::<Vec<_>>().join(", ")
}

fn r_pat(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Wild => "_".to_string(),
        PatternKind::Bind(n) => n.name.clone(),
        PatternKind::Int(v) => v.to_string(),
        PatternKind::Str(s) => format!("{s:?}"),
        PatternKind::Bool(b) => b.to_string(),
        PatternKind::Unit => "()".to_string(),
        PatternKind::Tuple(items) => format!("({})", r_pats(items)),
        PatternKind::Variant { enum_name, name, args } => {
            let prefix = enum_name.as_ref().map(|e| format!("{}::", e.name)).unwrap_or_default();
            if args.is_empty() {
                format!("{prefix}{}", name.name)
            } else {
                format!("{prefix}{}({})", name.name, r_pats(args))
            }
        }
        PatternKind::Error => "ERR".to_string(),
    }
}

fn r_pats(items: &[Pattern]) -> String {
    items.iter().map(r_pat).collect::<Vec<_>>().join(", ")
}

fn r_params(params: &[Param]) -> String {
    let params: Vec<String> = params.iter().map(|p| format!("{}: {}", p.name.name, r_ty(&p.ty))).collect();
    params.join(", ")
}

fn r_fields(fields: &[Field]) -> String {
    let fields: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.name.name, r_ty(&f.ty))).collect();
    format!("{{{}}}", fields.join(", "))
}

fn r_item(item: &Item) -> String {
    match &item.kind {
        ItemKind::TypeAlias { name, ty } => format!("type {} = {}", name.name, r_ty(ty)),
        ItemKind::Record { name, fields, opaque } => {
            let opaque = if *opaque { "opaque " } else { "" };
            format!("{opaque}type {} = {}", name.name, r_fields(fields))
        }
        ItemKind::Enum { name, variants } => {
            let variants: Vec<String> = variants
                .iter()
                .map(|v| {
                    if v.payload.is_empty() {
                        v.name.name.clone()
                    } else {
                        format!("{}({})", v.name.name, r_tys(&v.payload))
                    }
                })
                .collect();
            format!("enum {} {{{}}}", name.name, variants.join(", "))
        }
        ItemKind::Linear { name } => format!("linear type {}", name.name),
        ItemKind::Opaque { name, params } if params.is_empty() => format!("opaque type {}", name.name),
        ItemKind::Opaque { name, params } => {
            let params: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            format!("opaque type {}[{}]", name.name, params.join(", "))
        }
        ItemKind::Measure { name, params, ret, default } => {
            let default = default.as_ref().map(|d| format!(" = {}", r_expr(d))).unwrap_or_default();
            format!("measure {}({}) -> {}{default}", name.name, r_params(params), r_ty(ret))
        }
        ItemKind::Release { group, to, annotations, .. } => {
            format!("release {group:?} to {} ({} annotations)", r_expr(to), annotations.len())
        }
        ItemKind::Capability { name, tools } => {
            let mut out = format!("capability {} {{", name.name);
            for tool in tools {
                let ret = tool.ret.as_ref().map(|t| format!(" -> {}", r_ty(t))).unwrap_or_default();
                write!(out, " tool {}({}){ret}", tool.name.name, r_params(&tool.params)).unwrap();
                for a in &tool.annotations {
                    let args: Vec<String> = a
                        .args
                        .iter()
                        .map(|arg| match &arg.key {
                            Some(k) => format!("{} = {}", k.name, r_expr(&arg.value)),
                            None => r_expr(&arg.value),
                        })
                        .collect();
                    write!(out, " @{}({})", a.name.name, args.join(", ")).unwrap();
                }
                out.push(';');
            }
            out.push_str(" }");
            out
        }
        ItemKind::Fn(f) => {
            let ret = f.ret.as_ref().map(|t| format!(" -> {}", r_ty(t))).unwrap_or_default();
            format!("fn {}({}){ret} {}", f.name.name, r_params(&f.params), r_block(&f.body))
        }
        ItemKind::Const { name, ty, value } => {
            format!("const {}: {} = {}", name.name, r_ty(ty), r_expr(value))
        }
        ItemKind::Entry { params, ret } => format!("entry({}) -> {}", r_params(params), r_ty(ret)),
    }
}

/// Items, then statements, then `=> tail`, one per line.
fn r_module(m: &Module) -> String {
    let mut lines: Vec<String> = m.items.iter().map(r_item).collect();
    lines.extend(m.body.stmts.iter().map(r_stmt));
    if let Some(t) = &m.body.tail {
        lines.push(format!("=> {}", r_expr(t)));
    }
    lines.join("\n")
}

// ---- Invariants -----------------------------------------------------------------------------

/// Checks what must hold of every parse, good or bad: distinct expression ids, spans inside
/// their parents and the text, `Error` nodes only with diagnostics, at most 50 diagnostics.
struct Invariants {
    text: String,
    len: u32,
    ids: HashSet<u32>,
    max_id: Option<u32>,
    errors: usize,
}

impl Invariants {
    fn check(text: &str, parsed: &Parsed) {
        let len = text.len() as u32;
        let mut inv =
            Invariants { text: text.chars().take(200).collect(), len, ids: HashSet::new(), max_id: None, errors: 0 };
        let m = &parsed.module;
        let whole = Span::new(FileId(0), 0, len);
        assert_eq!(m.body.span, whole);
        for item in &m.items {
            inv.item(item, whole);
        }
        inv.block(&m.body, whole);
        if inv.errors > 0 {
            assert!(!parsed.diagnostics.is_empty(), "error nodes without diagnostics in {text:?}");
        }
        assert!(parsed.diagnostics.len() <= MAX_DIAGNOSTICS);
        for d in &parsed.diagnostics {
            for l in &d.labels {
                assert!(l.span.start <= l.span.end && l.span.end <= len, "label span {:?}", l.span);
            }
        }
        // Ids are distinct and numbered from 0 (gaps only where recovery dropped a subtree).
        if let Some(max) = inv.max_id {
            assert!(inv.ids.contains(&0) || inv.errors > 0 || !parsed.diagnostics.is_empty());
            if parsed.diagnostics.is_empty() {
                assert_eq!(inv.ids.len() as u32, max + 1, "ids not dense in {text:?}");
            }
        }
    }

    fn span(&self, span: Span, parent: Span, what: &str) {
        assert!(
            span.start <= span.end && span.end <= self.len,
            "{what} span {span:?} out of the text ({}) in {:?}",
            self.len,
            self.text
        );
        assert!(
            parent.start <= span.start && span.end <= parent.end,
            "{what} span {span:?} outside its parent {parent:?} in {:?}",
            self.text
        );
    }

    fn item(&mut self, item: &Item, parent: Span) {
        self.span(item.span, parent, "item");
        let s = item.span;
        match &item.kind {
            ItemKind::TypeAlias { ty, .. } => self.ty(ty, s),
            ItemKind::Record { fields, .. } => fields.iter().for_each(|f| self.ty(&f.ty, s)),
            ItemKind::Enum { variants, .. } => {
                for v in variants {
                    self.span(v.span, s, "variant");
                    v.payload.iter().for_each(|t| self.ty(t, v.span));
                }
            }
            ItemKind::Linear { .. } | ItemKind::Opaque { .. } => {}
            ItemKind::Measure { params, ret, default, .. } => {
                params.iter().for_each(|p| self.ty(&p.ty, s));
                self.ty(ret, s);
                if let Some(d) = default {
                    self.expr(d, s);
                }
            }
            ItemKind::Entry { params, ret } => {
                params.iter().for_each(|p| self.ty(&p.ty, s));
                self.ty(ret, s);
            }
            ItemKind::Release { to, .. } => self.expr(to, s),
            ItemKind::Capability { tools, .. } => {
                for tool in tools {
                    self.span(tool.span, s, "tool");
                    tool.params.iter().for_each(|p| self.ty(&p.ty, tool.span));
                    if let Some(r) = &tool.ret {
                        self.ty(r, tool.span);
                    }
                    for a in &tool.annotations {
                        self.span(a.span, tool.span, "annotation");
                        a.args.iter().for_each(|arg| self.expr(&arg.value, a.span));
                    }
                }
            }
            ItemKind::Fn(f) => {
                f.params.iter().for_each(|p| self.ty(&p.ty, s));
                if let Some(r) = &f.ret {
                    self.ty(r, s);
                }
                self.block(&f.body, s);
            }
            ItemKind::Const { ty, value, .. } => {
                self.ty(ty, s);
                self.expr(value, s);
            }
        }
    }

    fn block(&mut self, b: &Block, parent: Span) {
        self.span(b.span, parent, "block");
        for s in &b.stmts {
            match s {
                Stmt::Let { pat, ty, value, span } => {
                    self.span(*span, b.span, "let");
                    self.pat(pat, *span);
                    if let Some(t) = ty {
                        self.ty(t, *span);
                    }
                    self.expr(value, *span);
                }
                Stmt::Expr(e) => self.expr(e, b.span),
            }
        }
        if let Some(t) = &b.tail {
            self.expr(t, b.span);
        }
    }

    fn expr(&mut self, e: &Expr, parent: Span) {
        self.span(e.span, parent, "expr");
        assert!(self.ids.insert(e.id.0), "duplicate id {:?}", e.id);
        self.max_id = Some(self.max_id.map_or(e.id.0, |m| m.max(e.id.0)));
        let s = e.span;
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Decimal(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Unit
            | ExprKind::Name(_)
            | ExprKind::Path { .. } => {}
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| self.expr(i, s));
            }
            ExprKind::Record { fields, .. } => fields.iter().for_each(|(_, v)| self.expr(v, s)),
            ExprKind::Field { base, .. } => self.expr(base, s),
            ExprKind::TupleField { base, index_span, .. } => {
                self.expr(base, s);
                self.span(*index_span, s, "tuple index");
            }
            ExprKind::Index { base, index } => {
                self.expr(base, s);
                self.expr(index, s);
            }
            ExprKind::Call { callee, args } => {
                self.expr(callee, s);
                args.iter().for_each(|a| self.expr(a, s));
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                self.expr(receiver, s);
                args.iter().for_each(|a| self.expr(a, s));
            }
            ExprKind::Unary { operand, .. } => self.expr(operand, s),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, s);
                self.expr(rhs, s);
            }
            ExprKind::If { cond, then, else_ } => {
                self.expr(cond, s);
                self.block(then, s);
                if let Some(e) = else_ {
                    self.expr(e, s);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee, s);
                for a in arms {
                    self.span(a.span, s, "arm");
                    self.pat(&a.pat, a.span);
                    if let Some(g) = &a.guard {
                        self.expr(g, a.span);
                    }
                    self.expr(&a.body, a.span);
                }
            }
            ExprKind::For { pat, iter, body } => {
                self.pat(pat, s);
                self.expr(iter, s);
                self.block(body, s);
            }
            ExprKind::Block(b) | ExprKind::ToLabeled(b) => self.block(b, s),
            ExprKind::Closure { params, ret, body } => {
                params.iter().filter_map(|p| p.ty.as_ref()).for_each(|t| self.ty(t, s));
                if let Some(r) = ret {
                    self.ty(r, s);
                }
                self.expr(body, s);
            }
            ExprKind::Cast { expr, ty } => {
                self.expr(expr, s);
                self.ty(ty, s);
            }
            ExprKind::Hole { ty, args } => {
                if let Some(t) = ty {
                    self.ty(t, s);
                }
                args.iter().for_each(|a| self.expr(a, s));
            }
            ExprKind::Error => self.errors += 1,
        }
    }

    fn ty(&mut self, t: &TypeExpr, parent: Span) {
        self.span(t.span, parent, "type");
        match &t.kind {
            TypeExprKind::Named { args, .. } => args.iter().for_each(|a| self.ty(a, t.span)),
            TypeExprKind::Tuple(items) => items.iter().for_each(|a| self.ty(a, t.span)),
            TypeExprKind::Fn { params, ret } => {
                params.iter().for_each(|a| self.ty(a, t.span));
                self.ty(ret, t.span);
            }
            TypeExprKind::Refined { base, pred, .. } => {
                self.ty(base, t.span);
                self.expr(pred, t.span);
            }
            TypeExprKind::Error => self.errors += 1,
        }
    }

    fn pat(&mut self, p: &Pattern, parent: Span) {
        self.span(p.span, parent, "pattern");
        match &p.kind {
            PatternKind::Tuple(items) | PatternKind::Variant { args: items, .. } => {
                items.iter().for_each(|i| self.pat(i, p.span));
            }
            PatternKind::Error => self.errors += 1,
            _ => {}
        }
    }
}

// ---- Helpers --------------------------------------------------------------------------------

fn parse_checked(src: &str) -> Parsed {
    let parsed = parse(FileId(0), src);
    Invariants::check(src, &parsed);
    parsed
}

fn show_diagnostics(src: &str, diagnostics: &[Diagnostic]) -> String {
    let mut map = SourceMap::new();
    let file = map.add("test.cord", src);
    let mut out = String::new();
    for d in diagnostics {
        let (line, col) = map.file(file).line_col(d.span().start);
        writeln!(out, "{line}:{col} {}: {}", d.code.as_str(), d.message).unwrap();
    }
    out
}

fn parse_ok(src: &str) -> Module {
    let parsed = parse_checked(src);
    assert!(
        parsed.diagnostics.is_empty(),
        "unexpected diagnostics for {src:?}:\n{}",
        show_diagnostics(src, &parsed.diagnostics)
    );
    parsed.module
}

/// Parses without errors and renders as `r_module` does.
fn check(src: &str, expected: &str) {
    let module = parse_ok(src);
    assert_eq!(r_module(&module), expected.trim(), "for {src:?}");
}

/// `src` is one expression (the file's result).
fn check_expr(src: &str, expected: &str) {
    let module = parse_ok(src);
    assert!(module.items.is_empty() && module.body.stmts.is_empty(), "not one expression: {src:?}");
    let tail = module.body.tail.unwrap_or_else(|| panic!("no tail for {src:?}"));
    assert_eq!(r_expr(&tail), expected, "for {src:?}");
}

/// `let x: T = 0;`, rendering `T`.
fn check_type(src: &str, expected: &str) {
    let module = parse_ok(&format!("let x: {src} = 0;"));
    let Some(Stmt::Let { ty: Some(ty), .. }) = module.body.stmts.first() else { panic!("no type in {src:?}") };
    assert_eq!(r_ty(ty), expected, "for {src:?}");
}

/// `let P = 0;`, rendering `P`.
fn check_pattern(src: &str, expected: &str) {
    let module = parse_ok(&format!("let {src} = 0;"));
    let Some(Stmt::Let { pat, .. }) = module.body.stmts.first() else { panic!("no let") };
    assert_eq!(r_pat(pat), expected, "for {src:?}");
}

/// The diagnostics, as `(line, code)`.
fn check_err(src: &str, expected: &[(u32, &str)]) {
    let parsed = parse_checked(src);
    let mut map = SourceMap::new();
    let file = map.add("test.cord", src);
    let got: Vec<(u32, &str)> =
        parsed.diagnostics.iter().map(|d| (map.file(file).line_col(d.span().start).0, d.code.as_str())).collect();
    assert_eq!(got, expected, "for {src:?}:\n{}", show_diagnostics(src, &parsed.diagnostics));
}

/// The only diagnostic's message and help.
fn check_message(src: &str, message: &str, help: Option<&str>) {
    let parsed = parse_checked(src);
    let [d] = parsed.diagnostics.as_slice() else {
        panic!("expected one diagnostic for {src:?}:\n{}", show_diagnostics(src, &parsed.diagnostics))
    };
    assert_eq!(d.message, message, "for {src:?}");
    assert_eq!(d.help.as_deref(), help, "for {src:?}");
    assert!(d.labels.first().is_some_and(|l| l.primary && !l.message.is_empty()), "{d:?}");
}

/// Parses and renders whatever came out, with the diagnostics' lines.
fn check_recovery(src: &str, expected_tree: &str, expected_lines: &[u32]) {
    let parsed = parse_checked(src);
    let mut map = SourceMap::new();
    let file = map.add("test.cord", src);
    let lines: Vec<u32> = parsed.diagnostics.iter().map(|d| map.file(file).line_col(d.span().start).0).collect();
    assert_eq!(lines, expected_lines, "for {src:?}:\n{}", show_diagnostics(src, &parsed.diagnostics));
    assert_eq!(r_module(&parsed.module), expected_tree.trim(), "for {src:?}");
}

fn kinds(src: &str) -> Vec<TokenKind> {
    let lexed = lex(FileId(0), src);
    lexed.tokens.into_iter().map(|t| t.kind).collect()
}

// ---- Lexer ----------------------------------------------------------------------------------

#[test]
fn lexes_punctuation_longest_first() {
    use TokenKind::*;
    assert_eq!(
        kinds("( ) [ ] { } , ; : :: . -> => | || & && ! != = == < <= > >= + - * / % @ _"),
        vec![
            LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Semi, Colon, ColonColon, Dot, Arrow, FatArrow,
            Pipe, PipePipe, Amp, AmpAmp, Bang, BangEq, Eq, EqEq, Lt, Le, Gt, Ge, Plus, Minus, Star, Slash, Percent, At,
            Underscore, Eof
        ]
    );
    assert_eq!(kinds("a->b"), vec![Ident, Arrow, Ident, Eof]);
    assert_eq!(kinds("x<=-1"), vec![Ident, Le, Minus, Int(1), Eof]);
}

#[test]
fn lexes_keywords_and_names() {
    use TokenKind::*;
    let src = "let fn if else match for in type enum linear opaque measure capability tool const \
               entry true false as agent";
    assert_eq!(
        kinds(src),
        vec![
            Let, Fn, If, Else, Match, For, In, Type, Enum, Linear, Opaque, Measure, Capability, Tool, Const, Entry,
            True, False, As, Agent, Eof
        ]
    );
    assert_eq!(
        kinds("return while mut null _x x_1 __ Lets"),
        vec![Ident; 8].into_iter().chain([Eof]).collect::<Vec<_>>()
    );
}

#[test]
fn lexes_numbers() {
    use TokenKind::*;
    assert_eq!(kinds("0 42 9223372036854775807"), vec![Int(0), Int(42), Int(i64::MAX), Eof]);
    assert_eq!(kinds("1.5 2.0e3 1e-2 3E+1"), vec![Float(1.5), Float(2000.0), Float(0.01), Float(30.0), Eof]);
    // A dot needs a digit after it to make a float: `1.max(2)`, `t.0.1`.
    assert_eq!(kinds("1.x"), vec![Int(1), Dot, Ident, Eof]);
    assert_eq!(kinds("t.0.1"), vec![Ident, Dot, Float(0.1), Eof]);
    assert_eq!(kinds("2e"), vec![Int(2), Ident, Eof]);
}

#[test]
fn lexes_strings_with_escapes() {
    use TokenKind::*;
    assert_eq!(
        kinds(r#""a\n\t\r\"\\\0b" "\u{1F600}" "é""#),
        vec![Str("a\n\t\r\"\\\0b".into()), Str("😀".into()), Str("é".into()), Eof]
    );
    assert_eq!(kinds("\"two\nlines\""), vec![Str("two\nlines".into()), Eof]);
}

#[test]
fn lexes_comments() {
    use TokenKind::*;
    assert_eq!(kinds("a // b\nc /* d /* nested */ e */ f //// ruler"), vec![Ident, Ident, Ident, Eof]);
    let lexed = lex(FileId(0), "/// one\n///two\n//// ruler\n// plain\ntype");
    assert_eq!(lexed.docs, vec![(0, "one\ntwo".to_string())]);
}

#[test]
fn lexer_errors() {
    check_err("let x = 99999999999999999999;", &[(1, "syntax-error")]);
    check_message(
        "let x = 99999999999999999999;",
        "integer literal too large",
        Some("integers are 64-bit: at most 9223372036854775807"),
    );
    check_message("let s = \"abc", "unterminated string literal", Some("close it with `\"`"));
    check_message(
        r#"let s = "a\qb";"#,
        r"unknown escape `\q` in string",
        Some(r#"the escapes are \n \t \r \" \\ \0 and \u{1F600}"#),
    );
    for bad in [r#""\u{110000}""#, r#""\u{}""#, r#""\u{1234567}""#, r#""\u12""#, r#""\u{12""#] {
        check_message(
            &format!("let s = {bad};"),
            "invalid unicode escape",
            Some(r"write `\u{` then one to six hex digits of a code point, then `}`"),
        );
    }
    check_message("/* open", "unterminated block comment", Some("close it with `*/`"));
    let decimal_help = Some("a `Decimal` has at most 28 digits after the point and 28 in all, without an exponent");
    check_message(
        "let x = 0.00000000000000000000000000001d;",
        "decimal literal too large or too precise",
        decimal_help,
    );
    check_message("let x = 79228162514264337593543950336d;", "decimal literal too large or too precise", decimal_help);
    check_message(&format!("let x = {}d;", "9".repeat(5000)), "decimal literal too large or too precise", decimal_help);
    // `1e3d` is a float and a name: no exponent in a decimal.
    check_err("let x = 1e3d;", &[(1, "syntax-error")]);
    check_err("let x = 12.5dd;", &[(1, "syntax-error")]);
    check_message("let x = 1 # 2;", "unknown character `#`", Some("comments start with `//`"));
    check_message("let c = 'a';", "unknown character `'`", Some("strings are written in double quotes: \"a\""));
    check_message("let x = é;", "unknown character `é`", None);
    check_message("let x\u{a0}= 1;", "unknown character `\\u{a0}`", None);
    // A byte order mark at the start is not an error.
    check("\u{FEFF}let x = 1;", "let x = 1;");
}

// ---- Expressions ----------------------------------------------------------------------------

#[test]
fn literals_and_names() {
    check_expr("42", "42");
    check_expr("1.5", "1.5");
    // A `d` right after the digits makes an exact decimal; its places are kept.
    check_expr("12.50d", "12.50d");
    check_expr("100d", "100d");
    check_expr("-0.5d", "(neg 0.5d)");
    check_expr("x.max(1.5d)", "(method x max 1.5d)");
    check_expr("d(1)", "(call d 1)");
    check_expr("\"hi\"", "\"hi\"");
    check_expr("true", "true");
    check_expr("false", "false");
    check_expr("()", "()");
    check_expr("x", "x");
    check_expr("None", "None");
    check_expr("Priority::Low", "Priority::Low");
}

#[test]
fn precedence_and_associativity() {
    check_expr("1 + 2 * 3", "(+ 1 (* 2 3))");
    check_expr("1 * 2 + 3", "(+ (* 1 2) 3)");
    check_expr("a - b - c", "(- (- a b) c)");
    check_expr("a / b % c", "(% (/ a b) c)");
    check_expr("a || b && c", "(|| a (&& b c))");
    check_expr("a && b || c && d", "(|| (&& a b) (&& c d))");
    check_expr("a == b && c < d", "(&& (== a b) (< c d))");
    check_expr("a + 1 >= b * 2", "(>= (+ a 1) (* b 2))");
    check_expr("a != b", "(!= a b)");
    check_expr("a <= b", "(<= a b)");
    check_expr("a > b", "(> a b)");
    check_expr("(a + b) * c", "(* (+ a b) c)");
}

#[test]
fn unary_and_casts() {
    check_expr("-x", "(neg x)");
    check_expr("!a && b", "(&& (not a) b)");
    check_expr("- -x", "(neg (neg x))");
    check_expr("-3", "(neg 3)");
    check_expr("-x.abs()", "(neg (method x abs))");
    check_expr("x as Float", "(as x Float)");
    check_expr("-x as Float", "(as (neg x) Float)");
    check_expr("a * b as Float", "(* a (as b Float))");
    check_expr("a as Float * b", "(* (as a Float) b)");
    check_expr("n as Int < LIMIT", "(< (as n Int) LIMIT)");
    check_expr("x as Float as Int", "(as (as x Float) Int)");
}

#[test]
fn postfix() {
    check_expr("r.name", "(. r name)");
    check_expr("p.0", "(. p 0)");
    check_expr("p.0.1", "(. (. p 0) 1)");
    check_expr("p.0.1.2", "(. (. (. p 0) 1) 2)");
    check_expr("p.1.name", "(. (. p 1) name)");
    check_expr("xs.len()", "(method xs len)");
    check_expr("gh.read_file(s, r, \"a\")", "(method gh read_file s r \"a\")");
    check_expr("xs[0]", "(index xs 0)");
    check_expr("xs[i + 1][j]", "(index (index xs (+ i 1)) j)");
    check_expr("f(1, 2)", "(call f 1 2)");
    check_expr("f()", "(call f)");
    check_expr("f(a,)", "(call f a)");
    check_expr("f(a)(b)", "(call (call f a) b)");
    check_expr("Shape::Rect(2, 3)", "(call Shape::Rect 2 3)");
    check_expr("Some(1).unwrap_or(0)", "(method (call Some 1) unwrap_or 0)");
    check_expr("xs.map(|n| n + 1).len()", "(method (method xs map (closure |n| (+ n 1))) len)");
}

#[test]
fn tuple_field_spans() {
    let module = parse_ok("p.0.12");
    let tail = module.body.tail.unwrap();
    let ExprKind::TupleField { base, index: 12, index_span } = &tail.kind else { panic!() };
    assert_eq!((index_span.start, index_span.end), (4, 6));
    assert_eq!((tail.span.start, tail.span.end), (0, 6));
    let ExprKind::TupleField { index: 0, index_span, .. } = &base.kind else { panic!() };
    assert_eq!((index_span.start, index_span.end), (2, 3));
    assert_eq!((base.span.start, base.span.end), (0, 3));
}

#[test]
fn parens_tuples_lists() {
    check_expr("(1)", "1");
    check_expr("((x))", "x");
    check_expr("(1, \"x\")", "(tuple 1 \"x\")");
    check_expr("(a,)", "(tuple a)");
    check_expr("(a, b,)", "(tuple a b)");
    check_expr("[1, 2, 3]", "[1 2 3]");
    check_expr("[]", "[]");
    check_expr("[a,]", "[a]");
    check_expr("[[1], []]", "[[1] []]");
    // The span of `(e)` covers the parentheses.
    let tail = parse_ok("( x + 1 )").body.tail.unwrap();
    assert_eq!((tail.span.start, tail.span.end), (0, 9));
}

#[test]
fn records() {
    check_expr("Repo { name: \"x\", private: false }", "(record Repo name=\"x\" private=false)");
    check_expr("Repo { name, private: p, }", "(record Repo name=name private=p)");
    check_expr("Empty {}", "(record Empty)");
    check_expr("r.owner == Repo { name }.name", "(== (. r owner) (. (record Repo name=name) name))");
    check_expr("f(P { x: 1 })", "(call f (record P x=1))");
}

#[test]
fn records_not_allowed_where_a_block_starts() {
    // In a condition, scrutinee or iterator, `Name {` starts the block.
    check_expr("if x == A { 1 } else { 2 }", "(if (== x A) {1} {2})");
    check_expr("match a { _ => 0 }", "(match a (_ => 0))");
    check_expr("for x in XS { f(x); }", "(for x XS {(call f x);})");
    // Parenthesised, or inside brackets, they are fine.
    check_expr("if x == (A { v: 1 }) { 1 }", "(if (== x (record A v=1)) {1})");
    check_expr("if f(A { v: 1 }) { 1 }", "(if (call f (record A v=1)) {1})");
    check_expr("for x in [A { v: 1 }] { x }", "(for x [(record A v=1)] {x})");
    check_expr("match (A { v: 1 }) { _ => 0 }", "(match (record A v=1) (_ => 0))");
    // A lowercase name followed by a block is a name, then a block.
    check_expr("{ let b = x; if b { 1 } else { 2 } }", "{let b = x; (if b {1} {2})}");
    check_message(
        "if x == A { v: 1 } { 2 }",
        "a record literal is not allowed here",
        Some("put the record in parentheses: `(Name { .. })`"),
    );
    check_message(
        "let r = repo { name: 1 };",
        "a record literal's name starts with an uppercase letter",
        Some("records are named by their type, such as `Repo { name: .. }`"),
    );
}

#[test]
fn if_else_chains() {
    check_expr("if c { 1 }", "(if c {1})");
    check_expr("if c { 1 } else { 2 }", "(if c {1} {2})");
    check_expr(
        "if x > 0 { \"pos\" } else if x == 0 { \"zero\" } else { \"neg\" }",
        "(if (> x 0) {\"pos\"} (if (== x 0) {\"zero\"} {\"neg\"}))",
    );
    check_expr("if a { } else { }", "(if a {} {})");
    check_expr("(if a { 1 } else { 2 }) + 1", "(+ (if a {1} {2}) 1)");
}

#[test]
fn match_arms() {
    check_expr("match opt { Some(v) => v, None => 0 }", "(match opt (Some(v) => v) (None => 0))");
    check_expr("match x { 1 => a, _ => b, }", "(match x (1 => a) (_ => b))");
    check_expr(
        "match s { Shape::Dot => { 0 } Shape::Rect(w, h) => { w * h } }",
        "(match s (Shape::Dot => {0}) (Shape::Rect(w, h) => {(* w h)}))",
    );
    check_expr("match n { x if x > 0 => 1, _ => 0 }", "(match n (x if (> x 0) => 1) (_ => 0))");
    // A block body ends the arm, so what follows is the next arm.
    check_expr("match p { A => { 1 } (x, y) => 2 }", "(match p (A => {1}) ((x, y) => 2))");
    check_expr("match p { A => if c { 1 } else { 2 } B => 3 }", "(match p (A => (if c {1} {2})) (B => 3))");
    check_expr("match x {}", "(match x)");
    check_expr("match r { Ok(v) => v, Err(e) => e.len() }", "(match r (Ok(v) => v) (Err(e) => (method e len)))");
}

#[test]
fn for_loops_and_blocks() {
    check_expr("for item in items { total(item); }", "(for item items {(call total item);})");
    check_expr("for (k, v) in pairs { }", "(for (k, v) pairs {})");
    check_expr("for i in range(0, n) { f(i) }", "(for i (call range 0 n) {(call f i)})");
    check_expr("{ let a = 1; a + 1 }", "{let a = 1; (+ a 1)}");
    check_expr("{ f(); }", "{(call f);}");
    check_expr("{}", "{}");
    check_expr("{ { 1 } }", "{{1}}");
}

#[test]
fn closures() {
    check_expr("|x| x + 1", "(closure |x| (+ x 1))");
    check_expr("|n: Int| n * 2", "(closure |n: Int| (* n 2))");
    check_expr("|a, b: Int| a + b", "(closure |a, b: Int| (+ a b))");
    check_expr("|| 1", "(closure || 1)");
    check_expr("|_| 0", "(closure |_| 0)");
    check_expr("|x| -> Int { x }", "(closure |x| -> Int {x})");
    check_expr("|x,| x", "(closure |x| x)");
    check_expr("|x: {v: Int | v > 0}| x", "(closure |x: {v: Int | (> v 0)}| x)");
    // The body extends as far as possible.
    check_expr("|x| x || y", "(closure |x| (|| x y))");
    check_expr("|x| |y| x + y", "(closure |x| (closure |y| (+ x y)))");
    check_expr("fold(xs, 0, |acc, x| acc + x)", "(call fold xs 0 (closure |acc, x| (+ acc x)))");
    check_expr("a || |x| x", "(|| a (closure |x| x))");
}

#[test]
fn holes() {
    check_expr(
        "agent[{n: Int | n >= 0}](\"count open issues\", repo)",
        "(agent[{n: Int | (>= n 0)}] \"count open issues\" repo)",
    );
    check_expr("agent(\"summarise\", text)", "(agent \"summarise\" text)");
    check_expr("agent[List[String]](\"t\")", "(agent[List[String]] \"t\")");
    check_expr("agent(\"t\").len()", "(method (agent \"t\") len)");
}

#[test]
fn to_labeled_blocks() {
    check_expr("to_labeled { f(x) }", "(to_labeled {(call f x)})");
    check_expr("to_labeled { let y = 1; y }.unlabel()", "(method (to_labeled {let y = 1; y}) unlabel)");
    check("let v = to_labeled { 1 };\nv", "let v = (to_labeled {1});\n=> v");
    // Not followed by a block, or in a condition (where `{` starts the body): a name.
    check_expr("to_labeled", "to_labeled");
    check_expr("to_labeled(x)", "(call to_labeled x)");
    check_expr("if to_labeled { 1 } else { 2 }", "(if to_labeled {1} {2})");
}

#[test]
fn chained_comparison_is_an_error() {
    check_message(
        "a < b < c",
        "comparison operators cannot be chained",
        Some("join two comparisons with `&&`: `a < b && b < c`"),
    );
    check_err("a == b != c", &[(1, "syntax-error")]);
    check_err("let x = a < b\n  == c;", &[(2, "syntax-error")]);
    // Parenthesised, or joined by a lower operator, they are fine.
    check_expr("(a < b) == c", "(== (< a b) c)");
    check_expr("a < b && b < c", "(&& (< a b) (< b c))");
}

// ---- Types and patterns ---------------------------------------------------------------------

#[test]
fn types() {
    check_type("Int", "Int");
    check_type("List[T]", "List[T]");
    check_type("Result[T, E]", "Result[T, E]");
    check_type("Trusted[Bib]", "Trusted[Bib]");
    check_type("List[List[Int]]", "List[List[Int]]");
    check_type("(A, B)", "(A, B)");
    check_type("(A,)", "(A,)");
    check_type("()", "()");
    check_type("(A)", "A");
    check_type("fn(A, B) -> C", "fn(A, B) -> C");
    check_type("fn() -> ()", "fn() -> ()");
    check_type("fn(Int)", "fn(Int) -> ()");
    check_type("fn(fn(Int) -> Int) -> fn(Int) -> Int", "fn(fn(Int) -> Int) -> fn(Int) -> Int");
    check_type("{v: Int | v > 0}", "{v: Int | (> v 0)}");
    check_type("{s: String | s != \"\"}", "{s: String | (!= s \"\")}");
    check_type(
        "{s2: Session | tainted(s2) == (r.private || tainted(s))}",
        "{s2: Session | (== (call tainted s2) (|| (. r private) (call tainted s)))}",
    );
    check_type("(String, {s: Session | !tainted(s)})", "(String, {s: Session | (not (call tainted s))})");
    check_type("{v: {w: Int | w > 0} | v < 10}", "{v: {w: Int | (> w 0)} | (< v 10)}");
}

#[test]
fn type_errors_with_help() {
    check_message(
        "let x: List<Int> = [];",
        "type arguments are written in square brackets",
        Some("write `List[Int]`, `Result[T, E]`"),
    );
    check_message("let x: [Int] = [];", "expected a type, found `[`", Some("a list type is written `List[T]`"));
    check_message("let x: &Int = 1;", "there are no reference types", Some("use the type itself"));
    check_message(
        "let x: {v: Int v > 0} = 1;",
        "expected `|`, found `v`",
        Some("a refinement is written `{v: Int | v > 0}`"),
    );
    check_err("let x: = 1;", &[(1, "syntax-error")]);
}

#[test]
fn patterns() {
    check_pattern("_", "_");
    check_pattern("x", "x");
    check_pattern("42", "42");
    check_pattern("-1", "-1");
    check_pattern("\"s\"", "\"s\"");
    check_pattern("true", "true");
    check_pattern("()", "()");
    check_pattern("(a, b)", "(a, b)");
    check_pattern("(a,)", "(a)");
    check_pattern("(a)", "a");
    check_pattern("(data, (s, _))", "(data, (s, _))");
    check_pattern("Some(p)", "Some(p)");
    check_pattern("None", "None");
    check_pattern("Ok((a, b))", "Ok((a, b))");
    check_pattern("Err(e)", "Err(e)");
    check_pattern("E::V", "E::V");
    check_pattern("E::V(p, q)", "E::V(p, q)");
    check_pattern("Shape::Rect(w, 0)", "Shape::Rect(w, 0)");
}

#[test]
fn none_is_a_variant_other_bare_names_bind() {
    let module = parse_ok("let None = x; let Dot = y;");
    let [Stmt::Let { pat: none, .. }, Stmt::Let { pat: dot, .. }] = module.body.stmts.as_slice() else { panic!() };
    assert!(
        matches!(&none.kind, PatternKind::Variant { enum_name: None, name, args } if name.name == "None" && args.is_empty())
    );
    assert!(matches!(&dot.kind, PatternKind::Bind(n) if n.name == "Dot"));
    // In expressions `None` and `Some` are plain names.
    check_expr("Some(None)", "(call Some None)");
}

#[test]
fn pattern_errors_with_help() {
    check_message("match x { A | B => 1 }", "there are no or-patterns", Some("write one arm per pattern"));
    check_message(
        "match xs { [a, b] => 1, _ => 0 }",
        "there are no list patterns",
        Some("match on `xs.len()`, or use `first`, `last` or `get`"),
    );
    check_message(
        "match r { Repo { name } => name, }",
        "there are no record patterns",
        Some("bind the whole record and read its fields: `r => r.name`"),
    );
    check_message(
        "let mut x = 1;",
        "expected a pattern, found `mut`",
        Some("there is no mutation; bind a new name with `let`"),
    );
    check_err("let 1.5 = x;", &[(1, "syntax-error")]);
    check_err("match x { -y => 1 }", &[(1, "syntax-error")]);
}

// ---- Statements -----------------------------------------------------------------------------

#[test]
fn statements_and_tails() {
    check("let x = 1;\nx + 1", "let x = 1;\n=> (+ x 1)");
    check("let y: {v: Int | v >= 0} = x;", "let y: {v: Int | (>= v 0)} = x;");
    check(
        "let (data, s) = gh.read_file(s, repo, \"README.md\");",
        "let (data, s) = (method gh read_file s repo \"README.md\");",
    );
    check("f(1);\ng(2);", "(call f 1);\n(call g 2);");
    check("f(1);;", "(call f 1);");
    // Block-like expressions need no `;` before another statement.
    check(
        "if a { f() }\nfor x in xs { g(x); }\nmatch y { _ => 1 }\n{ 2 }\nlet z = 3;\nz",
        "(if a {(call f)});\n(for x xs {(call g x);});\n(match y (_ => 1));\n{2};\nlet z = 3;\n=> z",
    );
    // ... and one at the end is the value.
    check("let a = 1;\nif a > 0 { 1 } else { 2 }", "let a = 1;\n=> (if (> a 0) {1} {2})");
    check("if a { 1 } else { 2 };", "(if a {1} {2});");
    // A block-like statement ends at its `}` unless a method call follows.
    check("if a { b } else { c }\n(x, s)", "(if a {b} {c});\n=> (tuple x s)");
    check("match x { _ => xs }.len()", "=> (method (match x (_ => xs)) len)");
    check("{ xs }.len() + 1;", "(+ (method {xs} len) 1);");
    check("{ 1 } - 1", "{1};\n=> (neg 1)");
}

#[test]
fn block_tails() {
    check_expr("{ let a = 1; if a > 0 { a } else { 0 } }", "{let a = 1; (if (> a 0) {a} {0})}");
    check_expr("{ for x in xs { f(x); } }", "{(for x xs {(call f x);})}");
    check_expr("{ f(); g() }", "{(call f); (call g)}");
    let tail = parse_ok("{ f(); }").body.tail.unwrap();
    let ExprKind::Block(b) = &tail.kind else { panic!() };
    assert!(b.tail.is_none());
}

#[test]
fn items_and_statements_interleave() {
    check(
        "let a = 1;\nfn f(x: Int) -> Int { x }\nlet b = f(a);\nconst C: Int = 2;\nb + C",
        "fn f(x: Int) -> Int {x}\nconst C: Int = 2\nlet a = 1;\nlet b = (call f a);\n=> (+ b C)",
    );
    // The result may come before trailing declarations.
    check("helper(1)\nfn helper(x: Int) -> Int { x }", "fn helper(x: Int) -> Int {x}\n=> (call helper 1)");
    // ... but not before another statement.
    check_err("helper(1)\nfn helper(x: Int) -> Int { x }\nlet y = 2;", &[(1, "syntax-error")]);
}

#[test]
fn missing_semicolon() {
    check_message("let x = 1\nlet y = 2;", "expected `;`, found `let`", None);
    check_err("let x = 1\nlet y = 2;", &[(1, "syntax-error")]);
    check_err("f()\ng()\nh()", &[(1, "syntax-error"), (2, "syntax-error")]);
    check_err("fn f() { a() b() }", &[(1, "syntax-error")]);
    check_err("fn f() { let x = 1 }", &[(1, "syntax-error")]);
    // The statement after the missing `;` is still parsed.
    check_recovery("f()\nlet y = 2;", "(call f);\nlet y = 2;", &[1]);
}

// ---- Declarations ---------------------------------------------------------------------------

#[test]
fn type_declarations() {
    check(
        "type Repo = { name: String, owner: String, private: Bool }",
        "type Repo = {name: String, owner: String, private: Bool}",
    );
    check("type Repo = { name: String, }", "type Repo = {name: String}");
    check("type One = { name: String }", "type One = {name: String}");
    check("type Empty = {}", "type Empty = {}");
    check("type Pos = {v: Int | v > 0}", "type Pos = {v: Int | (> v 0)}");
    check("type Pos = {v: Int | v > 0};", "type Pos = {v: Int | (> v 0)}");
    check("type Ids = List[Int];\ntype Pair = (Int, String)", "type Ids = List[Int]\ntype Pair = (Int, String)");
    check("type F = fn(Int) -> Bool", "type F = fn(Int) -> Bool");
    check("type Nested = { inner: {v: Int | v > 0} }", "type Nested = {inner: {v: Int | (> v 0)}}");
    check("enum Shape { Dot, Rect(Int, Int) }", "enum Shape {Dot, Rect(Int, Int)}");
    check("enum E { A, B(Int, String), }", "enum E {A, B(Int, String)}");
    check("enum Never {}", "enum Never {}");
    check("linear type Session", "linear type Session");
    check("opaque type Trusted[T]", "opaque type Trusted[T]");
    check("opaque type Pair[T, U]\nopaque type Token", "opaque type Pair[T, U]\nopaque type Token");
    check("opaque type Issue = { id: Int, title: String }", "opaque type Issue = {id: Int, title: String}");
}

#[test]
fn host_declarations() {
    check("measure tainted(s: Session) -> Bool", "measure tainted(s: Session) -> Bool");
    check("measure size(a: Int, b: List[Int],) -> Int", "measure size(a: Int, b: List[Int]) -> Int");
    check("measure tainted(s: Session) -> Bool = false", "measure tainted(s: Session) -> Bool = false");
    check("measure level(s: Session) -> Int = -1", "measure level(s: Session) -> Int = (neg 1)");
    check(
        "measure owner(s: Session) -> String = \"\"\nlinear type Session",
        "measure owner(s: Session) -> String = \"\"\nlinear type Session",
    );
    check(
        "entry(gh: GitHub, s: {s: Session | !tainted(s)}) -> Session",
        "entry(gh: GitHub, s: {s: Session | (not (call tainted s))}) -> Session",
    );
    check("const LIMIT: Int = 10;", "const LIMIT: Int = 10");
    check("const NAME: String = \"x\" + \"y\"", "const NAME: String = (+ \"x\" \"y\")");
    check(
        "fn area(s: Shape) -> Int { match s { Shape::Dot => 0, Shape::Rect(w, h) => w * h } }",
        "fn area(s: Shape) -> Int {(match s (Shape::Dot => 0) (Shape::Rect(w, h) => (* w h)))}",
    );
    check("fn noop() { }", "fn noop() {}");
    check("fn log(_: String, x: Int,) { f(x); }", "fn log(_: String, x: Int) {(call f x);}");
}

#[test]
fn capabilities_and_annotations() {
    let src = "capability GitHub {
  tool read_file(s: Session, r: Repo, path: String)
    -> (String, {s2: Session | tainted(s2) == (r.private || tainted(s))})
  tool create_issue(s: {s: Session | !tainted(s)}, title: String) -> (Issue, Session)
    @approval(ask) @card(destination = r.name, content = body)
}";
    check(
        src,
        "capability GitHub { tool read_file(s: Session, r: Repo, path: String) -> (String, {s2: Session | (== (call tainted s2) (|| (. r private) (call tainted s)))}); tool create_issue(s: {s: Session | (not (call tainted s))}, title: String) -> (Issue, Session) @approval(ask) @card(destination = (. r name), content = body); }",
    );
    // Annotations before the signature, separators `;` and `,`, no result type.
    check(
        "capability C { @approval(deny) tool a(); tool b(x: Int) @label(returns = x, x = 1), @approval(none) tool c() }",
        "capability C { tool a() @approval(deny); tool b(x: Int) @label(returns = x, x = 1); tool c() @approval(none); }",
    );
    // Rust-attribute style: an annotation at the tool's indentation leads the next tool.
    check(
        "capability C {\n  @approval(ask)\n  tool a()\n  @approval(deny)\n  tool b()\n}",
        "capability C { tool a() @approval(ask); tool b() @approval(deny); }",
    );
    check("capability Empty {}", "capability Empty { }");
    check("capability C { tool t() @flag }", "capability C { tool t() @flag(); }");
}

#[test]
fn item_spans() {
    let module = parse_ok("/// doc\nconst X: Int = 1;\n  fn f() { }  ");
    let spans: Vec<(u32, u32)> = module.items.iter().map(|i| (i.span.start, i.span.end)).collect();
    assert_eq!(spans, vec![(8, 24), (28, 38)]);
    let module = parse_ok("capability C {\n  @a(1)\n  tool t(x: Int) -> Int @b\n}");
    let ItemKind::Capability { tools, .. } = &module.items[0].kind else { panic!() };
    let tool = &tools[0];
    assert_eq!((tool.span.start, tool.span.end), (17, 49));
}

#[test]
fn doc_comments_attach() {
    let src = "/// A repository.
/// Second line.
type Repo = {
  /// Its name.
  name: String,
  // not a doc comment
  private: Bool,
}
/// Shapes.
enum Shape {
  /// A point.
  Dot,
  Rect(Int, Int),
}
/// Host.
capability GitHub {
  /// Reads a file.
  tool read(path: String) -> String
  /// Leading doc.
  @approval(ask)
  /// After the annotation.
  tool write(path: String)
}
///Tight.
fn f() { }
/// Dangling doc comment before a statement is dropped.
let x = 1;
type Single = {
  /// Only field.
  v: Int }
";
    let module = parse_ok(src);
    let docs: Vec<Option<&str>> = module.items.iter().map(|i| i.doc.as_deref()).collect();
    assert_eq!(docs, vec![Some("A repository.\nSecond line."), Some("Shapes."), Some("Host."), Some("Tight."), None]);
    let ItemKind::Record { fields, .. } = &module.items[0].kind else { panic!() };
    assert_eq!(fields[0].doc.as_deref(), Some("Its name."));
    assert_eq!(fields[1].doc, None);
    let ItemKind::Enum { variants, .. } = &module.items[1].kind else { panic!() };
    assert_eq!(variants[0].doc.as_deref(), Some("A point."));
    assert_eq!(variants[1].doc, None);
    let ItemKind::Capability { tools, .. } = &module.items[2].kind else { panic!() };
    assert_eq!(tools[0].doc.as_deref(), Some("Reads a file."));
    assert_eq!(tools[1].doc.as_deref(), Some("Leading doc.\nAfter the annotation."));
    let ItemKind::Record { fields, .. } = &module.items[4].kind else { panic!() };
    assert_eq!(fields[0].doc.as_deref(), Some("Only field."));
}

#[test]
fn declarations_only_at_top_level() {
    check_message(
        "fn outer() {\n  fn inner() { }\n}",
        "`fn` declarations are only allowed at the top level",
        Some("use a closure: `let f = |x: Int| x + 1;`"),
    );
    check_err("fn f() {\n  type T = Int;\n  let x = 1;\n  x\n}", &[(2, "syntax-error")]);
    check_recovery("let a = { const C: Int = 1; 2 };", "let a = {2};", &[1]);
    check_message(
        "tool t()",
        "a `tool` is declared inside a `capability`",
        Some("write `capability Name { tool .. }`"),
    );
}

#[test]
fn declaration_errors() {
    check_message("type X Int", "expected `=`, found `Int`", Some("a type is declared `type Name = ..`"));
    check_message(
        "measure m(x: Int)",
        "expected `->` and a result type, found end of file",
        Some("a measure is declared `measure m(x: T) -> U`"),
    );
    check_message("fn f(x) { x }", "expected `:` and a type, found `)`", Some("parameters have types: `x: Int`"));
    check_message(
        "fn f(): Int { 1 }",
        "expected `{` and the function body, found `:`",
        Some("the result type is written `-> T`"),
    );
    check_message(
        "const X = 1;",
        "expected `:` and a type, found `=`",
        Some("a constant has a type: `const LIMIT: Int = 10;`"),
    );
    check_message(
        "capability C { fn f() }",
        "expected `tool` or `}`, found `fn`",
        Some("a capability holds tools: `tool name(x: T) -> U`"),
    );
    check_message("opaque type T[A] = { a: A }", "an opaque record type takes no type parameters", None);
    check_message(
        "pub fn f() { }",
        "there is no `pub`",
        Some("remove it: every declaration is visible in the whole program"),
    );
    check_message(
        "struct Repo { name: String }",
        "expected an expression, found `struct`",
        Some("declare a record type with `type Name = { field: Type, .. }`"),
    );
    check_err("enum E { A(Int, }", &[(1, "syntax-error")]);
    check_err("linear Session", &[(1, "syntax-error")]);
    check_err("entry(x: Int)", &[(1, "syntax-error")]);
}

// ---- Rust habits ----------------------------------------------------------------------------

#[test]
fn rust_habits_get_help() {
    check_message(
        "fn f(x: Int) -> Int { return x + 1; }",
        "expected an expression, found `return`",
        Some("there is no `return`: the last expression of a block is its value"),
    );
    check_message(
        "let y = 0; y = 1;",
        "there is no assignment",
        Some("there is no mutation; bind a new name with `let`"),
    );
    check_message(
        "let y = 0; y += 1;",
        "there is no `+=` operator",
        Some("there is no mutation; bind a new name with `let`"),
    );
    let no_loops =
        Some("there is no `while` or `loop`: iterate with `for x in xs { .. }` or `for i in range(a, b) { .. }`");
    check_message("while i < 3 { f(i); }", "expected an expression, found `while`", no_loops);
    check_message("loop { f(); }", "expected an expression, found `loop`", no_loops);
    check_message(
        "let x = null;",
        "expected an expression, found `null`",
        Some("there is no `null`: use `None`, an `Option`"),
    );
    check_message("let y = &x;", "there are no references", Some("pass the value itself"));
    check_message("if x = 1 { 2 }", "expected `{` after the condition, found `=`", Some("compare with `==`"));
    check_message("println!(\"hi\");", "there are no macros", Some("call a function: `f(x)`"));
    check_message(
        "use std::io;",
        "expected an expression, found `use`",
        Some("there are no imports: builtins and declarations are always in scope"),
    );
    check_message(
        "impl Repo { fn f() { } }",
        "expected an expression, found `impl`",
        Some("there are no traits or impls: write functions; `x.f(a)` calls `f(x, a)`"),
    );
    check_message(
        "for i in 0..n { f(i); }",
        "there is no `..` range",
        Some("iterate over `range(a, b)`, which counts from `a` up to `b - 1`"),
    );
    check_message(
        "enum E { A, B { x: Int }, C }",
        "a variant's payload is a tuple of types",
        Some("write `B(Int, String)`, or make a record type and use `B(Rec)`"),
    );
    check_message("if a { 1 } else if { 2 } else { 3 }", "expected a condition, found `{`", None);
    check_message(
        "if let Some(n) = o { f(n); } else { g(); }\nlet y = 1;",
        "there is no `if let`",
        Some("use `match`: `match x { Some(v) => .., None => .. }`"),
    );
    // `return x` still gives `x`.
    check_recovery("fn f() -> Int { return 1 }", "fn f() -> Int {1}", &[1]);
    // `loop` is only taken for Rust's when a block follows.
    check_expr("loop + 1", "(+ loop 1)");
}

// ---- Error messages and recovery ------------------------------------------------------------

#[test]
fn unclosed_brackets_name_the_opener() {
    check_message("let x = f(1, 2;", "expected `)` to close `(` at 1:10, found `;`", None);
    check_message("let x =\n  (1 + 2;", "expected `)` to close `(` at 2:3, found `;`", None);
    check_message("let x = [1, 2\nlet y = 1;", "expected `]` to close `[` at 1:9, found `let`", None);
    check_message("let x = f(a b);", "expected `,` or `)`, found `b`", None);
    check_message("fn f() {\n  let x = 1;\n", "expected `}` to close `{` at 1:8, found end of file", None);
    check_message("let x = (a, b];", "expected `)` to close `(` at 1:9, found `]`", None);
    let parsed = parse_checked("let x = f(1, 2;");
    let d = &parsed.diagnostics[0];
    assert_eq!(d.labels.len(), 2);
    assert_eq!((d.labels[1].span.start, d.labels[1].span.end), (9, 10));
    assert_eq!(d.labels[1].message, "`(` opened here");
}

#[test]
fn expected_found_messages() {
    check_message("let = 1;", "expected a pattern, found `=`", None);
    check_message("let x = ;", "expected an expression, found `;`", None);
    check_message("let x = 1 +;", "expected an expression, found `;`", None);
    check_message(
        "let x = a.;",
        "expected a field name, method or tuple index after `.`, found `;`",
        Some("write `x.field`, `x.method(..)` or `x.0`"),
    );
    check_message("match x { 1 => 2 3 => 4 }", "expected `,` or `}` after the match arm, found `3`", None);
    check_message("match x { 1 2 }", "expected `=>`, found `2`", None);
    check_message("for x xs { }", "expected `in`, found `xs`", None);
    check_message("let x = agent;", "expected `(`, found `;`", Some("a hole is written `agent[T](\"task\", args..)`"));
    check_message(
        "let f = |(a, b)| a;",
        "expected a parameter name, found `(`",
        Some("closure parameters are names, optionally typed: `|x, y: Int| ..`; destructure with `let` in the body"),
    );
    check_message(
        "let f = |x| -> Int x;",
        "expected `{`, found `x`",
        Some("a closure with a result type has a block body: `|x: Int| -> Int { x + 1 }`"),
    );
    check_message("let x = \"a\" \"b\";", "expected `;`, found `\"b\"`", None);
    check_message("let x = t.1e3;", "expected a tuple index", Some("tuple fields are numbered: `p.0`, `p.1`"));
    check_message("let x = t.99999999999;", "tuple index too large", None);
    check_message(")", "unexpected `)`", None);
    check_message("if a { 1 } else 2", "expected `{` or `if` after `else`, found `2`", None);
}

#[test]
fn one_error_per_statement() {
    // Follow-on errors of one mistake are not reported.
    check_err("let x = (1 + * 2 ] ) );", &[(1, "syntax-error")]);
    check_err("let x = f(,,, ;;", &[(1, "syntax-error")]);
    check_err("let = = = ;", &[(1, "syntax-error")]);
    check_err("let x = 1 # 2 # 3;", &[(1, "syntax-error")]);
    check_err("let s = \"\\q\\z\" + 'a' + 999999999999999999999;", &[(1, "syntax-error")]);
    check_err("let x = 1 # 2;\nlet y = 2 # 3;", &[(1, "syntax-error"), (2, "syntax-error")]);
    check_err("fn f( { }", &[(1, "syntax-error")]);
    check_err("type T = { a: , b: Int c: Int }", &[(1, "syntax-error")]);
}

#[test]
fn several_independent_errors() {
    let src = "\
let a = 1 +;
let b = (2;
fn f(x: Int) -> Int {
    let y = x * ;
    let z = [1, 2;
    y + z
}
let ok = 3;
const C: Int = ;
type T = { a: Int b: Int }
let c = ok +;
";
    check_err(
        src,
        &[
            (1, "syntax-error"),
            (2, "syntax-error"),
            (4, "syntax-error"),
            (5, "syntax-error"),
            (9, "syntax-error"),
            (10, "syntax-error"),
            (11, "syntax-error"),
        ],
    );
    // The good parts are all there.
    let parsed = parse_checked(src);
    assert_eq!(parsed.module.items.len(), 3);
    assert_eq!(parsed.module.body.stmts.len(), 4);
}

#[test]
fn recovery_keeps_structure() {
    check_recovery("let a = 1 +;\nlet b = 2;\nb", "let a = (+ 1 ERR);\nlet b = 2;\n=> b", &[1]);
    check_recovery("fn f() {\n  let x = (1;\n  x\n}\nfn g() { 2 }", "fn f() {let x = 1; x}\nfn g() {2}", &[2]);
    check_recovery("fn f() {\n  let x = g(1, 2 }\nfn g() { 2 }", "fn f() {let x = (call g 1 2);}\nfn g() {2}", &[2]);
    // A declaration at the start of a line closes a block left open.
    check_recovery("fn f() {\n  let x = 1;\n\nfn g() { 2 }", "fn f() {let x = 1;}\nfn g() {2}", &[4]);
    check_recovery("match x {\n  1 => 2\n  3 => 4\n}", "=> (match x (1 => 2) (3 => 4))", &[2]);
    check_recovery(
        "capability C {\n  tool a(x) -> Int\n  tool b() -> Int\n}",
        "capability C { tool a(x: ERR) -> Int; tool b() -> Int; }",
        &[2],
    );
    check_recovery("let x = y = 1;\nx", "let x = y;\n=> x", &[1]);
    check_recovery("y = 1;\nx", "ERR;\n=> x", &[1]);
    check_recovery("}\nlet a = 1;", "let a = 1;", &[1]);
    check_recovery("})]}\nlet a = 1;", "let a = 1;", &[1]);
    // A broken statement without `;` before a declaration is not blamed twice.
    check_recovery(
        "#[derive(Debug)]\ntype T = Int\nf(1);",
        "type T = Int\n(index ERR (call derive Debug));\n(call f 1);",
        &[1],
    );
}

#[test]
fn diagnostics_are_capped() {
    let src = "let x = ;\n".repeat(200);
    let parsed = parse_checked(&src);
    assert_eq!(parsed.diagnostics.len(), MAX_DIAGNOSTICS);
    let src = "é ".repeat(500) + &"let = ;\n".repeat(500);
    let parsed = parse_checked(&src);
    assert_eq!(parsed.diagnostics.len(), MAX_DIAGNOSTICS);
    // Sorted by position.
    assert!(parsed.diagnostics.windows(2).all(|w| w[0].span().start <= w[1].span().start));
}

// ---- Nesting --------------------------------------------------------------------------------

fn codes(src: &str) -> Vec<&'static str> {
    parse_checked(src).diagnostics.iter().map(|d| d.code.as_str()).collect()
}

/// Inputs nested `n` deep in each way the language allows.
fn nested_inputs(n: usize) -> Vec<String> {
    vec![
        format!("let x = {}1{};", "(".repeat(n), ")".repeat(n)),
        format!("let x = {}1{};", "[".repeat(n), "]".repeat(n)),
        format!("{}1{}", "{".repeat(n), "}".repeat(n)),
        format!("let x = {}1{};", "{".repeat(n), "}".repeat(n)),
        format!("let x: {}Int{} = 1;", "{v: ".repeat(n), " | true}".repeat(n)),
        format!("let x = {}1;", "-".repeat(n)),
        format!("let x = {}true;", "!".repeat(n)),
        format!("let {}x{} = 1;", "(".repeat(n), ",)".repeat(n)),
        format!("let x: {}Int{} = 1;", "List[".repeat(n), "]".repeat(n)),
        format!("let x = {}1;", "|a| ".repeat(n)),
        format!("let x = {}1{};", "f(".repeat(n), ")".repeat(n)),
        format!("let x = {}1{};", "if c { ".repeat(n), " }".repeat(n)),
        format!("let x = 1{};", " + 1".repeat(n)),
        format!("let x = a{};", ".f".repeat(n)),
        format!("let x = f{};", "()".repeat(n)),
        format!("let x = a{};", "[0]".repeat(n)),
        format!("let x = 1{};", " as Int".repeat(n)),
        format!("let x = if a {{ 1 }}{} else {{ 2 }};", " else if a { 1 }".repeat(n)),
    ]
}

#[test]
fn moderate_nesting_is_fine() {
    for src in nested_inputs(40) {
        assert_eq!(codes(&src), Vec::<&str>::new(), "for {}", &src[..60.min(src.len())]);
    }
}

#[test]
fn deep_nesting_is_one_error() {
    for src in nested_inputs(MAX_NESTING + 10) {
        assert_eq!(codes(&src), vec!["nesting-too-deep"], "for {}", &src[..60.min(src.len())]);
        // A later statement is still parsed and checked.
        let src = format!("{src}\nlet y = ;");
        assert_eq!(codes(&src), vec!["nesting-too-deep", "syntax-error"], "for {}", &src[..60]);
    }
}

#[test]
fn nesting_limit_boundary() {
    let at = |n: usize| codes(&format!("{}1{}", "(".repeat(n), ")".repeat(n)));
    assert_eq!(at(MAX_NESTING - 1), Vec::<&str>::new());
    assert_eq!(at(MAX_NESTING), vec!["nesting-too-deep"]);
    // The innermost expression is one level too: 127 blocks around `1` are 128 levels.
    let at = |n: usize| codes(&format!("{}1{}", "{".repeat(n), "}".repeat(n)));
    assert_eq!(at(MAX_NESTING - 1), Vec::<&str>::new());
    assert_eq!(at(MAX_NESTING), vec!["nesting-too-deep"]);
    let at = |n: usize| codes(&format!("let x = {}1;", "-".repeat(n)));
    assert_eq!(at(MAX_NESTING - 1), Vec::<&str>::new());
    assert_eq!(at(MAX_NESTING), vec!["nesting-too-deep"]);
}

/// 100,000 levels, balanced and not, in the default 2 MiB test thread.
#[test]
fn very_deep_nesting_does_not_overflow() {
    const N: usize = 100_000;
    for src in nested_inputs(N) {
        assert_eq!(codes(&src), vec!["nesting-too-deep"], "for {}", &src[..40]);
    }
    // Unclosed: one error, whichever comes first.
    let unclosed = [
        "(".repeat(N),
        "[".repeat(N),
        "{".repeat(N),
        "{v: ".repeat(N),
        "let x: ".to_string() + &"{v: ".repeat(N),
        "-".repeat(N),
        "!".repeat(N),
        "let ".to_string() + &"(".repeat(N),
        "let x = ".to_string() + &"Some(".repeat(N),
        "match x { ".repeat(N),
        "||".repeat(N),
        "let x = ".to_string() + &"&".repeat(N),
        "let x: ".to_string() + &"&".repeat(N),
        "let x = 1".to_string() + &" +".repeat(N),
        "x".to_string() + &".".repeat(N),
    ];
    for src in unclosed {
        assert_eq!(parse_checked(&src).diagnostics.len(), 1, "for {}", &src[..40]);
    }
    // Each nested declaration is its own mistake.
    assert_eq!(codes(&"fn f() { ".repeat(N)).len(), MAX_DIAGNOSTICS);
}

/// Each level of nesting costs a few small stack frames (about 4 KiB at most in a debug build):
/// the deepest accepted input of every kind parses on a 1 MiB stack, half a test thread's.
#[test]
fn stack_use_per_level_is_small() {
    let inputs = nested_inputs(MAX_NESTING - 8);
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || {
            for src in inputs {
                let parsed = parse(FileId(0), &src);
                assert!(parsed.diagnostics.len() <= 1, "for {}", &src[..40]);
            }
        })
        .unwrap();
    handle.join().unwrap();
}

// ---- Node ids -------------------------------------------------------------------------------

#[test]
fn node_ids_in_creation_order() {
    let module = parse_ok("let a = f(1) + 2;\na");
    let Stmt::Let { value, .. } = &module.body.stmts[0] else { panic!() };
    let ExprKind::Binary { lhs, rhs, .. } = &value.kind else { panic!() };
    let ExprKind::Call { callee, args } = &lhs.kind else { panic!() };
    let ids = [callee.id, args[0].id, lhs.id, rhs.id, value.id, module.body.tail.unwrap().id];
    assert_eq!(ids.map(|id| id.0), [0, 1, 2, 3, 4, 5]);
}

// ---- Whole programs -------------------------------------------------------------------------

#[test]
fn language_reference_examples() {
    let policy = "
/// Doc comments (three slashes) are kept and shown to models.
type Repo = { name: String, owner: String, private: Bool }   // a named record
type Pos = {v: Int | v > 0}                                  // an alias
enum Shape { Dot, Rect(Int, Int) }
const LIMIT: Int = 10;
fn area(s: Shape) -> Int { match s { Shape::Dot => 0, Shape::Rect(w, h) => w * h } }

// policy modules only:
linear type Session                    // host-made; each value used exactly once
opaque type Trusted[T]                 // host-made; no way to build one in code
opaque type Issue = { id: Int, title: String }  // fields readable, not constructible
measure tainted(s: Session) -> Bool = false  // uninterpreted; only in refinements;
                                             // `= literal`: its value on a fresh session
capability GitHub {
  /// Reads a file; the session is tainted afterwards if the repo is private.
  tool read_file(s: Session, r: Repo, path: String)
    -> (String, {s2: Session | tainted(s2) == (r.private || tainted(s))})
  tool create_issue(s: {s: Session | !tainted(s)}, r: {r: Repo | !r.private},
                    title: {t: String | t != \"\"}, body: String) -> (Issue, Session)
    @approval(ask) @card(destination = r.name, content = body)
}
entry(gh: GitHub, s: {s: Session | !tainted(s)}) -> Session
";
    let module = parse_ok(policy);
    assert_eq!(module.items.len(), 11);
    let ItemKind::Capability { tools, .. } = &module.items[9].kind else { panic!() };
    assert_eq!(tools[1].annotations.len(), 2);
    let plan = "
let x = 1;                    let y: {v: Int | v >= 0} = x;
let (data, s) = gh.read_file(s, repo, \"README.md\");    // tuple destructuring
let word = if x > 0 { \"pos\" } else if x == 0 { \"zero\" } else { \"neg\" };
let v = match opt { Some(v) => v, None => 0 };                  // must be exhaustive
for item in items { total_so_far(item); }              // loops return ()
let double = |n: Int| n * 2;  xs.map(|n| n + 1);        // closures
let n = agent[{n: Int | n >= 0}](\"count open issues\", repo);    // a typed hole filled by a model
x as Float                                             // Int <-> Float only
";
    check(
        plan,
        "let x = 1;
let y: {v: Int | (>= v 0)} = x;
let (data, s) = (method gh read_file s repo \"README.md\");
let word = (if (> x 0) {\"pos\"} (if (== x 0) {\"zero\"} {\"neg\"}));
let v = (match opt (Some(v) => v) (None => 0));
(for item items {(call total_so_far item);});
let double = (closure |n: Int| (* n 2));
(method xs map (closure |n| (+ n 1)));
let n = (agent[{n: Int | (>= n 0)}] \"count open issues\" repo);
=> (as x Float)",
    );
}

#[test]
fn language_reference_label_examples() {
    let policy = "
capability Git {
tool read(r: Repo, path: String) -> String
  @label(returns = if r.private { secret(r.owner) } else { public() })
tool send(to: String, body: String) @label(body = secret(to).join(endorsed(user())))
}
";
    check(
        policy,
        "capability Git { tool read(r: Repo, path: String) -> String \
         @label(returns = (if (. r private) {(call secret (. r owner))} {(call public)})); \
         tool send(to: String, body: String) @label(body = (method (call secret to) join (call endorsed (call user)))); }",
    );
    let plan = "
let page = to_labeled { web.fetch(url) };              // a Labeled[String]
let text = page.unlabel();                             // a String
text
";
    check(plan, "let page = (to_labeled {(method web fetch url)});\nlet text = (method page unlabel);\n=> text");
}

#[test]
fn file_id_is_used() {
    let parsed = parse(FileId(7), "let x = (1;");
    assert_eq!(parsed.module.file, FileId(7));
    assert_eq!(parsed.module.body.span.file, FileId(7));
    assert_eq!(parsed.diagnostics[0].span().file, FileId(7));
    let Stmt::Let { value, .. } = &parsed.module.body.stmts[0] else { panic!() };
    assert_eq!(value.span.file, FileId(7));
}

#[test]
fn big_inputs_parse_in_linear_time() {
    // Large, broken inputs of several shapes parse without panicking and keep the tree's
    // invariants; `tests/linear.rs` bounds the work they take (allocations counted).
    let inputs = [
        "let x = f(1, 2) + [a, b].len() * 3;\n".repeat(20_000),
        "x".repeat(400_000),
        ")".repeat(200_000),
        "} let".repeat(50_000),
        "( ; ".repeat(100_000),
        "fn f( ".repeat(50_000),
        "capability C { @ ".repeat(30_000),
        "match x { 1 2 ".repeat(30_000),
        "\"".repeat(100_001),
        "/*".repeat(100_000),
        "a.0.1".repeat(100_000),
        "tool t() @a ".repeat(50_000),
    ];
    for src in inputs {
        let _ = parse_checked(&src);
    }
}

// ---- Properties -----------------------------------------------------------------------------

const VOCABULARY: &[&str] = &[
    "let",
    "fn",
    "if",
    "else",
    "match",
    "for",
    "in",
    "type",
    "enum",
    "linear",
    "opaque",
    "measure",
    "capability",
    "tool",
    "const",
    "entry",
    "true",
    "false",
    "as",
    "agent",
    "x",
    "Y",
    "None",
    "Some",
    "1",
    "2.5",
    "\"s\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    "::",
    ".",
    "->",
    "=>",
    "|",
    "||",
    "&&",
    "!",
    "==",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "@",
    "_",
    "\n",
    "/// d\n",
    "return",
    "0.1",
    "#",
    "f\"",
    "f\"a{",
    "}b\"",
    "f\"{x}\"",
    "{{",
    "}}",
    "\\",
    "with",
];

proptest! {
    #![proptest_config(ProptestConfig { rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::with_cases(2000) })]

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        let _ = parse_checked(&src);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let src = String::from_utf8_lossy(&bytes);
        let _ = parse_checked(&src);
    }

    #[test]
    fn token_soup_never_panics(
        words in proptest::collection::vec(proptest::sample::select(VOCABULARY), 0..80)
    ) {
        let src = words.join(" ");
        let _ = parse_checked(&src);
    }
}

#[test]
fn an_f_string_is_a_list_of_its_parts_joined() {
    check_expr(r#"f"a{x}b""#, &r_expr(&parse_ok(r#"["a", x.to_string(), "b"].join("")"#).body.tail.unwrap()));
    check_expr(r#"f"{{}}{ {1} }""#, &r_expr(&parse_ok(r#"["{}", {1}.to_string()].join("")"#).body.tail.unwrap()));
    check_expr(r#"f"plain""#, &r_expr(&parse_ok(r#""plain""#).body.tail.unwrap()));
    check_expr(r#"f"""#, &r_expr(&parse_ok(r#""""#).body.tail.unwrap()));
    check_err(r#"f"a{x"#, &[(1, "syntax-error")]);
    check_err(r#"f"a{x}"#, &[(1, "syntax-error")]);
    check_message(
        r#"f"{x:>5}""#,
        "an f-string has no format specs",
        Some(r#"format the value first: `{to_string(x).pad_left(5, " ")}`"#),
    );
}

#[test]
fn a_loop_with_a_state_is_a_fold() {
    let looped = parse_ok("for x in xs with s { g(s, x) }").body.tail.unwrap();
    let folded = parse_ok("xs.fold(s, |s, for_item| { let x = for_item; g(s, x) })").body.tail.unwrap();
    check_expr("for x in xs with s { g(s, x) }", &r_expr(&folded));
    assert!(matches!(looped.kind, cordon_syntax::ast::ExprKind::MethodCall { .. }));
    check_err("for x in xs with { s }", &[(1, "syntax-error")]);
    // An invariant types the state: `fold` takes its function's declared accumulator type.
    let folded = parse_ok("xs.fold(s, |s: {v: Int | v > 0}, for_item| { let x = for_item; g(s, x) })");
    check_expr("for x in xs with s: {v: Int | v > 0} { g(s, x) }", &r_expr(&folded.body.tail.unwrap()));
    check_err("for x in xs with s: { g(s, x) }", &[(1, "syntax-error")]);
}

#[test]
fn a_paren_or_bracket_that_starts_a_line_is_not_a_call_or_an_index() {
    // The missing `;` is reported on the line that lacks it, not on the next one.
    check_err("let ys = xs.map(|x| x + 1)\n(ys, s)", &[(1, "syntax-error")]);
    check_message("let ys = xs.map(|x| x + 1)\n(ys, s)", "expected `;`, found `(`", None);
    check_err("let ys = xs\n[0]", &[(1, "syntax-error")]);
    // With the `;`, the tuple is the result.
    check("let ys = xs.map(|x| x + 1);\n  (ys, s)", &r_module(&parse_ok("let ys = xs.map(|x| x + 1); (ys, s)")));
    // On one line, or with the `(` on the callee's line, calls and indexes are as before.
    check_expr("f\n  .g(1)", "(method f g 1)");
    check_expr("f(\n1,\n(2, 3))", &r_expr(&parse_ok("f(1, (2, 3))").body.tail.unwrap()));
    check_expr("xs[\n0]", &r_expr(&parse_ok("xs[0]").body.tail.unwrap()));
}
