//! `blobbench load` against hostile servers, each a few lines of std::net in
//! a thread of this test: one that never accepts, one that accepts and never
//! answers, a conforming HTTP/1.0 server that closes after every response,
//! one whose Content-Length lies, one that always answers 500, one that
//! serves the wrong bytes. Load must end on time, count each failure by its
//! kind, not count a server's orderly close as an error, and exit 1 when
//! nothing succeeded or --verify found wrong bytes; its options are checked.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::time::Instant;

use crate::common::{json, ok, usage_error};

/// A listener on a free local port, its address, and a thread answering
/// every connection with `answer` (given the request's first line).
pub(crate) fn server(answer: impl Fn(&str, &mut TcpStream) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            while let Some(line) = read_request(&mut s) {
                answer(&line, &mut s);
            }
        }
    });
    addr
}

/// Reads one request's head; its first line, or None at the end.
pub(crate) fn read_request(s: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    text.lines().next().map(str::to_owned)
}

pub(crate) fn load(dir: &Path, args: &[&str]) -> (Output, f64) {
    let started = Instant::now();
    let out = common::run(dir, args);
    (out, started.elapsed().as_secs_f64())
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn no_panic(out: &Output) {
    let err = stderr(out);
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

#[test]
fn an_http_1_0_server_that_closes_after_each_response_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let addr = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    // And one that says Connection: close in HTTP/1.1.
    let close = server(|_, s| {
        let _ =
            s.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello");
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    for a in [addr, close] {
        let url = format!("http://{a}/x");
        ok(
            d,
            &["load", &url, "-n", "20", "-c", "2", "--json", "c.json"],
        );
        let l = &json(&d.join("c.json"))["tables"]["levels"][0];
        assert_eq!(l["requests"], 20, "{l}");
        assert_eq!(l["ok"], 20, "{l}");
        assert_eq!(l["bytes"], 100, "{l}");
    }
}

#[test]
fn a_body_shorter_than_its_content_length_is_a_length_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let addr = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
        let _ = s.shutdown(std::net::Shutdown::Both);
    });
    let url = format!("http://{addr}/x");
    let (out, _) = load(d, &["load", &url, "-n", "6", "--json", "l.json"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = &json(&d.join("l.json"))["tables"]["levels"][0]["errors"];
    assert_eq!(e["length"], 6, "{e}");
    assert_eq!(e["io"], 0, "{e}");
}

/// More bytes than the Content-Length on a keep-alive connection: hyper
/// ends the connection on bytes no request asked for, which load once took
/// for a server closing an idle connection and went on quietly. Each
/// surplus is a length error, whether it is read with its response or
/// just after, and the one-line summary names the class.
#[test]
fn a_body_longer_than_its_content_length_is_a_length_error() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let addr = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, and more");
    });
    let url = format!("http://{addr}/x");
    let (out, _) = load(d, &["load", &url, "-n", "8", "--json", "l.json"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last = stderr(&out).trim_end().lines().last().unwrap().to_string();
    assert!(last.contains("length"), "{last}");
    let level = &json(&d.join("l.json"))["tables"]["levels"][0];
    let e = &level["errors"];
    let (answered, length) = (level["ok"].as_u64().unwrap(), e["length"].as_u64().unwrap());
    // Read with its response, a surplus fails that response; read just
    // after it, the next request's turn: never a success unaccounted for.
    assert!(length >= 4 && answered <= length, "{level}");
    assert_eq!(level["requests"], 8, "{level}");
    assert_eq!(e["io"], 0, "{e}");
    // The same server answering exactly its Content-Length is all success
    // (the check costs a conforming server nothing).
    let exact = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    });
    let url = format!("http://{exact}/x");
    ok(d, &["load", &url, "-n", "8", "--json", "x.json"]);
    let level = &json(&d.join("x.json"))["tables"]["levels"][0];
    assert_eq!(level["ok"], 8, "{level}");
}

#[test]
fn every_request_failing_or_wrong_bytes_exit_1_with_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let always_500 = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops");
    });
    let url = format!("http://{always_500}/blobs/1");
    let (out, _) = load(d, &["load", &url, "-n", "10"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last = stderr(&out).trim_end().lines().last().unwrap().to_string();
    assert!(
        last.contains("every one of the 10 requests") && last.contains("status 10"),
        "{last}"
    );
    // A server that answers with the right length and the wrong bytes.
    ok(d, &["init", "v.db", "--count", "10", "--size", "100"]);
    let zeros = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        let _ = s.write_all(&[0u8; 100]);
    });
    let url = format!("http://{zeros}/blobs/3");
    let (out, _) = load(d, &["load", &url, "-n", "5", "--verify", "v.db"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("wrong length or bytes"),
        "{}",
        stderr(&out)
    );
    // --help says what the exit status means.
    let help = ok(d, &["load", "--help"]);
    assert!(help.contains("Exit status"), "{help}");
}

#[test]
fn some_requests_failing_write_the_result_then_exit_1_naming_each_class() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // /ok answers, /busy is a 503 (SlowDown as S3 says it): one URL each.
    let addr = server(|line, s| {
        let _ = if line.contains("/busy") {
            s.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 8\r\n\r\nSlowDown")
        } else {
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        };
    });
    std::fs::write(
        d.join("urls.txt"),
        format!("http://{addr}/ok\nhttp://{addr}/busy\n"),
    )
    .unwrap();
    let (out, _) = load(
        d,
        &[
            "load",
            "--urls",
            "urls.txt",
            "--order",
            "sequential",
            "-n",
            "10",
            "--json",
            "l.json",
        ],
    );
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last = stderr(&out).trim_end().lines().last().unwrap().to_string();
    assert!(
        last.contains("5 of 10 requests failed: 5 server error 503; see the errors column"),
        "{last}"
    );
    // The result was written first, with the successes and the code.
    let l = &json(&d.join("l.json"))["tables"]["levels"][0];
    assert_eq!(
        (l["ok"].as_u64(), l["requests"].as_u64()),
        (Some(5), Some(10)),
        "{l}"
    );
    assert_eq!(
        l["errors"]["status_codes"],
        serde_json::json!([[503, 5]]),
        "{l}"
    );
}

#[test]
fn max_errors_stops_a_level_early_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let always_500 = server(|_, s| {
        let _ = s.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops");
    });
    let url = format!("http://{always_500}/blobs/1");
    let (out, _) = load(
        d,
        &[
            "load",
            &url,
            "-c",
            "1",
            "-n",
            "1000",
            "--max-errors",
            "5",
            "--json",
            "m.json",
        ],
    );
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let l = &json(&d.join("m.json"))["tables"]["levels"][0];
    // One connection: the fifth failure is counted before the sixth request.
    assert_eq!(l["requests"], 5, "{l}");
    let why = l["stopped_early"].as_str().unwrap();
    assert!(
        why.starts_with("--max-errors 5: 5 of 5 requests had failed"),
        "{why}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("stopped early"));
    usage_error(
        d,
        &["load", &url, "-n", "1", "--max-errors", "0%"],
        "--max-errors 0%",
    );
}

#[test]
fn rates_durations_and_timeouts_that_make_no_sense_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // Never reached (the options are refused first); were one let through,
    // it would meet a port refused by construction.
    let closed = common::closed_port();
    let url = &format!("http://{}/blobs/1", closed.addr());
    for rate in ["1e-300", "0", "-5", "1e300", "inf", "NaN"] {
        let rate = format!("--rate={rate}");
        usage_error(d, &["load", url, &rate, "-t", "1s"], "--rate");
    }
    // The option and the value are both named.
    for needle in ["'0s'", "--duration"] {
        usage_error(d, &["load", url, "-t", "0s"], needle);
    }
    for needle in ["'0s'", "--timeout"] {
        usage_error(d, &["load", url, "-n", "1", "--timeout", "0s"], needle);
    }
    // A port out of range or a user in the URL is refused by name, not
    // sent to a made-up address (HOST:99999:80) as connect failures.
    for (bad, needle) in [
        ("http://h:99999/x", "port \"99999\""),
        ("http://h:0/x", "port \"0\""),
        ("http://u@h/x", "no user or password"),
    ] {
        usage_error(d, &["load", bad, "-n", "1"], needle);
    }
    // Folders and binary files are not URL lists.
    std::fs::create_dir(d.join("urls")).unwrap();
    usage_error(d, &["load", "--urls", "urls", "-n", "1"], "is a folder");
    std::fs::write(d.join("bin.txt"), [0xffu8, 0xfe, 0]).unwrap();
    usage_error(
        d,
        &["load", "--urls", "bin.txt", "-n", "1"],
        "not a text file",
    );
}
