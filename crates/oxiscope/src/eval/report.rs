//! [`EvalReport`]: what a suite's runs add up to, per task and in all; as
//! a terminal table, JSON, or (see `html.rs`) a static page.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::EvalError;
use super::run::RunResult;
use super::suite::Suite;

/// The unbiased estimate of pass@k from `n` runs of which `c` passed: the
/// chance that at least one of `k` runs drawn from the `n` passes,
/// `1 - C(n-c, k) / C(n, k)`; `None` when `k` is 0 or exceeds `n`.
///
/// ```
/// use oxiscope::eval::pass_at_k;
/// assert!((pass_at_k(5, 2, 1).unwrap() - 0.4).abs() < 1e-12);
/// assert_eq!(pass_at_k(5, 0, 5), Some(0.0));
/// assert!((pass_at_k(5, 2, 3).unwrap() - 0.9).abs() < 1e-12);
/// assert_eq!(pass_at_k(2, 1, 3), None);
/// ```
#[must_use]
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || k > n || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    // C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i), which stays
    // in range where the binomials overflow.
    let fails: f64 = (n - c + 1..=n).map(|i| 1.0 - k as f64 / i as f64).product();
    Some(1.0 - fails)
}

/// A suite's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalReport {
    /// The suite's name.
    pub suite: String,
    /// `live` (a model answered) or `replay` (tapes did).
    pub mode: String,
    /// Runs per task asked for.
    pub k: usize,
    /// Each task's figures, in the suite's order.
    pub tasks: Vec<TaskReport>,
    /// The figures of the whole suite: pass rate and pass@k are means
    /// over the tasks, tokens and cost sums.
    pub total: Totals,
    /// Wall-clock seconds of the whole evaluation.
    pub seconds: f64,
}

/// One task's figures and runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskReport {
    /// The task's id.
    pub id: String,
    /// Its figures.
    #[serde(flatten)]
    pub figures: Totals,
    /// Its runs, in order.
    pub runs: Vec<RunResult>,
}

/// Figures of a task or of the suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Totals {
    /// Runs made.
    pub runs: usize,
    /// Runs that passed.
    pub passed: usize,
    /// The share of runs that passed (a suite's: the mean of its tasks').
    pub pass_rate: f64,
    /// pass@k for each `k` asked for (`"pass@1"`, ...); a `k` above the
    /// runs made is left out.
    pub pass_at: BTreeMap<String, f64>,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// What the tokens cost; `None` when a run's model has no price.
    pub cost: Option<f64>,
    /// Mean wall-clock seconds per run.
    pub mean_seconds: f64,
}

impl Totals {
    fn of_runs(runs: &[RunResult], ks: &[usize]) -> Self {
        let n = runs.len();
        let c = runs.iter().filter(|r| r.passed).count();
        let pass_at = ks
            .iter()
            .filter_map(|&k| pass_at_k(n, c, k).map(|p| (format!("pass@{k}"), p)))
            .collect();
        Self {
            runs: n,
            passed: c,
            pass_rate: if n == 0 { 0.0 } else { c as f64 / n as f64 },
            pass_at,
            input_tokens: runs.iter().map(|r| r.input_tokens).sum(),
            output_tokens: runs.iter().map(|r| r.output_tokens).sum(),
            cost: runs.iter().map(|r| r.cost).sum(),
            mean_seconds: mean(runs.iter().map(|r| r.seconds)),
        }
    }

    fn of_tasks(tasks: &[TaskReport]) -> Self {
        let figures: Vec<&Totals> = tasks.iter().map(|t| &t.figures).collect();
        let mut pass_at = BTreeMap::new();
        if let Some(first) = figures.first() {
            for key in first.pass_at.keys() {
                // A k some task has too few runs for is left out.
                let values: Option<Vec<f64>> = figures
                    .iter()
                    .map(|f| f.pass_at.get(key).copied())
                    .collect();
                if let Some(values) = values {
                    pass_at.insert(key.clone(), mean(values.into_iter()));
                }
            }
        }
        let runs: usize = figures.iter().map(|f| f.runs).sum();
        let seconds: f64 = tasks
            .iter()
            .flat_map(|t| t.runs.iter().map(|r| r.seconds))
            .sum();
        Self {
            runs,
            passed: figures.iter().map(|f| f.passed).sum(),
            pass_rate: mean(figures.iter().map(|f| f.pass_rate)),
            pass_at,
            input_tokens: figures.iter().map(|f| f.input_tokens).sum(),
            output_tokens: figures.iter().map(|f| f.output_tokens).sum(),
            cost: figures.iter().map(|f| f.cost).sum(),
            mean_seconds: if runs == 0 {
                0.0
            } else {
                seconds / runs as f64
            },
        }
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

impl EvalReport {
    /// The report of `suite`'s `runs` (any order).
    #[must_use]
    pub fn new(suite: &Suite, mode: &str, mut runs: Vec<RunResult>, seconds: f64) -> Self {
        runs.sort_by_key(|r| r.run);
        let ks = suite.pass_at();
        let tasks: Vec<TaskReport> = suite
            .tasks
            .iter()
            .map(|task| {
                let mine: Vec<RunResult> =
                    runs.iter().filter(|r| r.task == task.id).cloned().collect();
                TaskReport {
                    id: task.id.clone(),
                    figures: Totals::of_runs(&mine, &ks),
                    runs: mine,
                }
            })
            .collect();
        Self {
            suite: suite.name.clone(),
            mode: mode.to_owned(),
            k: suite.k,
            total: Totals::of_tasks(&tasks),
            tasks,
            seconds,
        }
    }

    /// Whether every run passed.
    #[must_use]
    pub fn all_passed(&self) -> bool {
        self.total.runs > 0 && self.total.passed == self.total.runs
    }

    /// The report as pretty JSON.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Plain data with string keys and finite numbers: it serialises.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The report as a table for a terminal: a line per task, then the
    /// total, then each failed run's reasons.
    #[must_use]
    pub fn table(&self) -> String {
        let ks: Vec<String> = self.total.pass_at.keys().cloned().collect();
        let mut header = vec!["task".to_owned(), "passed".to_owned(), "rate".to_owned()];
        header.extend(ks.iter().cloned());
        header.extend([
            "tokens in".into(),
            "tokens out".into(),
            "cost".into(),
            "s/run".into(),
        ]);
        let row = |name: &str, f: &Totals| {
            let mut cells = vec![
                name.to_owned(),
                format!("{}/{}", f.passed, f.runs),
                percent(f.pass_rate),
            ];
            cells.extend(
                ks.iter()
                    .map(|k| f.pass_at.get(k).map_or(String::new(), |p| percent(*p))),
            );
            cells.extend([
                f.input_tokens.to_string(),
                f.output_tokens.to_string(),
                f.cost.map_or(String::new(), money),
                format!("{:.2}", f.mean_seconds),
            ]);
            cells
        };
        let mut rows = vec![header];
        rows.extend(self.tasks.iter().map(|t| row(&t.id, &t.figures)));
        rows.push(row("total", &self.total));
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for (n, cells) in rows.iter().enumerate() {
            if n == rows.len() - 1 {
                let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                let _ = writeln!(out, "{}", rule.join("  "));
            }
            let line: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    if i == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        for run in self
            .tasks
            .iter()
            .flat_map(|t| &t.runs)
            .filter(|r| !r.passed)
        {
            let _ = writeln!(out, "\nFAILED {} run {}:", run.task, run.run);
            if let Some(error) = &run.error {
                let _ = writeln!(out, "  error: {error}");
            }
            if let Some(divergence) = &run.divergence {
                let _ = writeln!(out, "  diverged from its tape: {}", first_line(divergence));
            }
            for grade in run.grades.iter().filter(|g| !g.passed) {
                let _ = writeln!(out, "  {}: {}", grade.grader, grade.detail);
            }
        }
        out
    }

    /// Writes `report.json` and `report.html` into `dir` (created).
    ///
    /// # Errors
    /// [`EvalError::Io`] when they cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), EvalError> {
        let io = |what: &str| {
            let what = format!("writing {what} in {}", dir.display());
            move |source| EvalError::Io { what, source }
        };
        std::fs::create_dir_all(dir).map_err(io("the report"))?;
        std::fs::write(dir.join("report.json"), self.to_json()).map_err(io("report.json"))?;
        std::fs::write(dir.join("report.html"), super::html::page(self))
            .map_err(io("report.html"))?;
        Ok(())
    }
}

/// A cost: four decimals, six below a hundredth.
pub(super) fn money(cost: f64) -> String {
    if cost < 0.01 {
        format!("{cost:.6}")
    } else {
        format!("{cost:.4}")
    }
}

/// `0.4` as `40%`.
pub(super) fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}
