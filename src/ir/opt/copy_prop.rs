//! Copy and constant propagation.
//!
//! After `R1.x = R130.y` (a lane moved with at most a sign change or an absolute value) and until
//! either lane is written again, a read of `R1.x` is a read of `R130.y`; after `R1.x = 2.0`, a
//! read of `R1.x` is the literal. Reads are rewritten when every lane they need is such a copy
//! of one same register (or all are literals); the moves themselves then die in
//! [`super::dce`]. Only register reads change: no expression moves, so nothing crosses control
//! flow (implicit derivatives stay where they were).
//!
//! Negation and absolute value are sign-bit operations on every value (NaN included), so
//! `-(-x)` is `x` and `|-x|` is `|x|` bit for bit; nothing else is combined.

use super::regs::{lanes, Named, Slots};
use super::Budget;
use crate::ir::visit::{cond_exprs_mut, expr_children_mut, stmt_exprs_mut};
use crate::ir::{Expr, Index, Module, RegRef, Src, Stmt, Texture, UnOp};
use std::collections::HashMap;

/// What one register lane is known to hold.
#[derive(Clone, Debug, PartialEq)]
pub enum Known {
    /// Lane `lane` of `reg` (a fixed register), then `abs`, then `negate` (as [`Src`]).
    Lane { reg: RegRef, lane: u8, abs: bool, negate: bool },
    /// These 32 bits.
    Bits(u32),
}

/// What lane `lane` of `e` is, when it is a moved register lane or a constant.
pub fn lane_of(e: &Expr, lane: u8) -> Option<Known> {
    let l = (lane & 3) as usize;
    match e {
        Expr::Read(src) if matches!(src.reg.index, Index::Fixed(_)) => {
            Some(Known::Lane { reg: src.reg.clone(), lane: src.swizzle[l] & 3, abs: src.abs, negate: src.negate })
        }
        Expr::Literal(v) => Some(Known::Bits(v[l].to_bits())),
        Expr::Bits(v) => Some(Known::Bits(v[l])),
        Expr::Swizzle(a, s) => lane_of(a, s[l]),
        Expr::Compose(p) => lane_of(&p[l], 0),
        Expr::Unary(UnOp::Neg, a) => lane_of(a, lane).map(|k| match k {
            Known::Lane { reg, lane, abs, negate } => Known::Lane { reg, lane, abs, negate: !negate },
            Known::Bits(b) => Known::Bits(b ^ 0x8000_0000),
        }),
        Expr::Unary(UnOp::Abs, a) => lane_of(a, lane).map(|k| match k {
            Known::Lane { reg, lane, .. } => Known::Lane { reg, lane, abs: true, negate: false },
            Known::Bits(b) => Known::Bits(b & 0x7FFF_FFFF),
        }),
        _ => None,
    }
}

/// The expression for four constant lanes: a literal when every lane prints exactly as a
/// decimal float (normal numbers and zeros), else the bit patterns.
pub fn constant(bits: [u32; 4]) -> Expr {
    let plain = bits.iter().all(|&b| {
        let f = f32::from_bits(b);
        f.is_normal() || f == 0.0
    });
    if plain {
        Expr::Literal(bits.map(f32::from_bits))
    } else {
        Expr::Bits(bits)
    }
}

#[derive(Clone, Default)]
struct Map {
    known: HashMap<(usize, u8), Known>,
    /// Source lane → the lanes whose entry copies it (may hold stale pairs; checked on use).
    users: HashMap<(usize, u8), Vec<(usize, u8)>>,
}

pub fn run(m: &mut Module, budget: &mut Budget) -> Result<(), super::OutOfBudget> {
    let mut cx = CopyPropagation { slots: Slots::of(m), textures: &m.textures, budget };
    cx.block(&mut m.body, &mut Map::default())
}

/// The copy-propagation pass over one module: its registers, textures and step budget.
struct CopyPropagation<'a> {
    slots: Slots,
    textures: &'a [Texture],
    budget: &'a mut Budget,
}

impl CopyPropagation<'_> {
    fn source_slot(&self, k: &Known) -> Option<usize> {
        match k {
            Known::Lane { reg, .. } => match self.slots.name(reg) {
                Named::Slot(s) => Some(s),
                _ => None,
            },
            Known::Bits(_) => None,
        }
    }

    fn kill(&self, map: &mut Map, slot: usize, lane: u8) {
        map.known.remove(&(slot, lane));
        if let Some(users) = map.users.remove(&(slot, lane)) {
            for u in users {
                let stale =
                    map.known.get(&u).is_none_or(|k| self.source_slot(k) != Some(slot) || !matches!(k, Known::Lane { lane: l, .. } if *l == lane));
                if !stale {
                    map.known.remove(&u);
                }
            }
        }
    }

    /// Forgets everything about registers a write to `reg` (lanes `mask`) may change.
    fn written(&self, map: &mut Map, reg: &RegRef, mask: u8) {
        match self.slots.name(reg) {
            Named::Slot(s) => lanes(mask).for_each(|l| self.kill(map, s, l)),
            Named::AnyOf(r) => {
                map.known.retain(|(s, _), k| !r.contains(s) && !self.source_slot(k).is_some_and(|s| r.contains(&s)));
            }
            Named::Untracked => {
                let file = reg.file;
                map.known.retain(|_, k| !matches!(k, Known::Lane { reg, .. } if reg.file == file));
            }
        }
    }

    fn block(&mut self, body: &mut [Stmt], map: &mut Map) -> Result<(), super::OutOfBudget> {
        for s in body.iter_mut() {
            self.budget.spend(1)?;
            match s {
                Stmt::If { cond, then_body, else_body } => {
                    cond_exprs_mut(cond, &mut |e, d| self.rewrite(e, d, map));
                    let mut then_map = map.clone();
                    self.block(then_body, &mut then_map)?;
                    let mut else_map = std::mem::take(map);
                    self.block(else_body, &mut else_map)?;
                    // after the `If`, what both arms leave true
                    then_map.known.retain(|k, v| else_map.known.get(k) == Some(v));
                    *map = then_map;
                }
                Stmt::Loop { body: inner } => {
                    // what the loop writes anywhere may change between iterations
                    let mut writes = Vec::new();
                    collect_writes(inner, &mut writes);
                    for (reg, mask) in &writes {
                        self.written(map, reg, *mask);
                    }
                    let mut inner_map = map.clone();
                    self.block(inner, &mut inner_map)?;
                }
                Stmt::Assign { .. } => {
                    stmt_exprs_mut(s, &mut |e, d| self.rewrite(e, d, map));
                    let Stmt::Assign { dst, value, saturate } = &*s else { unreachable!() };
                    self.written(map, &dst.reg, dst.mask);
                    if let (Named::Slot(slot), false) = (self.slots.name(&dst.reg), *saturate) {
                        for l in lanes(dst.mask) {
                            let Some(k) = lane_of(value, l) else { continue };
                            // `R1.xy = R1.yx`: a source this statement overwrites is no copy
                            if let Known::Lane { reg, lane, .. } = &k {
                                if reg.file == dst.reg.file && reg.index == dst.reg.index && dst.mask >> lane & 1 == 1 {
                                    continue;
                                }
                                if let Some(src) = self.source_slot(&k) {
                                    map.users.entry((src, *lane)).or_default().push((slot, l));
                                }
                            }
                            map.known.insert((slot, l), k);
                        }
                    }
                }
                Stmt::LocalLoad { .. } => {
                    stmt_exprs_mut(s, &mut |e, d| self.rewrite(e, d, map));
                    if let Stmt::LocalLoad { dst, .. } = &*s {
                        self.written(map, &dst.reg, dst.mask);
                    }
                }
                // the rest of the block is not reached from here
                Stmt::Break | Stmt::Continue | Stmt::Return => {}
                _ => stmt_exprs_mut(s, &mut |e, d| self.rewrite(e, d, map)),
            }
        }
        Ok(())
    }

    /// Rewrites the register reads of `e` (lanes `demanded` of it needed) through `map`.
    fn rewrite(&self, e: &mut Expr, demanded: u8, map: &Map) {
        if let Expr::Read(src) = e {
            if let Some(new) = self.rewrite_read(src, demanded, map) {
                *e = new;
                return;
            }
        }
        expr_children_mut(e, demanded, self.textures, &mut |c, d| self.rewrite(c, d, map));
    }

    fn rewrite_read(&self, src: &Src, demanded: u8, map: &Map) -> Option<Expr> {
        let Named::Slot(slot) = self.slots.name(&src.reg) else { return None };
        let need: Vec<usize> = (0..4).filter(|i| demanded >> i & 1 == 1).collect();
        let first = *need.first()?;
        let known: Vec<&Known> = need.iter().map(|&i| map.known.get(&(slot, src.swizzle[i] & 3))).collect::<Option<_>>()?;
        match known[0] {
            Known::Bits(_) => {
                let mut bits = [0u32; 4];
                for (&i, k) in need.iter().zip(&known) {
                    let Known::Bits(b) = k else { return None };
                    let b = if src.abs { b & 0x7FFF_FFFF } else { *b };
                    bits[i] = if src.negate { b ^ 0x8000_0000 } else { b };
                }
                // lanes nobody needs repeat a needed one
                let fill = bits[first];
                (0..4).filter(|i| demanded >> i & 1 == 0).for_each(|i| bits[i] = fill);
                Some(constant(bits))
            }
            Known::Lane { reg, abs, negate, .. } => {
                let mut swizzle = [0u8; 4];
                for (&i, k) in need.iter().zip(&known) {
                    match k {
                        Known::Lane { reg: r, lane, abs: a, negate: n } if r == reg && a == abs && n == negate => swizzle[i] = *lane,
                        _ => return None,
                    }
                }
                let fill = swizzle[first];
                (0..4).filter(|i| demanded >> i & 1 == 0).for_each(|i| swizzle[i] = fill);
                let (abs, negate) = if src.abs { (true, src.negate) } else { (*abs, *negate ^ src.negate) };
                Some(Expr::Read(Src { reg: reg.clone(), swizzle, abs, negate }))
            }
        }
    }
}

/// Every register (and lane mask) `body` may write, nested blocks included.
pub fn collect_writes(body: &[Stmt], out: &mut Vec<(RegRef, u8)>) {
    for s in body {
        match s {
            Stmt::Assign { dst, .. } | Stmt::LocalLoad { dst, .. } => out.push((dst.reg.clone(), dst.mask)),
            Stmt::If { then_body, else_body, .. } => {
                collect_writes(then_body, out);
                collect_writes(else_body, out);
            }
            Stmt::Loop { body } => collect_writes(body, out),
            _ => {}
        }
    }
}
