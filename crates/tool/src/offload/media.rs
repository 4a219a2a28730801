//! Pure helpers of the file offloader: names, extensions, base64, hashes.

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_PAD_INDIFFERENT, URL_SAFE_PAD_INDIFFERENT};
use sha2::{Digest, Sha256};

use super::OffloadError;

/// The longest session id accepted, in bytes.
pub(super) const MAX_SESSION_ID_LEN: usize = 200;

/// The longest tool call id used verbatim in a file name, in bytes.
const MAX_CALL_ID_LEN: usize = 100;

/// Checks that `id` is one plain directory name.
pub(super) fn validate_session_id(id: &str) -> Result<(), OffloadError> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id == "." || id == ".." {
        Some("it names a relative directory")
    } else if id.len() > MAX_SESSION_ID_LEN {
        Some("it is longer than 200 bytes")
    } else if id.contains(['/', '\\']) {
        Some("it contains a path separator")
    } else if id.contains('\0') {
        Some("it contains a NUL character")
    } else if id.chars().any(char::is_control) {
        Some("it contains a control character")
    } else {
        None
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(OffloadError::InvalidSessionId {
            id: id.to_owned(),
            reason,
        }),
    }
}

/// The part of a file name that stands for a tool call id.
///
/// Ids made of ASCII letters, digits, `_`, `-` and `.` (every provider's
/// ids are) of at most 100 bytes are used as they are. Anything else is
/// sanitised — other characters become `_`, the result is cut to 100 bytes —
/// and gets `-` plus 16 hex digits of the id's SHA-256 appended, so two
/// distinct ids never share a file.
pub(super) fn call_id_file_part(id: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if !id.is_empty() && id.len() <= MAX_CALL_ID_LEN && id.chars().all(plain) {
        return id.to_owned();
    }
    let mut out: String = id
        .chars()
        .map(|c| if plain(c) { c } else { '_' })
        .take(MAX_CALL_ID_LEN)
        .collect();
    out.push('-');
    out.push_str(&sha256_hex(id.as_bytes())[..16]);
    out
}

/// The lowercase hex SHA-256 of `bytes`.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The file extension for a MIME type; `bin` when unknown.
///
/// Parameters (`; charset=utf-8`) and case are ignored. Only extensions
/// from this fixed table are ever returned, so a media type cannot steer a
/// file name.
pub(super) fn extension_for(media_type: &str) -> &'static str {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" | "image/pjpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" | "image/x-ms-bmp" => "bmp",
        "image/tiff" => "tiff",
        "image/heic" => "heic",
        "image/heif" => "heif",
        "image/avif" => "avif",
        "image/x-icon" | "image/vnd.microsoft.icon" => "ico",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
        "audio/ogg" => "ogg",
        "audio/flac" | "audio/x-flac" => "flac",
        "audio/aac" => "aac",
        "audio/mp4" | "audio/x-m4a" | "audio/m4a" => "m4a",
        "audio/webm" | "video/webm" => "webm",
        "audio/opus" => "opus",
        "audio/pcm" | "audio/l16" => "pcm",
        "video/mp4" => "mp4",
        "video/mpeg" => "mpeg",
        "video/quicktime" => "mov",
        "video/x-msvideo" => "avi",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/zip" => "zip",
        "application/gzip" | "application/x-gzip" => "gz",
        "application/x-tar" => "tar",
        "application/xml" | "text/xml" => "xml",
        "application/msword" => "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.ms-excel" => "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation" => "pptx",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/csv" => "csv",
        "text/html" => "html",
        "text/css" => "css",
        "text/javascript" | "application/javascript" => "js",
        _ => "bin",
    }
}

/// Decodes a base64 payload leniently: standard or URL-safe alphabet,
/// padded or not, ASCII whitespace ignored, and a `data:...;base64,`
/// prefix tolerated.
pub(super) fn decode_base64(data: &str) -> Result<Vec<u8>, String> {
    let payload = match data.strip_prefix("data:") {
        Some(rest) => match rest.split_once(',') {
            Some((_, payload)) => payload,
            None => data,
        },
        None => data,
    };
    let compact: std::borrow::Cow<'_, str> = if payload.bytes().any(|b| b.is_ascii_whitespace()) {
        payload
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect()
    } else {
        payload.into()
    };
    match STANDARD_PAD_INDIFFERENT.decode(compact.as_bytes()) {
        Ok(bytes) => Ok(bytes),
        Err(standard) => URL_SAFE_PAD_INDIFFERENT
            .decode(compact.as_bytes())
            .map_err(|_| standard.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_that_could_escape_the_root_are_rejected() {
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "../x",
            "a\\b",
            "a\0b",
            "a\nb",
            &"x".repeat(201),
        ] {
            assert!(
                matches!(
                    validate_session_id(bad),
                    Err(OffloadError::InvalidSessionId { .. })
                ),
                "{bad:?} was accepted"
            );
        }
        for good in ["s1", "...", "a.b", "séance-42", &"x".repeat(200)] {
            assert!(validate_session_id(good).is_ok(), "{good:?} was rejected");
        }
    }

    #[test]
    fn plain_call_ids_are_kept_and_others_get_a_distinguishing_hash() {
        assert_eq!(call_id_file_part("toolu_01AbC-x.y"), "toolu_01AbC-x.y");
        let slash = call_id_file_part("a/b");
        let under = call_id_file_part("a_b");
        assert_eq!(under, "a_b");
        assert!(
            slash.starts_with("a_b-") && slash.len() == 4 + 16,
            "{slash}"
        );
        assert_ne!(slash, under);
        let traversal = call_id_file_part("../../etc/passwd");
        assert!(!traversal.contains('/'), "{traversal}");
        let empty = call_id_file_part("");
        assert_eq!(empty.len(), 17, "{empty}");
        let long = call_id_file_part(&"y".repeat(500));
        assert_eq!(long.len(), 100 + 17);
    }

    #[test]
    fn extensions_come_from_the_media_type_and_default_to_bin() {
        assert_eq!(extension_for("image/png"), "png");
        assert_eq!(extension_for("IMAGE/JPEG"), "jpg");
        assert_eq!(extension_for("text/plain; charset=utf-8"), "txt");
        assert_eq!(extension_for("audio/mpeg"), "mp3");
        assert_eq!(extension_for("application/pdf"), "pdf");
        assert_eq!(extension_for("application/x-unknown"), "bin");
        assert_eq!(extension_for("../../evil"), "bin");
        assert_eq!(extension_for(""), "bin");
    }

    #[test]
    fn base64_decoding_is_lenient_about_alphabet_padding_and_whitespace() {
        let bytes = vec![0xfb, 0xff, 0x00, 0x41];
        assert_eq!(decode_base64("+/8AQQ==").unwrap(), bytes);
        assert_eq!(decode_base64("+/8AQQ").unwrap(), bytes);
        assert_eq!(decode_base64("-_8AQQ==").unwrap(), bytes);
        assert_eq!(decode_base64("+/8A\nQQ==\n").unwrap(), bytes);
        assert_eq!(
            decode_base64("data:image/png;base64,+/8AQQ==").unwrap(),
            bytes
        );
        assert!(decode_base64("not base64 at all!").is_err());
    }

    #[test]
    fn sha256_hex_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
