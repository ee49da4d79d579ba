//! Lowering calls of builtins and methods. A builtin that takes a function (`map`, `fold`,
//! `sort_by`, ..) becomes a loop that calls it on each element, so that a tool call inside the
//! function suspends the run like any other; a closure written in place is compiled inline.
//! A method call whose receiver is a capability calls its tool.

use cordon_syntax::ast::{ClosureParam, Expr};
use cordon_syntax::{Builtin, Span};

use std::sync::Arc;

use cordon_types::node::Otherwise;

use super::{Compiler, Res};
use crate::code::{MethodTarget, Op, Over, Pat, Slot};
use crate::value::Value;

/// How a call of a builtin is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// Its arguments, then `Op::Builtin`.
    Apply,
    /// A loop that calls its function argument on each element, so that a tool call inside the
    /// function suspends the run like any other: `map`, `filter`, `fold`, `any`, `all`, and
    /// `and_then` and `map_err`, which take an option or a result apart as `map` does.
    Loop,
    /// A loop computing each element's key (`sort_by(xs, key)`), then `Op::Builtin` over the
    /// keys, and over the list too where the result holds its `elements` (all but `count_by`).
    Keyed { elements: bool },
}

fn form(b: Builtin) -> Form {
    use Builtin::*;
    match b {
        Map | Filter | Fold | Any | All | AndThen | MapErr => Form::Loop,
        SortBy | MinBy | MaxBy | GroupBy => Form::Keyed { elements: true },
        CountBy => Form::Keyed { elements: false },
        Len | IsEmpty | MapFrom | UnwrapOr | Get | Push | Concat | Contains | Sum | Reverse | Range | First | Last
        | Sort | Unique | Enumerate | Zip | Take | Skip | StartsWith | EndsWith | ToUpper | ToLower | Trim | Split
        | Join | ToString | ParseInt | ParseDecimal | Find | Replace | Slice | Lines | Words | Repeat | PadLeft
        | PadRight | Matches | FindAll | Captures | Insert | Remove | ContainsKey | Keys | Values | Entries | OkOr
        | IsSome | IsNone | IsOk | IsErr | Abs | Min | Max | Round | DivRound | ParseDate | ParseDateTime | Seconds
        | Minutes | Hours | Days | AddDays | DaysBetween | Unlabel | Label(_) => Form::Apply,
    }
}

impl Compiler {
    pub(super) fn method(
        &mut self,
        receiver: &Expr,
        name: &str,
        args: &[Expr],
        otherwise: Otherwise,
        span: Span,
    ) -> Res {
        // A capability's receiver makes any method call a call of its tool (`Op::Method` looks
        // at the receiver first); otherwise the method is what the checker resolved it to.
        let otherwise = match otherwise {
            // Builtins that call a function compile to loops.
            Otherwise::Builtin(b) if form(b) != Form::Apply => {
                let argv: Vec<&Expr> = std::iter::once(receiver).chain(args).collect();
                return self.builtin(b, &argv, span);
            }
            Otherwise::Builtin(b) => MethodTarget::Builtin(b),
            Otherwise::Function(f) => self.globals.fns.get(f).map_or(MethodTarget::None, |&f| MethodTarget::Func(f)),
            Otherwise::Nothing => MethodTarget::None,
        };
        self.expr(receiver)?;
        self.exprs(args)?;
        self.emit(Op::Method { name: name.into(), argc: args.len() as u16, otherwise }, span);
        Ok(())
    }

    pub(super) fn builtin(&mut self, b: Builtin, args: &[&Expr], span: Span) -> Res {
        let form = form(b);
        if form == Form::Apply {
            for a in args {
                self.expr(a)?;
            }
            self.emit(Op::Builtin { builtin: b, argc: args.len() as u16 }, span);
            return Ok(());
        }
        let (list_expr, rest) = match args.split_first() {
            Some(x) => x,
            None => return self.err(span, "a builtin without arguments"),
        };
        let want = if b == Builtin::Fold { 2 } else { 1 };
        if rest.len() != want {
            return self.err(span, "wrong number of arguments");
        }
        // A loop over `range(a, b)` builds no list where nothing needs it after the loop (the
        // keyed builtins but `count_by` order the list by its keys; `and_then` and `map_err`
        // take no list).
        let ranges = form != (Form::Keyed { elements: true }) && !matches!(b, Builtin::AndThen | Builtin::MapErr);
        let (over, elem) = self.loop_slots(list_expr, ranges, span)?;
        let acc = self.new_slot();
        if matches!(b, Builtin::Map | Builtin::AndThen | Builtin::MapErr) {
            // `map` serves an Option or a Result too, told apart only at run time: its function
            // is called from a slot in the arm of each variant. In the list loop a literal
            // closure runs in place (see `inline_call`), unless it holds a hole (a hole's site
            // is compiled once). Over a range, only the list loop.
            let f = self.new_slot();
            let holes = self.holes.len();
            self.expr(rest[0])?;
            self.emit(Op::Store(f), span);
            let inline = self.literal_closure(rest[0], 1).filter(|_| self.holes.len() == holes);
            return match over {
                Over::List { list, index } => self.variant_combinator(b, [list, index, elem], acc, (f, inline), span),
                Over::Range { .. } => {
                    self.map_loop(over, elem, acc, (f, inline), span)?;
                    self.emit(Op::JoinPc, span);
                    Ok(())
                }
            };
        }
        let f = rest[want - 1];
        // A literal closure runs in the loop itself (see `inline_call`); any other function is
        // called, from a slot.
        let inline = self.literal_closure(f, want);
        match b {
            Builtin::Fold => {
                self.expr(rest[0])?;
                self.emit(Op::Store(acc), span);
            }
            Builtin::Any | Builtin::All => {
                self.emit(Op::Push(Value::Bool(b == Builtin::All)), span);
                self.emit(Op::Store(acc), span);
            }
            _ => {}
        }
        let f_slot = match inline {
            Some(_) => None,
            None => {
                let slot = self.new_slot();
                self.expr(f)?;
                self.emit(Op::Store(slot), span);
                Some(slot)
            }
        };
        // `map`, `filter` and the keyed builtins (their keys) build a list.
        let builds_list = matches!(b, Builtin::Map | Builtin::Filter) || matches!(form, Form::Keyed { .. });
        if builds_list {
            // `map` and the keys make one element for each; `filter` may keep few.
            let sized_like = (b != Builtin::Filter).then_some(over);
            self.emit(Op::ListStart { acc, sized_like }, span);
        }
        let start = self.target();
        let next = self.emit(Op::IterNext { over, elem, exit: 0, tick: inline.is_some() }, span);
        // The function's arguments: the accumulator (`fold`), then the element.
        let args: &[Slot] = if b == Builtin::Fold { &[acc, elem] } else { &[elem] };
        match (inline, f_slot) {
            (Some((params, body)), _) => self.inline_call_moving(params, args, body, b == Builtin::Fold)?,
            (None, Some(slot)) => {
                // The accumulator is stored again after the call, and only `filter` reads the
                // element again (to keep it): the others move them into the call.
                for &a in args {
                    self.emit(if b == Builtin::Filter { Op::Load(a) } else { Op::Take(a) }, span);
                }
                self.emit(Op::CallSlot { slot, argc: args.len() as u16 }, span);
            }
            (None, None) => return self.err(span, "a builtin without its function"),
        }
        match b {
            Builtin::Filter => self.emit(Op::ListPushIf { acc, elem }, span),
            Builtin::Any => self.emit(Op::Accumulate { acc, all: false }, span),
            Builtin::All => self.emit(Op::Accumulate { acc, all: true }, span),
            Builtin::Fold => self.emit(Op::Store(acc), span),
            _ => self.emit(Op::ListPush, span),
        };
        self.emit(Op::Loop(start), span);
        self.patch(next);
        self.emit(if builds_list { Op::ListEnd(acc) } else { Op::Take(acc) }, span);
        self.emit(Op::JoinPc, span);
        if form == (Form::Keyed { elements: true }) {
            let Over::List { list, .. } = over else { return self.err(span, "a keyed builtin without its list") };
            // The keys, as `map` computed them; the builtin orders the list by them.
            self.emit(Op::Load(list), span);
            self.emit(Op::Builtin { builtin: b, argc: 2 }, span);
        } else if form == (Form::Keyed { elements: false }) {
            self.emit(Op::Builtin { builtin: b, argc: 1 }, span);
        }
        Ok(())
    }

    /// `map`, `and_then` and `map_err` on an `Option` or a `Result` (in `value`, the function
    /// in `f`, and the literal closure it is, if it runs in place in `map`'s list loop): one arm per variant, as a `match` would take it apart, so the result depends on
    /// the value's label through the program counter (raised by `loop_slots`). `map` on anything
    /// else is `map` on a list: the type is not known here, so it is told at run time.
    fn variant_combinator(
        &mut self,
        b: Builtin,
        slots: [Slot; 3],
        acc: Slot,
        (f, inline): (Slot, Option<(&[ClosureParam], &Expr)>),
        span: Span,
    ) -> Res {
        let [value, index, payload] = slots;
        // (enum, variant, whether it holds a payload, whether `f` is applied to it, and
        // whether `f`'s result is the whole result rather than the new payload).
        let arms: [(&str, &str, bool, bool, bool); 4] = [
            ("Option", "Some", true, b != Builtin::MapErr, b == Builtin::AndThen),
            ("Option", "None", false, false, false),
            ("Result", "Ok", true, b != Builtin::MapErr, b == Builtin::AndThen),
            ("Result", "Err", true, b == Builtin::MapErr, false),
        ];
        self.emit(Op::Load(value), span);
        let mut to_end = Vec::new();
        for (enum_name, name, holds, apply, whole) in arms {
            let args = if holds { vec![Pat::Bind(payload)] } else { Vec::new() };
            let pat = Pat::Variant { enum_name: enum_name.into(), name: name.into(), args };
            let fail = self.emit(Op::Match { pat: Arc::new(pat), fail: 0 }, span);
            self.emit(Op::Pop, span);
            if holds {
                self.emit(Op::Take(payload), span);
            }
            if apply {
                self.emit(Op::CallSlot { slot: f, argc: 1 }, span);
            }
            if !whole {
                let arity = u16::from(holds);
                self.emit(Op::MakeVariant { enum_name: enum_name.into(), name: name.into(), arity }, span);
            }
            to_end.push(self.emit(Op::Jump(0), span));
            self.patch(fail);
        }
        self.emit(Op::Pop, span);
        if b == Builtin::Map {
            self.map_loop(Over::List { list: value, index }, payload, acc, (f, inline), span)?;
        } else {
            self.emit(Op::Fail(format!("`{}` needs an Option or a Result", b.name()).into()), span);
        }
        for j in to_end {
            self.patch(j);
        }
        self.emit(Op::JoinPc, span);
        Ok(())
    }

    /// `map`'s loop over a list or a range: the function in slot `f` applied to each element
    /// (in `elem`), or the literal closure `inline` it is run in place; the new list is left on
    /// the stack.
    fn map_loop(
        &mut self,
        over: Over,
        elem: Slot,
        acc: Slot,
        (f, inline): (Slot, Option<(&[ClosureParam], &Expr)>),
        span: Span,
    ) -> Res {
        self.emit(Op::ListStart { acc, sized_like: Some(over) }, span);
        let start = self.target();
        let next = self.emit(Op::IterNext { over, elem, exit: 0, tick: inline.is_some() }, span);
        match inline {
            Some((params, body)) => self.inline_call(params, &[elem], body)?,
            None => {
                self.emit(Op::Take(elem), span);
                self.emit(Op::CallSlot { slot: f, argc: 1 }, span);
            }
        }
        self.emit(Op::ListPush, span);
        self.emit(Op::Loop(start), span);
        self.patch(next);
        self.emit(Op::ListEnd(acc), span);
        Ok(())
    }

    /// A call of a literal closure, compiled in place: its parameters are names for the slots
    /// `args` (which the body cannot change: bindings are immutable and every `let` takes a new
    /// slot), and its body's value is left on the stack as the call's would be. The closure
    /// value would carry the bottom label, so its call would raise nothing and label nothing;
    /// the body sees the same names (the closure's own and those around it). No frame is
    /// pushed; the loop's `IterNext` charges the call's unit of fuel (`tick`).
    fn inline_call(&mut self, params: &[ClosureParam], args: &[Slot], body: &Expr) -> Res {
        self.inline_call_moving(params, args, body, false)
    }

    /// As [`Compiler::inline_call`]; with `moves_first`, a body that reads its first parameter
    /// once (a fold's accumulator, stored again right after the body) moves it out where it
    /// reads it, so that a text or a list the body extends is extended in place, not copied
    /// at every step.
    fn inline_call_moving(&mut self, params: &[ClosureParam], args: &[Slot], body: &Expr, moves_first: bool) -> Res {
        let depth = self.body().scope.len();
        for (p, &slot) in params.iter().zip(args) {
            self.body().scope.push((p.name.name.clone(), slot));
        }
        let first = params.first().zip(args.first()).filter(|_| moves_first);
        self.body().take_once = first.filter(|(p, _)| body.reads_once(&p.name.name) == Some(1)).map(|(_, &s)| s);
        let result = self.expr(body);
        self.body().take_once = None;
        self.body().scope.truncate(depth);
        result
    }
}
