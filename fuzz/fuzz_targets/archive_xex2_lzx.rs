//! Fuzz target: LZX-compressed XEX2 base files (`src/scan/containers/xex.rs`, the `lzxd` crate
//! behind it). The XEX2 headers are built here, with the window size and image size from the
//! first bytes; the PE data is either the fuzzer's bytes as they are (the block walk, its
//! bounds and SHA-1 checks) or a block chain built from them with correct sizes and SHA-1s, so
//! that the fuzzer's bytes reach the LZX decoder as chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha1::{Digest, Sha1};

fuzz_target!(|data: &[u8]| {
    let Some((ctl, rest)) = data.split_at_checked(8) else { return };
    // Mostly valid windows (32 KiB .. 32 MiB), sometimes not.
    let window = if ctl[0] < 0xF0 { 0x8000u32 << (ctl[0] % 11) } else { u32::from_le_bytes([ctl[0], ctl[1], 0, 0]) };
    let image_size = u32::from_le_bytes([ctl[1], ctl[2], ctl[3] & 0x0F, 0]);
    let (raw, per_block) = (ctl[4] & 1 == 1, (ctl[4] >> 1) as usize % 4 + 1);
    let chunk_max = u16::from_le_bytes([ctl[5], ctl[6]]).max(1) as usize;

    let (first_size, first_hash, pe_data) = if raw {
        (u32::from_be_bytes([ctl[5], ctl[6], ctl[7], 0]) >> 8, Sha1::digest(rest).into(), rest.to_vec())
    } else {
        // Chunks of up to chunk_max bytes, per_block chunks a block, built last to first.
        let chunks: Vec<&[u8]> = rest.chunks(chunk_max).collect();
        let mut next: (u32, [u8; 20]) = (0, [0; 20]);
        let mut blocks = Vec::new();
        for group in chunks.chunks(per_block).rev() {
            let mut block = next.0.to_be_bytes().to_vec();
            block.extend_from_slice(&next.1);
            for c in group {
                block.extend_from_slice(&(c.len() as u16).to_be_bytes());
                block.extend_from_slice(c);
            }
            block.extend_from_slice(&[0, 0]);
            next = (block.len() as u32, Sha1::digest(&block).into());
            blocks.push(block);
        }
        (next.0, next.1, blocks.into_iter().rev().flatten().collect())
    };
    let (info, security, pe) = (0x20u32, 0x50u32, 0x200usize);
    let mut x = b"XEX2".to_vec();
    for v in [1, pe as u32, 0, security, 1, 0x3FF, info] {
        x.extend_from_slice(&v.to_be_bytes());
    }
    x.resize(info as usize, 0);
    for v in [36u32, 2, window, first_size] {
        x.extend_from_slice(&v.to_be_bytes());
    }
    x.extend_from_slice(&first_hash);
    x.resize(security as usize, 0);
    x.extend_from_slice(&0x184u32.to_be_bytes());
    x.extend_from_slice(&image_size.to_be_bytes());
    x.resize(pe, 0);
    x.extend_from_slice(&pe_data);
    std::hint::black_box(shrec::scan::scan_buffer(std::path::Path::new("fuzz"), &x));
});
