//! Deliberate mistranslations, so that the verification suite can prove it detects one
//! (tests/verify_agal.rs, `harness_detects_mutation`, ...).
//!
//! The library knows nothing of them: the harness lowers through shrec as a build does, then
//! [`apply`] rewrites the lowered IR module (swaps the IR node the mutation names) before HLSL is
//! written ([`crate::check`]). The switch is per thread, so a test that turns it on cannot
//! affect tests running in parallel threads.

use std::cell::Cell;

use shrec::formats::xenos::lower::{MEMEXPORT_ALLOC_BEGIN, MEMEXPORT_ALLOC_END, MEMEXPORT_KILL};
use shrec::ir::{BinOp, Cond, Expr, Module, Stmt};

/// A deliberate mistranslation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    None,
    /// AGAL `add` is lowered as a subtraction.
    AgalAddAsSub,
    /// A single-lane AGAL write takes lane x of the value instead of the positional lane
    /// (the deviation docs/isa/agal.md §9.5 item 5 documents in Ruffle).
    AgalSingleLaneWriteFromX,
    /// PICA `mul` (and the products of mad/dp*) use the IEEE multiply (0·inf = NaN) instead of
    /// the PICA multiply.
    PicaMulAsIeee,
    /// GX2 (Latte) `MUL` (and the products of MULADD / DOT4) use the IEEE multiply instead of
    /// the non-IEEE one (0 × anything = 0).
    Gx2MulAsIeee,
    /// PICA `emit` ignores the `setemit … inv` flag (wrong vertex order).
    PicaGsIgnoreWinding,
    /// GX2 geometry shaders: CUT_VERTEX / EMIT_CUT_VERTEX do not end the strip.
    Gx2GsDropCut,
    /// Xenos `mul` (and every product: mad, dp*, muls, ...) uses the IEEE multiply instead of the
    /// D3D9 "0 × anything = 0" multiply.
    XenosMulAsIeee,
    /// Xenos `alloc` does not store the pending memory exports (only the end of the shader
    /// does, with the last eA).
    XenosMemExportAllocNoStore,
    /// A Xenos pixel-shader kill discards the pixel without storing its pending memory exports.
    XenosMemExportKillNoStore,
    /// Xenos memory export stores eM# with lanes x and y exchanged (the two halves of a
    /// 16_16_FLOAT element).
    XenosMemExportSwapXY,
    /// GX2 stream-out places every output one dword later in its record.
    Gx2StreamOutWrongOffset,
    /// GX2 stream-out outputs are declared but never assigned (the MEM_STREAM writes dropped).
    Gx2StreamOutDropped,
}

thread_local! {
    static MUTATION: Cell<Mutation> = const { Cell::new(Mutation::None) };
}

/// Turns a mutation on (or off with [`Mutation::None`]) for the calling thread.
pub fn set_mutation(m: Mutation) {
    MUTATION.with(|c| c.set(m));
}

/// The calling thread's mutation (always [`Mutation::None`] unless a test set one).
pub fn mutation() -> Mutation {
    MUTATION.with(|c| c.get())
}

/// The calling thread's mutation applied to a lowered module (a copy; the module itself when no
/// mutation is on).
pub fn applied(m: &Module) -> std::borrow::Cow<'_, Module> {
    match mutation() {
        Mutation::None => std::borrow::Cow::Borrowed(m),
        mutation => {
            let mut m = m.clone();
            apply(mutation, &mut m);
            std::borrow::Cow::Owned(m)
        }
    }
}

/// Rewrites `m` as the lowering would have been wrong under `mutation`.
pub fn apply(mutation: Mutation, m: &mut Module) {
    use Mutation as M;
    match mutation {
        M::None => {}
        M::AgalAddAsSub => exprs(&mut m.body, &mut |e| swap_binop(e, BinOp::Add, BinOp::Sub)),
        M::PicaMulAsIeee => exprs(&mut m.body, &mut |e| swap_binop(e, BinOp::MulPica, BinOp::Mul)),
        M::Gx2MulAsIeee | M::XenosMulAsIeee => exprs(&mut m.body, &mut |e| swap_binop(e, BinOp::MulLegacy, BinOp::Mul)),
        M::AgalSingleLaneWriteFromX => stmts(&mut m.body, &mut |s| {
            if let Stmt::Assign { dst, value, .. } = s {
                if dst.mask.count_ones() == 1 {
                    *value = Expr::Swizzle(Box::new(value.clone()), [0; 4]);
                }
            }
        }),
        M::PicaGsIgnoreWinding => stmts(&mut m.body, &mut |s| {
            if let Stmt::GsEmitTriangle { invert } = s {
                // never inverted: compare 0 with 0 for inequality
                *invert = Cond::IntCmp(shrec::ir::CmpOp::Ne, shrec::ir::IExpr::Const(0), shrec::ir::IExpr::Const(0));
            }
        }),
        M::Gx2GsDropCut => bodies(&mut m.body, &mut |b| b.retain(|s| !matches!(s, Stmt::GsCutStrip))),
        M::XenosMemExportSwapXY => stmts(&mut m.body, &mut |s| {
            if let Stmt::XenosMemExport { value, .. } = s {
                *value = Expr::Swizzle(Box::new(value.clone()), [1, 0, 2, 3]);
            }
        }),
        M::XenosMemExportAllocNoStore => bodies(&mut m.body, &mut |b| {
            // drop everything between the alloc markers (the markers stay, as comments)
            let mut inside = false;
            b.retain(|s| match s {
                Stmt::Comment(c) if c == MEMEXPORT_ALLOC_BEGIN => {
                    inside = true;
                    true
                }
                Stmt::Comment(c) if c == MEMEXPORT_ALLOC_END => {
                    inside = false;
                    true
                }
                _ => !inside,
            })
        }),
        M::Gx2StreamOutWrongOffset => {
            if let Some(so) = &mut m.ext.stream_out {
                // one dword later, the record one dword longer so that the table stays valid
                for e in &mut so.entries {
                    e.offset += 1;
                }
                for s in so.strides.iter_mut().filter(|s| **s != 0) {
                    *s += 4;
                }
            }
        }
        M::Gx2StreamOutDropped => {
            let so: Vec<u32> = m.ext.stream_out.iter().flat_map(|so| so.entries.iter().map(|e| e.output)).collect();
            bodies(&mut m.body, &mut |b| {
                b.retain(|s| !matches!(s, Stmt::Assign { dst, .. } if so.iter().any(|&i| dst.reg == shrec::ir::RegRef::fixed(shrec::ir::RegFile::Output, i))))
            })
        }
        M::XenosMemExportKillNoStore => bodies(&mut m.body, &mut |b| {
            b.retain(|s| !matches!(s, Stmt::If { then_body, .. } if matches!(then_body.first(), Some(Stmt::Comment(c)) if c == MEMEXPORT_KILL)))
        }),
    }
}

fn swap_binop(e: &mut Expr, from: BinOp, to: BinOp) {
    if let Expr::Binary(op, ..) = e {
        if *op == from {
            *op = to;
        }
    }
}

/// Calls `f` on every statement list (the module body and every nested body), outermost first.
fn bodies(body: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Vec<Stmt>)) {
    f(body);
    for s in body.iter_mut() {
        match s {
            Stmt::If { then_body, else_body, .. } => {
                bodies(then_body, f);
                bodies(else_body, f);
            }
            Stmt::Loop { body } => bodies(body, f),
            _ => {}
        }
    }
}

/// Calls `f` on every statement, nested ones included.
fn stmts(body: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Stmt)) {
    bodies(body, &mut |b| b.iter_mut().for_each(&mut *f));
}

/// Calls `f` on every float expression of every statement (children before their parent).
fn exprs(body: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Expr)) {
    stmts(body, &mut |s| match s {
        Stmt::Assign { value, .. } | Stmt::LocalStore { value, .. } => expr(value, f),
        Stmt::If { cond, .. } | Stmt::Discard(cond) | Stmt::GsEmitTriangle { invert: cond } => cond_exprs(cond, f),
        Stmt::XenosMemExport { address, value, .. } => {
            expr(address, f);
            expr(value, f);
        }
        Stmt::Loop { .. }
        | Stmt::Break
        | Stmt::Continue
        | Stmt::Return
        | Stmt::Comment(_)
        | Stmt::SetInt { .. }
        | Stmt::GsStore(_)
        | Stmt::GsEmitVertex
        | Stmt::GsCutStrip
        | Stmt::LocalLoad { .. } => {}
    });
}

fn cond_exprs(c: &mut Cond, f: &mut dyn FnMut(&mut Expr)) {
    match c {
        Cond::Compare(_, a, b) => {
            expr(a, f);
            expr(b, f);
        }
        Cond::AnyNegative(e) | Cond::BitSet { value: e, .. } => expr(e, f),
        Cond::Not(c) => cond_exprs(c, f),
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond_exprs(a, f);
            cond_exprs(b, f);
        }
        Cond::IntCmp(..) => {}
    }
}

fn expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match e {
        Expr::Read(_) | Expr::Literal(_) | Expr::TexSize { .. } | Expr::Bits(_) => {}
        Expr::Swizzle(a, _)
        | Expr::Unary(_, a)
        | Expr::IntUnary(_, a)
        | Expr::QueryLod { coord: a, .. }
        | Expr::Sample { coord: a, .. }
        | Expr::Gather { coord: a, .. }
        | Expr::TexInfo { lod: a, .. } => expr(a, f),
        Expr::SampleCmp { coord, reference, .. } | Expr::SampleCmpMode { coord, reference, .. } => {
            expr(coord, f);
            expr(reference, f);
        }
        Expr::Load { coord, lod, .. } => {
            expr(coord, f);
            expr(lod, f);
        }
        Expr::Compose(parts) => parts.iter_mut().for_each(|p| expr(p, f)),
        Expr::Binary(_, a, b) | Expr::Dot(_, a, b) | Expr::DotPica(_, a, b) | Expr::IntBinary(_, a, b) => {
            expr(a, f);
            expr(b, f);
        }
        Expr::Mad(a, b, c) | Expr::IntTernary(_, a, b, c) => {
            expr(a, f);
            expr(b, f);
            expr(c, f);
        }
        Expr::Select { a, b, if_true, if_false, .. } => {
            expr(a, f);
            expr(b, f);
            expr(if_true, f);
            expr(if_false, f);
        }
        Expr::SelectIf(c, a, b) => {
            cond_exprs(c, f);
            expr(a, f);
            expr(b, f);
        }
    }
    f(e);
}
