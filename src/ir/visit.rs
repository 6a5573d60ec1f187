//! Walks over IR statements and expressions: which registers a statement reads, and the generic
//! child walkers (shared and mutable) every optimizing pass goes through, with the lanes each
//! child needs (`expr_children`, `expr_children_mut`, `stmt_exprs`, ...). Passes walk expressions
//! only through this file, so a new `Expr` variant is one match arm here.
//!
//! Front ends use this to reason about their own lowered bodies (e.g. the Xenos front end keeps
//! a pixel-shader input in the entry point's interface when its preloaded register is read
//! only after being overwritten, see `formats::xenos::lower`).

use super::{BinOp, Cond, Dst, Expr, IExpr, Index, RegRef, SampleMode, Src, Stmt, Texture, UnOp};

/// Calls `f` with every register a sample's level operands read.
fn sample_mode_reads(mode: &SampleMode, f: &mut impl FnMut(&RegRef)) {
    match mode {
        SampleMode::Bias(_) => {}
        SampleMode::Lod(a) | SampleMode::BiasExpr(a) => expr_reads(a, f),
        SampleMode::Grad(x, y) => {
            expr_reads(x, f);
            expr_reads(y, f);
        }
    }
}

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
            sample_mode_reads(mode, f);
        }
        Expr::SampleCmp { coord, reference, .. } => {
            expr_reads(coord, f);
            expr_reads(reference, f);
        }
        Expr::SampleCmpMode { coord, reference, mode, .. } => {
            expr_reads(coord, f);
            expr_reads(reference, f);
            sample_mode_reads(mode, f);
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
        Stmt::LocalStore { index, value, .. } => {
            index_reads(index, f);
            expr_reads(value, f);
        }
        Stmt::LocalLoad { dst, index } => {
            dst_reads(dst, f);
            index_reads(index, f);
        }
        Stmt::XenosMemExport { address, value, .. } => {
            expr_reads(address, f);
            expr_reads(value, f);
        }
    }
}

/// The lanes of a vector that an operation reading `demanded` lanes of its result needs from an
/// operand that is read lane by lane (lane `i` of the result from lane `i` of the operand).
fn per_lane(demanded: u8) -> u8 {
    demanded & 0xF
}

/// `first` lanes (x, xy, xyz or xyzw) when any lane of the result is demanded, else none: the
/// operand of a reduction or cross-lane operation (dot products, cross, normalize, coordinates).
fn first_lanes(demanded: u8, first: usize) -> u8 {
    if demanded & 0xF == 0 {
        0
    } else {
        ((1u16 << first.min(4)) - 1) as u8
    }
}

/// Coordinate lanes of texture `tex` (all four when the module has no such texture: the
/// validator reports that, a walker only needs to stay conservative).
fn coord_mask(textures: &[Texture], tex: u32) -> usize {
    textures.get(tex as usize).map_or(4, |t| t.dim.coord_lanes())
}

/// Lane x only, when anything is demanded.
fn lane_x(demanded: u8) -> u8 {
    first_lanes(demanded, 1)
}

// The child walkers, written once for shared and once for mutable references. Each calls `f`
// with every expression directly inside `e` (inside its conditions, integer expressions and
// dynamic register indices too) and the mask of that child's lanes the parent needs when
// `demanded` lanes of the parent are needed. A child whose value does not matter gets mask 0
// (it is still visited: a pass that rewrites reads must see every read). Matched exhaustively:
// a new `Expr` variant is one arm here.
macro_rules! child_walkers {
    ($expr_children:ident, $cond_exprs:ident, $iexpr_exprs:ident, $index_exprs:ident, $stmt_exprs:ident, $($mut_:ident)?) => {
        /// Calls `f` with each child expression of `e` and the lanes of it that `demanded` lanes
        /// of `e` need (see the module's lane rules).
        pub fn $expr_children(e: & $($mut_)? Expr, demanded: u8, textures: &[Texture], f: &mut impl FnMut(& $($mut_)? Expr, u8)) {
            let d = demanded & 0xF;
            match e {
                Expr::Read(src) => $index_exprs(& $($mut_)? src.reg.index, lane_x(d), f),
                Expr::Literal(_) | Expr::Bits(_) | Expr::TexSize { .. } => {}
                Expr::Swizzle(a, s) => {
                    let need = (0..4).filter(|i| d >> i & 1 == 1).fold(0u8, |m, i| m | 1 << (s[i] & 3));
                    f(a, need)
                }
                Expr::Compose(parts) => {
                    for (i, p) in (& $($mut_)? **parts).into_iter().enumerate() {
                        f(p, lane_x(d >> i & 1));
                    }
                }
                Expr::Unary(op, a) => {
                    let need = match op {
                        // w of the result is the constant 0
                        UnOp::Normalize3 => first_lanes(d & 0b0111, 3),
                        _ => per_lane(d),
                    };
                    f(a, need)
                }
                Expr::IntUnary(_, a) => f(a, per_lane(d)),
                Expr::Binary(op, a, b) => {
                    let need = match op {
                        BinOp::Cross3 => first_lanes(d & 0b0111, 3),
                        _ => per_lane(d),
                    };
                    f(a, need);
                    f(b, need);
                }
                Expr::IntBinary(_, a, b) => {
                    f(a, per_lane(d));
                    f(b, per_lane(d));
                }
                Expr::Dot(n, a, b) | Expr::DotPica(n, a, b) => {
                    let need = first_lanes(d, *n as usize);
                    f(a, need);
                    f(b, need);
                }
                Expr::Mad(a, b, c) | Expr::IntTernary(_, a, b, c) => {
                    f(a, per_lane(d));
                    f(b, per_lane(d));
                    f(c, per_lane(d));
                }
                Expr::Sample { tex, coord, mode, .. } => {
                    let need = first_lanes(d, coord_mask(textures, *tex));
                    f(coord, need);
                    match mode {
                        SampleMode::Bias(_) => {}
                        SampleMode::Lod(a) | SampleMode::BiasExpr(a) => f(a, lane_x(d)),
                        SampleMode::Grad(x, y) => {
                            f(x, need);
                            f(y, need);
                        }
                    }
                }
                Expr::SampleCmp { tex, coord, reference, .. } => {
                    f(coord, first_lanes(d, coord_mask(textures, *tex)));
                    f(reference, lane_x(d));
                }
                Expr::SampleCmpMode { tex, coord, reference, mode, .. } => {
                    let need = first_lanes(d, coord_mask(textures, *tex));
                    f(coord, need);
                    f(reference, lane_x(d));
                    match mode {
                        SampleMode::Bias(_) => {}
                        SampleMode::Lod(a) | SampleMode::BiasExpr(a) => f(a, lane_x(d)),
                        SampleMode::Grad(x, y) => {
                            f(x, need);
                            f(y, need);
                        }
                    }
                }
                Expr::Gather { tex, coord, .. } => f(coord, first_lanes(d, coord_mask(textures, *tex))),
                Expr::QueryLod { tex, coord, .. } => f(coord, first_lanes(d, coord_mask(textures, *tex))),
                Expr::Load { tex, coord, lod } => {
                    f(coord, first_lanes(d, coord_mask(textures, *tex)));
                    f(lod, lane_x(d));
                }
                Expr::TexInfo { lod, .. } => f(lod, lane_x(d)),
                Expr::Select { a, b, if_true, if_false, .. } => {
                    f(a, per_lane(d));
                    f(b, per_lane(d));
                    f(if_true, per_lane(d));
                    f(if_false, per_lane(d));
                }
                Expr::SelectIf(c, a, b) => {
                    if d != 0 {
                        $cond_exprs(c, f);
                    } else {
                        $cond_exprs(c, &mut |e, _| f(e, 0));
                    }
                    f(a, d);
                    f(b, d);
                }
            }
        }

        /// Calls `f` with each expression directly inside condition `c` and the lanes it needs.
        pub fn $cond_exprs(c: & $($mut_)? Cond, f: &mut impl FnMut(& $($mut_)? Expr, u8)) {
            match c {
                Cond::Compare(_, a, b) => {
                    f(a, 1);
                    f(b, 1);
                }
                Cond::AnyNegative(a) => f(a, 0xF),
                Cond::BitSet { value, .. } => f(value, 1),
                Cond::Not(c) => $cond_exprs(c, f),
                Cond::IntCmp(_, a, b) => {
                    $iexpr_exprs(a, f);
                    $iexpr_exprs(b, f);
                }
                Cond::And(a, b) | Cond::Or(a, b) => {
                    $cond_exprs(a, f);
                    $cond_exprs(b, f);
                }
            }
        }

        /// Calls `f` with each float expression inside integer expression `e` (lane x of each).
        pub fn $iexpr_exprs(e: & $($mut_)? IExpr, f: &mut impl FnMut(& $($mut_)? Expr, u8)) {
            match e {
                IExpr::Const(_) | IExpr::Var(_) | IExpr::Uniform { .. } => {}
                IExpr::Elem(_, i) => $iexpr_exprs(i, f),
                IExpr::Add(a, b) | IExpr::Sub(a, b) | IExpr::And(a, b) | IExpr::Min(a, b) => {
                    $iexpr_exprs(a, f);
                    $iexpr_exprs(b, f);
                }
                IExpr::Select(c, a, b) => {
                    $cond_exprs(c, f);
                    $iexpr_exprs(a, f);
                    $iexpr_exprs(b, f);
                }
                IExpr::TruncX86(x) => f(x, 1),
            }
        }

        /// Calls `f` with the expressions of a register index (`demanded` 0: the index is not
        /// used).
        pub fn $index_exprs(i: & $($mut_)? Index, demanded: u8, f: &mut impl FnMut(& $($mut_)? Expr, u8)) {
            match i {
                Index::Fixed(_) => {}
                Index::Dynamic { value, .. } => f(value, lane_x(demanded)),
                Index::Int(e) => {
                    if demanded != 0 {
                        $iexpr_exprs(e, f)
                    } else {
                        $iexpr_exprs(e, &mut |e, _| f(e, 0))
                    }
                }
            }
        }

        /// Calls `f` with each expression statement `s` evaluates itself (not those of nested
        /// bodies) and the lanes it needs: an assignment's value for the written lanes, the
        /// operands of its destination's dynamic index, conditions, exported values.
        pub fn $stmt_exprs(s: & $($mut_)? Stmt, f: &mut impl FnMut(& $($mut_)? Expr, u8)) {
            match s {
                Stmt::Assign { dst, value, .. } => {
                    $index_exprs(& $($mut_)? dst.reg.index, 1, f);
                    f(value, dst.mask & 0xF);
                }
                Stmt::If { cond, .. } => $cond_exprs(cond, f),
                Stmt::Loop { .. } | Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Comment(_) => {}
                Stmt::GsEmitVertex | Stmt::GsCutStrip => {}
                Stmt::Discard(c) | Stmt::GsEmitTriangle { invert: c } => $cond_exprs(c, f),
                Stmt::SetInt { index, value, .. } => {
                    if let Some(i) = index {
                        $iexpr_exprs(i, f);
                    }
                    $iexpr_exprs(value, f);
                }
                Stmt::GsStore(i) => $iexpr_exprs(i, f),
                Stmt::LocalStore { index, mask, value } => {
                    $index_exprs(index, 1, f);
                    f(value, *mask & 0xF);
                }
                Stmt::LocalLoad { dst, index } => {
                    $index_exprs(& $($mut_)? dst.reg.index, 1, f);
                    $index_exprs(index, 1, f);
                }
                Stmt::XenosMemExport { address, value, .. } => {
                    f(address, 0xF);
                    f(value, 0xF);
                }
            }
        }
    };
}

child_walkers!(expr_children, cond_exprs, iexpr_exprs, index_exprs, stmt_exprs,);
child_walkers!(expr_children_mut, cond_exprs_mut, iexpr_exprs_mut, index_exprs_mut, stmt_exprs_mut, mut);

/// Calls `f` with every register lane `e` reads when `demanded` lanes of its value are needed:
/// the register and the mask of its lanes (a register read through a dynamic index is reported
/// with that index; callers decide what it may alias).
pub fn expr_lane_reads(e: &Expr, demanded: u8, textures: &[Texture], f: &mut impl FnMut(&RegRef, u8)) {
    if let Expr::Read(src) = e {
        let lanes = src_lanes(src, demanded);
        if lanes != 0 {
            f(&src.reg, lanes);
        }
    }
    expr_children(e, demanded, textures, &mut |c, d| expr_lane_reads(c, d, textures, f));
}

/// The register lanes a source read needs when `demanded` lanes of its value are needed.
pub fn src_lanes(src: &Src, demanded: u8) -> u8 {
    (0..4).filter(|i| demanded >> i & 1 == 1).fold(0u8, |m, i| m | 1 << (src.swizzle[i] & 3))
}

/// [`expr_lane_reads`] over the expressions a statement evaluates itself (see [`stmt_exprs`]).
pub fn stmt_lane_reads(s: &Stmt, textures: &[Texture], f: &mut impl FnMut(&RegRef, u8)) {
    stmt_exprs(s, &mut |e, d| expr_lane_reads(e, d, textures, f));
}

/// Calls `f` with every integer variable `s` names (set or read), nested statements included.
pub fn stmt_int_vars(s: &Stmt, f: &mut impl FnMut(u32)) {
    fn iexpr(e: &IExpr, f: &mut impl FnMut(u32)) {
        match e {
            IExpr::Var(v) => f(*v),
            IExpr::Elem(v, i) => {
                f(*v);
                iexpr(i, f);
            }
            IExpr::Const(_) | IExpr::Uniform { .. } => {}
            IExpr::Add(a, b) | IExpr::Sub(a, b) | IExpr::And(a, b) | IExpr::Min(a, b) => {
                iexpr(a, f);
                iexpr(b, f);
            }
            IExpr::Select(c, a, b) => {
                cond(c, f);
                iexpr(a, f);
                iexpr(b, f);
            }
            IExpr::TruncX86(x) => expr(x, f),
        }
    }
    fn cond(c: &Cond, f: &mut impl FnMut(u32)) {
        match c {
            Cond::IntCmp(_, a, b) => {
                iexpr(a, f);
                iexpr(b, f);
            }
            Cond::Not(c) => cond(c, f),
            Cond::And(a, b) | Cond::Or(a, b) => {
                cond(a, f);
                cond(b, f);
            }
            _ => cond_exprs(c, &mut |e, _| expr(e, f)),
        }
    }
    fn index(i: &Index, f: &mut impl FnMut(u32)) {
        if let Index::Int(e) = i {
            iexpr(e, f);
        }
    }
    fn expr(e: &Expr, f: &mut impl FnMut(u32)) {
        match e {
            Expr::Read(src) => {
                index(&src.reg.index, f);
                expr_children(e, 0xF, &[], &mut |c, _| expr(c, f));
            }
            Expr::SelectIf(c, a, b) => {
                cond(c, f);
                expr(a, f);
                expr(b, f);
            }
            _ => expr_children(e, 0xF, &[], &mut |c, _| expr(c, f)),
        }
    }
    match s {
        Stmt::SetInt { var, index, value } => {
            f(*var);
            if let Some(i) = index {
                iexpr(i, f);
            }
            iexpr(value, f);
        }
        Stmt::If { cond: c, then_body, else_body } => {
            cond(c, f);
            then_body.iter().chain(else_body).for_each(|s| stmt_int_vars(s, f));
        }
        Stmt::Loop { body } => body.iter().for_each(|s| stmt_int_vars(s, f)),
        Stmt::Discard(c) | Stmt::GsEmitTriangle { invert: c } => cond(c, f),
        Stmt::GsStore(i) => iexpr(i, f),
        Stmt::Assign { dst, .. } | Stmt::LocalLoad { dst, .. } => {
            index(&dst.reg.index, f);
            stmt_exprs(s, &mut |e, _| expr(e, f));
            if let Stmt::LocalLoad { index: i, .. } = s {
                index(i, f);
            }
        }
        Stmt::LocalStore { index: i, .. } => {
            index(i, f);
            stmt_exprs(s, &mut |e, _| expr(e, f));
        }
        _ => stmt_exprs(s, &mut |e, _| expr(e, f)),
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
