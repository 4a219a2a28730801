//! Diagnostic logs on stderr: a `tracing` subscriber for `oxiscope serve`
//! (info by default, text or JSON lines) and `oxiscope chat` (warnings only,
//! so the console and `-p` output stay as they are).
//!
//! The level comes from `--log-level`, else `RUST_LOG`, else the command's
//! default. Either takes a level (`debug`) or `tracing` filter directives
//! (`info,oxiscope_server=debug`).

use anyhow::Context as _;
use clap::Args;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// The environment variable read when `--log-level` is not given.
const FILTER_ENV: &str = "RUST_LOG";

/// `--log-level` and `--log-format`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct LogArgs {
    /// What to log: error, warn, info, debug or trace, or filter directives
    /// such as `info,oxiscope_server=debug` [env: RUST_LOG; default: info].
    #[arg(long, value_name = "FILTER")]
    pub(crate) log_level: Option<String>,
    /// How log lines are written to stderr: `text`, or `json` (one object
    /// per line).
    #[arg(long, value_enum, default_value_t)]
    pub(crate) log_format: LogFormat,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, with the current span's fields.
    Json,
}

/// Installs the subscriber of `oxiscope serve`.
///
/// # Errors
/// An invalid `--log-level`.
pub(crate) fn init_service(args: &LogArgs) -> anyhow::Result<()> {
    let filter = filter(args.log_level.as_deref(), "info")?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A subscriber already set (never, in the binary) keeps logging.
    let _ = match args.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    Ok(())
}

/// Installs the subscriber of `oxiscope chat`: warnings and errors on
/// stderr (none of the MCP client library's), one short line each
/// (`warning: retrying in 1.2s (attempt 1 of 4 failed): ...`), unless
/// `RUST_LOG` asks for more, which gets the full format.
pub(crate) fn init_console() {
    // `RUST_LOG` is read leniently: a console must start even with a
    // filter meant for another program.
    let asked = std::env::var(FILTER_ENV)
        .ok()
        .filter(|f| !f.trim().is_empty());
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr);
    let _ = match asked {
        Some(directives) => builder
            .with_env_filter(EnvFilter::new(directives))
            .try_init(),
        // The MCP client's own tasks log each failed connection attempt;
        // the console reports a failing server once, itself.
        None => builder
            .with_env_filter(EnvFilter::new("warn,rmcp=off"))
            .event_format(ConsoleLine)
            .try_init(),
    };
}

/// A console log line: `warning: <message>`, without time, target or
/// fields.
struct ConsoleLine;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for ConsoleLine
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let mut message = Message::default();
        event.record(&mut message);
        let level = level_word(*event.metadata().level());
        match message.error {
            Some(error) => writeln!(writer, "{level}: {}: {error}", message.text),
            None => writeln!(writer, "{level}: {}", message.text),
        }
    }
}

fn level_word(level: tracing::Level) -> &'static str {
    match level {
        tracing::Level::ERROR => "error",
        tracing::Level::WARN => "warning",
        tracing::Level::INFO => "info",
        tracing::Level::DEBUG => "debug",
        tracing::Level::TRACE => "trace",
    }
}

/// The `message` and `error` fields of an event (the others, such as a
/// retry's endpoint and delay, are for the full format).
#[derive(Default)]
struct Message {
    text: String,
    error: Option<String>,
}

impl tracing::field::Visit for Message {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "message" => value.clone_into(&mut self.text),
            "error" => self.error = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.text = format!("{value:?}"),
            "error" => self.error = Some(format!("{value:?}")),
            _ => {}
        }
    }
}

/// The filter: `flag`, else `RUST_LOG`, else `default`.
fn filter(flag: Option<&str>, default: &str) -> anyhow::Result<EnvFilter> {
    if let Some(directives) = flag {
        return parse(directives).with_context(|| format!("invalid --log-level {directives:?}"));
    }
    match std::env::var(FILTER_ENV) {
        Ok(directives) if !directives.trim().is_empty() => {
            parse(&directives).with_context(|| format!("invalid {FILTER_ENV} {directives:?}"))
        }
        _ => Ok(EnvFilter::new(default)),
    }
}

/// A level or filter directives. A lone word must be a level: `tracing`
/// would read a misspelt level as the name of a module to log in full.
fn parse(directives: &str) -> anyhow::Result<EnvFilter> {
    let lone_word = !directives.contains(['=', ',', '[', ':']);
    if lone_word && directives.trim().parse::<LevelFilter>().is_err() {
        anyhow::bail!("expected error, warn, info, debug, trace or off, or filter directives");
    }
    Ok(EnvFilter::try_new(directives.trim())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_level_flag_is_an_error_and_a_good_one_wins() {
        assert!(filter(Some("loud"), "info").is_err());
        assert!(filter(Some("info,oxiscope_server=[{"), "info").is_err());
        let f = filter(Some("debug"), "info").unwrap();
        assert_eq!(f.to_string(), "debug");
        let f = filter(Some("warn,oxiscope_server=debug"), "info").unwrap();
        assert!(f.to_string().contains("oxiscope_server=debug"), "{f}");
    }
}
