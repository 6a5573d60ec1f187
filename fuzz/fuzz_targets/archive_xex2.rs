//! Fuzz target: the container layer's XEX2 header walk and basic-compression base-file
//! rebuild, on the fuzzer's bytes behind the format's magic (so every input reaches the
//! decoder), then detection in the base file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = b"XEX2".to_vec();
    input.extend_from_slice(data);
    std::hint::black_box(shrec::scan::scan_buffer(std::path::Path::new("fuzz"), &input));
});
