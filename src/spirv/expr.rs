//! Float4 values: register reads, operators, texture samples. Each IR operator is written with
//! the semantics `ir` defines for it, as the HLSL writer's text compiles (`shader_common.h`
//! for the helpers): docs/spirv-direct.md lists the instruction each one becomes.

use super::{ids, unsupported, Result, SpirvError, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{GLOp, Op, StorageClass, Word};

impl Writer<'_> {
    /// A register's pointer (temps and stage registers; constant files are [`Self::read`]'s).
    pub(super) fn reg_ptr(&mut self, r: &RegRef) -> Result<Word> {
        match (&r.file, &r.index) {
            (RegFile::Temp, Index::Fixed(i)) if !self.m.temps.indexable => self.register_var(RegFile::Temp, *i),
            (RegFile::Temp, idx) => {
                let array = self.temp_array()?;
                let i = self.index_value(idx)?;
                self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[array, i]))
            }
            (file @ (RegFile::Input | RegFile::Output), Index::Fixed(i)) => self.register_var(*file, *i),
            (RegFile::Input | RegFile::Output, _) => unsupported("a dynamic index into stage inputs or outputs"),
            (RegFile::Const(_), _) => unsupported("a write to a constant file"),
        }
    }

    /// The integer value of a register index (HLSL `shrec_index_*` of shader_common.h).
    pub(super) fn index_value(&mut self, idx: &Index) -> Result<Word> {
        match idx {
            Index::Fixed(i) => Ok(self.i32_const(*i as i32)),
            Index::Int(e) => self.iexpr(e),
            Index::Dynamic { base, value, conv } => {
                let x = self.lane_x(value)?;
                let f32 = self.t.f32;
                let rounded = match conv {
                    // `precise float h = x + 0.5; (int)floor(h)`
                    IndexConv::RoundHalfUp => {
                        let half = self.f32_const(0.5);
                        let h = self.arith(Op::FAdd, f32, ids(&[x, half]))?;
                        self.glsl(GLOp::Floor, f32, &[h])?
                    }
                    IndexConv::Floor => self.glsl(GLOp::Floor, f32, &[x])?,
                    IndexConv::Trunc => x,
                };
                let i = self.inst(Op::ConvertFToS, self.t.i32, ids(&[rounded]))?;
                if *base == 0 {
                    return Ok(i);
                }
                let b = self.i32_const(*base);
                self.inst(Op::IAdd, self.t.i32, ids(&[i, b]))
            }
        }
    }

    /// The whole vec4 of a register.
    fn load_reg(&mut self, r: &RegRef) -> Result<Word> {
        if let RegFile::Const(file) = r.file {
            if let ResourceAbi::XenosRecomp(_) = self.m.ext.resource_abi {
                return self.xenos_const(file, &r.index);
            }
            let var = self.const_var(file)?;
            let zero = self.i32_const(0);
            let i = self.index_value(&r.index)?;
            let ptr_ty = self.b.type_pointer(None, StorageClass::Uniform, self.t.v4f);
            let ptr = self.inst(Op::AccessChain, ptr_ty, ids(&[var, zero, i]))?;
            return self.inst(Op::Load, self.t.v4f, ids(&[ptr]));
        }
        let ptr = self.reg_ptr(r)?;
        self.inst(Op::Load, self.t.v4f, ids(&[ptr]))
    }

    /// An operand read: swizzle, then `|x|`, then negation.
    fn read(&mut self, src: &Src) -> Result<Word> {
        let v = self.load_reg(&src.reg)?;
        let mut v = self.swizzle(v, src.swizzle)?;
        if src.abs {
            v = self.glsl(GLOp::FAbs, self.t.v4f, &[v])?;
        }
        if src.negate {
            v = self.arith(Op::FNegate, self.t.v4f, ids(&[v]))?;
        }
        Ok(v)
    }

    pub(super) fn swizzle(&mut self, v: Word, s: [u8; 4]) -> Result<Word> {
        if s == XYZW {
            return Ok(v);
        }
        let mut operands = ids(&[v, v]);
        operands.extend(s.iter().map(|&l| Operand::LiteralBit32(u32::from(l & 3))));
        self.inst(Op::VectorShuffle, self.t.v4f, operands)
    }

    /// The first `n` lanes of vec4 `v` (a scalar for 1).
    pub(super) fn first_lanes(&mut self, v: Word, n: usize) -> Result<Word> {
        match n {
            4 => Ok(v),
            1 => self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(v), Operand::LiteralBit32(0)]),
            _ => {
                let mut operands = ids(&[v, v]);
                operands.extend((0..n as u32).map(Operand::LiteralBit32));
                let ty = self.float_vec(n);
                self.inst(Op::VectorShuffle, ty, operands)
            }
        }
    }

    /// Lane `l` of vec4 `v` as a scalar.
    pub(super) fn lane(&mut self, v: Word, l: u32) -> Result<Word> {
        self.inst(Op::CompositeExtract, self.t.f32, vec![Operand::IdRef(v), Operand::LiteralBit32(l)])
    }

    /// Lane x of `e` as a scalar.
    pub(super) fn lane_x(&mut self, e: &Expr) -> Result<Word> {
        let v = self.expr(e)?;
        self.first_lanes(v, 1)
    }

    /// `vec4(v3, 0)`.
    fn extend_zero(&mut self, v3: Word) -> Result<Word> {
        let zero = self.v4f_splat(0.0);
        let mut operands = ids(&[v3, zero]);
        operands.extend([0, 1, 2, 3].map(Operand::LiteralBit32));
        self.inst(Op::VectorShuffle, self.t.v4f, operands)
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<Word> {
        let v4f = self.t.v4f;
        match e {
            Expr::Read(src) => self.read(src),
            Expr::Literal(v) => Ok(self.v4f_bits(v.map(f32::to_bits))),
            Expr::Bits(v) => Ok(self.v4f_bits(*v)),
            Expr::Swizzle(a, s) => {
                let a = self.expr(a)?;
                self.swizzle(a, *s)
            }
            Expr::Compose(parts) => {
                let mut lanes = Vec::with_capacity(4);
                for p in parts.iter() {
                    lanes.push(self.lane_x(p)?);
                }
                self.inst(Op::CompositeConstruct, v4f, ids(&lanes))
            }
            Expr::Unary(op, a) => {
                let a = self.expr(a)?;
                self.unary(*op, a)
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.binary(*op, a, b)
            }
            Expr::Dot(n, a, b) => {
                let n = (*n).clamp(2, 4) as usize;
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                let (a, b) = (self.first_lanes(a, n)?, self.first_lanes(b, n)?);
                let d = self.arith(Op::Dot, self.t.f32, ids(&[a, b]))?;
                self.splat(v4f, d, 4)
            }
            Expr::Mad(a, b, c) => {
                let (a, b, c) = (self.expr(a)?, self.expr(b)?, self.expr(c)?);
                let p = self.arith(Op::FMul, v4f, ids(&[a, b]))?;
                self.arith(Op::FAdd, v4f, ids(&[p, c]))
            }
            Expr::Select { cmp, a, b, if_true, if_false } => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                let c = self.compare(*cmp, self.t.v4b, a, b)?;
                let (t, f) = (self.expr(if_true)?, self.expr(if_false)?);
                self.inst(Op::Select, v4f, ids(&[c, t, f]))
            }
            Expr::SelectIf(c, a, b) => {
                let c = self.cond(c)?;
                let c4 = self.splat(self.t.v4b, c, 4)?;
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.inst(Op::Select, v4f, ids(&[c4, a, b]))
            }
            Expr::Sample { tex, coord, mode, offset } => self.sample(*tex, coord, mode, offset),
            Expr::SampleCmp { tex, coord, reference, level_zero, offset } => {
                let mode = level_zero.then_some(SampleMode::Lod(Box::new(Expr::Literal([0.0; 4]))));
                self.sample_compare(*tex, coord, reference, mode.as_ref(), offset)
            }
            Expr::SampleCmpMode { tex, coord, reference, mode, offset } => self.sample_compare(*tex, coord, reference, Some(mode), offset),
            Expr::Gather { tex, coord, offset } => self.gather(*tex, coord, offset),
            Expr::QueryLod { tex, coord, clamped } => self.query_lod(*tex, coord, *clamped),
            Expr::TexSize { tex } => self.tex_size(*tex),
            Expr::Load { tex, coord, lod } => self.load_texel(*tex, coord, lod),
            Expr::TexInfo { tex, lod } => self.tex_info(*tex, lod),
            Expr::DotPica(n, a, b) => {
                // PICA-multiply products summed left to right, each add on its own, broadcast
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                let p = self.binary(BinOp::MulPica, a, b)?;
                let mut sum = self.lane(p, 0)?;
                for l in 1..u32::from((*n).clamp(2, 4)) {
                    let x = self.lane(p, l)?;
                    sum = self.arith(Op::FAdd, self.t.f32, ids(&[sum, x]))?;
                }
                self.splat(v4f, sum, 4)
            }
            Expr::IntUnary(op, a) => {
                let a = self.expr(a)?;
                self.int_unary(*op, a)
            }
            Expr::IntBinary(op, a, b) => {
                let (a, b) = (self.expr(a)?, self.expr(b)?);
                self.int_binary(*op, a, b)
            }
            Expr::IntTernary(op, a, b, c) => {
                let (a, b, c) = (self.expr(a)?, self.expr(b)?, self.expr(c)?);
                self.int_ternary(*op, a, b, c)
            }
        }
    }

    /// A float comparison of `a` and `b` (scalars or vectors, result type `bool_ty`): IEEE,
    /// every comparison with NaN false except `Ne` (an unordered not-equal, as the HLSL
    /// writer's `!(a == b)`).
    pub(super) fn compare(&mut self, cmp: CmpOp, bool_ty: Word, a: Word, b: Word) -> Result<Word> {
        let op = match cmp {
            CmpOp::Eq => Op::FOrdEqual,
            CmpOp::Ne => Op::FUnordNotEqual,
            CmpOp::Gt => Op::FOrdGreaterThan,
            CmpOp::Ge => Op::FOrdGreaterThanEqual,
            CmpOp::Lt => Op::FOrdLessThan,
            CmpOp::Le => Op::FOrdLessThanEqual,
        };
        self.inst(op, bool_ty, ids(&[a, b]))
    }

    fn unary(&mut self, op: UnOp, a: Word) -> Result<Word> {
        let v4f = self.t.v4f;
        let gl = |g: GLOp| Some(g);
        let simple = match op {
            UnOp::Abs => gl(GLOp::FAbs),
            UnOp::Rsq => gl(GLOp::InverseSqrt),
            UnOp::Sqrt => gl(GLOp::Sqrt),
            UnOp::Log2 => gl(GLOp::Log2),
            UnOp::Exp2 => gl(GLOp::Exp2),
            UnOp::Floor => gl(GLOp::Floor),
            UnOp::Sin => gl(GLOp::Sin),
            UnOp::Cos => gl(GLOp::Cos),
            UnOp::Sign => gl(GLOp::FSign),
            UnOp::Trunc => gl(GLOp::Trunc),
            UnOp::Ceil => gl(GLOp::Ceil),
            UnOp::RoundEven => gl(GLOp::RoundEven),
            _ => None,
        };
        if let Some(g) = simple {
            return self.glsl(g, v4f, &[a]);
        }
        if let Some(r) = self.clamped_unary(op, a)? {
            return Ok(r);
        }
        match op {
            UnOp::Neg => self.arith(Op::FNegate, v4f, ids(&[a])),
            UnOp::Rcp => {
                let one = self.v4f_splat(1.0);
                self.arith(Op::FDiv, v4f, ids(&[one, a]))
            }
            UnOp::Saturate => self.saturate(a),
            UnOp::Ddx => self.inst(Op::DPdx, v4f, ids(&[a])),
            UnOp::Ddy => self.inst(Op::DPdy, v4f, ids(&[a])),
            UnOp::Fract => {
                // shader_common.h `shrec_frac`: lanes whose exponent is all ones (±inf, NaN)
                // take x - x (NaN), the others Fract (which Vulkan leaves open there)
                let bits = self.inst(Op::Bitcast, self.t.v4u, ids(&[a]))?;
                let exp = self.v4u_splat(0x7F80_0000);
                let masked = self.inst(Op::BitwiseAnd, self.t.v4u, ids(&[bits, exp]))?;
                let special = self.inst(Op::IEqual, self.t.v4b, ids(&[masked, exp]))?;
                let nan = self.arith(Op::FSub, v4f, ids(&[a, a]))?;
                let fract = self.glsl(GLOp::Fract, v4f, &[a])?;
                self.inst(Op::Select, v4f, ids(&[special, nan, fract]))
            }
            UnOp::Normalize3 => {
                let xyz = self.first_lanes(a, 3)?;
                let n = self.glsl(GLOp::Normalize, self.t.v3f, &[xyz])?;
                self.extend_zero(n)
            }
            _ => Err(SpirvError::Builder(format!("{op:?} has no arm"))),
        }
    }

    /// Clamp to [0, 1], NaN → 0 (HLSL `saturate`): `NClamp` = NMin(NMax(x, 0), 1), whose NMax
    /// turns NaN into 0.
    pub(super) fn saturate(&mut self, a: Word) -> Result<Word> {
        let (zero, one) = (self.v4f_splat(0.0), self.v4f_splat(1.0));
        self.glsl(GLOp::NClamp, self.t.v4f, &[a, zero, one])
    }

    fn binary(&mut self, op: BinOp, a: Word, b: Word) -> Result<Word> {
        let (v4f, v4b) = (self.t.v4f, self.t.v4b);
        let set = |w: &mut Self, cmp: CmpOp| -> Result<Word> {
            let c = w.compare(cmp, v4b, a, b)?;
            let (one, zero) = (w.v4f_splat(1.0), w.v4f_splat(0.0));
            w.inst(Op::Select, v4f, ids(&[c, one, zero]))
        };
        match op {
            BinOp::Add => self.arith(Op::FAdd, v4f, ids(&[a, b])),
            BinOp::Sub => self.arith(Op::FSub, v4f, ids(&[a, b])),
            BinOp::Mul => self.arith(Op::FMul, v4f, ids(&[a, b])),
            BinOp::Div => self.arith(Op::FDiv, v4f, ids(&[a, b])),
            // the operand that is not NaN (IEEE minNum / maxNum, D3D10's min / max)
            BinOp::Min => self.glsl(GLOp::NMin, v4f, &[a, b]),
            BinOp::Max => self.glsl(GLOp::NMax, v4f, &[a, b]),
            BinOp::Pow => self.glsl(GLOp::Pow, v4f, &[a, b]),
            BinOp::Sge => set(self, CmpOp::Ge),
            BinOp::Slt => set(self, CmpOp::Lt),
            BinOp::Seq => set(self, CmpOp::Eq),
            BinOp::Sne => set(self, CmpOp::Ne),
            BinOp::Cross3 => {
                let (a3, b3) = (self.first_lanes(a, 3)?, self.first_lanes(b, 3)?);
                let c = self.glsl(GLOp::Cross, self.t.v3f, &[a3, b3])?;
                self.extend_zero(c)
            }
            BinOp::MulLegacy => {
                // (a == 0 || b == 0) ? +0 : a * b
                let zero = self.v4f_splat(0.0);
                let p = self.arith(Op::FMul, v4f, ids(&[a, b]))?;
                let za = self.inst(Op::FOrdEqual, v4b, ids(&[a, zero]))?;
                let zb = self.inst(Op::FOrdEqual, v4b, ids(&[b, zero]))?;
                let z = self.inst(Op::LogicalOr, v4b, ids(&[za, zb]))?;
                self.inst(Op::Select, v4f, ids(&[z, zero, p]))
            }
            BinOp::MulPica => {
                // a NaN product of two non-NaN operands (0 × inf) is +0
                let zero = self.v4f_splat(0.0);
                let p = self.arith(Op::FMul, v4f, ids(&[a, b]))?;
                let np = self.inst(Op::IsNan, v4b, ids(&[p]))?;
                let na = self.inst(Op::IsNan, v4b, ids(&[a]))?;
                let nb = self.inst(Op::IsNan, v4b, ids(&[b]))?;
                let either = self.inst(Op::LogicalOr, v4b, ids(&[na, nb]))?;
                let neither = self.inst(Op::LogicalNot, v4b, ids(&[either]))?;
                let fix = self.inst(Op::LogicalAnd, v4b, ids(&[np, neither]))?;
                self.inst(Op::Select, v4f, ids(&[fix, zero, p]))
            }
            BinOp::MaxPica => {
                let c = self.inst(Op::FOrdGreaterThan, v4b, ids(&[a, b]))?;
                self.inst(Op::Select, v4f, ids(&[c, a, b]))
            }
            BinOp::MinPica => {
                let c = self.inst(Op::FOrdLessThan, v4b, ids(&[a, b]))?;
                self.inst(Op::Select, v4f, ids(&[c, a, b]))
            }
        }
    }
}
