//! Fuzz target: The PICA200 instruction decoder on arbitrary code and operand descriptors, at every pc.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let (descs, code) = words.split_at(words.len().min(8));
    for pc in 0..code.len().min(512) {
        let _ = shrec::formats::pica::decode::decode(code, descs, pc);
    }
});
