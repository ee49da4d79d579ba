//! Run-time values. Every value the interpreter handles is a [`Val`]: a [`Value`] and the
//! [`Label`] it carries. Values are immutable and shared (`Arc`), so a run and its values are
//! `Send`: a parked run can be finished on another thread. One run never shares values with
//! another, and a run is driven by one thread at a time.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use cordon_label::{DcLabel, Label};

/// A value with its label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Val {
    pub value: Value,
    pub label: Label,
}

impl Val {
    /// A value with the bottom label (public, vouched for by everyone).
    pub fn plain(value: Value) -> Val {
        Val { value, label: Label::bottom() }
    }

    #[inline]
    pub fn with_label(mut self, label: &Label) -> Val {
        self.label.join_mut(label);
        self
    }
}

/// A string value: a thin pointer (`Arc<str>` is two words wide, which would make every
/// `Value` wider). Reads as a `str`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Str(Arc<String>);

impl Str {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Where the text is: two strings with one address are one string, counted once.
    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Does nothing else refer to this string?
    pub fn is_unique(&self) -> bool {
        Arc::strong_count(&self.0) == 1 && Arc::weak_count(&self.0) == 0
    }

    /// Appends `t`, in place if nothing else refers to this string (else to a copy).
    pub fn append(&mut self, t: &str) {
        Arc::make_mut(&mut self.0).push_str(t);
    }

    /// Prepends `t`, in place if nothing else refers to this string (else to a copy).
    pub fn prepend(&mut self, t: &str) {
        Arc::make_mut(&mut self.0).insert_str(0, t);
    }

    /// The text, without copying it if nothing else refers to it.
    pub fn into_string(self) -> String {
        Arc::try_unwrap(self.0).unwrap_or_else(|s| s.as_str().to_string())
    }
}

impl std::ops::Deref for Str {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl std::borrow::Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str(Arc::new(s))
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(Arc::new(s.to_string()))
    }
}

impl From<&Arc<str>> for Str {
    fn from(s: &Arc<str>) -> Str {
        Str::from(&**s)
    }
}

impl From<Arc<str>> for Str {
    fn from(s: Arc<str>) -> Str {
        Str::from(&*s)
    }
}

impl From<&Str> for Arc<str> {
    fn from(s: &Str) -> Arc<str> {
        Arc::from(s.as_str())
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Arc<str>> for Str {
    fn eq(&self, other: &Arc<str>) -> bool {
        self.as_str() == &**other
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

/// A compiled body: its index in the program's table of code. Frames and functions refer to
/// code by index so that calls and returns cost no reference counting; the machine borrows the
/// code from the program it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeId(u32);

impl CodeId {
    pub(crate) fn new(index: u32) -> CodeId {
        CodeId(index)
    }

    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

pub type CodeRef = CodeId;

/// An identifier the host gave a host-made value (a linear value, an opaque record or handle).
pub type HostId = u64;

// Every variant is at most one pointer wide, so that a `Value` is 16 bytes and a `Val` 24: the
// interpreter moves values on every operation, and the wide variants (fat pointers, handles)
// are rare enough to pay an indirection.
const _: () = assert!(std::mem::size_of::<Value>() == 16);
const _: () = assert!(std::mem::size_of::<Val>() == 24);

/// A value of the language, without its label (see [`Val`]).
///
/// The tag is a whole word (`repr(u64)`), so every variant's field starts at byte 8 and the
/// size stays 16. With a one-byte tag a `Bool` sat at byte 1, and the machine copied a value of
/// unknown variant as its tag byte and the fifteen unaligned bytes after it; the `records`
/// program of the interpreter's bench ran 11% slower (docs/performance.md, "On another
/// machine").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[repr(u64)]
pub enum Value {
    Unit,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// An exact decimal, boxed to keep a `Value` one pointer wide.
    Decimal(Arc<rust_decimal::Decimal>),
    /// A date, an instant or a duration.
    Time(Arc<crate::time::Time>),
    Str(Str),
    Tuple(Arc<Vec<Val>>),
    List(Arc<Vec<Val>>),
    Record(Arc<Record>),
    /// An enum variant, `Some`/`None` (enum `Option`) and `Ok`/`Err` (enum `Result`) included.
    Variant(Arc<Variant>),
    /// A function or closure.
    Func(Arc<Func>),
    /// A host-made value with no fields: a linear value or an opaque handle.
    Handle(Arc<Handle>),
    /// A capability: the name of its declaration.
    Capability(Str),
    /// The box `to_labeled` makes: its content keeps its own label.
    Labeled(Arc<Val>),
    /// A label, as policy annotations compute them.
    Label(Arc<DcLabel>),
}

/// A record: its layout (type name and field names), shared by every record the same code
/// makes, so that making or dropping one counts one reference for all of them; and its field
/// values, kept in the record itself when there are few (one allocation for the whole record).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RecordData", from = "RecordData")]
pub struct Record {
    layout: Arc<Layout>,
    /// In the order of the layout's names.
    values: Fields,
    /// See [`Record::host`] and [`Record::mark`].
    host: Option<Box<Mark>>,
    /// See [`depth`].
    pub depth: u32,
}

// A record and its reference counts fit in 128 bytes with three fields in place: glibc's
// allocator keeps freed blocks of up to 128 bytes in its fast bins, and takes several times as
// long to free a larger one.
const _: () = assert!(std::mem::size_of::<Record>() + 16 <= 128);

/// What a record a tool returned carries: the id the host gave it, and the digest of its
/// content as the tool returned it (`crate::made`), by which the host knows it again without
/// keeping it. No instruction of the machine makes or copies a mark: a record the plan builds
/// has none.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub id: HostId,
    /// `None` on a record saved before marks carried digests (the host kept its digest then).
    pub digest: Option<[u8; 32]>,
}

/// What records of one shape share: the declared type's name and the fields' names, in the
/// order of their values.
#[derive(Debug, PartialEq)]
pub struct Layout {
    pub ty: Arc<str>,
    pub names: Box<[Arc<str>]>,
}

/// At most this many field values are kept in the record itself (see the size of `Record`).
const INLINE_FIELDS: usize = 3;

/// A record's field values: a few in place, more in a `Vec`.
#[derive(Clone, Debug)]
enum Fields {
    /// `values[..len]`; the rest are `()`.
    Inline {
        len: u8,
        values: [Val; INLINE_FIELDS],
    },
    Heap(Vec<Val>),
}

/// A field value not yet set: owns nothing.
const UNIT: Val = Val { value: Value::Unit, label: Label::bottom() };

impl Fields {
    /// The values, and how deeply they nest (see [`depth`]).
    fn new(values: impl ExactSizeIterator<Item = Val>) -> (Fields, u32) {
        let len = values.len();
        if len > INLINE_FIELDS {
            let values: Vec<Val> = values.collect();
            let deepest = values.iter().map(|v| depth(&v.value)).max().unwrap_or(0);
            return (Fields::Heap(values), deepest);
        }
        let mut inline = [UNIT; INLINE_FIELDS];
        let mut deepest = 0;
        for (place, v) in inline.iter_mut().zip(values) {
            deepest = deepest.max(depth(&v.value));
            // What is replaced is a `UNIT`, which owns nothing: no drop to run.
            std::mem::forget(std::mem::replace(place, v));
        }
        (Fields::Inline { len: len as u8, values: inline }, deepest)
    }

    /// The top `n` values of `stack`, the deepest first, taken off it; and how deeply they
    /// nest. `None` if the stack holds fewer. `MakeRecord`'s: popping into place costs 7% fewer
    /// instructions on the interpreter bench's records than `Fields::new(stack.drain(..))`.
    #[inline]
    fn from_top(stack: &mut Vec<Val>, n: usize) -> Option<(Fields, u32)> {
        let at = stack.len().checked_sub(n)?;
        if n > INLINE_FIELDS {
            return Some(Fields::new(stack.drain(at..)));
        }
        let mut inline = [UNIT; INLINE_FIELDS];
        let mut deepest = 0;
        for place in inline.get_mut(..n)?.iter_mut().rev() {
            let v = stack.pop()?;
            deepest = deepest.max(depth(&v.value));
            std::mem::forget(std::mem::replace(place, v));
        }
        Some((Fields::Inline { len: n as u8, values: inline }, deepest))
    }

    fn into_vec(self) -> Vec<Val> {
        match self {
            Fields::Inline { len, values } => values.into_iter().take(len as usize).collect(),
            Fields::Heap(values) => values,
        }
    }

    #[inline]
    fn as_slice(&self) -> &[Val] {
        match self {
            Fields::Inline { len, values } => values.get(..*len as usize).unwrap_or_default(),
            Fields::Heap(values) => values,
        }
    }
}

impl PartialEq for Fields {
    fn eq(&self, other: &Fields) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Layout {
    pub fn new(ty: Arc<str>, names: Box<[Arc<str>]>) -> Layout {
        Layout { ty, names }
    }

    /// The position of the field `name`: by pointer first (the compiler gives a field's name
    /// one `Arc` wherever the program writes it), then by text (records a host made).
    #[inline]
    pub fn position(&self, name: &Arc<str>) -> Option<usize> {
        match self.names.iter().position(|n| Arc::ptr_eq(n, name)) {
            Some(i) => Some(i),
            None => self.names.iter().position(|n| **n == **name),
        }
    }
}

impl Record {
    pub fn new(ty: Arc<str>, fields: Vec<(Arc<str>, Val)>, host: Option<HostId>) -> Record {
        let (names, values): (Vec<Arc<str>>, Vec<Val>) = fields.into_iter().unzip();
        let layout = Arc::new(Layout::new(ty, names.into()));
        let (values, deepest) = Fields::new(values.into_iter());
        let host = host.map(|id| Box::new(Mark { id, digest: None }));
        Record { layout, values, host, depth: 1 + deepest }
    }

    /// A record of `layout` made of the values on top of `stack` (the first field deepest),
    /// taken off it; `None` if there are fewer.
    #[inline]
    pub(crate) fn from_top(layout: Arc<Layout>, stack: &mut Vec<Val>) -> Option<Record> {
        let (values, deepest) = Fields::from_top(stack, layout.names.len())?;
        Some(Record { layout, values, host: None, depth: 1 + deepest })
    }

    /// Set for opaque records a tool made: the id the host gave this exact value.
    pub fn host(&self) -> Option<HostId> {
        self.host.as_ref().map(|m| m.id)
    }

    /// The host's mark, on an opaque record a tool made.
    pub fn mark(&self) -> Option<&Mark> {
        self.host.as_deref()
    }

    /// The record with the digest of its content in its mark (`crate::made::seal`).
    pub(crate) fn with_digest(mut self, digest: [u8; 32]) -> Record {
        if let Some(mark) = &mut self.host {
            mark.digest = Some(digest);
        }
        self
    }

    /// The declared type's name.
    pub fn ty(&self) -> &Arc<str> {
        &self.layout.ty
    }

    /// Each field's name and value, in order.
    pub fn fields(&self) -> impl ExactSizeIterator<Item = (&Arc<str>, &Val)> {
        self.layout.names.iter().zip(self.values.as_slice())
    }

    /// The field values, in the order of the names.
    pub fn values(&self) -> &[Val] {
        self.values.as_slice()
    }

    pub fn field(&self, name: &str) -> Option<&Val> {
        self.fields().find(|(n, _)| &***n == name).map(|(_, v)| v)
    }

    /// The field `name`, found as [`Layout::position`] finds it.
    #[inline]
    pub(crate) fn field_named(&self, name: &Arc<str>) -> Option<&Val> {
        self.values.as_slice().get(self.layout.position(name)?)
    }
}

/// A record as it is saved: each field with its name, as the record was first laid out.
#[derive(Serialize, Deserialize)]
struct RecordData {
    ty: Arc<str>,
    fields: Vec<(Arc<str>, Val)>,
    host: Option<HostId>,
    /// Absent from a record saved before marks carried digests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    digest: Option<[u8; 32]>,
    depth: u32,
}

impl From<Record> for RecordData {
    fn from(r: Record) -> RecordData {
        let (host, digest) = (r.host(), r.mark().and_then(|m| m.digest));
        let fields = r.layout.names.iter().cloned().zip(r.values.into_vec()).collect();
        RecordData { ty: r.layout.ty.clone(), fields, host, digest, depth: r.depth }
    }
}

impl From<RecordData> for Record {
    fn from(r: RecordData) -> Record {
        let (names, values): (Vec<Arc<str>>, Vec<Val>) = r.fields.into_iter().unzip();
        let layout = Arc::new(Layout::new(r.ty, names.into()));
        let host = r.host.map(|id| Box::new(Mark { id, digest: r.digest }));
        Record { layout, values: Fields::new(values.into_iter()).0, host, depth: r.depth }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub enum_name: Arc<str>,
    pub name: Arc<str>,
    pub payload: Vec<Val>,
    /// See [`depth`].
    pub depth: u32,
}

impl Variant {
    pub fn new(enum_name: Arc<str>, name: Arc<str>, payload: Vec<Val>) -> Variant {
        let depth = 1 + payload.iter().map(|v| depth(&v.value)).max().unwrap_or(0);
        Variant { enum_name, name, payload, depth }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handle {
    pub ty: Arc<str>,
    pub id: HostId,
}

/// A function value: a declared function (no captures) or a closure.
#[derive(Debug, Serialize, Deserialize)]
pub struct Func {
    pub code: CodeRef,
    pub captures: Vec<Val>,
    /// See [`depth`].
    pub depth: u32,
}

impl Func {
    pub fn new(code: CodeRef, captures: Vec<Val>) -> Func {
        let depth = 1 + captures.iter().map(|v| depth(&v.value)).max().unwrap_or(0);
        Func { code, captures, depth }
    }
}

/// How deeply records, enum values and closures nest inside a value. Only they can nest
/// without bound (types cannot), and comparing, printing or dropping a value recurses along
/// them, so the interpreter refuses to build values deeper than its limit.
#[inline(always)]
pub fn depth(v: &Value) -> u32 {
    match v {
        Value::Record(r) => r.depth,
        Value::Variant(x) => x.depth,
        Value::Func(f) => f.depth,
        Value::Tuple(_) | Value::List(_) | Value::Labeled(_) => depth_within(v),
        _ => 0,
    }
}

/// [`depth`] of the containers that do not record theirs.
#[inline(never)]
fn depth_within(v: &Value) -> u32 {
    match v {
        Value::Tuple(items) => items.iter().map(|x| depth(&x.value)).max().unwrap_or(0),
        Value::List(items) => items.iter().map(|x| depth(&x.value)).max().unwrap_or(0),
        Value::Labeled(inner) => depth(&inner.value),
        _ => 0,
    }
}

impl PartialEq for Func {
    fn eq(&self, other: &Func) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(s.into())
    }

    pub fn handle(ty: Arc<str>, id: HostId) -> Value {
        Value::Handle(Arc::new(Handle { ty, id }))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items.into_iter().map(Val::plain).collect()))
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Arc::new(items.into_iter().map(Val::plain).collect()))
    }

    pub fn record(ty: &str, fields: Vec<(&str, Value)>) -> Value {
        Value::Record(Arc::new(Record::new(
            ty.into(),
            fields.into_iter().map(|(n, v)| (n.into(), Val::plain(v))).collect(),
            None,
        )))
    }

    pub fn variant(enum_name: &str, name: &str, payload: Vec<Value>) -> Value {
        Value::Variant(Arc::new(Variant::new(
            enum_name.into(),
            name.into(),
            payload.into_iter().map(Val::plain).collect(),
        )))
    }

    pub fn some(v: Value) -> Value {
        Value::variant("Option", "Some", vec![v])
    }

    pub fn decimal(d: rust_decimal::Decimal) -> Value {
        Value::Decimal(Arc::new(d))
    }

    pub fn time(t: crate::time::Time) -> Value {
        Value::Time(Arc::new(t))
    }

    pub fn none() -> Value {
        Value::variant("Option", "None", vec![])
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Unit => "()",
            Value::Bool(_) => "a Bool",
            Value::Int(_) => "an Int",
            Value::Float(_) => "a Float",
            Value::Decimal(_) => "a Decimal",
            Value::Time(t) => t.kind(),
            Value::Str(_) => "a String",
            Value::Tuple(_) => "a tuple",
            Value::List(_) => "a List",
            Value::Record(_) => "a record",
            Value::Variant(_) => "an enum value",
            Value::Func(_) => "a function",
            Value::Handle(_) => "a host-made value",
            Value::Capability(_) => "a capability",
            Value::Labeled(_) => "a Labeled value",
            Value::Label(_) => "a Label",
        }
    }

    /// The value as JSON: what a tool host receives (the mapping is on [`crate::ToolHost`]), and
    /// what traces and `--format json` show. Values that mean nothing outside a run are
    /// described: host-made values by their type and id, functions only as functions.
    pub fn to_json(&self) -> serde_json::Value {
        // Only a map key that is not a string fails, and every key written is a string.
        serde_json::to_value(self.as_json()).unwrap_or(serde_json::Value::Null)
    }

    /// The value as [`Value::to_json`] maps it, written straight to a serializer, with no
    /// JSON tree built first (a transcript writes every call's arguments this way).
    pub fn as_json(&self) -> AsJson<'_> {
        AsJson(self)
    }
}

/// A value serialised as JSON ([`Value::as_json`]): a record's fields by name in byte order,
/// as a JSON object's keys are kept.
#[derive(Debug)]
pub struct AsJson<'a>(&'a Value);

impl Serialize for AsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Unit => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            // Not a number (NaN, infinities) is `null`.
            Value::Float(x) => s.serialize_f64(*x),
            // A string: JSON numbers are read as binary floats by most hosts.
            Value::Decimal(d) => s.collect_str(d),
            Value::Time(t) => s.collect_str(t),
            Value::Str(text) => s.serialize_str(text),
            Value::Tuple(items) | Value::List(items) => s.collect_seq(items.iter().map(|v| v.value.as_json())),
            Value::Record(r) => {
                let mut fields: Vec<_> = r.fields().collect();
                fields.sort_unstable_by_key(|(name, _)| *name);
                s.collect_map(fields.into_iter().map(|(n, v)| (&**n, v.value.as_json())))
            }
            Value::Variant(v) => match v.payload.as_slice() {
                [] if &*v.enum_name == "Option" => s.serialize_unit(),
                [entries] if &*v.enum_name == "Map" => entries.value.as_json().serialize(s),
                [some] if &*v.enum_name == "Option" => some.value.as_json().serialize(s),
                [] => s.serialize_str(&v.name),
                [one] => s.collect_map([(&*v.name, one.value.as_json())]),
                many => s.collect_map([(&*v.name, many.iter().map(|p| p.value.as_json()).collect::<Vec<_>>())]),
            },
            Value::Func(_) => s.serialize_str("<function>"),
            Value::Handle(h) => s.collect_str(&format_args!("<{} #{}>", h.ty, h.id)),
            Value::Capability(c) => s.collect_str(&format_args!("<capability {c}>")),
            Value::Labeled(inner) => s.collect_map([("labeled", inner.label.to_string())]),
            Value::Label(l) => s.collect_str(l),
        }
    }
}

/// Values print as Cordon literals would be written; strings are quoted.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, items: &[Val]) -> fmt::Result {
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", v.value)?;
            }
            Ok(())
        }
        match self {
            Value::Unit => f.write_str("()"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Decimal(d) => write!(f, "{d}d"),
            Value::Time(t) => write!(f, "{t}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Tuple(items) => {
                f.write_str("(")?;
                seq(f, items)?;
                f.write_str(if items.len() == 1 { ",)" } else { ")" })
            }
            Value::List(items) => {
                f.write_str("[")?;
                seq(f, items)?;
                f.write_str("]")
            }
            Value::Record(r) => {
                write!(f, "{} {{ ", r.ty())?;
                for (i, (n, v)) in r.fields().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{n}: {}", v.value)?;
                }
                f.write_str(" }")
            }
            // A `Map` prints as the code that makes it.
            Value::Variant(v) if &*v.enum_name == "Map" => {
                f.write_str("map_from(")?;
                seq(f, &v.payload)?;
                f.write_str(")")
            }
            Value::Variant(v) => {
                if !matches!(&*v.enum_name, "Option" | "Result") {
                    write!(f, "{}::", v.enum_name)?;
                }
                f.write_str(&v.name)?;
                if !v.payload.is_empty() {
                    f.write_str("(")?;
                    seq(f, &v.payload)?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            Value::Func(_) => f.write_str("<function>"),
            Value::Handle(h) => write!(f, "<{} #{}>", h.ty, h.id),
            Value::Capability(c) => write!(f, "<capability {c}>"),
            Value::Labeled(inner) => write!(f, "<labeled {}>", inner.label),
            Value::Label(l) => write!(f, "{l}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Record, Val, Value};

    #[test]
    fn records_in_place_or_not_find_fields_by_pointer_or_text_and_save_alike() {
        for n in 0..6 {
            let names: Vec<Arc<str>> = (0..n).map(|i| Arc::from(format!("f{i}"))).collect();
            let fields = names.iter().enumerate().map(|(i, n)| (n.clone(), Val::plain(Value::Int(i as i64)))).collect();
            let r = Record::new("T".into(), fields, Some(7));
            assert_eq!(r.values().len(), n);
            assert_eq!(r.host(), Some(7));
            for (i, name) in names.iter().enumerate() {
                let found = Some(&Val::plain(Value::Int(i as i64)));
                assert_eq!(r.field_named(name), found);
                assert_eq!(r.field_named(&Arc::from(format!("f{i}"))), found);
                assert_eq!(r.field(&format!("f{i}")), found);
            }
            assert_eq!(r.field_named(&Arc::from("g")), None);
            let saved = serde_json::to_string(&r).expect("saves");
            let loaded: Record = serde_json::from_str(&saved).expect("loads");
            assert_eq!(loaded, r);
        }
    }
}
