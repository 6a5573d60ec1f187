//! Fuzz target: the container layer's Nintendo LZ10 / LZ11 probe and decoder
//! (`src/scan/containers/lz.rs`). A stream is only taken for LZ when what it decodes holds a
//! shader, so raw fuzzer bytes would rarely get past the probe: each input is a stream header
//! (type 0x10 or 0x11 from the first byte, a 24-bit or 32-bit size from the next bytes), a
//! small corpus shader as literal blocks, then the fuzzer's bytes as the rest of the stream
//! (references into the shader, every block form, wrong sizes, truncation, trailing bytes, runs
//! up to the caps).
#![no_main]

use libfuzzer_sys::fuzz_target;

const SHADER: &[u8] = include_bytes!("../../tests/corpus/pica/0x00002a+pican/test_cases/inputs/alias_swizzle.shbin");

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else { return };
    let Some((size, rest)) = rest.split_at_checked(4) else { return };
    let mut input = vec![if ctl & 1 == 0 { 0x10 } else { 0x11 }];
    if ctl & 2 == 0 {
        input.extend_from_slice(&size[..3]);
    } else {
        // DSDecmp's 32-bit size form.
        input.extend_from_slice(&[0, 0, 0]);
        input.extend_from_slice(size);
    }
    for group in SHADER.chunks(8) {
        input.push(0);
        input.extend_from_slice(group);
    }
    input.extend_from_slice(rest);
    std::hint::black_box(shrec::scan::scan_buffer(std::path::Path::new("fuzz"), &input));
});
