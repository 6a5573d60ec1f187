//! Control flow: straight-line programs, the pc-dispatch loop for everything else, loop and call depths, exec and boolean conditions.

use super::*;

impl Ctx<'_> {
    pub(super) fn bool_cond(&self, b: u32, want: bool) -> Result<Cond, ShaderError> {
        // b0-b15: XenosRecomp packing, g_Booleans bit (b + 16 * isPixel). b16-b255 (XenosRecomp
        // has none): bit b % 32 of word b / 32 of the stage's extension words.
        let c = if b < 16 {
            let bit = b + if self.vertex { 0 } else { 16 };
            Cond::BitSet { value: read(RegFile::Const(CB_SHARED), 16, [0; 4]), bit }
        } else if b < 256 {
            Cond::BitSet { value: read(RegFile::Const(CB_SHARED), STATE_BOOLS + b / 32, [0; 4]), bit: b % 32 }
        } else {
            return Err(self.err(format!("boolean constant b{b} (b0-b255 exist)")));
        };
        Ok(if want { c } else { Cond::Not(Box::new(c)) })
    }

    /// (count, aL start, aL step) of loop constant i<id>: the literal `defi` folded, else the
    /// stage's run-time constant (shrec's SharedConstants extension).
    pub(super) fn loop_constant(&self, id: u32) -> (Expr, Expr, Expr) {
        match self.int_defs.get(&id) {
            Some(&v) => (lit((v & 0xFF) as f32), lit(((v >> 8) & 0xFF) as f32), lit(((v >> 16) & 0xFF) as u8 as i8 as f32)),
            None => {
                let r = |l: u8| read(RegFile::Const(CB_SHARED), STATE_LOOPS + id, [l; 4]);
                (r(0), r(1), r(2))
            }
        }
    }

    /// Condition under which an exec-family CF instruction runs its clause (None = always).
    pub(super) fn exec_cond(&self, cf: &Cf) -> Result<Option<Cond>, ShaderError> {
        Ok(match cf.op() {
            // 13 / 14 (cond_exec_pred_clean) test a boolean constant, as 3 / 4 (Xenia's
            // translators parse them as cond_exec; no corpus shader has them).
            CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => {
                Some(self.bool_cond(cf.bool_address(), cf.condition())?)
            }
            CfOp::CondExecPred | CfOp::CondExecPredEnd => Some(pred_cond(cf.condition())),
            CfOp::Exec
            | CfOp::ExecEnd
            | CfOp::Nop
            | CfOp::LoopStart
            | CfOp::LoopEnd
            | CfOp::CondCall
            | CfOp::Return
            | CfOp::CondJmp
            | CfOp::Alloc
            | CfOp::MarkVsFetchDone => None,
        })
    }
}

/// Straight-line lowering (exec family, alloc, nop, vfetch_end only).
///
/// A conditional exec-end (`cexece`, `exece_pred`) ends the shader only when its condition holds
/// (Xenia: ucode.h on kCondExecEnd / kCondExecPredEnd, "only if the condition is actually met",
/// with a game ending in `cexece b130; cexece !b130; exece`; its translators end the shader inside
/// the condition): the CF instructions after it become its `else` branch.
pub(super) fn lower_linear(ctx: &mut Ctx, p: &crate::formats::xenos::ucode::Program, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
    lower_linear_from(ctx, p, 0, out)
}

pub(super) fn lower_linear_from(
    ctx: &mut Ctx,
    p: &crate::formats::xenos::ucode::Program,
    first: usize,
    out: &mut Vec<Stmt>,
) -> Result<(), ShaderError> {
    for (i, cf) in p.cf.iter().enumerate().skip(first) {
        ctx.at = format!("CF {i} ({})", cf.op());
        if cf.op() == CfOp::Alloc {
            out.extend(ctx.alloc(cf));
        }
        if cf.is_exec() {
            let cond = ctx.exec_cond(cf)?;
            let mut body = Vec::new();
            ctx.clause(i, &p.clauses[i], &mut body)?;
            match cond {
                Some(c) if cf.ends_shader() => {
                    let mut rest = Vec::new();
                    lower_linear_from(ctx, p, i + 1, &mut rest)?;
                    out.push(Stmt::If { cond: c, then_body: body, else_body: rest });
                    return Ok(());
                }
                Some(c) => out.push(Stmt::If { cond: c, then_body: body, else_body: vec![] }),
                None => out.extend(body),
            }
            if cf.ends_shader() {
                break;
            }
        }
    }
    Ok(())
}

pub(super) fn is_linear(p: &crate::formats::xenos::ucode::Program) -> bool {
    p.cf.iter().all(|c| c.is_exec() || matches!(c.op(), CfOp::Nop | CfOp::Alloc | CfOp::MarkVsFetchDone))
}

/// Pops the loop stack (counters and saved aL move up one place).
pub(super) fn pop_loop() -> Vec<Stmt> {
    let mut v = Vec::new();
    for k in 0..MAX_LOOP_DEPTH - 1 {
        v.push(assign(LOOP_CTR + k, 0xF, tx(LOOP_CTR + k + 1)));
        v.push(assign(LOOP_SAVE + k, 0xF, tx(LOOP_SAVE + k + 1)));
    }
    v
}

/// Whether the program reads shrec's SharedConstants extension: b16+ (cexec, jmp, call) or a
/// loop constant without a literal `defi`.
pub(super) fn uses_extension(p: &crate::formats::xenos::ucode::Program, int_defs: &BTreeMap<u32, u32>) -> bool {
    p.cf.iter().any(|cf| match cf.op() {
        CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => cf.bool_address() >= 16,
        CfOp::CondJmp | CfOp::CondCall => !cf.is_unconditional() && !cf.is_predicated() && cf.bool_address() >= 16,
        CfOp::LoopStart | CfOp::LoopEnd => !int_defs.contains_key(&cf.loop_id()),
        CfOp::Nop | CfOp::Exec | CfOp::ExecEnd | CfOp::CondExecPred | CfOp::CondExecPredEnd | CfOp::Return | CfOp::Alloc | CfOp::MarkVsFetchDone => {
            false
        }
    })
}

/// Checks that no path through the CF program ends a loop that is not open, or opens more than
/// `MAX_LOOP_DEPTH` loops. The loop stack is dynamic (Xenia's translators keep it as a run-time
/// stack: ProcessLoopStartInstruction pushes, ProcessLoopEndInstruction pops when the count runs
/// out or a predicated break is taken and falls through), so one `loop_start` may be closed by
/// several `loop_end`s, e.g. a predicated early endloop before the real one (fxc 2.0.7680). The
/// check follows every CF edge (both ways of each condition) with the set of possible depths at
/// each CF; subroutines (call targets) start at depth 0 relative to their caller.
pub(super) fn check_loop_depths(p: &crate::formats::xenos::ucode::Program) -> Result<(), ShaderError> {
    let n = p.cf.len();
    // Bit d of depths[i]: CF i can be reached with d loops open.
    let mut depths = vec![0u8; n];
    let mut work = Vec::new();
    let reach = |at: usize, depth: u32, depths: &mut Vec<u8>, work: &mut Vec<usize>| {
        if at < n && depths[at] & (1 << depth) == 0 {
            depths[at] |= 1 << depth;
            work.push(at);
        }
    };
    if n > 0 {
        reach(0, 0, &mut depths, &mut work);
    }
    for cf in &p.cf {
        if cf.op() == CfOp::CondCall {
            reach(cf.target() as usize, 0, &mut depths, &mut work);
        }
    }
    while let Some(i) = work.pop() {
        let cf = &p.cf[i];
        let set = depths[i];
        for depth in (0..=MAX_LOOP_DEPTH).filter(|d| set & (1 << d) != 0) {
            let mut to = |at: usize, d: u32| reach(at, d, &mut depths, &mut work);
            match cf.op() {
                CfOp::Exec
                | CfOp::ExecEnd
                | CfOp::CondExec
                | CfOp::CondExecEnd
                | CfOp::CondExecPred
                | CfOp::CondExecPredEnd
                | CfOp::CondExecPredClean
                | CfOp::CondExecPredCleanEnd => {
                    // An unconditional exec-end ends the shader; a conditional one only when
                    // its condition holds.
                    if cf.op() != CfOp::ExecEnd {
                        to(i + 1, depth);
                    }
                }
                CfOp::LoopStart => {
                    if depth == MAX_LOOP_DEPTH {
                        return Err(XenosError::LoopTooDeep { cf: i, max: MAX_LOOP_DEPTH }.into());
                    }
                    to(i + 1, depth + 1);
                    to(cf.target() as usize, depth);
                }
                CfOp::LoopEnd => {
                    if depth == 0 {
                        return Err(XenosError::EndloopWithoutLoop { cf: i }.into());
                    }
                    to(cf.target() as usize, depth);
                    to(i + 1, depth - 1);
                }
                CfOp::CondJmp => {
                    to(cf.target() as usize, depth);
                    if !cf.is_unconditional() {
                        to(i + 1, depth);
                    }
                }
                // A call returns to the next CF with the caller's loops; a return outside a
                // subroutine does nothing (Xenia's ucode.h).
                CfOp::CondCall | CfOp::Return | CfOp::Nop | CfOp::Alloc | CfOp::MarkVsFetchDone => to(i + 1, depth),
            }
        }
    }
    Ok(())
}

/// pc-dispatch lowering: `pc = 0; loop { if (pc == 0) {...} ... break; }`, one block per CF
/// instruction. Handles forward and backward jumps and loops with literal integer constants.
pub(super) fn lower_dispatch(ctx: &mut Ctx, p: &crate::formats::xenos::ucode::Program, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
    check_loop_depths(p)?;
    let n = p.cf.len() as u32;
    let set_pc = |v: u32| assign(PC, 0xF, lit(v as f32));
    let mut blocks = Vec::new();
    for (i, cf) in p.cf.iter().enumerate() {
        let i32_ = i as u32;
        ctx.at = format!("CF {i} ({})", cf.op());
        let mut b = Vec::new();
        let next = i32_ + 1;
        match cf.op() {
            CfOp::Exec
            | CfOp::ExecEnd
            | CfOp::CondExec
            | CfOp::CondExecEnd
            | CfOp::CondExecPred
            | CfOp::CondExecPredEnd
            | CfOp::CondExecPredClean
            | CfOp::CondExecPredCleanEnd => {
                let cond = ctx.exec_cond(cf)?;
                let mut body = Vec::new();
                ctx.clause(i, &p.clauses[i], &mut body)?;
                // A conditional exec-end ends the shader only when its condition holds (see
                // `lower_linear`).
                match cond {
                    Some(c) if cf.ends_shader() => {
                        body.push(Stmt::Break);
                        b.push(Stmt::If { cond: c, then_body: body, else_body: vec![] });
                        b.push(set_pc(next));
                    }
                    Some(c) => {
                        b.push(Stmt::If { cond: c, then_body: body, else_body: vec![] });
                        b.push(set_pc(next));
                    }
                    None => {
                        b.extend(body);
                        b.push(if cf.ends_shader() { Stmt::Break } else { set_pc(next) });
                    }
                }
            }
            CfOp::Alloc => {
                b.extend(ctx.alloc(cf));
                b.push(set_pc(next));
            }
            CfOp::Nop | CfOp::MarkVsFetchDone => b.push(set_pc(next)),
            CfOp::CondJmp => {
                let target = cf.target();
                if target >= n {
                    return Err(ctx.err(format!("jump target {target} outside the {n} CF instructions")));
                }
                if cf.is_unconditional() {
                    b.push(set_pc(target));
                } else {
                    let c = if cf.is_predicated() { pred_cond(cf.condition()) } else { ctx.bool_cond(cf.bool_address(), cf.condition())? };
                    b.push(Stmt::If { cond: c, then_body: vec![set_pc(target)], else_body: vec![set_pc(next)] });
                }
            }
            CfOp::LoopStart => {
                // Loop constant: byte 0 = count, byte 1 = aL start, byte 2 = aL step (signed);
                // a literal `defi` is folded, otherwise the stage's run-time constant is read.
                let (count, start, _) = ctx.loop_constant(cf.loop_id());
                // Push (counter, saved aL): the stack is dynamic because a subroutine's loop may
                // run inside a caller's loop.
                for k in (1..MAX_LOOP_DEPTH).rev() {
                    b.push(assign(LOOP_CTR + k, 0xF, tx(LOOP_CTR + k - 1)));
                    b.push(assign(LOOP_SAVE + k, 0xF, tx(LOOP_SAVE + k - 1)));
                }
                b.push(assign(LOOP_SAVE, 0xF, tx(AL)));
                if !cf.is_repeat() {
                    b.push(assign(AL, 0xF, start));
                }
                b.push(assign(LOOP_CTR, 0xF, count));
                let skip = cf.target();
                let mut exit = vec![assign(AL, 0xF, tx(LOOP_SAVE))];
                exit.extend(pop_loop());
                exit.push(set_pc(skip));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Le, tx(LOOP_CTR), lit(0.0)), then_body: exit, else_body: vec![set_pc(next)] });
            }
            CfOp::LoopEnd => {
                let (_, _, step) = ctx.loop_constant(cf.loop_id());
                b.push(assign(LOOP_CTR, 0xF, bin(BinOp::Sub, tx(LOOP_CTR), lit(1.0))));
                b.push(assign(AL, 0xF, bin(BinOp::Add, tx(AL), step)));
                if cf.is_predicated_break() {
                    // Break when the predicate equals the condition.
                    b.push(Stmt::If { cond: pred_cond(cf.condition()), then_body: vec![assign(LOOP_CTR, 0xF, lit(0.0))], else_body: vec![] });
                }
                let mut exit = vec![assign(AL, 0xF, tx(LOOP_SAVE))];
                exit.extend(pop_loop());
                exit.push(set_pc(next));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Gt, tx(LOOP_CTR), lit(0.0)), then_body: vec![set_pc(cf.target())], else_body: exit });
            }
            CfOp::CondCall => {
                let target = cf.target();
                if target >= n {
                    return Err(ctx.err(format!("call target {target} outside the {n} CF instructions")));
                }
                // Push the return address (the oldest falls off past MAX_CALL_DEPTH).
                let mut call = Vec::new();
                for k in (1..MAX_CALL_DEPTH).rev() {
                    call.push(assign(CALL_STACK + k, 0xF, tx(CALL_STACK + k - 1)));
                }
                call.push(assign(CALL_STACK, 0xF, lit(next as f32)));
                call.push(assign(CALL_DEPTH, 0xF, bin(BinOp::Min, bin(BinOp::Add, tx(CALL_DEPTH), lit(1.0)), lit(MAX_CALL_DEPTH as f32))));
                call.push(set_pc(target));
                if cf.is_unconditional() {
                    b.extend(call);
                } else {
                    let c = if cf.is_predicated() { pred_cond(cf.condition()) } else { ctx.bool_cond(cf.bool_address(), cf.condition())? };
                    b.push(Stmt::If { cond: c, then_body: call, else_body: vec![set_pc(next)] });
                }
            }
            CfOp::Return => {
                // Outside a subroutine a return does nothing (Xenia's ucode.h).
                let mut ret = vec![assign(PC, 0xF, tx(CALL_STACK))];
                for k in 0..MAX_CALL_DEPTH - 1 {
                    ret.push(assign(CALL_STACK + k, 0xF, tx(CALL_STACK + k + 1)));
                }
                ret.push(assign(CALL_DEPTH, 0xF, bin(BinOp::Sub, tx(CALL_DEPTH), lit(1.0))));
                b.push(Stmt::If { cond: Cond::Compare(CmpOp::Gt, tx(CALL_DEPTH), lit(0.0)), then_body: ret, else_body: vec![set_pc(next)] });
            }
        }
        b.push(Stmt::Continue);
        blocks.push(Stmt::If { cond: Cond::Compare(CmpOp::Eq, tx(PC), lit(i32_ as f32)), then_body: b, else_body: vec![] });
    }
    blocks.push(Stmt::Break);
    out.push(assign(PC, 0xF, lit(0.0)));
    out.push(assign(CALL_DEPTH, 0xF, lit(0.0)));
    out.push(Stmt::Loop { body: blocks });
    Ok(())
}
