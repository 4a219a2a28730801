//! The texts the middleware gives the model: the memory instructions of
//! the system prompt, the selection instructions, the notes around the
//! index and the hint wrapper. Placeholders are in braces.

/// The instructions added to the system prompt before the `MEMORY.md`
/// index (`{memory_dir}` is replaced by the memory directory).
pub const DEFAULT_MEMORY_INSTRUCTIONS: &str = "# Long-term memory

You keep a long-term memory as Markdown files in `{memory_dir}`. The directory exists: create and \
change files in it directly with the `Write` and `Edit` tools, and read them with `Read`. What \
you save there is available in later conversations; the current conversation is not.

Build this memory up over time, so that a later conversation knows who the user is, how they \
want to work with you, which approaches they asked you to avoid or to keep, and the background \
of their work. When the user asks you to remember something, save it right away; when they ask \
you to forget something, remove or correct the entry.

## Kinds of memory (the `type` field)

- `user`: who the user is: role, goals, expertise, preferences. Use it to tailor answers. Do \
not record judgements about the user or details unrelated to the work.
- `feedback`: guidance on how to work: corrections (\"don't do X\") and confirmations of a \
non-obvious approach (\"yes, keep doing that\"). Record both, with the reason.
- `project`: facts about ongoing work that the files and their history do not show: decisions, \
deadlines, who does what and why. Write dates as absolute dates (2026-03-05, not \"Thursday\").
- `reference`: where to find information outside the working directory (a tracker, a \
dashboard, a channel) and what it is for.

For `feedback` and `project` memories, state the rule or fact first, then a `**Why:**` line \
and a `**How to apply:**` line.

## Do not save

- What can be read from the current files, their structure or their version history.
- Fixes and recipes that live in the code already.
- Details of the task at hand or of this conversation only.

## Saving a memory: two steps

1. Write the memory to its own file in `{memory_dir}` (for example `user_profile.md`), \
starting with this front matter:

```markdown
---
name: <short title>
description: <one line saying in which situation a later conversation must read this file>
type: <user | feedback | project | reference>
---

<the memory>
```

2. Add one line for the file to `{memory_dir}/MEMORY.md`, the index: \
`- [Title](file.md) — short hook`, under about 150 characters. The index has no front matter \
and holds no memory content itself.

The index is shown to you at the start of every conversation; it is cut after 200 lines, so \
keep it short. Keep one topic per file, update an existing file rather than adding a \
duplicate, keep the front matter in step with the content, and remove memories that turn out \
wrong.

The `description` decides whether a later conversation opens the file: write it as a trigger \
(\"When you are about to review a pull request in repository X, read this first\"), not as a \
label (\"notes on reviews\").

## Using memories

- Read a memory file when its index line or description fits the request, when the user \
refers to earlier work, and always when the user asks you to recall or check your memory.
- If the user asks you not to use memory, act as if the index were empty.
- A memory tells what was true when it was written. Before acting on a memory that names a \
file, a function or a setting, check that it still exists; when memory and the present \
disagree, trust the present and fix the memory.
";

/// The nudge added to the system prompt when `memory_search` is offered.
pub const SEARCH_NUDGE: &str = "You can also search your memory files with the `memory_search` \
tool (a few specific words work best); it returns the matching memories.";

/// The instructions of the selection call.
pub const DEFAULT_RETRIEVAL_INSTRUCTIONS: &str = "You choose which memory files will help with a \
user's request. You get the request and the list of memory files, each with its file name, \
type, date and description.\n\n\
Call the tool with the file names of the memories that will clearly help (at most \
{max_selected}). Choose only files whose name and description show that they matter for this \
request; when in doubt, leave a file out. When none clearly helps, give an empty list.";

/// The index text when `MEMORY.md` is empty.
pub const EMPTY_INDEX: &str = "MEMORY.md is empty. The memories you save will be listed here.";

/// The note after a cut index (`{omitted}`, `{offset}`, `{path}`).
pub const INDEX_CUT_NOTE: &str = "\n<<<TRUNCATED>>>\n<system-reminder>{omitted} more lines of \
the index were left out to save context. Read them with the `Read` tool at offset {offset} of \
'{path}'.</system-reminder>";

/// The wrapper of injected memories (`{memories}`).
pub const HINT_TEMPLATE: &str = "<system-reminder>These memories from earlier conversations may \
be relevant to the current request. They were true when saved; check before relying on \
them.\n\n{memories}</system-reminder>";
