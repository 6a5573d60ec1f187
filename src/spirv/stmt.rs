//! Statements and conditions: masked register writes, structured control flow (selection and
//! loop constructs with their merge blocks), discard.

use super::{ids, unsupported, Result, Writer};
use crate::ir::*;
use rspirv::dr::Operand;
use rspirv::spirv::{LoopControl, Op, SelectionControl, Word};

impl Writer<'_> {
    pub(super) fn block(&mut self, body: &[Stmt]) -> Result<()> {
        for s in body {
            self.stmt(s)?;
            // What follows a break, continue or return in the same list never runs (the IR is
            // structured: nothing branches into the middle of a list), and a block of it,
            // which no construct contains, may not branch to the loop's continue target or
            // merge block (spirv-val: "not contained in the associated loop construct").
            if matches!(s, Stmt::Break | Stmt::Continue | Stmt::Return) {
                break;
            }
        }
        Ok(())
    }

    /// Ends the current block with a branch to `target`, unless a terminator already ended it.
    fn branch_if_open(&mut self, target: Word) -> Result<()> {
        if self.b.selected_block().is_some() {
            self.b.branch(target)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        self.ensure_block()?;
        match s {
            Stmt::Assign { dst, value, saturate } => {
                let mut v = self.expr(value)?;
                if *saturate {
                    v = self.saturate(v)?;
                }
                let mask = dst.mask & 0xF;
                if mask == 0 {
                    return Ok(());
                }
                let ptr = self.reg_ptr(&dst.reg)?;
                self.store_masked(ptr, v, mask)?;
            }
            Stmt::If { cond, then_body, else_body } => {
                let c = self.cond(cond)?;
                let (merge, then_label) = (self.b.id(), self.b.id());
                let else_label = if else_body.is_empty() { merge } else { self.b.id() };
                self.b.selection_merge(merge, SelectionControl::NONE)?;
                self.b.branch_conditional(c, then_label, else_label, [])?;
                self.b.begin_block(Some(then_label))?;
                self.block(then_body)?;
                self.branch_if_open(merge)?;
                if !else_body.is_empty() {
                    self.b.begin_block(Some(else_label))?;
                    self.block(else_body)?;
                    self.branch_if_open(merge)?;
                }
                self.b.begin_block(Some(merge))?;
            }
            Stmt::Loop { body } => {
                let (header, body_label, continue_label, merge) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
                self.b.branch(header)?;
                self.b.begin_block(Some(header))?;
                self.b.loop_merge(merge, continue_label, LoopControl::NONE, [])?;
                self.b.branch(body_label)?;
                self.b.begin_block(Some(body_label))?;
                self.loops.push((merge, continue_label));
                let inner = self.block(body);
                self.loops.pop();
                inner?;
                self.branch_if_open(continue_label)?;
                self.b.begin_block(Some(continue_label))?;
                self.b.branch(header)?;
                self.b.begin_block(Some(merge))?;
            }
            Stmt::Break => match self.loops.last() {
                Some(&(merge, _)) => self.b.branch(merge)?,
                None => return unsupported("a Break outside a loop"),
            },
            Stmt::Continue => match self.loops.last() {
                Some(&(_, cont)) => self.b.branch(cont)?,
                None => return unsupported("a Continue outside a loop"),
            },
            Stmt::Discard(cond) => {
                if self.m.stage != Stage::Pixel {
                    return unsupported("a discard outside a pixel shader");
                }
                // HLSL `clip` / `discard` as DXC writes it for Vulkan 1.0: OpKill
                let c = self.cond(cond)?;
                let (merge, kill) = (self.b.id(), self.b.id());
                self.b.selection_merge(merge, SelectionControl::NONE)?;
                self.b.branch_conditional(c, kill, merge, [])?;
                self.b.begin_block(Some(kill))?;
                self.b.kill()?;
                self.b.begin_block(Some(merge))?;
            }
            Stmt::Return => self.b.ret()?,
            Stmt::Comment(_) => {}
            Stmt::SetInt { var, index, value } => self.set_int(*var, index.as_ref(), value)?,
            Stmt::GsStore(_) | Stmt::GsEmitTriangle { .. } | Stmt::GsEmitVertex | Stmt::GsCutStrip => self.geometry_stmt(s)?,
            Stmt::LocalStore { index, mask, value } => self.local_store(index, *mask, value)?,
            Stmt::LocalLoad { dst, index } => self.local_load(dst, index)?,
            Stmt::XenosMemExport { address, value, element } => self.xenos_memexport(address, value, *element)?,
        }
        Ok(())
    }

    /// Stores lanes `mask` of `v` through `ptr` (a `vec4` pointer); the other lanes keep
    /// what `ptr` holds.
    pub(super) fn store_masked(&mut self, ptr: Word, v: Word, mask: u8) -> Result<()> {
        let mask = mask & 0xF;
        if mask == 0 {
            return Ok(());
        }
        let mut v = v;
        if mask != 0xF {
            let old = self.inst(Op::Load, self.t.v4f, ids(&[ptr]))?;
            let mut operands = ids(&[old, v]);
            operands.extend((0..4u32).map(|i| Operand::LiteralBit32(if mask >> i & 1 == 1 { 4 + i } else { i })));
            v = self.inst(Op::VectorShuffle, self.t.v4f, operands)?;
        }
        self.b.store(ptr, v, None, [])?;
        Ok(())
    }

    /// A condition as an OpTypeBool value.
    pub(super) fn cond(&mut self, c: &Cond) -> Result<Word> {
        let b = self.t.bool;
        match c {
            Cond::Compare(op, a, e) => {
                let (x, y) = (self.lane_x(a)?, self.lane_x(e)?);
                self.compare(*op, b, x, y)
            }
            Cond::AnyNegative(e) => {
                let v = self.expr(e)?;
                let zero = self.v4f_splat(0.0);
                let neg = self.inst(Op::FOrdLessThan, self.t.v4b, ids(&[v, zero]))?;
                self.inst(Op::Any, b, ids(&[neg]))
            }
            Cond::Not(a) => {
                let a = self.cond(a)?;
                self.inst(Op::LogicalNot, b, ids(&[a]))
            }
            Cond::BitSet { value, bit } => {
                let x = self.lane_x(value)?;
                let bits = self.inst(Op::Bitcast, self.t.u32, ids(&[x]))?;
                let mask = self.u32_const(1u32 << (bit & 31));
                let set = self.inst(Op::BitwiseAnd, self.t.u32, ids(&[bits, mask]))?;
                let zero = self.u32_const(0);
                self.inst(Op::INotEqual, b, ids(&[set, zero]))
            }
            Cond::IntCmp(op, a, e) => self.int_cond(*op, a, e),
            Cond::And(x, y) => {
                let (x, y) = (self.cond(x)?, self.cond(y)?);
                self.inst(Op::LogicalAnd, b, ids(&[x, y]))
            }
            Cond::Or(x, y) => {
                let (x, y) = (self.cond(x)?, self.cond(y)?);
                self.inst(Op::LogicalOr, b, ids(&[x, y]))
            }
        }
    }
}
