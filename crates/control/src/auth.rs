//! The shared secret, and the challenge-response that proves a client knows
//! it without sending it: drop sends a fresh random nonce per connection,
//! blast answers HMAC-SHA256(secret, context || nonce), drop checks it in
//! constant time. The secret never crosses the wire, and an answer seen on
//! the wire is no use on the next connection (a new nonce).

use std::fmt;
use std::io::Read;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bound into every proof, so a MAC made for something else never passes.
const CONTEXT: &[u8] = b"blastdrop control v2 auth\n";

/// A shared secret. Its Debug form never shows it.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret(<{} bytes>)", self.0.len())
    }
}

/// Where a secret came from (for the log: never the secret itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSource {
    File,
    Environment,
    CommandLine,
}

/// Why the secret could not be had. The file is the one the user named
/// (the binaries say by which flag).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable { path: std::path::PathBuf, reason: String },
    #[error("{} is empty: put the shared secret on its first line", path.display())]
    EmptyFile { path: std::path::PathBuf },
    #[error("BLASTDROP_TOKEN is set but empty: set it to the shared secret, or unset it")]
    EmptyEnvironment,
}

/// The environment variable a secret may come from.
pub const SECRET_ENV: &str = "BLASTDROP_TOKEN";

impl Secret {
    /// A secret from bytes; None when empty.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Option<Secret> {
        let b = bytes.into();
        (!b.is_empty()).then_some(Secret(b))
    }

    /// The secret from, in order: a file (its first line), the
    /// environment, the command line. Errors name the problem and the fix.
    pub fn load(file: Option<&Path>, env: Option<String>, flag: Option<&str>) -> Result<Option<(Secret, SecretSource)>, SecretError> {
        if let Some(path) = file {
            let text =
                std::fs::read_to_string(path).map_err(|e| SecretError::Unreadable { path: path.to_path_buf(), reason: e.to_string() })?;
            let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
            return match Secret::new(line.as_bytes()) {
                Some(s) => Ok(Some((s, SecretSource::File))),
                None => Err(SecretError::EmptyFile { path: path.to_path_buf() }),
            };
        }
        if let Some(v) = env {
            return match Secret::new(v.into_bytes()) {
                Some(s) => Ok(Some((s, SecretSource::Environment))),
                None => Err(SecretError::EmptyEnvironment),
            };
        }
        Ok(flag.and_then(|t| Secret::new(t.as_bytes())).map(|s| (s, SecretSource::CommandLine)))
    }

    fn mac(&self, nonce: &str) -> Hmac<Sha256> {
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        m.update(CONTEXT);
        m.update(nonce.as_bytes());
        m
    }

    /// The client's answer to `nonce`, in hex.
    pub fn proof(&self, nonce: &str) -> String {
        hex(&self.mac(nonce).finalize().into_bytes())
    }

    /// Whether `proof` (hex) answers `nonce` for this secret, compared in
    /// constant time.
    pub fn verify(&self, nonce: &str, proof: &str) -> bool {
        match unhex(proof) {
            Some(bytes) => self.mac(nonce).verify_slice(&bytes).is_ok(),
            None => false,
        }
    }
}

/// A fresh random nonce, 16 bytes in hex, from the kernel's generator.
pub fn nonce() -> String {
    let mut b = [0u8; 16];
    let got = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if got.is_err() {
        // No /dev/urandom: the clock's nanoseconds and the process id, hashed.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let seed = format!("{t}:{}:{:p}", std::process::id(), &b);
        let m = <Hmac<Sha256> as Mac>::new_from_slice(seed.as_bytes()).expect("any key");
        b.copy_from_slice(&m.finalize().into_bytes()[..16]);
    }
    hex(&b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 256 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_for_its_nonce_and_secret_only() {
        let s = Secret::new("s3cret").unwrap();
        let n = nonce();
        let p = s.proof(&n);
        assert_eq!(p.len(), 64);
        assert!(s.verify(&n, &p));
        assert!(!s.verify(&nonce(), &p), "another nonce");
        assert!(!Secret::new("s3cres").unwrap().verify(&n, &p), "another secret");
        assert!(!s.verify(&n, &p[..62]), "truncated");
        assert!(!s.verify(&n, "zz"), "not hex");
        assert!(!s.verify(&n, ""), "empty");
        assert!(!p.contains("s3cret"));
    }

    #[test]
    fn known_answer() {
        // HMAC-SHA256(key "key", CONTEXT || "n"), computed independently.
        let s = Secret::new("key").unwrap();
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(b"key").unwrap();
        m.update(b"blastdrop control v2 auth\nn");
        assert_eq!(s.proof("n"), hex(&m.finalize().into_bytes()));
    }

    #[test]
    fn nonces_differ() {
        let (a, b) = (nonce(), nonce());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn secrets_load_from_file_then_environment_then_flag() {
        let dir = std::env::temp_dir().join(format!("bd-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("tok");
        std::fs::write(&f, "from-file\nignored\n").unwrap();
        let (s, src) = Secret::load(Some(&f), Some("env".into()), Some("flag")).unwrap().unwrap();
        assert_eq!((s.0.as_slice(), src), (&b"from-file"[..], SecretSource::File));
        let (s, src) = Secret::load(None, Some("env".into()), Some("flag")).unwrap().unwrap();
        assert_eq!((s.0.as_slice(), src), (&b"env"[..], SecretSource::Environment));
        let (_, src) = Secret::load(None, None, Some("flag")).unwrap().unwrap();
        assert_eq!(src, SecretSource::CommandLine);
        assert!(Secret::load(None, None, None).unwrap().is_none());
        std::fs::write(&f, "\n").unwrap();
        assert!(Secret::load(Some(&f), None, None).unwrap_err().to_string().contains("empty"));
        assert!(Secret::load(Some(&dir.join("none")), None, None).unwrap_err().to_string().contains("cannot read"));
        assert!(Secret::load(None, Some(String::new()), None).unwrap_err().to_string().contains("BLASTDROP_TOKEN"));
        assert_eq!(format!("{:?}", Secret::new("abc").unwrap()), "Secret(<3 bytes>)");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
