//! ALU instructions: the vector and scalar op of each slot, destination writes (exports, predicates, kills) and ALU clauses.

use super::*;

impl Ctx<'_> {
    pub(super) fn vector_value(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<Option<Expr>, ShaderError> {
        let Some(op) = a.vector_op() else { return Err(self.err(format!("vector opcode {}", a.vector_opcode()))) };
        let n = a.vector_operand_count();
        let s: Vec<Expr> = (1..=n as u32).map(|i| a.vector_src(i)).collect::<Vec<_>>().iter().map(|o| self.operand(o)).collect();
        let one = || lit(1.0);
        let zero = || lit(0.0);
        let hsum = |p: Expr, k: usize| {
            let mut acc = lane(p.clone(), 0);
            for l in 1..k {
                acc = bin(BinOp::Add, acc, lane(p.clone(), l as u8));
            }
            acc
        };
        Ok(Some(match op {
            VectorOp::Add => bin(BinOp::Add, s[0].clone(), s[1].clone()),
            VectorOp::Mul => mul_l(s[0].clone(), s[1].clone()),
            VectorOp::Max => sel(CmpOp::Ge, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone()),
            VectorOp::Min => sel(CmpOp::Lt, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone()),
            VectorOp::Seq => sel(CmpOp::Eq, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sgt => sel(CmpOp::Gt, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sge => sel(CmpOp::Ge, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Sne => sel(CmpOp::Ne, s[0].clone(), s[1].clone(), one(), zero()),
            VectorOp::Frc => un(UnOp::Fract, s[0].clone()),
            VectorOp::Trunc => un(UnOp::Trunc, s[0].clone()),
            VectorOp::Floor => un(UnOp::Floor, s[0].clone()),
            VectorOp::Mad => bin(BinOp::Add, mul_l(s[0].clone(), s[1].clone()), s[2].clone()),
            VectorOp::CndEq => sel(CmpOp::Eq, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            VectorOp::CndGe => sel(CmpOp::Ge, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            VectorOp::CndGt => sel(CmpOp::Gt, s[0].clone(), zero(), s[1].clone(), s[2].clone()),
            // The products once into the vector result register, then their sum (one
            // multiply per lane in the HLSL instead of one per summed lane); the sources are
            // read before anything of this instruction is written, as before.
            VectorOp::Dp4 | VectorOp::Dp3 => {
                out.push(assign(VRES, 0xF, mul_l(s[0].clone(), s[1].clone())));
                hsum(t(VRES), if op == VectorOp::Dp4 { 4 } else { 3 })
            }
            VectorOp::Dp2Add => {
                out.push(assign(VRES, 0xF, mul_l(s[0].clone(), s[1].clone())));
                bin(BinOp::Add, hsum(t(VRES), 2), lane(s[2].clone(), 0))
            }
            VectorOp::Cube => {
                // Xenia's ucode.h / translators: the direction is src0 read as .z_xy (z = lane 0,
                // x = lane 2, y = lane 3; the compilers write src0.zzxy, src1.yxzz and src1 is not
                // read); result (tc, sc, 2 × major axis, face id). The same lanes, ties, face ids
                // and table as R600's CUBE; the sign test is Xenia's `< 0` (a NaN major axis picks
                // the positive face), see `formats::cube`.
                let l = |k: u8| lane(s[0].clone(), k);
                let [tc, sc, ma, face] = cube::cube(l(2), l(3), l(0), cube::SignTest::LtZeroIsNegative);
                Expr::Compose(Box::new([tc, sc, ma, face]))
            }
            VectorOp::Max4 => {
                let m01 = sel(CmpOp::Ge, lane(s[0].clone(), 0), lane(s[0].clone(), 1), lane(s[0].clone(), 0), lane(s[0].clone(), 1));
                let m2 = sel(CmpOp::Ge, m01.clone(), lane(s[0].clone(), 2), m01, lane(s[0].clone(), 2));
                sel(CmpOp::Ge, m2.clone(), lane(s[0].clone(), 3), m2, lane(s[0].clone(), 3))
            }
            VectorOp::SetpEqPush | VectorOp::SetpNePush | VectorOp::SetpGtPush | VectorOp::SetpGePush => {
                let cmp = [CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge][(op.code() - 20) as usize];
                // p0 from the w lanes, result from the x lanes.
                let p = sel(CmpOp::Eq, lane(s[0].clone(), 3), zero(), sel(cmp, lane(s[1].clone(), 3), zero(), one(), zero()), zero());
                let inc = bin(BinOp::Add, lane(s[0].clone(), 0), one());
                let v = sel(CmpOp::Eq, lane(s[0].clone(), 0), zero(), sel(cmp, lane(s[1].clone(), 0), zero(), zero(), inc.clone()), inc);
                out.push(assign(VRES, 0xF, v));
                out.push(assign(P0, 0xF, p));
                return Ok(None);
            }
            VectorOp::KillEq | VectorOp::KillGt | VectorOp::KillGe | VectorOp::KillNe => {
                if self.vertex {
                    return Err(self.err("kill in a vertex shader"));
                }
                let cmp = [CmpOp::Eq, CmpOp::Gt, CmpOp::Ge, CmpOp::Ne][(op.code() - 24) as usize];
                let any = dot(4, sel(cmp, s[0].clone(), s[1].clone(), one(), zero()), one());
                out.push(assign(VRES, 0xF, sel(CmpOp::Gt, any.clone(), zero(), one(), zero())));
                self.discard(Cond::Compare(CmpOp::Gt, any, zero()), out);
                return Ok(None);
            }
            VectorOp::Dst => {
                Expr::Compose(Box::new([one(), lane(mul_l(s[0].clone(), s[1].clone()), 1), lane(s[0].clone(), 2), lane(s[1].clone(), 3)]))
            }
            VectorOp::MaxA => {
                let a0 = un(UnOp::Floor, bin(BinOp::Add, lane(s[0].clone(), 3), lit(0.5)));
                let a0 = bin(BinOp::Max, bin(BinOp::Min, a0, lit(255.0)), lit(-256.0));
                let v = sel(CmpOp::Ge, s[0].clone(), s[1].clone(), s[0].clone(), s[1].clone());
                out.push(assign(VRES, 0xF, v));
                // a0 changes after both operations read their sources (committed in `alu`).
                out.push(assign(FRES, 0xF, a0));
                return Ok(None);
            }
        }))
    }

    pub(super) fn scalar_value(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let Some(op) = a.scalar_op() else { return Err(self.err(format!("scalar opcode {} is not defined", a.scalar_opcode()))) };
        let srcs: Vec<Expr> = a.scalar_srcs().iter().map(|o| self.operand(o)).collect();
        let av = || lane(srcs[0].clone(), 0);
        let bv = || lane(srcs[0].clone(), 1);
        let ps = || t(PS);
        let one = || lit(1.0);
        let zero = || lit(0.0);
        let fmax = f32::MAX;
        let setp = |v: Expr, p: Expr, out: &mut Vec<Stmt>| {
            out.push(assign(SRES, 0xF, v));
            out.push(assign(P0, 0xF, p));
        };
        let v = match op {
            ScalarOp::Adds => bin(BinOp::Add, av(), bv()),
            ScalarOp::AddsPrev => bin(BinOp::Add, av(), ps()),
            ScalarOp::Muls => mul_l(av(), bv()),
            ScalarOp::MulsPrev => mul_l(av(), ps()),
            ScalarOp::MulsPrev2 => {
                // ps == -FLT_MAX || !isfinite(ps) || !isfinite(b) || b <= 0 ? -FLT_MAX : a * ps
                let prod = mul_l(av(), ps());
                let r = sel(CmpOp::Le, bv(), zero(), lit(-fmax), prod);
                let r = sel(CmpOp::Le, un(UnOp::Abs, bv()), lit(fmax), r, lit(-fmax));
                let r = sel(CmpOp::Le, un(UnOp::Abs, ps()), lit(fmax), r, lit(-fmax));
                sel(CmpOp::Eq, ps(), lit(-fmax), lit(-fmax), r)
            }
            ScalarOp::Maxs => sel(CmpOp::Ge, av(), bv(), av(), bv()),
            ScalarOp::Mins => sel(CmpOp::Lt, av(), bv(), av(), bv()),
            ScalarOp::Seqs => sel(CmpOp::Eq, av(), zero(), one(), zero()),
            ScalarOp::Sgts => sel(CmpOp::Gt, av(), zero(), one(), zero()),
            ScalarOp::Sges => sel(CmpOp::Ge, av(), zero(), one(), zero()),
            ScalarOp::Snes => sel(CmpOp::Ne, av(), zero(), one(), zero()),
            ScalarOp::Frcs => un(UnOp::Fract, av()),
            ScalarOp::Truncs => un(UnOp::Trunc, av()),
            ScalarOp::Floors => un(UnOp::Floor, av()),
            ScalarOp::Exp => un(UnOp::Exp2, av()),
            ScalarOp::Logc => un(UnOp::Log2ClampMax, av()),
            ScalarOp::Log => un(UnOp::Log2ExactOne, av()),
            ScalarOp::Rcpc => un(UnOp::RcpClampMax, av()),
            ScalarOp::Rcpf => un(UnOp::RcpClampZero, av()),
            ScalarOp::Rcp => un(UnOp::Rcp, av()),
            ScalarOp::Rsqc => un(UnOp::RsqClampMax, av()),
            ScalarOp::Rsqf => un(UnOp::RsqClampZero, av()),
            ScalarOp::Rsq => un(UnOp::RsqExactOne, av()),
            ScalarOp::MaxAs | ScalarOp::MaxAsf => {
                let r = if op == ScalarOp::MaxAs { bin(BinOp::Add, av(), lit(0.5)) } else { av() };
                let a0 = bin(BinOp::Max, bin(BinOp::Min, un(UnOp::Floor, r), lit(255.0)), lit(-256.0));
                // The result reads its (possibly a0-relative) sources before a0 changes.
                out.push(assign(SRES, 0xF, sel(CmpOp::Ge, av(), bv(), av(), bv())));
                out.push(assign(A0, 0xF, a0));
                return Ok(());
            }
            ScalarOp::Subs => bin(BinOp::Sub, av(), bv()),
            ScalarOp::SubsPrev => bin(BinOp::Sub, av(), ps()),
            ScalarOp::SetpEq | ScalarOp::SetpNe | ScalarOp::SetpGt | ScalarOp::SetpGe => {
                let cmp = [CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge][(op.code() - 27) as usize];
                setp(sel(cmp, av(), zero(), zero(), one()), sel(cmp, av(), zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpInv => {
                let v = sel(CmpOp::Eq, av(), one(), zero(), sel(CmpOp::Eq, av(), zero(), one(), av()));
                setp(v, sel(CmpOp::Eq, av(), one(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpPop => {
                let m = bin(BinOp::Sub, av(), one());
                setp(sel(CmpOp::Le, m.clone(), zero(), zero(), m.clone()), sel(CmpOp::Le, m, zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::SetpClr => {
                setp(lit(fmax), zero(), out);
                return Ok(());
            }
            ScalarOp::SetpRstr => {
                setp(sel(CmpOp::Eq, av(), zero(), zero(), av()), sel(CmpOp::Eq, av(), zero(), one(), zero()), out);
                return Ok(());
            }
            ScalarOp::KillsEq | ScalarOp::KillsGt | ScalarOp::KillsGe | ScalarOp::KillsNe | ScalarOp::KillsOne => {
                if self.vertex {
                    return Err(self.err("kill in a vertex shader"));
                }
                // kills_eq, _gt, _ge, _ne compare with 0, kills_one with 1 (in encoding order).
                let (cmp, rhs) =
                    [(CmpOp::Eq, 0.0), (CmpOp::Gt, 0.0), (CmpOp::Ge, 0.0), (CmpOp::Ne, 0.0), (CmpOp::Eq, 1.0)][(op.code() - 35) as usize];
                out.push(assign(SRES, 0xF, sel(cmp, av(), lit(rhs), one(), zero())));
                self.discard(Cond::Compare(cmp, av(), lit(rhs)), out);
                return Ok(());
            }
            ScalarOp::Sqrt => un(UnOp::Sqrt, av()),
            // mulsc / addsc / subsc: constant .a and temp .b (two encodings each).
            ScalarOp::Mulsc0 | ScalarOp::Mulsc1 => mul_l(lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Addsc0 | ScalarOp::Addsc1 => bin(BinOp::Add, lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Subsc0 | ScalarOp::Subsc1 => bin(BinOp::Sub, lane(srcs[0].clone(), 0), lane(srcs[1].clone(), 0)),
            ScalarOp::Sin => un(UnOp::Sin, av()),
            ScalarOp::Cos => un(UnOp::Cos, av()),
            ScalarOp::RetainPrev => ps(),
            ScalarOp::Undefined41 => return Err(self.rejected(op.name(), op.info().status)),
        };
        out.push(assign(SRES, 0xF, v));
        Ok(())
    }

    pub(super) fn write_dest(
        &mut self,
        export: bool,
        reg: u32,
        rel: bool,
        mask: u32,
        value: Expr,
        saturate: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<(), ShaderError> {
        if mask == 0 {
            return Ok(());
        }
        if export && reg == EA {
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, EA_REG), mask: mask as u8 }, value, saturate });
        } else if export && (EM0..EM0 + EM_COUNT).contains(&reg) {
            let e = reg - EM0;
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, EM_REG + e), mask: mask as u8 }, value, saturate });
            let (flag, l) = if e < 4 { (EM_WRITTEN, e) } else { (EM4_WRITTEN, 0) };
            out.push(assign(flag, 1 << l, lit(1.0)));
        } else if export && self.vertex && reg == 63 {
            self.opts_written |= mask as u8;
            out.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Temp, OPTS), mask: mask as u8 }, value, saturate });
        } else if export {
            let o = self.output(reg)?;
            let write = Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, o), mask: mask as u8 }, value, saturate };
            if self.vertex && reg == 62 && self.ul.as_ref().is_some_and(|u| u.guard_position) {
                // XenosRecomp UNLEASHED_RECOMP: `if ((g_SpecConstants() & SPEC_CONSTANT_REVERSE_Z) == 0 || iterationIndex == 0)`
                out.push(Stmt::If { cond: spec_bit_clear(STATE_SPEC_UNLEASHED, 2), then_body: vec![write], else_body: vec![] });
            } else {
                out.push(write);
            }
        } else {
            self.temp_write(reg, rel, mask as u8, value, saturate, out);
        }
        Ok(())
    }

    /// A kill: the pixel's pending memory exports are stored before it is discarded.
    pub(super) fn discard(&self, cond: Cond, out: &mut Vec<Stmt>) {
        let flush = self.memexport_flush();
        if !flush.is_empty() {
            let mut then_body = vec![Stmt::Comment(MEMEXPORT_KILL.into())];
            then_body.extend(flush);
            out.push(Stmt::If { cond: cond.clone(), then_body, else_body: vec![] });
        }
        out.push(Stmt::Discard(cond));
    }

    pub(super) fn alu(&mut self, a: &Alu, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut body = Vec::new();
        let has_v = a.has_vector_op();
        let has_s = a.has_scalar_op();
        // Both operations read their sources before either writes.
        if has_v {
            if let Some(v) = self.vector_value(a, &mut body)? {
                body.push(assign(VRES, 0xF, v));
            }
        }
        if has_s {
            self.scalar_value(a, &mut body)?;
        }
        if has_v && a.vector_op() == Some(VectorOp::MaxA) {
            body.push(assign(A0, 0xF, t(FRES)));
        }
        if has_v {
            self.write_dest(a.is_export(), a.vector_dest(), a.vector_dest_rel(), a.vector_result_mask(), t(VRES), a.vector_clamp(), &mut body)?;
        }
        if has_s {
            let (reg, rel) = if a.is_export() { (a.vector_dest(), false) } else { (a.scalar_dest(), a.scalar_dest_rel()) };
            self.write_dest(a.is_export(), reg, rel, a.scalar_result_mask(), t(SRES), a.scalar_clamp(), &mut body)?;
            body.push(assign(PS, 0xF, t(SRES)));
        }
        if a.is_export() {
            let c1 = a.const1_mask() & !(a.vector_result_mask() | a.scalar_result_mask());
            let c0 = a.const0_mask();
            self.write_dest(true, a.vector_dest(), false, c1, lit(1.0), false, &mut body)?;
            self.write_dest(true, a.vector_dest(), false, c0, lit(0.0), false, &mut body)?;
        }
        if a.is_predicated() {
            out.push(Stmt::If { cond: pred_cond(a.pred_condition()), then_body: body, else_body: vec![] });
        } else {
            out.extend(body);
        }
        Ok(())
    }

    pub(super) fn clause(&mut self, cf_index: usize, slots: &[Slot], out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        for s in slots {
            match &s.instr {
                Instr::Fetch(f) => {
                    self.at = format!("CF {cf_index} slot {} ({})", s.address, f.name().unwrap_or("fetch?"));
                    self.fetch(f, s.address, out)?
                }
                Instr::Alu(a) => {
                    let vn = a.vector_op().map_or("?", VectorOp::name);
                    let sn = a.scalar_op().map_or("?", ScalarOp::name);
                    self.at = format!("CF {cf_index} slot {} ({vn} / {sn})", s.address);
                    self.alu(a, out)?
                }
            }
        }
        Ok(())
    }
}
