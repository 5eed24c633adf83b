//! Shared test helpers: an S-expression printer for the AST (written from
//! the AST's definition alone), diagnostic rendering and an iterative depth
//! meter.
#![allow(dead_code)]

use codespan_reporting::diagnostic::Diagnostic;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config};
use mad_grammar::ast::*;

/// Parses and returns the S-expression form of a file with no diagnostics.
pub fn parse_ok(src: &str) -> File {
    let (file, diags) = mad_grammar::parse(src, 0);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics:\n{}",
        render(src, &diags)
    );
    file
}

/// The S-expression of the value of `const C: f64 = <src>;`.
pub fn expr(src: &str) -> String {
    let file = parse_ok(&format!("const C: f64 = {src};"));
    match &file.items[0].kind {
        ItemKind::Const { value, .. } => sexpr(value),
        other => panic!("not a const: {other:?}"),
    }
}

/// The S-expressions of the statements (and tail) of `fn f() { <src> }`.
pub fn body(src: &str) -> String {
    let file = parse_ok(&format!("fn f() {{ {src} }}"));
    match &file.items[0].kind {
        ItemKind::Fn(f) => block(&f.body),
        other => panic!("not a fn: {other:?}"),
    }
}

/// Renders every diagnostic, without colour, as a user would see it.
pub fn render(src: &str, diags: &[Diagnostic<usize>]) -> String {
    let mut files = SimpleFiles::new();
    let id = files.add("test.mad", src);
    assert_eq!(id, 0);
    let config = Config::default();
    diags
        .iter()
        .map(|d| term::emit_into_string(&config, &files, d).expect("diagnostic renders"))
        .collect::<Vec<_>>()
        .join("")
}

/// The codes of the diagnostics of `src`.
pub fn codes(src: &str) -> Vec<String> {
    let (_, diags) = mad_grammar::parse(src, 0);
    diags
        .iter()
        .map(|d| d.code.clone().unwrap_or_default())
        .collect()
}

fn op(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Pow => "^",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::And => "&&",
        BinOp::Or => "||",
    }
}

fn list<T>(xs: &[T], f: impl Fn(&T) -> String) -> String {
    xs.iter().map(f).collect::<Vec<_>>().join(" ")
}

pub fn ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named(n) => n.clone(),
        TypeExprKind::Array(e, n) => format!("[{}; {n}]", ty(e)),
        TypeExprKind::Slice(e) => format!("[{}]", ty(e)),
        TypeExprKind::Tuple(ts) => format!("(tuple {})", list(ts, ty)),
    }
}

pub fn pat(p: &Pattern) -> String {
    match p {
        Pattern::Name(n) => n.node.clone(),
        Pattern::Wild(_) => "_".to_string(),
        Pattern::Tuple(ps, _) => format!("(tuple {})", list(ps, pat)),
    }
}

pub fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{:?}", v.value),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Path(p) => p
            .iter()
            .map(|i| i.node.as_str())
            .collect::<Vec<_>>()
            .join("::"),
        ExprKind::Binary { op: o, lhs, rhs } => {
            format!("({} {} {})", op(*o), sexpr(lhs), sexpr(rhs))
        }
        ExprKind::Unary {
            op: UnOp::Neg,
            operand,
        } => format!("(neg {})", sexpr(operand)),
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => format!("(not {})", sexpr(operand)),
        ExprKind::Cast { expr, ty: t } => format!("(as {} {})", sexpr(expr), ty(t)),
        ExprKind::Call { callee, args } => {
            format!("(call {} [{}])", sexpr(callee), list(args, sexpr))
        }
        ExprKind::Index { base, indices } => {
            format!("(index {} [{}])", sexpr(base), list(indices, sexpr))
        }
        ExprKind::Slice { base, lo, hi } => {
            let bound = |b: &Option<Box<Expr>>| b.as_deref().map_or("_".to_string(), sexpr);
            format!("(slice {} {} {})", sexpr(base), bound(lo), bound(hi))
        }
        ExprKind::Field { base, name } => format!("(. {} {})", sexpr(base), name.node),
        ExprKind::TupleField { base, index, .. } => format!("(. {} {index})", sexpr(base)),
        ExprKind::Tuple(es) => format!("(tuple {})", list(es, sexpr)),
        ExprKind::Array(es) => format!("(array {})", list(es, sexpr)),
        ExprKind::ArrayRepeat { value, count } => {
            format!("(repeat {} {})", sexpr(value), sexpr(count))
        }
        ExprKind::Block(b) => block(b),
        ExprKind::If { cond, then, else_ } => match else_ {
            Some(e) => format!("(if {} {} {})", sexpr(cond), block(then), sexpr(e)),
            None => format!("(if {} {})", sexpr(cond), block(then)),
        },
        ExprKind::Error => "<error>".to_string(),
    }
}

pub fn block(b: &Block) -> String {
    let mut parts: Vec<String> = b.stmts.iter().map(stmt).collect();
    if let Some(t) = &b.tail {
        parts.push(format!("(tail {})", sexpr(t)));
    }
    format!("{{{}}}", parts.join(" "))
}

pub fn stmt(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Let {
            pat: p,
            mutable,
            ty: t,
            value,
        } => format!(
            "(let{} {}{} {})",
            if *mutable { " mut" } else { "" },
            pat(p),
            t.as_ref()
                .map(|t| format!(": {}", ty(t)))
                .unwrap_or_default(),
            sexpr(value)
        ),
        StmtKind::Assign {
            place,
            op: o,
            value,
        } => {
            format!(
                "({}= {} {})",
                o.map(op).unwrap_or(""),
                sexpr(place),
                sexpr(value)
            )
        }
        StmtKind::Expr(e) => format!("(expr {})", sexpr(e)),
        StmtKind::For { var, lo, hi, body } => {
            format!(
                "(for {} {} {} {})",
                var.node,
                sexpr(lo),
                sexpr(hi),
                block(body)
            )
        }
        StmtKind::While { cond, body } => format!("(while {} {})", sexpr(cond), block(body)),
        StmtKind::Break => "(break)".to_string(),
        StmtKind::Continue => "(continue)".to_string(),
        StmtKind::Return(None) => "(return)".to_string(),
        StmtKind::Return(Some(e)) => format!("(return {})", sexpr(e)),
        StmtKind::Error => "<error>".to_string(),
    }
}

pub fn item(i: &Item) -> String {
    let attrs: String = i
        .attrs
        .iter()
        .map(|a| format!("@{}({}) ", a.name.node, list(&a.args, |x| x.node.clone())))
        .collect();
    let kind = match &i.kind {
        ItemKind::Fn(f) => format!(
            "(fn {} [{}] {} {})",
            f.name.node,
            list(&f.params, |p| format!("{}: {}", p.name.node, ty(&p.ty))),
            f.ret.as_ref().map(ty).unwrap_or_else(|| "()".to_string()),
            block(&f.body)
        ),
        ItemKind::Mod { name, items } => format!("(mod {} [{}])", name.node, list(items, item)),
        ItemKind::ModFile { name, path } => match path {
            Some(p) => format!("(mod {} = {:?})", name.node, p.node),
            None => format!("(mod {};)", name.node),
        },
        ItemKind::Use(u) => {
            let prefix = list(&u.prefix, |i| i.node.clone());
            let kind = match &u.kind {
                UseKind::Single(n) => n.node.clone(),
                UseKind::Group(ns) => format!("{{{}}}", list(ns, |n| n.node.clone())),
                UseKind::Glob => "*".to_string(),
            };
            format!("(use [{prefix}] {kind})")
        }
        ItemKind::Const { name, ty: t, value } => {
            format!("(const {} {} {})", name.node, ty(t), sexpr(value))
        }
        ItemKind::Dof {
            name,
            stencil,
            ty: t,
            init,
        } => format!(
            "(dof {} {} {}{})",
            name.node,
            stencil.node,
            ty(t),
            init.as_ref()
                .map(|d| format!(" {}", sexpr(d)))
                .unwrap_or_default()
        ),
        ItemKind::Data {
            name,
            stencil,
            ty: t,
        } => format!("(data {} {} {})", name.node, stencil.node, ty(t)),
        ItemKind::Param {
            name,
            ty: t,
            default,
        } => format!(
            "(param {} {}{})",
            name.node,
            ty(t),
            default
                .as_ref()
                .map(|d| format!(" {}", sexpr(d)))
                .unwrap_or_default()
        ),
        ItemKind::Energy {
            name,
            elem,
            stencil,
            body,
        } => {
            format!(
                "(energy {} {}: {} {})",
                name.node,
                elem.node,
                stencil.node,
                block(body)
            )
        }
        ItemKind::Residual {
            name,
            elem,
            stencil,
            ret,
            body,
        } => format!(
            "(residual {} {}: {} {} {})",
            name.node,
            elem.node,
            stencil.node,
            ty(ret),
            block(body)
        ),
        ItemKind::Objective { value } => format!("(objective {})", sexpr(value)),
        ItemKind::State {
            keyword,
            name,
            stencil,
            ty: t,
            init,
        } => format!(
            "({} {} {} {}{})",
            keyword.node,
            name.node,
            stencil.node,
            ty(t),
            init.as_ref()
                .map(|d| format!(" {}", sexpr(d)))
                .unwrap_or_default()
        ),
        ItemKind::Update {
            keyword,
            name,
            elem,
            stencil,
            body,
        } => {
            format!(
                "({} {} {}: {} {})",
                keyword.node,
                name.node,
                elem.node,
                stencil.node,
                block(body)
            )
        }
        ItemKind::Solve { keyword, entries } => {
            let es: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("({} {})", k.node, sexpr(v)))
                .collect();
            format!("({} {})", keyword.node, es.join(" "))
        }
        ItemKind::Broadphase {
            keyword,
            kinds,
            within,
            distance,
        } => {
            let ks: Vec<&str> = kinds.iter().map(|k| k.node.as_str()).collect();
            format!(
                "({} ({}) {} {})",
                keyword.node,
                ks.join(" "),
                within.node,
                sexpr(distance)
            )
        }
    };
    format!("{attrs}{kind}")
}

pub fn file(f: &File) -> String {
    f.items.iter().map(item).collect::<Vec<_>>().join("\n")
}

/// The depth of a file (a leaf is 1), measured with an explicit stack.
pub fn depth(f: &File) -> usize {
    enum N<'a> {
        Item(&'a Item),
        Expr(&'a Expr),
        Block(&'a Block),
        Stmt(&'a Stmt),
        Ty(&'a TypeExpr),
        Pat(&'a Pattern),
    }
    let mut stack: Vec<(N, usize)> = f.items.iter().map(|i| (N::Item(i), 2)).collect();
    let mut max = 1;
    while let Some((n, d)) = stack.pop() {
        max = max.max(d);
        let mut kids: Vec<N> = Vec::new();
        let mut push = |c| kids.push(c);
        match n {
            N::Item(i) => match &i.kind {
                ItemKind::Fn(f) => {
                    f.params.iter().for_each(|p| push(N::Ty(&p.ty)));
                    if let Some(r) = &f.ret {
                        push(N::Ty(r));
                    }
                    push(N::Block(&f.body));
                }
                ItemKind::Mod { items, .. } => items.iter().for_each(|i| push(N::Item(i))),
                ItemKind::Use(_) | ItemKind::ModFile { .. } => {}
                ItemKind::Const { ty, value, .. } => {
                    push(N::Ty(ty));
                    push(N::Expr(value));
                }
                ItemKind::Data { ty, .. } => push(N::Ty(ty)),
                ItemKind::Dof { ty, init, .. } | ItemKind::State { ty, init, .. } => {
                    push(N::Ty(ty));
                    if let Some(d) = init {
                        push(N::Expr(d));
                    }
                }
                ItemKind::Update { body, .. } => push(N::Block(body)),
                ItemKind::Param { ty, default, .. } => {
                    push(N::Ty(ty));
                    if let Some(d) = default {
                        push(N::Expr(d));
                    }
                }
                ItemKind::Energy { body, .. } => push(N::Block(body)),
                ItemKind::Residual { ret, body, .. } => {
                    push(N::Ty(ret));
                    push(N::Block(body));
                }
                ItemKind::Objective { value } => push(N::Expr(value)),
                ItemKind::Solve { entries, .. } => {
                    for (_, v) in entries {
                        push(N::Expr(v));
                    }
                }
                ItemKind::Broadphase { distance, .. } => push(N::Expr(distance)),
            },
            N::Block(b) => {
                b.stmts.iter().for_each(|s| push(N::Stmt(s)));
                if let Some(t) = &b.tail {
                    push(N::Expr(t));
                }
            }
            N::Stmt(s) => match &s.kind {
                StmtKind::Let { pat, ty, value, .. } => {
                    push(N::Pat(pat));
                    if let Some(t) = ty {
                        push(N::Ty(t));
                    }
                    push(N::Expr(value));
                }
                StmtKind::Assign { place, value, .. } => {
                    push(N::Expr(place));
                    push(N::Expr(value));
                }
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => push(N::Expr(e)),
                StmtKind::For { lo, hi, body, .. } => {
                    push(N::Expr(lo));
                    push(N::Expr(hi));
                    push(N::Block(body));
                }
                StmtKind::While { cond, body } => {
                    push(N::Expr(cond));
                    push(N::Block(body));
                }
                _ => {}
            },
            N::Ty(t) => match &t.kind {
                TypeExprKind::Array(e, _) | TypeExprKind::Slice(e) => push(N::Ty(e)),
                TypeExprKind::Tuple(ts) => ts.iter().for_each(|t| push(N::Ty(t))),
                TypeExprKind::Named(_) => {}
            },
            N::Pat(p) => {
                if let Pattern::Tuple(ps, _) = p {
                    ps.iter().for_each(|p| push(N::Pat(p)));
                }
            }
            N::Expr(e) => match &e.kind {
                ExprKind::Binary { lhs, rhs, .. } => {
                    push(N::Expr(lhs));
                    push(N::Expr(rhs));
                }
                ExprKind::Unary { operand, .. } => push(N::Expr(operand)),
                ExprKind::Cast { expr, ty } => {
                    push(N::Expr(expr));
                    push(N::Ty(ty));
                }
                ExprKind::Call { callee, args } => {
                    push(N::Expr(callee));
                    args.iter().for_each(|a| push(N::Expr(a)));
                }
                ExprKind::Index { base, indices } => {
                    push(N::Expr(base));
                    indices.iter().for_each(|a| push(N::Expr(a)));
                }
                ExprKind::Slice { base, lo, hi } => {
                    push(N::Expr(base));
                    lo.iter().chain(hi.iter()).for_each(|a| push(N::Expr(a)));
                }
                ExprKind::Field { base, .. } | ExprKind::TupleField { base, .. } => {
                    push(N::Expr(base))
                }
                ExprKind::Tuple(es) | ExprKind::Array(es) => {
                    es.iter().for_each(|a| push(N::Expr(a)))
                }
                ExprKind::ArrayRepeat { value, count } => {
                    push(N::Expr(value));
                    push(N::Expr(count));
                }
                ExprKind::Block(b) => push(N::Block(b)),
                ExprKind::If { cond, then, else_ } => {
                    push(N::Expr(cond));
                    push(N::Block(then));
                    if let Some(e) = else_ {
                        push(N::Expr(e));
                    }
                }
                _ => {}
            },
        }
        stack.extend(kids.into_iter().map(|k| (k, d + 1)));
    }
    max
}
