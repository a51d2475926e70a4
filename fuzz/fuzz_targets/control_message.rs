//! Any bytes drop's control port may receive: parsing never panics, a
//! request that parses encodes back to one that parses the same, and the
//! handshake, fed the bytes line by line, never lets a client in without
//! the proof of a secret it cannot know.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = control::parse_request(data) {
        let again = serde_json::to_vec(&env).expect("a parsed request encodes");
        assert_eq!(control::parse_request(&again).ok(), Some(env));
    }
    let secret = control::Secret::new("fuzz-secret-never-in-the-input").unwrap();
    let mut hs = control::Handshake::new(Some(secret), control::nonce());
    for line in data.split(|&b| b == b'\n') {
        match hs.step(line) {
            control::HandshakeStep::Reply(..) => {}
            control::HandshakeStep::Refuse(..) => break,
            control::HandshakeStep::Authenticated(..) => panic!("authenticated without the secret"),
        }
    }
    // Without a secret, the handshake only ever lets in after hello then auth.
    let mut open = control::Handshake::new(None, "00".into());
    let mut saw_hello = false;
    for line in data.split(|&b| b == b'\n') {
        match open.step(line) {
            control::HandshakeStep::Reply(..) => saw_hello = true,
            control::HandshakeStep::Refuse(..) => break,
            control::HandshakeStep::Authenticated(..) => {
                assert!(saw_hello, "auth before hello let in");
                break;
            }
        }
    }
});
