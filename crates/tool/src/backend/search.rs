//! File-name and content search on ripgrep's crates (`ignore`, `globset`,
//! `grep-searcher`, `grep-regex`), in-process.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use globset::GlobBuilder;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};

use super::file::open_regular;
use super::local::mtime_of;
use super::{GlobMatch, GlobRequest, GrepMode, GrepOutput, GrepRequest};

/// Longest content line reported, in characters.
const MAX_LINE_CHARS: usize = 2_000;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Splits an absolute pattern into the directory before its first glob
/// component and the rest.
fn split_absolute(pattern: &str) -> (PathBuf, String) {
    let mut base = PathBuf::new();
    let mut rest = Vec::new();
    for component in Path::new(pattern).components() {
        let text = component.as_os_str().to_string_lossy();
        let magic = text.contains(['*', '?', '[', '{']);
        if rest.is_empty() && !magic {
            base.push(component);
        } else if !matches!(component, Component::RootDir) {
            rest.push(text.into_owned());
        }
    }
    (base, rest.join("/"))
}

fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder.require_git(false).follow_links(false);
    builder
}

/// The directory a glob search walks and the pattern matched below it: an
/// absolute pattern's leading directory, or `request.root`.
fn glob_parts(request: &GlobRequest) -> (PathBuf, String) {
    if Path::new(&request.pattern).is_absolute() {
        split_absolute(&request.pattern)
    } else {
        (
            request.root.clone(),
            request.pattern.trim_start_matches("./").to_owned(),
        )
    }
}

/// The directory [`glob`] walks for `request`: the leading directory of an
/// absolute pattern (`request.root` is then unused), otherwise
/// `request.root`. A caller confining searches checks this path.
pub(super) fn glob_root(request: &GlobRequest) -> PathBuf {
    glob_parts(request).0
}

/// Files matching `request.pattern`, newest first (ties by path),
/// respecting `.gitignore`/`.ignore` files and skipping hidden ones; the
/// search behind the `Glob` tool.
///
/// A relative pattern is matched against paths relative to `request.root`,
/// with `*` not crossing `/`; an absolute pattern (`/src/**/*.rs`) is
/// searched from its leading directory instead of `request.root`.
///
/// Symbolic links below the searched directory are neither followed nor
/// listed (a link to `/` does not widen the search). The directory itself
/// is followed when it is a link, as an explicitly named path: a caller
/// confining searches must check where it leads, as
/// [`LocalBackend::with_roots`](super::LocalBackend::with_roots) does.
///
/// This function blocks while it walks the file system (on several
/// threads); async callers run it with `tokio::task::spawn_blocking`.
///
/// # Errors
///
/// An invalid glob (`InvalidInput`) or a searched directory that does not
/// exist or is not a directory (`NotFound`). Unreadable entries below it
/// are skipped.
pub fn glob(request: &GlobRequest) -> io::Result<Vec<GlobMatch>> {
    let (root, pattern) = glob_parts(request);
    let matcher = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| invalid(format!("invalid glob pattern `{}`: {e}", request.pattern)))?
        .compile_matcher();
    if !root.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} is not a directory", root.display()),
        ));
    }
    let found = Mutex::new(Vec::new());
    walker(&root).build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file()) {
                let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
                if matcher.is_match(rel) {
                    let modified = entry.metadata().map_or(0.0, |m| mtime_of(&m));
                    if let Ok(mut found) = found.lock() {
                        found.push(GlobMatch {
                            path: entry.path().to_path_buf(),
                            modified,
                        });
                    }
                }
            }
            WalkState::Continue
        })
    });
    let mut found = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    found.sort_by(|a, b| {
        b.modified
            .total_cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(found)
}

struct FileHits {
    path: String,
    entries: Vec<String>,
    count: u64,
}

/// Searches the contents of the files under `request.root` (or the one
/// file it names) for `request.pattern`; the search behind the `Grep`
/// tool. Ignore files are respected, hidden files and binary files (a NUL
/// byte) skipped; entries come sorted by path, at most
/// `request.max_entries` of them.
///
/// Symbolic links below `request.root` are never followed: a link to a
/// directory is not entered and a link to a file is not read, and each
/// file is opened with `O_NOFOLLOW`, so a file swapped for a link after
/// the directory was listed is skipped too. FIFOs, sockets and devices are
/// skipped without being opened. `request.root` itself is followed when it
/// is a link, as an explicitly named path: a caller confining searches must
/// check where it leads, as
/// [`LocalBackend::with_roots`](super::LocalBackend::with_roots) does.
///
/// This function blocks while it walks and reads the file system (on
/// several threads); async callers run it with
/// `tokio::task::spawn_blocking`.
///
/// # Errors
///
/// An invalid regex, glob or file type (`InvalidInput`), or a root that
/// does not exist (`NotFound`). Unreadable files are skipped.
pub fn grep(request: &GrepRequest) -> io::Result<GrepOutput> {
    let matcher = regex_matcher(request)?;

    if !request.root.exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} does not exist", request.root.display()),
        ));
    }
    let mut walk = walker(&request.root);
    if let Some(glob) = &request.glob {
        let mut overrides = OverrideBuilder::new(&request.root);
        for part in split_glob_list(glob) {
            overrides
                .add(&part)
                .map_err(|e| invalid(format!("invalid glob `{glob}`: {e}")))?;
        }
        walk.overrides(
            overrides
                .build()
                .map_err(|e| invalid(format!("invalid glob `{glob}`: {e}")))?,
        );
    }
    if let Some(kind) = &request.file_type {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        types.select(kind);
        walk.types(
            types
                .build()
                .map_err(|e| invalid(format!("unknown file type `{kind}`: {e}")))?,
        );
    }

    // Enough to fill the requested page even after sorting; beyond it the walk stops.
    let budget = budget(request);
    let produced = AtomicUsize::new(0);
    let hits = Mutex::new(Vec::<FileHits>::new());
    let stopped = AtomicUsize::new(0);
    walk.build_parallel().run(|| {
        let mut searcher = searcher(request);
        let matcher = matcher.clone();
        let (hits, produced, stopped) = (&hits, &produced, &stopped);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path().to_string_lossy().into_owned();
            let mut sink = Collect {
                path: &path,
                mode: request.mode,
                line_numbers: request.line_numbers,
                entries: Vec::new(),
                count: 0,
                limit: budget,
            };
            // Only the root may be a link that is followed (see the docs).
            let Ok(file) = open_regular(entry.path(), entry.depth() == 0) else {
                return WalkState::Continue;
            };
            if searcher.search_file(&matcher, &file, &mut sink).is_err() || sink.count == 0 {
                return WalkState::Continue;
            }
            let added = match request.mode {
                GrepMode::Content => sink.entries.len(),
                _ => 1,
            };
            let (entries, count) = (sink.entries, sink.count);
            let hit = FileHits {
                path,
                entries,
                count,
            };
            if let Ok(mut hits) = hits.lock() {
                hits.push(hit);
            }
            if produced.fetch_add(added, Ordering::Relaxed) + added >= budget {
                stopped.store(1, Ordering::Relaxed);
                return WalkState::Quit;
            }
            WalkState::Continue
        })
    });
    let hits = hits
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(output(request, hits, stopped.load(Ordering::Relaxed) == 1))
}

/// The regex of a content search.
fn regex_matcher(request: &GrepRequest) -> io::Result<grep_regex::RegexMatcher> {
    let mut matcher = RegexMatcherBuilder::new();
    matcher
        .case_insensitive(request.case_insensitive)
        .multi_line(true);
    if request.multiline {
        matcher.dot_matches_new_line(true);
    } else {
        matcher.line_terminator(Some(b'\n'));
    }
    matcher
        .build(&request.pattern)
        .map_err(|e| invalid(format!("invalid regex `{}`: {e}", request.pattern)))
}

/// The largest line (or multi-line window) a search holds in memory; a
/// file with a longer one is skipped instead of filling the server's
/// memory.
const HEAP_LIMIT: usize = 16 * 1024 * 1024;

/// A searcher for one thread of a content search.
fn searcher(request: &GrepRequest) -> Searcher {
    let context = |n| {
        if request.mode == GrepMode::Content {
            n
        } else {
            0
        }
    };
    SearcherBuilder::new()
        .line_number(true)
        .before_context(context(request.before))
        .after_context(context(request.after))
        .binary_detection(BinaryDetection::quit(0))
        .multi_line(request.multiline)
        .heap_limit(Some(HEAP_LIMIT))
        .build()
}

/// How many entries a search collects before it stops: enough to fill the
/// requested page even after sorting.
fn budget(request: &GrepRequest) -> usize {
    request.max_entries.saturating_mul(4).max(10_000)
}

/// The result of a content search from its files' hits.
fn output(request: &GrepRequest, mut hits: Vec<FileHits>, stopped: bool) -> GrepOutput {
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut out = GrepOutput {
        files: hits.len(),
        matches: hits.iter().map(|h| h.count).sum(),
        truncated: stopped,
        entries: Vec::new(),
    };
    for hit in hits {
        let lines = match request.mode {
            GrepMode::Content => hit.entries,
            GrepMode::FilesWithMatches => vec![hit.path],
            GrepMode::Count => vec![format!("{}:{}", hit.path, hit.count)],
        };
        for line in lines {
            if out.entries.len() >= request.max_entries {
                out.truncated = true;
                return out;
            }
            out.entries.push(line);
        }
    }
    out
}

/// A content search over files someone else opens: the walk behind
/// `Grep` for a caller that must not walk by path (a sandbox whose tenant
/// can swap directories for links while the walk runs opens every
/// directory and file through handles and hands the files here).
///
/// [`filter`](Self::filter) says whether a path (relative to the searched
/// root) passes the request's glob and file type; [`search`](Self::search)
/// searches one opened file and says whether to go on;
/// [`finish`](Self::finish) gives the output `grep` would, sorted by the
/// names given.
pub struct GrepOpened<'r> {
    request: &'r GrepRequest,
    matcher: grep_regex::RegexMatcher,
    searcher: Searcher,
    overrides: Option<ignore::overrides::Override>,
    types: Option<ignore::types::Types>,
    hits: Vec<FileHits>,
    produced: usize,
    stopped: bool,
}

impl std::fmt::Debug for GrepOpened<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrepOpened")
            .field("request", &self.request)
            .field("produced", &self.produced)
            .finish_non_exhaustive()
    }
}

impl<'r> GrepOpened<'r> {
    /// A search for `request` (its `root` is not used).
    ///
    /// # Errors
    /// An invalid regex, glob or file type (`InvalidInput`).
    pub fn new(request: &'r GrepRequest) -> io::Result<Self> {
        let overrides = match &request.glob {
            Some(glob) => {
                let mut builder = OverrideBuilder::new("");
                for part in split_glob_list(glob) {
                    builder
                        .add(&part)
                        .map_err(|e| invalid(format!("invalid glob `{glob}`: {e}")))?;
                }
                Some(
                    builder
                        .build()
                        .map_err(|e| invalid(format!("invalid glob `{glob}`: {e}")))?,
                )
            }
            None => None,
        };
        let types = match &request.file_type {
            Some(kind) => {
                let mut builder = TypesBuilder::new();
                builder.add_defaults();
                builder.select(kind);
                Some(
                    builder
                        .build()
                        .map_err(|e| invalid(format!("unknown file type `{kind}`: {e}")))?,
                )
            }
            None => None,
        };
        Ok(Self {
            request,
            matcher: regex_matcher(request)?,
            searcher: searcher(request),
            overrides,
            types,
            hits: Vec::new(),
            produced: 0,
            stopped: false,
        })
    }

    /// Whether `rel` (relative to the searched root) passes the glob and
    /// the file type; directories a glob excludes are not entered.
    #[must_use]
    pub fn filter(&self, rel: &Path, is_dir: bool) -> bool {
        if let Some(overrides) = &self.overrides
            && overrides.matched(rel, is_dir).is_ignore()
        {
            return false;
        }
        if let Some(types) = &self.types
            && !is_dir
            && !types.matched(rel, false).is_whitelist()
        {
            return false;
        }
        true
    }

    /// Searches `file`, reported as `name`; `false` once enough entries
    /// are collected (the caller stops walking).
    pub fn search(&mut self, name: &str, file: &std::fs::File) -> bool {
        let budget = budget(self.request);
        let mut sink = Collect {
            path: name,
            mode: self.request.mode,
            line_numbers: self.request.line_numbers,
            entries: Vec::new(),
            count: 0,
            limit: budget,
        };
        if self
            .searcher
            .search_file(&self.matcher, file, &mut sink)
            .is_err()
            || sink.count == 0
        {
            return !self.stopped;
        }
        self.produced += match self.request.mode {
            GrepMode::Content => sink.entries.len(),
            _ => 1,
        };
        let (entries, count) = (sink.entries, sink.count);
        self.hits.push(FileHits {
            path: name.to_owned(),
            entries,
            count,
        });
        if self.produced >= budget {
            self.stopped = true;
        }
        !self.stopped
    }

    /// Marks the output truncated (the caller stopped early for its own
    /// reasons: a deadline, a cap).
    pub fn truncate(&mut self) {
        self.stopped = true;
    }

    /// The output.
    #[must_use]
    pub fn finish(self) -> GrepOutput {
        output(self.request, self.hits, self.stopped)
    }
}

/// `a,b` and `{a,b}` style lists: split on top-level commas and spaces.
fn split_glob_list(glob: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in glob.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if (c == ',' || c.is_whitespace()) && depth == 0 {
            if !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

struct Collect<'a> {
    path: &'a str,
    mode: GrepMode,
    line_numbers: bool,
    entries: Vec<String>,
    count: u64,
    limit: usize,
}

impl Collect<'_> {
    fn push(&mut self, number: Option<u64>, sep: char, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text: String = if text.chars().count() > MAX_LINE_CHARS {
            let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
            format!("{cut} [line truncated]")
        } else {
            text.to_owned()
        };
        let entry = match (self.line_numbers, number) {
            (true, Some(n)) => format!("{}{sep}{n}{sep}{text}", self.path),
            _ => format!("{}{sep}{text}", self.path),
        };
        self.entries.push(entry);
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, hit: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        match self.mode {
            GrepMode::FilesWithMatches => Ok(false),
            GrepMode::Count => Ok(true),
            GrepMode::Content => {
                let first = hit.line_number();
                for (i, line) in hit.lines().enumerate() {
                    self.push(first.map(|n| n + i as u64), ':', line);
                }
                Ok(self.entries.len() < self.limit)
            }
        }
    }

    fn context(&mut self, _searcher: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.mode == GrepMode::Content {
            self.push(ctx.line_number(), '-', ctx.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.mode == GrepMode::Content {
            self.entries.push("--".to_owned());
        }
        Ok(true)
    }
}
