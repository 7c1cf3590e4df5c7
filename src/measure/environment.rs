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
    /// SQLite library version, filled by `store::capture_environment`.
    pub sqlite_version: String,
    /// SQLite's compile-time options (PRAGMA compile_options), also filled
    /// by the store layer.
    pub sqlite_compile_options: Vec<String>,
    /// Whether blobbench ran as root: only root can drop all caches, so
    /// this says how cold "cold" was.
    pub euid_is_root: bool,
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
            });
        }
    }
    best
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
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_bytes: memory_bytes(),
            filesystem: data_path.and_then(filesystem_of),
            sqlite_version: String::new(),
            sqlite_compile_options: Vec::new(),
            // SAFETY: geteuid has no failure modes.
            euid_is_root: unsafe { libc::geteuid() } == 0,
        }
    }
}
