//! The Xenos and R600 variants of reciprocal, reciprocal square root and base-2 logarithm
//! (`UnOp::RcpClampMax` … `UnOp::Log2Clamped`): the IEEE operation, then its special results
//! replaced as `ir::UnOp` defines, written as the prelude helpers compute them
//! (`shader_common.h`: `shrec_rcp_exact_one`, `shrec_rcp_clamp_max`, …). Infinities are found by
//! their bits (`shrec_is_inf`), never by `IsInf`: see the prelude's note on lavapipe.
//!
//! Where the helper clamps with HLSL `clamp` / `min` / `max` (`shrec_rcp_clamped`,
//! `shrec_rsq_clamped`, `shrec_log2_clamped`), whose result for a NaN operand Vulkan leaves
//! open, this writer selects the replaced infinity instead, so a NaN stays NaN as the IR says
//! ("a ±inf result clamped").

use super::{ids, Result, Writer};
use crate::ir::UnOp;
use rspirv::spirv::{GLOp, Op, Word};

impl Writer<'_> {
    /// `op` of `x` (a `vec4`), or `None` when `op` is not one of these variants.
    pub(super) fn clamped_unary(&mut self, op: UnOp, x: Word) -> Result<Option<Word>> {
        let v4f = self.t.v4f;
        let r = match op {
            UnOp::RcpClampMax | UnOp::RcpClampZero | UnOp::RsqClampMax | UnOp::RsqClampZero => {
                let rsq = matches!(op, UnOp::RsqClampMax | UnOp::RsqClampZero);
                let t = self.exact_one(x, rsq)?;
                if matches!(op, UnOp::RcpClampMax | UnOp::RsqClampMax) {
                    self.infinity_to_signed_max(t)?
                } else {
                    self.infinity_to_signed_zero(t)?
                }
            }
            UnOp::RsqExactOne => self.exact_one(x, true)?,
            UnOp::Log2ExactOne => self.log2_exact_one(x)?,
            UnOp::Log2ClampMax => {
                // -inf → -FLT_MAX (log2 gives no +inf below x = +inf, which stays)
                let t = self.log2_exact_one(x)?;
                self.replace_equal(t, f32::NEG_INFINITY, -f32::MAX)?
            }
            UnOp::RcpClamped => {
                let r = self.reciprocal(x)?;
                self.infinity_to_signed_max(r)?
            }
            UnOp::RcpFF => {
                let r = self.reciprocal(x)?;
                self.infinity_to_signed_zero(r)?
            }
            UnOp::RsqClamped => {
                let r = self.glsl(GLOp::InverseSqrt, v4f, &[x])?;
                self.replace_equal(r, f32::INFINITY, f32::MAX)?
            }
            UnOp::RsqFF => {
                // shrec_rsq_ff: either infinity → +0
                let r = self.glsl(GLOp::InverseSqrt, v4f, &[x])?;
                let inf = self.is_inf(r)?;
                let zero = self.v4f_splat(0.0);
                self.inst(Op::Select, v4f, ids(&[inf, zero, r]))?
            }
            UnOp::Log2Clamped => {
                let r = self.glsl(GLOp::Log2, v4f, &[x])?;
                self.replace_equal(r, f32::NEG_INFINITY, -f32::MAX)?
            }
            _ => return Ok(None),
        };
        Ok(Some(r))
    }

    /// `1.0 / x`, each lane rounded on its own.
    fn reciprocal(&mut self, x: Word) -> Result<Word> {
        let one = self.v4f_splat(1.0);
        self.arith(Op::FDiv, self.t.v4f, ids(&[one, x]))
    }

    /// `x == 1 ? 1 : 1 / x` (or `1 / sqrt(x)`): shrec_rcp_exact_one / shrec_rsq_exact_one.
    fn exact_one(&mut self, x: Word, sqrt: bool) -> Result<Word> {
        let d = if sqrt { self.glsl(GLOp::Sqrt, self.t.v4f, &[x])? } else { x };
        let r = self.reciprocal(d)?;
        let one = self.v4f_splat(1.0);
        let is_one = self.inst(Op::FOrdEqual, self.t.v4b, ids(&[x, one]))?;
        self.inst(Op::Select, self.t.v4f, ids(&[is_one, one, r]))
    }

    /// `x == 1 ? 0 : log2(x)`: shrec_log2_exact_one.
    fn log2_exact_one(&mut self, x: Word) -> Result<Word> {
        let l = self.glsl(GLOp::Log2, self.t.v4f, &[x])?;
        let (one, zero) = (self.v4f_splat(1.0), self.v4f_splat(0.0));
        let is_one = self.inst(Op::FOrdEqual, self.t.v4b, ids(&[x, one]))?;
        self.inst(Op::Select, self.t.v4f, ids(&[is_one, zero, l]))
    }

    /// Per lane: exponent bits all ones and mantissa 0 (shrec_is_inf).
    fn is_inf(&mut self, x: Word) -> Result<Word> {
        let bits = self.inst(Op::Bitcast, self.t.v4u, ids(&[x]))?;
        let magnitude = self.v4u_splat(0x7FFF_FFFF);
        let m = self.inst(Op::BitwiseAnd, self.t.v4u, ids(&[bits, magnitude]))?;
        let inf = self.v4u_splat(0x7F80_0000);
        self.inst(Op::IEqual, self.t.v4b, ids(&[m, inf]))
    }

    /// ±inf → ±FLT_MAX (`sign(t) * FLT_MAX`), other lanes unchanged.
    fn infinity_to_signed_max(&mut self, t: Word) -> Result<Word> {
        let inf = self.is_inf(t)?;
        let sign = self.glsl(GLOp::FSign, self.t.v4f, &[t])?;
        let max = self.v4f_splat(f32::MAX);
        let m = self.arith(Op::FMul, self.t.v4f, ids(&[sign, max]))?;
        self.inst(Op::Select, self.t.v4f, ids(&[inf, m, t]))
    }

    /// ±inf → ±0 (the sign bit kept), other lanes unchanged.
    fn infinity_to_signed_zero(&mut self, t: Word) -> Result<Word> {
        let inf = self.is_inf(t)?;
        let bits = self.inst(Op::Bitcast, self.t.v4u, ids(&[t]))?;
        let sign_bit = self.v4u_splat(0x8000_0000);
        let sign = self.inst(Op::BitwiseAnd, self.t.v4u, ids(&[bits, sign_bit]))?;
        let zero = self.inst(Op::Bitcast, self.t.v4f, ids(&[sign]))?;
        self.inst(Op::Select, self.t.v4f, ids(&[inf, zero, t]))
    }

    /// Lanes of `t` equal to `from` (by bits) become `to`.
    fn replace_equal(&mut self, t: Word, from: f32, to: f32) -> Result<Word> {
        let bits = self.inst(Op::Bitcast, self.t.v4u, ids(&[t]))?;
        let target = self.v4u_splat(from.to_bits());
        let hit = self.inst(Op::IEqual, self.t.v4b, ids(&[bits, target]))?;
        let to = self.v4f_splat(to);
        self.inst(Op::Select, self.t.v4f, ids(&[hit, to, t]))
    }
}
