//! Any bytes drop's control port may receive: parsing never panics, and a
//! request that parses encodes back to one that parses the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for token in [None, Some("tok")] {
        if let Ok(env) = control::parse_request(data, token) {
            let again = serde_json::to_vec(&env).expect("a parsed request encodes");
            assert_eq!(control::parse_request(&again, token).ok(), Some(env));
        }
    }
});
