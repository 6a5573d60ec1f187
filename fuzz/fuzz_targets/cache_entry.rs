//! Fuzz target: The incremental cache's entry reader: as read from disk, and behind a valid header and checksum (so the fuzzer gets past the checksum to the payload parser).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    use shrec::cache::incremental::{decode_entry, ArtifactKey, FORMAT_VERSION, HEADER_LEN, MAGIC};
    let key = ArtifactKey(data.get(..16).map_or(0, |k| u128::from_le_bytes(k.try_into().unwrap())));
    let _ = decode_entry(&key, data);
    let mut sealed = Vec::with_capacity(HEADER_LEN + data.len());
    sealed.extend_from_slice(&MAGIC);
    sealed.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    sealed.extend_from_slice(&0u32.to_le_bytes());
    sealed.extend_from_slice(&(data.len() as u64).to_le_bytes());
    sealed.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(data).to_le_bytes());
    sealed.extend_from_slice(data);
    let _ = decode_entry(&key, &sealed);
});
