//! The API token: 256 bits from the OS RNG, made at `up`'s start, written
//! (mode 0600) only where the operator asks (`up --token-file FILE`),
//! printed in the settings URL's fragment (`#token=`, which a browser
//! never sends to a server), never in a cookie, and never passed to a
//! plugin (plugins are spawned with a cleared environment and the token is
//! never put in `up`'s own).

use std::fmt;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Bytes of randomness in a token (256 bits; hex-encoded: 64 characters).
pub const TOKEN_BYTES: usize = 32;

/// The WebSocket subprotocol a browser offers to carry the token (it
/// cannot set `Authorization` on an upgrade): `kaged.bearer.TOKEN`, next
/// to the protocol it speaks. The daemon never selects (echoes) it.
pub const WS_TOKEN_PREFIX: &str = "kaged.bearer.";

/// Why a token could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The OS RNG (`/dev/urandom`) could not be read.
    #[error("cannot read random bytes from /dev/urandom")]
    Random(#[source] std::io::Error),
    /// The token file could not be created or written.
    #[error("cannot write the token file {}", path.display())]
    Write {
        /// The token file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A secret API token (lowercase hex). Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken(String);

impl ApiToken {
    /// A fresh token: [`TOKEN_BYTES`] bytes from the OS RNG, hex-encoded.
    pub fn generate() -> Result<ApiToken, TokenError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(TokenError::Random)?;
        Ok(ApiToken(hex(&bytes)))
    }

    /// A token with this exact text (tests, or a token chosen elsewhere).
    pub fn from_text(text: impl Into<String>) -> ApiToken {
        ApiToken(text.into())
    }

    /// The token's text: for the printed URL and the token file only.
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, compared in constant time (for
    /// a given length; the token's length is no secret).
    pub fn matches(&self, candidate: &str) -> bool {
        constant_time_eq(self.0.as_bytes(), candidate.as_bytes())
    }

    /// Write the token to `path` (and a newline), creating the file with
    /// mode 0600 from the start: never readable by others, not even
    /// between a create and a chmod. A file already there is replaced (a
    /// symlink is replaced, not followed).
    pub fn write_file(&self, path: &Path) -> Result<(), TokenError> {
        let err = |source| TokenError::Write {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e)),
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(err)?;
        writeln!(f, "{}", self.0).map_err(err)?;
        f.sync_all().map_err(err)
    }
}

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(..)")
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `a == b` in time that depends on the lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_are_long_random_hex_and_compare_exactly() {
        let a = ApiToken::generate().expect("a token");
        let b = ApiToken::generate().expect("a token");
        assert_eq!(a.reveal().len(), 2 * TOKEN_BYTES);
        assert!(a.reveal().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(a.matches(a.reveal()));
        assert!(!a.matches(b.reveal()));
        assert!(!a.matches(&a.reveal()[1..]));
        assert!(!a.matches(""));
        assert!(!format!("{a:?}").contains(a.reveal()));
    }

    #[test]
    fn the_token_file_is_created_0600_and_replaces_what_was_there() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("token");
        std::fs::write(&path, "old").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let t = ApiToken::generate().expect("a token");
        t.write_file(&path).expect("written");
        let meta = std::fs::metadata(&path).expect("metadata");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.trim_end(), t.reveal());
    }
}
