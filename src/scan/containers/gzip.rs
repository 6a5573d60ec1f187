//! gzip (RFC 1952) through `flate2` (pure Rust, miniz_oxide). Concatenated members (as `cat
//! a.gz b.gz` makes) decompress to one stream, as `gunzip` does.

use super::{Budget, ContainerError};

pub(super) fn decompress(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    budget.read(flate2::read::MultiGzDecoder::new(input), input.len() as u64)
}
