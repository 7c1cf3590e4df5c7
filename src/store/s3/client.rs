//! The S3 client of one target: credentials, settings, the server's name,
//! and S3's errors as blobbench's one-line errors.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::client::{HttpError, HttpErrorKind};
use object_store::{ClientOptions, RetryConfig};

use super::Bucket;
use crate::error::{Error, Result};
use crate::target::S3Location;

/// The client library, as recorded in results.
pub(crate) const CLIENT: &str = "object_store 0.14 (reqwest, HTTP/1.1, rustls with ring)";

/// The region signed for: the target's, else AWS_REGION or
/// AWS_DEFAULT_REGION, else us-east-1 (as the AWS CLI).
pub(crate) fn region(location: &S3Location) -> String {
    location
        .region
        .clone()
        .or_else(|| std::env::var("AWS_REGION").ok())
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "us-east-1".into())
}

/// A signed client for the target's bucket.
pub(crate) fn connect(location: &S3Location) -> Result<Bucket> {
    // rustls is built without a default crypto provider (the default one
    // builds a large C library); ring's is installed once per process.
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let options = ClientOptions::new()
        .with_allow_http(true)
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(Duration::from_secs(120));
    let retry = RetryConfig {
        max_retries: 0,
        ..RetryConfig::default()
    };
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(&location.bucket)
        .with_region(region(location))
        .with_client_options(options)
        .with_retry(retry);
    if let Some(endpoint) = &location.endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    let credentials = match credentials_in_use() {
        Some((words, profile)) => {
            if let Some(p) = profile {
                builder = builder
                    .with_access_key_id(p.key_id)
                    .with_secret_access_key(p.secret);
                if let Some(token) = p.token {
                    builder = builder.with_token(token);
                }
            }
            words
        }
        None => {
            builder = builder.with_skip_signature(true);
            "none found (AWS_ACCESS_KEY_ID, AWS_PROFILE, ~/.aws/credentials): requests are unsigned"
                .into()
        }
    };
    let client = builder.build().map_err(|e| {
        Error::usage(format!(
            "{}: cannot configure the S3 client: {}",
            location.display.display(),
            one_line(&e.to_string())
        ))
    })?;
    Ok(Bucket {
        location: location.clone(),
        client: Arc::new(client),
        credentials,
    })
}

/// A profile's keys, read from the shared credentials file.
struct ProfileKeys {
    key_id: String,
    secret: String,
    token: Option<String>,
}

/// Where the credentials come from, in words, and the profile's keys when
/// they come from one (the environment's the client reads itself).
fn credentials_in_use() -> Option<(String, Option<ProfileKeys>)> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if env("AWS_ACCESS_KEY_ID").is_some() && env("AWS_SECRET_ACCESS_KEY").is_some() {
        return Some(("environment (AWS_ACCESS_KEY_ID)".into(), None));
    }
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let file = env("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".aws/credentials")))?;
    let text = std::fs::read_to_string(&file).ok()?;
    let keys = profile_keys(&text, &profile)?;
    Some((
        format!("profile {profile} ({})", file.display()),
        Some(keys),
    ))
}

/// The keys of `[profile]` in an AWS shared credentials file (INI).
fn profile_keys(text: &str, profile: &str) -> Option<ProfileKeys> {
    let mut inside = false;
    let (mut key_id, mut secret, mut token) = (None, None, None);
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == profile;
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if !inside {
            continue;
        }
        let v = Some(v.trim().to_string());
        match k.trim() {
            "aws_access_key_id" => key_id = v,
            "aws_secret_access_key" => secret = v,
            "aws_session_token" => token = v,
            _ => {}
        }
    }
    Some(ProfileKeys {
        key_id: key_id?,
        secret: secret?,
        token,
    })
}

/// The server's name and version as its `Server` header gives them
/// (SeaweedFS, MinIO, AmazonS3), from one unsigned GET of the bucket:
/// refused, but answered with the header (a HEAD of the endpoint alone
/// gets none from SeaweedFS).
pub(crate) async fn server_name(location: S3Location) -> Option<String> {
    let endpoint = location
        .endpoint
        .clone()
        .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", region(&location)));
    let url = format!("{endpoint}/{}", location.bucket);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let response = client.get(url).send().await.ok()?;
    let server = response.headers().get(reqwest::header::SERVER)?;
    Some(server.to_str().ok()?.trim().to_string()).filter(|s| !s.is_empty())
}

/// A part size as written: `8 MiB` when it is whole mebibytes.
pub(crate) fn part_size_words(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// An S3 error as one line that says what to do.
pub(crate) fn s3_error(target: &Path, e: object_store::Error) -> Error {
    let text = one_line(&e.to_string());
    match e {
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => Error::connect(
            target,
            format!(
                "access denied ({text}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) to a key this bucket accepts"
            ),
        ),
        _ if text.contains("NoSuchBucket") => Error::usage(format!(
            "{}: the bucket does not exist; create it first (aws s3 mb, rclone mkdir, weed shell s3.bucket.create): blobbench never creates or deletes a bucket",
            target.display()
        )),
        _ if is_connect(&e) => Error::connect(
            target,
            format!("{text}; is the S3 server running at the endpoint? (endpoint=URL)"),
        ),
        _ => Error::server(target, text),
    }
}

/// Whether the request could not reach the server at all.
fn is_connect(e: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(http) = s.downcast_ref::<HttpError>() {
            return http.kind() == HttpErrorKind::Connect;
        }
        source = s.source();
    }
    false
}

/// At most 400 characters on one line: a server's XML body can span many.
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(400) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_keys_are_read_from_their_own_section_only() {
        let text = "[default]\naws_access_key_id = A\naws_secret_access_key = B\n\n[other]\naws_access_key_id=C\naws_secret_access_key=D\naws_session_token=T\n";
        let d = profile_keys(text, "default").unwrap();
        assert_eq!(
            (d.key_id.as_str(), d.secret.as_str(), d.token),
            ("A", "B", None)
        );
        let o = profile_keys(text, "other").unwrap();
        assert_eq!((o.key_id.as_str(), o.token.as_deref()), ("C", Some("T")));
        assert!(profile_keys(text, "missing").is_none());
    }

    #[test]
    fn long_server_messages_become_one_short_line() {
        let xml = format!("<Error>\n<Code>X</Code>\n{}</Error>", "y".repeat(1000));
        let line = one_line(&xml);
        assert!(!line.contains('\n') && line.len() < 420, "{line}");
    }
}
