//! Functions, regions, ops and values: the IR's storage.
//!
//! A [`Function`] owns two arenas: its SSA values and its ops. Regions are
//! ordered lists of op handles with block arguments and yielded values. A value
//! defined in a region may be used in that region after its definition and in
//! every region nested below (regions are not isolated from above). Spans for
//! diagnostics are stored beside the op arena, not inside ops.

use super::arena::{Arena, Handle};
use super::op::OpKind;
use super::types::Type;
use mad_grammar::span::Span;

/// An SSA value's record: its type.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueData {
    pub ty: Type,
}

pub type ValueId = Handle<ValueData>;
pub type OpId = Handle<Op>;
pub type FuncRef = Handle<Function>;

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    /// Nested regions (`If`: then, else; `For`: body; `While`: cond, body).
    pub regions: Vec<Region>,
}

/// A list of ops with arguments and the values it yields when it ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    pub args: Vec<ValueId>,
    pub ops: Vec<OpId>,
    pub yields: Vec<ValueId>,
}

/// How a function asks to be differentiated (`@ad(tape)`, `@ad(sct)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdMode {
    Tape,
    Sct,
}

/// A function: parameters are the body region's arguments; the body yields
/// exactly one value, of type `ret` (the unit tuple for no return value).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub ret: Type,
    pub body: Region,
    pub values: Arena<ValueData>,
    pub ops: Arena<Op>,
    /// The source span of each op, indexed like `ops` (default span when unknown).
    pub op_spans: Vec<Span>,
    pub ad_mode: Option<AdMode>,
    /// The source file (an id of the front end's file database) that `op_spans`
    /// point into, when the function came from source. Not part of the text form.
    pub source_file: Option<usize>,
}

impl Function {
    /// An empty function with parameters of the given types.
    pub fn new(name: impl Into<String>, params: &[Type], ret: Type) -> Function {
        let mut f = Function {
            name: name.into(),
            ret,
            body: Region::default(),
            values: Arena::new(),
            ops: Arena::new(),
            op_spans: Vec::new(),
            ad_mode: None,
            source_file: None,
        };
        f.body.args = params
            .iter()
            .map(|t| f.values.append(ValueData { ty: t.clone() }))
            .collect();
        f
    }

    pub fn params(&self) -> &[ValueId] {
        &self.body.args
    }

    pub fn param_types(&self) -> Vec<Type> {
        self.body
            .args
            .iter()
            .map(|&v| self.values[v].ty.clone())
            .collect()
    }

    pub fn ty(&self, v: ValueId) -> &Type {
        &self.values[v].ty
    }

    pub fn new_value(&mut self, ty: Type) -> ValueId {
        self.values.append(ValueData { ty })
    }

    /// Adds an op to the arena (not to any region) with fresh result values.
    pub fn new_op(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: Vec<Type>,
        span: Span,
    ) -> OpId {
        let results = result_types
            .into_iter()
            .map(|t| self.new_value(t))
            .collect();
        let id = self.ops.append(Op {
            kind,
            operands,
            results,
            regions: Vec::new(),
        });
        self.op_spans.push(span);
        id
    }

    pub fn span(&self, op: OpId) -> Span {
        self.op_spans.get(op.index()).copied().unwrap_or_default()
    }
}

/// A compilation unit: functions that may call each other (and themselves).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub functions: Arena<Function>,
    /// Which functions are derivatives of which ([`super::derived`]).
    pub derived: super::derived::DerivedTable,
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    pub fn add_function(&mut self, f: Function) -> FuncRef {
        self.functions.append(f)
    }

    /// The derived function `key`, when the module has it.
    pub fn derived(&self, key: &super::DerivedKey) -> Option<FuncRef> {
        self.derived.get(key)
    }

    /// Adds `f` as the derived function `key`.
    pub fn add_derived(&mut self, key: super::DerivedKey, f: Function) -> FuncRef {
        let h = self.functions.append(f);
        self.derived.insert(key, h);
        h
    }

    /// Which derivative of which function `f` is, when it is one.
    pub fn origin(&self, f: FuncRef) -> Option<&super::DerivedKey> {
        self.derived.origin(f)
    }

    /// The first function with this exact name.
    pub fn find(&self, name: &str) -> Option<FuncRef> {
        self.functions
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(h, _)| h)
    }
}
