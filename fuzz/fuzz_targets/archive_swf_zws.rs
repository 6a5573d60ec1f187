//! Fuzz target: the container layer's LZMA SWF decompression (lzma-rust2) and the DefineBinaryData tag walker, on the fuzzer's bytes behind the format's magic
//! (so every input reaches the decoder), then detection in whatever members come out.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = b"ZWS".to_vec();
    input.extend_from_slice(data);
    std::hint::black_box(shrec::scan::scan_buffer(std::path::Path::new("fuzz"), &input));
});
