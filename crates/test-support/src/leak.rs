//! What a hostile tenant must never see of the process that serves it.

/// Every `NAME=value` pair of this process's environment that a sandbox
/// must not show: all of them, except the few a sandbox sets itself to
/// the same value (`LANG=C.UTF-8`, say) and values too short to be told
/// apart from other text.
#[must_use]
pub fn host_env_pairs() -> Vec<String> {
    const SANDBOX_OWN: [&str; 4] = [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/workspace",
        "LANG=C.UTF-8",
        "TMPDIR=/tmp",
    ];
    std::env::vars()
        .filter(|(_, value)| value.len() >= 4)
        .map(|(key, value)| format!("{key}={value}"))
        .filter(|pair| !SANDBOX_OWN.contains(&pair.as_str()))
        .collect()
}

/// The first of [`host_env_pairs`] that `seen` contains, if any.
#[must_use]
pub fn leaked_env_pair(seen: &str) -> Option<String> {
    host_env_pairs()
        .into_iter()
        .find(|pair| seen.contains(pair.as_str()))
}

/// A shell script that prints, for every process a sandboxed command can
/// see (`/proc/<pid>`, `/proc/self/..`), its environment, its command
/// line, the start of its memory, where its descriptors lead and the
/// contents of those that are regular files or memory files, then `ps e`:
/// every way to read another process's environment from inside.
pub const PROC_SWEEP: &str = r#"
for p in /proc/[0-9]* /proc/self/.. /proc/self/../1; do
  echo "== $p"
  tr '\0' '\n' < "$p/environ" 2>&1
  tr '\0' ' ' < "$p/cmdline" 2>&1; echo
  head -c 256 "$p/mem" 2>&1 | tr '\0' ' ' | head -c 300; echo
  for f in "$p"/fd/*; do
    t=$(readlink "$f" 2>&1)
    echo "fd $f -> $t"
    case "$t" in
      pipe:*|socket:*|anon_inode:*|/dev/*) ;;
      *) timeout 2 head -c 65536 "$f" 2>&1 | tr '\0' '\n' ;;
    esac
  done
done
ps e 2>&1; ps auxe 2>&1
echo SWEEP-DONE
"#;
