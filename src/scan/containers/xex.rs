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
//! Opened: unencrypted base files, uncompressed or basic. An encrypted XEX is one error saying
//! it must be decrypted first; LZX and delta-patch base files are errors for now.

use super::{Budget, ContainerError, Member};

const FILE_FORMAT_INFO: u64 = 0x0000_03FF;

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
        2 => Err(ContainerError::at(info as u64 + 6, "LZX-compressed XEX2 base files are not opened yet (decompress with `xextool -c u`)")),
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
