//! Fuzz target: The Latte (R7xx) program decoder on arbitrary bytes (no GX2 struct).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shrec::formats::gx2::isa::decode(data);
});
