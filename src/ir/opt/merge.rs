//! Lane merging: assignments to different lanes of one register become one assignment.
//!
//! Scalar ISAs (GX2's five ALU slots, Xenos' scalar unit) and the moves of [`super::forward`]
//! leave runs like `R1.x = a; R1.y = b; R1.z = c;`; merged, the writer prints one statement
//! (`R1.xyz = float3(a, b, c);`). A later assignment `D.M2 = E2` joins an earlier `D.M1 = E1`
//! (disjoint lanes, nothing but plain assignments between, within a short window) when moving
//! it up changes nothing: the statements between neither read nor write `D.M2` nor write what
//! `E2` reads, and `E2` does not read `D.M1` (which it would now see before the write). Each
//! side must be one lane or already a per-lane composition, so that no expression is printed
//! twice.

use super::regs::{lanes, Named, Slots};
use super::Budget;
use crate::ir::visit::{expr_lane_reads, stmt_lane_reads};
use crate::ir::{Expr, Module, Stmt, Texture, UnOp};

const WINDOW: usize = 12;

pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let cx = LaneMerge { slots: Slots::of(m), textures: &m.textures };
    cx.body(&mut m.body, budget)
}

/// The lane-merging pass over one module: its registers and textures.
struct LaneMerge<'a> {
    slots: Slots,
    textures: &'a [Texture],
}

/// Lane `k` of an assignment's value as the `.x` lane of an expression (with the statement's
/// saturation, which is per lane).
fn lane_part(e: &Expr, k: u8, saturate: bool) -> Expr {
    let part = match e {
        Expr::Compose(p) => p[k as usize].clone(),
        _ if k == 0 => e.clone(),
        _ => Expr::Swizzle(Box::new(e.clone()), [k; 4]),
    };
    if saturate {
        Expr::Unary(UnOp::Saturate, Box::new(part))
    } else {
        part
    }
}

fn mergeable(mask: u8, e: &Expr) -> bool {
    mask.count_ones() == 1 || matches!(e, Expr::Compose(_))
}

impl LaneMerge<'_> {
    fn body(&self, body: &mut Vec<Stmt>, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
        let mut gone = vec![false; body.len()];
        for j in 0..body.len() {
            budget.spend(1)?;
            match &mut body[j] {
                Stmt::If { then_body, else_body, .. } => {
                    self.body(then_body, budget)?;
                    self.body(else_body, budget)?;
                }
                Stmt::Loop { body: inner } => self.body(inner, budget)?,
                _ => {
                    if let Some(i) = self.partner(body, &gone, j) {
                        budget.spend(WINDOW as u64)?;
                        let merged = self.merged(&body[i], &body[j]);
                        body[i] = merged;
                        body[j] = Stmt::Comment(String::new());
                        gone[j] = true;
                    }
                }
            }
        }
        let mut k = 0;
        body.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
        Ok(())
    }

    fn partner(&self, body: &[Stmt], gone: &[bool], j: usize) -> Option<usize> {
        let Stmt::Assign { dst: d2, value: e2, .. } = &body[j] else { return None };
        let Named::Slot(d) = self.slots.name(&d2.reg) else { return None };
        if !mergeable(d2.mask, e2) {
            return None;
        }
        let mut e2_reads = Vec::new();
        expr_lane_reads(e2, d2.mask, self.textures, &mut |r, l| e2_reads.push((r.clone(), l)));
        for i in (j.saturating_sub(WINDOW)..j).rev() {
            if gone[i] {
                continue;
            }
            let s = &body[i];
            let Stmt::Assign { dst: k_dst, value: k_val, .. } = s else {
                return if matches!(s, Stmt::Comment(_)) { continue } else { None };
            };
            if self.slots.name(&k_dst.reg) == Named::Slot(d) && k_dst.mask & d2.mask == 0 && mergeable(k_dst.mask, k_val) {
                // E2 would see D.M1 before its write
                if e2_reads.iter().any(|(r, l)| self.slots.overlaps(r, *l, d, k_dst.mask)) {
                    return None;
                }
                return Some(i);
            }
            // a statement E2 moves above
            if self.slots.overlaps(&k_dst.reg, k_dst.mask, d, d2.mask) {
                return None;
            }
            for (r, l) in &e2_reads {
                let hit = match self.slots.name(r) {
                    Named::Slot(rs) => self.slots.overlaps(&k_dst.reg, k_dst.mask, rs, *l),
                    Named::AnyOf(_) => !matches!(self.slots.name(&k_dst.reg), Named::Untracked),
                    Named::Untracked => !matches!(self.slots.name(&k_dst.reg), Named::Slot(_)),
                };
                if hit {
                    return None;
                }
            }
            let mut reads_d = false;
            stmt_lane_reads(s, self.textures, &mut |r, l| reads_d |= self.slots.overlaps(r, l, d, d2.mask));
            if reads_d {
                return None;
            }
        }
        None
    }

    fn merged(&self, first: &Stmt, second: &Stmt) -> Stmt {
        let (Stmt::Assign { dst: d1, value: e1, saturate: s1 }, Stmt::Assign { dst: d2, value: e2, saturate: s2 }) = (first, second) else {
            return first.clone();
        };
        let mut parts: [Expr; 4] = std::array::from_fn(|_| Expr::Literal([0.0; 4]));
        for k in lanes(d1.mask) {
            parts[k as usize] = lane_part(e1, k, *s1);
        }
        for k in lanes(d2.mask) {
            parts[k as usize] = lane_part(e2, k, *s2);
        }
        let mut dst = d1.clone();
        dst.mask |= d2.mask;
        Stmt::Assign { dst, value: Expr::Compose(Box::new(parts)), saturate: false }
    }
}
