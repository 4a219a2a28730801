//! Image media types from magic numbers and file extensions.

/// The media type of image bytes by their signature, if known.
pub(crate) fn sniff_image(data: &[u8]) -> Option<&'static str> {
    const SIGNATURES: [(&[u8], &str); 5] = [
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"BM", "image/bmp"),
    ];
    for (signature, media_type) in SIGNATURES {
        if data.starts_with(signature) {
            return Some(media_type);
        }
    }
    if data.len() > 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    None
}

/// The lower-case extension of `name`, without the dot.
pub(crate) fn extension(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    base.rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
}

/// The media type of an embedded image: sniffed, else by extension, else
/// `application/octet-stream`.
pub(crate) fn embedded_image_type(data: &[u8], entry: &str) -> &'static str {
    if let Some(t) = sniff_image(data) {
        return t;
    }
    match extension(entry).as_deref() {
        Some("emf") => "image/x-emf",
        Some("wmf") => "image/x-wmf",
        Some("tif" | "tiff") => "image/tiff",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_and_extensions() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"hello"), None);
        assert_eq!(
            embedded_image_type(b"??", "word/media/x.EMF"),
            "image/x-emf"
        );
        assert_eq!(extension("dir.d/Report.PDF"), Some("pdf".to_owned()));
        assert_eq!(extension("README"), None);
    }
}
