//! ALU clauses: operands (GPRs, constants, kcache, PV/PS, literals, relative indexing), VLIW5 groups with their reductions, predicate and kill updates, and each OP2 / OP3 opcode.

use super::*;

impl Lowering<'_> {
    pub(super) fn const_buffer_for_block(&mut self, loc: u32) -> u32 {
        if let Some(b) = self.blocks.iter().find(|b| b.0 == loc) {
            return b.1;
        }
        let idx = self.m.const_buffers.len() as u32;
        let size = self.s.uniform_blocks.iter().find(|b| b.offset == loc).map(|b| b.size.div_ceil(16)).unwrap_or(4096).clamp(1, 4096);
        let binding = self.binding(Layout::VK_BLOCK_BASE + loc, 1 + loc);
        self.m.const_buffers.push(ConstBuffer { block: format!("GX2UniformBlock{loc}"), var: format!("CB{loc}"), len: size, binding });
        self.blocks.push((loc, idx));
        idx
    }

    pub(super) fn register_file(&mut self) -> u32 {
        if let Some(r) = self.regfile {
            return r;
        }
        let idx = self.m.const_buffers.len() as u32;
        let binding = self.binding(0, 0);
        self.m.const_buffers.push(ConstBuffer { block: "GX2UniformRegisters".into(), var: "C".into(), len: 256, binding });
        self.regfile = Some(idx);
        idx
    }

    /// GPRs relative addressing can reach: R0..R(NUM_GPRS - 1) (all 128 when NUM_GPRS is 0).
    pub(super) fn rel_gprs(&self) -> u32 {
        match self.s.num_gprs() {
            0 => 128,
            n => n.min(128),
        }
    }

    /// The relative index (AR lane or AL) as an integer-valued float.
    pub(super) fn rel_value(&self, index_mode: u32) -> Expr {
        if index_mode == 4 {
            rd(ST, 2)
        } else {
            rd(AR, (index_mode & 3) as u8)
        }
    }

    pub(super) fn rel_index(&self, index_mode: u32, base: u32) -> Index {
        let v = if index_mode == 4 { rd(ST, 2) } else { rd(AR, (index_mode & 3) as u8) };
        Index::Dynamic { base: base as i32, value: Box::new(v), conv: IndexConv::Trunc }
    }

    /// Source operand as a broadcast float4 (bit-exact read of the lane).
    pub(super) fn src(&mut self, s: &AluSrc, a: &AluInst, kc: &[Kcache; 2], pc: u32) -> Result<Expr, ShaderError> {
        let lane = s.chan;
        let e = match s.sel {
            0..=127 => {
                if s.rel {
                    // R[sel + index] as a select over the reachable GPRs (out of range: 0);
                    // an indexable temp array makes drivers lower every access to a compare
                    // ladder over all 176 temps, which lavapipe takes seconds to compile
                    let idx = self.rel_value(a.index_mode);
                    let mut acc = bits(0);
                    for j in (0..self.rel_gprs()).rev() {
                        let k = j as i32 - s.sel as i32;
                        acc = Expr::Select {
                            cmp: CmpOp::Eq,
                            a: Box::new(idx.clone()),
                            b: Box::new(lit(k as f32)),
                            if_true: Box::new(rd(j, lane)),
                            if_false: Box::new(acc),
                        };
                    }
                    acc
                } else {
                    rd(s.sel, lane)
                }
            }
            128..=191 => {
                let k = &kc[((s.sel - 128) / 32) as usize];
                if k.mode == 0 {
                    return Err(unsupported(a.op, format!("{} reading an unlocked kcache bank", a.op), pc));
                }
                let cb = self.const_buffer_for_block(k.bank);
                let base = k.addr * 16 + (s.sel - 128) % 32;
                let index = if k.mode == 3 || s.rel {
                    let mode = if k.mode == 3 { 4 } else { a.index_mode };
                    self.rel_index(mode, base)
                } else {
                    Index::Fixed(base)
                };
                Expr::Read(Src { reg: RegRef { file: RegFile::Const(cb), index }, swizzle: [lane; 4], abs: false, negate: false })
            }
            248 => lit(0.0),
            249 => lit(1.0),
            250 => bits(1),
            251 => bits(0xFFFF_FFFF),
            252 => lit(0.5),
            isa::SEL_LITERAL => bits(s.literal),
            isa::SEL_PV => rd(PV[self.pv ^ 1], lane),
            isa::SEL_PS => rd(PS[self.pv ^ 1], 0),
            256..=511 => {
                if self.s.mode() == MODE_UNIFORM_BLOCK {
                    return Err(unsupported(a.op, format!("{} reading the constant file in uniform-block mode", a.op), pc));
                }
                let cb = self.register_file();
                let index = if s.rel { self.rel_index(a.index_mode, s.sel - 256) } else { Index::Fixed(s.sel - 256) };
                Expr::Read(Src { reg: RegRef { file: RegFile::Const(cb), index }, swizzle: [lane; 4], abs: false, negate: false })
            }
            other => return Err(unsupported(a.op, format!("{} with special source select {other}", a.name), pc)),
        };
        let e = if s.abs { un(UnOp::Abs, e) } else { e };
        Ok(if s.neg { un(UnOp::Neg, e) } else { e })
    }

    /// Lowers one group; returns whether it updates the exec mask.
    pub(super) fn group(&mut self, g: &AluGroup, kc: &[Kcache; 2], pc: u32, out: &mut Vec<Stmt>) -> Result<bool, ShaderError> {
        let cur = self.pv; // this group's new PV/PS; reads of PV use cur ^ 1
        let mut writes = Vec::new();
        // AR changes after the group's GPR writes: a relative destination in the same group
        // still uses the previous AR
        let mut ar_writes = Vec::new();
        let mut exec = false;
        let mut post = Vec::new();
        // reductions: the four vector slots' (src0, src1), the value computed per slot by `op`
        let reduc: Vec<&AluInst> = g.insts.iter().filter(|a| a.flags & isa::flags::REDUC != 0).collect();
        let mut terms = Vec::new();
        if let Some(first) = reduc.first() {
            let op = first.op;
            if op.status().is_rejected() {
                return Err(rejected(op, pc));
            }
            if reduc.len() != 4 || reduc.iter().any(|a| a.op != op) {
                return Err(unsupported(op, format!("{op} not spanning the four vector slots"), pc));
            }
            if op == AluOp::CUBE && reduc.iter().enumerate().any(|(k, a)| a.slot != k) {
                return Err(unsupported(op, "CUBE not in the x, y, z and w slots", pc));
            }
            for a in &reduc {
                let x = self.src(&a.srcs[0], a, kc, pc)?;
                let y = if a.srcs.len() > 1 { Some(self.src(&a.srcs[1], a, kc, pc)?) } else { None };
                terms.push((x, y));
            }
        }
        for a in &g.insts {
            let slot = a.slot;
            let (reg, lane) = if slot == 4 { (PS[cur], 0u8) } else { (PV[cur], slot as u8) };
            let reduction = a.flags & isa::flags::REDUC != 0;
            let mut srcs = Vec::new();
            if !reduction {
                for s in &a.srcs {
                    srcs.push(self.src(s, a, kc, pc)?);
                }
            }
            let value = match self.op(a, srcs, if reduction { &terms } else { &[] }, pc, &mut post, &mut exec)? {
                Some(v) => v,
                None => continue,
            };
            let value = match a.omod {
                1 => bin(BinOp::Mul, value, lit(2.0)),
                2 => bin(BinOp::Mul, value, lit(4.0)),
                3 => bin(BinOp::Mul, value, lit(0.5)),
                _ => value,
            };
            out.push(Stmt::Assign { dst: Dst { reg: t(reg), mask: 1 << lane }, value: broadcast_all(value), saturate: a.clamp });
            if matches!(a.op, AluOp::MOVA | AluOp::MOVA_FLOOR | AluOp::MOVA_INT) {
                let v = rd(reg, lane);
                let arv = match a.op {
                    AluOp::MOVA => un(UnOp::Floor, bin(BinOp::Add, v, lit(0.5))),
                    AluOp::MOVA_FLOOR => un(UnOp::Floor, v),
                    _ => Expr::IntUnary(IntUnOp::IntToFloat, Box::new(v)),
                };
                ar_writes.push(assign(t(AR), 1 << a.dst_chan, broadcast_all(arv)));
            }
            if a.write_mask {
                let w = if a.dst_rel {
                    // R[dst + index] = v as one guarded write per reachable GPR
                    let idx = self.rel_value(a.index_mode);
                    let chain: Vec<Stmt> = (0..self.rel_gprs())
                        .map(|j| Stmt::If {
                            cond: Cond::Compare(CmpOp::Eq, idx.clone(), lit((j as i32 - a.dst_gpr as i32) as f32)),
                            then_body: vec![assign(t(j), 1 << a.dst_chan, rd(reg, lane))],
                            else_body: vec![],
                        })
                        .collect();
                    Stmt::If { cond: Cond::Compare(CmpOp::Eq, lit(0.0), lit(0.0)), then_body: chain, else_body: vec![] }
                } else {
                    assign(t(a.dst_gpr), 1 << a.dst_chan, rd(reg, lane))
                };
                let w = match a.pred_sel {
                    2 => Stmt::If { cond: Cond::Not(Box::new(is_set(ST, 1))), then_body: vec![w], else_body: vec![] },
                    3 => Stmt::If { cond: is_set(ST, 1), then_body: vec![w], else_body: vec![] },
                    _ => w,
                };
                writes.push(w);
            }
        }
        out.extend(writes);
        out.extend(ar_writes);
        out.extend(post);
        self.pv ^= 1;
        Ok(exec)
    }

    /// One slot's value (None = no result, e.g. NOP).
    pub(super) fn op(
        &mut self,
        a: &AluInst,
        s: Vec<Expr>,
        terms: &[(Expr, Option<Expr>)],
        pc: u32,
        post: &mut Vec<Stmt>,
        exec: &mut bool,
    ) -> Result<Option<Expr>, ShaderError> {
        let mut it = s.into_iter();
        let mut next = || it.next().unwrap_or(lit(0.0));
        let ib = |op: IntBinOp, x: Expr, y: Expr| Expr::IntBinary(op, Box::new(x), Box::new(y));
        let iu = |op: IntUnOp, x: Expr| Expr::IntUnary(op, Box::new(x));
        let one_if = |m: Expr| ib(IntBinOp::And, m, bits(0x3F80_0000)); // all-ones mask → 1.0
        use AluOp::*;
        let v = match a.op {
            NOP => return Ok(None),
            ADD => bin(BinOp::Add, next(), next()),
            MUL => bin(legacy_mul(), next(), next()),
            MUL_IEEE => bin(BinOp::Mul, next(), next()),
            MAX | MAX_DX10 => bin(BinOp::Max, next(), next()),
            MIN | MIN_DX10 => bin(BinOp::Min, next(), next()),
            SETE => bin(BinOp::Seq, next(), next()),
            // NE is unordered (true on NaN): written as not-equal so no backend picks the
            // ordered form (DXC's SPIR-V `!=` is ordered)
            SETNE => bin(BinOp::Sub, lit(1.0), bin(BinOp::Seq, next(), next())),
            SETGE => bin(BinOp::Sge, next(), next()),
            SETGT => {
                let (x, y) = (next(), next());
                bin(BinOp::Slt, y, x)
            }
            SETE_DX10 => ib(IntBinOp::EqF, next(), next()),
            SETNE_DX10 => iu(IntUnOp::Not, ib(IntBinOp::EqF, next(), next())),
            SETGT_DX10 => ib(IntBinOp::GtF, next(), next()),
            SETGE_DX10 => ib(IntBinOp::GeF, next(), next()),
            FRACT => un(UnOp::Fract, next()),
            TRUNC => un(UnOp::Trunc, next()),
            CEIL => un(UnOp::Ceil, next()),
            RNDNE => un(UnOp::RoundEven, next()),
            FLOOR => un(UnOp::Floor, next()),
            MOV | MOVA | MOVA_FLOOR | MOVA_INT => next(),
            AND_INT => ib(IntBinOp::And, next(), next()),
            OR_INT => ib(IntBinOp::Or, next(), next()),
            XOR_INT => ib(IntBinOp::Xor, next(), next()),
            NOT_INT => iu(IntUnOp::Not, next()),
            ADD_INT => ib(IntBinOp::Add, next(), next()),
            SUB_INT => ib(IntBinOp::Sub, next(), next()),
            MAX_INT => ib(IntBinOp::MaxI, next(), next()),
            MIN_INT => ib(IntBinOp::MinI, next(), next()),
            MAX_UINT => ib(IntBinOp::MaxU, next(), next()),
            MIN_UINT => ib(IntBinOp::MinU, next(), next()),
            SETE_INT => ib(IntBinOp::EqI, next(), next()),
            SETNE_INT => ib(IntBinOp::NeI, next(), next()),
            SETGT_INT => ib(IntBinOp::GtI, next(), next()),
            SETGE_INT => ib(IntBinOp::GeI, next(), next()),
            SETGT_UINT => ib(IntBinOp::GtU, next(), next()),
            SETGE_UINT => ib(IntBinOp::GeU, next(), next()),
            ASHR_INT => ib(IntBinOp::ShrI, next(), next()),
            LSHR_INT => ib(IntBinOp::ShrU, next(), next()),
            LSHL_INT => ib(IntBinOp::Shl, next(), next()),
            MULLO_INT | MULLO_UINT => ib(IntBinOp::MulLo, next(), next()),
            MULHI_INT => ib(IntBinOp::MulHiI, next(), next()),
            MULHI_UINT => ib(IntBinOp::MulHiU, next(), next()),
            FLT_TO_INT => iu(IntUnOp::FloatToInt, next()),
            FLT_TO_UINT => iu(IntUnOp::FloatToUint, next()),
            INT_TO_FLT => iu(IntUnOp::IntToFloat, next()),
            UINT_TO_FLT => iu(IntUnOp::UintToFloat, next()),
            EXP_IEEE => un(UnOp::Exp2, next()),
            LOG_IEEE => un(UnOp::Log2, next()),
            LOG_CLAMPED => un(UnOp::Log2Clamped, next()),
            RECIP_IEEE => un(UnOp::Rcp, next()),
            // _CLAMPED / _FF replace the ±infinity of a ±0 input by ±FLT_MAX / ±0 (docs/gx2.md,
            // "RECIP/RECIPSQRT _CLAMPED and _FF"). The test is on the input: lavapipe's rsqrt(-0)
            // result escaped an isinf() test on the output (a finite normal input cannot overflow).
            RECIP_CLAMPED | RECIP_FF | RECIPSQRT_CLAMPED | RECIPSQRT_FF => {
                let x = next();
                let sign = ib(IntBinOp::And, x.clone(), bits(0x8000_0000));
                let on_zero = if a.name.ends_with("_FF") { sign } else { ib(IntBinOp::Or, sign, bits(f32::MAX.to_bits())) };
                let r = if matches!(a.op, RECIPSQRT_CLAMPED | RECIPSQRT_FF) { un(UnOp::Rsq, x.clone()) } else { un(UnOp::Rcp, x.clone()) };
                Expr::Select { cmp: CmpOp::Eq, a: Box::new(x), b: Box::new(lit(0.0)), if_true: Box::new(on_zero), if_false: Box::new(r) }
            }
            RECIPSQRT_IEEE => un(UnOp::Rsq, next()),
            SQRT_IEEE => un(UnOp::Sqrt, next()),
            // Latte SIN/COS take the angle in revolutions (the compiler pre-scales by 1/2π)
            SIN => un(UnOp::Sin, bin(BinOp::Mul, next(), lit(std::f32::consts::TAU))),
            COS => un(UnOp::Cos, bin(BinOp::Mul, next(), lit(std::f32::consts::TAU))),
            MULADD | MULADD_M2 | MULADD_M4 | MULADD_D2 | MULADD_IEEE | MULADD_IEEE_M2 | MULADD_IEEE_M4 | MULADD_IEEE_D2 | FMA => {
                let (x, y, z) = (next(), next(), next());
                let v = if matches!(a.op, MULADD_IEEE | MULADD_IEEE_M2 | MULADD_IEEE_M4 | MULADD_IEEE_D2 | FMA) {
                    Expr::Mad(Box::new(x), Box::new(y), Box::new(z))
                } else {
                    bin(BinOp::Add, bin(legacy_mul(), x, y), z)
                };
                match a.op {
                    MULADD_M2 | MULADD_IEEE_M2 => bin(BinOp::Mul, v, lit(2.0)),
                    MULADD_M4 | MULADD_IEEE_M4 => bin(BinOp::Mul, v, lit(4.0)),
                    MULADD_D2 | MULADD_IEEE_D2 => bin(BinOp::Mul, v, lit(0.5)),
                    _ => v,
                }
            }
            CNDE | CNDGT | CNDGE => {
                let op = match a.op {
                    CNDE => CmpOp::Eq,
                    CNDGT => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let (c, x, y) = (next(), next(), next());
                Expr::Select { cmp: op, a: Box::new(c), b: Box::new(lit(0.0)), if_true: Box::new(x), if_false: Box::new(y) }
            }
            CNDE_INT | CNDGT_INT | CNDGE_INT | BFE_UINT | BFE_INT | BFI_INT => {
                let op = match a.op {
                    CNDE_INT => IntTerOp::CndEI,
                    CNDGT_INT => IntTerOp::CndGtI,
                    CNDGE_INT => IntTerOp::CndGeI,
                    BFE_UINT => IntTerOp::BfeU,
                    BFE_INT => IntTerOp::BfeI,
                    _ => IntTerOp::Bfi,
                };
                let (c, x, y) = (next(), next(), next());
                Expr::IntTernary(op, Box::new(c), Box::new(x), Box::new(y))
            }
            KILLE | KILLGT | KILLGE | KILLNE | KILLE_INT | KILLGT_INT | KILLGE_INT | KILLNE_INT | KILLGT_UINT | KILLGE_UINT => {
                if self.s.kind != ShaderKind::Pixel {
                    return Err(unsupported(a.op, format!("{} outside a pixel shader", a.name), pc));
                }
                let (x, y) = (next(), next());
                let m = match a.op {
                    KILLE => ib(IntBinOp::EqF, x, y),
                    KILLGT => ib(IntBinOp::GtF, x, y),
                    KILLGE => ib(IntBinOp::GeF, x, y),
                    KILLNE => iu(IntUnOp::Not, ib(IntBinOp::EqF, x, y)),
                    KILLE_INT => ib(IntBinOp::EqI, x, y),
                    KILLGT_INT => ib(IntBinOp::GtI, x, y),
                    KILLGE_INT => ib(IntBinOp::GeI, x, y),
                    KILLNE_INT => ib(IntBinOp::NeI, x, y),
                    KILLGT_UINT => ib(IntBinOp::GtU, x, y),
                    _ => ib(IntBinOp::GeU, x, y),
                };
                let v = one_if(m);
                let slot_reg = if a.slot == 4 { PS[self.pv] } else { PV[self.pv] };
                let lane = if a.slot == 4 { 0 } else { a.slot as u8 };
                post.push(Stmt::Discard(is_set(slot_reg, lane)));
                v
            }
            PRED_SETE | PRED_SETGT | PRED_SETGE | PRED_SETNE | PRED_SETE_INT | PRED_SETGT_INT | PRED_SETGE_INT | PRED_SETNE_INT | PRED_SETGT_UINT
            | PRED_SETGE_UINT | PRED_SET_CLR | PRED_SET_RESTORE => {
                let (x, y) = (next(), next());
                let m = match a.op {
                    PRED_SETE => ib(IntBinOp::EqF, x, y),
                    PRED_SETGT => ib(IntBinOp::GtF, x, y),
                    PRED_SETGE => ib(IntBinOp::GeF, x, y),
                    PRED_SETNE => iu(IntUnOp::Not, ib(IntBinOp::EqF, x, y)),
                    PRED_SETE_INT => ib(IntBinOp::EqI, x, y),
                    PRED_SETGT_INT => ib(IntBinOp::GtI, x, y),
                    PRED_SETGE_INT => ib(IntBinOp::GeI, x, y),
                    PRED_SETNE_INT => ib(IntBinOp::NeI, x, y),
                    PRED_SETGT_UINT => ib(IntBinOp::GtU, x, y),
                    PRED_SETGE_UINT => ib(IntBinOp::GeU, x, y),
                    PRED_SET_CLR => bits(0),
                    _ => ib(IntBinOp::EqF, x, lit(0.0)),
                };
                // result: 1.0 / 0.0 (PRED_SET_CLR: FLT_MAX, predicate false)
                let v = if a.op == PRED_SET_CLR { lit(f32::MAX) } else { one_if(m) };
                // the predicate / exec-mask updates run after the group's GPR writes, so they
                // read this slot's buffered result, not the sources again (a source may be a
                // GPR the same group overwrites)
                let slot_reg = if a.slot == 4 { PS[self.pv] } else { PV[self.pv] };
                let lane = if a.slot == 4 { 0 } else { a.slot as u8 };
                let cond = if a.op == PRED_SET_CLR {
                    lit(0.0)
                } else {
                    Expr::Select {
                        cmp: CmpOp::Ne,
                        a: Box::new(rd(slot_reg, lane)),
                        b: Box::new(lit(0.0)),
                        if_true: Box::new(lit(1.0)),
                        if_false: Box::new(lit(0.0)),
                    }
                };
                let c = broadcast_all(cond);
                if a.update_pred {
                    post.push(assign(t(ST), 2, c.clone()));
                }
                if a.update_exec_mask {
                    *exec = true;
                    post.push(assign(t(ST), 8, c));
                }
                v
            }
            // the reductions: `terms` holds (src0, src1) of the x, y, z, w slots (see `group`)
            DOT4 | DOT4_IEEE | MAX4 | CUBE if terms.len() != 4 => {
                return Err(structure(Some(pc), format!("{} outside a four-slot reduction", a.name)));
            }
            DOT4 | DOT4_IEEE => {
                let op = if a.op == DOT4 { legacy_mul() } else { BinOp::Mul };
                let mut it = terms.iter().map(|(x, y)| bin(op, x.clone(), y.clone().unwrap_or(lit(0.0))));
                let first = it.next().unwrap_or(lit(0.0));
                it.fold(first, |acc, p| bin(BinOp::Add, acc, p))
            }
            MAX4 => {
                let mut it = terms.iter().map(|(x, _)| x.clone());
                let first = it.next().unwrap_or(lit(0.0));
                it.fold(first, |acc, p| bin(BinOp::Max, acc, p))
            }
            CUBE => {
                // the direction is src0 of the z, w and x slots (the compilers' Rn.zzxy /
                // Rn.yxzz operand pattern; docs/gx2.md: CUBE)
                let (z, x, y) = (terms[0].0.clone(), terms[2].0.clone(), terms[3].0.clone());
                let [v0, v1, v2, v3] = cube::cube(x, y, z, cube::SignTest::GeZero);
                [v0, v1, v2, v3].into_iter().nth(a.slot).unwrap_or(lit(0.0))
            }
            // rejected by the table (docs/opcodes/gx2.md gives the reasons)
            FREXP_64 | ADD_64 | MUL_64 | FLT64_TO_FLT32 | FLT32_TO_FLT64 | LDEXP_64 | FRACT_64 | PRED_SETGT_64 | PRED_SETE_64 | PRED_SETGE_64
            | MULADD_64 | MULADD_64_M2 | MULADD_64_M4 | MULADD_64_D2 | PRED_SET_INV | PRED_SET_POP | PRED_SETE_PUSH | PRED_SETGT_PUSH
            | PRED_SETGE_PUSH | PRED_SETNE_PUSH | PRED_SETE_PUSH_INT | PRED_SETGT_PUSH_INT | PRED_SETGE_PUSH_INT | PRED_SETNE_PUSH_INT
            | PRED_SETLT_PUSH_INT | PRED_SETLE_PUSH_INT | MUL_LIT | MUL_LIT_M2 | MUL_LIT_M4 | MUL_LIT_D2 | GROUP_BARRIER | GROUP_SEQ_BEGIN
            | GROUP_SEQ_END | SET_MODE | SET_CF_IDX0 | SET_CF_IDX1 | SET_LDS_SIZE | MUL_INT24 | MULHI_INT24 | RECIP_INT | RECIP_UINT
            | MOVA_GPR_INT => return Err(rejected(a.op, pc)),
        };
        Ok(Some(v))
    }
}

/// The non-IEEE multiply (0 × anything = 0).
pub(super) fn legacy_mul() -> BinOp {
    BinOp::MulLegacy
}

/// Every lane of a value computed from broadcast operands already holds the scalar; keep as is.
pub(super) fn broadcast_all(e: Expr) -> Expr {
    e
}
