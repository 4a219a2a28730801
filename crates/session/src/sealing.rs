//! Secrets at rest and capability tokens: AES-256-GCM under keys derived
//! from one master key, from the environment or a key file created on
//! first start (mode 0600).
//!
//! Every sealed value has a [`Purpose`]. Each purpose seals with a key of
//! its own (HKDF-SHA256 of the master key, the purpose as its info) and
//! binds its label as associated data, so a value sealed for one purpose
//! never opens as another: a stored credential is no download token, and
//! a token of one kind is no token of another.
//!
//! Values sealed before purposes existed (`v1:`, the master key itself,
//! no associated data) still open for the stored purposes
//! ([`Purpose::Credential`], [`Purpose::LibraryMcp`]), never as a token;
//! the next write of such a value seals it anew.

use std::path::Path;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use sha2::Sha256;

/// The environment variable holding the base64 of a 32-byte key.
pub const KEY_ENV: &str = "OXISCOPE_SECRET_KEY";
/// The key file inside the data directory.
pub const KEY_FILE: &str = "secret.key";
/// The prefix of values sealed with a purpose's key.
pub const PREFIX: &str = "v2:";
/// The prefix of values sealed with the master key (read only).
const LEGACY_PREFIX: &str = "v1:";

/// What a sealed value is for; each purpose has a key of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Purpose {
    /// A stored model credential.
    Credential,
    /// A stored library MCP server config (it holds its secrets).
    LibraryMcp,
    /// A stored IM channel's platform credentials.
    Channel,
    /// A capability token of the kind named (a download link).
    Token(&'static str),
}

impl Purpose {
    /// The label its key is derived with.
    fn key_label(self) -> &'static str {
        match self {
            Self::Credential => "credential",
            Self::LibraryMcp => "library-mcp",
            Self::Channel => "channel",
            Self::Token(_) => "token",
        }
    }

    /// The associated data its values are bound to.
    fn aad(self) -> String {
        match self {
            Self::Token(kind) => format!("oxiscope:token:{kind}"),
            other => format!("oxiscope:{}", other.key_label()),
        }
    }

    /// Whether values sealed with the master key are read (stored values
    /// from before purposes; never a token).
    fn reads_legacy(self) -> bool {
        !matches!(self, Self::Token(_))
    }
}

/// Why sealing or unsealing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The key is not the base64 of 32 bytes.
    #[error("the secret key must be the base64 of 32 bytes ({0})")]
    BadKey(String),
    /// The key file could not be read or created.
    #[error("key file {path}: {source}")]
    KeyFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A sealed value is damaged, was sealed with another key, or for
    /// another purpose.
    #[error("a stored secret cannot be decrypted (damaged, or another key)")]
    Open,
    /// Encryption failed.
    #[error("encryption failed")]
    Seal,
}

/// Encrypts and decrypts stored secrets and tokens.
#[derive(Clone)]
pub struct Sealer {
    master: [u8; 32],
    legacy: Aes256Gcm,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    /// A sealer with a raw 32-byte master key.
    #[must_use]
    pub fn from_key(key: &[u8; 32]) -> Self {
        Self {
            master: *key,
            legacy: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key)),
        }
    }

    /// A sealer from a base64 key.
    ///
    /// # Errors
    /// [`CryptoError::BadKey`] unless it decodes to 32 bytes.
    pub fn from_base64(text: &str) -> Result<Self, CryptoError> {
        let bytes = B64
            .decode(text.trim())
            .map_err(|e| CryptoError::BadKey(e.to_string()))?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| CryptoError::BadKey(format!("{} bytes", b.len())))?;
        Ok(Self::from_key(&key))
    }

    /// The key from `OXISCOPE_SECRET_KEY` when set, else from
    /// `<data_dir>/secret.key`, created with a random key and mode 0600
    /// when missing.
    ///
    /// # Errors
    /// [`CryptoError::BadKey`] for a malformed key, [`CryptoError::KeyFile`]
    /// when the file cannot be read or written.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, CryptoError> {
        if let Ok(text) = std::env::var(KEY_ENV) {
            return Self::from_base64(&text);
        }
        let path = data_dir.join(KEY_FILE);
        let io = |source| CryptoError::KeyFile {
            path: path.clone(),
            source,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::from_base64(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(data_dir).map_err(io)?;
                let key = Aes256Gcm::generate_key(OsRng);
                write_private(&path, B64.encode(key).as_bytes()).map_err(io)?;
                let mut raw = [0u8; 32];
                raw.copy_from_slice(&key);
                Ok(Self::from_key(&raw))
            }
            Err(e) => Err(io(e)),
        }
    }

    /// The cipher of `purpose`: its key derived from the master key.
    fn cipher(&self, purpose: Purpose) -> Aes256Gcm {
        let mut key = [0u8; 32];
        let info = format!("oxiscope sealer v2 {}", purpose.key_label());
        // 32 bytes are far below HKDF-SHA256's limit, so expanding never fails.
        let _ = hkdf::Hkdf::<Sha256>::new(None, &self.master).expand(info.as_bytes(), &mut key);
        Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key))
    }

    /// Encrypts `plain` for `purpose`: `v2:` + base64(nonce ‖ ciphertext).
    ///
    /// # Errors
    /// [`CryptoError::Seal`] if the cipher fails.
    pub fn seal(&self, purpose: Purpose, plain: &[u8]) -> Result<String, CryptoError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = purpose.aad();
        let sealed = self
            .cipher(purpose)
            .encrypt(
                &nonce,
                Payload {
                    msg: plain,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| CryptoError::Seal)?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        Ok(format!("{PREFIX}{}", B64.encode(out)))
    }

    /// Decrypts what [`Sealer::seal`] wrote for the same `purpose` (and,
    /// for the stored purposes, what the master key sealed before).
    ///
    /// # Errors
    /// [`CryptoError::Open`] for damaged data, another key or another
    /// purpose.
    pub fn open(&self, purpose: Purpose, sealed: &str) -> Result<Vec<u8>, CryptoError> {
        if let Some(body) = sealed.strip_prefix(PREFIX) {
            let (nonce, data) = split(body)?;
            let aad = purpose.aad();
            return self
                .cipher(purpose)
                .decrypt(
                    Nonce::from_slice(&nonce),
                    Payload {
                        msg: &data,
                        aad: aad.as_bytes(),
                    },
                )
                .map_err(|_| CryptoError::Open);
        }
        match sealed.strip_prefix(LEGACY_PREFIX) {
            Some(body) if purpose.reads_legacy() => {
                let (nonce, data) = split(body)?;
                self.legacy
                    .decrypt(Nonce::from_slice(&nonce), data.as_slice())
                    .map_err(|_| CryptoError::Open)
            }
            _ => Err(CryptoError::Open),
        }
    }

    /// Whether `sealed` is in the old form, sealed with the master key
    /// (worth sealing anew).
    #[must_use]
    pub fn is_legacy(sealed: &str) -> bool {
        sealed.starts_with(LEGACY_PREFIX)
    }
}

/// The nonce and the ciphertext of a sealed value's base64 body.
fn split(body: &str) -> Result<(Vec<u8>, Vec<u8>), CryptoError> {
    let mut bytes = B64.decode(body).map_err(|_| CryptoError::Open)?;
    if bytes.len() < 12 {
        return Err(CryptoError::Open);
    }
    let data = bytes.split_off(12);
    Ok((bytes, data))
}

/// Writes a file only its owner can read.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
#[path = "sealing_tests.rs"]
mod tests;
