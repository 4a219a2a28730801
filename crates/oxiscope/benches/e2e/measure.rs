//! Samples (wall and CPU time), medians, and the table.

use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};

/// One timed run.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub wall: Duration,
    pub cpu: Duration,
}

/// The samples of one side of a row.
#[derive(Debug, Default)]
pub struct Samples(Vec<Sample>);

impl Samples {
    pub fn push(&mut self, sample: Sample) {
        self.0.push(sample);
    }

    pub fn wall(&self) -> Duration {
        median(self.0.iter().map(|s| s.wall).collect())
    }

    pub fn cpu(&self) -> Duration {
        median(self.0.iter().map(|s| s.cpu).collect())
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn usage(who: UsageWho) -> Duration {
    let u = getrusage(who).unwrap();
    let d = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().unsigned_abs())
            + Duration::from_micros(t.tv_usec().unsigned_abs())
    };
    d(u.user_time()) + d(u.system_time())
}

/// CPU time of this process so far, every thread.
pub fn process_cpu() -> Duration {
    usage(UsageWho::RUSAGE_SELF)
}

/// CPU time of the waited-for children so far.
pub fn children_cpu() -> Duration {
    usage(UsageWho::RUSAGE_CHILDREN)
}

/// Runs `f`: its result, wall time and the process's CPU time.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Sample) {
    let (cpu, wall) = (process_cpu(), Instant::now());
    let out = f();
    let sample = Sample {
        wall: wall.elapsed(),
        cpu: process_cpu() - cpu,
    };
    (out, sample)
}

#[allow(clippy::cast_precision_loss)]
pub fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

/// One line of the table.
#[derive(Debug)]
pub struct Row {
    name: String,
    floor: String,
    oxiscope: String,
    ratio: String,
    target: String,
    /// Oxiscope's CPU over the floor's, for the smoke check.
    cpu_ratio: Option<f64>,
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn ratio(ours: Duration, floor: Duration) -> f64 {
    ours.as_secs_f64() / floor.as_secs_f64().max(1e-9)
}

impl Row {
    /// Wall and CPU medians of both sides.
    pub fn timed(name: impl Into<String>, floor: &Samples, ours: &Samples, target: &str) -> Self {
        let cpu = ratio(ours.cpu(), floor.cpu());
        Self {
            name: name.into(),
            floor: format!("{} ({} CPU)", ms(floor.wall()), ms(floor.cpu())),
            oxiscope: format!("{} ({} CPU)", ms(ours.wall()), ms(ours.cpu())),
            ratio: format!(
                "{:.2}x wall, {cpu:.2}x CPU",
                ratio(ours.wall(), floor.wall())
            ),
            target: target.to_owned(),
            cpu_ratio: Some(cpu),
        }
    }

    /// Wall medians only (the CPU of a child before its first line is not
    /// measurable apart).
    pub fn wall_only(name: &str, floor: &Samples, ours: &Samples, target: &str) -> Self {
        Self {
            name: name.to_owned(),
            floor: ms(floor.wall()),
            oxiscope: ms(ours.wall()),
            ratio: format!("{:.2}x wall", ratio(ours.wall(), floor.wall())),
            target: target.to_owned(),
            cpu_ratio: None,
        }
    }

    /// `n` replies per sample: replies per second, and CPU per reply.
    pub fn throughput(
        name: String,
        n: usize,
        floor: &Samples,
        ours: &Samples,
        target: &str,
    ) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let rate = |s: &Samples| n as f64 / s.wall().as_secs_f64();
        #[allow(clippy::cast_possible_truncation)]
        let per = |s: &Samples| ms(s.cpu() / n as u32);
        let cpu = ratio(ours.cpu(), floor.cpu());
        Self {
            name,
            floor: format!(
                "{:.1} replies/s ({} CPU per reply)",
                rate(floor),
                per(floor)
            ),
            oxiscope: format!("{:.1} replies/s ({} CPU per reply)", rate(ours), per(ours)),
            ratio: format!("{:.2}x throughput, {cpu:.2}x CPU", rate(ours) / rate(floor)),
            target: target.to_owned(),
            cpu_ratio: Some(cpu),
        }
    }

    /// One Oxiscope figure.
    pub fn single(name: &str, value: Sample, target: &str) -> Self {
        Self {
            name: name.to_owned(),
            floor: String::new(),
            oxiscope: format!("{} ({} CPU)", ms(value.wall), ms(value.cpu)),
            ratio: String::new(),
            target: target.to_owned(),
            cpu_ratio: None,
        }
    }

    /// Oxiscope's medians only.
    pub fn oxi_only(name: &str, ours: &Samples, target: &str) -> Self {
        Self {
            name: name.to_owned(),
            floor: String::new(),
            oxiscope: format!("{} ({} CPU)", ms(ours.wall()), ms(ours.cpu())),
            ratio: String::new(),
            target: target.to_owned(),
            cpu_ratio: None,
        }
    }

    /// Sizes in bytes.
    pub fn bytes(name: impl Into<String>, floor: usize, ours: usize, target: &str) -> Self {
        let show = |b: usize| format!("{:.1} KiB ({b} B)", kib(b));
        #[allow(clippy::cast_precision_loss)]
        let r = ours as f64 / floor.max(1) as f64;
        Self {
            name: name.into(),
            floor: show(floor),
            oxiscope: show(ours),
            ratio: format!("{r:.2}x"),
            target: target.to_owned(),
            cpu_ratio: None,
        }
    }
}

/// Prints the rows as a Markdown table.
pub fn print_table(rows: &[Row]) {
    println!();
    println!("| scenario | floor | oxiscope | oxiscope / floor | target |");
    println!("|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            r.name, r.floor, r.oxiscope, r.ratio, r.target
        );
    }
}

/// Fails when a row's CPU ratio is past `limit`.
pub fn check_smoke(rows: &[Row], limit: f64) {
    for r in rows {
        if let Some(cpu) = r.cpu_ratio {
            assert!(
                cpu <= limit,
                "{}: Oxiscope takes {cpu:.1}x the floor's CPU (limit {limit}x)",
                r.name
            );
        }
    }
    println!("smoke run: every CPU ratio within {limit}x of the floor");
}
