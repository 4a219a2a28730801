use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Key};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;

use super::*;

/// A value as the first scheme sealed it: the master key itself, no
/// associated data, `v1:`.
fn legacy_seal(key: &[u8; 32], plain: &[u8]) -> String {
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key));
    let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
    let mut out = nonce.to_vec();
    out.extend(cipher.encrypt(&nonce, plain).unwrap());
    format!("v1:{}", B64.encode(out))
}

#[test]
fn sealed_values_open_with_the_same_key_only() {
    let a = Sealer::from_key(&[7; 32]);
    let b = Sealer::from_key(&[8; 32]);
    let sealed = a.seal(Purpose::Credential, b"sk-secret").unwrap();
    assert!(!sealed.contains("sk-secret"));
    assert!(sealed.starts_with("v2:"));
    assert_eq!(a.open(Purpose::Credential, &sealed).unwrap(), b"sk-secret");
    assert!(matches!(
        b.open(Purpose::Credential, &sealed),
        Err(CryptoError::Open)
    ));
    for bad in [
        "v1:AAAA",
        "v2:AAAA",
        "v2:!!",
        "",
        "v3:AAAAAAAAAAAAAAAAAAAAAAAA",
    ] {
        assert!(matches!(
            a.open(Purpose::Credential, bad),
            Err(CryptoError::Open)
        ));
    }
}

#[test]
fn a_value_sealed_for_one_purpose_never_opens_for_another() {
    let sealer = Sealer::from_key(&[7; 32]);
    let purposes = [
        Purpose::Credential,
        Purpose::LibraryMcp,
        Purpose::Token("workspace-download"),
        Purpose::Token("knowledge-download"),
    ];
    for sealed_for in purposes {
        let sealed = sealer.seal(sealed_for, b"claims").unwrap();
        for opened_as in purposes {
            let opened = sealer.open(opened_as, &sealed);
            if opened_as == sealed_for {
                assert_eq!(opened.unwrap(), b"claims");
            } else {
                assert!(
                    matches!(opened, Err(CryptoError::Open)),
                    "{sealed_for:?} opened as {opened_as:?}"
                );
            }
        }
    }
}

#[test]
fn values_sealed_with_the_old_scheme_still_open_as_stored_secrets_but_never_as_tokens() {
    let key = [9; 32];
    let sealer = Sealer::from_key(&key);
    let old = legacy_seal(&key, br#"{"api_key":"sk-old"}"#);
    assert!(Sealer::is_legacy(&old));
    assert_eq!(
        sealer.open(Purpose::Credential, &old).unwrap(),
        br#"{"api_key":"sk-old"}"#
    );
    assert_eq!(
        sealer.open(Purpose::LibraryMcp, &old).unwrap(),
        br#"{"api_key":"sk-old"}"#
    );
    assert!(matches!(
        sealer.open(Purpose::Token("workspace-download"), &old),
        Err(CryptoError::Open)
    ));
    // Another master key still cannot read it.
    assert!(matches!(
        Sealer::from_key(&[1; 32]).open(Purpose::Credential, &old),
        Err(CryptoError::Open)
    ));
    let resealed = sealer.seal(Purpose::Credential, b"x").unwrap();
    assert!(!Sealer::is_legacy(&resealed));
}

#[cfg(unix)]
#[test]
fn key_file_is_created_private_and_reused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let first = Sealer::load_or_create(dir.path()).unwrap();
    let mode = std::fs::metadata(dir.path().join(KEY_FILE))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let second = Sealer::load_or_create(dir.path()).unwrap();
    let sealed = first.seal(Purpose::Credential, b"x").unwrap();
    assert_eq!(second.open(Purpose::Credential, &sealed).unwrap(), b"x");
}
