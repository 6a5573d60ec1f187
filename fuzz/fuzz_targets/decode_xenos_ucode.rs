//! Fuzz target: The Xenos microcode decoder on arbitrary words (no container).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_be_bytes(c.try_into().unwrap())).collect();
    let _ = shrec::formats::xenos::ucode::decode(&words);
});
