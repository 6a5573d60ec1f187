//! MEM_STREAM0-3 (stream-out) in a vertex shader, after the model of
//! [`crate::formats::gx2::stream`] (docs/gx2.md "GX2 stream-out").
//!
//! Each run of consecutive COMP_MASK lanes becomes one vertex output (`Semantic::StreamOut`,
//! 1-4 components) placed by `ir::StreamOut` at its dword of the buffer's record. A vertex
//! output is captured for every vertex, whatever the shader did, while the hardware writes the
//! dwords only when the export runs: so an export is translated only where it runs for every
//! lane that reaches the end of the program (mask-stack depth 0, outside loops and skipped
//! jump regions, no earlier instruction at depth 0 that may clear the lane), and each dword is
//! written by at most one export.

use super::*;
use crate::formats::gx2::stream::{self as so, StreamWrite};

/// Locations below this one hold stream-out outputs (placed from the top down, as decaf does,
/// so that they stay clear of the PARAM semantics at the bottom; 32 locations is what
/// `maxVertexOutputComponents` = 128 gives, lavapipe's and most desktop drivers' value).
const LOCATIONS: u32 = 32;

/// One translated write: buffer, first dword, dwords, output index, CF.
#[derive(Clone, Copy, Debug)]
struct Write {
    buffer: u32,
    first: u32,
    dwords: u32,
    output: u32,
    pc: u32,
}

/// Stream-out writes of the shader so far and the strides of the buffers they go to.
#[derive(Default)]
pub(super) struct StreamState {
    writes: Vec<Write>,
    strides: [u32; 4],
}

impl Lowering<'_> {
    /// A MEM_STREAMn export.
    pub(super) fn mem_stream(&mut self, cf: &Cf, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let Cf::Export { op, ty, array_base, rw_gpr, rw_rel, elem_size, array_size, comp_mask, burst_count, .. } = *cf else { unreachable!() };
        let name = op.name();
        let buffer = so::buffer(op).expect("a MEM_STREAM opcode");
        if self.s.kind != ShaderKind::Vertex {
            return Err(unsupported(op, format!("{name} in a {} shader (stream-out is translated in vertex shaders)", self.s.kind.name()), pc));
        }
        if crate::formats::gx2::ring::writes_ring(self.prog) {
            return Err(unsupported(
                op,
                format!("{name} in a vertex shader that writes MEM_RING (an ES: stream-out belongs to the GS stage then)"),
                pc,
            ));
        }
        let stride = so::stride(self.s, buffer).map_err(|why| unsupported(op, format!("{name}: {why}"), pc))?;
        let w = StreamWrite { ty, array_base, elem_size, array_size, comp_mask, rw_rel, burst_count };
        if let Some(why) = w.problem(name, stride) {
            return Err(unsupported(op, why, pc));
        }
        let flow = if self.depth != 0 {
            Some(format!("at mask-stack depth {}", self.depth))
        } else if self.loop_nest != 0 {
            Some("inside a loop".to_string())
        } else if !self.jumps.is_empty() || self.caller_jumps != 0 {
            Some("inside the region a jump skips".to_string())
        } else if self.exec_maybe_cleared {
            Some("after an instruction that may clear the lane's active flag at depth 0 (UPDATE_EXEC_MASK, ELSE)".to_string())
        } else {
            None
        };
        if let Some(where_) = flow {
            return Err(unsupported(
                op,
                format!("{name} under flow control ({where_}): a lane that skips it leaves the buffer's dwords as they were, which a vertex output cannot express"),
                pc,
            ));
        }
        for (start, n) in w.runs() {
            let first = array_base + start;
            if let Some(o) = self.stream.writes.iter().find(|o| o.buffer == buffer && o.first < first + n && first < o.first + o.dwords) {
                return Err(unsupported(
                    op,
                    format!(
                        "{name} writes dwords {first}-{} of buffer {buffer}, which the MEM_STREAM at CF {:02} writes too (dwords {}-{}): one output per dword",
                        first + n - 1,
                        o.pc,
                        o.first,
                        o.first + o.dwords - 1
                    ),
                    pc,
                ));
            }
            let index = self.stream.writes.len() as u32;
            let output = self.m.outputs.len() as u32;
            // the location is chosen once every output is known (`finish_stream_out`)
            self.m.outputs.push(IoVar {
                name: format!("so{buffer}_{first}"),
                semantic: Semantic::StreamOut { index, location: 0 },
                components: n as u8,
            });
            self.stream.writes.push(Write { buffer, first, dwords: n, output, pc });
            self.stream.strides[buffer as usize] = stride;
            // lanes start.. of RW_GPR to lanes 0.. of the output (raw bits: registers hold them)
            let lanes: [u8; 4] = std::array::from_fn(|k| (start + (k as u32).min(n - 1)) as u8);
            // no `if (active)`: the checks above proved the lane active here
            out.push(assign(RegRef::fixed(RegFile::Output, output), (1u8 << n) - 1, swz(rd4(rw_gpr), lanes)));
        }
        Ok(())
    }

    /// After the program: the locations of the stream-out outputs and the module's
    /// `ir::StreamOut` table.
    pub(super) fn finish_stream_out(&mut self) -> Result<(), ShaderError> {
        if self.stream.writes.is_empty() {
            return Ok(());
        }
        let mut used: Vec<u32> = self
            .m
            .outputs
            .iter()
            .filter_map(|o| match o.semantic {
                Semantic::Texcoord(l) | Semantic::Usage { location: l, .. } | Semantic::UsageUint { location: l, .. } => Some(l),
                _ => None,
            })
            .collect();
        for w in self.stream.writes.clone() {
            let location = (0..LOCATIONS).rev().find(|l| !used.contains(l)).ok_or_else(|| {
                structure(None, format!("stream-out: no free output location below {LOCATIONS} for the MEM_STREAM at CF {:02}", w.pc))
            })?;
            used.push(location);
            let mut index = 0;
            if let Semantic::StreamOut { location: l, index: i } = &mut self.m.outputs[w.output as usize].semantic {
                *l = location;
                index = *i;
            }
            self.m.header_comments.push(format!(
                "stream-out: SHREC_SO{index} (location {location}) = dwords {}-{} of buffer {}'s {}-byte record (MEM_STREAM{} at CF {:02})",
                w.first,
                w.first + w.dwords - 1,
                w.buffer,
                self.stream.strides[w.buffer as usize],
                w.buffer,
                w.pc
            ));
        }
        let mut entries: Vec<StreamOutEntry> =
            self.stream.writes.iter().map(|w| StreamOutEntry { output: w.output, buffer: w.buffer, offset: w.first }).collect();
        entries.sort_by_key(|e| (e.buffer, e.offset));
        self.m.ext.stream_out = Some(StreamOut { strides: self.stream.strides, entries });
        Ok(())
    }
}
