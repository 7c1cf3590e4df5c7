//! What blobbench says about itself: `--version` (with the SQLite it
//! bundles and the commit it was built from), `blobbench completions SHELL`
//! and `blobbench man`, all drawn from the one clap definition in `cli/`,
//! so they never disagree with what the parser accepts.

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs};
use crate::error::Result;

use super::streams;

/// `0.1.0 (SQLite 3.50.4 bundled, commit 34ec52c)`: the version line, with
/// what decides the database side of every figure and where the binary came
/// from ("unknown" when it was built outside a git checkout).
pub fn version_text() -> String {
    format!(
        "{} (SQLite {} bundled, commit {})",
        env!("CARGO_PKG_VERSION"),
        crate::store::sqlite_version(),
        env!("BLOBBENCH_COMMIT")
    )
}

/// The whole command line as clap sees it, with [`version_text`] as its
/// version: what main parses with, and what completions and the manual
/// page are drawn from.
pub fn command() -> clap::Command {
    Cli::command().version(version_text())
}

/// `blobbench completions SHELL`: the completion script on standard output.
pub fn completions(args: &CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command(), "blobbench", &mut script);
    streams::write_to_stdout(&script)
}

/// `blobbench man`: the manual page (roff, section 1) on standard output,
/// every subcommand's options and examples included.
pub fn man() -> Result<()> {
    let page = manual_page()?;
    streams::write_to_stdout(&page)
}

/// The manual page: the top-level page, then one section per subcommand
/// (and per suite) with its usage, options and examples.
fn manual_page() -> Result<Vec<u8>> {
    let mut top = command();
    top.build();
    let mut page = Vec::new();
    let io = |e: std::io::Error| {
        crate::error::Error::io("cannot render", std::path::Path::new("the manual page"), e)
    };
    // clap_mangen's own SUBCOMMANDS section cites pages (blobbench-init(1))
    // that do not exist: this page holds every subcommand as a section.
    let man = clap_mangen::Man::new(top.clone());
    man.render_title(&mut page).map_err(io)?;
    man.render_name_section(&mut page).map_err(io)?;
    man.render_synopsis_section(&mut page).map_err(io)?;
    man.render_description_section(&mut page).map_err(io)?;
    man.render_options_section(&mut page).map_err(io)?;
    page.extend_from_slice(subcommand_list(&top).as_bytes());
    man.render_extra_section(&mut page).map_err(io)?;
    man.render_version_section(&mut page).map_err(io)?;
    for (path, sub) in subcommands(&top, "blobbench") {
        page.extend_from_slice(format!(".SH \"{}\"\n", path.to_uppercase()).as_bytes());
        let man = clap_mangen::Man::new(sub.clone());
        man.render_synopsis_section(&mut page).map_err(io)?;
        man.render_description_section(&mut page).map_err(io)?;
        man.render_options_section(&mut page).map_err(io)?;
        man.render_extra_section(&mut page).map_err(io)?;
    }
    Ok(page)
}

/// The SUBCOMMANDS section: each subcommand's name and what it does, and
/// the section of this page that describes it.
fn subcommand_list(top: &clap::Command) -> String {
    let roff = |text: &str| text.replace('\\', "\\e").replace('-', "\\-");
    let mut out = String::from(".SH SUBCOMMANDS\n");
    for (path, sub) in subcommands(top, "blobbench") {
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{} (section {} below)\n",
            roff(&path),
            roff(&about),
            roff(&path.to_uppercase())
        ));
    }
    out
}

/// Every subcommand below `cmd`, depth first, with its full name
/// (`blobbench suite lob`); clap's own `help` is left out.
fn subcommands(cmd: &clap::Command, name: &str) -> Vec<(String, clap::Command)> {
    let mut all = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let path = format!("{name} {}", sub.get_name());
        let named = sub.clone().name(path.clone()).bin_name(path.clone());
        all.push((path.clone(), named));
        all.extend(subcommands(sub, &path));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_names_sqlite_and_the_commit() {
        let v = version_text();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        assert!(
            v.contains(&format!("SQLite {}", rusqlite::version())),
            "{v}"
        );
        assert!(v.contains("commit "), "{v}");
    }

    #[test]
    fn the_manual_names_every_subcommand() {
        let page = String::from_utf8(manual_page().unwrap()).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH"),
            "{}",
            &page[..200]
        );
        for (path, _) in subcommands(&command(), "blobbench") {
            assert!(
                page.contains(&format!(".SH \"{}\"", path.to_uppercase())),
                "no section for {path}"
            );
        }
        // No reference to a page that is not there: every subcommand is a
        // section of this one.
        assert!(!page.contains("(1)"), "a page reference: {page}");
        assert!(page.contains("\\fBblobbench init\\fR\n"), "{page}");
    }
}
