//! LZMA (the `ZWS` SWF body) and xz streams through `lzma-rust2` (pure Rust, a port of XZ for
//! Java), read as streams under the caps: bytes are checked against the caps as they come out,
//! so a bomb costs the cap, not its decompressed size. (lzma-rs, used before, decoded each xz
//! block whole into memory before handing it on: a 610 KB xz of 4 GiB of zeros took 8.4 GB.)

use super::{Budget, ContainerError};
use crate::limits::MAX_LZMA_DICTIONARY_BYTES;
use std::io::Read;

/// The xz container (`.xz`): one or more streams of blocks, checksums verified by the reader.
/// A block whose dictionary needs more than [`MAX_LZMA_DICTIONARY_BYTES`] is refused before the
/// dictionary is allocated.
pub(super) fn decompress_xz(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let limit_kib = u32::try_from(MAX_LZMA_DICTIONARY_BYTES >> 10).unwrap_or(u32::MAX);
    budget.read(NamedMemoryCap(lzma_rust2::XzReader::new_mem_limit(input, true, limit_kib)), input.len() as u64)
}

/// Raw LZMA: 5 property bytes (lc/lp/pb, then the dictionary size, u32 LE) then data, of a known
/// decompressed `size` (no size field). The reader sizes its dictionary to at most `size`, which
/// the caller checked against the caps.
pub(super) fn decompress_raw(input: &[u8], size: u64, budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let (props, data) = input.split_at_checked(5).ok_or_else(|| ContainerError::at(0, "truncated LZMA stream: no 5-byte properties"))?;
    let dict_size = u32::from_le_bytes([props[1], props[2], props[3], props[4]]);
    let reader = lzma_rust2::LzmaReader::new_with_props(data, size, props[0], dict_size, None)
        .map_err(|e| ContainerError::at(0, format!("corrupt LZMA properties: {e}")))?;
    budget.read(reader, input.len() as u64)
}

/// Turns the xz reader's "memory limit" error into one that names the cap.
struct NamedMemoryCap<R>(R);

impl<R: Read> Read for NamedMemoryCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::OutOfMemory {
                std::io::Error::new(
                    e.kind(),
                    format!("an xz block needs a dictionary over {MAX_LZMA_DICTIONARY_BYTES} bytes (limit of decoder memory; xz -9 uses 64 MiB)"),
                )
            } else {
                e
            }
        })
    }
}
