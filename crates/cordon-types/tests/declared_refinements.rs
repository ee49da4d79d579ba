//! What the checker's declarations say beyond the types themselves, for the stages after it:
//! the measures a refinement defines (`Type::Refined::defines`), the program's declarations
//! without a check (`declare_program`), and a type written in code (`resolve_written`).

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::SourceMap;
use cordon_syntax::ast::{ItemKind, TypeExpr};
use cordon_types::{CheckOptions, Declarations, Type, WrittenTypes, check, declare_program};

const POLICY: &str = "
linear type Session
measure tainted(s: Session) -> Bool = false
measure closed(s: Session) -> Bool = false
measure fresh(s: Session) -> Bool = false
measure age(s: Session) -> Int = 0
type Money = Decimal
capability Web {
  tool next(s: Session) -> {s2: Session | tainted(s2) == tainted(s) && !closed(s2) && fresh(s2) && age(s2) > 0}
  tool flip(s: Session) -> {s2: Session | tainted(s) == tainted(s2)}
}
entry(web: Web, s: Session) -> Session
";

/// The declarations of an accepted check of `POLICY` with `plan`.
fn checked(plan: &str) -> Declarations {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(program) = outcome.program else { panic!("rejected: {:?}", outcome.diagnostics) };
    Declarations::clone(program.declarations())
}

/// The measures the result of the tool `tool` defines, each with its value as source.
fn defined(declared: &Declarations, tool: &str) -> Vec<(String, String)> {
    let ret = &declared.capability("Web").unwrap().tool(tool).unwrap().ret;
    let Type::Refined { defines, .. } = ret else { panic!("not refined: {ret}") };
    defines.iter().map(|d| (d.measure.clone(), cordon_syntax::print::expr(&d.value).unwrap())).collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(m, v)| (m.to_string(), v.to_string())).collect()
}

#[test]
fn a_refinement_lists_the_measures_its_conjuncts_define() {
    let declared = checked("s");
    // `age(s2) > 0` bounds the measure without defining it.
    let expected = [("tainted", "tainted(s)"), ("closed", "false"), ("fresh", "true")];
    assert_eq!(defined(&declared, "next"), pairs(&expected));
    assert_eq!(defined(&declared, "flip"), pairs(&[("tainted", "tainted(s)")]), "either side of `==`");
}

#[test]
fn declaring_the_program_gives_what_checking_it_does() {
    let plan = "type Pair = (Int, Money)\nenum Mark { Dot(Pair) }\ns";
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let parsed = cordon_syntax::parse(sources.add("plan.cord", plan), plan).module;
    let options = CheckOptions::default();
    let declared = declare_program(&sources, &[policy], Some(&parsed), &options);
    assert_eq!(*declared, checked(plan));
    assert_eq!(declared.enumeration("Mark").unwrap().variants[0].payload[0].to_string(), "(Int, Decimal)");
    // A plan of constants declares no type and no function: the policies' declarations, kept
    // from their check.
    let constants = "const k: Money = 1d\ns";
    let parsed = cordon_syntax::parse(sources.add("constants.cord", constants), constants).module;
    assert_eq!(*declare_program(&sources, &[policy], Some(&parsed), &options), checked(constants));
    assert_eq!(*declare_program(&sources, &[policy], None, &options), checked(constants));
    // A plan of functions too: what is compiled from it reads no function's signature, so
    // the plan's are not declared (a checked program's declarations have them).
    let functions = "fn f() -> Money { 1d }\ns";
    let file = sources.add("functions.cord", functions);
    let parsed = cordon_syntax::parse(file, functions).module;
    let declared = declare_program(&sources, &[policy], Some(&parsed), &options);
    assert!(declared.function("f").is_none());
    assert_eq!(*declared, checked(constants));
    let outcome = check(&sources, &[policy], Some(file), &options);
    let f = outcome.program.unwrap().declarations().function("f").cloned().unwrap();
    assert_eq!((f.params.len(), &f.ret, f.span.file), (0, &Type::Decimal, file));
    // A plan the checker rejects still has its declarations.
    let rejected = "type Pair = (Int, Money)\nnope";
    let parsed = cordon_syntax::parse(sources.add("rejected.cord", rejected), rejected).module;
    let declared = declare_program(&sources, &[policy], Some(&parsed), &options);
    assert_eq!(declared.alias("Pair").unwrap().to_string(), "(Int, Decimal)");
}

/// The type `written` (in a cast) resolves to, against `POLICY`'s declarations and the fill
/// declarations `fill`; or its error.
fn written(fill: &str, written: &str) -> Result<String, String> {
    let source = format!("{fill}\ntype Written__ = {written}\n()");
    let module = cordon_syntax::parse(cordon_syntax::FileId(9), &source).module;
    let ty: &TypeExpr = module
        .items
        .iter()
        .find_map(|i| match &i.kind {
            ItemKind::TypeAlias { name, ty } if name.name == "Written__" => Some(ty),
            _ => None,
        })
        .unwrap();
    let local = WrittenTypes::of(&module.items[..module.items.len() - 1]);
    checked("s").resolve_written(ty, &local).map(|t| t.to_string()).map_err(|e| e.message)
}

#[test]
fn a_type_written_in_code_resolves_against_the_declarations_and_the_fills_own() {
    assert_eq!(written("", "Money"), Ok("Decimal".into()), "the policy's alias");
    assert_eq!(written("", "List[(Int, Session)]"), Ok("List[(Int, Session)]".into()));
    assert_eq!(written("type Cash = Money", "Cash"), Ok("Decimal".into()), "the fill's alias of the policy's");
    assert_eq!(written("type Money = Float", "Money"), Ok("Float".into()), "the fill's own name first");
    assert_eq!(written("", "{n: Int | n > 0}"), Ok("{n: Int | n > 0}".into()));
    assert_eq!(written("", "Nope"), Err("the type `Nope` is not defined".into()));
    assert_eq!(written("", "List"), Err("`List` needs a type argument".into()));
    assert_eq!(written("type A = B\ntype B = A", "A"), Err("this type is nested too deeply".into()));
}
