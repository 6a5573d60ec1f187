//! Fuzz target: The SMOL-V decoder (what runtimes run on the embedded blobs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = shrec_runtime::smolv::decoded_size(data);
    let _ = shrec_runtime::smolv::decode(data);
});
