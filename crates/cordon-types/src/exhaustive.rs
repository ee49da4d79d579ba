//! Exhaustiveness of `match`: the usual pattern-matrix algorithm, producing a missing pattern
//! to show. Arms with a guard do not count. The search has a step budget; running out of it is
//! a rejection (an unproven match is never assumed complete).

use cordon_syntax::ast::{Arm, PatternKind};
use cordon_syntax::{Code, Span};

use crate::state::Checker;
use crate::ty::Ty;

/// A pattern reduced to what exhaustiveness needs.
#[derive(Clone, Debug)]
enum Pat {
    Wild,
    /// A constructor by name (variant, `true`, a literal, `()`, `(..)` for tuples) and its
    /// sub-patterns.
    Ctor(String, Vec<Pat>),
}

const STEP_BUDGET: usize = 20_000;

struct Search<'c, 'a> {
    checker: &'c Checker<'a>,
    steps: usize,
}

impl Checker<'_> {
    pub fn check_exhaustive(&mut self, ty: &Ty, arms: &[Arm], span: Span) {
        let rows: Vec<Vec<Pat>> = arms.iter().filter(|a| a.guard.is_none()).map(|a| vec![lower(&a.pat.kind)]).collect();
        let ty = self.resolve(ty);
        let mut search = Search { checker: self, steps: 0 };
        let missing = search.missing(&rows, &[ty]);
        let exhausted = search.steps > STEP_BUDGET;
        if exhausted {
            self.error(Code::NonExhaustiveMatch, span, "this `match` is too complex to check for missing cases").help =
                Some("add a final `_ => ..` arm".into());
        } else if let Some(w) = missing {
            let shown = w.first().map_or_else(|| "_".to_string(), show);
            self.error(Code::NonExhaustiveMatch, span, format!("this `match` does not handle `{shown}`")).help =
                Some(format!("add an arm for `{shown}`, or `_ => ..`"));
        }
    }
}

fn lower(p: &PatternKind) -> Pat {
    match p {
        PatternKind::Wild | PatternKind::Bind(_) | PatternKind::Error => Pat::Wild,
        PatternKind::Int(n) => Pat::Ctor(n.to_string(), vec![]),
        PatternKind::Str(s) => Pat::Ctor(format!("{s:?}"), vec![]),
        PatternKind::Bool(b) => Pat::Ctor(b.to_string(), vec![]),
        PatternKind::Unit => Pat::Ctor("()".into(), vec![]),
        PatternKind::Tuple(ps) => Pat::Ctor("(..)".into(), ps.iter().map(|p| lower(&p.kind)).collect()),
        PatternKind::Variant { name, args, .. } => {
            Pat::Ctor(name.name.clone(), args.iter().map(|p| lower(&p.kind)).collect())
        }
    }
}

fn show(p: &Pat) -> String {
    match p {
        Pat::Wild => "_".into(),
        Pat::Ctor(n, args) if n == "(..)" => {
            format!("({})", args.iter().map(show).collect::<Vec<_>>().join(", "))
        }
        Pat::Ctor(n, args) if args.is_empty() => n.clone(),
        Pat::Ctor(n, args) => format!("{n}({})", args.iter().map(show).collect::<Vec<_>>().join(", ")),
    }
}

impl Search<'_, '_> {
    /// The constructors of a type with their field types, if the type has finitely many.
    fn constructors(&self, ty: &Ty) -> Option<Vec<(String, Vec<Ty>)>> {
        let c = self.checker;
        Some(match c.resolve(ty).base() {
            Ty::Bool => vec![("true".into(), vec![]), ("false".into(), vec![])],
            Ty::Unit => vec![("()".into(), vec![])],
            Ty::Tuple(ts) => vec![("(..)".into(), ts.clone())],
            Ty::Option(t) => vec![("None".into(), vec![]), ("Some".into(), vec![(**t).clone()])],
            Ty::Result(t, e) => vec![("Ok".into(), vec![(**t).clone()]), ("Err".into(), vec![(**e).clone()])],
            Ty::Enum(n) => c.enum_variants(n)?.to_vec(),
            _ => return None,
        })
    }

    /// A list of patterns (one per column) that no row matches, if there is one.
    fn missing(&mut self, rows: &[Vec<Pat>], tys: &[Ty]) -> Option<Vec<Pat>> {
        self.steps += 1;
        if self.steps > STEP_BUDGET {
            return None;
        }
        let Some((ty, rest_tys)) = tys.split_first() else {
            return if rows.is_empty() { Some(vec![]) } else { None };
        };
        let used: Vec<&str> = rows
            .iter()
            .filter_map(|r| match r.first() {
                Some(Pat::Ctor(n, _)) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        let ctors = self.constructors(ty);
        let complete =
            ctors.as_ref().is_some_and(|cs| !cs.is_empty() && cs.iter().all(|(n, _)| used.contains(&n.as_str())));
        if let (true, Some(ctors)) = (complete, ctors.as_ref()) {
            for (name, fields) in ctors {
                let arity = fields.len();
                let specialized: Vec<Vec<Pat>> = rows
                    .iter()
                    .filter_map(|r| {
                        let (head, tail) = r.split_first()?;
                        let mut args = match head {
                            Pat::Wild => vec![Pat::Wild; arity],
                            Pat::Ctor(n, a) if n == name => {
                                let mut a = a.clone();
                                a.resize(arity, Pat::Wild);
                                a
                            }
                            Pat::Ctor(..) => return None,
                        };
                        args.extend(tail.iter().cloned());
                        Some(args)
                    })
                    .collect();
                let sub_tys: Vec<Ty> = fields.iter().chain(rest_tys).cloned().collect();
                if let Some(mut w) = self.missing(&specialized, &sub_tys) {
                    let rest = w.split_off(arity.min(w.len()));
                    let mut out = vec![Pat::Ctor(name.clone(), w)];
                    out.extend(rest);
                    return Some(out);
                }
                if self.steps > STEP_BUDGET {
                    return None;
                }
            }
            return None;
        }
        let default: Vec<Vec<Pat>> = rows
            .iter()
            .filter_map(|r| match r.split_first() {
                Some((Pat::Wild, tail)) => Some(tail.to_vec()),
                _ => None,
            })
            .collect();
        let mut w = self.missing(&default, rest_tys)?;
        let head = match ctors {
            Some(cs) => match cs.iter().find(|(n, _)| !used.contains(&n.as_str())) {
                Some((n, fields)) => Pat::Ctor(n.clone(), vec![Pat::Wild; fields.len()]),
                None => Pat::Wild,
            },
            None => Pat::Wild,
        };
        w.insert(0, head);
        Some(w)
    }
}
