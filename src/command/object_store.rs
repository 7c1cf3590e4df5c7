//! `--s3 URL` of the commands that measure an object store beside local
//! layouts (`quick`, `advise`): the URL checked, and a fresh prefix under
//! it for this run's datasets, so nothing already there is touched.

use crate::error::{Error, Result};
use crate::store::Access;
use crate::target::Target;

/// The S3 target `url` names, with a fresh prefix `blobbench-COMMAND-PID-TIME`
/// under its own, after checking the server answers there (a wrong endpoint,
/// bucket or credentials fail now, before any local dataset is made).
pub fn fresh_prefix(url: &str, command: &str) -> Result<Target> {
    let example =
        "e.g. --s3 's3://blobbench/bench?endpoint=http://127.0.0.1:8333&region=us-east-1'";
    if !url.starts_with("s3://") {
        return Err(Error::usage(format!(
            "--s3 {url}: not an S3 URL; write s3://BUCKET/PREFIX?endpoint=URL, {example}"
        )));
    }
    let base = Target::parse(url).map_err(|e| match e {
        Error::Usage(m) => Error::usage(format!("--s3: {m}")),
        other => other,
    })?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!("blobbench-{command}-{}-{stamp}", std::process::id());
    let Some(target) = base.child(&name) else {
        return Err(Error::usage(format!(
            "--s3 {url}: not an S3 URL; write s3://BUCKET/PREFIX?endpoint=URL, {example}"
        )));
    };
    drop(crate::store::open(&target, Access::ReadOnly)?);
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anything_but_an_s3_url_is_refused_naming_it() {
        for bad in ["notaurl", "sqlite:x.db", "http://127.0.0.1:8333"] {
            let e = fresh_prefix(bad, "quick").unwrap_err();
            assert!(matches!(e, Error::Usage(_)), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
        let e = fresh_prefix("s3://B/x?endpoint=http://h", "quick").unwrap_err();
        assert!(e.to_string().starts_with("--s3: "), "{e}");
    }

    #[test]
    fn the_fresh_prefix_is_under_the_given_one() {
        let base = Target::parse("s3://bucket/runs?endpoint=http://127.0.0.1:1").unwrap();
        let child = base.child("blobbench-quick-1-2").unwrap();
        assert_eq!(
            child.path(),
            std::path::Path::new("s3://bucket/runs/blobbench-quick-1-2 at http://127.0.0.1:1")
        );
        let top = Target::parse("s3://bucket?endpoint=http://127.0.0.1:1").unwrap();
        assert_eq!(
            top.child("x").unwrap().path(),
            std::path::Path::new("s3://bucket/x at http://127.0.0.1:1")
        );
        assert!(Target::parse("dir:/x").unwrap().child("x").is_none());
    }
}
