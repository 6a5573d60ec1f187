//! Fuzz target: LZX-compressed XEX2 base files (`src/scan/containers/xex.rs`, the `lzxd` crate
//! behind it). The XEX2 headers are built here, with the window size and image size from the
//! first bytes; the PE data is either the fuzzer's bytes as they are (the block walk, its
//! bounds and SHA-1 checks) or a block chain built from them with correct sizes and SHA-1s, so
//! that the fuzzer's bytes reach the LZX decoder as chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sha1::{Digest, Sha1};

// By path: fuzz/ is its own workspace (cargo fuzz builds it with sanitizer flags), which cannot
// take shrec-testkit, a dev crate of the main workspace that depends on shrec itself.
#[path = "../../tests/common/xex2_writer.rs"]
mod xex2_writer;

fuzz_target!(|data: &[u8]| {
    let Some((ctl, rest)) = data.split_at_checked(8) else { return };
    // Mostly valid windows (32 KiB .. 32 MiB), sometimes not.
    let window = if ctl[0] < 0xF0 { 0x8000u32 << (ctl[0] % 11) } else { u32::from_le_bytes([ctl[0], ctl[1], 0, 0]) };
    let image_size = u32::from_le_bytes([ctl[1], ctl[2], ctl[3] & 0x0F, 0]);
    let (raw, per_block) = (ctl[4] & 1 == 1, (ctl[4] >> 1) as usize % 4 + 1);
    let chunk_max = u16::from_le_bytes([ctl[5], ctl[6]]).max(1) as usize;

    let (first_block, pe_data) = if raw {
        ((u32::from_be_bytes([ctl[5], ctl[6], ctl[7], 0]) >> 8, Sha1::digest(rest).into()), rest.to_vec())
    } else {
        // Chunks of up to chunk_max bytes, per_block chunks a block.
        xex2_writer::block_chain(&rest.chunks(chunk_max).collect::<Vec<_>>(), per_block)
    };
    let x = xex2_writer::xex2_lzx(window, first_block, image_size, &pe_data);
    std::hint::black_box(shrec::scan::scan_buffer(std::path::Path::new("fuzz"), &x));
});
