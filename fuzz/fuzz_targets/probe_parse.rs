//! Any frame drop may receive: probe parsing never panics or reads out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wire::parse_probe(data);
});
