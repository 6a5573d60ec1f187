//! Result forwarding: an instruction's result written straight to its destination register.
//!
//! Front ends whose ISA names the previous instruction group's results (GX2's PV/PS) lower each
//! result to a write of a result temporary followed, after the rest of the group, by a move to
//! the destination register: `R128.x = E; …; R1.x = R128.x;`. When nothing between the two
//! statements reads or writes `R1.x`, reads `R128.x` or writes what `E` reads, the pair becomes
//! `R1.x = E; …; R128.x = R1.x;` — the same values in every register at the end — and the move
//! into the result temporary usually dies ([`super::dce`]) or is propagated
//! ([`super::copy_prop`]). Only plain assignments may lie between the two (no control flow is
//! crossed, nothing moves past a `Discard` or `Return`), within a short window.

use super::copy_prop::{lane_of, Known};
use super::regs::{lanes, Named, Slots};
use super::Budget;
use crate::ir::visit::{expr_lane_reads, stmt_lane_reads};
use crate::ir::{Dst, Expr, Module, Src, Stmt, Texture};

/// How far back a move looks for the statement that computed its source.
const WINDOW: usize = 16;

pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let cx = Forwarding { slots: Slots::of(m), textures: &m.textures };
    cx.body(&mut m.body, budget)
}

/// The result-forwarding pass over one module: its registers and textures.
struct Forwarding<'a> {
    slots: Slots,
    textures: &'a [Texture],
}

impl Forwarding<'_> {
    fn body(&self, body: &mut [Stmt], budget: &mut Budget) -> Result<(), super::OutOfBudget> {
        for j in 0..body.len() {
            budget.spend(1)?;
            match &mut body[j] {
                Stmt::If { then_body, else_body, .. } => {
                    self.body(then_body, budget)?;
                    self.body(else_body, budget)?;
                }
                Stmt::Loop { body: inner } => self.body(inner, budget)?,
                _ => {
                    if let Some((i, from)) = self.producer(body, j) {
                        budget.spend(WINDOW as u64)?;
                        self.forward(body, i, j, from);
                    }
                }
            }
        }
        Ok(())
    }

    /// For a move `D.M = P.swizzle` at `j`, the statement `i` that computed exactly the read
    /// lanes of `P`, when the pair can be forwarded; with the source lane of each lane of `D`.
    fn producer(&self, body: &[Stmt], j: usize) -> Option<(usize, [u8; 4])> {
        let Stmt::Assign { dst, value, saturate: false } = &body[j] else { return None };
        let Named::Slot(d) = self.slots.name(&dst.reg) else { return None };
        let mut from = [0u8; 4];
        let mut p_reg = None;
        let mut p_mask = 0u8;
        for k in lanes(dst.mask) {
            let Some(Known::Lane { reg, lane, abs: false, negate: false }) = lane_of(value, k) else { return None };
            if p_reg.get_or_insert_with(|| reg.clone()) != &reg {
                return None;
            }
            from[k as usize] = lane;
            p_mask |= 1 << lane;
        }
        let Named::Slot(p) = self.slots.name(p_reg.as_ref()?) else { return None };
        let d_mask = dst.mask;
        if p == d {
            return None;
        }
        for i in (j.saturating_sub(WINDOW)..j).rev() {
            let s = &body[i];
            match s {
                Stmt::Assign { dst: pd, value: e, .. } if self.slots.name(&pd.reg) == Named::Slot(p) && pd.mask & p_mask != 0 => {
                    if pd.mask != p_mask {
                        return None;
                    }
                    // what lies between must leave D.M, P's lanes and E's operands alone
                    let mut e_reads = Vec::new();
                    expr_lane_reads(e, p_mask, self.textures, &mut |r, lanes| e_reads.push((r.clone(), lanes)));
                    for k in &body[i + 1..j] {
                        let Stmt::Assign { dst: kd, .. } = k else {
                            if matches!(k, Stmt::Comment(_)) {
                                continue;
                            }
                            return None;
                        };
                        let mut conflict = self.slots.overlaps(&kd.reg, kd.mask, d, d_mask) || self.slots.overlaps(&kd.reg, kd.mask, p, p_mask);
                        for (r, lanes) in &e_reads {
                            if let Named::Slot(rs) = self.slots.name(r) {
                                conflict |= self.slots.overlaps(&kd.reg, kd.mask, rs, *lanes);
                            } else if !matches!(self.slots.name(r), Named::Untracked) || !matches!(self.slots.name(&kd.reg), Named::Slot(_)) {
                                conflict = true;
                            }
                        }
                        stmt_lane_reads(k, self.textures, &mut |r, lanes| {
                            conflict |= self.slots.overlaps(r, lanes, d, d_mask) || self.slots.overlaps(r, lanes, p, p_mask);
                        });
                        if conflict {
                            return None;
                        }
                    }
                    return Some((i, from));
                }
                Stmt::Assign { .. } | Stmt::Comment(_) => {}
                _ => return None,
            }
        }
        None
    }

    fn forward(&self, body: &mut [Stmt], i: usize, j: usize, from: [u8; 4]) {
        let (Stmt::Assign { dst: p_dst, value: e, saturate }, Stmt::Assign { dst: d_dst, .. }) = (&body[i], &body[j]) else { return };
        // lane k of the new value is lane from[k] of E
        let first = from[d_dst.mask.trailing_zeros() as usize & 3];
        let sw: [u8; 4] = std::array::from_fn(|k| if d_dst.mask >> k & 1 == 1 { from[k] } else { first });
        let value = if sw == crate::ir::XYZW { e.clone() } else { Expr::Swizzle(Box::new(e.clone()), sw) };
        // and P's lane l is D's lane k for some k with from[k] = l
        let mut back = [0u8; 4];
        for k in lanes(d_dst.mask) {
            back[from[k as usize] as usize] = k;
        }
        let first_back = back[p_dst.mask.trailing_zeros() as usize & 3];
        let back: [u8; 4] = std::array::from_fn(|l| if p_dst.mask >> l & 1 == 1 { back[l] } else { first_back });
        let produce = Stmt::Assign { dst: d_dst.clone(), value, saturate: *saturate };
        let keep = Stmt::Assign {
            dst: Dst { reg: p_dst.reg.clone(), mask: p_dst.mask },
            value: Expr::Read(Src { reg: d_dst.reg.clone(), swizzle: back, abs: false, negate: false }),
            saturate: false,
        };
        body[i] = produce;
        body[j] = keep;
    }
}
