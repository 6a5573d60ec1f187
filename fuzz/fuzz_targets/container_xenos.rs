//! Fuzz target: The Xenos container parser: listing the shaders of arbitrary bytes as a Xenos container.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrec::detect::ContainerKind;

fuzz_target!(|data: &[u8]| {
    let _ = shrec::formats::entries(ContainerKind::Xenos, data);
});
