//! SHBIN / DVLB container (docs/isa/pica.md §8): all little-endian.
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

use super::error::container;
use crate::formats::container_fault::ContainerFault;
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
    le32(buf, off).ok_or_else(|| container(off as u64, ContainerFault::OutOfBounds(format!("{what}: 4 bytes at 0x{off:X} lie past the end"))))
}

/// `base + off + count * elem`, checked against `limit`; the end offset, or an error.
fn table_end(base: usize, off: u32, count: u32, elem: u64, limit: usize, what: &str, at: usize) -> Result<usize, ShaderError> {
    let end = base as u64 + off as u64 + count as u64 * elem;
    if end > limit as u64 {
        return Err(container(
            at as u64,
            ContainerFault::OutOfBounds(format!("{what} [0x{:X}, 0x{end:X}) runs past the end (0x{limit:X})", base as u64 + off as u64)),
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
        return Err(container(0, ContainerFault::Signature("no DVLB magic".into())));
    }
    let n = rd(buf, 4, "DVLE count")? as usize;
    if n == 0 {
        return Err(container(4, ContainerFault::BadValue("DVLB with no DVLE".into())));
    }
    if n > crate::limits::MAX_SHADERS_PER_DVLB {
        return Err(container(
            4,
            ContainerFault::ResourceCap(format!(
                "resource cap: {n} DVLEs exceed the limit of {} shaders per DVLB",
                crate::limits::MAX_SHADERS_PER_DVLB
            )),
        ));
    }
    // offset table + DVLP header must fit
    let p = n
        .checked_mul(4)
        .and_then(|t| t.checked_add(8))
        .filter(|&p| p.checked_add(DVLP_HEADER_SIZE).is_some_and(|e| e <= buf.len()))
        .ok_or_else(|| container(4, ContainerFault::OutOfBounds(format!("DVLE count {n} leaves no room for the offset table and DVLP"))))?;
    if &buf[p..p + 4] != DVLP_MAGIC {
        return Err(container(p as u64, ContainerFault::Signature("no DVLP after the DVLE offset table".into())));
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
        if d.checked_add(DVLE_HEADER_SIZE).is_none_or(|e| e > buf.len()) {
            return Err(container(8 + 4 * i as u64, ContainerFault::OutOfBounds(format!("DVLE {i} offset 0x{d:X} runs past the end"))));
        }
        if &buf[d..d + 4] != DVLE_MAGIC {
            return Err(container(d as u64, ContainerFault::Signature(format!("DVLE {i}: no DVLE magic at 0x{d:X}"))));
        }
        let shader_type = buf[d + 6];
        if shader_type > 1 {
            return Err(container(d as u64 + 6, ContainerFault::BadValue(format!("DVLE {i}: unknown shader type {shader_type}"))));
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
    parse(buf).ok().map(|d| d.len).or_else(|| over_cap_len(buf))
}

/// A DVLB that lists more DVLEs than [`crate::limits::MAX_SHADERS_PER_DVLB`] but is otherwise
/// laid out as one (its DVLP follows the offset table): detected, up to the end of its DVLP
/// header, so that listing its shaders fails naming the cap. Refusing it at detection made
/// the file vanish from the scan without a word.
fn over_cap_len(buf: &[u8]) -> Option<usize> {
    let n = rd(buf, 4, "DVLE count").ok()? as usize;
    if n <= crate::limits::MAX_SHADERS_PER_DVLB {
        return None;
    }
    let p = n.checked_mul(4)?.checked_add(8)?;
    let end = p.checked_add(DVLP_HEADER_SIZE).filter(|&e| e <= buf.len())?;
    (&buf[p..p + 4] == DVLP_MAGIC).then_some(end)
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

// ---------------------------------------------------------------------------------------------
// Full parse: code, operand descriptors and every DVLE table.
// ---------------------------------------------------------------------------------------------

/// Converts a float24 (1 sign, 7 exponent bias 63, 16 mantissa; low 24 bits of `raw`) to f32.
/// Exact: every f24 is an f32. Exponent 0 is ±0 (the hardware flushes denormals), exponent 0x7F
/// is ±inf (mantissa 0) or NaN (mantissa kept in the high f32 mantissa bits).
pub fn f24_to_f32(raw: u32) -> f32 {
    let sign = (raw >> 23) & 1;
    let exp = (raw >> 16) & 0x7F;
    let man = raw & 0xFFFF;
    let bits = if exp == 0 {
        sign << 31
    } else if exp == 0x7F {
        (sign << 31) | (0xFF << 23) | (man << 7)
    } else {
        (sign << 31) | ((exp + 64) << 23) | (man << 7)
    };
    f32::from_bits(bits)
}

/// A DVLE constant (20-byte entry).
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// `b{reg}`.
    Bool(bool),
    /// `i{reg}` = (x, y, z, w) as u8.
    Int([u8; 4]),
    /// `c{reg}`, converted from float24.
    Float([f32; 4]),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    pub reg: u16,
    pub value: ConstValue,
}

/// Output table entry: register `reg` lanes `mask` (bit 0 = x) carry attribute `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    pub ty: u16,
    pub reg: u16,
    pub mask: u8,
}

/// Output attribute types (libctru `DVLE_outputAttribute_t`).
pub fn output_type_name(ty: u16) -> &'static str {
    match ty {
        0 => "position",
        1 => "normalquat",
        2 => "color",
        3 => "texcoord0",
        4 => "texcoord0w",
        5 => "texcoord1",
        6 => "texcoord2",
        8 => "view",
        9 => "dummy",
        _ => "unknown",
    }
}

/// Uniform table entry; `first..=last` in the unified space (0x00-0x0F v, 0x10-0x6F c0-c95,
/// 0x70-0x73 i0-i3, 0x78-0x87 b0-b15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uniform {
    pub name: String,
    pub first: u16,
    pub last: u16,
}

impl Uniform {
    /// `v3`, `c10..c13`, `i0`, `b2` style text of the register range.
    pub fn range_text(&self) -> String {
        let one = |r: u16| match r {
            0x00..=0x0F => format!("v{r}"),
            0x10..=0x6F => format!("c{}", r - 0x10),
            0x70..=0x73 => format!("i{}", r - 0x70),
            0x78..=0x87 => format!("b{}", r - 0x78),
            _ => format!("?{r:#x}"),
        };
        if self.first == self.last {
            one(self.first)
        } else {
            format!("{}..{}", one(self.first), one(self.last))
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub id: u8,
    /// Code offset in words.
    pub offset: u32,
    pub name: String,
}

/// Geometry-shader mode (DVLE bytes 0x14-0x17).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsMode {
    /// Every `stride` input registers form one invocation, read from `v0..`.
    Point,
    /// Variable (subdivision): `c{start}` = vertex count, then `full` full vertices, then
    /// position-only vertices, in float uniforms.
    Variable { full: u8 },
    /// Fixed (particle): `count` vertices written to the float uniforms from `c{start}`.
    Fixed { start: u8, count: u8 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DvleInfo {
    pub index: u32,
    /// Offset of the DVLE from the DVLB start.
    pub offset: usize,
    /// One past the last byte of the DVLE header or any of its tables.
    pub end: usize,
    pub stage: Stage,
    pub version: u16,
    /// Flags bit 0: merge VS and GS outmaps.
    pub merge_outmaps: bool,
    /// Entry point and end (word offsets into the shared code blob).
    pub main: u32,
    pub endmain: u32,
    pub input_mask: u16,
    pub output_mask: u16,
    /// Raw GS mode bytes 0x14..0x18 (mode, fixed start, variable count, fixed count).
    pub gs_bytes: [u8; 4],
    pub constants: Vec<Constant>,
    pub labels: Vec<Label>,
    pub outputs: Vec<Output>,
    pub uniforms: Vec<Uniform>,
}

impl DvleInfo {
    /// The geometry mode (geometry DVLEs only).
    pub fn gs_mode(&self) -> Result<GsMode, ShaderError> {
        let [mode, start, var, fixed] = self.gs_bytes;
        match mode {
            0 => Ok(GsMode::Point),
            1 => Ok(GsMode::Variable { full: var }),
            2 => Ok(GsMode::Fixed { start, count: fixed }),
            m => {
                Err(container(self.offset as u64 + 0x14, ContainerFault::BadValue(format!("DVLE {}: unknown geometry-shader mode {m}", self.index))))
            }
        }
    }
}

/// A fully parsed DVLB.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub code: Vec<u32>,
    /// Operand descriptors (low words of the 8-byte entries).
    pub opdescs: Vec<u32>,
    pub dvles: Vec<DvleInfo>,
    /// Detected DVLB length (see [`Dvlb::len`]).
    pub len: usize,
}

fn cstr(buf: &[u8], at: usize, limit: usize) -> String {
    let end = buf[at.min(limit)..limit].iter().position(|&b| b == 0).map_or(limit, |p| at + p);
    String::from_utf8_lossy(&buf[at.min(end)..end]).into_owned()
}

/// Why a buffer starting with the `DVOJ` magic (an unlinked shader object, 3dbrew "SHBIN") is not
/// translated; None for any other buffer. The scanner reports it for files that start with it
/// (only at offset 0: a 4-byte magic anywhere in a file would be mostly false hits).
pub fn dvoj_error(buf: &[u8]) -> Option<ShaderError> {
    (buf.get(..4) == Some(&b"DVOJ"[..])).then(|| {
        container(
            0,
            ContainerFault::Unsupported(
                "DVOJ (unlinked shader object) is not supported: its layout is not publicly documented and no tool writes it; link it into a DVLB"
                    .into(),
            ),
        )
    })
}

/// Parses everything (bounds were checked by [`parse`]; every read here is checked again).
pub fn parse_program(buf: &[u8]) -> Result<Program, ShaderError> {
    if let Some(e) = dvoj_error(buf) {
        return Err(e);
    }
    let d = parse(buf)?;
    crate::formats::check_microcode(4 * d.code_words, Some(d.code_offset as u64))?;
    let code = (0..d.code_words).map(|i| rd(buf, d.code_offset + 4 * i, "code word")).collect::<Result<Vec<_>, _>>()?;
    let opdescs = (0..d.opdesc_count).map(|i| rd(buf, d.opdesc_offset + 8 * i, "operand descriptor")).collect::<Result<Vec<_>, _>>()?;
    let mut dvles = Vec::new();
    for (i, e) in d.dvles.iter().enumerate() {
        let o = e.offset;
        let h16 = |off: usize| u16::from_le_bytes([buf[o + off], buf[o + off + 1]]);
        let tab = |field: usize| -> Result<(usize, usize), ShaderError> {
            Ok((o + rd(buf, o + field, "DVLE table offset")? as usize, rd(buf, o + field + 4, "DVLE table count")? as usize))
        };
        let mut end = o + DVLE_HEADER_SIZE;
        let (sym_off, sym_len) = tab(0x38)?;
        if sym_len > 0 {
            end = end.max(sym_off + sym_len);
        }
        let sym_limit = if sym_len > 0 { sym_off + sym_len } else { sym_off };
        let symbol = |rel: u32| -> String {
            let at = sym_off + rel as usize;
            if sym_len == 0 || at >= sym_limit {
                String::new()
            } else {
                cstr(buf, at, sym_limit)
            }
        };
        let (c_off, c_n) = tab(0x18)?;
        let mut constants = Vec::with_capacity(c_n);
        for k in 0..c_n {
            let at = c_off + 20 * k;
            end = end.max(at + 20);
            let ty = u16::from_le_bytes([buf[at], buf[at + 1]]);
            let reg = u16::from_le_bytes([buf[at + 2], buf[at + 3]]);
            let (value, max) = match ty {
                0 => (ConstValue::Bool(buf[at + 4] != 0), 16),
                1 => (ConstValue::Int([buf[at + 4], buf[at + 5], buf[at + 6], buf[at + 7]]), 4),
                2 => {
                    let mut v = [0f32; 4];
                    for (j, x) in v.iter_mut().enumerate() {
                        *x = f24_to_f32(rd(buf, at + 4 + 4 * j, "constant")?);
                    }
                    (ConstValue::Float(v), 96)
                }
                t => return Err(container(at as u64, ContainerFault::BadValue(format!("DVLE {i} constant {k}: unknown type {t}")))),
            };
            if reg >= max {
                return Err(container(
                    at as u64 + 2,
                    ContainerFault::BadValue(format!("DVLE {i} constant {k}: register {reg} out of range (< {max})")),
                ));
            }
            constants.push(Constant { reg, value });
        }
        let (l_off, l_n) = tab(0x20)?;
        let mut labels = Vec::with_capacity(l_n);
        for k in 0..l_n {
            let at = l_off + 16 * k;
            end = end.max(at + 16);
            labels.push(Label { id: buf[at], offset: rd(buf, at + 4, "label")?, name: symbol(rd(buf, at + 12, "label")?) });
        }
        let (out_off, out_n) = tab(0x28)?;
        let mut outputs = Vec::with_capacity(out_n);
        for k in 0..out_n {
            let at = out_off + 8 * k;
            end = end.max(at + 8);
            let lo = rd(buf, at, "output")?;
            let hi = rd(buf, at + 4, "output")?;
            let out = Output { ty: lo as u16, reg: (lo >> 16) as u16, mask: (hi & 0xF) as u8 };
            if out.reg > 15 {
                return Err(container(at as u64 + 2, ContainerFault::BadValue(format!("DVLE {i} output {k}: register o{} out of range", out.reg))));
            }
            if !matches!(out.ty, 0..=6 | 8 | 9) {
                return Err(container(at as u64, ContainerFault::BadValue(format!("DVLE {i} output {k}: unknown output type {}", out.ty))));
            }
            outputs.push(out);
        }
        let (u_off, u_n) = tab(0x30)?;
        let mut uniforms = Vec::with_capacity(u_n);
        for k in 0..u_n {
            let at = u_off + 8 * k;
            end = end.max(at + 8);
            let first = u16::from_le_bytes([buf[at + 4], buf[at + 5]]);
            let last = u16::from_le_bytes([buf[at + 6], buf[at + 7]]);
            uniforms.push(Uniform { name: symbol(rd(buf, at, "uniform")?), first, last });
        }
        let main = rd(buf, o + 8, "DVLE main")?;
        if main as usize >= code.len() {
            return Err(container(
                o as u64 + 8,
                ContainerFault::OutOfBounds(format!("DVLE {i}: entry point {main} lies past the code ({} words)", code.len())),
            ));
        }
        dvles.push(DvleInfo {
            index: i as u32,
            offset: o,
            end,
            stage: e.stage().expect("checked by parse"),
            version: h16(4),
            merge_outmaps: buf[o + 7] & 1 != 0,
            main,
            endmain: rd(buf, o + 0xC, "DVLE endmain")?,
            input_mask: h16(0x10),
            output_mask: h16(0x12),
            gs_bytes: [buf[o + 0x14], buf[o + 0x15], buf[o + 0x16], buf[o + 0x17]],
            constants,
            labels,
            outputs,
            uniforms,
        });
    }
    Ok(Program { code, opdescs, dvles, len: d.len })
}

#[cfg(test)]
mod cap_tests {
    /// Issue 23 B7: a small file claiming a thousand DVLEs is one error naming the cap, before
    /// any of them is parsed (the offset table of 1 000 entries fits in 4 KB).
    #[test]
    fn dvle_count_is_capped() {
        let mut buf = vec![0u8; 4096 + 64];
        buf[..4].copy_from_slice(b"DVLB");
        buf[4..8].copy_from_slice(&1000u32.to_le_bytes());
        let e = super::parse(&buf).unwrap_err();
        assert_eq!(e.offset(), Some(4));
        let cap = crate::formats::container_fault::ContainerFault::ResourceCap;
        assert!(
            matches!(&e, crate::formats::ShaderError::Pica(crate::formats::pica::error::PicaError::Container { fault, .. }) if *fault == cap("resource cap: 1000 DVLEs exceed the limit of 256 shaders per DVLB".into())),
            "{e:?}"
        );
    }
}
