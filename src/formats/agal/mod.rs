//! Flash Stage3D AGAL bytecode: decoding with Flash's validation rules, disassembly, lowering to IR.

pub mod decode;
pub mod disasm;
pub mod error;
pub mod lower;

use super::{ShaderEntry, ShaderError, TranslateOptions, Translation};
use decode::DecodeOptions;

fn decode_options(opts: &TranslateOptions) -> DecodeOptions {
    DecodeOptions { allow_agal4: opts.agal4 }
}

/// One entry per program; key = XXH3-64 of the program bytes.
pub fn entries(bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    let (_, stage) = decode::parse_header(bytes, DecodeOptions { allow_agal4: true })?;
    Ok(vec![ShaderEntry { stage, index: 0, key: xxhash_rust::xxh3::xxh3_64(bytes), name: None }])
}

/// Length of the AGAL program starting at `buf[0]`, if one does (see [`decode::probe`]).
/// Detection accepts AGAL4 headers so that such programs are found and reported.
pub fn probe(buf: &[u8]) -> Option<usize> {
    decode::probe(buf, DecodeOptions { allow_agal4: true })
}

pub fn translate(bytes: &[u8], opts: &TranslateOptions) -> Result<Translation, ShaderError> {
    let program = decode::decode(bytes, decode_options(opts))?;
    let lowered = lower::lower(&program, lower::AgalOptions { ifg_strict: opts.agal_ifg_strict })?;
    // Metadata: per sampler slot, the slot number and the 64-bit sampler word (lo, hi).
    let meta = lowered.samplers.iter().flat_map(|s| [u32::from(s.num), s.word as u32, (s.word >> 32) as u32]).collect();
    Ok(Translation { module: lowered.module, meta, spec_constants_mask: 0 })
}

pub fn disasm(bytes: &[u8], opts: &TranslateOptions) -> Result<String, ShaderError> {
    Ok(disasm::disassemble(&decode::decode(bytes, decode_options(opts))?))
}

/// The listing of every token that decodes, and the program's error if it is invalid (see
/// [`decode::decode_prefix`]): how `shrec disasm` shows a program the build refused.
pub fn disasm_prefix(bytes: &[u8], opts: &TranslateOptions) -> (Option<String>, Option<ShaderError>) {
    let (program, error) = decode::decode_prefix(bytes, decode_options(opts));
    (program.map(|p| disasm::disassemble(&p)), error.map(ShaderError::from))
}
