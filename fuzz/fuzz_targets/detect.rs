//! Fuzz target: Detection over arbitrary bytes, then the container listing of every candidate (what `shrec scan` runs on every file).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (shaders, errors) = shrec::scan::scan_bytes(std::path::Path::new("fuzz"), data);
    std::hint::black_box((shaders, errors));
});
