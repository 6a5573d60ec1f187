//! Transform-feedback decorations on the SPIR-V target (GX2 stream-out, docs/gx2.md "GX2
//! stream-out").
//!
//! HLSL has no way to say that a vertex output is captured by transform feedback, and DXC's
//! SPIR-V back end writes no `XfbBuffer` / `XfbStride` / `Offset` decorations. The HLSL writer
//! therefore ends the text of a shader with stream-out outputs with one `// shrec: xfb = …`
//! directive per output ([`crate::hlsl::XFB_LINE`]), and [`decorate`] adds to the SPIR-V DXC
//! returns what a compiler with the feature would: the `TransformFeedback` capability, the `Xfb`
//! execution mode on the entry point and, on the output variable at each directive's location,
//! `XfbBuffer`, `XfbStride` and `Offset`. Nothing else changes: the module is walked as words
//! and every other instruction is kept as DXC wrote it (tests/integration validates the result
//! with `spirv-val`; shrec-verify captures it on lavapipe).

use crate::hlsl::XfbDecl;
use rspirv::spirv::{Capability, Decoration, ExecutionMode, Op, StorageClass};

const OP_CAPABILITY: u32 = Op::Capability as u32;
const OP_ENTRY_POINT: u32 = Op::EntryPoint as u32;
const OP_EXECUTION_MODE: u32 = Op::ExecutionMode as u32;
const OP_DECORATE: u32 = Op::Decorate as u32;
const OP_VARIABLE: u32 = Op::Variable as u32;
const DEC_LOCATION: u32 = Decoration::Location as u32;
const STORAGE_OUTPUT: u32 = StorageClass::Output as u32;

/// Why a module cannot be decorated (a DXC output shrec does not expect).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum XfbError {
    #[error("SPIR-V module from DXC is truncated or has an instruction of length 0 at word {0}")]
    Malformed(usize),
    #[error("SPIR-V module from DXC has {0} entry points (stream-out needs exactly one)")]
    EntryPoints(usize),
    #[error("stream-out output at location {0}: the SPIR-V from DXC has no output variable there")]
    NoOutput(u32),
}

/// Adds transform-feedback capture of the outputs `decls` names to a SPIR-V vertex shader
/// (little-endian words, as DXC returns them); with no `decls` the module is returned unchanged.
pub fn decorate(bytes: &[u8], decls: &[XfbDecl]) -> Result<Vec<u8>, XfbError> {
    if decls.is_empty() {
        return Ok(bytes.to_vec());
    }
    let words = crate::pack::spirv_words::words(bytes).ok_or(XfbError::Malformed(0))?;
    let (mut after_caps, mut after_entries, mut first_decorate) = (5, None, None);
    let mut entries = Vec::new();
    let mut located: Vec<(u32, u32)> = Vec::new();
    let mut outputs = Vec::new();
    for (at, inst) in crate::pack::spirv_words::instructions(&words).map_err(XfbError::Malformed)? {
        let (op, len) = (inst[0] & 0xFFFF, inst.len());
        match op {
            OP_CAPABILITY => after_caps = at + len,
            OP_ENTRY_POINT if len >= 3 => {
                entries.push(inst[2]);
                after_entries = Some(at + len);
            }
            OP_DECORATE if len >= 3 => {
                first_decorate.get_or_insert(at);
                if inst[2] == DEC_LOCATION && len == 4 {
                    located.push((inst[1], inst[3]));
                }
            }
            OP_VARIABLE if len >= 4 && inst[3] == STORAGE_OUTPUT => outputs.push(inst[2]),
            _ => {}
        }
    }
    let (Some(after_entries), [entry]) = (after_entries, entries.as_slice()) else {
        return Err(XfbError::EntryPoints(entries.len()));
    };
    let mut decorations = Vec::new();
    for d in decls {
        let var =
            located.iter().find(|&&(id, l)| l == d.location && outputs.contains(&id)).map(|&(id, _)| id).ok_or(XfbError::NoOutput(d.location))?;
        for (dec, value) in [(Decoration::XfbBuffer, d.buffer), (Decoration::XfbStride, d.stride), (Decoration::Offset, d.offset)] {
            decorations.extend([OP_DECORATE | 4 << 16, var, dec as u32, value]);
        }
    }
    // the module has a Location decoration, so an annotation section; insert back to front
    let first_decorate = first_decorate.ok_or(XfbError::NoOutput(decls[0].location))?;
    let mut out = words;
    out.splice(first_decorate..first_decorate, decorations);
    out.splice(after_entries..after_entries, [OP_EXECUTION_MODE | 3 << 16, *entry, ExecutionMode::Xfb as u32]);
    out.splice(after_caps..after_caps, [OP_CAPABILITY | 2 << 16, Capability::TransformFeedback as u32]);
    Ok(out.iter().flat_map(|w| w.to_le_bytes()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-assembled vertex module: one entry point, an output `%10` at location 31 and an
    /// input `%11` at location 31.
    fn module() -> Vec<u32> {
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 20, 0];
        w.extend([2 << 16 | OP_CAPABILITY, 1]);
        w.extend([4 << 16 | OP_ENTRY_POINT, 0, 5, 0]);
        w.extend([4 << 16 | OP_DECORATE, 10, DEC_LOCATION, 31]);
        w.extend([4 << 16 | OP_DECORATE, 11, DEC_LOCATION, 31]);
        w.extend([4 << 16 | OP_VARIABLE, 7, 10, STORAGE_OUTPUT]);
        w.extend([4 << 16 | OP_VARIABLE, 8, 11, StorageClass::Input as u32]);
        w
    }

    fn bytes(w: &[u32]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn decorates_the_output_at_the_location_only() {
        let d = XfbDecl { location: 31, buffer: 2, offset: 12, stride: 32 };
        let out = decorate(&bytes(&module()), &[d]).unwrap();
        let w: Vec<u32> = out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        let has = |inst: &[u32]| w.windows(inst.len()).any(|x| x == inst);
        assert!(has(&[2 << 16 | OP_CAPABILITY, Capability::TransformFeedback as u32]));
        assert!(has(&[3 << 16 | OP_EXECUTION_MODE, 5, ExecutionMode::Xfb as u32]));
        for (dec, v) in [(Decoration::XfbBuffer, 2), (Decoration::XfbStride, 32), (Decoration::Offset, 12)] {
            assert!(has(&[4 << 16 | OP_DECORATE, 10, dec as u32, v]), "{dec:?}");
            assert!(!has(&[4 << 16 | OP_DECORATE, 11, dec as u32, v]), "{dec:?} on the input");
        }
        assert_eq!(decorate(&bytes(&module()), &[]).unwrap(), bytes(&module()));
        assert_eq!(decorate(&bytes(&module()), &[XfbDecl { location: 3, ..d }]), Err(XfbError::NoOutput(3)));
        let mut truncated = module();
        truncated.pop();
        assert_eq!(decorate(&bytes(&truncated), &[d]), Err(XfbError::Malformed(23)));
    }
}
