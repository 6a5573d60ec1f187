//! Exact constant folding and operand simplification.
//!
//! Only what is exact on every input is folded: sign-bit operations (negation, absolute value)
//! folded into a register read or a constant, swizzles of swizzles, reads and constants,
//! compositions of lanes of one register, and integer operators on constant bit patterns
//! (wrapping arithmetic, bitwise operators, shifts, comparisons, float→int conversions, whose
//! results the IR defines for every pattern). No float arithmetic is evaluated here: a folded
//! float add or multiply could differ from the GPU's for NaN, infinities, −0 or rounding
//! (docs/semantics-audit.md). Conditions of `If` that compare two constants are decided (IEEE
//! comparison, as the IR defines `CmpOp`), and the chosen arm takes the `If`'s place.

use super::copy_prop::{constant, lane_of, Known};
use super::Budget;
use crate::ir::visit::{expr_children_mut, stmt_exprs_mut};
use crate::ir::{CmpOp, Cond, Expr, IExpr, Index, IntBinOp, IntUnOp, Module, Src, Stmt, Texture, UnOp, XYZW};

pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let textures = m.textures.clone();
    block(&mut m.body, &textures, budget)
}

fn block(body: &mut Vec<Stmt>, textures: &[Texture], budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let mut out = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        budget.spend(1)?;
        stmt_exprs_mut(&mut s, &mut |e, d| expr(e, d, textures));
        match s {
            Stmt::If { cond, mut then_body, mut else_body } => {
                block(&mut then_body, textures, budget)?;
                block(&mut else_body, textures, budget)?;
                match decided(&cond) {
                    Some(true) => out.extend(then_body),
                    Some(false) => out.extend(else_body),
                    None => out.push(Stmt::If { cond, then_body, else_body }),
                }
            }
            Stmt::Loop { mut body } => {
                block(&mut body, textures, budget)?;
                out.push(Stmt::Loop { body });
            }
            s => out.push(s),
        }
    }
    *body = out;
    Ok(())
}

/// The value of a condition made of constants only.
fn decided(c: &Cond) -> Option<bool> {
    match c {
        Cond::Compare(op, a, b) => {
            let (Some(Known::Bits(a)), Some(Known::Bits(b))) = (lane_of(a, 0), lane_of(b, 0)) else { return None };
            Some(compare(*op, f32::from_bits(a), f32::from_bits(b)))
        }
        Cond::IntCmp(op, IExpr::Const(a), IExpr::Const(b)) => Some(compare(*op, *a, *b)),
        Cond::Not(c) => decided(c).map(|v| !v),
        Cond::And(a, b) => match (decided(a), decided(b)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        Cond::Or(a, b) => match (decided(a), decided(b)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// `CmpOp` on two values: IEEE for floats (with a NaN only `Ne` holds, as Rust's operators).
fn compare<T: PartialOrd>(op: CmpOp, a: T, b: T) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
    }
}

/// The four lanes of a constant expression.
fn bits_of(e: &Expr) -> Option<[u32; 4]> {
    match e {
        Expr::Literal(v) => Some(v.map(f32::to_bits)),
        Expr::Bits(v) => Some(*v),
        _ => None,
    }
}

/// Folds `e` bottom-up (`demanded`: the lanes of it that matter).
pub fn expr(e: &mut Expr, demanded: u8, textures: &[Texture]) {
    expr_children_mut(e, demanded, textures, &mut |c, d| expr(c, d, textures));
    if let Some(new) = folded(e, demanded) {
        *e = new;
    }
}

fn folded(e: &Expr, demanded: u8) -> Option<Expr> {
    match e {
        // bit patterns that are plain numbers print as literals
        Expr::Bits(b) => match constant(*b) {
            c @ Expr::Literal(_) => Some(c),
            _ => None,
        },
        Expr::Unary(op @ (UnOp::Neg | UnOp::Abs), a) => {
            let neg = *op == UnOp::Neg;
            match &**a {
                Expr::Read(src) => {
                    let mut s = src.clone();
                    if neg {
                        s.negate = !s.negate;
                    } else {
                        s.abs = true;
                        s.negate = false;
                    }
                    Some(Expr::Read(s))
                }
                a => bits_of(a).map(|b| constant(b.map(|x| if neg { x ^ 0x8000_0000 } else { x & 0x7FFF_FFFF }))),
            }
        }
        Expr::Swizzle(a, s) if *s == XYZW => Some((**a).clone()),
        Expr::Swizzle(a, s) => match &**a {
            Expr::Read(src) => Some(Expr::Read(Src { swizzle: s.map(|l| src.swizzle[l as usize & 3]), ..src.clone() })),
            Expr::Swizzle(inner, s0) => Some(Expr::Swizzle(inner.clone(), s.map(|l| s0[l as usize & 3]))),
            a => bits_of(a).map(|b| constant(s.map(|l| b[l as usize & 3]))),
        },
        Expr::Compose(parts) => compose(parts, demanded),
        Expr::IntUnary(op, a) => {
            let a = bits_of(a)?;
            let f = |x: u32| -> Option<u32> {
                Some(match op {
                    IntUnOp::Not => !x,
                    // Rust's float → int casts truncate, saturate and send NaN to 0: the IR's rule
                    IntUnOp::FloatToInt => (f32::from_bits(x) as i32) as u32,
                    IntUnOp::FloatToUint => f32::from_bits(x) as u32,
                    // int → float rounds; left to the GPU
                    IntUnOp::IntToFloat | IntUnOp::UintToFloat => return None,
                })
            };
            Some(Expr::Bits([f(a[0])?, f(a[1])?, f(a[2])?, f(a[3])?]))
        }
        Expr::IntBinary(op, a, b) => {
            let (a, b) = (bits_of(a)?, bits_of(b)?);
            Some(Expr::Bits(std::array::from_fn(|i| int_binary(*op, a[i], b[i]))))
        }
        _ => None,
    }
}

/// A composition of constants, or of lanes of one fixed register read with the same modifiers
/// (lanes outside `demanded` may be anything: they repeat a demanded one).
fn compose(parts: &[Expr; 4], demanded: u8) -> Option<Expr> {
    let first = (0..4).find(|i| demanded >> i & 1 == 1)?;
    let pick = |i: usize| if demanded >> i & 1 == 1 { i } else { first };
    let known: Vec<Known> = (0..4).map(|i| lane_of(&parts[pick(i)], 0)).collect::<Option<_>>()?;
    match &known[0] {
        Known::Bits(_) => {
            let mut bits = [0u32; 4];
            for (i, k) in known.iter().enumerate() {
                let Known::Bits(b) = k else { return None };
                bits[i] = *b;
            }
            Some(constant(bits))
        }
        Known::Lane { reg, abs, negate, .. } => {
            if !matches!(reg.index, Index::Fixed(_)) {
                return None;
            }
            let mut swizzle = [0u8; 4];
            for (i, k) in known.iter().enumerate() {
                match k {
                    Known::Lane { reg: r, lane, abs: a, negate: n } if r == reg && a == abs && n == negate => swizzle[i] = *lane,
                    _ => return None,
                }
            }
            Some(Expr::Read(Src { reg: reg.clone(), swizzle, abs: *abs, negate: *negate }))
        }
    }
}

/// One lane of an integer operator, as `ir::IntBinOp` defines it.
fn int_binary(op: IntBinOp, a: u32, b: u32) -> u32 {
    let (ia, ib) = (a as i32, b as i32);
    let mask = |c: bool| if c { u32::MAX } else { 0 };
    let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
    match op {
        IntBinOp::Add => a.wrapping_add(b),
        IntBinOp::Sub => a.wrapping_sub(b),
        IntBinOp::MulLo => a.wrapping_mul(b),
        IntBinOp::MulHiI => ((ia as i64 * ib as i64) >> 32) as u32,
        IntBinOp::MulHiU => ((a as u64 * b as u64) >> 32) as u32,
        IntBinOp::And => a & b,
        IntBinOp::Or => a | b,
        IntBinOp::Xor => a ^ b,
        IntBinOp::Shl => a << (b & 31),
        IntBinOp::ShrU => a >> (b & 31),
        IntBinOp::ShrI => (ia >> (b & 31)) as u32,
        IntBinOp::MinI => ia.min(ib) as u32,
        IntBinOp::MaxI => ia.max(ib) as u32,
        IntBinOp::MinU => a.min(b),
        IntBinOp::MaxU => a.max(b),
        IntBinOp::EqI => mask(a == b),
        IntBinOp::NeI => mask(a != b),
        IntBinOp::GtI => mask(ia > ib),
        IntBinOp::GeI => mask(ia >= ib),
        IntBinOp::GtU => mask(a > b),
        IntBinOp::GeU => mask(a >= b),
        IntBinOp::EqF => mask(fa == fb),
        IntBinOp::NeF => mask(fa != fb),
        IntBinOp::GtF => mask(fa > fb),
        IntBinOp::GeF => mask(fa >= fb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_lanes_fold_as_the_ir_defines_them() {
        assert_eq!(int_binary(IntBinOp::Add, u32::MAX, 2), 1);
        assert_eq!(int_binary(IntBinOp::ShrI, 0x8000_0000, 33), 0xC000_0000);
        assert_eq!(int_binary(IntBinOp::MulHiI, (-2i32) as u32, 3), u32::MAX);
        assert_eq!(int_binary(IntBinOp::NeF, 0x7FC0_0000, 0x7FC0_0000), u32::MAX);
        assert_eq!(int_binary(IntBinOp::EqF, 0x8000_0000, 0), u32::MAX);
        assert_eq!(int_binary(IntBinOp::GtU, 1, u32::MAX), 0);
    }

    #[test]
    fn constant_conditions_are_ieee() {
        let nan = Expr::Bits([0x7FC0_0000; 4]);
        assert_eq!(decided(&Cond::Compare(CmpOp::Ne, nan.clone(), nan.clone())), Some(true));
        assert_eq!(decided(&Cond::Compare(CmpOp::Eq, nan.clone(), nan)), Some(false));
        assert_eq!(decided(&Cond::Compare(CmpOp::Eq, Expr::Literal([-0.0; 4]), Expr::Literal([0.0; 4]))), Some(true));
    }
}
