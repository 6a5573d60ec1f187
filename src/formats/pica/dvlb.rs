//! SHBIN / DVLB container (notes/pica.md §8): all little-endian.
//!
//! ```text
//! DVLB  +0 "DVLB"  +4 nDVLE  +8 u32 dvleOffset[nDVLE]       (offsets from the DVLB start)
//! DVLP  right after the offset table: +0 "DVLP" +4 version +8 codeOff +0xC codeWords
//!       +0x10 opdescOff +0x14 opdescCount (8-byte entries) +0x18 filenameSymtabOff
//!       (offsets relative to the DVLP; nihstro writes a 0x1C-byte header, picasso 0x28)
//! DVLE  0x40-byte header: +6 type (0 vertex, 1 geometry), then five (offset, count) tables
//!       relative to the DVLE: constants (20 B), labels (16 B), outputs (8 B), uniforms (8 B),
//!       symbols (count = bytes)
//! ```
//! The DVLB has no total size: its length is the furthest byte any header, code blob, operand
//! descriptor table, DVLE header or DVLE table reaches. (The DVLP filename symbol table has an
//! offset but no size and is ignored.)

use crate::formats::{ShaderError, Stage};

pub const DVLB_MAGIC: &[u8; 4] = b"DVLB";
pub const DVLP_MAGIC: &[u8; 4] = b"DVLP";
pub const DVLE_MAGIC: &[u8; 4] = b"DVLE";
pub const DVLP_HEADER_SIZE: usize = 0x1C;
pub const DVLE_HEADER_SIZE: usize = 0x40;

#[inline]
fn le32(buf: &[u8], off: usize) -> Option<u32> {
    let b: [u8; 4] = buf.get(off..off.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

fn rd(buf: &[u8], off: usize, what: &str) -> Result<u32, ShaderError> {
    le32(buf, off).ok_or_else(|| ShaderError::at(off as u64, format!("{what}: 4 bytes at 0x{off:X} lie past the end")))
}

/// `base + off + count * elem`, checked against `limit`; the end offset, or an error.
fn table_end(base: usize, off: u32, count: u32, elem: u64, limit: usize, what: &str, at: usize) -> Result<usize, ShaderError> {
    let end = base as u64 + off as u64 + count as u64 * elem;
    if end > limit as u64 {
        return Err(ShaderError::at(
            at as u64,
            format!("{what} [0x{:X}, 0x{end:X}) runs past the end (0x{limit:X})", base as u64 + off as u64),
        ));
    }
    Ok(end as usize)
}

/// One DVLE as far as scanning needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dvle {
    /// Offset of the DVLE from the DVLB start.
    pub offset: usize,
    /// Raw type byte (0 vertex, 1 geometry).
    pub shader_type: u8,
}

impl Dvle {
    pub fn stage(&self) -> Option<Stage> {
        match self.shader_type {
            0 => Some(Stage::Vertex),
            1 => Some(Stage::Geometry),
            _ => None,
        }
    }
}

/// A checked DVLB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dvlb {
    pub dvlp_offset: usize,
    pub code_offset: usize,
    pub code_words: usize,
    pub opdesc_offset: usize,
    pub opdesc_count: usize,
    pub dvles: Vec<Dvle>,
    /// The furthest byte reached by any section or table.
    pub len: usize,
}

/// Parses and bounds-checks the DVLB at `buf[0]` (`buf` may extend past it). Allocation is
/// bounded by the offset table, which must fit in `buf`.
pub fn parse(buf: &[u8]) -> Result<Dvlb, ShaderError> {
    if buf.get(..4) != Some(&DVLB_MAGIC[..]) {
        return Err(ShaderError::at(0, "no DVLB magic"));
    }
    let n = rd(buf, 4, "DVLE count")? as usize;
    if n == 0 {
        return Err(ShaderError::at(4, "DVLB with no DVLE"));
    }
    // offset table + DVLP header must fit
    let p = n
        .checked_mul(4)
        .and_then(|t| t.checked_add(8))
        .filter(|&p| p.checked_add(DVLP_HEADER_SIZE).is_some_and(|e| e <= buf.len()))
        .ok_or_else(|| ShaderError::at(4, format!("DVLE count {n} leaves no room for the offset table and DVLP")))?;
    if &buf[p..p + 4] != DVLP_MAGIC {
        return Err(ShaderError::at(p as u64, "no DVLP after the DVLE offset table"));
    }
    let mut len = p + DVLP_HEADER_SIZE;
    let code_off = rd(buf, p + 8, "DVLP code offset")?;
    let code_words = rd(buf, p + 0xC, "DVLP code size")?;
    let opd_off = rd(buf, p + 0x10, "DVLP opdesc offset")?;
    let opd_count = rd(buf, p + 0x14, "DVLP opdesc count")?;
    len = len.max(table_end(p, code_off, code_words, 4, buf.len(), "DVLP code blob", p + 8)?);
    len = len.max(table_end(p, opd_off, opd_count, 8, buf.len(), "DVLP operand descriptors", p + 0x10)?);
    let mut dvles = Vec::with_capacity(n);
    for i in 0..n {
        let d = rd(buf, 8 + 4 * i, "DVLE offset")? as usize;
        if d.checked_add(DVLE_HEADER_SIZE).map_or(true, |e| e > buf.len()) {
            return Err(ShaderError::at(8 + 4 * i as u64, format!("DVLE {i} offset 0x{d:X} runs past the end")));
        }
        if &buf[d..d + 4] != DVLE_MAGIC {
            return Err(ShaderError::at(d as u64, format!("DVLE {i}: no DVLE magic at 0x{d:X}")));
        }
        let shader_type = buf[d + 6];
        if shader_type > 1 {
            return Err(ShaderError::at(d as u64 + 6, format!("DVLE {i}: unknown shader type {shader_type}")));
        }
        len = len.max(d + DVLE_HEADER_SIZE);
        // (offset field, element size, name)
        for (field, elem, what) in [
            (0x18, 20u64, "constant table"),
            (0x20, 16, "label table"),
            (0x28, 8, "output table"),
            (0x30, 8, "uniform table"),
            (0x38, 1, "symbol table"),
        ] {
            let off = rd(buf, d + field, what)?;
            let count = rd(buf, d + field + 4, what)?;
            if count == 0 {
                continue;
            }
            let what = format!("DVLE {i} {what}");
            len = len.max(table_end(d, off, count, elem, buf.len(), &what, d + field)?);
        }
        dvles.push(Dvle { offset: d, shader_type });
    }
    Ok(Dvlb {
        dvlp_offset: p,
        code_offset: p + code_off as usize,
        code_words: code_words as usize,
        opdesc_offset: p + opd_off as usize,
        opdesc_count: opd_count as usize,
        dvles,
        len,
    })
}

/// Length of the DVLB at `buf[0]`, if it is one.
pub fn probe(buf: &[u8]) -> Option<usize> {
    parse(buf).ok().map(|d| d.len)
}

/// The PICA cache key of DVLE `index`: `xxh3_64_with_seed(dvlb_bytes, index as u64)`, where
/// `dvlb_bytes` is the whole DVLB as detected, `[0, len)` with `len` = [`Dvlb::len`] (from the
/// `DVLB` magic to the furthest byte of any section or table). Alignment padding after that
/// (picasso pads `.shbin` files to 4 bytes) is not hashed, so the key of a DVLB does not depend
/// on what follows it in a file. The code blob is shared by all DVLEs of a file; the seed (the
/// DVLE index) tells them apart.
pub fn key(dvlb_bytes: &[u8], index: u32) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(dvlb_bytes, index as u64)
}
