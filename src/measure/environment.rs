//! What the numbers were measured on: recorded in every result, because a
//! ratio means little without the machine, filesystem and library behind it.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The machine and software a result was measured with (the result's
/// `environment` object). Every field defaults, so results written by
/// versions that recorded less still load.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// blobbench's own version (Cargo package version).
    pub blobbench_version: String,
    /// "release" or "debug": debug builds are several times slower, so a
    /// result from one must not be mistaken for a real measurement.
    pub build: String,
    /// The machine's host name, to tell results of several machines apart.
    pub hostname: String,
    /// Distribution name from /etc/os-release (PRETTY_NAME), else the OS
    /// family.
    pub os: String,
    /// Kernel name and release, e.g. "Linux 6.1.0-18-amd64".
    pub kernel: String,
    /// CPU model name from /proc/cpuinfo, else the architecture.
    pub cpu_model: String,
    /// Threads the process may run in parallel (cores x SMT, or the
    /// container's CPU limit).
    pub logical_cpus: usize,
    /// Total RAM in bytes: tells whether the data set fit in the page cache.
    pub memory_bytes: u64,
    /// The filesystem holding the data, when the command has a data path.
    pub filesystem: Option<Filesystem>,
    /// The CPU frequency governor of cpu0 ("performance", "powersave"),
    /// when the machine exposes one (virtual machines often do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
    /// SQLite library version, filled by `store::capture_environment`.
    pub sqlite_version: String,
    /// SQLite's compile-time options (PRAGMA compile_options), also filled
    /// by the store layer.
    pub sqlite_compile_options: Vec<String>,
    /// Whether blobbench ran as root: only root can drop all caches, so
    /// this says how cold "cold" was.
    pub euid_is_root: bool,
    /// CPUs online on the whole machine: what the load average is shared
    /// by (a container's CPU limit does not shrink the host's load).
    #[serde(skip_serializing_if = "is_zero")]
    pub machine_cpus: usize,
    /// Load average when the environment was captured (for `run`, before
    /// anything was measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_average_start: Option<LoadAverage>,
    /// Load average when the command finished measuring
    /// ([`Environment::finish`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_average_end: Option<LoadAverage>,
    /// Share of all CPU time the hypervisor gave to other guests between
    /// capture and [`Environment::finish`], in percent (/proc/stat steal):
    /// above a few percent, this virtual machine was waiting for its CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_steal_percent: Option<f64>,
    /// The machine's own speed probed once per measured round (suites
    /// that run rounds): what `compare` uses to tell the machine's drift
    /// between two results from a change in what was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<crate::measure::reference::MachineReference>,
    /// The CPU time counters at capture, for the steal over the command.
    #[serde(skip)]
    cpu_at_capture: Option<CpuJiffies>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The run-queue load averages of /proc/loadavg: runnable (and
/// uninterruptible) tasks averaged over 1, 5 and 15 minutes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadAverage {
    /// Over the last minute.
    pub one_min: f64,
    /// Over the last 5 minutes.
    pub five_min: f64,
    /// Over the last 15 minutes.
    pub fifteen_min: f64,
}

impl LoadAverage {
    /// The load averages now; None where /proc/loadavg is missing.
    pub fn now() -> Option<LoadAverage> {
        parse_loadavg(&read("/proc/loadavg"))
    }
}

fn parse_loadavg(text: &str) -> Option<LoadAverage> {
    let mut f = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some(LoadAverage {
        one_min: f.next()??,
        five_min: f.next()??,
        fifteen_min: f.next()??,
    })
}

/// The machine-wide CPU time counters of /proc/stat's `cpu` line, in
/// jiffies: all of it and the part stolen by the hypervisor.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuJiffies {
    total: u64,
    steal: u64,
}

impl CpuJiffies {
    fn now() -> Option<CpuJiffies> {
        parse_proc_stat(&read("/proc/stat"))
    }
}

/// user nice system idle iowait irq softirq steal [guest guest_nice]: the
/// first eight add up to all CPU time (guest time is already in user).
fn parse_proc_stat(text: &str) -> Option<CpuJiffies> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (v.len() == 8).then(|| CpuJiffies {
        total: v.iter().sum(),
        steal: v[7],
    })
}

/// Steal as a percent of all CPU time between two readings; None when no
/// time passed (counters tick every 10 ms per CPU).
fn steal_percent(start: CpuJiffies, end: CpuJiffies) -> Option<f64> {
    let total = end.total.checked_sub(start.total).filter(|&t| t > 0)?;
    let steal = end.steal.saturating_sub(start.steal);
    Some(steal as f64 * 100.0 / total as f64)
}

fn online_cpus() -> usize {
    read("/proc/stat")
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
}

/// Steal above this share of CPU time marks the machine busy, in percent.
pub const BUSY_STEAL_PERCENT: f64 = 5.0;

/// A one-line warning when the environment shows a busy machine: a load
/// average above the machine's CPUs (at the end, blobbench itself is
/// allowed one), or CPU steal above [`BUSY_STEAL_PERCENT`]. None on a quiet
/// machine or when nothing was recorded. Any command can print it.
pub fn busy_warning(env: &Environment) -> Option<String> {
    let cpus = if env.machine_cpus > 0 {
        env.machine_cpus
    } else {
        env.logical_cpus.max(1)
    };
    let mut why = Vec::new();
    let start = env.load_average_start.filter(|l| l.one_min > cpus as f64);
    let end = env
        .load_average_end
        .filter(|l| l.one_min > cpus as f64 + 1.0);
    match (start, end) {
        (Some(s), Some(e)) => why.push(format!(
            "load average {:.2} at the start and {:.2} at the end",
            s.one_min, e.one_min
        )),
        (Some(s), None) => why.push(format!("load average {:.2} at the start", s.one_min)),
        (None, Some(e)) => why.push(format!(
            "load average {:.2} at the end (blobbench itself counts for about 1)",
            e.one_min
        )),
        (None, None) => {}
    }
    if let Some(s) = env.cpu_steal_percent.filter(|&s| s > BUSY_STEAL_PERCENT) {
        why.push(format!("{s:.1}% of CPU time stolen by the hypervisor"));
    }
    if why.is_empty() {
        return None;
    }
    Some(format!(
        "busy machine: {} on {cpus} CPUs; other work competed for the CPUs, so times are likely slower and noisier than on a quiet machine (rerun when it is idle)",
        why.join(", ")
    ))
}

/// The mount a path lives on, from /proc/self/mounts: file-vs-database
/// results depend heavily on the filesystem and its options.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Filesystem {
    /// The data path, made absolute (symlinks resolved).
    pub path: String,
    /// Where the filesystem is mounted.
    pub mount_point: String,
    /// Filesystem type, e.g. "ext4", "xfs", "tmpfs", "overlay".
    pub fs_type: String,
    /// The mounted device or source, e.g. "/dev/nvme0n1p2".
    pub device: String,
    /// Mount options as the kernel lists them, e.g. "rw,relatime".
    pub mount_options: String,
    /// The I/O scheduler of the device's queue ("mq-deadline", "none"),
    /// when the source is a block device that has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_scheduler: Option<String>,
}

/// The governor cpu0 runs under, if the kernel exposes cpufreq.
fn cpu_governor() -> Option<String> {
    let g = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    let g = g.trim();
    (!g.is_empty()).then(|| g.to_string())
}

/// The scheduler in use for a device such as "/dev/vda1": the bracketed
/// entry of its queue's `scheduler` file (a partition's queue is its
/// disk's, one folder up).
fn io_scheduler(device: &str) -> Option<String> {
    let name = device.strip_prefix("/dev/")?;
    let class = std::fs::canonicalize(format!("/sys/class/block/{name}")).ok()?;
    let text = [
        class.join("queue/scheduler"),
        class.join("../queue/scheduler"),
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok())?;
    active_scheduler(&text)
}

/// "mq-deadline" from "[mq-deadline] kyber none"; the only entry when
/// none is bracketed ("none").
fn active_scheduler(text: &str) -> Option<String> {
    let text = text.trim();
    let bracketed = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')));
    bracketed
        .or_else(|| (!text.contains(' ') && !text.is_empty()).then_some(text))
        .map(str::to_string)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn os_release() -> String {
    read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|s| s.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

fn kernel() -> String {
    let release = read("/proc/sys/kernel/osrelease");
    format!(
        "{} {}",
        read("/proc/sys/kernel/ostype").trim(),
        release.trim()
    )
    .trim()
    .to_string()
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

fn memory_bytes() -> u64 {
    read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The mount holding `path`: longest mount point that is a prefix of it.
pub fn filesystem_of(path: &Path) -> Option<Filesystem> {
    let abs = std::fs::canonicalize(path)
        .or_else(|_| {
            path.parent()
                .map(std::fs::canonicalize)
                .unwrap_or_else(std::env::current_dir)
        })
        .ok()?;
    let abs_s = abs.to_string_lossy().into_owned();
    let mounts = read("/proc/self/mounts");
    let mut best: Option<Filesystem> = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let mp = f[1].replace("\\040", " ");
        let inside = abs_s == mp || mp == "/" || abs_s.starts_with(&format!("{mp}/"));
        if inside
            && best
                .as_ref()
                .is_none_or(|b| mp.len() >= b.mount_point.len())
        {
            best = Some(Filesystem {
                path: abs_s.clone(),
                mount_point: mp,
                fs_type: f[2].to_string(),
                device: f[0].to_string(),
                mount_options: f[3].to_string(),
                io_scheduler: None,
            });
        }
    }
    best.map(|mut f| {
        f.io_scheduler = io_scheduler(&f.device);
        f
    })
}

impl Environment {
    /// Captures the machine; `data_path` names where the data lives. The
    /// storage engines' versions are left empty: `store::capture_environment`
    /// fills them, because only the store layer knows the engines.
    pub fn capture_machine(data_path: Option<&Path>) -> Environment {
        Environment {
            blobbench_version: env!("CARGO_PKG_VERSION").to_string(),
            build: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os: os_release(),
            kernel: kernel(),
            cpu_model: cpu_model(),
            cpu_governor: cpu_governor(),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_bytes: memory_bytes(),
            filesystem: data_path.and_then(filesystem_of),
            sqlite_version: String::new(),
            sqlite_compile_options: Vec::new(),
            // SAFETY: geteuid has no failure modes.
            euid_is_root: unsafe { libc::geteuid() } == 0,
            machine_cpus: online_cpus(),
            load_average_start: LoadAverage::now(),
            load_average_end: None,
            cpu_steal_percent: None,
            reference: None,
            cpu_at_capture: CpuJiffies::now(),
        }
    }

    /// Completes the record when measuring is over: the load average at
    /// the end and the CPU steal since capture. Call it before writing the
    /// result (and before [`busy_warning`]).
    pub fn finish(&mut self) {
        self.load_average_end = LoadAverage::now();
        if let (Some(start), Some(end)) = (self.cpu_at_capture, CpuJiffies::now()) {
            self.cpu_steal_percent = steal_percent(start, end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        let l = parse_loadavg("0.52 1.58 2.59 1/389 12345\n").unwrap();
        assert_eq!((l.one_min, l.five_min, l.fifteen_min), (0.52, 1.58, 2.59));
        assert_eq!(parse_loadavg(""), None);
        let stat = "cpu  100 5 50 800 10 1 2 32 7 0\ncpu0 50 2 25 400 5 0 1 16 0 0\n";
        let j = parse_proc_stat(stat).unwrap();
        assert_eq!(
            j,
            CpuJiffies {
                total: 1000,
                steal: 32
            }
        );
        let later = CpuJiffies {
            total: 1200,
            steal: 52,
        };
        assert_eq!(steal_percent(j, later), Some(10.0));
        assert_eq!(steal_percent(j, j), None, "no time passed");
        assert_eq!(parse_proc_stat("cpu 1 2 3\n"), None);
    }

    #[test]
    fn a_busy_machine_is_named_and_a_quiet_one_is_not() {
        let load = |one_min| {
            Some(LoadAverage {
                one_min,
                ..LoadAverage::default()
            })
        };
        let quiet = Environment {
            logical_cpus: 2,
            machine_cpus: 2,
            load_average_start: load(0.3),
            load_average_end: load(1.2),
            cpu_steal_percent: Some(0.5),
            ..Environment::default()
        };
        assert_eq!(busy_warning(&quiet), None);
        assert_eq!(
            busy_warning(&Environment::default()),
            None,
            "nothing recorded"
        );
        let loaded = Environment {
            load_average_start: load(2.5),
            ..quiet.clone()
        };
        let w = busy_warning(&loaded).unwrap();
        assert!(
            w.contains("load average 2.50 at the start") && w.contains("2 CPUs"),
            "{w}"
        );
        let ended_loaded = Environment {
            load_average_end: load(3.5),
            ..quiet.clone()
        };
        assert!(
            busy_warning(&ended_loaded)
                .unwrap()
                .contains("3.50 at the end")
        );
        let stolen = Environment {
            cpu_steal_percent: Some(7.25),
            ..quiet.clone()
        };
        assert!(
            busy_warning(&stolen)
                .unwrap()
                .contains("7.2% of CPU time stolen")
        );
    }

    #[test]
    fn capture_and_finish_record_load_and_steal_here() {
        let mut env = Environment::capture_machine(None);
        std::thread::sleep(std::time::Duration::from_millis(50));
        env.finish();
        if std::path::Path::new("/proc/loadavg").exists() {
            assert!(env.load_average_start.is_some() && env.load_average_end.is_some());
            assert!(env.machine_cpus >= 1);
        }
        if let Some(s) = env.cpu_steal_percent {
            assert!((0.0..=100.0).contains(&s), "{s}");
        }
    }

    #[test]
    fn the_active_io_scheduler_is_the_bracketed_one() {
        assert_eq!(
            active_scheduler("[mq-deadline] kyber bfq none\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            active_scheduler("mq-deadline [none]").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none\n").as_deref(), Some("none"));
        assert_eq!(active_scheduler(""), None);
    }
}
