//! A PostgreSQL connection whose every wait is bounded, and whose errors
//! are classified.
//!
//! postgres's blocking client has no bound on a statement: a frozen server
//! would hold a run for ever. So the store drives tokio-postgres's async
//! client itself, on a runtime of its own (as the blocking client does),
//! and awaits every statement within its bound: `timeout` for an
//! operation, a second more per 10 MB it carries, at least ten minutes for
//! the statements around the timed work; connecting (TCP, greeting, login)
//! within `connect_timeout`. A lost connection or a timeout leaves the
//! client broken: every later statement fails at once, without waiting
//! again, until the store is opened anew.

use std::path::PathBuf;
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row, Statement, ToStatement};

use crate::error::{Error, FailureClass, Result};
use crate::target::{ServerTimeouts, ServerUrl, seconds};

/// How long closing a connection waits for its goodbye to be sent.
const CLOSE_BOUND: Duration = Duration::from_secs(1);

/// The server's reasons for ending a session: it is shutting down, it
/// crashed, it does not take connections yet.
const SESSION_ENDS: &[SqlState] = &[
    SqlState::ADMIN_SHUTDOWN,
    SqlState::CRASH_SHUTDOWN,
    SqlState::CANNOT_CONNECT_NOW,
];

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// One connection and the bounds its statements run under.
pub(crate) struct PgClient {
    /// Always Some until dropped (taken first, so the connection can close).
    client: Option<tokio_postgres::Client>,
    /// The task that drives the connection's socket.
    connection: Option<tokio::task::JoinHandle<()>>,
    /// Always Some until dropped (taken to shut it down without blocking).
    runtime: Option<tokio::runtime::Runtime>,
    timeouts: ServerTimeouts,
    display: PathBuf,
    /// Why the connection is no longer usable, once it is not.
    broken: Option<String>,
}

impl PgClient {
    /// Connects within `connect_timeout` (the TCP connection, the
    /// server's greeting and the login together).
    pub(crate) fn connect(server: &ServerUrl) -> Result<PgClient> {
        let display = &server.display;
        let bound = server.timeouts.connect_timeout();
        let mut config: tokio_postgres::Config = server
            .connect
            .parse()
            .map_err(|e| Error::connect(display, words(&e)))?;
        config.connect_timeout(bound);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                Error::io(
                    "cannot start the PostgreSQL client's runtime for",
                    display,
                    e,
                )
            })?;
        let connected = within(&runtime, bound, config.connect(NoTls));
        let (client, connection) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(Error::connect(display, words(&e))),
            Err(_) => {
                return Err(Error::connect(
                    display,
                    format!(
                        "no answer within {} (connect_timeout={})",
                        seconds(bound),
                        seconds(bound)
                    ),
                ));
            }
        };
        let connection = runtime.spawn(async move {
            let _ = connection.await;
        });
        Ok(PgClient {
            client: Some(client),
            connection: Some(connection),
            runtime: Some(runtime),
            timeouts: server.timeouts,
            display: display.to_path_buf(),
            broken: None,
        })
    }

    /// The bounds it runs under.
    pub(crate) fn timeouts(&self) -> ServerTimeouts {
        self.timeouts
    }

    /// The bound of an operation carrying `bytes`.
    pub(crate) fn op_bound(&self, bytes: u64) -> Duration {
        self.timeouts.for_bytes(bytes)
    }

    /// The bound of a statement around the timed work.
    pub(crate) fn admin_bound(&self) -> Duration {
        self.timeouts.admin()
    }

    fn rt(&self) -> &tokio::runtime::Runtime {
        self.runtime.as_ref().expect("runtime present until drop")
    }

    fn client(&self) -> &tokio_postgres::Client {
        self.client.as_ref().expect("client present until drop")
    }

    /// Fails at once when an earlier statement lost the connection.
    fn check(&self) -> Result<()> {
        match &self.broken {
            None => Ok(()),
            Some(why) => Err(Error::failed(
                &self.display,
                FailureClass::Connection,
                format!("the connection was lost earlier ({why}); open the store again"),
            )),
        }
    }

    /// The timeout of a statement bounded by `bound`, which breaks the client.
    fn timed_out(&mut self, bound: Duration) -> Error {
        let extra = if bound > self.timeouts.timeout() && bound < self.timeouts.admin() {
            ", and a second more per 10 MB the statement carries"
        } else {
            ""
        };
        let message = format!(
            "timeout after {}: no answer from the server (timeout={}{extra})",
            seconds(bound),
            seconds(self.timeouts.timeout())
        );
        self.fail(FailureClass::Timeout, message)
    }

    fn fail(&mut self, class: FailureClass, message: String) -> Error {
        if matches!(class, FailureClass::Timeout | FailureClass::Connection) {
            self.broken = Some(message.clone());
        }
        Error::failed(&self.display, class, message)
    }

    /// The error a failed statement is: the server's own refusals stay
    /// server errors with their SQLSTATE (a deadlock, a lock timeout or a
    /// serialization failure stays busy: `Error::is_busy`); a connection
    /// the server or the network ended is classified.
    pub(crate) fn classify(&mut self, e: tokio_postgres::Error) -> Error {
        if let Some(db) = e.as_db_error() {
            let text = format!("{} ({} {})", db.message(), db.severity(), db.code().code());
            if SESSION_ENDS.contains(db.code()) {
                return self.fail(FailureClass::Connection, text);
            }
            return Error::server(&self.display, text);
        }
        let io = std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        let class = match io {
            Some(std::io::ErrorKind::TimedOut) => FailureClass::Timeout,
            Some(_) => FailureClass::Connection,
            None if e.is_closed() => FailureClass::Connection,
            None => FailureClass::Other,
        };
        let message = format!("{} (the connection was lost)", words(&e));
        if class == FailureClass::Other {
            return Error::failed(&self.display, class, words(&e));
        }
        self.fail(class, message)
    }

    /// Statements separated by semicolons, within `bound`.
    pub(crate) fn batch_execute(&mut self, bound: Duration, sql: &str) -> Result<()> {
        self.check()?;
        let future = self.client().batch_execute(sql);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// Statements separated by semicolons, within `bound`, the driver's own
    /// error left for the caller to look at.
    pub(crate) fn batch_execute_raw(
        &mut self,
        bound: Duration,
        sql: &str,
    ) -> Result<std::result::Result<(), tokio_postgres::Error>> {
        self.check()?;
        let future = self.client().batch_execute(sql);
        let done = within(self.rt(), bound, future);
        done.map_err(|_| self.timed_out(bound))
    }

    /// A prepared statement, within the operation bound.
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Statement> {
        let bound = self.op_bound(0);
        self.check()?;
        let future = self.client().prepare(sql);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// Rows changed, within `bound`.
    pub(crate) fn execute<S: ?Sized + ToStatement + Sync>(
        &mut self,
        bound: Duration,
        statement: &S,
        params: Params<'_>,
    ) -> Result<u64> {
        self.check()?;
        let future = self.client().execute(statement, params);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// The one row, within `bound`.
    pub(crate) fn query_one<S: ?Sized + ToStatement + Sync>(
        &mut self,
        bound: Duration,
        statement: &S,
        params: Params<'_>,
    ) -> Result<Row> {
        self.check()?;
        let future = self.client().query_one(statement, params);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// The row if there is one, within `bound`.
    pub(crate) fn query_opt<S: ?Sized + ToStatement + Sync>(
        &mut self,
        bound: Duration,
        statement: &S,
        params: Params<'_>,
    ) -> Result<Option<Row>> {
        self.check()?;
        let future = self.client().query_opt(statement, params);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// The row if there is one, within `bound`, the driver's own error
    /// left for the caller to look at.
    pub(crate) fn query_opt_raw<S: ?Sized + ToStatement + Sync>(
        &mut self,
        bound: Duration,
        statement: &S,
        params: Params<'_>,
    ) -> Result<std::result::Result<Option<Row>, tokio_postgres::Error>> {
        self.check()?;
        let future = self.client().query_opt(statement, params);
        let done = within(self.rt(), bound, future);
        done.map_err(|_| self.timed_out(bound))
    }

    /// Every row, within `bound`.
    pub(crate) fn query<S: ?Sized + ToStatement + Sync>(
        &mut self,
        bound: Duration,
        statement: &S,
        params: Params<'_>,
    ) -> Result<Vec<Row>> {
        self.check()?;
        let future = self.client().query(statement, params);
        let done = within(self.rt(), bound, future);
        self.settle(bound, done)
    }

    /// A statement's outcome: its value, its classified error, or the
    /// timeout (which breaks the client).
    fn settle<T>(
        &mut self,
        bound: Duration,
        done: std::result::Result<
            std::result::Result<T, tokio_postgres::Error>,
            tokio::time::error::Elapsed,
        >,
    ) -> Result<T> {
        match done {
            Ok(result) => result.map_err(|e| self.classify(e)),
            Err(_) => Err(self.timed_out(bound)),
        }
    }
}

impl Drop for PgClient {
    /// Closes the connection: the client goes first (the connection then
    /// says goodbye to the server and ends), waited for a moment unless
    /// the connection was lost; the runtime is shut down without blocking
    /// (dropping it inside another runtime's thread would panic).
    fn drop(&mut self) {
        drop(self.client.take());
        if let Some(connection) = self.connection.take()
            && self.broken.is_none()
        {
            let _ = within(self.rt(), CLOSE_BOUND, connection);
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `future` run on `runtime` within `bound` (the timer is made inside the
/// runtime). A thread that already drives a runtime (serve's workers) may
/// not block inside it, so there the future runs on a thread of its own
/// for the moment, which may borrow from the caller.
fn within<F>(
    runtime: &tokio::runtime::Runtime,
    bound: Duration,
    future: F,
) -> std::result::Result<F::Output, tokio::time::error::Elapsed>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    let run = move || runtime.block_on(async move { tokio::time::timeout(bound, future).await });
    if tokio::runtime::Handle::try_current().is_err() {
        return run();
    }
    std::thread::scope(|scope| {
        scope
            .spawn(run)
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// A driver's error in words: the server's message and SQLSTATE where it
/// sent one (the library's own text alone is "db error").
pub(crate) fn words(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({} {})", db.message(), db.severity(), db.code().code()),
        None => e.to_string(),
    }
}
