//! Integer state and integer operators: PICA's integer variables and integer uniforms
//! (`IExpr`, `Stmt::SetInt`, `Cond::IntCmp`, `Index::Int`) and the 32-bit pattern operators of
//! `Expr::IntUnary` / `IntBinary` / `IntTernary` (GX2, Xenos), each with the semantics `ir`
//! defines, as the HLSL writer's text and the prelude helpers compute them (`shader_common.h`:
//! `shrec_f2i`, `shrec_f2u`, `shrec_f2i_x86`, `shrec_bfe_*`, `shrec_bfi`, `shrec_cnd*_i`).
//!
//! Shift counts are masked to their low five bits before every shift: SPIR-V leaves a shift by
//! 32 or more undefined, HLSL (and every source ISA's shifter) uses the low five bits, and DXC
//! writes the same mask.

use super::{ids, Result, SpirvError, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{GLOp, Op, StorageClass, Word};

/// 2^31 and 2^32 as floats, and the largest floats below them (the clamp bounds that keep a
/// float → int conversion in range; values at or above the power of two are selected apart).
const TWO_POW_31: f32 = 2_147_483_648.0;
const BELOW_TWO_POW_31: f32 = 2_147_483_520.0;
const TWO_POW_32: f32 = 4_294_967_296.0;
const BELOW_TWO_POW_32: f32 = 4_294_967_040.0;

impl Writer<'_> {
    /// An integer expression as an `i32` value.
    pub(super) fn iexpr(&mut self, e: &IExpr) -> Result<Word> {
        let i32 = self.t.i32;
        match e {
            IExpr::Const(c) => Ok(self.i32_const(*c)),
            IExpr::Var(v) => {
                let var = self.int_var(*v)?;
                self.inst(Op::Load, i32, ids(&[var]))
            }
            IExpr::Elem(v, index) => {
                let ptr = self.int_elem_ptr(*v, index)?;
                self.inst(Op::Load, i32, ids(&[ptr]))
            }
            IExpr::Add(a, b) => self.iexpr_pair(Op::IAdd, a, b),
            IExpr::Sub(a, b) => self.iexpr_pair(Op::ISub, a, b),
            IExpr::And(a, b) => self.iexpr_pair(Op::BitwiseAnd, a, b),
            IExpr::Min(a, b) => {
                let (a, b) = (self.iexpr(a)?, self.iexpr(b)?);
                self.glsl(GLOp::SMin, i32, &[a, b])
            }
            IExpr::Select(c, a, b) => {
                let c = self.cond(c)?;
                let (a, b) = (self.iexpr(a)?, self.iexpr(b)?);
                self.inst(Op::Select, i32, ids(&[c, a, b]))
            }
            IExpr::TruncX86(x) => {
                // `abs(x) < 2^31 ? (int)x : INT_MIN` (x86 cvttss2si): NaN fails the ordered
                // compare. The converted value is of an in-range operand only (0 otherwise),
                // since SPIR-V leaves an out-of-range conversion undefined.
                let x = self.lane_x(x)?;
                let f32 = self.t.f32;
                let abs = self.glsl(GLOp::FAbs, f32, &[x])?;
                let bound = self.f32_const(TWO_POW_31);
                let in_range = self.inst(Op::FOrdLessThan, self.t.bool, ids(&[abs, bound]))?;
                let zero = self.f32_const(0.0);
                let safe = self.inst(Op::Select, f32, ids(&[in_range, x, zero]))?;
                let t = self.inst(Op::ConvertFToS, i32, ids(&[safe]))?;
                let min = self.i32_const(i32::MIN);
                self.inst(Op::Select, i32, ids(&[in_range, t, min]))
            }
            IExpr::Uniform { buffer, reg, lane } => {
                let block = self.uint_block(*buffer)?;
                let (zero, r, l) = (self.i32_const(0), self.i32_const(*reg as i32), self.i32_const(i32::from(*lane & 3)));
                let ptr_ty = self.b.type_pointer(None, StorageClass::Uniform, self.t.u32);
                let ptr = self.inst(Op::AccessChain, ptr_ty, ids(&[block, zero, r, l]))?;
                let u = self.inst(Op::Load, self.t.u32, ids(&[ptr]))?;
                self.inst(Op::Bitcast, i32, ids(&[u]))
            }
        }
    }

    fn iexpr_pair(&mut self, op: Op, a: &IExpr, b: &IExpr) -> Result<Word> {
        let (a, b) = (self.iexpr(a)?, self.iexpr(b)?);
        self.inst(op, self.t.i32, ids(&[a, b]))
    }

    /// `int_vars[var] = value` or `int_vars[var][index] = value`.
    pub(super) fn set_int(&mut self, var: u32, index: Option<&IExpr>, value: &IExpr) -> Result<()> {
        let ptr = match index {
            None => self.int_var(var)?,
            Some(i) => self.int_elem_ptr(var, i)?,
        };
        let v = self.iexpr(value)?;
        self.b.store(ptr, v, None, [])?;
        Ok(())
    }

    /// An integer comparison of two `IExpr` (signed).
    pub(super) fn int_cond(&mut self, cmp: CmpOp, a: &IExpr, b: &IExpr) -> Result<Word> {
        let (a, b) = (self.iexpr(a)?, self.iexpr(b)?);
        let op = match cmp {
            CmpOp::Eq => Op::IEqual,
            CmpOp::Ne => Op::INotEqual,
            CmpOp::Gt => Op::SGreaterThan,
            CmpOp::Ge => Op::SGreaterThanEqual,
            CmpOp::Lt => Op::SLessThan,
            CmpOp::Le => Op::SLessThanEqual,
        };
        self.inst(op, self.t.bool, ids(&[a, b]))
    }

    /// The `Private` variable of integer variable `v` (a scalar or an array, 0 at the start of
    /// every invocation, as the HLSL writer's `static int`), declared on first use.
    fn int_var(&mut self, v: u32) -> Result<Word> {
        if let Some(&id) = self.int_vars.get(&v) {
            return Ok(id);
        }
        let var = self.m.ext.int_vars.get(v as usize).ok_or(SpirvError::Undeclared { what: "integer variable", index: v })?;
        let id = if var.len == 0 {
            let zero = self.i32_const(0);
            self.global_variable(self.t.i32, StorageClass::Private, Some(zero))
        } else {
            let len = self.u32_const(var.len);
            let ty = self.b.type_array(self.t.i32, len);
            let null = self.b.constant_null(ty);
            self.global_variable(ty, StorageClass::Private, Some(null))
        };
        self.int_vars.insert(v, id);
        Ok(id)
    }

    fn int_elem_ptr(&mut self, v: u32, index: &IExpr) -> Result<Word> {
        let array = self.int_var(v)?;
        let i = self.iexpr(index)?;
        let ptr_ty = self.b.type_pointer(None, StorageClass::Private, self.t.i32);
        self.inst(Op::AccessChain, ptr_ty, ids(&[array, i]))
    }

    /// `Expr::IntUnary`: the operator on the lanes' bit patterns, the result's pattern as float.
    pub(super) fn int_unary(&mut self, op: IntUnOp, a: Word) -> Result<Word> {
        let (v4f, v4u, v4i, v4b) = (self.t.v4f, self.t.v4u, self.t.v4i, self.t.v4b);
        let r = match op {
            IntUnOp::Not => {
                let u = self.inst(Op::Bitcast, v4u, ids(&[a]))?;
                self.inst(Op::Not, v4u, ids(&[u]))?
            }
            IntUnOp::FloatToInt | IntUnOp::FloatToUint => {
                // shrec_f2i / shrec_f2u: NaN → 0, clamped below the power of two, values at or
                // above it → all ones below the sign (signed) / all ones (unsigned)
                let signed = op == IntUnOp::FloatToInt;
                let nan = self.inst(Op::IsNan, v4b, ids(&[a]))?;
                let zero = self.v4f_splat(0.0);
                let x = self.inst(Op::Select, v4f, ids(&[nan, zero, a]))?;
                let (lo, hi, big) = if signed { (-TWO_POW_31, BELOW_TWO_POW_31, TWO_POW_31) } else { (0.0, BELOW_TWO_POW_32, TWO_POW_32) };
                let (lo, hi) = (self.v4f_splat(lo), self.v4f_splat(hi));
                let clamped = self.glsl(GLOp::FClamp, v4f, &[x, lo, hi])?;
                let converted = if signed {
                    let i = self.inst(Op::ConvertFToS, v4i, ids(&[clamped]))?;
                    self.inst(Op::Bitcast, v4u, ids(&[i]))?
                } else {
                    self.inst(Op::ConvertFToU, v4u, ids(&[clamped]))?
                };
                let big = self.v4f_splat(big);
                let above = self.inst(Op::FOrdGreaterThanEqual, v4b, ids(&[a, big]))?;
                let max = self.v4u_splat(if signed { 0x7FFF_FFFF } else { u32::MAX });
                self.inst(Op::Select, v4u, ids(&[above, max, converted]))?
            }
            IntUnOp::IntToFloat => {
                let i = self.inst(Op::Bitcast, v4i, ids(&[a]))?;
                return self.inst(Op::ConvertSToF, v4f, ids(&[i]));
            }
            IntUnOp::UintToFloat => {
                let u = self.inst(Op::Bitcast, v4u, ids(&[a]))?;
                return self.inst(Op::ConvertUToF, v4f, ids(&[u]));
            }
        };
        self.inst(Op::Bitcast, v4f, ids(&[r]))
    }

    /// `Expr::IntBinary`.
    pub(super) fn int_binary(&mut self, op: IntBinOp, fa: Word, fb: Word) -> Result<Word> {
        let (v4f, v4u, v4b) = (self.t.v4f, self.t.v4u, self.t.v4b);
        let a = self.inst(Op::Bitcast, v4u, ids(&[fa]))?;
        let b = self.inst(Op::Bitcast, v4u, ids(&[fb]))?;
        let plain = |op| Some(op);
        let simple = match op {
            IntBinOp::Add => plain(Op::IAdd),
            IntBinOp::Sub => plain(Op::ISub),
            IntBinOp::MulLo => plain(Op::IMul),
            IntBinOp::And => plain(Op::BitwiseAnd),
            IntBinOp::Or => plain(Op::BitwiseOr),
            IntBinOp::Xor => plain(Op::BitwiseXor),
            _ => None,
        };
        let compare = match op {
            IntBinOp::EqI => Some((Op::IEqual, a, b)),
            IntBinOp::NeI => Some((Op::INotEqual, a, b)),
            IntBinOp::GtI => Some((Op::SGreaterThan, a, b)),
            IntBinOp::GeI => Some((Op::SGreaterThanEqual, a, b)),
            IntBinOp::GtU => Some((Op::UGreaterThan, a, b)),
            IntBinOp::GeU => Some((Op::UGreaterThanEqual, a, b)),
            // float compares of the operands; not-equal unordered (true with a NaN)
            IntBinOp::EqF => Some((Op::FOrdEqual, fa, fb)),
            IntBinOp::NeF => Some((Op::FUnordNotEqual, fa, fb)),
            IntBinOp::GtF => Some((Op::FOrdGreaterThan, fa, fb)),
            IntBinOp::GeF => Some((Op::FOrdGreaterThanEqual, fa, fb)),
            _ => None,
        };
        let r = if let Some(o) = simple {
            self.inst(o, v4u, ids(&[a, b]))?
        } else if let Some((o, x, y)) = compare {
            // the D3D10 boolean: all ones for true, 0 for false
            let c = self.inst(o, v4b, ids(&[x, y]))?;
            let (ones, zero) = (self.v4u_splat(u32::MAX), self.v4u_splat(0));
            self.inst(Op::Select, v4u, ids(&[c, ones, zero]))?
        } else {
            match op {
                IntBinOp::Shl | IntBinOp::ShrU | IntBinOp::ShrI => {
                    let count = self.shift_count(b)?;
                    let o = match op {
                        IntBinOp::Shl => Op::ShiftLeftLogical,
                        IntBinOp::ShrU => Op::ShiftRightLogical,
                        _ => Op::ShiftRightArithmetic,
                    };
                    self.inst(o, v4u, ids(&[a, count]))?
                }
                IntBinOp::MinI => self.glsl(GLOp::SMin, v4u, &[a, b])?,
                IntBinOp::MaxI => self.glsl(GLOp::SMax, v4u, &[a, b])?,
                IntBinOp::MinU => self.glsl(GLOp::UMin, v4u, &[a, b])?,
                IntBinOp::MaxU => self.glsl(GLOp::UMax, v4u, &[a, b])?,
                IntBinOp::MulHiU | IntBinOp::MulHiI => {
                    // the exact 64-bit product's high half (the prelude's shrec_umulhi /
                    // shrec_imulhi compute the same bits from 16-bit halves)
                    let ty = if op == IntBinOp::MulHiU { v4u } else { self.t.v4i };
                    let (x, y) = if op == IntBinOp::MulHiU {
                        (a, b)
                    } else {
                        (self.inst(Op::Bitcast, ty, ids(&[a]))?, self.inst(Op::Bitcast, ty, ids(&[b]))?)
                    };
                    let pair = self.b.type_struct([ty, ty]);
                    let o = if op == IntBinOp::MulHiU { Op::UMulExtended } else { Op::SMulExtended };
                    let product = self.inst(o, pair, ids(&[x, y]))?;
                    let hi = self.inst(Op::CompositeExtract, ty, vec![Operand::IdRef(product), Operand::LiteralBit32(1)])?;
                    self.inst(Op::Bitcast, v4u, ids(&[hi]))?
                }
                _ => return Err(SpirvError::Builder(format!("IntBinOp::{op:?} has no arm"))),
            }
        };
        self.inst(Op::Bitcast, v4f, ids(&[r]))
    }

    /// `b & 31` (see the module's note on shift counts).
    fn shift_count(&mut self, b: Word) -> Result<Word> {
        let mask = self.v4u_splat(31);
        self.inst(Op::BitwiseAnd, self.t.v4u, ids(&[b, mask]))
    }

    /// `Expr::IntTernary`.
    pub(super) fn int_ternary(&mut self, op: IntTerOp, fa: Word, fb: Word, fc: Word) -> Result<Word> {
        let (v4f, v4u, v4b) = (self.t.v4f, self.t.v4u, self.t.v4b);
        let a = self.inst(Op::Bitcast, v4u, ids(&[fa]))?;
        let b = self.inst(Op::Bitcast, v4u, ids(&[fb]))?;
        let c = self.inst(Op::Bitcast, v4u, ids(&[fc]))?;
        let zero = self.v4u_splat(0);
        let r = match op {
            IntTerOp::BfeU | IntTerOp::BfeI => {
                // width 0 → 0; otherwise bits [off, off + w) of a, zero- or sign-extended
                let off = self.shift_count(b)?;
                let w = self.shift_count(c)?;
                let w_zero = self.inst(Op::IEqual, v4b, ids(&[w, zero]))?;
                let field = if op == IntTerOp::BfeU {
                    // (a >> off) & ((1 << w) - 1)
                    let shifted = self.inst(Op::ShiftRightLogical, v4u, ids(&[a, off]))?;
                    let one = self.v4u_splat(1);
                    let top = self.inst(Op::ShiftLeftLogical, v4u, ids(&[one, w]))?;
                    let mask = self.inst(Op::ISub, v4u, ids(&[top, one]))?;
                    self.inst(Op::BitwiseAnd, v4u, ids(&[shifted, mask]))?
                } else {
                    // asint(a << (32 - off - w)) >> (32 - w), both counts masked to five bits
                    let thirty_two = self.v4u_splat(32);
                    let left = self.inst(Op::ISub, v4u, ids(&[thirty_two, off]))?;
                    let left = self.inst(Op::ISub, v4u, ids(&[left, w]))?;
                    let left = self.shift_count(left)?;
                    let right = self.inst(Op::ISub, v4u, ids(&[thirty_two, w]))?;
                    let right = self.shift_count(right)?;
                    let up = self.inst(Op::ShiftLeftLogical, v4u, ids(&[a, left]))?;
                    self.inst(Op::ShiftRightArithmetic, v4u, ids(&[up, right]))?
                };
                self.inst(Op::Select, v4u, ids(&[w_zero, zero, field]))?
            }
            IntTerOp::Bfi => {
                // (a & b) | (~a & c)
                let kept = self.inst(Op::BitwiseAnd, v4u, ids(&[a, b]))?;
                let not_a = self.inst(Op::Not, v4u, ids(&[a]))?;
                let rest = self.inst(Op::BitwiseAnd, v4u, ids(&[not_a, c]))?;
                self.inst(Op::BitwiseOr, v4u, ids(&[kept, rest]))?
            }
            IntTerOp::CndEI | IntTerOp::CndGtI | IntTerOp::CndGeI => {
                let o = match op {
                    IntTerOp::CndEI => Op::IEqual,
                    IntTerOp::CndGtI => Op::SGreaterThan,
                    _ => Op::SGreaterThanEqual,
                };
                let test = self.inst(o, v4b, ids(&[a, zero]))?;
                self.inst(Op::Select, v4u, ids(&[test, b, c]))?
            }
        };
        self.inst(Op::Bitcast, v4f, ids(&[r]))
    }
}
