//! The errors of parsing and chunking.

/// Why a file could not be parsed or sections could not be chunked.
///
/// Every [`ParseLimits`](crate::ParseLimits) limit has its own variant, so a
/// caller can tell a hostile or oversized file from a damaged one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is larger than [`ParseLimits::max_input_bytes`](crate::ParseLimits).
    #[error("the file is {size} bytes, more than the limit of {limit} bytes")]
    InputTooLarge {
        /// The size of the input.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The entries of an archive inflate to more than
    /// [`ParseLimits::max_decompressed_bytes`](crate::ParseLimits) (a zip bomb, or simply too big).
    #[error("the archive decompresses to more than the limit of {limit} bytes")]
    DecompressedTooLarge {
        /// The limit.
        limit: u64,
    },
    /// The archive has more entries than [`ParseLimits::max_entries`](crate::ParseLimits).
    #[error("the archive has {count} entries, more than the limit of {limit}")]
    TooManyEntries {
        /// How many entries the archive declares.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// The file yields more sections than [`ParseLimits::max_sections`](crate::ParseLimits).
    #[error("the file has more than the limit of {limit} sections")]
    TooManySections {
        /// The limit.
        limit: usize,
    },
    /// One section holds more text than
    /// [`ParseLimits::max_section_bytes`](crate::ParseLimits).
    #[error("a section holds more than the limit of {limit} bytes of text")]
    SectionTooLarge {
        /// The limit.
        limit: usize,
    },
    /// XML nests deeper than [`ParseLimits::max_xml_depth`](crate::ParseLimits).
    #[error("the XML part `{part}` nests deeper than the limit of {limit} elements")]
    XmlTooDeep {
        /// The archive entry.
        part: String,
        /// The limit.
        limit: usize,
    },
    /// Text that is not valid UTF-8.
    #[error("`{filename}` is not valid UTF-8 (invalid byte at offset {valid_up_to})")]
    InvalidUtf8 {
        /// The file.
        filename: String,
        /// The length of the valid prefix.
        valid_up_to: usize,
    },
    /// The file is not a well-formed file of the expected format.
    #[error("`{filename}` is not a readable {format} file: {reason}")]
    Malformed {
        /// The file.
        filename: String,
        /// The format the parser expected (`PDF`, `DOCX`, ...).
        format: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The PDF is encrypted and no password can be given.
    #[error("`{filename}` is an encrypted PDF")]
    Encrypted {
        /// The file.
        filename: String,
    },
    /// No registered parser handles this media type or file extension.
    #[error("no parser handles `{what}`")]
    Unsupported {
        /// The media type or file name.
        what: String,
    },
    /// The vector store has no such collection.
    #[error("no collection `{name}`")]
    CollectionNotFound {
        /// The collection.
        name: String,
    },
    /// A vector of the wrong size for its collection.
    #[error("the vector has {actual} dimensions, the collection {expected}")]
    DimensionMismatch {
        /// The collection's size.
        expected: usize,
        /// The vector's size.
        actual: usize,
    },
    /// A vector with NaN or infinite components.
    #[error("the vector has NaN or infinite components")]
    InvalidVector,
    /// Parameters out of range (e.g. `overlap >= chunk_size`).
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),
    /// The vector store's database failed (or holds unreadable records).
    #[error("vector store: {0}")]
    Storage(String),
    /// The embedding model failed.
    #[error("embedding failed: {0}")]
    Embedding(#[from] oxiscope_model::ModelError),
    /// The embedding model answered another number of vectors than it was
    /// given texts.
    #[error("the embedding model returned {actual} vectors for {expected} texts")]
    EmbeddingCount {
        /// Texts sent.
        expected: usize,
        /// Vectors received.
        actual: usize,
    },
}

/// A result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A [`Error::Malformed`] for `filename`.
    pub(crate) fn malformed(
        filename: &str,
        format: &'static str,
        reason: impl std::fmt::Display,
    ) -> Self {
        Self::Malformed {
            filename: filename.to_owned(),
            format,
            reason: reason.to_string(),
        }
    }
}
