//! Fuzz target: Agal: container → decoder → IR → HLSL (and the disassembler) for every shader the container lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrec::detect::ContainerKind;
use shrec::formats::TranslateOptions;

fuzz_target!(|data: &[u8]| {
    if let Ok(entries) = shrec::formats::entries(ContainerKind::Agal, data) {
        for e in entries.iter().take(4) {
            let opts = TranslateOptions::default();
            if let Ok(t) = shrec::formats::translate(ContainerKind::Agal, data, e.index, &opts) {
                std::hint::black_box(shrec::hlsl::write(&t.module));
            }
            let _ = shrec::formats::disasm(ContainerKind::Agal, data, e.index, &opts);
        }
    }
});
