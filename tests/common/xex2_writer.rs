//! An unencrypted, LZX-compressed XEX2 writer shared by tests/integration/containers.rs and
//! fuzz/fuzz_targets/archive_xex2_lzx.rs (included by `#[path]`). Layout from Xenia
//! `xex_module.cc` (ReadImageCompressed) and `xex2_info.h`; see src/scan/containers/xex.rs.

use sha1::{Digest, Sha1};

/// The size and SHA-1 of the first block of a chain: what the file format info declares.
pub type BlockHead = (u32, [u8; 20]);

/// The PE data of a compressed base file: `chunks` (LZX chunks, or any bytes) grouped
/// `per_block` a block; each block starts with the next block's size and SHA-1 (zero for the
/// last), holds its chunks as u16 BE length + bytes, and ends with a zero length. Built last to
/// first, since each block carries its successor's hash.
pub fn block_chain<C: AsRef<[u8]>>(chunks: &[C], per_block: usize) -> (BlockHead, Vec<u8>) {
    let mut next: BlockHead = (0, [0; 20]);
    let mut blocks = Vec::new();
    for group in chunks.chunks(per_block).rev() {
        let mut block = next.0.to_be_bytes().to_vec();
        block.extend_from_slice(&next.1);
        for c in group {
            let c = c.as_ref();
            block.extend_from_slice(&(c.len() as u16).to_be_bytes());
            block.extend_from_slice(c);
        }
        block.extend_from_slice(&[0, 0]);
        next = (block.len() as u32, Sha1::digest(&block).into());
        blocks.push(block);
    }
    (next, blocks.into_iter().rev().flatten().collect())
}

/// An XEX2 file: header with two optional headers (file format info at 0x20: not encrypted,
/// LZX "normal" compression, `window`, `first_block`; security info at 0x50: `image_size`),
/// then `pe_data` at 0x200.
pub fn xex2_lzx(window: u32, first_block: BlockHead, image_size: u32, pe_data: &[u8]) -> Vec<u8> {
    let (info, security, pe) = (0x20u32, 0x50u32, 0x200u32);
    let mut x = b"XEX2".to_vec();
    // Module flags, PE data offset, reserved, security info offset, one optional header:
    // key 0x3FF (file format info) and its offset.
    for v in [1, pe, 0, security, 1, 0x3FF, info] {
        x.extend_from_slice(&v.to_be_bytes());
    }
    x.resize(info as usize, 0);
    x.extend_from_slice(&36u32.to_be_bytes()); // info size
    x.extend_from_slice(&0u16.to_be_bytes()); // not encrypted
    x.extend_from_slice(&2u16.to_be_bytes()); // LZX ("normal")
    x.extend_from_slice(&window.to_be_bytes());
    x.extend_from_slice(&first_block.0.to_be_bytes());
    x.extend_from_slice(&first_block.1);
    x.resize(security as usize, 0);
    x.extend_from_slice(&0x184u32.to_be_bytes()); // security info header size
    x.extend_from_slice(&image_size.to_be_bytes());
    x.resize(pe as usize, 0);
    x.extend_from_slice(pe_data);
    x
}
