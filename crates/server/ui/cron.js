// The next fire times of a cron rule in an IANA time zone, computed in
// the browser to show them before saving. Five fields (or six with
// seconds first, read to the minute): minute hour day-of-month month
// day-of-week, with `*`, lists, ranges, steps and month/day names; when
// both day fields are restricted either may match (as the server's cron
// reads them). The server stays the judge: it refuses what it cannot
// parse.

const NAMES = {
  month: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  dow: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
};

function field(text, min, max, names) {
  const out = new Set();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`bad step in ${part}`);
    const value = (v) => {
      const i = names ? names.indexOf(v.toUpperCase()) : -1;
      const n = i >= 0 ? i + (min === 1 ? 1 : 0) : Number(v);
      if (!Number.isInteger(n) || n < min || n > max + (names === NAMES.dow ? 1 : 0)) throw new Error(`${v} is out of range`);
      return n;
    };
    let lo = min;
    let hi = max;
    if (range !== '*' && range !== '?') {
      const [a, b] = range.split('-');
      lo = value(a);
      hi = b === undefined ? (stepText === undefined ? lo : max) : value(b);
    }
    for (let n = lo; n <= hi; n += step) out.add(names === NAMES.dow ? n % 7 : n);
  }
  return { set: out, any: text === '*' || text === '?' };
}

/** Parses `expr`; throws with a reason when it is not a rule we read. */
export function parseCron(expr) {
  let parts = expr.trim().split(/\s+/);
  if (parts.length === 6) parts = parts.slice(1);
  if (parts.length !== 5) throw new Error('a cron rule has 5 fields (minute hour day month weekday)');
  return {
    minute: field(parts[0], 0, 59),
    hour: field(parts[1], 0, 23),
    dom: field(parts[2], 1, 31),
    month: field(parts[3], 1, 12, NAMES.month),
    dow: field(parts[4], 0, 6, NAMES.dow),
  };
}

/** The wall clock of `date` in `tz`. */
function wall(fmt, date) {
  const p = {};
  for (const { type, value } of fmt.formatToParts(date)) p[type] = value;
  const dow = NAMES.dow.indexOf(p.weekday.slice(0, 3).toUpperCase());
  return { month: Number(p.month), day: Number(p.day), hour: Number(p.hour) % 24, minute: Number(p.minute), dow };
}

function dayMatches(rule, t) {
  if (!rule.month.set.has(t.month)) return false;
  const dom = rule.dom.set.has(t.day);
  const dow = rule.dow.set.has(t.dow);
  if (rule.dom.any) return dow;
  if (rule.dow.any) return dom;
  return dom || dow;
}

/** The next `count` times (Dates) `expr` fires in `tz` after `from`. */
export function nextFires(expr, tz, count = 3, from = new Date()) {
  const rule = parseCron(expr);
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: tz, hourCycle: 'h23', weekday: 'short', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric',
  });
  const out = [];
  const MINUTE = 60000;
  let t = Math.floor(from.getTime() / MINUTE) * MINUTE + MINUTE;
  const end = from.getTime() + 5 * 366 * 24 * 60 * MINUTE;
  while (out.length < count && t < end) {
    const w = wall(fmt, new Date(t));
    if (!dayMatches(rule, w)) {
      t += ((23 - w.hour) * 60 + (60 - w.minute)) * MINUTE; // the next local midnight
    } else if (!rule.hour.set.has(w.hour)) {
      t += (60 - w.minute) * MINUTE;
    } else if (!rule.minute.set.has(w.minute)) {
      t += MINUTE;
    } else {
      out.push(new Date(t));
      t += MINUTE;
    }
  }
  return out;
}

/** `date` as the wall clock of `tz`: `Mon 2025-06-02 09:00`. */
export function inZone(date, tz) {
  const p = {};
  const fmt = new Intl.DateTimeFormat('en-CA', {
    timeZone: tz, hourCycle: 'h23', weekday: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
  });
  for (const { type, value } of fmt.formatToParts(date)) p[type] = value;
  return `${p.weekday} ${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}
