//! Component-wise liveness and dead-code elimination.
//!
//! A backward walk over the structured body keeps, for every tracked register slot, the mask of
//! lanes some later statement (or the stage's outputs) may still read. An assignment keeps only
//! the lanes of its mask that are live after it: an assignment none of whose lanes is live is
//! removed, one with fewer live lanes writes only those (so a lane nobody reads is not
//! computed). Expressions are pure (`ir::Expr` has no side effects), so removing one changes
//! nothing but time.
//!
//! Control flow: the two arms of an `If` join by union; a `Loop`'s head is the least fixed point
//! of "live at the end of the body = live at the head" (`Break` sees what is live after the
//! loop, `Continue` the head); `Return` and the end of the body see the outputs (the entry point
//! copies them out), except in geometry shaders, whose outputs are read only when a vertex is
//! stored or emitted (`GsStore`, `GsEmitVertex`).

use super::regs::{Named, Slots};
use super::Budget;
use crate::ir::visit::{expr_lane_reads, stmt_lane_reads};
use crate::ir::{Module, RegFile, Stmt, Texture};

type Live = Vec<u8>;

/// Removes dead assignments and narrows write masks to their live lanes.
pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let slots = Slots::of(m);
    let mut exit = vec![0u8; slots.len()];
    let outputs = slots.file(RegFile::Output);
    let geometry = m.ext.geometry.is_some();
    if !geometry {
        exit[outputs.clone()].iter_mut().for_each(|l| *l = 0xF);
    }
    let mut cx = DeadCodeElimination { slots, textures: &m.textures, exit, outputs, budget };
    let end = cx.exit.clone();
    cx.block(&mut m.body, end, None, None, true)?;
    Ok(())
}

/// The dead-code pass over one module: what is live where the program ends, and which lanes are outputs.
struct DeadCodeElimination<'a> {
    slots: Slots,
    textures: &'a [Texture],
    /// Live at `Return` and at the end of the body.
    exit: Live,
    outputs: std::ops::Range<usize>,
    budget: &'a mut Budget,
}

fn union(a: &mut Live, b: &Live) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
}

impl DeadCodeElimination<'_> {
    fn read(&self, live: &mut Live, reg: &crate::ir::RegRef, lanes: u8) {
        match self.slots.name(reg) {
            Named::Slot(s) => live[s] |= lanes,
            Named::AnyOf(r) => live[r].iter_mut().for_each(|l| *l |= lanes),
            Named::Untracked => {}
        }
    }

    fn stmt_reads(&self, live: &mut Live, s: &Stmt) {
        stmt_lane_reads(s, self.textures, &mut |r, lanes| self.read(live, r, lanes));
    }

    /// Live lanes before `body`, given those live after it; with `apply`, rewrites the body.
    fn block(
        &mut self,
        body: &mut Vec<Stmt>,
        mut live: Live,
        brk: Option<&Live>,
        cont: Option<&Live>,
        apply: bool,
    ) -> Result<Live, super::OutOfBudget> {
        let mut dead = Vec::new();
        for idx in (0..body.len()).rev() {
            self.budget.spend(1)?;
            match &mut body[idx] {
                Stmt::Assign { dst, value, .. } => match self.slots.name(&dst.reg) {
                    Named::Slot(s) => {
                        let keep = dst.mask & live[s];
                        if keep == 0 {
                            dead.push(idx);
                            continue;
                        }
                        if apply {
                            dst.mask = keep;
                        }
                        live[s] &= !keep;
                        expr_lane_reads(value, keep, self.textures, &mut |r, lanes| self.read(&mut live, r, lanes));
                    }
                    _ => {
                        let s = &body[idx];
                        self.stmt_reads(&mut live, s);
                    }
                },
                Stmt::LocalLoad { dst, .. } => {
                    if let Named::Slot(s) = self.slots.name(&dst.reg) {
                        let keep = dst.mask & live[s];
                        if keep == 0 {
                            dead.push(idx);
                            continue;
                        }
                        if apply {
                            dst.mask = keep;
                        }
                        live[s] &= !keep;
                    }
                    let s = &body[idx];
                    self.stmt_reads(&mut live, s);
                }
                Stmt::If { then_body, else_body, .. } => {
                    let mut then_live = self.block(then_body, live.clone(), brk, cont, apply)?;
                    let else_live = self.block(else_body, live, brk, cont, apply)?;
                    union(&mut then_live, &else_live);
                    live = then_live;
                    if apply && then_body_and_else_empty(&body[idx]) {
                        // the condition is pure: an `If` with nothing left in it does nothing
                        dead.push(idx);
                        continue;
                    }
                    let s = &body[idx];
                    self.stmt_reads(&mut live, s);
                }
                Stmt::Loop { body: inner } => {
                    let after = live;
                    let mut head = vec![0u8; after.len()];
                    loop {
                        let before = self.block(inner, head.clone(), Some(&after), Some(&head), false)?;
                        let mut next = head.clone();
                        union(&mut next, &before);
                        if next == head {
                            break;
                        }
                        head = next;
                    }
                    if apply {
                        self.block(inner, head.clone(), Some(&after), Some(&head), true)?;
                    }
                    live = head;
                }
                Stmt::Break => live = brk.cloned().unwrap_or_else(|| self.exit.clone()),
                Stmt::Continue => live = cont.cloned().unwrap_or_else(|| self.exit.clone()),
                Stmt::Return => live = self.exit.clone(),
                Stmt::GsStore(_) | Stmt::GsEmitVertex => {
                    live[self.outputs.clone()].iter_mut().for_each(|l| *l = 0xF);
                    let s = &body[idx];
                    self.stmt_reads(&mut live, s);
                }
                s => {
                    let s = &*s;
                    self.stmt_reads(&mut live, s);
                }
            }
        }
        if apply && !dead.is_empty() {
            let mut is_dead = vec![false; body.len()];
            dead.iter().for_each(|&i| is_dead[i] = true);
            let mut i = 0;
            body.retain(|_| {
                i += 1;
                !is_dead[i - 1]
            });
        }
        Ok(live)
    }
}

fn then_body_and_else_empty(s: &Stmt) -> bool {
    matches!(s, Stmt::If { then_body, else_body, .. } if then_body.is_empty() && else_body.is_empty())
}
