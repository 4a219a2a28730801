//! Path resolution and the dangerous-path lists.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Where relative paths and `~` point: the process's current directory and
/// the user's home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEnv {
    cwd: PathBuf,
    home: Option<PathBuf>,
    follow_symlinks: bool,
}

impl PathEnv {
    /// An environment with the given current directory and home; symbolic
    /// links are followed.
    pub fn new(cwd: impl Into<PathBuf>, home: Option<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            home,
            follow_symlinks: true,
        }
    }

    /// The process's current directory and `$HOME` (falls back to `/` when
    /// the current directory cannot be read).
    #[must_use]
    pub fn from_process() -> Self {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Self::new(cwd, home)
    }

    /// Whether symbolic links on disk are resolved (on by default). Turning
    /// it off makes resolution purely lexical, e.g. for reproducible tests.
    #[must_use]
    pub fn with_symlinks_followed(mut self, follow: bool) -> Self {
        self.follow_symlinks = follow;
        self
    }

    /// The same environment with another current directory (after a `cd`).
    #[must_use]
    pub fn with_cwd(&self, cwd: PathBuf) -> Self {
        Self {
            cwd,
            ..self.clone()
        }
    }

    /// The current directory.
    #[must_use]
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The home directory, if known.
    #[must_use]
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Resolves a path as the shell would see it: `~` and `~/x` expand to
    /// the home directory, relative paths join the current directory, `.`
    /// and `..` are collapsed, and symbolic links of the existing part are
    /// followed.
    ///
    /// Returns `None` when the path cannot be known statically (`~user`, or
    /// no home directory for `~`).
    #[must_use]
    pub fn resolve(&self, raw: &str) -> Option<PathBuf> {
        let joined = if raw == "~" {
            self.home.clone()?
        } else if let Some(rest) = raw.strip_prefix("~/") {
            self.home.as_ref()?.join(rest)
        } else if raw.starts_with('~') {
            return None;
        } else {
            let path = Path::new(raw);
            if path.is_absolute() {
                path.to_path_buf()
            } else {
                self.cwd.join(path)
            }
        };
        let lexical = normalise(&joined);
        Some(if self.follow_symlinks {
            follow_links(&lexical)
        } else {
            lexical
        })
    }

    /// Resolves every working directory of a context plus the current directory.
    pub fn working_roots<'a>(&self, dirs: impl Iterator<Item = &'a str>) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = dirs.filter_map(|d| self.resolve(d)).collect();
        if let Some(cwd) = self.resolve(".") {
            roots.push(cwd);
        }
        roots
    }
}

/// Collapses `.` and `..` without touching the file system.
#[must_use]
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        out
    }
}

/// Follows symbolic links along an absolute, normalised path, walking it
/// from the root; the first component that does not exist ends the walk (no
/// link can hide below it). Gives up after 40 links (a loop) and returns
/// the lexical path.
fn follow_links(path: &Path) -> PathBuf {
    let mut pending: Vec<OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                let Ok(target) = std::fs::read_link(&candidate) else {
                    return path.to_path_buf();
                };
                if hops > 40 {
                    return path.to_path_buf();
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for component in target.components().rev() {
                    match component {
                        Component::Normal(n) => pending.push(n.to_os_string()),
                        Component::ParentDir => pending.push(OsString::from("..")),
                        _ => {}
                    }
                }
            }
            Ok(_) => out = candidate,
            Err(_) => {
                out = candidate;
                while let Some(rest) = pending.pop() {
                    if rest == ".." {
                        out.pop();
                    } else {
                        out.push(rest);
                    }
                }
            }
        }
    }
    out
}

/// Whether `path` is one of `roots` or inside one.
#[must_use]
pub fn is_within(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| path.starts_with(root))
}

/// Files and directories whose modification (and, for secrets, reading)
/// needs the user's explicit consent, compared case-insensitively.
///
/// A file entry matches a path whose last component equals it (`.env`
/// entries also match `.env.<anything>`); a directory entry matches any
/// path with that component anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DangerousPaths {
    files: Vec<String>,
    directories: Vec<String>,
}

const DEFAULT_FILES: &[&str] = &[
    // Shell start-up files.
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
    // Git configuration.
    ".gitconfig",
    ".gitmodules",
    ".git-credentials",
    // SSH keys and configuration.
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "authorized_keys",
    // Credentials.
    ".env",
    ".env.local",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".pgpass",
    "credentials",
];

const DEFAULT_DIRECTORIES: &[&str] = &[
    ".git", ".ssh", ".claude", ".vscode", ".idea", ".aws", ".kube", ".gnupg", ".docker",
];

impl Default for DangerousPaths {
    fn default() -> Self {
        Self {
            files: DEFAULT_FILES.iter().map(|s| (*s).to_owned()).collect(),
            directories: DEFAULT_DIRECTORIES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        }
    }
}

impl DangerousPaths {
    /// Adds a file name.
    #[must_use]
    pub fn with_file(mut self, name: impl Into<String>) -> Self {
        self.files.push(name.into().to_lowercase());
        self
    }

    /// Adds a directory name.
    #[must_use]
    pub fn with_directory(mut self, name: impl Into<String>) -> Self {
        self.directories
            .push(name.into().trim_end_matches('/').to_lowercase());
        self
    }

    /// Whether a path (as written or resolved) touches a dangerous file or directory.
    #[must_use]
    pub fn matches(&self, path: &Path) -> bool {
        let names: Vec<String> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_string_lossy().to_lowercase()),
                _ => None,
            })
            .collect();
        let Some(last) = names.last() else {
            return false;
        };
        let file_hit = self
            .files
            .iter()
            .any(|f| last == f || (f == ".env" && last.starts_with(".env.")));
        file_hit
            || names
                .iter()
                .any(|n| self.directories.iter().any(|d| d == n))
    }
}

impl DangerousPaths {
    /// Whether a glob pattern (a Glob/Grep `pattern` or `glob` argument)
    /// could reach a dangerous file or directory: a component that is not a
    /// bare wildcard (`*`, `**`), read as a glob, matches one of the names.
    #[must_use]
    pub fn pattern_reaches(&self, pattern: &str) -> bool {
        if self.matches(Path::new(pattern)) {
            return true;
        }
        pattern
            .split('/')
            .filter(|c| !c.chars().all(|ch| matches!(ch, '*' | '?')))
            .any(|component| {
                let Ok(glob) = globset::GlobBuilder::new(&component.to_lowercase())
                    .literal_separator(true)
                    .build()
                else {
                    return false;
                };
                let matcher = glob.compile_matcher();
                self.files
                    .iter()
                    .chain(&self.directories)
                    .any(|name| matcher.is_match(name))
                    || matcher.is_match(".env.local")
            })
    }
}

/// Top-level directories that belong to the operating system.
const SYSTEM_DIRECTORIES: &[&str] = &[
    "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys",
    "/proc", "/dev", "/System", "/Library",
];

/// Whether a resolved path lies inside an operating-system directory
/// (`/etc`, `/usr`, `/boot`, `/dev`, ...).
#[must_use]
pub fn is_system_path(path: &Path) -> bool {
    SYSTEM_DIRECTORIES.iter().any(|dir| path.starts_with(dir))
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
