//! SHARCFB: AGL `ResBinaryShaderArchive` version 8 (docs/isa/gx2.md §4).
//!
//! ```text
//! 0x00 u32 signature 'SHAB' (bytes "SHAB" big-endian, "BAHS" little-endian)
//! 0x04 u32 version (8)   0x08 u32 fileSize   0x0C u32 endian   0x10 u32 resolved   0x14 u32 nameLen
//! 0x18 name (nameLen bytes incl. NUL)
//! ResShaderBinaryArray    { u32 size (incl. this 8-byte header), u32 num }
//!   num × { u32 entrySize, u32 type (0 VS, 1 PS, 2 GS), s32 dataOffset, u32 dataSize }
//!         data at (end of this 0x10-byte entry header) + dataOffset: GX2 struct, arrays,
//!         strings, program; struct pointers are plain offsets from the struct start
//! ResBinaryShaderProgramArray { u32 size, u32 num }
//!   num × { u32 size, u32 nameLen, u32 kind (1 VS | 2 PS | 4 GS), s32 baseIndex, name, ... }
//! ```
//! The byte order is taken from the signature bytes; real files are little-endian. All reads
//! tolerate unaligned offsets.

use super::error::{container, no_such_shader, within};
use super::shader_struct::{self, Endian, ShaderKind};
use crate::formats::container_fault::ContainerFault;
use crate::formats::{ShaderEntry, ShaderError};

pub const VERSION: u32 = 8;
pub const HEADER_SIZE: usize = 0x18;
const ENTRY_HEADER_SIZE: usize = 0x10;

/// Byte order from the first four bytes ("SHAB" big-endian, "BAHS" little-endian).
pub fn endian_of(buf: &[u8]) -> Option<Endian> {
    match buf.get(..4)? {
        b"SHAB" => Some(Endian::Big),
        b"BAHS" => Some(Endian::Little),
        _ => None,
    }
}

/// Parsed archive header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub endian: Endian,
    pub file_size: usize,
    pub name_len: usize,
    /// Offset of the ResShaderBinaryArray.
    pub binary_array: usize,
    /// Its size in bytes, including its 8-byte header.
    pub binary_array_size: usize,
    pub binary_count: u32,
}

/// Reads and checks the header at `buf[0]`: signature, version 8, `fileSize` inside `buf`, the
/// name and the binary array inside `fileSize`.
pub fn read_header(buf: &[u8]) -> Result<Header, ShaderError> {
    let e = endian_of(buf).ok_or_else(|| container(0, ContainerFault::Signature("no SHAB/BAHS signature".into())))?;
    let version = e.read_u32(buf, 4, "SHARCFB version")?;
    if version != VERSION {
        return Err(container(4, ContainerFault::Header(format!("SHARCFB version {version}, expected {VERSION}"))));
    }
    let file_size = e.read_u32(buf, 8, "SHARCFB file size")? as usize;
    if file_size > buf.len() {
        return Err(container(
            8,
            ContainerFault::OutOfBounds(format!("SHARCFB fileSize 0x{file_size:X} exceeds the 0x{:X} bytes available", buf.len())),
        ));
    }
    let buf = &buf[..file_size];
    let name_len = e.read_u32(buf, 0x14, "SHARCFB name length")? as usize;
    let binary_array = HEADER_SIZE
        .checked_add(name_len)
        .filter(|&a| a.checked_add(8).is_some_and(|end| end <= file_size))
        .ok_or_else(|| container(0x14, ContainerFault::OutOfBounds(format!("SHARCFB name length 0x{name_len:X} runs past fileSize"))))?;
    let binary_array_size = e.read_u32(buf, binary_array, "binary array size")? as usize;
    let binary_count = e.read_u32(buf, binary_array + 4, "binary count")?;
    if binary_array_size < 8 || binary_array_size > file_size - binary_array {
        return Err(container(
            binary_array as u64,
            ContainerFault::OutOfBounds(format!("binary array size 0x{binary_array_size:X} does not fit in fileSize 0x{file_size:X}")),
        ));
    }
    if (binary_count as u64) * ENTRY_HEADER_SIZE as u64 > (binary_array_size - 8) as u64 {
        return Err(container(
            binary_array as u64 + 4,
            ContainerFault::OutOfBounds(format!("{binary_count} binaries cannot fit in a 0x{binary_array_size:X}-byte binary array")),
        ));
    }
    Ok(Header { endian: e, file_size, name_len, binary_array, binary_array_size, binary_count })
}

/// Length of the SHARCFB starting at `buf[0]` (its `fileSize`), if it is one.
pub fn probe(buf: &[u8]) -> Option<usize> {
    read_header(buf).ok().map(|h| h.file_size)
}

/// Names of the programs in the program array, as (baseIndex, name); empty when the array is
/// missing or malformed (names are informational, they never make a container fail).
fn program_names(buf: &[u8], h: &Header) -> Vec<(i64, String)> {
    let e = h.endian;
    let mut out = Vec::new();
    let arr = h.binary_array + h.binary_array_size;
    let (Some(size), Some(num)) = (e.u32_at(buf, arr), e.u32_at(buf, arr + 4)) else { return out };
    let end = arr.saturating_add(size as usize).min(buf.len());
    let mut q = arr + 8;
    for _ in 0..num {
        let (Some(psize), Some(name_len), Some(base)) = (e.u32_at(buf, q), e.u32_at(buf, q + 4), e.u32_at(buf, q + 12)) else {
            break;
        };
        let name_at = q + 0x10;
        let Some(raw) = buf.get(name_at..name_at.saturating_add(name_len as usize).min(end)) else { break };
        let raw = raw.split(|&c| c == 0).next().unwrap_or(&[]);
        out.push((base as i32 as i64, String::from_utf8_lossy(raw).into_owned()));
        if (psize as usize) < 0x10 {
            break;
        }
        q = match q.checked_add(psize as usize) {
            Some(n) if n < end => n,
            _ => break,
        };
    }
    out
}

/// One entry per shader binary of the archive, in array order (`index` = binary index); stage
/// from the entry's type (0 vertex, 1 pixel, 2 geometry); `name` = the program whose binaries
/// start at or before this index (largest `baseIndex` ≤ index), when the program array has one.
///
/// **Key**: XXH3-64 (seed 0) of the program (microcode) bytes the GX2 struct designates
/// (`program ptr` from the struct start, `size` bytes) — the same key as for that shader's
/// program block in a GFD file ([`shader_struct::key`]).
pub fn entries(bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    let h = read_header(bytes)?;
    let buf = &bytes[..h.file_size];
    let e = h.endian;
    let names = program_names(buf, &h);
    let array_end = h.binary_array + h.binary_array_size;
    let mut p = h.binary_array + 8;
    let mut out = Vec::with_capacity(h.binary_count as usize);
    for i in 0..h.binary_count {
        if p + ENTRY_HEADER_SIZE > array_end {
            return Err(container(p as u64, ContainerFault::OutOfBounds(format!("binary {i}: entry header runs past the binary array"))));
        }
        let entry_size = e.read_u32(buf, p, "binary entry size")? as usize;
        let ty = e.read_u32(buf, p + 4, "binary type")?;
        let data_off = e.read_u32(buf, p + 8, "binary data offset")? as i32 as i64;
        let data_size = e.read_u32(buf, p + 12, "binary data size")? as usize;
        if entry_size < ENTRY_HEADER_SIZE || entry_size > array_end - p {
            return Err(container(p as u64, ContainerFault::OutOfBounds(format!("binary {i}: entry size 0x{entry_size:X} out of range"))));
        }
        let kind = match ty {
            0 => ShaderKind::Vertex,
            1 => ShaderKind::Pixel,
            2 => ShaderKind::Geometry,
            t => return Err(container(p as u64 + 4, ContainerFault::BadValue(format!("binary {i}: unknown shader type {t}")))),
        };
        let data = (p + ENTRY_HEADER_SIZE) as i64 + data_off;
        if data < 0 || data as u64 + data_size as u64 > buf.len() as u64 {
            return Err(container(
                p as u64 + 8,
                ContainerFault::OutOfBounds(format!("binary {i}: data [0x{data:X}, +0x{data_size:X}) lies outside the archive")),
            ));
        }
        let data = data as usize;
        let shader = &buf[data..data + data_size];
        let pref = shader_struct::read_program_ref(shader, 0, kind, e).map_err(|err| within(err, data as u64, format_args!("binary {i}")))?;
        let (ptr, size) = (pref.ptr as usize, pref.size as usize);
        let program = ptr.checked_add(size).and_then(|end| shader.get(ptr..end)).ok_or_else(|| {
            container(
                data as u64,
                ContainerFault::OutOfBounds(format!(
                    "binary {i}: program [0x{ptr:X}, +0x{size:X}) lies outside its 0x{data_size:X}-byte shader data"
                )),
            )
        })?;
        let name = names.iter().filter(|(b, _)| *b <= i as i64).max_by_key(|(b, _)| *b).map(|(_, n)| n.clone());
        let key = if kind == ShaderKind::Geometry {
            let copy = shader_struct::read_copy_program(shader, 0, e).map_err(|err| within(err, data as u64 + 0x58, format_args!("binary {i}")))?;
            shader_struct::key_geometry(program, &copy)
        } else {
            shader_struct::key(program)
        };
        out.push(ShaderEntry { stage: kind.stage(), index: i, key, name });
        p += entry_size;
    }
    Ok(out)
}

/// Fully decodes binary `index` of the archive (struct, variables, program). Pointers are plain
/// offsets from the GX2 struct start; every array, string and the program must lie inside the
/// binary's shader data.
pub fn load(bytes: &[u8], index: u32) -> Result<shader_struct::Gx2Shader, ShaderError> {
    let h = read_header(bytes)?;
    let buf = &bytes[..h.file_size];
    let e = h.endian;
    let array_end = h.binary_array + h.binary_array_size;
    let mut p = h.binary_array + 8;
    for i in 0..h.binary_count {
        if p + ENTRY_HEADER_SIZE > array_end {
            break;
        }
        let entry_size = e.read_u32(buf, p, "binary entry size")? as usize;
        if entry_size < ENTRY_HEADER_SIZE || entry_size > array_end - p {
            break;
        }
        if i == index {
            let ty = e.read_u32(buf, p + 4, "binary type")?;
            let data_off = e.read_u32(buf, p + 8, "binary data offset")? as i32 as i64;
            let data_size = e.read_u32(buf, p + 12, "binary data size")? as usize;
            let kind = match ty {
                0 => ShaderKind::Vertex,
                1 => ShaderKind::Pixel,
                2 => ShaderKind::Geometry,
                t => return Err(container(p as u64 + 4, ContainerFault::BadValue(format!("binary {i}: unknown shader type {t}")))),
            };
            let data = (p + ENTRY_HEADER_SIZE) as i64 + data_off;
            if data < 0 || data as u64 + data_size as u64 > buf.len() as u64 {
                return Err(container(p as u64 + 8, ContainerFault::OutOfBounds(format!("binary {i}: data lies outside the archive"))));
            }
            let data = data as usize;
            let shader = &buf[data..data + data_size];
            let pref = shader_struct::read_program_ref(shader, 0, kind, e).map_err(|err| within(err, data as u64, format_args!("binary {i}")))?;
            let (ptr, size) = (pref.ptr as usize, pref.size as usize);
            let program = ptr
                .checked_add(size)
                .and_then(|end| shader.get(ptr..end))
                .ok_or_else(|| container(data as u64, ContainerFault::OutOfBounds(format!("binary {i}: program lies outside its shader data"))))?
                .to_vec();
            let len = shader.len();
            let resolve = move |q: u32| -> Option<usize> { ((q as usize) < len).then_some(q as usize) };
            let mut s = shader_struct::decode_struct(shader, 0, kind, e, kind.struct_size(), &resolve, program).map_err(|err| {
                let at = data as u64 + err.offset().unwrap_or(0);
                within(err, at, format_args!("binary {i}"))
            })?;
            if kind == ShaderKind::Geometry {
                s.copy_program =
                    shader_struct::read_copy_program(shader, 0, e).map_err(|err| within(err, data as u64 + 0x58, format_args!("binary {i}")))?;
            }
            return Ok(s);
        }
        p += entry_size;
    }
    Err(no_such_shader(format!("SHARCFB has no binary {index}")))
}

/// One symbol of a program's symbol arrays: `{ size, s32 offset, nameLen, idLen,
/// defaultValueSize, variationNum }` + name + id + default value + one enable byte per variation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub offset: i32,
    pub name: String,
    pub id: String,
    pub default_value: Vec<u8>,
    pub enabled: Vec<u8>,
}

/// One variation macro: `{ size, nameLen, idLen, valueNum }` + name + id + values, each value a
/// `{ u32 len }` + NUL-terminated string. (shrec's layout for this record; no public file shows it,
/// so the reader is only checked against shrec's own writer.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Macro {
    pub name: String,
    pub id: String,
    pub values: Vec<String>,
}

/// A ResBinaryShaderProgram with its six arrays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    /// 1 VS | 2 PS | 4 GS.
    pub kind: u32,
    pub base_index: i32,
    pub macros: Vec<Macro>,
    /// The variation-defaults array, as macro-shaped records (id = default value).
    pub defaults: Vec<Macro>,
    pub uniform_vars: Vec<Symbol>,
    pub uniform_blocks: Vec<Symbol>,
    pub sampler_vars: Vec<Symbol>,
    pub attrib_vars: Vec<Symbol>,
}

impl Program {
    /// Number of variations: the product of the macros' value counts (1 with no macros).
    pub fn variation_count(&self) -> usize {
        self.macros.iter().map(|m| m.values.len().max(1)).product()
    }
    /// Binary index for variation `i` and stage `t` (0 VS, 1 PS, 2 GS): `baseIndex + t + n * i`
    /// with n = 3 when the program has a geometry shader, else 2 (agl aglShaderProgramArchive.cpp).
    pub fn binary_index(&self, variation: usize, stage: usize) -> i64 {
        let n = if self.kind & 4 != 0 { 3 } else { 2 };
        self.base_index as i64 + stage as i64 + n * variation as i64
    }
}

/// Reads integers of the file's byte order, with offsets checked against the file.
struct Reader<'a> {
    b: &'a [u8],
    e: Endian,
}

impl Reader<'_> {
    fn u32(&self, at: usize) -> Result<u32, ShaderError> {
        self.e.read_u32(self.b, at, "SHARCFB program array")
    }
    fn bytes(&self, at: usize, n: usize) -> Result<&[u8], ShaderError> {
        at.checked_add(n)
            .and_then(|end| self.b.get(at..end))
            .ok_or_else(|| container(at as u64, ContainerFault::OutOfBounds("SHARCFB program array: string runs past the end".into())))
    }
    fn cstr(&self, at: usize, n: usize) -> Result<String, ShaderError> {
        let raw = self.bytes(at, n)?;
        let raw = raw.split(|&c| c == 0).next().unwrap_or(&[]);
        Ok(String::from_utf8_lossy(raw).into_owned())
    }
    /// `{ u32 size, u32 num }` then records that each start with their own u32 size.
    fn array<T>(&self, at: usize, f: &dyn Fn(usize) -> Result<T, ShaderError>) -> Result<(Vec<T>, usize), ShaderError> {
        let size = self.u32(at)? as usize;
        let num = self.u32(at + 4)?;
        if size < 8 || at + size > self.b.len() || num as usize > size {
            return Err(container(at as u64, ContainerFault::BadValue(format!("SHARCFB array at 0x{at:X}: size 0x{size:X} / count {num} invalid"))));
        }
        let mut out = Vec::new();
        let mut q = at + 8;
        for _ in 0..num {
            let rsize = self.u32(q)? as usize;
            if rsize < 4 || q + rsize > at + size {
                return Err(container(q as u64, ContainerFault::BadValue(format!("SHARCFB record at 0x{q:X}: size 0x{rsize:X} invalid"))));
            }
            out.push(f(q)?);
            q += rsize;
        }
        Ok((out, at + size))
    }
    fn macro_rec(&self, q: usize) -> Result<Macro, ShaderError> {
        let (nl, il, vn) = (self.u32(q + 4)? as usize, self.u32(q + 8)? as usize, self.u32(q + 12)?);
        let name = self.cstr(q + 16, nl)?;
        let id = self.cstr(q + 16 + nl, il)?;
        let mut v = q + 16 + nl + il;
        let mut values = Vec::new();
        for _ in 0..vn.min(0x10000) {
            let l = self.u32(v)? as usize;
            values.push(self.cstr(v + 4, l)?);
            v += 4 + l;
        }
        Ok(Macro { name, id, values })
    }
    fn symbol(&self, q: usize) -> Result<Symbol, ShaderError> {
        let offset = self.u32(q + 4)? as i32;
        let (nl, il, dl, vn) = (self.u32(q + 8)? as usize, self.u32(q + 12)? as usize, self.u32(q + 16)? as usize, self.u32(q + 20)? as usize);
        let name = self.cstr(q + 24, nl)?;
        let id = self.cstr(q + 24 + nl, il)?;
        let default_value = self.bytes(q + 24 + nl + il, dl)?.to_vec();
        let enabled = self.bytes(q + 24 + nl + il + dl, vn)?.to_vec();
        Ok(Symbol { offset, name, id, default_value, enabled })
    }
}

/// Decodes the program array (names, variation macros, symbols).
pub fn programs(bytes: &[u8]) -> Result<Vec<Program>, ShaderError> {
    let h = read_header(bytes)?;
    let r = Reader { b: &bytes[..h.file_size], e: h.endian };
    let arr = h.binary_array + h.binary_array_size;
    let (progs, _) = r.array(arr, &|q| {
        let name_len = r.u32(q + 4)? as usize;
        let kind = r.u32(q + 8)?;
        let base_index = r.u32(q + 12)? as i32;
        let name = r.cstr(q + 16, name_len)?;
        let mut at = q + 16 + name_len;
        let (macros, n) = r.array(at, &|m| r.macro_rec(m))?;
        at = n;
        let (defaults, n) = r.array(at, &|m| r.macro_rec(m))?;
        at = n;
        let mut syms = Vec::new();
        for _ in 0..4 {
            let (s, n) = r.array(at, &|m| r.symbol(m))?;
            syms.push(s);
            at = n;
        }
        let attrib_vars = syms.pop().unwrap();
        let sampler_vars = syms.pop().unwrap();
        let uniform_blocks = syms.pop().unwrap();
        let uniform_vars = syms.pop().unwrap();
        Ok(Program { name, kind, base_index, macros, defaults, uniform_vars, uniform_blocks, sampler_vars, attrib_vars })
    })?;
    Ok(progs)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::formats::Stage;

    /// Builds a minimal SHARCFB (test-only; the real writer is a later issue): one binary per
    /// `(type, program)`, each a zeroed GX2 struct whose size/pointer fields designate the program,
    /// placed at a 0x100-aligned file offset like real files; plus a program array naming `name`.
    pub(crate) fn build(endian: Endian, name: &str, shaders: &[(u32, &[u8])]) -> Vec<u8> {
        let w = |v: &mut Vec<u8>, x: u32| match endian {
            Endian::Big => v.extend_from_slice(&x.to_be_bytes()),
            Endian::Little => v.extend_from_slice(&x.to_le_bytes()),
        };
        let put = |v: &mut [u8], at: usize, x: u32| {
            let b = match endian {
                Endian::Big => x.to_be_bytes(),
                Endian::Little => x.to_le_bytes(),
            };
            v[at..at + 4].copy_from_slice(&b);
        };
        let mut f = Vec::new();
        f.extend_from_slice(match endian {
            Endian::Big => b"SHAB",
            Endian::Little => b"BAHS",
        });
        w(&mut f, VERSION);
        w(&mut f, 0); // fileSize, patched below
        w(&mut f, if endian == Endian::Little { 1 } else { 0 });
        w(&mut f, 0);
        let mut nm = name.as_bytes().to_vec();
        nm.push(0);
        w(&mut f, nm.len() as u32);
        f.extend_from_slice(&nm);
        let arr = f.len();
        w(&mut f, 0); // array size, patched
        w(&mut f, shaders.len() as u32);
        for &(ty, prog) in shaders {
            let kind = [ShaderKind::Vertex, ShaderKind::Pixel, ShaderKind::Geometry][ty as usize];
            let entry = f.len();
            f.extend_from_slice(&[0; ENTRY_HEADER_SIZE]);
            let data = f.len();
            f.resize(data + kind.struct_size(), 0);
            // program at the next 0x100-aligned file offset
            let prog_at = (f.len() + 0xFF) & !0xFF;
            f.resize(prog_at, 0);
            f.extend_from_slice(prog);
            let (so, po) = kind.program_fields();
            put(&mut f, data + so, prog.len() as u32);
            put(&mut f, data + po, (prog_at - data) as u32);
            let esize = f.len() - entry;
            put(&mut f, entry, esize as u32);
            put(&mut f, entry + 4, ty);
            put(&mut f, entry + 8, 0);
            let dsize = f.len() - data;
            put(&mut f, entry + 12, dsize as u32);
        }
        let asz = f.len() - arr;
        put(&mut f, arr, asz as u32);
        let parr = f.len();
        w(&mut f, 0);
        w(&mut f, 1);
        let prog = f.len();
        w(&mut f, 0);
        w(&mut f, nm.len() as u32);
        w(&mut f, 1 | 2);
        w(&mut f, 0);
        f.extend_from_slice(&nm);
        f.extend_from_slice(&[0; 6 * 8]); // six empty arrays {size, num}
        let psz = f.len() - prog;
        put(&mut f, prog, psz as u32);
        let pasz = f.len() - parr;
        put(&mut f, parr, pasz as u32);
        let total = f.len();
        put(&mut f, 8, total as u32);
        f
    }

    const VS: &[u8] = &[0x13, 0, 0, 0, 0, 0, 0x80, 0x09, 1, 2, 3, 4, 5, 6, 7, 8];
    const PS: &[u8] = &[0, 0, 0, 0, 0, 0, 0xA0, 0x94];

    #[test]
    fn synthetic_both_endians() {
        for e in [Endian::Little, Endian::Big] {
            let f = build(e, "prog_a", &[(0, VS), (1, PS)]);
            assert_eq!(probe(&f), Some(f.len()), "{e:?}");
            let es = entries(&f).unwrap();
            assert_eq!(es.len(), 2);
            assert_eq!(es[0].stage, Stage::Vertex);
            assert_eq!(es[1].stage, Stage::Pixel);
            assert_eq!(es[0].index, 0);
            assert_eq!(es[1].index, 1);
            assert_eq!(es[0].key, xxhash_rust::xxh3::xxh3_64(VS));
            assert_eq!(es[1].key, xxhash_rust::xxh3::xxh3_64(PS));
            assert_eq!(es[0].name.as_deref(), Some("prog_a"));
            // odd name length: GX2 struct at an unaligned offset
            let f = build(e, "ab", &[(2, VS)]);
            let es = entries(&f).unwrap();
            assert_eq!(es[0].stage, Stage::Geometry);
            assert_eq!(es[0].key, xxhash_rust::xxh3::xxh3_64(VS));
        }
    }

    #[test]
    fn rejects_bad_headers_and_truncation() {
        let f = build(Endian::Little, "x", &[(0, VS)]);
        for cut in 0..f.len() {
            // never panics; a truncated archive is never accepted
            assert_eq!(probe(&f[..cut]), None, "cut {cut}");
            let _ = entries(&f[..cut]);
        }
        let mut g = f.clone();
        g[4] = 7; // version
        assert!(probe(&g).is_none());
        // a program pointer past the data is an error naming the binary
        let mut g = f.clone();
        let data = 0x18 + 2 + 8 + 0x10;
        g[data + 0xD4..data + 0xD8].copy_from_slice(&0xFFFF_0000u32.to_le_bytes());
        let err = entries(&g).unwrap_err();
        assert!(
            matches!(&err, ShaderError::Gx2(crate::formats::gx2::error::Gx2Error::Container { fault: ContainerFault::OutOfBounds(t), .. }) if t.starts_with("binary 0: ")),
            "{err:?}"
        );
        // a huge binary count is rejected without allocating for it
        let mut g = f.clone();
        g[0x18 + 2 + 4..0x18 + 2 + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(probe(&g).is_none());
    }
}
