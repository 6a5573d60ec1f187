//! Fuzz target: The AGAL bytecode decoder, every version and option.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for agal4 in [false, true] {
        let opts = shrec::formats::agal::decode::DecodeOptions { allow_agal4: agal4 };
        let _ = shrec::formats::agal::decode::decode(data, opts);
    }
});
