// A small code highlighter of our own for markdown code blocks: one
// tokenizer (comments, strings, numbers, keywords, types, calls) with a
// table of languages. It only wraps text in spans (text nodes, never
// HTML), so it cannot add anything the sanitiser took out.

const C_LIKE = { line: '//', block: true, strings: ['"', "'"] };

/** Each language: comment forms, string quotes, keywords, and whether
 * Capitalised words are types. */
const LANGS = {
  js: { ...C_LIKE, strings: ['"', "'", '`'], types: true, kw: 'async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly private public protected as' },
  rust: { ...C_LIKE, strings: ['"'], types: true, kw: 'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err' },
  go: { ...C_LIKE, strings: ['"', '`'], types: false, kw: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false string int int64 float64 bool error byte rune' },
  c: { ...C_LIKE, types: true, kw: 'auto bool break case char class const continue default delete do double else enum extern false float for goto if inline int long namespace new nullptr private protected public return short signed sizeof static struct switch template this throw true try typedef union unsigned using virtual void volatile while final abstract extends implements import package boolean' },
  python: { line: '#', block: false, strings: ['"""', "'''", '"', "'"], types: true, kw: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield match case self' },
  bash: { line: '#', block: false, strings: ['"', "'"], types: false, kw: 'if then else elif fi for while until do done case esac function in return export local readonly set unset echo cd exit source sudo' },
  json: { line: null, block: false, strings: ['"'], types: false, kw: 'true false null' },
  toml: { line: '#', block: false, strings: ['"""', '"', "'"], types: false, kw: 'true false null' },
  sql: { line: '--', block: true, strings: ["'", '"'], types: false, kw: 'select from where and or not insert into values update set delete create table index primary key foreign references join left right inner outer on group by order having limit offset as distinct null is in exists case when then else end returning with' },
};

const ALIASES = {
  javascript: 'js', ts: 'js', typescript: 'js', jsx: 'js', tsx: 'js', mjs: 'js',
  rs: 'rust', golang: 'go', py: 'python', python3: 'python',
  sh: 'bash', shell: 'bash', zsh: 'bash', console: 'bash', shellsession: 'bash',
  cpp: 'c', 'c++': 'c', h: 'c', hpp: 'c', java: 'c', kotlin: 'c', csharp: 'c', cs: 'c',
  yaml: 'toml', yml: 'toml', ini: 'toml', jsonc: 'json',
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function stringPattern(q) {
  if (q.length === 3) return `${escape(q)}[\\s\\S]*?${escape(q)}`;
  return `${escape(q)}(?:\\\\[\\s\\S]|(?!${escape(q)})[^\\\\\\n])*${escape(q)}`;
}

const compiled = new Map();

/** The tokenizer of `name`: one regex whose groups are the token kinds. */
function tokenizer(name) {
  if (compiled.has(name)) return compiled.get(name);
  const spec = LANGS[name];
  const comments = [];
  if (spec.line) comments.push(`${escape(spec.line)}[^\\n]*`);
  if (spec.block) comments.push('/\\*[\\s\\S]*?\\*/');
  const parts = [
    comments.length ? `(${comments.join('|')})` : '(\\b\\B)',
    `(${spec.strings.map(stringPattern).join('|')})`,
    '(\\b(?:0[xob][\\da-f_]+|\\d[\\d_]*(?:\\.\\d[\\d_]*)?(?:e[+-]?\\d+)?)[a-z\\d]*\\b)',
    `(\\b(?:${spec.kw.split(' ').map(escape).join('|')})\\b)`,
    spec.types ? '(\\b[A-Z][A-Za-z0-9_]*\\b)' : '(\\b\\B)',
    '(\\b[A-Za-z_][\\w]*(?=\\s*\\())',
  ];
  const flags = name === 'sql' ? 'gi' : 'g';
  const re = new RegExp(parts.join('|'), flags);
  compiled.set(name, re);
  return re;
}

const KINDS = ['tok-c', 'tok-s', 'tok-n', 'tok-k', 'tok-t', 'tok-f'];
/** Longer code is left plain (highlighting runs on every streamed frame). */
const MOST = 20000;

/** Highlights `code` (a `<code class="language-x">`) in place. */
export function highlight(code) {
  const lang = (/\blanguage-([\w+#-]+)/.exec(code.className) || [])[1]?.toLowerCase();
  const name = LANGS[lang] ? lang : ALIASES[lang];
  const text = code.textContent;
  if (!name || text.length > MOST) return;
  const re = tokenizer(name);
  re.lastIndex = 0;
  const out = document.createDocumentFragment();
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') { re.lastIndex += 1; continue; }
    const kind = KINDS[m.slice(1).findIndex((g) => g !== undefined)];
    if (m.index > at) out.append(text.slice(at, m.index));
    const span = document.createElement('span');
    span.className = kind;
    span.textContent = m[0];
    out.append(span);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.append(text.slice(at));
  code.replaceChildren(out);
  code.classList.add('highlighted');
}

/** Highlights every fenced code block under `root`. */
export function highlightAll(root) {
  for (const code of root.querySelectorAll('pre > code[class*="language-"]')) highlight(code);
}
