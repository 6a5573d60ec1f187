//! The stream-out model shrec translates MEM_STREAM0-3 with (docs/gx2.md "GX2 stream-out").
//! Both the lowering and the reference interpreter use these checks, so both accept the same
//! exports.
//!
//! A MEM_STREAMn export in a vertex shader writes lane i of RW_GPR (for each COMP_MASK bit i) to
//! dword `ARRAY_BASE + i` of the current vertex's record in stream-out buffer n; a record is
//! `streamOutStride[n]` bytes (GX2VertexShader 0x114 + 4n, which GX2SetVertexShader writes,
//! divided by 4, to VGT_STRMOUT_VTX_STRIDE_n). Sources: Mesa r600 `emit_streamout`
//! (`CF_OP_MEM_STREAM0 + buffer`, ARRAY_BASE = dword offset − first component, COMP_MASK,
//! ELEM_SIZE 0, ARRAY_SIZE 0xFFF), Cemu `_emitStreamWriteCode` (dword ARRAY_BASE + i of the
//! vertex's record for each COMP_MASK lane i ≤ ARRAY_SIZE), decaf `translateGenericStream` /
//! `streamOutWriteVar` (byte offset ARRAY_BASE · 4, ARRAY_SIZE + 1 dwords, ELEM_SIZE 0), and the
//! R700 ISA (§3 "memory writes": stream buffers address dwords, ARRAY_SIZE clamps the write).
//!
//! What is not translated, each rejected by name: indexed writes (WRITE_IND: the index is a
//! run-time value, a vertex output has one fixed place), ELEM_SIZE other than 0 and bursts (the
//! sources disagree on where a burst's later GPRs go), RW_REL, COMP_MASK lanes past ARRAY_SIZE
//! (the clamp: the ISA text can be read as excluding or including dword ARRAY_BASE + ARRAY_SIZE),
//! records that do not hold the write, a shader struct without stream-out strides.

use super::isa::ExpOp;
use super::shader_struct::Gx2Shader;

/// Stream-out buffers (MEM_STREAM0-3).
pub const BUFFERS: u32 = 4;
/// GX2VertexShader: `hasStreamOut` and `streamOutStride[4]` (bytes).
pub const HAS_STREAM_OUT: usize = 0x110;
pub const STRIDES: usize = 0x114;
/// The export TYPE values accepted: WRITE and WRITE_ACK (the acknowledge only orders memory
/// traffic, the data written is the same).
pub const TYPE_WRITE: u32 = 0;
pub const TYPE_WRITE_ACK: u32 = 2;

/// The buffer of a MEM_STREAMn opcode.
pub fn buffer(op: ExpOp) -> Option<u32> {
    match op {
        ExpOp::MEM_STREAM0 => Some(0),
        ExpOp::MEM_STREAM1 => Some(1),
        ExpOp::MEM_STREAM2 => Some(2),
        ExpOp::MEM_STREAM3 => Some(3),
        _ => None,
    }
}

/// The record stride in bytes of `buffer` from a vertex shader struct, or why it has none.
pub fn stride(s: &Gx2Shader, buffer: u32) -> Result<u32, String> {
    if s.reg(HAS_STREAM_OUT) == 0 {
        return Err("the GX2VertexShader has hasStreamOut 0 (no stream-out strides: VGT_STRMOUT_VTX_STRIDE would be run-time state)".into());
    }
    let stride = s.reg(STRIDES + 4 * buffer as usize);
    if stride == 0 || !stride.is_multiple_of(4) {
        return Err(format!("streamOutStride[{buffer}] is {stride} bytes (need a non-zero multiple of 4)"));
    }
    Ok(stride)
}

/// The fields of one MEM_STREAM export that decide what it writes.
#[derive(Clone, Copy, Debug)]
pub struct StreamWrite {
    pub ty: u32,
    pub array_base: u32,
    pub elem_size: u32,
    pub array_size: u32,
    pub comp_mask: u32,
    pub rw_rel: bool,
    pub burst_count: u32,
}

impl StreamWrite {
    /// Why the export is not translated exactly (`None`: it is), given its buffer's stride.
    pub fn problem(&self, name: &str, stride: u32) -> Option<String> {
        if self.ty != TYPE_WRITE && self.ty != TYPE_WRITE_ACK {
            return Some(format!("{name} with TYPE {} (only WRITE and WRITE_ACK; an indexed write has no fixed place in the record)", self.ty));
        }
        if self.elem_size != 0 {
            return Some(format!("{name} with ELEM_SIZE {} (only 0: one dword per element)", self.elem_size));
        }
        if self.burst_count != 0 {
            return Some(format!("{name} with BURST_COUNT {} (where a burst's later GPRs go is not established)", self.burst_count));
        }
        if self.rw_rel {
            return Some(format!("{name} with relative GPR"));
        }
        let top = (0..4).rev().find(|&i| self.comp_mask >> i & 1 != 0);
        if let Some(top) = top {
            if top > self.array_size {
                return Some(format!(
                    "{name} with COMP_MASK {:#x} past ARRAY_SIZE {} (write clipping by ARRAY_SIZE is not modelled)",
                    self.comp_mask, self.array_size
                ));
            }
            let end = u64::from(self.array_base) + u64::from(top) + 1;
            if end * 4 > u64::from(stride) {
                return Some(format!(
                    "{name} writes dword {} of a {stride}-byte record (ARRAY_BASE {} + lane {top}); the write would reach the next vertex's record",
                    end - 1,
                    self.array_base
                ));
            }
        }
        None
    }

    /// Runs of consecutive written lanes: (first lane, lane count). Lane i goes to dword
    /// `ARRAY_BASE + i`.
    pub fn runs(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for i in 0..4 {
            if self.comp_mask >> i & 1 == 0 {
                continue;
            }
            match out.last_mut() {
                Some((start, n)) if *start + *n == i => *n += 1,
                _ => out.push((i, 1)),
            }
        }
        out
    }
}
