//! What a checked program declares, as the checker resolved it (`Checked::declarations`,
//! `declare`): aliases expanded, each name the kind of type it is, each tool's signature and the
//! entry's, so no later stage resolves a type name again.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_label::Tier;
use cordon_syntax::SourceMap;
use cordon_syntax::ast::Expr;
use cordon_types::{ApprovalTier, CheckOptions, Declarations, LabelKey, Type, check, declare};

const POLICY: &str = "
linear type Session
measure tainted(s: Session) -> Bool = false
type Name = String
type Short = {n: Name | len(n) < 10}
type Kept = {s: Session | !tainted(s)}
type Repo = { name: Name, owner: Short }
opaque type Issue = { id: Int, title: Name }
opaque type Trusted[T]
type Holder = { s: Session, n: Int }
enum Status { Open, Closed(Int, Option[Name]), Moved(Repo) }
enum Slot { Empty, Full(Holder) }
capability GitHub {
  tool create_issue(s: Kept, r: Repo, title: Short) -> (Issue, Kept)
  tool status(i: Issue) -> Option[Status]
  tool vouched(i: Issue) -> Trusted[Name]
  tool note(text: String)
  tool ping() -> ()
}
entry(gh: GitHub, s: Kept) -> (Name, Session)
";

/// A plan that hands the session back.
const PLAN: &str = "(\"done\", s)";

/// The declarations of an accepted check of `policy` with `plan`.
fn checked(policy: &str, plan: &str) -> Declarations {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", policy);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(program) = outcome.program else { panic!("rejected: {:?}", outcome.diagnostics) };
    Declarations::clone(program.declarations())
}

fn shown(ty: &Type) -> String {
    ty.to_string()
}

#[test]
fn aliases_are_expanded_and_each_name_is_its_kind() {
    let declared = checked(POLICY, PLAN);
    let repo = declared.record("Repo").unwrap();
    assert!(!repo.opaque);
    let fields: Vec<(&str, String)> = repo.fields.iter().map(|f| (f.name.as_str(), shown(&f.ty))).collect();
    assert_eq!(fields, [("name", "String".to_string()), ("owner", "{n: String | len(n) < 10}".to_string())]);
    assert_eq!(repo.field("name").unwrap().ty, Type::Str, "an alias of `String` is a `String`");
    let Type::Refined { var, base, text, .. } = &repo.field("owner").unwrap().ty else { panic!("not refined") };
    assert_eq!((var.as_str(), &**base, &**text), ("n", &Type::Str, "len(n) < 10"));

    let issue = declared.record("Issue").unwrap();
    assert!(issue.opaque, "an opaque record is a record only the host makes");
    assert_eq!(issue.field("title").unwrap().ty, Type::Str);

    let status = declared.enumeration("Status").unwrap();
    let variants: Vec<(&str, Vec<String>)> =
        status.variants.iter().map(|v| (v.name.as_str(), v.payload.iter().map(shown).collect())).collect();
    assert_eq!(
        variants,
        [
            ("Open", vec![]),
            ("Closed", vec!["Int".to_string(), "Option[String]".to_string()]),
            ("Moved", vec!["Repo".to_string()])
        ]
    );
    assert_eq!(status.variants[2].payload[0], Type::Record("Repo".into()));

    assert!(declared.is_linear_type("Session") && !declared.is_linear_type("Kept"));
    assert_eq!(declared.linear_types().collect::<Vec<_>>(), ["Session"]);
    assert_eq!(declared.opaque_type("Trusted"), Some(1));
    assert_eq!(declared.opaque_type("Issue"), None, "an opaque record is a record");
    assert_eq!(shown(declared.alias("Kept").unwrap()), "{s: Session | !tainted(s)}");
    assert_eq!(declared.alias("Name"), Some(&Type::Str));
}

/// A type's head is the name it is written with, under any refinement and through an alias
/// (which is its expansion); the types written by their parts have none.
#[test]
fn each_type_is_written_with_its_head() {
    let declared = checked(POLICY, PLAN);
    let create = declared.capability("GitHub").unwrap().tool("create_issue").unwrap();
    let heads: Vec<Option<&str>> = create.params.iter().map(|p| p.ty.head()).collect();
    assert_eq!(heads, [Some("Session"), Some("Repo"), Some("String")], "a refined alias, a record, an alias");
    let vouched = &declared.capability("GitHub").unwrap().tool("vouched").unwrap().ret;
    assert_eq!((vouched.head(), vouched.to_string().as_str()), (Some("Trusted"), "Trusted[String]"));
    assert_eq!(declared.entry().unwrap().params[0].ty.head(), Some("GitHub"));
    let status = &declared.capability("GitHub").unwrap().tool("status").unwrap().ret;
    assert_eq!((status.head(), status.to_string().as_str()), (Some("Option"), "Option[Status]"));
    let headless = [&create.ret, &Type::Unit, &Type::Fn(vec![Type::Int], Box::new(Type::Bool))];
    assert_eq!(headless.map(Type::head), [None, None, None], "a tuple, `()`, a function type");
    assert_eq!(Type::Map(Box::new(Type::Str), Box::new(Type::Decimal)).to_string(), "Map[String, Decimal]");
    assert_eq!(Type::Labeled(Box::new(Type::Int)).head(), Some("Labeled"));
}

#[test]
fn a_linear_type_is_recognised_through_an_alias_and_inside_data() {
    let declared = checked(POLICY, PLAN);
    let kept = declared.alias("Kept").unwrap();
    assert_eq!(kept.base(), &Type::Linear("Session".into()), "a refined alias of a linear type is linear");
    assert!(declared.holds_linear(kept));
    assert!(declared.holds_linear(&Type::Record("Holder".into())), "a record with a linear field");
    assert!(declared.holds_linear(&Type::Enum("Slot".into())), "an enum whose payload holds one");
    assert!(declared.holds_linear(&Type::Option(Box::new(Type::Record("Holder".into())))));
    assert!(!declared.holds_linear(&Type::Record("Repo".into())));
    assert!(!declared.holds_linear(&Type::Enum("Status".into())));
    assert!(!declared.holds_linear(&Type::Capability("GitHub".into())));
}

#[test]
fn each_tool_has_its_resolved_signature_in_the_order_declared() {
    let declared = checked(POLICY, PLAN);
    let github = declared.capability("GitHub").unwrap();
    let names: Vec<&str> = github.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["create_issue", "status", "vouched", "note", "ping"]);
    let create = github.tool("create_issue").unwrap();
    let params: Vec<(&str, String)> = create.params.iter().map(|p| (p.name.as_str(), shown(&p.ty))).collect();
    assert_eq!(
        params,
        [
            ("s", "{s: Session | !tainted(s)}".to_string()),
            ("r", "Repo".to_string()),
            ("title", "{n: String | len(n) < 10}".to_string())
        ]
    );
    assert_eq!(shown(&create.ret), "(Issue, {s: Session | !tainted(s)})");
    let Type::Tuple(items) = &create.ret else { panic!("not a tuple: {}", create.ret) };
    assert_eq!(items[0], Type::Record("Issue".into()));
    assert_eq!(items[1].base(), &Type::Linear("Session".into()));
    let status = github.tool("status").unwrap();
    assert_eq!(status.ret, Type::Option(Box::new(Type::Enum("Status".into()))));
    let vouched = github.tool("vouched").unwrap();
    assert_eq!(vouched.ret, Type::Opaque("Trusted".into(), vec![Type::Str]));
    assert_eq!(shown(&vouched.ret), "Trusted[String]");
    assert_eq!(github.tool("note").unwrap().ret, Type::Unit, "a tool that declares no result returns `()`");
    assert!(!github.tool("note").unwrap().declares_result);
    let ping = github.tool("ping").unwrap();
    assert_eq!(ping.ret, Type::Unit);
    assert!(ping.declares_result, "`-> ()` is a declared result");
    assert!(create.declares_result);
    assert!(github.tool("missing").is_none());
    assert_eq!(declared.capabilities().count(), 1);
}

#[test]
fn the_entry_has_its_parameters_and_result_resolved() {
    let declared = checked(POLICY, PLAN);
    let entry = declared.entry().unwrap();
    let params: Vec<(&str, String)> = entry.params.iter().map(|p| (p.name.as_str(), shown(&p.ty))).collect();
    assert_eq!(params, [("gh", "GitHub".to_string()), ("s", "{s: Session | !tainted(s)}".to_string())]);
    assert_eq!(entry.params[0].ty, Type::Capability("GitHub".into()));
    assert_eq!(entry.ret, Type::Tuple(vec![Type::Str, Type::Linear("Session".into())]));
    assert_eq!(shown(&entry.ret), "(String, Session)");
}

#[test]
fn the_plan_declares_its_own_records_and_enums_too() {
    let plan = "type Pair = (Int, Name)\ntype Point = { at: Pair, labels: List[Short] }\nenum Mark { Dot(Point) }\n(\"done\", s)";
    let declared = checked(POLICY, plan);
    let point = declared.record("Point").unwrap();
    assert_eq!(shown(&point.fields[0].ty), "(Int, String)");
    assert_eq!(shown(&point.fields[1].ty), "List[{n: String | len(n) < 10}]");
    assert_eq!(declared.enumeration("Mark").unwrap().variants[0].payload, [Type::Record("Point".into())]);
}

#[test]
fn the_policies_and_the_plan_declare_their_functions_with_resolved_signatures() {
    let policy = format!("{POLICY}\nfn shorten(n: Name) -> Short {{ \"x\" }}\n");
    let plan = "fn file(gh: GitHub, s: Kept, r: Repo) -> Kept {\n  let (_, s) = gh.create_issue(s, r, shorten(r.name));\n  s\n}\nfn log(gh: GitHub, text: Name) { gh.note(text) }\n(\"done\", s)";
    let declared = checked(&policy, plan);
    let names: Vec<&str> = declared.functions().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["file", "log", "shorten"], "by name, the policies' and the plan's");
    let file = declared.function("file").unwrap();
    let params: Vec<(&str, String)> = file.params.iter().map(|p| (p.name.as_str(), shown(&p.ty))).collect();
    assert_eq!(
        params,
        [("gh", "GitHub".to_string()), ("s", "{s: Session | !tainted(s)}".to_string()), ("r", "Repo".to_string())]
    );
    assert_eq!(file.params[0].ty, Type::Capability("GitHub".into()));
    assert_eq!(file.ret.base(), &Type::Linear("Session".into()));
    assert_eq!(declared.function("log").unwrap().ret, Type::Unit, "a function that declares no result returns `()`");
    assert_eq!(shown(&declared.function("shorten").unwrap().ret), "{n: String | len(n) < 10}");
    assert!(declared.function("missing").is_none());
    assert!(checked(POLICY, PLAN).functions().next().is_none());
}

#[test]
fn declaring_the_policies_alone_gives_what_checking_them_does() {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let (declared, diagnostics) = declare(&sources, &[policy], &CheckOptions::default());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(declared, checked(POLICY, PLAN));
    // Again, from what the first declaration kept.
    assert_eq!(declare(&sources, &[policy], &CheckOptions::default()).0, declared);
    // Policies with an error: what resolved, and the errors.
    let broken = sources.add("broken.cord", "capability C {\n  tool t(x: Nope) -> Int\n  tool u() -> String\n}\n");
    let (declared, diagnostics) = declare(&sources, &[broken], &CheckOptions::default());
    assert_eq!(diagnostics.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(), ["undefined-type"]);
    let tools: Vec<&str> = declared.capability("C").unwrap().tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["u"], "a tool whose type has an error is left out");
}

/// A policy whose annotations say something of every kind.
const ANNOTATED: &str = r#"
opaque type Mail = {
  from: String,
  body: String @label(untrusted()) @label(secret(from)),
}
capability Mailer {
  tool send(to: String, body: String, amount: Int) -> Mail
    @label(pc = public(), body = public().join(endorsed(user())), returns = secret(user()))
    @approval(if amount > 100 { ask_always } else if to == "me" { none } else { ask })
    @card(content = body, destination = to, total = amount)
  tool read() -> Mail @approval(deny)
  tool ping()
}
release "team" to public() @approval(none)
release "org" to secret(user())
entry(m: Mailer) -> ()
"#;

fn text(e: &Expr) -> String {
    cordon_syntax::print::expr(e).unwrap()
}

#[test]
fn the_policys_annotations_are_resolved_by_what_they_say() {
    let declared = checked(ANNOTATED, "()");
    let mailer = declared.capability("Mailer").unwrap();
    let send = mailer.tool("send").unwrap().annotations.as_ref().unwrap();
    let labels: Vec<(LabelKey, String)> = send.labels.iter().map(|(k, e)| (*k, text(e))).collect();
    assert_eq!(
        labels,
        [
            (LabelKey::Pc, "public()".to_string()),
            (LabelKey::Param(1), "public().join(endorsed(user()))".to_string()),
            (LabelKey::Returns, "secret(user())".to_string())
        ],
        "each label by what it labels, in the order written"
    );
    assert!(send.label(LabelKey::Param(0)).is_none(), "a parameter the policy names no sink for");
    let Some(ApprovalTier::If { cond, then, otherwise }) = &send.approval else { panic!("{:?}", send.approval) };
    assert_eq!((text(cond), &**then), ("amount > 100".to_string(), &ApprovalTier::Is(Tier::AskAlways)));
    let ApprovalTier::If { cond, then, otherwise } = &**otherwise else { panic!("{otherwise:?}") };
    assert_eq!(text(cond), "to == \"me\"");
    assert_eq!((&**then, &**otherwise), (&ApprovalTier::Is(Tier::None), &ApprovalTier::Is(Tier::Ask)));
    let card: Vec<(&str, String)> = send.card.iter().map(|(k, e)| (k.as_str(), text(e))).collect();
    assert_eq!(card, [("content", "body".into()), ("destination", "to".into()), ("total", "amount".into())]);
    assert_eq!(send.card_line("destination").map(|e| text(e)).as_deref(), Some("to"));

    let read = mailer.tool("read").unwrap().annotations.as_ref().unwrap();
    assert_eq!((read.approval.as_ref(), read.labels.len()), (Some(&ApprovalTier::Is(Tier::Deny)), 0));
    let ping = mailer.tool("ping").unwrap().annotations.as_ref().unwrap();
    assert!(ping.approval.is_none() && ping.labels.is_empty() && ping.card.is_empty(), "{ping:?}");

    let mail = declared.record("Mail").unwrap();
    assert!(mail.field("from").unwrap().labels.is_empty());
    let body: Vec<String> = mail.field("body").unwrap().labels.iter().map(|e| text(e)).collect();
    assert_eq!(body, ["untrusted()", "secret(from)"], "every label a field is given");

    let releases: Vec<(&str, String, bool)> =
        declared.releases().iter().map(|r| (r.group.as_str(), text(&r.to), r.asks)).collect();
    assert_eq!(releases, [("team", "public()".into(), false), ("org", "secret(user())".into(), true)]);
}

#[test]
fn a_tool_whose_annotations_have_an_error_is_declared_without_them() {
    let mut sources = SourceMap::new();
    let broken = "capability C {\n  tool t(x: Int) @approval(maybe)\n  tool u(x: Int) @label(y = public())\n  \
                  tool v(x: Int) @approval(ask)\n}\n";
    let policy = sources.add("broken.cord", broken);
    let (declared, diagnostics) = declare(&sources, &[policy], &CheckOptions::default());
    assert_eq!(diagnostics.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(), ["invalid-annotation"; 2]);
    let c = declared.capability("C").unwrap();
    let annotated: Vec<(&str, bool)> = c.tools.iter().map(|t| (t.name.as_str(), t.annotations.is_some())).collect();
    assert_eq!(annotated, [("t", false), ("u", false), ("v", true)]);
}

#[test]
fn declarations_cross_threads() {
    fn send_sync<T: Send + Sync + Clone + std::fmt::Debug>() {}
    send_sync::<Declarations>();
    send_sync::<Type>();
    let declared = checked(POLICY, PLAN);
    let entry = std::thread::spawn(move || declared.entry().map(|e| e.ret.to_string())).join().unwrap();
    assert_eq!(entry.as_deref(), Some("(String, Session)"));
}
