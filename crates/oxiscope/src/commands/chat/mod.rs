//! `oxiscope chat`: the terminal console, and its one-shot mode `-p`.

mod banner;
mod console;
mod drive;
mod goal;
pub(crate) mod mcp_config;
pub(crate) mod mcp_start;
mod oneshot;
pub(crate) mod project;
mod provider;
pub(crate) mod session;
pub(crate) mod settings;
mod setup;
mod skills;
mod slash;
mod spinner;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use oxiscope::render::{ConsoleRenderer, Verbosity};

use self::session::{Session, SessionStore};
pub(crate) use self::setup::working_dir;

/// How long the console's first prompt waits for MCP servers to start.
const PROMPT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Options of `oxiscope chat`. Each setting comes from the flag, else the
/// environment, else the config file (`oxiscope config path`).
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ChatArgs {
    // The names, their help and the variables below come from the
    // registry of oxiscope-providers.
    #[arg(
        long,
        value_name = "NAME",
        ignore_case = true,
        value_parser = provider::provider_values(),
        help = "Model provider [env: OXISCOPE_PROVIDER; default: the first whose key is set, \
                e.g. OPENAI_API_KEY]"
    )]
    pub(crate) provider: Option<String>,
    /// Model name [env: OXISCOPE_MODEL; default: the provider's].
    #[arg(long, value_name = "NAME")]
    pub(crate) model: Option<String>,
    #[arg(long, value_name = "URL", help = provider::base_url_help())]
    pub(crate) base_url: Option<String>,
    #[arg(long, value_name = "KEY", help = provider::api_key_help())]
    pub(crate) api_key: Option<String>,
    /// Permission mode: default, accept-edits, explore, bypass or dont-ask
    /// [env: OXISCOPE_MODE; default: default; with -p: default, and every
    /// call it would ask about is denied].
    #[arg(long, value_name = "MODE")]
    pub(crate) mode: Option<String>,
    /// An allow rule, `Tool(content)` or `Tool` (repeatable), as in
    /// `oxiscope permission check`.
    #[arg(long = "allow", value_name = "RULE")]
    pub(crate) allow: Vec<String>,
    /// An ask rule (repeatable).
    #[arg(long = "ask", value_name = "RULE")]
    pub(crate) ask: Vec<String>,
    /// A deny rule (repeatable).
    #[arg(long = "deny", value_name = "RULE")]
    pub(crate) deny: Vec<String>,
    /// Work in this directory instead of the current one: the agent's
    /// tools (Bash, file edits, path rules) run there.
    #[arg(short = 'C', long = "cwd", value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// Save the agent state after every reply under this name in the data
    /// dir, and resume it when it exists.
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
    /// quiet, default or debug [env: OXISCOPE_VERBOSITY].
    #[arg(long, value_name = "LEVEL")]
    pub(crate) verbosity: Option<String>,
    /// Lines of a tool result shown before the rest collapses (0: all)
    /// [env: OXISCOPE_MAX_TOOL_LINES; default: 20].
    #[arg(long, value_name = "N")]
    pub(crate) max_tool_lines: Option<usize>,
    /// No colours (also when NO_COLOR is set or stdout is not a terminal).
    #[arg(long)]
    pub(crate) no_color: bool,
    /// One-shot: answer this prompt (`-`: read it from stdin), print the
    /// answer and exit.
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    pub(crate) prompt: Option<String>,
    /// What -p prints: the answer's text, the reply message as JSON, or
    /// every event as a JSON line.
    #[arg(long, value_enum, default_value_t, requires = "prompt")]
    pub(crate) output: oneshot::Output,
    /// An MCP server for this run (repeatable): `NAME=COMMAND [ARGS...]`
    /// (split like a shell would) or `NAME=https://...`; replaces the
    /// config file's server of that name.
    #[arg(long = "mcp", value_name = "NAME=COMMAND|URL")]
    pub(crate) mcp: Vec<String>,
    /// A skill directory (with a SKILL.md), or a directory of them
    /// (repeatable); added to the config file's `[skills] paths`.
    #[arg(long = "skills", value_name = "DIR")]
    pub(crate) skills: Vec<PathBuf>,
    /// Run a goal pipeline: the assistant becomes the executor, and a
    /// verifier (same model and tools, system prompt read from FILE)
    /// checks each result against your message; a refusal goes back to
    /// the executor with its reason until the verifier passes the work or
    /// finds it impossible. Not with -p or --session.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["prompt", "session"])]
    pub(crate) goal_verifier: Option<PathBuf>,
    /// How many refusals a goal run may spend [default: 10].
    #[arg(long, value_name = "N", requires = "goal_verifier")]
    pub(crate) goal_max_iters: Option<u32>,
}

/// Runs `oxiscope chat`.
#[allow(clippy::print_stdout)] // the banner
pub(crate) fn run(args: &ChatArgs) -> anyhow::Result<ExitCode> {
    crate::logging::init_console();
    let workdir = setup::working_dir(args.cwd.as_deref())?;
    let config_dir = settings::config_dir()?;
    let config_path = settings::config_path()?;
    let file = settings::load_config(&config_path)?;
    let project = project::load(&workdir)?;
    let env = |k: &str| std::env::var(k).ok();
    let resolved = settings::resolve(args, &env, &file, &config_dir, args.prompt.is_some())?;
    let mut settings = match resolved {
        Ok(settings) => settings,
        Err(reason) => {
            eprint!("{}", settings::how_to_configure(&reason, &config_path));
            return Ok(ExitCode::from(2));
        }
    };
    settings.add_rules(&project, "project")?;
    settings.render.color &= std::io::stdout().is_terminal();
    let verifier_prompt = args
        .goal_verifier
        .as_deref()
        .map(goal::read_prompt)
        .transpose()?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let model = {
        let _entered = rt.enter();
        settings.model.build()?
    };
    let session = match &args.session {
        Some(name) => Some(Session {
            store: SessionStore::new(&settings::data_dir()?),
            name: name.clone(),
        }),
        None => None,
    };
    let saved = match &session {
        Some(s) => s.store.load(&s.name)?,
        None => None,
    };
    if args.prompt.is_none() {
        // First, so the servers' status lines come after it.
        println!("{}", banner::banner(&settings, &workdir, true));
    }
    let lines = status_lines(args.prompt.is_some(), settings.render.verbosity);
    let (agent, mut servers, kit) = rt.block_on(setup::agent(
        model,
        &settings,
        saved,
        &workdir,
        args.session.as_deref(),
        lines,
    ))?;

    if let Some(prompt) = &args.prompt {
        if settings.render.verbosity >= Verbosity::Debug {
            eprintln!("{}", banner::banner(&settings, &workdir, false));
        }
        // The one reply gets every server that starts in time.
        rt.block_on(servers.wait());
        let run = oneshot::OneShot {
            output: args.output,
            render: &settings.render,
            session: session.as_ref(),
            deny_asks: settings.deny_asks,
        };
        let code = run.run(&rt, &agent, prompt);
        rt.block_on(servers.close());
        return code;
    }
    // The servers that start quickly report before the first prompt; the
    // prompt does not wait for the others.
    rt.block_on(servers.settle(PROMPT_GRACE));
    let history: Option<PathBuf> = settings::data_dir().ok().map(|d| d.join("history.txt"));
    let pipeline = verifier_prompt.map(|p| goal::pipeline(&agent, p, args.goal_max_iters));
    let console = console::Console {
        agent,
        pipeline,
        renderer: ConsoleRenderer::new(std::io::stdout(), settings.render.clone()),
        session,
        history,
        failed: false,
        mcp_status: servers.sink().clone(),
        kit,
        model: settings.model.clone(),
        usage: slash::Usage::default(),
        workdir,
    };
    let code = console.run(&rt);
    rt.block_on(servers.close());
    code
}

/// Which MCP status lines are printed on stderr: a failure always; a
/// connection in the console unless it is quiet, and with `-p` only at
/// debug verbosity (so scripts see stderr only when something is wrong).
fn status_lines(one_shot: bool, verbosity: Verbosity) -> mcp_start::StatusLines {
    let all = if one_shot {
        verbosity >= Verbosity::Debug
    } else {
        verbosity > Verbosity::Quiet
    };
    if all {
        mcp_start::StatusLines::All
    } else {
        mcp_start::StatusLines::Failures
    }
}
