//! Read-only walks over IR statements: which registers a statement reads.
//!
//! Front ends use this to reason about their own lowered bodies (e.g. the Xenos front end keeps
//! a pixel-shader input in the entry point's interface when its preloaded register is read
//! only after being overwritten, see `formats::xenos::lower`).

use super::{Cond, Dst, Expr, IExpr, Index, RegRef, SampleMode, Stmt};

/// Calls `f` with every register `e` reads (operands and the operands of dynamic indices).
pub fn expr_reads(e: &Expr, f: &mut impl FnMut(&RegRef)) {
    match e {
        Expr::Read(src) => {
            index_reads(&src.reg.index, f);
            f(&src.reg);
        }
        Expr::Literal(_) | Expr::Bits(_) | Expr::TexSize { .. } => {}
        Expr::Swizzle(a, _) | Expr::Unary(_, a) | Expr::IntUnary(_, a) => expr_reads(a, f),
        Expr::Compose(parts) => parts.iter().for_each(|p| expr_reads(p, f)),
        Expr::Binary(_, a, b) | Expr::IntBinary(_, a, b) | Expr::Dot(_, a, b) | Expr::DotPica(_, a, b) => {
            expr_reads(a, f);
            expr_reads(b, f);
        }
        Expr::Mad(a, b, c) | Expr::IntTernary(_, a, b, c) => {
            expr_reads(a, f);
            expr_reads(b, f);
            expr_reads(c, f);
        }
        Expr::Sample { coord, mode, .. } => {
            expr_reads(coord, f);
            match mode {
                SampleMode::Bias(_) => {}
                SampleMode::Lod(a) | SampleMode::BiasExpr(a) => expr_reads(a, f),
                SampleMode::Grad(x, y) => {
                    expr_reads(x, f);
                    expr_reads(y, f);
                }
            }
        }
        Expr::SampleCmp { coord, reference, .. } => {
            expr_reads(coord, f);
            expr_reads(reference, f);
        }
        Expr::QueryLod { coord, .. } | Expr::Gather { coord, .. } => expr_reads(coord, f),
        Expr::Load { coord, lod, .. } => {
            expr_reads(coord, f);
            expr_reads(lod, f);
        }
        Expr::TexInfo { lod, .. } => expr_reads(lod, f),
        Expr::Select { a, b, if_true, if_false, .. } => {
            expr_reads(a, f);
            expr_reads(b, f);
            expr_reads(if_true, f);
            expr_reads(if_false, f);
        }
        Expr::SelectIf(c, a, b) => {
            cond_reads(c, f);
            expr_reads(a, f);
            expr_reads(b, f);
        }
    }
}

/// Calls `f` with every register `c` reads.
pub fn cond_reads(c: &Cond, f: &mut impl FnMut(&RegRef)) {
    match c {
        Cond::Compare(_, a, b) => {
            expr_reads(a, f);
            expr_reads(b, f);
        }
        Cond::AnyNegative(a) | Cond::BitSet { value: a, .. } => expr_reads(a, f),
        Cond::Not(c) => cond_reads(c, f),
        Cond::IntCmp(_, a, b) => {
            iexpr_reads(a, f);
            iexpr_reads(b, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond_reads(a, f);
            cond_reads(b, f);
        }
    }
}

fn iexpr_reads(e: &IExpr, f: &mut impl FnMut(&RegRef)) {
    match e {
        IExpr::Const(_) | IExpr::Var(_) | IExpr::Uniform { .. } => {}
        IExpr::Elem(_, i) => iexpr_reads(i, f),
        IExpr::Add(a, b) | IExpr::Sub(a, b) | IExpr::And(a, b) | IExpr::Min(a, b) => {
            iexpr_reads(a, f);
            iexpr_reads(b, f);
        }
        IExpr::Select(c, a, b) => {
            cond_reads(c, f);
            iexpr_reads(a, f);
            iexpr_reads(b, f);
        }
        IExpr::TruncX86(x) => expr_reads(x, f),
    }
}

fn index_reads(i: &Index, f: &mut impl FnMut(&RegRef)) {
    match i {
        Index::Fixed(_) => {}
        Index::Dynamic { value, .. } => expr_reads(value, f),
        Index::Int(e) => iexpr_reads(e, f),
    }
}

fn dst_reads(d: &Dst, f: &mut impl FnMut(&RegRef)) {
    index_reads(&d.reg.index, f);
}

/// Calls `f` with every register `s` reads, nested statements included. The register an
/// assignment writes is not a read (the operands of its dynamic index are). `GsStore` /
/// `GsEmitVertex` read every output; they are reported as reads of no particular register, so
/// callers interested in outputs must treat them separately.
pub fn stmt_reads(s: &Stmt, f: &mut impl FnMut(&RegRef)) {
    match s {
        Stmt::Assign { dst, value, .. } => {
            dst_reads(dst, f);
            expr_reads(value, f);
        }
        Stmt::If { cond, then_body, else_body } => {
            cond_reads(cond, f);
            then_body.iter().chain(else_body).for_each(|s| stmt_reads(s, f));
        }
        Stmt::Loop { body } => body.iter().for_each(|s| stmt_reads(s, f)),
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Comment(_) | Stmt::GsEmitVertex | Stmt::GsCutStrip => {}
        Stmt::Discard(c) | Stmt::GsEmitTriangle { invert: c } => cond_reads(c, f),
        Stmt::SetInt { index, value, .. } => {
            if let Some(i) = index {
                iexpr_reads(i, f);
            }
            iexpr_reads(value, f);
        }
        Stmt::GsStore(i) => iexpr_reads(i, f),
        Stmt::RingStore { index, value, .. } => {
            index_reads(index, f);
            expr_reads(value, f);
        }
        Stmt::RingLoad { dst, index } => {
            dst_reads(dst, f);
            index_reads(index, f);
        }
        Stmt::XenosMemExport { address, value, .. } => {
            expr_reads(address, f);
            expr_reads(value, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::build::read;
    use crate::ir::{BinOp, CmpOp, IndexConv, RegFile, XYZW};

    #[test]
    fn reads_include_conditions_nested_bodies_and_dynamic_indices_but_not_the_destination() {
        let dynamic =
            RegRef { file: RegFile::Temp, index: Index::Dynamic { base: 0, value: Box::new(read(RegFile::Temp, 5, XYZW)), conv: IndexConv::Floor } };
        let body = Stmt::If {
            cond: Cond::Compare(CmpOp::Lt, read(RegFile::Temp, 1, XYZW), read(RegFile::Input, 0, XYZW)),
            then_body: vec![Stmt::Assign {
                dst: Dst { reg: dynamic, mask: 1 },
                value: Expr::Binary(BinOp::Add, Box::new(read(RegFile::Temp, 2, XYZW)), Box::new(Expr::Literal([1.0; 4]))),
                saturate: false,
            }],
            else_body: vec![Stmt::Assign {
                dst: Dst { reg: RegRef::fixed(RegFile::Temp, 3), mask: 0xF },
                value: read(RegFile::Temp, 4, XYZW),
                saturate: false,
            }],
        };
        let mut seen = Vec::new();
        stmt_reads(&body, &mut |r| {
            if let Index::Fixed(i) = r.index {
                seen.push((r.file, i));
            }
        });
        seen.sort_by_key(|&(f, i)| (format!("{f:?}"), i));
        assert_eq!(seen, vec![(RegFile::Input, 0), (RegFile::Temp, 1), (RegFile::Temp, 2), (RegFile::Temp, 4), (RegFile::Temp, 5)]);
    }
}
