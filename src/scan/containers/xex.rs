//! Xbox 360 executables (XEX2): the base file (the PE image, where shaders compiled into the
//! game sit) is the one member, `basefile`.
//!
//! Layout (Free60 wiki "XEX"; Xenia `src/xenia/kernel/util/xex2_info.h`; rom-properties
//! `xbox360_xex_structs.h` — they agree), all big endian: `XEX2`, u32 module flags, u32 offset
//! of the PE data, u32 reserved, u32 security-info offset, u32 optional-header count, then that
//! many (u32 key, u32 value) pairs. Key `0x000003FF` is the file format info; its value is the
//! offset of: u32 info size, u16 encryption (0 none, 1 AES), u16 compression (0 none, 1 basic,
//! 2 LZX, 3 delta patch). Basic compression is (info size - 8) / 8 blocks of (u32 data size,
//! u32 zero size): data bytes copied from the PE data, then that many zero bytes.
//!
//! LZX ("normal") compression (Xenia `src/xenia/cpu/xex_module.cc`, `ReadImageCompressed`;
//! `xex2_info.h`, `xex2_file_normal_compression_info`; Free60 wiki "XEX"): after the two u16
//! types the file format info holds u32 LZX window size, then the first block's u32 size and
//! 20-byte SHA-1. The PE data is a chain of blocks; each block starts with the *next* block's
//! u32 size and SHA-1 (size 0: last block), then chunks of (u16 size, bytes) up to a chunk of
//! size 0. Xenia checks every block's SHA-1 against the hash its predecessor gives (over the
//! whole block, its header included) and so does shrec. The chunks together are one LZX stream
//! whose decompressed size is the image size (security info, u32 at +4; the security-info offset
//! is the u32 at header offset 0x10). Xenia feeds the concatenated chunks to libmspack in
//! 32 KiB frames; each chunk is one such frame (the MS-PATCH "LZXD" spec, §2.2: one
//! compressed chunk per 32 KiB of output, behind a 16-bit chunk-size prefix, the bitstream
//! realigned to 16 bits at each chunk's end), so shrec hands chunk after chunk to the `lzxd`
//! crate with one decoder for the whole stream (its window carries over).
//!
//! Opened: unencrypted base files, uncompressed, basic or LZX. An encrypted XEX is one error
//! saying it must be decrypted first; delta-patch base files are errors.

use super::{Budget, ContainerError, Member};
use sha1::{Digest, Sha1};

const FILE_FORMAT_INFO: u64 = 0x0000_03FF;

/// Decompressed bytes per LZX chunk (frame), but the last (MS-PATCH §2.2; `lzxd::MAX_CHUNK_SIZE`).
const LZX_FRAME: usize = lzxd::MAX_CHUNK_SIZE;

/// A block's header: the next block's u32 size and 20-byte SHA-1.
const BLOCK_HEADER: usize = 24;

pub(super) fn members(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let be32 = |at: usize, what: &str| super::be_or_le::<4>(b, at, true, what);
    let pe = be32(8, "PE data offset")? as usize;
    let count = be32(0x14, "optional header count")? as usize;
    super::check_members(count)?;
    let mut info = None;
    for i in 0..count {
        if be32(0x18 + 8 * i, "optional header key")? == FILE_FORMAT_INFO {
            info = Some(be32(0x18 + 8 * i + 4, "file format info offset")? as usize);
        }
    }
    let info = info.ok_or_else(|| ContainerError::new("corrupt XEX2: no file format info (optional header 0x3FF)"))?;
    let info_size = be32(info, "file format info size")? as usize;
    let encryption = super::be_or_le::<2>(b, info + 4, true, "encryption type")?;
    let compression = super::be_or_le::<2>(b, info + 6, true, "compression type")?;
    if encryption != 0 {
        return Err(ContainerError::at(
            info as u64 + 4,
            "encrypted XEX2: the base file must be decrypted first (e.g. `xextool -e u -c u default.xex`)",
        ));
    }
    let data = b.get(pe..).ok_or_else(|| ContainerError::at(8, format!("corrupt XEX2: PE data offset 0x{pe:X} past the end")))?;
    if !wants("basefile") {
        return Ok(Vec::new());
    }
    let base = match compression {
        0 => budget.charge(data.len() as u64, data.len() as u64).map(|()| data.to_vec()),
        1 => basic(b, info, info_size, data, budget),
        2 => lzx(b, info, pe, data, budget),
        n => Err(ContainerError::at(info as u64 + 6, format!("XEX2 compression type {n} (delta patch or unknown) is not opened"))),
    };
    Ok(vec![Member { name: "basefile".into(), data: base }])
}

fn basic(b: &[u8], info: usize, info_size: usize, data: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let blocks = info_size.saturating_sub(8) / 8;
    let mut size = 0u64;
    for i in 0..blocks {
        let at = info + 8 + 8 * i;
        size += super::be_or_le::<4>(b, at, true, "basic block")? + super::be_or_le::<4>(b, at + 4, true, "basic block")?;
    }
    budget.charge(size, data.len() as u64)?;
    let mut out = Vec::with_capacity(size as usize);
    let mut pos = 0usize;
    for i in 0..blocks {
        let at = info + 8 + 8 * i;
        let len = super::be_or_le::<4>(b, at, true, "basic block")? as usize;
        let zeros = super::be_or_le::<4>(b, at + 4, true, "basic block")? as usize;
        let chunk = data.get(pos..pos.saturating_add(len)).ok_or_else(|| {
            ContainerError::at(at as u64, format!("corrupt XEX2: basic block {i} reads 0x{len:X} bytes past the end of the PE data"))
        })?;
        out.extend_from_slice(chunk);
        out.resize(out.len() + zeros, 0);
        pos += len;
    }
    Ok(out)
}

/// The LZX window size the file format info names (a power of two from 32 KiB to 32 MiB).
fn window(size: u64, at: u64) -> Result<lzxd::WindowSize, ContainerError> {
    use lzxd::WindowSize as W;
    Ok(match size {
        0x8000 => W::KB32,
        0x1_0000 => W::KB64,
        0x2_0000 => W::KB128,
        0x4_0000 => W::KB256,
        0x8_0000 => W::KB512,
        0x10_0000 => W::MB1,
        0x20_0000 => W::MB2,
        0x40_0000 => W::MB4,
        0x80_0000 => W::MB8,
        0x100_0000 => W::MB16,
        0x200_0000 => W::MB32,
        n => return Err(ContainerError::at(at, format!("corrupt XEX2: LZX window size 0x{n:X} is not a power of two from 32 KiB to 32 MiB"))),
    })
}

/// Rebuilds an LZX-compressed base file (see the module notes). `data` is the PE data, which
/// starts at file offset `pe`; errors name file offsets.
fn lzx(b: &[u8], info: usize, pe: usize, data: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let be32 = |at: usize, what: &str| super::be_or_le::<4>(b, at, true, what);
    let window = window(be32(info + 8, "LZX window size")?, info as u64 + 8)?;
    let mut block_size = be32(info + 12, "first LZX block size")? as usize;
    let mut hash: [u8; 20] = b
        .get(info + 16..info + 36)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| ContainerError::at(info as u64 + 16, "truncated: first LZX block hash past the end"))?;
    let security = be32(0x10, "security info offset")? as usize;
    let image_size = be32(security.saturating_add(4), "image size (security info)")?;
    // Checked before anything is allocated: the size is the header's claim.
    budget.check_declared(image_size, data.len() as u64)?;
    let image_size = image_size as usize;
    let mut out = Vec::with_capacity(image_size);
    let mut lzx = lzxd::Lzxd::new(window);
    let (mut pos, mut index, mut chunks) = (0usize, 0usize, 0usize);
    while block_size != 0 {
        let at = (pe + pos) as u64;
        let block = data
            .get(pos..pos.saturating_add(block_size))
            .filter(|_| block_size >= BLOCK_HEADER)
            .ok_or_else(|| ContainerError::at(at, format!("corrupt XEX2: LZX block {index} of 0x{block_size:X} bytes does not fit the PE data")))?;
        if Sha1::digest(block).as_slice() != hash {
            return Err(ContainerError::at(at, format!("corrupt XEX2: LZX block {index} does not match its SHA-1 (in the previous block header)")));
        }
        let next_size = u32::from_be_bytes([block[0], block[1], block[2], block[3]]) as usize;
        hash.copy_from_slice(&block[4..BLOCK_HEADER]);
        let mut q = BLOCK_HEADER;
        loop {
            let chunk_at = (pe + pos + q) as u64;
            let Some(len) = block.get(q..q + 2).map(|l| u16::from_be_bytes([l[0], l[1]]) as usize) else {
                return Err(ContainerError::at(chunk_at, format!("corrupt XEX2: LZX block {index} ends without its last (empty) chunk")));
            };
            q += 2;
            if len == 0 {
                break;
            }
            let chunk = block
                .get(q..q + len)
                .ok_or_else(|| ContainerError::at(chunk_at, format!("corrupt XEX2: LZX chunk {chunks} (0x{len:X} bytes) runs past its block")))?;
            q += len;
            let want = LZX_FRAME.min(image_size - out.len());
            if want == 0 {
                return Err(ContainerError::at(
                    chunk_at,
                    format!("corrupt XEX2: LZX chunk {chunks} is past the image size of 0x{image_size:X} bytes"),
                ));
            }
            // lzxd may panic on a crafted stream where integer overflow is checked (debug builds,
            // fuzzing): an uncompressed block's repeated offsets R0-R2 are arbitrary and feed
            // its copy-from-window arithmetic. A corrupt member must be an error, not a panic.
            let frame = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lzx.decompress_next(chunk, want).map(|f| f.to_vec())))
                .map_err(|_| ContainerError::at(chunk_at, format!("corrupt XEX2: LZX chunk {chunks}: the LZX decoder gave up on it")))?
                .map_err(|e| ContainerError::at(chunk_at, format!("corrupt XEX2: LZX chunk {chunks}: {e}")))?;
            out.extend_from_slice(&frame);
            chunks += 1;
        }
        pos += block_size;
        block_size = next_size;
        index += 1;
    }
    if out.len() != image_size {
        return Err(ContainerError::at(
            (pe + pos) as u64,
            format!("truncated XEX2: the LZX blocks end after 0x{:X} of 0x{image_size:X} image bytes", out.len()),
        ));
    }
    budget.charge(out.len() as u64, data.len() as u64)?;
    Ok(out)
}
