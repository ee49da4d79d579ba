//! Lowering calls and the functions they call: a call of a name compiles to what the checker
//! resolved it to (a function, a measure, a constructor, a builtin or a value); a closure
//! becomes code of its own with the captures it lists; a hole calls the model's fill with the
//! names visible where it is written.

use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::{ClosureParam, Expr};

use super::body::Body;
use cordon_types::node::Called;

use super::{Compiler, Res};
use crate::code::{Access, CaptureFrom, HoleScope, Op};

impl Compiler {
    /// A call of `callee`, as the checker resolved it.
    pub(super) fn call(&mut self, callee: Called, args: &[Expr], span: Span) -> Res {
        match callee {
            Called::Function(name) => match self.globals.fns.get(&name.name) {
                Some(&func) => {
                    self.exprs(args)?;
                    self.emit(Op::Call { func, argc: args.len() as u16 }, span);
                }
                // A function no module declares: whatever else the name is, called.
                None => {
                    self.load_name(&name.name, name.span)?;
                    self.exprs(args)?;
                    self.emit(Op::CallValue(args.len() as u16), span);
                }
            },
            Called::Measure(name) if !self.in_refinement => {
                let message = format!("the measure `{}` exists only in refinements", name.name);
                self.emit(Op::Fail(message.into()), span);
            }
            Called::Measure(name) => {
                self.exprs(args)?;
                self.emit(Op::Measure { name: name.name.as_str().into(), argc: args.len() as u16 }, span);
            }
            Called::Builtin(b) => {
                let argv: Vec<&Expr> = args.iter().collect();
                return self.builtin(b, &argv, span);
            }
            Called::Value(callee) => return self.call_value(callee, args, span),
        }
        Ok(())
    }

    /// A call of whatever value `callee` evaluates to.
    pub(super) fn call_value(&mut self, callee: &Expr, args: &[Expr], span: Span) -> Res {
        self.expr(callee)?;
        self.exprs(args)?;
        self.emit(Op::CallValue(args.len() as u16), span);
        Ok(())
    }

    /// A closure: its body compiled as code of its own, and where the closure, when made, gets
    /// each value its body captures.
    pub(super) fn closure(&mut self, params: &[ClosureParam], body: &Expr, span: Span) -> Res {
        self.bodies.push(Body::new(true));
        for p in params {
            self.bind(&p.name.name);
        }
        let result = self.expr(body);
        let b = self.bodies.pop().expect("pushed above");
        result?;
        let captures: Arc<[CaptureFrom]> = b
            .captures
            .iter()
            .map(|(_, a)| match a {
                Access::Slot(s) => CaptureFrom::Slot(*s),
                Access::Capture(i) => CaptureFrom::Capture(*i),
            })
            .collect();
        let code = self.finish("<closure>", params.len() as u16, b);
        self.emit(Op::MakeClosure { code, captures }, span);
        Ok(())
    }

    /// A hole: its arguments, and the names visible here, which its fill may read.
    pub(super) fn hole(&mut self, args: &[Expr], span: Span) -> Res {
        self.exprs(args)?;
        let names = self.visible_names();
        let site = self.holes.len() as u32;
        self.holes.push(HoleScope { span, names });
        self.emit(Op::Hole { site, argc: args.len() as u16 }, span);
        Ok(())
    }
}
