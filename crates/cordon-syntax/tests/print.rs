//! The printer: print(parse(x)) gives x back. A property over random declarations (records,
//! enums, capabilities, tools with annotations, the entry) whose doc comments and string literals
//! are arbitrary Unicode (`*/`, `"`, `\`, line breaks, bidi controls included): the text printed
//! parses without a diagnostic, to declarations that print the same again, with every string
//! literal exactly as it was and every doc line as the printer shows it; and names that are not
//! identifiers are refused.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::ast::{
    Annotation, AnnotationArg, Expr, ExprKind, Field, Ident, Item, ItemKind, NodeId, Param, Tool, TypeExpr,
    TypeExprKind, Variant,
};
use cordon_syntax::print::{self, comment_text, string_literal};
use cordon_syntax::{FileId, Span, parse};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn span() -> Span {
    Span::new(FileId(0), 0, 0)
}

fn id(name: &str) -> Ident {
    Ident { name: name.to_string(), span: span() }
}

fn named(name: &str, args: Vec<TypeExpr>) -> TypeExpr {
    TypeExpr { kind: TypeExprKind::Named { name: id(name), args }, span: span() }
}

fn ex(kind: ExprKind) -> Expr {
    Expr { id: NodeId(0), kind, span: span() }
}

/// Parses `text`, failing on any diagnostic.
fn reparse(text: &str) -> Vec<Item> {
    let parsed = parse(FileId(0), text);
    let errors: Vec<&str> = parsed.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    parsed.module.items
}

fn lower() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,6}".prop_filter("not a keyword", |s| cordon_syntax::lexer::TokenKind::keyword(s).is_none())
}

fn upper() -> impl Strategy<Value = String> {
    "[A-Z][a-zA-Z0-9]{0,6}"
}

/// Any text at all, with the characters that attack comments and strings made likely.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(vec![
            "*/",
            "/*",
            "//",
            "///",
            "\"",
            "\\",
            "\n",
            "\r",
            "\r\n",
            "\u{2028}",
            "\u{2029}",
            "\u{85}",
            "\u{b}",
            "\u{c}",
            "\u{1b}[2J",
            "\u{202e}",
            "\u{2066}",
            "\u{200b}",
            "\u{feff}",
            "\u{e0041}",
            "\u{fe0f}",
            "\u{301}",
            "}",
            "{",
            "tool x()",
            "@approval(ask)",
            "\\u{41}",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

fn doc() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

fn type_expr() -> BoxedStrategy<TypeExpr> {
    let leaf = prop_oneof![
        Just(named("Int", vec![])),
        Just(named("String", vec![])),
        upper().prop_map(|n| named(&n, vec![])),
        Just(TypeExpr { kind: TypeExprKind::Tuple(vec![]), span: span() }),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| named("List", vec![t])),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| named("Map", vec![k, v])),
            prop::collection::vec(inner.clone(), 2..4)
                .prop_map(|items| TypeExpr { kind: TypeExprKind::Tuple(items), span: span() }),
            (prop::collection::vec(inner.clone(), 0..3), inner).prop_map(|(params, ret)| TypeExpr {
                kind: TypeExprKind::Fn { params, ret: Box::new(ret) },
                span: span()
            }),
        ]
    })
    .boxed()
}

fn expr() -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        text().prop_map(|s| ex(ExprKind::Str(s))),
        (0i64..i64::MAX).prop_map(|n| ex(ExprKind::Int(n))),
        any::<bool>().prop_map(|b| ex(ExprKind::Bool(b))),
        lower().prop_map(|n| ex(ExprKind::Name(id(&n)))),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (lower(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(f, args)| ex(ExprKind::Call { callee: Box::new(ex(ExprKind::Name(id(&f)))), args })),
            (inner.clone(), lower(), prop::collection::vec(inner.clone(), 0..2)).prop_map(|(r, m, args)| ex(
                ExprKind::MethodCall { receiver: Box::new(r), method: Box::new(id(&m)), args }
            )),
            (inner.clone(), inner).prop_map(|(l, r)| ex(ExprKind::Binary {
                op: cordon_syntax::ast::BinOp::Add,
                lhs: Box::new(l),
                rhs: Box::new(r)
            })),
        ]
    })
    .boxed()
}

fn annotation() -> impl Strategy<Value = Annotation> {
    (lower(), prop::collection::vec((prop::option::of(lower()), expr()), 0..3)).prop_map(|(name, args)| Annotation {
        name: id(&name),
        args: args.into_iter().map(|(key, value)| AnnotationArg { key: key.map(|k| id(&k)), value }).collect(),
        span: span(),
    })
}

fn params() -> impl Strategy<Value = Vec<Param>> {
    prop::collection::vec((lower(), type_expr()), 0..4)
        .prop_map(|ps| ps.into_iter().map(|(n, ty)| Param { name: id(&n), ty }).collect())
}

fn tool() -> impl Strategy<Value = Tool> {
    (doc(), lower(), params(), prop::option::of(type_expr()), prop::collection::vec(annotation(), 0..3)).prop_map(
        |(doc, name, params, ret, annotations)| Tool { doc, name: id(&name), params, ret, annotations, span: span() },
    )
}

fn item() -> impl Strategy<Value = Item> {
    let field = (doc(), lower(), type_expr(), prop::collection::vec(annotation(), 0..2))
        .prop_map(|(doc, name, ty, annotations)| Field { doc, name: id(&name), ty, annotations });
    let variant = (doc(), upper(), prop::collection::vec(type_expr(), 0..3)).prop_map(|(doc, name, payload)| Variant {
        doc,
        name: id(&name),
        payload,
        span: span(),
    });
    let kind = prop_oneof![
        (upper(), prop::collection::vec(field, 1..4), any::<bool>())
            .prop_map(|(name, fields, opaque)| ItemKind::Record { name: id(&name), fields, opaque }),
        (upper(), prop::collection::vec(variant, 1..4))
            .prop_map(|(name, variants)| ItemKind::Enum { name: id(&name), variants }),
        (upper(), prop::collection::vec(tool(), 0..4))
            .prop_map(|(name, tools)| ItemKind::Capability { name: id(&name), tools }),
        (params(), type_expr()).prop_map(|(params, ret)| ItemKind::Entry { params, ret }),
        upper().prop_map(|name| ItemKind::Linear { name: id(&name) }),
        (upper(), prop::collection::vec(upper(), 0..3))
            .prop_map(|(name, ps)| ItemKind::Opaque { name: id(&name), params: ps.iter().map(|p| id(p)).collect() }),
        (upper(), type_expr()).prop_map(|(name, ty)| ItemKind::TypeAlias { name: id(&name), ty }),
    ];
    (doc(), kind).prop_map(|(doc, kind)| Item { doc, kind, span: span() })
}

/// Every doc comment of `items`, in order, and every string literal.
fn texts(items: &[Item]) -> (Vec<Option<String>>, Vec<String>) {
    fn strings(e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Str(s) => out.push(s.clone()),
            ExprKind::Call { callee, args } => {
                strings(callee, out);
                args.iter().for_each(|a| strings(a, out));
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                strings(receiver, out);
                args.iter().for_each(|a| strings(a, out));
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                strings(lhs, out);
                strings(rhs, out);
            }
            _ => {}
        }
    }
    let annotations = |anns: &[Annotation], out: &mut Vec<String>| {
        anns.iter().flat_map(|a| &a.args).for_each(|arg| strings(&arg.value, out));
    };
    let (mut docs, mut lits) = (Vec::new(), Vec::new());
    for item in items {
        docs.push(item.doc.clone());
        match &item.kind {
            ItemKind::Record { fields, .. } => fields.iter().for_each(|f| {
                docs.push(f.doc.clone());
                annotations(&f.annotations, &mut lits);
            }),
            ItemKind::Enum { variants, .. } => variants.iter().for_each(|v| docs.push(v.doc.clone())),
            ItemKind::Capability { tools, .. } => tools.iter().for_each(|t| {
                docs.push(t.doc.clone());
                annotations(&t.annotations, &mut lits);
            }),
            _ => {}
        }
    }
    (docs, lits)
}

/// A doc comment as the printer shows it: each line through [`comment_text`].
fn shown(doc: &Option<String>) -> Option<String> {
    doc.as_ref().map(|d| d.split('\n').map(comment_text).collect::<Vec<_>>().join("\n"))
}

#[test]
fn printed_declarations_parse_back_to_themselves() {
    let config = Config { cases: 256, failure_persistence: None, ..Config::default() };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[25; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&prop::collection::vec(item(), 1..5), |items| {
        let text = print::module(&items).map_err(TestCaseError::fail)?;
        let back = reparse(&text);
        let again = print::module(&back).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&again, &text);
        // The printer lays out as the formatter does, so an imported policy needs no `cordon fmt`.
        let formatted = cordon_syntax::format::format(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&formatted, &text);
        let (docs, lits) = texts(&items);
        let (docs_back, lits_back) = texts(&back);
        prop_assert_eq!(lits_back, lits, "{}", text);
        prop_assert_eq!(docs_back, docs.iter().map(shown).collect::<Vec<_>>(), "{}", text);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn comment_text_cannot_leave_its_comment_or_hide_text() {
    assert_eq!(comment_text("a */ b /* c"), "a * / b / * c");
    assert_eq!(comment_text("/*/"), "/ * /");
    assert_eq!(comment_text("x\ny\r\u{2028}z"), "x\\u{a}y\\u{d}\\u{2028}z");
    assert_eq!(comment_text("\u{1b}[2Jok"), "\\u{1b}[2Jok");
    assert_eq!(comment_text("pay \u{202e}evil"), "pay \\u{202e}evil");
    assert_eq!(comment_text("a\u{e0041}\u{fe0f}\u{2800}b"), "a\\u{e0041}\\u{fe0f}\\u{2800}b");
    assert_eq!(comment_text("e\u{301} \u{301}"), "e\u{301} \\u{301}");
    assert_eq!(print::comment("one\ntwo */\n"), "// one\n// two * /\n//\n");
    assert_eq!(string_literal("a\"b\\c\nd\u{202e}"), "\"a\\\"b\\\\c\\nd\\u{202e}\"");
}

#[test]
fn names_that_are_not_identifiers_are_refused() {
    for bad in ["a-b", "x */ y", "type", "é", "", "_", "3d", "a b"] {
        let item = Item { doc: None, kind: ItemKind::Linear { name: id(bad) }, span: span() };
        let printed = print::module(&[item]);
        assert!(printed.as_ref().is_err_and(|e| e.contains("not an identifier")), "{bad:?}: {printed:?}");
    }
}

#[test]
fn what_the_printer_cannot_write_is_an_error() {
    let one = TypeExpr { kind: TypeExprKind::Tuple(vec![named("Int", vec![])]), span: span() };
    assert!(print::type_expr(&one).is_err());
    assert!(print::expr(&ex(ExprKind::Int(-1))).is_err());
    assert!(print::expr(&ex(ExprKind::Float(1.5))).is_err());
}

/// A refinement over decimals (`{a: Decimal | a > 0.50d}`, as the language reference writes
/// them) prints back as it was written: a policy with one reaches a model's prompt.
#[test]
fn decimal_literals_print_back() {
    let text = "type Pay = { amount: {a: Decimal | a > 0.50d && a <= 5000d} }\n";
    let back = reparse(text);
    let printed = print::module(&back).unwrap();
    assert!(printed.contains("a > 0.50d") && printed.contains("a <= 5000d"), "{printed}");
    assert_eq!(print::module(&reparse(&printed)).unwrap(), printed);
}
