#![no_main]
//! Fuzz target: see [`fabdex_fuzz::tool_call`].

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        fabdex_fuzz::tool_call(text);
    }
});
