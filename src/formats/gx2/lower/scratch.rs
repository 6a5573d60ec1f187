//! MEM_SCRATCH writes and TEX-clause MEM reads of scratch memory, after the model of
//! [`crate::formats::gx2::scratch`] (docs/gx2.md "GX2 scratch memory"): the memory is the
//! module's invocation-local array (`ModuleExt::local_array`, as long as the highest element
//! the program addresses), which starts at 0.

use super::*;
use crate::formats::gx2::scratch;

impl Lowering<'_> {
    /// Grows the invocation-local array to hold `element`; refused in a geometry shader, whose
    /// array is the GSVS ring.
    fn scratch_element(&mut self, op: impl Into<super::Opcode>, element: u32, pc: u32) -> Result<Index, ShaderError> {
        if self.s.kind == ShaderKind::Geometry {
            return Err(unsupported(op, "scratch memory in a geometry shader (its invocation-local array is the GSVS ring)", pc));
        }
        self.m.ext.local_array = self.m.ext.local_array.max(element + 1);
        Ok(Index::Fixed(element))
    }

    /// MEM_SCRATCH: lanes COMP_MASK of R\[RW_GPR\] into element ARRAY_BASE, when the lane is
    /// active.
    pub(super) fn scratch_write(&mut self, cf: &Cf, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if let Some(why) = scratch::write_problem(cf) {
            return Err(unsupported(ExpOp::MEM_SCRATCH, why, pc));
        }
        let Cf::Export { array_base, rw_gpr, comp_mask, .. } = *cf else { unreachable!("checked") };
        let mask = comp_mask as u8;
        if mask == 0 {
            return Ok(());
        }
        let index = self.scratch_element(ExpOp::MEM_SCRATCH, array_base, pc)?;
        let store = Stmt::LocalStore { index, mask, value: rd4(rw_gpr) };
        out.push(Stmt::If { cond: active(), then_body: vec![store], else_body: vec![] });
        Ok(())
    }

    /// A TEX-clause MEM read of scratch memory into TEX_TMP, or why it is refused.
    pub(super) fn scratch_read(&mut self, x: &TexInst, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let r = scratch::read(x).map_err(|why| unsupported(x.op, why, pc))?;
        let index = self.scratch_element(x.op, r.element, pc)?;
        out.push(Stmt::LocalLoad { dst: Dst { reg: t(TEX_TMP), mask: 0xF }, index });
        Ok(())
    }
}
