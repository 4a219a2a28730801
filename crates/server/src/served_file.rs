//! The headers of every stored file the API serves (workspace files,
//! knowledge-base documents): whatever a tenant uploaded, a browser that
//! opens it never runs it as a page of the API's origin.

use axum::http::{HeaderMap, HeaderValue, header};

/// The policy a served file gets: a sandbox (no scripts, no forms, an
/// opaque origin) that loads nothing.
pub(crate) const SANDBOX_POLICY: &str = "sandbox; default-src 'none'";

/// Sets the headers every served file carries: no type sniffing, the
/// sandboxing `Content-Security-Policy`, and no shared caching.
pub(crate) fn sandbox(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(SANDBOX_POLICY),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
}
