//! The Lua scripts that make each bus operation one atomic step on the
//! Redis server.
//!
//! Every script takes the same keys and leading arguments (see
//! [`PRELUDE`]), so one invocation helper serves them all.

use redis::Script;

/// Names the keys and arguments every script gets, and the helpers they
/// share.
///
/// `KEYS`: lock, meta, log, inbox, wakeups, clock, forgets, wakeseq, owner,
/// idle. `ARGV`: session id, events channel, wake channel, idle TTL (ms),
/// idle logs kept, then the operation's own arguments from `ARGV[6]`.
const PRELUDE: &str = r"
local lock, meta, log, inbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local wakeups, clock, forgets, wakeseq, owner = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local idle_index = KEYS[10]
local session, channel, wake, idle = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local idle_logs = tonumber(ARGV[5])
-- The keys' common prefix (`lock` is `<prefix>lock:<session>`).
local prefix = string.sub(lock, 1, #lock - #session - 5)
-- Re-files the session after a change: out of the idle index while a lock
-- or queued input needs it, at its back while only a log is left; then
-- drops the least recently idle logs beyond `idle_logs`.
local function settle()
  local busy = redis.call('EXISTS', lock) == 1 or redis.call('LLEN', inbox) > 0
  if busy or redis.call('EXISTS', log) == 0 then
    redis.call('ZREM', idle_index, session)
    return
  end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('ZADD', idle_index, now, session)
  while redis.call('ZCARD', idle_index) > idle_logs do
    local other = redis.call('ZPOPMIN', idle_index)[1]
    redis.call('DEL', prefix .. 'meta:' .. other, prefix .. 'log:' .. other,
      prefix .. 'owner:' .. other)
  end
end
-- The run's log lives while the lock does, then `idle` ms more.
local function keep()
  local left = redis.call('PTTL', lock)
  if left < 0 then left = 0 end
  redis.call('PEXPIRE', meta, left + idle)
  redis.call('PEXPIRE', log, left + idle)
  settle()
end
-- Whether `token` owns the session: it holds the live lock, or its lease
-- ran out and nobody took the lock since.
local function holds(token)
  local current = redis.call('GET', lock)
  if current then return current == token end
  return redis.call('GET', owner) == token
end
-- A run number above every one handed out before: microseconds of the
-- server's clock, never going back.
local function next_run()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', clock) or '0')
  if now <= last then now = last + 1 end
  local run = string.format('%d', now)
  redis.call('SET', clock, run)
  return run
end
";

/// `ARGV[6]` token, `ARGV[7]` ttl ms (0: a lease that has already run
/// out). Returns 1 when taken, 0 when held.
const TRY_LOCK: &str = r"
local ttl = tonumber(ARGV[7])
if redis.call('EXISTS', lock) == 1 then return 0 end
if ttl > 0 then redis.call('SET', lock, ARGV[6], 'PX', ttl) end
redis.call('SET', owner, ARGV[6], 'PX', ttl + idle)
keep()
return 1
";

/// `ARGV[6]` token, `ARGV[7]` ttl ms. Returns 1 when renewed.
const RENEW: &str = r"
if not holds(ARGV[6]) then return 0 end
local ttl = tonumber(ARGV[7])
if ttl == 0 then redis.call('DEL', lock) else redis.call('SET', lock, ARGV[6], 'PX', ttl) end
redis.call('SET', owner, ARGV[6], 'PX', ttl + idle)
keep()
return 1
";

/// `ARGV[6]` token. Returns 1 when unlocked.
const UNLOCK: &str = r"
if not holds(ARGV[6]) then return 0 end
redis.call('DEL', lock, owner)
keep()
return 1
";

/// `ARGV[6]` token. Returns 0 not held, 1 inbox pending, 2 released.
const RELEASE: &str = r"
if not holds(ARGV[6]) then return 0 end
if redis.call('LLEN', inbox) > 0 then return 1 end
redis.call('DEL', lock, owner)
keep()
return 2
";

/// Starts a new run with an empty log and no checkpoint.
const BEGIN_RUN: &str = r"
redis.call('DEL', log)
redis.call('HDEL', meta, 'checkpoint')
redis.call('HSET', meta, 'run', next_run(), 'seq', 0, 'bytes', 0)
keep()
return 1
";

/// `ARGV[6]` payload, `ARGV[7]` replay limit, `ARGV[8]` the log's byte
/// budget. Returns the cursor. The payload bytes the log holds are kept in
/// `meta` (`bytes`); the oldest entries leave while the log holds more
/// than `limit` entries or more than the budget, the newest always stays.
const PUBLISH: &str = r"
local run = redis.call('HGET', meta, 'run')
if not run then
  run = next_run()
  redis.call('HSET', meta, 'run', run)
end
local seq = redis.call('HINCRBY', meta, 'seq', 1)
local id = run .. '-' .. string.format('%d', seq)
local limit = tonumber(ARGV[7])
local budget = tonumber(ARGV[8])
if limit > 0 then
  redis.call('XADD', log, id, 'p', ARGV[6])
  local bytes = redis.call('HINCRBY', meta, 'bytes', #ARGV[6])
  local len = redis.call('XLEN', log)
  while len > 1 and (len > limit or bytes > budget) do
    local first = redis.call('XRANGE', log, '-', '+', 'COUNT', 1)[1]
    redis.call('XDEL', log, first[1])
    bytes = redis.call('HINCRBY', meta, 'bytes', -#first[2][2])
    len = len - 1
  end
  if len == 1 then redis.call('HSET', meta, 'bytes', #ARGV[6]) end
else
  redis.call('DEL', log)
  redis.call('HSET', meta, 'bytes', 0)
end
redis.call('PUBLISH', channel, id .. ' ' .. ARGV[6])
keep()
return id
";

/// Marks the events published so far in the run as persisted.
const CHECKPOINT: &str = r"
local run = redis.call('HGET', meta, 'run')
if not run then return 0 end
local seq = redis.call('HGET', meta, 'seq') or '0'
redis.call('HSET', meta, 'checkpoint', run .. '-' .. seq)
keep()
return 1
";

/// `ARGV[6]` the cursor to resume after, or '' (after the checkpoint).
/// Returns the forget count, the exclusive start used ('' for the whole
/// log) and the retained events after it.
const REPLAY: &str = r"
local after = ARGV[6]
if after == '' then after = redis.call('HGET', meta, 'checkpoint') or '' end
local start = '-'
if after ~= '' then start = '(' .. after end
return {redis.call('GET', forgets) or '0', after, redis.call('XRANGE', log, start, '+')}
";

/// `ARGV[6]` item, `ARGV[7]` limit. Returns 1 when queued.
const PUSH_INBOX: &str = r"
if redis.call('LLEN', inbox) >= tonumber(ARGV[7]) then return 0 end
redis.call('RPUSH', inbox, ARGV[6])
if not redis.call('ZSCORE', wakeups, session) then
  redis.call('ZADD', wakeups, redis.call('INCR', wakeseq), session)
end
redis.call('PUBLISH', wake, session)
settle()
return 1
";

/// Takes the oldest input; the last one withdraws the pending wakeup.
const POP_INBOX: &str = r"
local item = redis.call('LPOP', inbox)
if redis.call('LLEN', inbox) == 0 then redis.call('ZREM', wakeups, session) end
settle()
return item
";

/// `ARGV[6]` the score a taken wakeup had: puts it back (a waiter left
/// before it got it) while the session still has queued input.
const REQUEUE_WAKEUP: &str = r"
if redis.call('LLEN', inbox) == 0 then return 0 end
redis.call('ZADD', wakeups, 'NX', ARGV[6], session)
redis.call('PUBLISH', wake, session)
return 1
";

/// Drops the session's keys and wakeup; tells subscribers everywhere.
const FORGET: &str = r"
redis.call('DEL', lock, owner, meta, log, inbox)
redis.call('ZREM', wakeups, session)
redis.call('ZREM', idle_index, session)
redis.call('HDEL', prefix .. 'runs', session)
local n = redis.call('INCR', forgets)
redis.call('PUBLISH', channel, '! ' .. n)
return n
";

/// The compiled scripts (sent by hash, loaded on first use).
#[derive(Debug)]
pub(super) struct Scripts {
    pub(super) try_lock: Script,
    pub(super) renew: Script,
    pub(super) unlock: Script,
    pub(super) release: Script,
    pub(super) begin_run: Script,
    pub(super) publish: Script,
    pub(super) checkpoint: Script,
    pub(super) replay: Script,
    pub(super) push_inbox: Script,
    pub(super) pop_inbox: Script,
    pub(super) requeue_wakeup: Script,
    pub(super) forget: Script,
}

fn script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

impl Scripts {
    pub(super) fn new() -> Self {
        Self {
            try_lock: script(TRY_LOCK),
            renew: script(RENEW),
            unlock: script(UNLOCK),
            release: script(RELEASE),
            begin_run: script(BEGIN_RUN),
            publish: script(PUBLISH),
            checkpoint: script(CHECKPOINT),
            replay: script(REPLAY),
            push_inbox: script(PUSH_INBOX),
            pop_inbox: script(POP_INBOX),
            requeue_wakeup: script(REQUEUE_WAKEUP),
            forget: script(FORGET),
        }
    }
}
