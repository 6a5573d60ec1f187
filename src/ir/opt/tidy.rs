//! Structural tidying after the other passes.
//!
//! - Two adjacent `If`s with the same condition and no `else` become one when the first arm
//!   writes nothing the condition reads: the pixels that run the second arm are exactly those
//!   that ran the first (GX2 lowers every clause under its own `if (active)`). Nothing leaves or
//!   enters control flow other than through a condition it was already under.
//! - A comment that now annotates nothing (the statements after it, up to the next comment or
//!   the end of its block, are gone) is dropped: front ends write one comment per source
//!   instruction, and a comment left on an empty line would name code that no longer exists.

use super::copy_prop::collect_writes;
use super::regs::{Named, Slots};
use super::Budget;
use crate::ir::visit::cond_exprs;
use crate::ir::visit::expr_lane_reads;
use crate::ir::{Module, Stmt, Texture};

pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let slots = Slots::of(m);
    let textures = m.textures.clone();
    block(&mut m.body, &slots, &textures, budget)
}

fn block(body: &mut Vec<Stmt>, slots: &Slots, textures: &[Texture], budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
    for mut s in std::mem::take(body) {
        budget.spend(1)?;
        match &mut s {
            Stmt::If { then_body, else_body, .. } => {
                block(then_body, slots, textures, budget)?;
                block(else_body, slots, textures, budget)?;
            }
            Stmt::Loop { body } => block(body, slots, textures, budget)?,
            _ => {}
        }
        if let (Some(Stmt::If { cond: c1, then_body: t1, else_body: e1 }), Stmt::If { cond: c2, then_body: t2, else_body: e2 }) =
            (out.last_mut(), &mut s)
        {
            if c1 == c2 && e1.is_empty() && e2.is_empty() && !writes_what_cond_reads(t1, c1, slots, textures) {
                budget.spend(t1.len() as u64)?;
                t1.append(t2);
                continue;
            }
        }
        out.push(s);
    }
    // comments after the last statement of the block annotate nothing; a run of comments before
    // code is kept whole (a run may hold a notice the front end wrote for the output, such as
    // "fetch filter overrides …: not applied", before the instruction's own line)
    let mut keep = vec![true; out.len()];
    let mut code_follows = false;
    for (i, s) in out.iter().enumerate().rev() {
        if matches!(s, Stmt::Comment(_)) {
            keep[i] = code_follows;
        } else {
            code_follows = true;
        }
    }
    let mut i = 0;
    out.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    *body = out;
    Ok(())
}

fn writes_what_cond_reads(body: &[Stmt], cond: &crate::ir::Cond, slots: &Slots, textures: &[Texture]) -> bool {
    let mut writes = Vec::new();
    collect_writes(body, &mut writes);
    let mut reads = Vec::new();
    cond_exprs(cond, &mut |e, d| expr_lane_reads(e, d, textures, &mut |r, l| reads.push((slots.name(r), l))));
    // a body that sets integer variables may change what an integer condition reads
    if !int_free(body) {
        return true;
    }
    writes.iter().any(|(w, wl)| {
        let w = slots.name(w);
        reads.iter().any(|(r, rl)| {
            wl & rl != 0
                && match (&w, r) {
                    (Named::Slot(a), Named::Slot(b)) => a == b,
                    (Named::AnyOf(range), Named::Slot(b)) | (Named::Slot(b), Named::AnyOf(range)) => range.contains(b),
                    (Named::AnyOf(_), Named::AnyOf(_)) | (Named::Untracked, Named::Untracked) => true,
                    (Named::Untracked, _) | (_, Named::Untracked) => false,
                }
        })
    })
}

/// Whether `body` sets no integer variable (conditions on them are left alone).
fn int_free(body: &[Stmt]) -> bool {
    body.iter().all(|s| match s {
        Stmt::SetInt { .. } => false,
        Stmt::If { then_body, else_body, .. } => int_free(then_body) && int_free(else_body),
        Stmt::Loop { body } => int_free(body),
        _ => true,
    })
}
