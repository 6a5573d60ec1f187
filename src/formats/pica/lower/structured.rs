//! Structured lowering: `if`/`else` for ifc/ifu, `loop` for LOOP, inlined bodies for
//! call/callc/callu, `break` for break/breakc, `if (!cond) { … }` for forward jmpc/jmpu.
//!
//! It is only used when it is provably the same as the pc-dispatch model of the parent module
//! (which follows the hardware's scope stacks literally); otherwise [`Lowerer::structured`]
//! returns the reason and the caller falls back to pc-dispatch. The model checks, after every
//! instruction X, the top of each scope stack against X+1. The structured form assumes that this
//! check fires exactly at the last instruction of the innermost scope, so it requires:
//! - every scope body (IF then-part, CALL body, LOOP body) to be non-empty and to end with a
//!   plain instruction (arithmetic, cmp, mad, nop, end, setemit, emit) reached at the body's own
//!   level — a flow instruction last in a scope is the hardware's "padding NOP" erratum case;
//! - no instruction X run inside a scope (inlined call bodies included) to have X+1 equal to the
//!   end trigger of an enclosing scope other than the innermost one at its last instruction (the
//!   trigger addresses of the active scopes are pairwise distinct);
//! - every jump / continuation to stay inside the enclosing region and, in a scope body, before
//!   its last instruction (else the scope would never pop); only forward jumps;
//! - break/breakc only directly in a LOOP body (a break from inside an IF or CALL leaves a stale
//!   entry on that stack, which changes later pops);
//! - static depths within the stack capacities (IF 8, CALL 4, LOOP 4), so no ring overwrites.

use super::*;

const MAX_VISITS: usize = 8192;

#[derive(Clone, Copy, PartialEq)]
enum Scope {
    If,
    Call,
    Loop,
}

/// The structured walk's state: open scopes, instructions visited, region nesting.
#[derive(Default)]
struct WalkState {
    /// Active scopes, innermost last: kind and trigger address (last instruction + 1).
    scopes: Vec<(Scope, usize)>,
    visits: usize,
    /// Regions being lowered, innermost last (each may add one level of IR nesting).
    regions: usize,
}

/// The deepest region nesting the structured form takes. Forward jumps nest without a
/// hardware stack (a chain of jumps, each over the next, nests as deep as the program is
/// long); past this the program takes the flat pc-dispatch form, which keeps the IR within
/// [`crate::limits::MAX_NESTING`] and this lowering's recursion off the end of the stack.
const MAX_REGION_DEPTH: usize = crate::limits::MAX_NESTING / 2;

impl WalkState {
    fn depth(&self, k: Scope) -> usize {
        self.scopes.iter().filter(|s| s.0 == k).count()
    }
    fn enter(&mut self, k: Scope, trigger: usize, cap: usize) -> Result<(), String> {
        if self.depth(k) >= cap {
            return Err(format!("scope nesting deeper than the hardware stack ({cap})"));
        }
        if self.scopes.iter().any(|s| s.1 == trigger) {
            return Err(format!("two active scopes end at word {}", trigger - 1));
        }
        self.scopes.push((k, trigger));
        Ok(())
    }
}

impl Lowerer<'_> {
    /// The structured body, or why the program needs pc-dispatch.
    pub(super) fn structured(&self, end: &[Stmt]) -> Result<Vec<Stmt>, String> {
        let mut cx = WalkState::default();
        let mut out = vec![];
        self.region(&mut cx, self.d.main as usize, None, &mut out, end)?;
        Ok(out)
    }

    fn n(&self) -> usize {
        self.p.code.len().min(4095)
    }

    fn fetch(&self, cx: &mut WalkState, pc: usize) -> Result<Instr, String> {
        if pc >= self.n() {
            return Err(format!("word {pc} is past the program"));
        }
        cx.visits += 1;
        if cx.visits > MAX_VISITS {
            return Err(format!("more than {MAX_VISITS} instructions after inlining"));
        }
        decode::decode(&self.p.code, &self.p.opdescs, pc).map_err(|e| e.to_string())
    }

    /// Words `s..e` in sequence (`e = None`: the top level, which stops at an `end` or at the
    /// end of the code). Continuations must stay ≤ `e` (≤ the code length at the top level).
    fn region(&self, cx: &mut WalkState, s: usize, e: Option<usize>, out: &mut Vec<Stmt>, end: &[Stmt]) -> Result<(), String> {
        if cx.regions >= MAX_REGION_DEPTH {
            return Err(format!("word {s}: control flow nests deeper than {MAX_REGION_DEPTH} regions"));
        }
        cx.regions += 1;
        let r = self.region_words(cx, s, e, out, end);
        cx.regions -= 1;
        r
    }

    /// [`Self::region`]'s body.
    fn region_words(&self, cx: &mut WalkState, s: usize, e: Option<usize>, out: &mut Vec<Stmt>, end: &[Stmt]) -> Result<(), String> {
        let limit = e.unwrap_or(self.n());
        let mut pc = s;
        loop {
            if pc == limit {
                if e.is_none() {
                    out.extend(end.iter().cloned()); // ran off the code: as the dispatch form
                }
                return Ok(());
            }
            let ins = self.fetch(cx, pc)?;
            if cx.scopes.iter().any(|sc| sc.1 == pc + 1) {
                return Err(format!("word {pc} is the end of an enclosing scope but not its last word"));
            }
            out.push(Stmt::Comment(format!("{pc}: {}", super::super::disasm::instr_text(&ins))));
            let cont =
                |c: usize| if c <= limit { Ok(c) } else { Err(format!("word {pc}: control continues at {c}, past its region (ends at {limit})")) };
            match &ins {
                Instr::Simple(Op::End) => {
                    out.extend(end.iter().cloned());
                    if e.is_none() {
                        return Ok(());
                    }
                    pc += 1; // dead code up to the region's end
                }
                Instr::Simple(Op::Break) => {
                    out.extend(self.leave_loop(cx, pc)?);
                    pc += 1;
                }
                Instr::Flow { op, cond, bool_id, int_id, dest, num } => {
                    let (dest, num) = (*dest as usize, *num as usize);
                    let c = || self.flow_cond(cond.as_ref().unwrap());
                    match op {
                        Op::Breakc => {
                            let leave = self.leave_loop(cx, pc)?;
                            out.push(if_(c(), leave));
                            pc += 1;
                        }
                        Op::Jmpc | Op::Jmpu => {
                            if dest <= pc {
                                return Err(format!("word {pc}: backward jump to {dest}"));
                            }
                            let to = cont(dest)?;
                            let taken = match op {
                                Op::Jmpc => c(),
                                _ if num & 1 == 0 => self.bool_uniform(*bool_id),
                                _ => Cond::Not(bx(self.bool_uniform(*bool_id))),
                            };
                            let mut skipped = vec![];
                            self.region(cx, pc + 1, Some(to), &mut skipped, end)?;
                            out.push(Stmt::If { cond: Cond::Not(bx(taken)), then_body: skipped, else_body: vec![] });
                            pc = to;
                        }
                        Op::Ifc | Op::Ifu => {
                            if dest < pc + 2 {
                                return Err(format!("word {pc}: if with an empty or backward then-part"));
                            }
                            let after = cont(dest + num)?;
                            let cond = if *op == Op::Ifc { c() } else { self.bool_uniform(*bool_id) };
                            let then_body = self.scope(cx, Scope::If, pc + 1, dest, end)?;
                            let mut else_body = vec![];
                            self.region(cx, dest, Some(after), &mut else_body, end)?;
                            out.push(Stmt::If { cond, then_body, else_body });
                            pc = after;
                        }
                        Op::Call | Op::Callc | Op::Callu => {
                            if num == 0 {
                                return Err(format!("word {pc}: call of an empty range"));
                            }
                            let body = self.scope(cx, Scope::Call, dest, dest + num, end)?;
                            out.extend(match op {
                                Op::Call => body,
                                Op::Callc => vec![if_(c(), body)],
                                _ => vec![if_(self.bool_uniform(*bool_id), body)],
                            });
                            pc += 1;
                        }
                        Op::Loop => {
                            if dest <= pc {
                                return Err(format!("word {pc}: loop with an empty or backward body"));
                            }
                            let after = cont(dest + 1)?;
                            out.extend(self.structured_loop(cx, pc, dest, *int_id, end)?);
                            pc = after;
                        }
                        _ => return Err(format!("word {pc}: unexpected flow op")),
                    }
                }
                _ => {
                    out.extend(self.instr(pc, &ins, end).map_err(|e| e.reason())?);
                    pc += 1;
                }
            }
            if pc > limit {
                return Err(format!("region overrun at {pc}"));
            }
        }
    }

    /// A scope body `s..e` (`e` is its trigger): the words before the last in sequence, then the
    /// last word, which must be a plain instruction.
    fn scope(&self, cx: &mut WalkState, k: Scope, s: usize, e: usize, end: &[Stmt]) -> Result<Vec<Stmt>, String> {
        let cap = if k == Scope::If { 8 } else { 4 };
        cx.enter(k, e, cap)?;
        let mut out = vec![];
        self.region(cx, s, Some(e - 1), &mut out, end)?;
        let last = e - 1;
        let ins = self.fetch(cx, last)?;
        out.push(Stmt::Comment(format!("{last}: {} (last of the scope)", super::super::disasm::instr_text(&ins))));
        match &ins {
            Instr::Arith { .. } | Instr::Cmp { .. } | Instr::Mad { .. } | Instr::Setemit { .. } => {
                out.extend(self.instr(last, &ins, end).map_err(|e| e.reason())?)
            }
            Instr::Simple(Op::Nop | Op::End | Op::Emit) => out.extend(self.instr(last, &ins, end).map_err(|e| e.reason())?),
            _ => return Err(format!("word {last}: a scope ends with {}", ins.op().name())),
        }
        cx.scopes.pop();
        Ok(out)
    }

    /// `break`: only directly inside a LOOP body; aL steps as at the end of an iteration.
    fn leave_loop(&self, cx: &WalkState, pc: usize) -> Result<Vec<Stmt>, String> {
        if cx.scopes.last().map(|s| s.0) != Some(Scope::Loop) {
            return Err(format!("word {pc}: break outside a loop body's own level"));
        }
        let k = cx.depth(Scope::Loop) as i32 - 1;
        Ok(vec![set(AL, add(iv(AL), el(S_INC, ic(k)))), Stmt::Break])
    }

    /// LOOP at `pc`, body `pc+1..=dest`: runs i.x + 1 times, aL = i.y then += i.z after each
    /// iteration; aL is restored when the loop was nested (stack size > 1 at the pop).
    fn structured_loop(&self, cx: &mut WalkState, pc: usize, dest: usize, int_id: u8, end: &[Stmt]) -> Result<Vec<Stmt>, String> {
        let k = cx.depth(Scope::Loop) as i32; // this loop's slot
        let mut v = vec![
            set_el(S_PREV, ic(k), IExpr::And(bx(iv(AL)), bx(ic(0xFF)))),
            set_el(S_CNT, ic(k), self.int_uniform(int_id, 0)),
            set_el(S_INC, ic(k), self.int_uniform(int_id, 2)),
            set(AL, self.int_uniform(int_id, 1)),
        ];
        let mut body = self.scope(cx, Scope::Loop, pc + 1, dest + 1, end)?;
        body.push(set(AL, add(iv(AL), el(S_INC, ic(k)))));
        body.push(if_(icmp(CmpOp::Eq, el(S_CNT, ic(k)), ic(0)), vec![Stmt::Break]));
        body.push(set_el(S_CNT, ic(k), IExpr::Sub(bx(el(S_CNT, ic(k))), bx(ic(1)))));
        v.push(Stmt::Loop { body });
        if k >= 1 {
            v.push(set(AL, el(S_PREV, ic(k))));
        }
        Ok(v)
    }
}
