//! Download links: short-lived capability tokens sealed by the server, for
//! files a browser opens without the caller's credentials (a workspace
//! file, a knowledge-base document), and the document download itself.

mod document;
mod document_token;
mod workspace_token;

pub(crate) use document::{document_file, download_token};
pub(crate) use document_token::open_token;
pub(crate) use workspace_token::{DownloadClaims, mint_download_token, open_download_token};
