//! The Redis key and channel names of one deployment (one key prefix).

/// Names every key and channel under one prefix. Per-session names put
/// the kind before the session id (`<prefix>log:<session>`), so no session
/// id, whatever characters it holds, can name another session's key.
#[derive(Debug, Clone)]
pub(super) struct Keys {
    prefix: String,
}

/// The keys of one session, in the order every script takes them.
pub(super) struct SessionKeys {
    /// `KEYS[1]`: the run lock (string: the owner token, with a TTL).
    pub(super) lock: String,
    /// `KEYS[2]`: the run's bookkeeping (hash: `run`, `seq`, `checkpoint`).
    pub(super) meta: String,
    /// `KEYS[3]`: the replay log (stream; ids are cursors).
    pub(super) log: String,
    /// `KEYS[4]`: queued inputs (list of JSON documents).
    pub(super) inbox: String,
    /// `KEYS[9]`: the last lease's token (string), kept `idle_ttl` beyond
    /// the lock: a lease that ran out still renews or releases while
    /// nobody else took the lock.
    pub(super) owner: String,
    /// `ARGV[2]`: the live events channel.
    pub(super) channel: String,
}

impl Keys {
    pub(super) fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    pub(super) fn prefix(&self) -> &str {
        &self.prefix
    }

    pub(super) fn session(&self, session_id: &str) -> SessionKeys {
        let p = &self.prefix;
        SessionKeys {
            lock: format!("{p}lock:{session_id}"),
            meta: format!("{p}meta:{session_id}"),
            log: format!("{p}log:{session_id}"),
            inbox: format!("{p}inbox:{session_id}"),
            owner: format!("{p}owner:{session_id}"),
            channel: self.channel(session_id),
        }
    }

    /// The live events channel of a session.
    pub(super) fn channel(&self, session_id: &str) -> String {
        format!("{}events:{session_id}", self.prefix)
    }

    /// `KEYS[5]`: sessions with a pending wakeup (sorted set, oldest first).
    pub(super) fn wakeups(&self) -> String {
        format!("{}wakeups", self.prefix)
    }

    /// `KEYS[6]`: the last run number handed out.
    pub(super) fn clock(&self) -> String {
        format!("{}clock", self.prefix)
    }

    /// `KEYS[7]`: how many sessions were forgotten (orders forget notices).
    pub(super) fn forgets(&self) -> String {
        format!("{}forgets", self.prefix)
    }

    /// `KEYS[8]`: the order of posted wakeups.
    pub(super) fn wake_seq(&self) -> String {
        format!("{}wakeseq", self.prefix)
    }

    /// `KEYS[10]`: sessions whose only state is a log, least recently
    /// idle first (sorted set; the score is when it went idle).
    pub(super) fn idle(&self) -> String {
        format!("{}idle", self.prefix)
    }

    /// Open-run records (hash: session id to info JSON); scripts reach it
    /// as `prefix .. 'runs'`.
    pub(super) fn runs(&self) -> String {
        format!("{}runs", self.prefix)
    }

    /// `ARGV[3]`: the channel that announces queued input.
    pub(super) fn wake_channel(&self) -> String {
        format!("{}wake", self.prefix)
    }

    /// A `SCAN MATCH` pattern for every key of `kind` (`log`, `inbox`, ...).
    pub(super) fn pattern(&self, kind: &str) -> String {
        let mut out = String::new();
        for c in self.prefix.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
        format!("{out}{kind}:*")
    }

    /// The session id of a key of `kind`, if it is one.
    pub(super) fn session_of<'k>(&self, kind: &str, key: &'k str) -> Option<&'k str> {
        key.strip_prefix(self.prefix.as_str())?
            .strip_prefix(kind)?
            .strip_prefix(':')
    }
}
