//! GX2 scratch memory: the per-invocation memory a `MEM_SCRATCH` export writes and a TEX-clause
//! `MEM` read (MEM_RD, MEM_OP 0) reads back — where a compiler spills registers. Both the
//! lowering and the interpreter implement this model; the field checks that decide what is
//! accepted live here so both accept the same programs (docs/gx2.md "GX2 scratch memory").
//!
//! The model, from the R700 ISA document's export section ("for scratch and reduction buffers,
//! both [ARRAY_BASE and ARRAY_SIZE] are in units of four doublewords"; the first dword written
//! is `(ARRAY_BASE + index) · (ELEM_SIZE + 1)`; "the ARRAY_SIZE field specifies a point at which
//! the burst is clamped") and the two emitters that write this code for R600-family GPUs (Mesa
//! r600's TGSI back end `r600_shader.c`, its register-array spill path, and its NIR back end
//! `sfn`, `ScratchIOInstr` / the `READ_SCRATCH` fetch), with the MEM_RD field layout Mesa's
//! `r700_bytecode_fetch_mem_build` and Cemu's decoder share:
//! - memory is an array of float4 elements (ELEM_SIZE 3); a direct write (TYPE WRITE or
//!   WRITE_ACK, one element: BURST_COUNT 0) stores lanes COMP_MASK of RW_GPR into element
//!   ARRAY_BASE; a direct read (INDEXED 0) loads element ARRAY_BASE, raw 32-bit lanes
//!   (FMT_32_32_32_32, NUM_FORMAT INT), through DST_SEL. Both emitters give consecutive spilled
//!   vec4s consecutive ARRAY_BASE values and write ARRAY_SIZE 0, BURST_COUNT 0 for them;
//! - a read sees the invocation's earlier writes only after they are acknowledged: the emitters
//!   write WRITE_ACK, put a WAIT_ACK before the read (and before a loop's end) and read
//!   UNCACHED ("must bypass cache since prior spill written in same invocation"). A program that
//!   reads while a write may still be in flight, or reads cached, gets what the hardware
//!   happens to hold: refused;
//! - element contents no write of the invocation stored are not determined (memory another
//!   invocation left): the translation reads 0, the interpreter compares nothing there.
//!
//! Refused with a reason: indexed writes and reads (the two emitters disagree on which field
//! holds the base under indexing: `r600_shader.c` adds the index to ARRAY_BASE, `sfn` writes the
//! array in ARRAY_SIZE and says "the docu seems to be wrong here"), other element sizes and
//! formats, bursts (ARRAY_SIZE clamps a burst, and where exactly is not stated), relative GPRs, a
//! non-zero ARRAY_SIZE, scratch in a geometry shader (its invocation-local array is the GSVS
//! ring).

use super::isa::{Cf, CfOp, Clause, ExpOp, Program, TexInst, TexOp};

/// Elements (float4s) a program may address: the translation's invocation-local array.
pub const MAX_ELEMENTS: u32 = 1024;
/// MEM_RD DATA_FORMAT FMT_32_32_32_32 (the emitters' read format).
pub const FMT_32_32_32_32: u32 = 0x22;
/// MEM_RD NUM_FORMAT_ALL INT: the 32-bit lanes are moved as they are.
pub const NUM_FORMAT_INT: u32 = 1;

/// A TEX-clause MEM read of scratch memory that the model covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScratchRead {
    /// The element read.
    pub element: u32,
    pub dst_gpr: u32,
    /// DST_SEL_X..W (0-3 xyzw, 4 = 0, 5 = 1, 7 = masked).
    pub dst_sel: [u8; 4],
}

/// The MEM_RD fields of a TEX-clause `MEM` as a scratch read, or why the model does not cover
/// it.
pub fn read(x: &TexInst) -> Result<ScratchRead, String> {
    debug_assert_eq!(x.op, TexOp::MEM);
    let m = x.mem_read();
    if m.mem_op != 0 {
        let what = if m.mem_op == 2 { "the scatter buffer MEM_EXPORT writes" } else { "an undocumented memory" };
        return Err(format!(
            "MEM read with MEM_OP {} ({what}; only scratch, MEM_OP 0, is modelled: the buffer's address and size are register state no shader struct carries, Cemu writes 0, decaf does not translate it)",
            m.mem_op
        ));
    }
    let checks = [
        (m.elem_size != 3, format!("ELEM_SIZE {} (only 3: one float4 per element)", m.elem_size)),
        (m.indexed, "INDEXED (the two emitters disagree on where the base of an indexed access is)".to_string()),
        (!m.uncached, "UNCACHED 0 (a cached read may miss the invocation's own writes)".to_string()),
        (m.burst_count != 0, format!("BURST_COUNT {}", m.burst_count)),
        (m.dst_rel, "relative DST_GPR".to_string()),
        (m.data_format != FMT_32_32_32_32, format!("DATA_FORMAT {:#x} (only FMT_32_32_32_32)", m.data_format)),
        (m.num_format_all != NUM_FORMAT_INT, format!("NUM_FORMAT_ALL {} (only INT: the lanes as they are)", m.num_format_all)),
        (m.endian_swap != 0, format!("ENDIAN_SWAP {}", m.endian_swap)),
        (m.array_size != 0, format!("ARRAY_SIZE {} (only 0, what compilers write for a direct read)", m.array_size)),
    ];
    if let Some((_, why)) = checks.into_iter().find(|(bad, _)| *bad) {
        return Err(format!("scratch read with {why}"));
    }
    if m.array_base >= MAX_ELEMENTS {
        return Err(format!("scratch read of element {} (the translation keeps {MAX_ELEMENTS})", m.array_base));
    }
    Ok(ScratchRead { element: m.array_base, dst_gpr: m.dst_gpr, dst_sel: m.dst_sel })
}

/// Why a `MEM_SCRATCH` export is outside the model (`None`: it is a direct write of element
/// `array_base`).
pub fn write_problem(cf: &Cf) -> Option<String> {
    let Cf::Export { op: ExpOp::MEM_SCRATCH, ty, array_base, rw_rel, elem_size, array_size, burst_count, .. } = *cf else {
        return Some("not a MEM_SCRATCH export".into());
    };
    if ty & 1 == 1 {
        return Some("MEM_SCRATCH indexed write (WRITE_IND: the two emitters disagree on where the base of an indexed access is)".into());
    }
    if elem_size != 3 {
        return Some(format!("MEM_SCRATCH with ELEM_SIZE {elem_size} (only 3: one float4 per element)"));
    }
    if rw_rel {
        return Some("MEM_SCRATCH with relative GPR".into());
    }
    if array_size != 0 {
        return Some(format!("MEM_SCRATCH with ARRAY_SIZE {array_size} (only 0, what compilers write for a direct write)"));
    }
    if burst_count != 0 {
        return Some(format!(
            "MEM_SCRATCH with BURST_COUNT {burst_count} (ARRAY_SIZE clamps a burst and the edge is not stated: only single-element writes, as compilers write them)"
        ));
    }
    if array_base >= MAX_ELEMENTS {
        return Some(format!("MEM_SCRATCH to element {array_base} (the translation keeps {MAX_ELEMENTS})"));
    }
    None
}

/// Why the program's scratch accesses are outside the model, checked along the CF stream in
/// order: a read while a write is not yet acknowledged (no WAIT_ACK since a MEM_SCRATCH), a
/// loop edge (LOOP_END, LOOP_CONTINUE, LOOP_BREAK) with one in flight, which a read at the
/// loop's start could race with, or scratch in a program with subroutines (whose order along
/// the stream is not the order of execution). Gives the CF index and the reason.
pub fn ordering_problem(prog: &Program) -> Option<(u32, String)> {
    let is_read = |c: &Clause| matches!(c, Clause::Tex(ts) if ts.iter().any(|t| t.op == TexOp::MEM));
    let is_write = |c: &Cf| matches!(c, Cf::Export { op: ExpOp::MEM_SCRATCH, .. });
    let uses_scratch = prog.cfs.iter().any(|(c, cl)| is_write(&c.cf) || is_read(cl));
    if !uses_scratch {
        return None;
    }
    if let Some((c, _)) = prog.cfs.iter().find(|(c, _)| matches!(c.cf, Cf::Normal { op: CfOp::CALL, .. })) {
        return Some((c.pc, "scratch memory in a program with subroutines (their order along the CF stream is not the order they run in)".into()));
    }
    let mut pending = false;
    for (c, clause) in &prog.cfs {
        if is_write(&c.cf) {
            pending = true;
            continue;
        }
        if let Cf::Normal { op, .. } = c.cf {
            match op {
                CfOp::WAIT_ACK => pending = false,
                CfOp::LOOP_END | CfOp::LOOP_CONTINUE | CfOp::LOOP_BREAK if pending => {
                    return Some((c.pc, "a loop edge while a MEM_SCRATCH write is not acknowledged (no WAIT_ACK after it)".into()));
                }
                _ => {}
            }
        }
        if pending && is_read(clause) {
            return Some((c.pc, "a scratch read while a MEM_SCRATCH write is not acknowledged (no WAIT_ACK between them)".into()));
        }
    }
    None
}
