//! GFD (`Gfx2`, `.gsh`) files (docs/isa/gx2.md §3): a 0x20-byte big-endian file header, then
//! `BLK{` blocks (0x20-byte header + data) up to the end-of-file block. Shader header blocks hold a
//! big-endian GX2 shader struct (tagged pointers, `}BLK` relocation trailer); the program sits in a
//! separate program block.

use super::error::{container, no_such_shader, within};
use super::shader_struct::{self, Endian, ShaderKind};
use crate::formats::container_fault::ContainerFault;
use crate::formats::{ShaderEntry, ShaderError};

pub const FILE_MAGIC: &[u8; 4] = b"Gfx2";
pub const BLOCK_MAGIC: &[u8; 4] = b"BLK{";
pub const FILE_HEADER_SIZE: usize = 0x20;
pub const BLOCK_HEADER_SIZE: usize = 0x20;

/// Block types (GFD v7 numbering).
pub mod block_type {
    pub const END_OF_FILE: u32 = 1;
    pub const PADDING: u32 = 2;
    pub const VERTEX_HEADER: u32 = 3;
    pub const VERTEX_PROGRAM: u32 = 5;
    pub const PIXEL_HEADER: u32 = 6;
    pub const PIXEL_PROGRAM: u32 = 7;
    pub const GEOMETRY_HEADER: u32 = 8;
    pub const GEOMETRY_PROGRAM: u32 = 9;
    pub const GEOMETRY_COPY_PROGRAM: u32 = 10;
}

/// Human name of a block type, for error messages.
pub fn block_name(t: u32) -> &'static str {
    match t {
        1 => "end-of-file",
        2 => "padding",
        3 => "vertex shader header",
        5 => "vertex shader program",
        6 => "pixel shader header",
        7 => "pixel shader program",
        8 => "geometry shader header",
        9 => "geometry shader program",
        10 => "geometry shader copy program",
        11 => "texture header",
        12 => "texture image",
        13 => "texture mipmap",
        14 => "compute shader header",
        15 => "compute shader program",
        _ => "unknown",
    }
}

/// One block of a GFD file; offsets are relative to the file (container) start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Offset of the `BLK{` header.
    pub offset: usize,
    pub block_type: u32,
    /// Offset of the block data.
    pub data_offset: usize,
    pub data_size: usize,
    pub id: u32,
    pub index: u32,
}

/// Checks the GFD file header at `buf[0]` (magic, header size, major version 6 or 7).
fn check_file_header(buf: &[u8]) -> Result<(), ShaderError> {
    let e = Endian::Big;
    if buf.get(..4) != Some(&FILE_MAGIC[..]) {
        return Err(container(0, ContainerFault::Signature("no Gfx2 magic".into())));
    }
    let hsz = e.read_u32(buf, 4, "GFD header size")? as usize;
    if hsz != FILE_HEADER_SIZE {
        return Err(container(4, ContainerFault::Header(format!("GFD header size 0x{hsz:X}, expected 0x20"))));
    }
    let major = e.read_u32(buf, 8, "GFD major version")?;
    if major != 6 && major != 7 {
        return Err(container(8, ContainerFault::Header(format!("GFD major version {major}, expected 6 or 7"))));
    }
    if buf.len() < FILE_HEADER_SIZE {
        return Err(container(0, ContainerFault::OutOfBounds("truncated GFD file header".into())));
    }
    Ok(())
}

/// The block whose `BLK{` header is at `buf[pos]`, checked to lie inside `buf`; returns it with
/// the offset where its data ends (the next block's offset). Offsets are relative to `buf`.
fn read_block(buf: &[u8], pos: usize) -> Result<(Block, usize), ShaderError> {
    let e = Endian::Big;
    if pos + BLOCK_HEADER_SIZE > buf.len() {
        return Err(container(pos as u64, ContainerFault::OutOfBounds("GFD ends before its end-of-file block".into())));
    }
    if &buf[pos..pos + 4] != BLOCK_MAGIC {
        return Err(container(pos as u64, ContainerFault::Signature("expected a BLK{ block header".into())));
    }
    let bhs = e.read_u32(buf, pos + 4, "block header size")? as usize;
    if bhs != BLOCK_HEADER_SIZE {
        return Err(container(pos as u64 + 4, ContainerFault::Header(format!("block header size 0x{bhs:X}, expected 0x20"))));
    }
    let block_type = e.read_u32(buf, pos + 0x10, "block type")?;
    let data_size = e.read_u32(buf, pos + 0x14, "block data size")? as usize;
    let id = e.read_u32(buf, pos + 0x18, "block id")?;
    let index = e.read_u32(buf, pos + 0x1C, "block index")?;
    let data_offset = pos + BLOCK_HEADER_SIZE;
    let end = data_offset.checked_add(data_size).filter(|&end| end <= buf.len()).ok_or_else(|| {
        container(
            pos as u64 + 0x14,
            ContainerFault::OutOfBounds(format!("{} block at 0x{pos:X}: data size 0x{data_size:X} runs past the end", block_name(block_type))),
        )
    })?;
    Ok((Block { offset: pos, block_type, data_offset, data_size, id, index }, end))
}

/// Walks the blocks of a GFD file at `buf[0]`. Returns the blocks up to and including the
/// end-of-file block, and the container length (the end of the end-of-file block).
/// Terminates: every block is at least 0x20 bytes and must lie inside `buf`.
pub fn walk(buf: &[u8]) -> Result<(Vec<Block>, usize), ShaderError> {
    check_file_header(buf)?;
    let mut blocks = Vec::new();
    let mut pos = FILE_HEADER_SIZE;
    loop {
        let (block, end) = read_block(buf, pos)?;
        blocks.push(block);
        if block.block_type == block_type::END_OF_FILE {
            return Ok((blocks, end));
        }
        pos = end;
    }
}

/// Length of the GFD file starting at `buf[0]` (through its end-of-file block), if it is one.
pub fn probe(buf: &[u8]) -> Option<usize> {
    walk(buf).ok().map(|(_, len)| len)
}

/// What [`probe_at`] learnt about block chains, by the offset of a block in the buffer: where
/// the chain from that block on ends (the end of its end-of-file block), or `None` when it is
/// malformed. Shared by every probe of one buffer.
#[derive(Default)]
pub struct ChainEnds(std::collections::HashMap<usize, Option<usize>>);

/// [`probe`] of the GFD file at `buf[offset]`, in time linear over all calls on one buffer.
///
/// Whether the block chain from a given offset reaches an end-of-file block, and where, depends
/// only on the buffer and that offset, not on which file header the chain started from. Probing
/// every `Gfx2` of a buffer by [`walk`] costs the chain's length per magic, so a crafted file of
/// nested headers over one long chain (a `Gfx2` header in every padding block) took time
/// quadratic in its size (4 MB, 34 s). Here each block offset is read once per
/// buffer: a walk stops at the first block already known and hands its outcome to every block
/// it visited. The result equals `probe(&buf[offset..])`: the same checks (`check_file_header`,
/// `read_block`) on the same bytes, and both are bounded by the end of `buf`.
pub fn probe_at(buf: &[u8], offset: usize, known: &mut ChainEnds) -> Option<usize> {
    let file = buf.get(offset..)?;
    check_file_header(file).ok()?;
    let mut visited = Vec::new();
    let mut pos = offset + FILE_HEADER_SIZE;
    let end = loop {
        if let Some(&end) = known.0.get(&pos) {
            break end;
        }
        visited.push(pos);
        match read_block(buf, pos) {
            Err(_) => break None,
            Ok((b, end)) if b.block_type == block_type::END_OF_FILE => break Some(end),
            Ok((_, end)) => pos = end,
        }
    };
    for p in visited {
        known.0.insert(p, end);
    }
    end.map(|end| end - offset)
}

fn shader_kind(block_type: u32) -> Option<(ShaderKind, bool)> {
    use block_type::*;
    Some(match block_type {
        VERTEX_HEADER => (ShaderKind::Vertex, true),
        VERTEX_PROGRAM => (ShaderKind::Vertex, false),
        PIXEL_HEADER => (ShaderKind::Pixel, true),
        PIXEL_PROGRAM => (ShaderKind::Pixel, false),
        GEOMETRY_HEADER => (ShaderKind::Geometry, true),
        GEOMETRY_PROGRAM => (ShaderKind::Geometry, false),
        _ => return None,
    })
}

/// One entry per GX2 shader: a vertex / pixel / geometry header block paired with the next
/// program block of the same kind (the first header of that kind still without a program, like
/// wut's "N-th header ↔ N-th program"). Stage from the block type; `index` counts shaders in
/// header-block order. Texture, padding, compute and geometry copy-program blocks are skipped.
///
/// **Key**: XXH3-64 (seed 0) of the program block's bytes, i.e. the microcode the GX2 struct's
/// program size designates ([`shader_struct::key`]); the same shader stored in a SHARCFB gets the
/// same key.
///
/// Errors: a program block with no preceding header of its kind, a header with no program block,
/// a program block whose size differs from the header's `size` field, a header block too small
/// for its struct, or a malformed block chain. A file with no shader blocks is `Ok(empty)`.
pub fn entries(bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    let all = pairs(bytes)?;
    let copies = copy_programs(bytes)?;
    let mut gs = 0;
    Ok(all
        .iter()
        .enumerate()
        .map(|(i, (kind, _, prog))| {
            let program = &bytes[prog.data_offset..prog.data_offset + prog.data_size];
            let key = if *kind == ShaderKind::Geometry {
                gs += 1;
                shader_struct::key_geometry(program, copies.get(gs - 1).copied().unwrap_or(&[]))
            } else {
                shader_struct::key(program)
            };
            ShaderEntry { stage: kind.stage(), index: i as u32, key, name: None }
        })
        .collect())
}

/// The geometry copy-program blocks (type 10) in file order: the N-th belongs to the N-th
/// geometry shader header (wut's N-th ↔ N-th rule, as for programs).
pub fn copy_programs(bytes: &[u8]) -> Result<Vec<&[u8]>, ShaderError> {
    let (blocks, _) = walk(bytes)?;
    Ok(blocks
        .iter()
        .filter(|b| b.block_type == block_type::GEOMETRY_COPY_PROGRAM)
        .map(|b| &bytes[b.data_offset..b.data_offset + b.data_size])
        .collect())
}

/// The (kind, header block, program block) pairs of a GFD file, in header order (see [`entries`]).
pub fn pairs(bytes: &[u8]) -> Result<Vec<(ShaderKind, Block, Block)>, ShaderError> {
    let (blocks, _) = walk(bytes)?;
    // (kind, header block, declared program size, program block)
    let mut shaders: Vec<(ShaderKind, Block, u32, Option<Block>)> = Vec::new();
    // Per kind, the headers still without a program, oldest first: programs are paired in
    // order, so this is the first such header (a search over all headers per program was
    // quadratic in the number of shaders).
    let mut waiting: [std::collections::VecDeque<usize>; 3] = Default::default();
    let queue = |kind: ShaderKind| match kind {
        ShaderKind::Vertex => 0,
        ShaderKind::Pixel => 1,
        ShaderKind::Geometry => 2,
    };
    for b in &blocks {
        let Some((kind, is_header)) = shader_kind(b.block_type) else { continue };
        if is_header {
            let data = &bytes[b.data_offset..b.data_offset + b.data_size];
            let pref = shader_struct::read_program_ref(data, 0, kind, Endian::Big)
                .map_err(|err| within(err, b.offset as u64, format_args!("{} block at 0x{:X}", block_name(b.block_type), b.offset)))?;
            waiting[queue(kind)].push_back(shaders.len());
            shaders.push((kind, *b, pref.size, None));
        } else {
            let slot = waiting[queue(kind)].pop_front().map(|i| &mut shaders[i]).ok_or_else(|| {
                container(
                    b.offset as u64,
                    ContainerFault::BadValue(format!(
                        "{} block at 0x{:X} has no {} shader header block before it",
                        block_name(b.block_type),
                        b.offset,
                        kind.name()
                    )),
                )
            })?;
            if slot.2 as usize != b.data_size {
                return Err(container(
                    b.offset as u64,
                    ContainerFault::BadValue(format!(
                        "{} block at 0x{:X} holds 0x{:X} bytes but its header block at 0x{:X} declares 0x{:X}",
                        block_name(b.block_type),
                        b.offset,
                        b.data_size,
                        slot.1.offset,
                        slot.2
                    )),
                ));
            }
            slot.3 = Some(*b);
        }
    }
    shaders
        .into_iter()
        .map(|(kind, hdr, _, prog)| {
            let prog = prog.ok_or_else(|| {
                container(
                    hdr.offset as u64,
                    ContainerFault::BadValue(format!("{} block at 0x{:X} has no program block", block_name(hdr.block_type), hdr.offset)),
                )
            })?;
            Ok((kind, hdr, prog))
        })
        .collect()
}

/// Size of the `}BLK` relocation trailer at the end of every header block.
pub const RELOC_TRAILER_SIZE: usize = 0x28;
pub const TAG_MASK: u32 = 0xFFF0_0000;
pub const TAG_DATA: u32 = 0xD060_0000;
pub const TAG_STRING: u32 = 0xCA70_0000;

/// Fully decodes shader `index` (header order) of a GFD file: checks the header block's
/// `}BLK` relocation trailer (magic, size, patch table inside the block, every patched word a
/// tagged pointer inside the block) and resolves the tagged pointers.
pub fn load(bytes: &[u8], index: u32) -> Result<shader_struct::Gx2Shader, ShaderError> {
    let all = pairs(bytes)?;
    let &(kind, hdr, prog) = all.get(index as usize).ok_or_else(|| no_such_shader(format!("GFD has {} shaders, no shader {index}", all.len())))?;
    let data = &bytes[hdr.data_offset..hdr.data_offset + hdr.data_size];
    let e = Endian::Big;
    let block = format!("{} block at 0x{:X}", block_name(hdr.block_type), hdr.offset);
    let bad = |fault: fn(String) -> ContainerFault, what: String| container(hdr.offset as u64, fault(format!("{block}: {what}")));
    if data.len() < kind.min_struct_size() + RELOC_TRAILER_SIZE {
        return Err(bad(ContainerFault::OutOfBounds, format!("0x{:X} bytes cannot hold the struct and a relocation trailer", data.len())));
    }
    let t = data.len() - RELOC_TRAILER_SIZE;
    if &data[t..t + 4] != b"}BLK" || e.u32_at(data, t + 4) != Some(RELOC_TRAILER_SIZE as u32) {
        return Err(bad(ContainerFault::Signature, "no }BLK relocation trailer in its last 0x28 bytes".into()));
    }
    let rd = |o: usize| e.u32_at(data, o).unwrap_or(0);
    let (patch_count, patch_offset) = (rd(t + 0x20) as usize, rd(t + 0x24));
    if patch_count > 0 {
        if patch_offset & TAG_MASK != TAG_DATA {
            return Err(bad(ContainerFault::BadValue, format!("patch table pointer 0x{patch_offset:08X} is not a data-tagged pointer")));
        }
        let pt = (patch_offset & !TAG_MASK) as usize;
        if pt.checked_add(patch_count * 4).is_none_or(|end| end > t) {
            return Err(bad(ContainerFault::OutOfBounds, format!("patch table ({patch_count} entries at 0x{pt:X}) runs into the trailer")));
        }
        for i in 0..patch_count {
            let p = rd(pt + i * 4);
            if p == 0 {
                continue; // unused patch slot (seen in real files)
            }
            let at = (p & !TAG_MASK) as usize;
            if !matches!(p & TAG_MASK, TAG_DATA | TAG_STRING) || at + 4 > t {
                return Err(bad(ContainerFault::BadValue, format!("patch entry {i} (0x{p:08X}) does not point at a field of the block")));
            }
            let v = rd(at);
            if v != 0 && (!matches!(v & TAG_MASK, TAG_DATA | TAG_STRING) || (v & !TAG_MASK) as usize >= t) {
                return Err(bad(ContainerFault::BadValue, format!("patched pointer 0x{v:08X} at 0x{at:X} is not a tagged offset inside the block")));
            }
        }
    }
    let resolve = |p: u32| -> Option<usize> { matches!(p & TAG_MASK, TAG_DATA | TAG_STRING).then_some((p & !TAG_MASK) as usize).filter(|&o| o < t) };
    let program = bytes[prog.data_offset..prog.data_offset + prog.data_size].to_vec();
    let mut s = shader_struct::decode_struct(&data[..t], 0, kind, e, t, &resolve, program).map_err(|err| within(err, hdr.offset as u64, &block))?;
    if kind == ShaderKind::Geometry {
        let ordinal = all[..index as usize].iter().filter(|x| x.0 == ShaderKind::Geometry).count();
        let copy = copy_programs(bytes)?.get(ordinal).map(|c| c.to_vec()).unwrap_or_default();
        let declared = s.reg(0x54) as usize;
        if declared != 0 && declared != copy.len() {
            return Err(bad(
                ContainerFault::BadValue,
                format!("declares a 0x{declared:X}-byte copy program, its copy-program block holds 0x{:X}", copy.len()),
            ));
        }
        s.copy_program = copy;
    }
    Ok(s)
}
