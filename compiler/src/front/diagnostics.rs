//! The front end's errors: one variant per kind, each with a stable code
//! (E0100–E0199), and their rendering as codespan-reporting diagnostics.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use mad_grammar::span::Span;

/// What went wrong. Each variant documents what it means, why it is an error,
/// and an example that triggers it (the snapshot test `tests/diagnostics/E01xx_*.mad`).
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// E0100. A name that is not a local, an item, a builtin or in the prelude.
    /// Why: every name must be defined before it is used. Example: `nrom(v)`.
    UnknownName {
        name: String,
        suggestion: Option<String>,
    },
    /// E0101. An expression has a different type than its context requires.
    /// Why: there are no implicit conversions. Example: `let x: f64 = vec2(1.0, 2.0);`.
    TypeMismatch { expected: String, found: String },
    /// E0102. An operator applied to operand types it does not accept.
    /// Why: each operator has a fixed set of operand types. Example: `vec3(..) + vec2(..)`.
    BadOperands {
        op: String,
        lhs: String,
        rhs: Option<String>,
        help: Option<String>,
    },
    /// E0103. A call with the wrong number of arguments.
    /// Why: parameters have no defaults. Example: `dot(a)`.
    ArgCount {
        name: String,
        expected: String,
        found: usize,
    },
    /// E0104. No overload of a function accepts the argument types.
    /// Why: a call picks the overload whose parameter types match exactly. Example: `norm(1.0)`.
    NoOverload {
        name: String,
        args: String,
        candidates: Vec<String>,
    },
    /// E0104 as well. More than one overload matches once literal arguments adapt.
    /// Why: a call must pick exactly one overload. Example: `f(1, 2)` with
    /// `f(x: f64, n: i64)` and `f(n: i64, x: f64)`.
    AmbiguousCall {
        name: String,
        args: String,
        candidates: Vec<String>,
    },
    /// E0105. Assignment to a variable declared without `mut`, to a parameter or loop
    /// variable, or to a constant, `param` or mesh field.
    /// Why: variables are immutable unless declared `let mut`; the others are read-only in
    /// bodies. Example: `let x = 1; x = 2;`.
    AssignImmutable {
        name: String,
        declared: Option<Span>,
        /// `variable`, `parameter`, `loop variable`, `element handle`, `constant`, `param`,
        /// `dof field`, `data field`, `state field`.
        what: &'static str,
    },
    /// E0106. `break` or `continue` outside a loop.
    /// Why: they leave or restart the enclosing loop. Example: `fn f() { break; }`.
    OutsideLoop { what: &'static str },
    /// E0107. A type name that does not exist.
    /// Why: types are built in. Example: `let x: vecc3 = ...`.
    UnknownType { name: String },
    /// E0107 as well: a vector or matrix type, or its constructor, of a size beyond the fixed
    /// ones (`vecN` has N from 2 to [`super::types::MAX_FIXED_SIZE`], `matRxC` R and C from 1
    /// to it). `detail` names the sizes there are. Why: fixed-size values are kept in
    /// registers, one per entry; larger ones are `vector` and `matrix`.
    /// Example: `let x: vec17 = ...`, `mat17(...)`.
    FixedSizeBound { detail: String },
    /// E0108. A field that the value's type does not have.
    /// Why: fields are `.x .y .z .w` on vectors, `.0` on tuples, `.v0 ...` on elements.
    /// Example: `vec2(1.0, 2.0).z`.
    UnknownField { field: String, ty: String },
    /// E0109. A call of something that is not a function.
    /// Why: only functions, builtins and constructors can be called. Example: `let x = 1.0; x(2.0)`.
    NotCallable { what: String },
    /// E0110. A function's body or `return` value does not have its declared return type.
    /// Why: the declared type is the contract callers rely on. Example: `fn f() -> f64 { true }`.
    ReturnMismatch { expected: String, found: String },
    /// E0111. Two items with the same name in one module (functions may be overloaded
    /// by parameter types, but not twice with the same ones).
    /// Why: a name must mean one thing. Example: `const A: f64 = 1.0; const A: f64 = 2.0;`.
    Duplicate { name: String, first: Span },
    /// E0111 as well. A function or constant named like a differentiation operator.
    /// Why: `grad jvp vjp hessian jacobian` are reserved. Example: `fn grad(x: f64) -> f64 { x }`.
    Reserved { name: String },
    /// E0112. Indexing a value that cannot be indexed, with a wrong number or type of indices.
    /// Why: vectors, arrays and slices take one `i64` index; matrices one or two.
    /// Example: `let x = 1.0; x[0]`.
    BadIndex { ty: String, detail: String },
    /// E0113. A cast between types that have no conversion.
    /// Why: `as` converts between `f64`, `f32`, `i64` (and `bool` to `i64`). Example: `true as f64`.
    BadCast { from: String, to: String },
    /// E0114. An expression that must be known at compile time is not.
    /// Why: `const` values and array lengths are evaluated by the compiler.
    /// Example: `const N: i64 = len(x);`.
    NotConstant { what: &'static str },
    /// E0114 as well: a constant expression whose evaluation fails (an integer division by
    /// zero, a negative integer power). Example: `const Z: i64 = 1 / 0;`.
    ConstFails { detail: String },
    /// E0115. An attribute the compiler does not know, or bad arguments to one.
    /// Why: attributes change compilation; a misspelt one would be silently ignored.
    /// Example: `@inline fn f() {}`.
    UnknownAttribute { name: String, help: Option<String> },
    /// E0115 as well: a known attribute with arguments it does not take (`@ad(fast)`,
    /// `@ad`, `@ad(tape, sct)`); `found` is the attribute as written.
    BadAttributeArguments { name: String, found: String },
    /// E0115 as well: an attribute given twice to one item. Example:
    /// `@ad(tape) @ad(sct) fn f() {}`.
    RepeatedAttribute { name: String },
    /// E0115. A known attribute on an item it does not apply to (`@ad` on a `const`).
    /// Why: `@ad` chooses how a function is differentiated. Example: `@ad(tape) const C: i64 = 1;`.
    MisplacedAttribute { name: String, item: &'static str },
    /// E0116. An energy term whose body is not an `f64`, or a residual whose body
    /// does not have its declared type. Why: energies are summed into one scalar objective.
    /// Example: `energy e(v: vertex) { vec2(1.0, 2.0) }`.
    TermType {
        term: &'static str,
        expected: String,
        found: String,
    },
    /// E0117. A `dof`, `data` or `param` declaration with a stencil or value type it cannot have.
    /// Why: unknowns live on vertices or faces and are f64 or vec2..vec16; params are f64 or i64.
    /// Example: `dof x: edge -> vec3;`.
    BadMeshDecl { what: String, help: Option<String> },
    /// E0118. A stencil name that does not exist.
    /// Why: the stencils are `vertex edge face diamond ring pair`. Example: `energy e(t: tet) { 0.0 }`.
    UnknownStencil { name: String },
    /// E0119. The left side of an assignment is not a variable or an element of one.
    /// Why: only `let mut` variables and their elements can be assigned. Example: `f(x) = 1.0;`.
    BadAssignTarget,
    /// E0120. `use` of an item or module that does not exist.
    /// Why: imports must name real items. Example: `use std::vec::dott;`.
    UnresolvedImport { path: String },
    /// E0120 as well. A name that imports bring from more than one module, used as a value.
    /// Why: a constant (or a function and a constant) of one name from two modules is not
    /// an overload set. Example: `use a::K; use b::K;` then `K`.
    AmbiguousName { name: String, candidates: Vec<String> },
    /// E0121. A `dof`, `data` or `param` read outside an energy or residual body, or
    /// read with an index that is not an element handle of the term.
    /// Why: mesh fields only have values per element while a term is evaluated.
    /// Example: `fn f() -> vec3 { x[0] }`.
    BadMeshRead { detail: String },
    /// E0122. An `objective` that uses something other than energies, params and numbers
    /// with `+ - *`, or a second `objective`. Example: `objective = spring / 2.0;`.
    BadObjective { detail: String },
    /// E0140. A `solve { ... }` block with an unknown key, a value of the wrong kind, a
    /// second block, or a block item named other than `solve`.
    /// Why: `madc run` reads these settings. Example: `solve { steps = -1; }`.
    BadSolveBlock { detail: String },
    /// E0144. A dof or state initializer that is not `positions`, `zeros`, `tutte` or a
    /// file name string, or `tutte` on a field that is not a `vertex -> vec2` dof.
    /// Why: the runtime computes the initial values. Example: `dof u: vertex -> vec3 = tutte;`.
    BadInit {
        detail: String,
        help: Option<String>,
    },
    /// E0145. A `state` or `update` item that is malformed: an update of a name that is not a
    /// state or dof, on a stencil that does not match it, a second update of one field, or a
    /// leading word other than `state`/`update`. Example: `update k(e: vertex) { 1.0 }` (k a param).
    BadUpdate {
        detail: String,
        help: Option<String>,
    },
    /// E0146. A `broadphase KIND[, KIND] within EXPR;` declaration with an unknown kind,
    /// a distance that is not a positive constant or an f64 param, a second declaration,
    /// or no `pair` term to feed. Example: `broadphase face_face within 0.1;`.
    BadBroadphase {
        detail: String,
        help: Option<String>,
    },
    /// E0130. The file of a `mod name;` (or `mod name = "path";`) declaration does not exist.
    /// Why: the module's items are in that file. Example: `mod geometry;` with no
    /// `geometry.mad` beside the declaring file. `named`: the declaration names the file
    /// (`mod name = "path";`).
    ModFileNotFound {
        module: String,
        path: String,
        named: bool,
    },
    /// E0131. The file of a `mod` declaration exists but cannot be read (a directory, no
    /// permission). Example: `mod data = "data";` where `data` is a directory.
    ModFileUnreadable {
        module: String,
        path: String,
        reason: String,
    },
    /// E0132. Module files that load each other: `a.mad` declares `mod b;` and `b.mad`
    /// declares `mod a = "a.mad";`. Why: a file is one module, which cannot contain itself.
    /// `chain` is the files in loading order, the first repeated at the end.
    ModFileCycle { chain: Vec<String> },
    /// E0133. One file loaded by two `mod` declarations. Why: a file is one module with one
    /// path; a second declaration would compile a second copy of every item. `first` (in
    /// `first_file`) is the declaration that loaded it first. Example: `mod a; mod b = "a.mad";`.
    ModFileTwice {
        path: String,
        first_file: usize,
        first: Span,
    },
    /// E0134. `mod name;` in a program whose text was given without a file (the embedding
    /// API's `Program::compile_str`). Why: module files are found relative to the file that
    /// declares them. Example: `mod geometry;` compiled from a string.
    ModFileWithoutFile { module: String },
    /// E0135. A mesh declaration (`dof`, `data`, `state`, `param`, `energy`, `residual`,
    /// `objective`, `update`, `solve`, `broadphase`) in a file loaded by `mod name;`.
    /// Why: a program's mesh energy is declared in its root file; module files hold
    /// functions and constants. Example: `energy e(v: vertex) { 0.0 }` in `geometry.mad`.
    MeshDeclInModuleFile { item: &'static str },
    /// E0123. A tuple pattern that does not match the value's shape.
    /// Why: `let (a, b) = e;` needs a 2-tuple. Example: `let (a, b) = 1.0;`.
    PatternMismatch { expected: String, found: String },
    /// E0124. The branches of an `if` have different types.
    /// Why: the `if` has one type. Example: `if c { 1.0 } else { vec2(0.0, 0.0) }`.
    BranchMismatch { then_ty: String, else_ty: String },
    /// E0125. A name that denotes a module, type or mesh term used as a value.
    /// Why: only variables, constants and mesh fields have values. Example: `let m = std::vec;`.
    NotAValue { what: String },
    /// E0126. A string literal anywhere but as the argument of `print`.
    /// Why: the language has no string type. Example: `let s = "hi";`.
    StringValue,
    /// E0127. An array whose element type is not a scalar, vec, mat or array.
    /// Why: arrays are tensors of numbers. Example: `let a: [(f64, f64); 2] = ...`.
    BadElementType { ty: String },
    /// E0128. An element handle (`e.v0`) used where a number is needed, or stored where
    /// it cannot go. Why: handles only index mesh fields. Example: `let i = e.v0 + 1;`.
    HandleMisuse { detail: String },
    /// E0151. Reverse mode (`grad`, `vjp`) applied to a reverse-mode derivative of a
    /// loop that uses the tape (a `while` loop, or a `for` loop in an `@ad(tape)`
    /// function): reverse over reverse through the tape. Why: the taped derivative
    /// pushes in one loop and pops in another, which a second reverse sweep cannot
    /// recompute region by region. The error is reported at the loop; `site` is where
    /// the operator was applied. Example: `grad(grad(f))` of a function with
    /// `while s < 10.0 { s = s * x; }` (`hessian(f)`, forward over reverse, works).
    ReverseLoop {
        op: String,
        site_file: usize,
        site: Span,
    },
    /// E0152. A differentiation operator applied to something that is not a function
    /// (or an operator application), or an operator not immediately called.
    /// Why: operators transform functions, and `grad(f)` is only meaningful when called,
    /// as in `grad(f)(x)`. Example: `grad(x)(1.0)` with a variable `x`.
    NotDiffTarget { op: String, detail: String },
    /// E0153. A differentiation operator applied to a function whose signature does not
    /// fit it: `grad`/`hessian` of a function not returning `f64`, a function with no
    /// floating-point argument, `hessian`/`jacobian` over arguments of dynamic size,
    /// `grad(f, i)` of an argument that does not exist or is not floating-point.
    /// Why: each operator has a fixed shape of result. Example: `grad(f)` of `fn f(x: f64) -> vec2`.
    DiffSignature {
        op: String,
        func: String,
        detail: String,
    },
    /// E0153. Differentiation operators nested more than
    /// [`super::lower::diff::MAX_DIFF_NESTING`] deep. Why: each level about doubles the
    /// code built (and the time to build it). Example: nine `grad(` around `f`.
    DiffTooDeep { func: String },
    /// E0154. A derivative needed to compute the function it differentiates (e.g. `f`
    /// calls `grad(f)`). Why: the derivative of `f` is generated from `f`'s complete body.
    /// Example: `fn f(x: f64) -> f64 { grad(f)(x) }`.
    DiffCycle { name: String },
    /// E0155. A function marked `@ad(sct)` whose reverse-mode derivative needs the
    /// tape: it has a `while` loop (trip count known only at run time) through which
    /// derivatives flow. Why: source transformation sizes per-iteration storage by the
    /// trip count, which such a loop does not know in advance. Reported at the loop;
    /// `site` is where the operator was applied. Example: `@ad(sct) fn f(x: f64) -> f64`
    /// with `while s < 10.0 { s = s * 2.0; }`, then `grad(f)`.
    SctImpossible {
        op: String,
        func: String,
        site_file: usize,
        site: Span,
    },
}

/// Every code the front end can report.
pub const ALL_CODES: [&str; 43] = [
    "E0100", "E0101", "E0102", "E0103", "E0104", "E0105", "E0106", "E0107", "E0108", "E0109",
    "E0110", "E0111", "E0112", "E0113", "E0114", "E0115", "E0116", "E0117", "E0118", "E0119",
    "E0120", "E0121", "E0122", "E0123", "E0124", "E0125", "E0126", "E0127", "E0128", "E0151",
    "E0152", "E0153", "E0154", "E0155", "E0144", "E0145", "E0146", "E0130", "E0131", "E0132",
    "E0133", "E0134", "E0135",
];

impl ErrorKind {
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::UnknownName { .. } => "E0100",
            ErrorKind::TypeMismatch { .. } => "E0101",
            ErrorKind::BadOperands { .. } => "E0102",
            ErrorKind::ArgCount { .. } => "E0103",
            ErrorKind::NoOverload { .. } | ErrorKind::AmbiguousCall { .. } => "E0104",
            ErrorKind::AssignImmutable { .. } => "E0105",
            ErrorKind::OutsideLoop { .. } => "E0106",
            ErrorKind::UnknownType { .. } | ErrorKind::FixedSizeBound { .. } => "E0107",
            ErrorKind::UnknownField { .. } => "E0108",
            ErrorKind::NotCallable { .. } => "E0109",
            ErrorKind::ReturnMismatch { .. } => "E0110",
            ErrorKind::Duplicate { .. } | ErrorKind::Reserved { .. } => "E0111",
            ErrorKind::BadIndex { .. } => "E0112",
            ErrorKind::BadCast { .. } => "E0113",
            ErrorKind::NotConstant { .. } | ErrorKind::ConstFails { .. } => "E0114",
            ErrorKind::UnknownAttribute { .. }
            | ErrorKind::BadAttributeArguments { .. }
            | ErrorKind::RepeatedAttribute { .. }
            | ErrorKind::MisplacedAttribute { .. } => "E0115",
            ErrorKind::TermType { .. } => "E0116",
            ErrorKind::BadMeshDecl { .. } => "E0117",
            ErrorKind::UnknownStencil { .. } => "E0118",
            ErrorKind::BadAssignTarget => "E0119",
            ErrorKind::UnresolvedImport { .. } | ErrorKind::AmbiguousName { .. } => "E0120",
            ErrorKind::BadMeshRead { .. } => "E0121",
            ErrorKind::BadObjective { .. } => "E0122",
            ErrorKind::BadSolveBlock { .. } => "E0140",
            ErrorKind::BadInit { .. } => "E0144",
            ErrorKind::BadUpdate { .. } => "E0145",
            ErrorKind::BadBroadphase { .. } => "E0146",
            ErrorKind::ModFileNotFound { .. } => "E0130",
            ErrorKind::ModFileUnreadable { .. } => "E0131",
            ErrorKind::ModFileCycle { .. } => "E0132",
            ErrorKind::ModFileTwice { .. } => "E0133",
            ErrorKind::ModFileWithoutFile { .. } => "E0134",
            ErrorKind::MeshDeclInModuleFile { .. } => "E0135",
            ErrorKind::PatternMismatch { .. } => "E0123",
            ErrorKind::BranchMismatch { .. } => "E0124",
            ErrorKind::NotAValue { .. } => "E0125",
            ErrorKind::StringValue => "E0126",
            ErrorKind::BadElementType { .. } => "E0127",
            ErrorKind::HandleMisuse { .. } => "E0128",
            ErrorKind::ReverseLoop { .. } => "E0151",
            ErrorKind::NotDiffTarget { .. } => "E0152",
            ErrorKind::DiffSignature { .. } | ErrorKind::DiffTooDeep { .. } => "E0153",
            ErrorKind::DiffCycle { .. } => "E0154",
            ErrorKind::SctImpossible { .. } => "E0155",
        }
    }

    /// The headline message.
    pub fn message(&self) -> String {
        match self {
            ErrorKind::UnknownName { name, .. } => format!("cannot find `{name}` in this scope"),
            ErrorKind::TypeMismatch { expected, found } => {
                format!("mismatched types: expected {expected}, found {found}")
            }
            ErrorKind::BadOperands {
                op,
                lhs,
                rhs: Some(rhs),
                ..
            } => match op.as_str() {
                "+" => format!("cannot add {lhs} and {rhs}"),
                "-" => format!("cannot subtract {rhs} from {lhs}"),
                "*" => format!("cannot multiply {lhs} by {rhs}"),
                "/" => format!("cannot divide {lhs} by {rhs}"),
                _ => format!("cannot apply `{op}` to {lhs} and {rhs}"),
            },
            ErrorKind::BadOperands {
                op, lhs, rhs: None, ..
            } => format!("cannot apply unary `{op}` to {lhs}"),
            ErrorKind::ArgCount {
                name,
                expected,
                found,
            } => {
                format!("`{name}` expects {expected} argument(s), found {found}")
            }
            ErrorKind::AmbiguousCall { name, args, .. } => {
                format!("call of `{name}` with arguments ({args}) is ambiguous")
            }
            ErrorKind::NoOverload { name, args, .. } => {
                format!("no overload of `{name}` takes arguments ({args})")
            }
            ErrorKind::AssignImmutable { name, what, .. } => match *what {
                "variable" | "parameter" | "loop variable" | "element handle" => {
                    format!("cannot assign to immutable {what} `{name}`")
                }
                _ => format!("cannot assign to {what} `{name}`: it is read-only in a body"),
            },
            ErrorKind::OutsideLoop { what } => format!("`{what}` outside of a loop"),
            ErrorKind::UnknownType { name } => format!("unknown type `{name}`"),
            ErrorKind::FixedSizeBound { detail } => detail.clone(),
            ErrorKind::UnknownField { field, ty } => format!("no field `{field}` on type {ty}"),
            ErrorKind::NotCallable { what } => format!("{what} is not callable"),
            ErrorKind::ReturnMismatch { expected, found } => {
                format!("wrong return type: expected {expected}, found {found}")
            }
            ErrorKind::Duplicate { name, .. } => format!("`{name}` is defined more than once"),
            ErrorKind::Reserved { name } => {
                format!("`{name}` is a differentiation operator and cannot be redefined")
            }
            ErrorKind::BadIndex { ty, detail } => format!("cannot index {ty}: {detail}"),
            ErrorKind::BadCast { from, to } => format!("cannot cast {from} as {to}"),
            ErrorKind::NotConstant { what } => format!("{what} must be a constant expression"),
            ErrorKind::ConstFails { detail } => format!("this constant expression fails: {detail}"),
            ErrorKind::UnknownAttribute { name, .. } => format!("unknown attribute `@{name}`"),
            ErrorKind::BadAttributeArguments { name, found } => {
                format!("`@{name}` takes one argument, `tape` or `sct`; found `{found}`")
            }
            ErrorKind::RepeatedAttribute { name } => format!("`@{name}` is given more than once"),
            ErrorKind::MisplacedAttribute { name, item } => {
                format!("`@{name}` does not apply to {item}")
            }
            ErrorKind::TermType {
                term,
                expected,
                found,
            } => {
                format!("{term} body must have type {expected}, found {found}")
            }
            ErrorKind::BadMeshDecl { what, .. } => what.clone(),
            ErrorKind::UnknownStencil { name } => format!("unknown stencil `{name}`"),
            ErrorKind::BadAssignTarget => "invalid left-hand side of assignment".to_string(),
            ErrorKind::UnresolvedImport { path } => format!("unresolved import `{path}`"),
            ErrorKind::AmbiguousName { name, .. } => {
                format!("`{name}` is ambiguous: imports bring it from more than one module")
            }
            ErrorKind::BadMeshRead { detail } => detail.clone(),
            ErrorKind::BadObjective { detail } => format!("invalid objective: {detail}"),
            ErrorKind::BadSolveBlock { detail } => format!("invalid solve block: {detail}"),
            ErrorKind::BadInit { detail, .. } => format!("invalid initializer: {detail}"),
            ErrorKind::BadUpdate { detail, .. } => format!("invalid state or update: {detail}"),
            ErrorKind::BadBroadphase { detail, .. } => {
                format!("invalid broadphase declaration: {detail}")
            }
            ErrorKind::ModFileNotFound { module, path, .. } => {
                format!("cannot find `{path}`, the file of module `{module}`")
            }
            ErrorKind::ModFileUnreadable { module, path, reason } => {
                format!("cannot read `{path}`, the file of module `{module}`: {reason}")
            }
            ErrorKind::ModFileCycle { chain } => {
                format!("module files load each other in a cycle: {}", chain.join(" → "))
            }
            ErrorKind::ModFileTwice { path, .. } => {
                format!("`{path}` is loaded by two `mod` declarations")
            }
            ErrorKind::ModFileWithoutFile { module } => format!(
                "`mod {module};` needs the program to come from a file (module files are found next to it)"
            ),
            ErrorKind::MeshDeclInModuleFile { item } => {
                format!("{item} cannot be declared in a module file")
            }
            ErrorKind::PatternMismatch { expected, found } => {
                format!("pattern mismatch: the pattern expects {expected}, the value is {found}")
            }
            ErrorKind::BranchMismatch { then_ty, else_ty } => {
                format!("`if` and `else` have incompatible types: {then_ty} and {else_ty}")
            }
            ErrorKind::NotAValue { what } => format!("{what} is not a value"),
            ErrorKind::StringValue => "string literals can only be printed".to_string(),
            ErrorKind::BadElementType { ty } => format!("{ty} cannot be an array element"),
            ErrorKind::HandleMisuse { detail } => detail.clone(),
            ErrorKind::ReverseLoop { op, .. } => {
                format!(
                    "`{op}`: cannot differentiate the taped derivative of this loop in reverse mode again"
                )
            }
            ErrorKind::SctImpossible { func, .. } => {
                format!(
                    "`@ad(sct)` on `{func}` is impossible: reverse mode through this loop needs the tape"
                )
            }
            ErrorKind::NotDiffTarget { op, detail } => format!("`{op}` needs a function: {detail}"),
            ErrorKind::DiffSignature { op, func, detail } => {
                format!("cannot apply `{op}` to `{func}`: {detail}")
            }
            ErrorKind::DiffTooDeep { func } => format!(
                "`{func}` cannot be differentiated again: differentiation operators nest at most {} deep",
                super::lower::diff::MAX_DIFF_NESTING
            ),
            ErrorKind::DiffCycle { name } => {
                format!("`{name}` is needed to compute the function it differentiates")
            }
        }
    }

    /// The text of the primary label.
    fn label(&self) -> String {
        match self {
            ErrorKind::UnknownName { .. } => "not found".into(),
            ErrorKind::TypeMismatch { expected, found } => {
                format!("expected {expected}, found {found}")
            }
            ErrorKind::BadOperands {
                lhs,
                rhs: Some(rhs),
                ..
            } => format!("{lhs} and {rhs}"),
            ErrorKind::BadOperands { lhs, rhs: None, .. } => format!("operand is {lhs}"),
            ErrorKind::ArgCount { expected, .. } => format!("expected {expected} argument(s)"),
            ErrorKind::NoOverload { args, .. } => format!("called with ({args})"),
            ErrorKind::AmbiguousCall { .. } => "more than one overload matches".into(),
            ErrorKind::AssignImmutable { .. } => "cannot assign".into(),
            ErrorKind::OutsideLoop { .. } => "not inside `for` or `while`".into(),
            ErrorKind::UnknownType { .. } => "not a type".into(),
            ErrorKind::FixedSizeBound { .. } => "no fixed-size type of this size".into(),
            ErrorKind::UnknownField { .. } => "unknown field".into(),
            ErrorKind::NotCallable { .. } => "called here".into(),
            ErrorKind::ReturnMismatch { expected, found } => {
                format!("expected {expected}, found {found}")
            }
            ErrorKind::Duplicate { .. } => "defined again here".into(),
            ErrorKind::Reserved { .. } => "reserved name".into(),
            ErrorKind::BadIndex { .. } => "bad index".into(),
            ErrorKind::BadCast { .. } => "invalid cast".into(),
            ErrorKind::NotConstant { .. } => "not a constant".into(),
            ErrorKind::ConstFails { .. } => "fails here".into(),
            ErrorKind::UnknownAttribute { .. } => "unknown attribute".into(),
            ErrorKind::BadAttributeArguments { .. } => "unknown argument".into(),
            ErrorKind::RepeatedAttribute { .. } => "given again here".into(),
            ErrorKind::MisplacedAttribute { .. } => "not on a `fn`".into(),
            ErrorKind::TermType { found, .. } => format!("this is {found}"),
            ErrorKind::BadMeshDecl { .. } => "invalid declaration".into(),
            ErrorKind::UnknownStencil { .. } => "not a stencil".into(),
            ErrorKind::BadAssignTarget => "cannot assign to this expression".into(),
            ErrorKind::UnresolvedImport { .. } => "no such item".into(),
            ErrorKind::AmbiguousName { .. } => "ambiguous name".into(),
            ErrorKind::BadMeshRead { .. } => "invalid mesh read".into(),
            ErrorKind::BadObjective { .. } => "not allowed in an objective".into(),
            ErrorKind::BadSolveBlock { .. } => "not a valid solve setting".into(),
            ErrorKind::BadInit { .. } => "not a valid initializer".into(),
            ErrorKind::BadUpdate { .. } => "not a valid state or update".into(),
            ErrorKind::BadBroadphase { .. } => "not a valid broad phase".into(),
            ErrorKind::ModFileNotFound { path, .. } => format!("no file `{path}`"),
            ErrorKind::ModFileUnreadable { .. } => "unreadable file".into(),
            ErrorKind::ModFileCycle { chain } => {
                format!("loads `{}` again", chain.last().map_or("", String::as_str))
            }
            ErrorKind::ModFileTwice { .. } => "loaded again here".into(),
            ErrorKind::ModFileWithoutFile { .. } => "no file to look next to".into(),
            ErrorKind::MeshDeclInModuleFile { .. } => "in a file loaded by `mod`".into(),
            ErrorKind::PatternMismatch { .. } => "pattern does not match".into(),
            ErrorKind::BranchMismatch { else_ty, .. } => format!("this is {else_ty}"),
            ErrorKind::NotAValue { .. } => "not a value".into(),
            ErrorKind::StringValue => "string literal".into(),
            ErrorKind::BadElementType { .. } => "invalid element type".into(),
            ErrorKind::HandleMisuse { .. } => "element handle".into(),
            ErrorKind::ReverseLoop { .. } => {
                "the reverse-mode derivative of this loop uses the tape".into()
            }
            ErrorKind::SctImpossible { .. } => {
                "the trip count of this loop depends on the data".into()
            }
            ErrorKind::NotDiffTarget { detail, .. } if detail.starts_with("the argument index") => {
                "not a non-negative integer literal".into()
            }
            ErrorKind::NotDiffTarget { .. } => "not a function".into(),
            ErrorKind::DiffSignature { .. } => "cannot be differentiated this way".into(),
            ErrorKind::DiffTooDeep { .. } => "already as deep as operators nest".into(),
            ErrorKind::DiffCycle { .. } => "depends on itself".into(),
        }
    }

    fn help(&self) -> Vec<String> {
        match self {
            ErrorKind::UnknownName { suggestion: Some(s), .. } => vec![format!("did you mean `{s}`?")],
            ErrorKind::BadOperands { help: Some(h), .. } => vec![h.clone()],
            ErrorKind::AmbiguousName { candidates, .. } => {
                let mut s = "write the path of the one you mean; the name is each of:".to_string();
                for c in candidates {
                    s.push_str("\n  ");
                    s.push_str(c);
                }
                vec![s]
            }
            ErrorKind::AmbiguousCall { candidates, .. } => {
                let mut s = "each of these matches (write `1.0` for a float literal, or cast with `as`):".to_string();
                for c in candidates {
                    s.push_str("\n  ");
                    s.push_str(c);
                }
                vec![s]
            }
            ErrorKind::NoOverload { candidates, .. } if !candidates.is_empty() => {
                let mut s = "candidates are:".to_string();
                for c in candidates {
                    s.push_str("\n  ");
                    s.push_str(c);
                }
                vec![s]
            }
            ErrorKind::AssignImmutable { name, what, .. } => vec![match *what {
                "variable" => format!("declare it with `let mut {name}` to make it mutable"),
                "parameter" => format!("parameters are immutable: copy it into a mutable variable, `let mut {name} = {name};`"),
                "loop variable" => "the loop sets it on every trip: count with a `let mut` variable of your own".into(),
                "element handle" => "an element's vertices are the mesh's: read them (`e.v0`), write none".into(),
                "state field" => "an `update` computes a state: its body's value is what is written".into(),
                _ => "compute the new value in a `let mut` variable".into(),
            }],
            ErrorKind::UnknownType { .. } => vec![format!(
                "types are f64 f32 i64 bool vec2..vec{m} mat2..mat{m} matRxC (R, C ≤ {m}) vector matrix [T; N] [T] (T, U)",
                m = super::types::MAX_FIXED_SIZE
            )],
            ErrorKind::FixedSizeBound { .. } => vec![format!(
                "fixed sizes go up to {m} (`vec{m}`, `mat{m}`); for larger sizes, or sizes known only at run time, use `vector` and `matrix`",
                m = super::types::MAX_FIXED_SIZE
            )],
            ErrorKind::RepeatedAttribute { name } => vec![format!("give one `@{name}` per item")],
            ErrorKind::MisplacedAttribute { name, .. } => {
                vec![format!("`@{name}` applies to `fn` items only; put it on a function this item calls")]
            }
            ErrorKind::UnknownAttribute { help: Some(h), .. }
            | ErrorKind::BadMeshDecl { help: Some(h), .. }
            | ErrorKind::BadInit { help: Some(h), .. }
            | ErrorKind::BadUpdate { help: Some(h), .. }
            | ErrorKind::BadBroadphase { help: Some(h), .. } => {
                vec![h.clone()]
            }
            ErrorKind::UnknownStencil { .. } => vec!["stencils are vertex edge face diamond ring pair".into()],
            ErrorKind::BadCast { .. } => {
                vec!["`as` converts between f64, f32 and i64, and from bool to i64; elementwise between tensors of one shape".into()]
            }
            ErrorKind::StringValue => vec!["use it directly as `print(\"...\")`".into()],
            ErrorKind::ModFileNotFound { module, named: false, .. } => vec![format!(
                "`mod {module};` loads `{module}.mad` from the directory of the file that declares it; `mod {module} = \"PATH\";` names another file, relative to that directory"
            )],
            ErrorKind::ModFileNotFound { module, named: true, .. } => vec![format!(
                "the path in `mod {module} = \"PATH\";` is relative to the directory of the file that declares it"
            )],
            ErrorKind::ModFileUnreadable { .. } => {
                vec!["a module file is a readable text file of items (functions, constants, modules, `use`)".into()]
            }
            ErrorKind::ModFileCycle { .. } => {
                vec!["a file is one module and cannot contain itself: move what both files need into a third".into()]
            }
            ErrorKind::ModFileTwice { .. } => vec![
                "a file is one module: declare it once (e.g. in the root file) and reach its items by their path from elsewhere (`use util::f;`)".into(),
            ],
            ErrorKind::ModFileWithoutFile { module } => vec![format!(
                "compile the program from its file (`madc … FILE`, `Program::compile_file`), or write the module inline: `mod {module} {{ … }}`"
            )],
            ErrorKind::MeshDeclInModuleFile { .. } => vec![
                "mesh declarations (dof, data, state, param, energy, residual, objective, update, solve, broadphase) belong to the program's root file; module files hold functions and constants, which its terms may call".into(),
            ],
            ErrorKind::ReverseLoop { .. } => vec![
                "for second derivatives use `hessian(f)` (forward over reverse); forward mode (`jvp`, `jacobian`) passes such loops at any order"
                    .into(),
            ],
            ErrorKind::SctImpossible { .. } => vec![
                "remove `@ad(sct)` (the compiler then tapes this loop) or write `@ad(tape)`; `madc explain FILE` shows the mode of every region"
                    .into(),
            ],
            ErrorKind::NotDiffTarget { .. } => {
                vec!["write `grad(f)(x)`, `grad(f, i)(x)`, `hessian(f)(x)`, `jvp(f)(x, dx)`, `vjp(f)(x, dy)` or `jacobian(f)(x)`".into()]
            }
            ErrorKind::DiffSignature { op, .. } => vec![match op.as_str() {
                "grad" => "`grad` applies to functions returning f64 with at least one floating-point argument".into(),
                "hessian" => "`hessian` applies to functions returning f64 whose floating-point arguments are f64 values (scalars, fixed-size or dynamic tensors)".into(),
                "jacobian" => "`jacobian` applies to functions returning f64 or a vector whose floating-point arguments are f64 values (scalars, fixed-size or dynamic tensors)".into(),
                _ => format!("`{op}` applies to functions with a floating-point argument and a floating-point result"),
            }],
            ErrorKind::DiffCycle { .. } => vec!["a function cannot call its own derivative".into()],
            ErrorKind::DiffTooDeep { .. } => vec![
                "each level about doubles the code built and the time to build it; derivatives of that order are rarely what a program needs".into(),
            ],
            _ => Vec::new(),
        }
    }
}

/// One front-end error at a place in a source file.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontError {
    pub kind: ErrorKind,
    pub file: usize,
    pub span: Span,
}

impl FrontError {
    pub fn to_diagnostic(&self) -> Diagnostic<usize> {
        let mut labels =
            vec![Label::primary(self.file, self.span.range()).with_message(self.kind.label())];
        match &self.kind {
            ErrorKind::Duplicate { first, .. } => {
                labels.push(
                    Label::secondary(self.file, first.range()).with_message("first defined here"),
                );
            }
            ErrorKind::ModFileTwice {
                first_file, first, ..
            } => {
                labels.push(
                    Label::secondary(*first_file, first.range()).with_message("first loaded here"),
                );
            }
            ErrorKind::AssignImmutable {
                declared: Some(d), ..
            } => {
                labels.push(Label::secondary(self.file, d.range()).with_message("declared here"));
            }
            ErrorKind::ReverseLoop {
                op,
                site_file,
                site,
            }
            | ErrorKind::SctImpossible {
                op,
                site_file,
                site,
                ..
            } => {
                labels.push(
                    Label::secondary(*site_file, site.range())
                        .with_message(format!("differentiated by `{op}` here")),
                );
            }
            _ => {}
        }
        Diagnostic::error()
            .with_code(self.kind.code())
            .with_message(self.kind.message())
            .with_labels(labels)
            .with_notes(
                self.kind
                    .help()
                    .into_iter()
                    .map(|h| format!("help: {h}"))
                    .collect(),
            )
    }
}

/// Edit distance with adjacent transpositions (optimal string alignment), for
/// "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The closest candidate within an edit distance of a third of the name (at least 1).
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let n = name.chars().count();
    let limit = (n / 3).max(1);
    candidates
        .into_iter()
        // A candidate whose length differs by more than the limit cannot be within it (and
        // skipping it keeps a huge misspelt name from costing length × length per name).
        .filter(|c| c.chars().count().abs_diff(n) <= limit)
        .filter(|c| !c.starts_with('$') && *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("nrom", "norm"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(suggest("nrm", ["norm", "dot"]), Some("norm".to_string()));
        assert_eq!(suggest("xyz", ["norm", "dot"]), None);
    }
}
