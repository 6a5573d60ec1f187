//! LZMA (the `ZWS` SWF body) and xz streams through `lzma-rs` (pure Rust), written into a
//! capped buffer so that a stream cannot decompress past the caps.

use super::{Budget, ContainerError};

/// The xz container (`.xz`): one or more blocks, checksums verified by lzma-rs.
pub(super) fn decompress_xz(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    budget.write(input.len() as u64, |w| lzma_rs::xz_decompress(&mut &input[..], w).map_err(|e| e.to_string()))
}

/// Raw LZMA: 5 property bytes then data, of a known decompressed `size` (no size field).
pub(super) fn decompress_raw(input: &[u8], size: u64, budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let options = lzma_rs::decompress::Options {
        unpacked_size: lzma_rs::decompress::UnpackedSize::UseProvided(Some(size)),
        // The dictionary lzma-rs allocates is bounded by the output cap.
        memlimit: Some(crate::limits::MAX_MEMBER_BYTES as usize),
        allow_incomplete: false,
    };
    budget.write(input.len() as u64, |w| lzma_rs::lzma_decompress_with_options(&mut &input[..], w, &options).map_err(|e| e.to_string()))
}
