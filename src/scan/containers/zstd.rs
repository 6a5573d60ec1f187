//! zstd frames through the `zstd` crate (already shrec's cache codec).

use super::{Budget, ContainerError};

pub(super) fn decompress(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let decoder = ::zstd::stream::read::Decoder::with_buffer(input).map_err(|e| ContainerError::new(format!("corrupt zstd stream: {e}")))?;
    budget.read(decoder, input.len() as u64)
}
