//! `cargo xtask readme`: the README and the "Try it" sections of the docs run as written.
//!
//! Every ```` ```sh ```` block of `README.md`, then of each `docs/*.md` section titled "Try it",
//! runs in order in one bash session at the repository root (`set -euo pipefail`: a failing
//! command, an unset variable or a failing pipe stops the run), as a user pasting them would.
//! The info string after `sh` says how a block runs:
//!
//! - `sh`: in the session, like a paste into the second terminal;
//! - `sh service`: the service's terminal: the running service (if any) is stopped with Ctrl-C's
//!   signal, the block starts in the background and the run waits for `/readyz`;
//! - `sh stopped`: the service is stopped first, then the block runs in the session;
//! - `sh no-ci`: not run; the text right above the block must say so ("not run in CI").
//!
//! The harness sets only documented settings: `ROOMLINK__SERVER__BIND` on a free loopback port
//! (the README's first block reads it) and `ROOMLINK__SECURITY__BCRYPT_COST=4`, and it makes the
//! release profile cheap to build (no optimisation, no line tables: CI's time, the same code).
//! It refuses to start where a `roomlink.db` or `roomlink.key` already lies at the root, and
//! afterwards stops what the blocks started and deletes the files they created there.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::project_root;

/// The documents whose blocks run, in this order; for the docs only their "Try it" section.
const README: &str = "README.md";
const TRY_IT_DOCS: &[&str] = &["docs/calendars.md"];
/// Words that fail the run wherever they appear in its output.
const FORBIDDEN_OUTPUT: &[&str] = &["Traceback (most recent call last)"];
/// How long a `sh service` block may take to answer `/readyz`: its first release build.
const READY_TIMEOUT_SECS: u32 = 2400;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Session,
    Service,
    Stopped,
    NotInCi,
}

#[derive(Debug, PartialEq, Eq)]
struct Block {
    /// `README.md:123`: where the block's first line is.
    origin: String,
    mode: Mode,
    body: String,
}

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!("readme: unknown argument {arg:?} (it takes none)"));
    }
    let root = project_root();
    for file in ["roomlink.db", "roomlink.key"] {
        if root.join(file).exists() {
            return Err(format!(
                "readme: {} exists; the README would use it. Move it away (it may be yours, or left by an interrupted run) and rerun",
                root.join(file).display()
            ));
        }
    }
    let mut blocks = blocks_of(README, &read(&root, README)?, false)?;
    for doc in TRY_IT_DOCS {
        let found = blocks_of(doc, &read(&root, doc)?, true)?;
        if found.is_empty() {
            return Err(format!("readme: {doc} has no sh block under \"Try it\""));
        }
        blocks.extend(found);
    }
    let work = root.join("target/readme");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    let script = session_script(&blocks, &work, port)?;
    let before = top_level_entries(&root)?;
    eprintln!(
        "readme: {} blocks ({} skipped as not run in CI), the service on 127.0.0.1:{port}",
        blocks.len(),
        blocks.iter().filter(|b| b.mode == Mode::NotInCi).count()
    );
    let outcome = run_session(&root, &script);
    clean_up(&root, &before);
    let output = outcome?;
    if let Some(word) = FORBIDDEN_OUTPUT.iter().find(|w| output.contains(**w)) {
        return Err(format!("readme: the output contains {word:?}"));
    }
    eprintln!("readme: every block ran");
    Ok(())
}

fn read(root: &Path, file: &str) -> Result<String, String> {
    fs::read_to_string(root.join(file)).map_err(|e| format!("cannot read {file}: {e}"))
}

/// The `sh` blocks of `text` (of its "Try it" sections only, when `try_it_only`).
fn blocks_of(file: &str, text: &str, try_it_only: bool) -> Result<Vec<Block>, String> {
    enum Fence<'a> {
        Closed,
        Run(usize, Mode, Vec<&'a str>),
        Other(usize),
    }
    let mut blocks = Vec::new();
    let mut in_try_it = false;
    let mut fence = Fence::Closed;
    let mut prose_above: Vec<&str> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let is_fence = line.trim_start().starts_with("```");
        match &mut fence {
            Fence::Run(start, mode, body) => {
                if is_fence {
                    blocks.push(Block {
                        origin: format!("{file}:{start}"),
                        mode: *mode,
                        body: body.join("\n") + "\n",
                    });
                    fence = Fence::Closed;
                    prose_above.clear();
                } else {
                    body.push(line);
                }
                continue;
            }
            Fence::Other(_) => {
                if is_fence {
                    fence = Fence::Closed;
                    prose_above.clear();
                }
                continue;
            }
            Fence::Closed => {}
        }
        if let Some(heading) = line.strip_prefix('#') {
            in_try_it = heading
                .trim_start_matches('#')
                .trim()
                .eq_ignore_ascii_case("try it");
            prose_above.clear();
            continue;
        }
        let Some(info) = line.trim_start().strip_prefix("```") else {
            prose_above.push(line);
            continue;
        };
        let mut words = info.split_whitespace();
        if words.next() != Some("sh") || (try_it_only && !in_try_it) {
            fence = Fence::Other(number);
            continue;
        }
        let mode = match words.next() {
            None => Mode::Session,
            Some("service") => Mode::Service,
            Some("stopped") => Mode::Stopped,
            Some("no-ci") => {
                let said = prose_above.iter().any(|l| l.contains("not run in CI"));
                if !said {
                    return Err(format!(
                        "{file}:{number}: the text above a `sh no-ci` block must say it is \"not run in CI\""
                    ));
                }
                Mode::NotInCi
            }
            Some(other) => return Err(format!("{file}:{number}: unknown block kind `sh {other}`")),
        };
        fence = Fence::Run(number, mode, Vec::new());
    }
    match fence {
        Fence::Closed => Ok(blocks),
        Fence::Run(start, ..) | Fence::Other(start) => {
            Err(format!("{file}:{start}: a code block is never closed"))
        }
    }
}

/// The bash script that runs `blocks` in order; each block's text is its own file in `work`.
fn session_script(blocks: &[Block], work: &Path, port: u16) -> Result<String, String> {
    let mut script = format!(
        r#"set -Eeuo pipefail
exec 2>&1
export ROOMLINK__SERVER__BIND=127.0.0.1:{port}
export ROOMLINK__SECURITY__BCRYPT_COST=4
export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=false
__readme_service=
__readme_service_log=
__readme_at=
trap 'echo; echo "readme: FAILED in the block at $__readme_at, its line $LINENO: $BASH_COMMAND" >&2' ERR
trap '__readme_stop || true; kill $(jobs -p) 2>/dev/null || true' EXIT
__readme_alive() {{
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${{stat##*) }}
  [ "${{stat%% *}}" != Z ]
}}
__readme_stop() {{
  [ -n "$__readme_service" ] || return 0
  local pid=$__readme_service status
  __readme_service=
  kill -INT -- "-$pid" 2>/dev/null || true
  for _ in $(seq 300); do __readme_alive "$pid" || break; sleep 0.1; done
  if __readme_alive "$pid"; then
    kill -KILL -- "-$pid" 2>/dev/null || true
    echo "readme: the service did not stop within 30 s of Ctrl-C's signal; its log ends:" >&2
    tail -n 20 "$__readme_service_log" >&2
    return 1
  fi
  status=$(cat "$__readme_service_log.status" 2>/dev/null || echo unknown)
  if [ "$status" != 0 ]; then
    echo "readme: the service exited with status $status after Ctrl-C's signal; its log ends:" >&2
    tail -n 20 "$__readme_service_log" >&2
    return 1
  fi
}}
__readme_ready() {{
  local pid=$1 tries=$(({ready} * 2))
  while [ "$tries" -gt 0 ]; do
    if curl -sfk -o /dev/null --max-time 2 "http://127.0.0.1:{port}/readyz" \
      || curl -sfk -o /dev/null --max-time 2 "https://127.0.0.1:{port}/readyz"; then
      return 0
    fi
    if ! __readme_alive "$pid"; then
      echo "readme: the service stopped before it was ready; its log ends:" >&2
      tail -n 30 "$__readme_service_log" >&2
      return 1
    fi
    sleep 0.5
    tries=$((tries - 1))
  done
  echo "readme: the service was not ready within {ready} s; its log ends:" >&2
  tail -n 30 "$__readme_service_log" >&2
  return 1
}}
"#,
        ready = READY_TIMEOUT_SECS
    );
    for (index, block) in blocks.iter().enumerate() {
        let file = work.join(format!("block-{index}.sh"));
        fs::write(&file, &block.body)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let file = shell_quote(&file);
        let origin = shell_quote(Path::new(&block.origin));
        let header = |what: &str| format!("echo; echo \"==> $__readme_at{what}\"\n");
        script.push_str(&format!("__readme_at={origin}\n"));
        match block.mode {
            Mode::Session => {
                script.push_str(&header(""));
                script.push_str(&format!("source {file}\n"));
            }
            Mode::Stopped => {
                script.push_str(&header(" (the service stopped first)"));
                script.push_str(&format!("__readme_stop\nsource {file}\n"));
            }
            Mode::Service => {
                let log = shell_quote(&work.join(format!("service-{index}.log")));
                script.push_str(&header(" (the service's terminal)"));
                script.push_str(&format!(
                    "__readme_stop\n__readme_service_log={log}\n\
                     setsid bash -c 'bash -Eeuo pipefail \"$1\"; echo $? > \"$2.status\"' _ {file} {log} > {log} 2>&1 < /dev/null &\n\
                     __readme_service=$!\n__readme_ready \"$__readme_service\"\n\
                     echo \"(the service is ready; its output: {log})\"\n",
                ));
            }
            Mode::NotInCi => {
                script.push_str(&header(" (not run in CI, as its text says)"));
            }
        }
    }
    script.push_str("__readme_stop\n");
    Ok(script)
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// Runs `script` in bash at `root` in a process group of its own, its output shown as it comes
/// and returned; the group is killed when bash ends, so nothing a block started lives on.
fn run_session(root: &Path, script: &str) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    let mut bash = Command::new("bash");
    // What `cargo xtask` adds for its own process is not in a user's shell.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || [
                "CARGO",
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_PRIMARY_PACKAGE",
            ]
            .contains(&name.as_ref())
        {
            bash.env_remove(name.as_ref());
        }
    }
    let mut child = bash
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run bash: {e}"))?;
    let stdout = child.stdout.take().ok_or("bash has no output pipe")?;
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            eprintln!("{line}");
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    let status = child.wait().map_err(|e| format!("bash: {e}"))?;
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let output = reader.join().map_err(|_| "the output reader panicked")?;
    if status.success() {
        Ok(output)
    } else {
        Err(format!(
            "readme: a block failed ({status}); see the output above"
        ))
    }
}

fn top_level_entries(root: &Path) -> Result<BTreeSet<PathBuf>, String> {
    let entries = fs::read_dir(root).map_err(|e| format!("cannot list {}: {e}", root.display()))?;
    Ok(entries.filter_map(Result::ok).map(|e| e.path()).collect())
}

/// Deletes what the blocks created at the root (their databases, keys, logs, secrets).
fn clean_up(root: &Path, before: &BTreeSet<PathBuf>) {
    let Ok(after) = top_level_entries(root) else {
        return;
    };
    for path in after.difference(before) {
        let removed = if path.is_dir() {
            fs::remove_dir_all(path)
        } else {
            fs::remove_file(path)
        };
        if let Err(e) = removed {
            eprintln!("readme: cannot remove {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\n```sh\necho one\n```\n\nText.\n\n```sh service\ncargo run\n```\n\
        ```toml\n[a]\n```\n```sh stopped\nrestore\n```\n\nThis block is not run in CI: it needs a codec.\n\n\
        ```sh no-ci\nreal codec\n```\n\n## Try it\n\n```sh\ntried\n```\n";

    #[test]
    fn blocks_are_read_in_order_with_their_kind_and_line() {
        let blocks = blocks_of("R.md", DOC, false).unwrap();
        let seen: Vec<_> = blocks
            .iter()
            .map(|b| (b.origin.as_str(), b.mode, b.body.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("R.md:3", Mode::Session, "echo one\n"),
                ("R.md:9", Mode::Service, "cargo run\n"),
                ("R.md:15", Mode::Stopped, "restore\n"),
                ("R.md:21", Mode::NotInCi, "real codec\n"),
                ("R.md:27", Mode::Session, "tried\n"),
            ]
        );
    }

    #[test]
    fn docs_contribute_their_try_it_section_only() {
        let blocks = blocks_of("D.md", DOC, true).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].body, "tried\n");
    }

    #[test]
    fn a_skipped_block_must_say_so_and_kinds_are_known() {
        let silent = "Text.\n\n```sh no-ci\nx\n```\n";
        assert!(
            blocks_of("R.md", silent, false)
                .unwrap_err()
                .contains("not run in CI")
        );
        let unknown = "```sh later\nx\n```\n";
        assert!(
            blocks_of("R.md", unknown, false)
                .unwrap_err()
                .contains("unknown block kind")
        );
        let open = "```sh\nx\n";
        assert!(
            blocks_of("R.md", open, false)
                .unwrap_err()
                .contains("never closed")
        );
    }

    #[test]
    fn every_block_of_the_readme_parses() {
        let root = project_root();
        let readme = read(&root, README).unwrap();
        let blocks = blocks_of(README, &readme, false).unwrap();
        assert!(blocks.iter().any(|b| b.mode == Mode::Service));
        for doc in TRY_IT_DOCS {
            assert!(
                !blocks_of(doc, &read(&root, doc).unwrap(), true)
                    .unwrap()
                    .is_empty()
            );
        }
    }
}
