//! Lowering the expressions that build data and take it apart: variants, tuples, lists and
//! records; fields, tuple fields and indexing; casts to a type's shape.

use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::{Expr, Ident, TypeExpr};

use cordon_types::Type;

use super::{Compiler, Res};
use crate::code::Op;
use crate::value::Layout;

impl Compiler {
    /// The variant `name` of `enum_name` with `args` as its payload (none for `Enum::Variant`
    /// written without a call).
    pub(super) fn variant(&mut self, enum_name: &str, name: &str, args: &[Expr], span: Span) -> Res {
        self.exprs(args)?;
        self.emit(Op::MakeVariant { enum_name: enum_name.into(), name: name.into(), arity: args.len() as u16 }, span);
        Ok(())
    }

    pub(super) fn tuple(&mut self, items: &[Expr], span: Span) -> Res {
        self.exprs(items)?;
        self.emit(Op::MakeTuple(items.len() as u16), span);
        Ok(())
    }

    pub(super) fn list(&mut self, items: &[Expr], span: Span) -> Res {
        self.exprs(items)?;
        self.emit(Op::MakeList(items.len() as u32), span);
        Ok(())
    }

    pub(super) fn record(&mut self, name: &str, fields: &[(Ident, Expr)], span: Span) -> Res {
        for (_, v) in fields {
            self.expr(v)?;
        }
        let names = fields.iter().map(|(n, _)| self.field_name(&n.name)).collect();
        self.emit(Op::MakeRecord(Arc::new(Layout::new(name.into(), names))), span);
        Ok(())
    }

    pub(super) fn field(&mut self, base: &Expr, name: &str, span: Span) -> Res {
        self.expr(base)?;
        let name = self.field_name(name);
        self.emit(Op::Field(name), span);
        Ok(())
    }

    pub(super) fn tuple_field(&mut self, base: &Expr, index: u32, span: Span) -> Res {
        self.expr(base)?;
        self.emit(Op::TupleField(index), span);
        Ok(())
    }

    pub(super) fn index(&mut self, base: &Expr, index: &Expr, span: Span) -> Res {
        self.expr(base)?;
        self.expr(index)?;
        self.emit(Op::Index, span);
        Ok(())
    }

    /// The cast `cast`: `expr as ty`.
    pub(super) fn cast(&mut self, cast: &Expr, expr: &Expr, to: (Option<Type>, &TypeExpr), span: Span) -> Res {
        self.expr(expr)?;
        let shape = self.cast_shape(cast, to.0, to.1)?;
        self.emit(Op::Cast(shape), span);
        Ok(())
    }
}
