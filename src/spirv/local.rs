//! The invocation-local array (`ModuleExt::local_array` float4s: a strip-mode geometry shader's
//! GSVS ring, GX2 scratch memory) as a `Private` array initialised to 0, declared on first use,
//! with the bounds rule of `Stmt::LocalStore` / `Stmt::LocalLoad` (the HLSL writer's, see
//! `hlsl::stmt`): a store outside the array writes nothing, a load outside it gives 0.

use super::{ids, Result, Writer};
use crate::ir::*;
use rspirv::spirv::{self, Op, SelectionControl, StorageClass, Word};

impl Writer<'_> {
    /// The array and its length in float4s (the validator has checked it is not 0).
    fn local_array(&mut self) -> Result<(Word, u32)> {
        let len = self.m.ext.local_array;
        if let Some(var) = self.local_var {
            return Ok((var, len));
        }
        let count = self.u32_const(len);
        let ty = self.b.type_array(self.t.v4f, count);
        let null = self.b.constant_null(ty);
        let var = self.global_variable(ty, StorageClass::Private, Some(null));
        self.local_var = Some(var);
        Ok((var, len))
    }

    /// `Stmt::LocalStore`: lanes `mask` of element `index` = `value` when the index is inside.
    pub(super) fn local_store(&mut self, index: &Index, mask: u8, value: &Expr) -> Result<()> {
        let (array, len) = self.local_array()?;
        let v = self.expr(value)?;
        if let Index::Fixed(k) = index {
            if *k < len {
                let i = self.i32_const(*k as i32);
                let ptr = self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[array, i]))?;
                self.store_masked(ptr, v, mask)?;
            }
            return Ok(());
        }
        let i = self.index_value(index)?;
        let in_range = self.local_in_range(i, len)?;
        let (merge, body) = (self.b.id(), self.b.id());
        self.b.selection_merge(merge, SelectionControl::NONE)?;
        self.b.branch_conditional(in_range, body, merge, [])?;
        self.b.begin_block(Some(body))?;
        let ptr = self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[array, i]))?;
        self.store_masked(ptr, v, mask)?;
        self.b.branch(merge)?;
        self.b.begin_block(Some(merge))?;
        Ok(())
    }

    /// `Stmt::LocalLoad`: `dst` = element `index`, 0 when the index is outside.
    pub(super) fn local_load(&mut self, dst: &Dst, index: &Index) -> Result<()> {
        let (array, len) = self.local_array()?;
        let value = match index {
            Index::Fixed(k) if *k < len => {
                let i = self.i32_const(*k as i32);
                let ptr = self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[array, i]))?;
                self.inst(Op::Load, self.t.v4f, ids(&[ptr]))?
            }
            Index::Fixed(_) => self.v4f_splat(0.0),
            _ => {
                // the element at the clamped index, 0 when the index is outside
                let i = self.index_value(index)?;
                let in_range = self.local_in_range(i, len)?;
                let (lo, hi) = (self.i32_const(0), self.i32_const(len as i32 - 1));
                let clamped = self.glsl(spirv::GLOp::SClamp, self.t.i32, &[i, lo, hi])?;
                let ptr = self.inst(Op::AccessChain, self.t.ptr_private_v4f, ids(&[array, clamped]))?;
                let element = self.inst(Op::Load, self.t.v4f, ids(&[ptr]))?;
                let zero = self.v4f_splat(0.0);
                // SPIR-V 1.0: a vector select takes a vector condition
                let in_range4 = self.splat(self.t.v4b, in_range, 4)?;
                self.inst(Op::Select, self.t.v4f, ids(&[in_range4, element, zero]))?
            }
        };
        let ptr = self.reg_ptr(&dst.reg)?;
        self.store_masked(ptr, value, dst.mask)
    }

    /// `0 <= i && i < len`.
    fn local_in_range(&mut self, i: Word, len: u32) -> Result<Word> {
        let (zero, len) = (self.i32_const(0), self.i32_const(len as i32));
        let above = self.inst(Op::SGreaterThanEqual, self.t.bool, ids(&[i, zero]))?;
        let below = self.inst(Op::SLessThan, self.t.bool, ids(&[i, len]))?;
        self.inst(Op::LogicalAnd, self.t.bool, ids(&[above, below]))
    }
}
