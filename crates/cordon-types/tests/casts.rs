//! What the checker records of each cast: the type written after `as`, resolved once where the
//! cast is checked (aliases expanded, a fill's own types included), kept by the cast's node for
//! the compiler (`Checked::resolved`, `CheckedFill::resolved`). In code it rejects, what it could
//! resolve is recorded too (`resolve_calls_and_casts`, for the runtime's tests of its own
//! re-checks); a fill run without the checker has its casts resolved as written instead
//! (`Casts::record_written`), and the last tests show where the two differ.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::ast::{Expr, ExprKind, ItemKind, Module};
use cordon_syntax::{FileId, SourceMap};
use cordon_types::{
    Casts, CheckOptions, Checked, CheckedFill, Declarations, Type, WrittenTypes, check, check_fill,
    resolve_calls_and_casts,
};

/// An alias of a number type, one of a refinement, a record, and a function of the policy that
/// casts.
const POLICY: &str = "
type Money = Decimal
type Positive = {n: Int | n > 0}
type Account = { owner: String, balance: Money }
fn cents(n: Int) -> Money { (n as Money) / 100d }
";

/// Every cast of `module` (its functions' bodies, then its body), in source order: the type
/// `casts` records for it, if any.
fn targets(module: &Module, casts: &Casts) -> Vec<Option<Type>> {
    fn walk(e: &Expr, casts: &Casts, out: &mut Vec<Option<Type>>) {
        if let ExprKind::Cast { .. } = e.kind {
            out.push(casts.get(e).cloned());
        }
        e.for_each_child(&mut |child| walk(child, casts, out));
    }
    let mut out = Vec::new();
    for item in &module.items {
        if let ItemKind::Fn(f) = &item.kind {
            f.body.for_each_expr(&mut |e| walk(e, casts, &mut out));
        }
    }
    module.body.for_each_expr(&mut |e| walk(e, casts, &mut out));
    out
}

/// [`targets`] as source text, `-` for a cast with none.
fn recorded(module: &Module, casts: &Casts) -> Vec<String> {
    targets(module, casts).iter().map(|t| t.as_ref().map_or("-".to_string(), Type::to_string)).collect()
}

/// A program of `POLICY` and `plan`, which the checker accepts.
struct Program {
    sources: SourceMap,
    policy: FileId,
    checked: Checked,
}

fn accepted(plan: &str) -> Program {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("rejected: {:?}", outcome.diagnostics) };
    Program { sources, policy, checked }
}

impl Program {
    /// `text` checked as the fill of the plan's first hole: the fill, or its errors' codes.
    fn fill(&mut self, text: &str) -> (Module, Result<CheckedFill, Vec<String>>) {
        let file = self.sources.add("fill.cord", text);
        let outcome = check_fill(&self.sources, &self.checked, 0, file, &CheckOptions::default());
        let module = cordon_syntax::parse(file, text).module;
        match outcome.fill {
            Some(fill) => (module, Ok(fill)),
            None => (module, Err(outcome.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect())),
        }
    }
}

/// Every cast of `module`'s body resolved as written, against `declared` and the module's own
/// types, and recorded: what the runtime does with a fill no check resolved.
fn written(module: &Module, declared: &Declarations) -> Casts {
    fn walk(e: &Expr, declared: &Declarations, local: &WrittenTypes, casts: &mut Casts) {
        if let ExprKind::Cast { ty, .. } = &e.kind {
            // A type that does not resolve is left out, as the checker leaves it out.
            let _ = casts.record_written(e, ty, declared, local);
        }
        e.for_each_child(&mut |child| walk(child, declared, local, casts));
    }
    let local = WrittenTypes::of(&module.items);
    let mut casts = Casts::default();
    module.body.for_each_expr(&mut |e| walk(e, declared, &local, &mut casts));
    casts
}

#[test]
fn a_cast_records_the_type_its_target_names_with_aliases_expanded() {
    let plan = "type Half = Float
fn half(n: Int) -> Float { (n as Half) / 2.0 }
to_string(3 as Money) + to_string(half(1)) + to_string(2.5 as Int)";
    let program = accepted(plan);
    let casts = &program.checked.resolved().casts;
    let plan = program.checked.plan().unwrap();
    assert_eq!(recorded(plan, casts), ["Float", "Decimal", "Int"], "the plan's alias, the policy's, a builtin");
    assert_eq!(targets(plan, casts)[1], Some(Type::Decimal));
    assert_eq!(recorded(&program.checked.policies()[0], casts), ["Decimal"], "a policy's function's cast");
}

#[test]
fn a_fills_casts_are_recorded_with_the_fill_and_its_own_types() {
    let mut program = accepted(r#"let amount: Decimal = agent[Decimal]("an amount"); amount"#);
    let (module, fill) = program.fill("type Cents = Int\nlet c = 250 as Cents;\n(c as Money) / 100d");
    let fill = fill.unwrap();
    assert_eq!(recorded(&module, &fill.resolved().casts), ["Int", "Decimal"]);
    assert_eq!(
        recorded(&module, &program.checked.resolved().casts),
        ["-", "-"],
        "the program's record has none of them"
    );
}

/// A fill may not declare a type under a name the program declares: the checker refuses the
/// fill and keeps the program's meaning of the name, which is what it records for the fill's
/// cast. Resolved as written (a fill the runtime's tests run without the checker), the name is
/// the fill's own record: the one case where the two differ, which is why such a fill is the
/// only code whose casts the runtime resolves itself.
#[test]
fn a_record_a_fill_declares_over_the_policys_name_is_refused_and_the_checker_keeps_the_policys() {
    let mut program = accepted(r#"let amount: Decimal = agent[Decimal]("an amount"); amount"#);
    let (module, fill) = program.fill("type Money = { cents: Int }\n1 as Money");
    assert_eq!(fill.unwrap_err(), ["duplicate-definition"]);
    let casts = resolve_calls_and_casts(&program.sources, &[program.policy], Some(module.file)).casts;
    assert_eq!(targets(&module, &casts), [Some(Type::Decimal)]);
    let as_written = written(&module, program.checked.declarations());
    assert_eq!(targets(&module, &as_written), [Some(Type::Record("Money".into()))]);
    // A record of the fill's own under a new name: `as` cannot convert to it, and what the
    // checker resolved is recorded all the same, as written resolves it.
    let (module, fill) = program.fill("type Box = { n: Int }\n1 as Box");
    assert_eq!(fill.unwrap_err(), ["type-mismatch"]);
    let casts = resolve_calls_and_casts(&program.sources, &[program.policy], Some(module.file)).casts;
    assert_eq!(targets(&module, &casts), [Some(Type::Record("Box".into()))]);
    assert_eq!(targets(&module, &written(&module, program.checked.declarations())), targets(&module, &casts));
}

/// `as` converts a number and proves nothing, so the checker refuses a refined target, written
/// in place or through an alias; what it resolved the target to is recorded all the same, with
/// its predicate. A target that does not resolve is not recorded.
#[test]
fn a_refined_cast_target_is_refused_and_recorded_with_its_refinement() {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let text = "let a = 1 as {n: Int | n > 0};\nlet b = 2 as Positive;\nlet c = 3 as Nope;\n(a, b, c)";
    let plan = sources.add("plan.cord", text);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let codes: Vec<&str> = outcome.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["type-mismatch", "type-mismatch", "undefined-type"]);
    let casts = resolve_calls_and_casts(&sources, &[policy], Some(plan)).casts;
    let module = cordon_syntax::parse(plan, text).module;
    assert_eq!(recorded(&module, &casts), ["{n: Int | n > 0}", "{n: Int | n > 0}", "-"]);
    let Some(Type::Refined { var, base, text, defines, .. }) = &targets(&module, &casts)[0] else {
        panic!("not refined: {:?}", targets(&module, &casts))
    };
    assert_eq!((var.as_str(), &**base, &**text, defines.len()), ("n", &Type::Int, "n > 0", 0));
}
