//! Import circles between the modules of one crate.
//!
//! The module graph comes from the source files under `src/`: `src/a/b.rs` and `src/a/b/mod.rs`
//! are `a::b`, `lib.rs` and `main.rs` the root (one graph: they rarely share module names),
//! each `src/bin/NAME` binary a graph of its own. A path `crate::`/`super::`/`self::` in module
//! A (see [`super::source`]) names module B, the longest known module it starts with.
//!
//! What counts as an edge: A -> B when neither is an ancestor of the other. A parent declares
//! its children and children use their parent's items all the time; that is structure, not a
//! circle. Both ends are lifted to the children of their closest common ancestor, so
//! `rules::csv::plan -> rules::csv_export` is the edge `rules::csv -> rules::csv_export`: a
//! circle is always one between siblings, which is the level where a module can be moved or
//! split to break it.
//!
//! Known blind spots: an item re-exported by a parent (`use super::Item` where the parent has
//! `pub use sibling::Item`) is an edge to the parent only; a path through a `use` alias
//! (`use crate::a; a::f()`) counts once, at the `use`.

use super::source::{self, Scan};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// An edge between sibling modules and the first place that makes it, e.g.
/// `src/rules/csv.rs:24 uses super::csv_export`.
type Edges = BTreeMap<(String, String), String>;

/// Every import circle of the crate whose sources are in `src`, one message each:
/// `NAME: a -> b -> a` and, below it, where each step is written. `shown` is how `src` is
/// named in those messages.
pub fn check_crate(name: &str, src: &Path, shown: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    super::rust_files(src, &mut files)?;
    files.sort();
    let mut graphs: BTreeMap<String, Vec<(PathBuf, Vec<String>, Scan)>> = BTreeMap::new();
    for file in files {
        let Ok(relative) = file.strip_prefix(src) else {
            continue;
        };
        let Some((graph, module)) = module_of(relative) else {
            continue;
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let scan = source::scan(&text, &module);
        graphs
            .entry(graph)
            .or_default()
            .push((shown.join(relative), module, scan));
    }
    let mut messages = Vec::new();
    for (graph, files) in graphs {
        let edges = edges(&files);
        let label = if graph.is_empty() {
            name.to_owned()
        } else {
            format!("{name} ({graph})")
        };
        for circle in circles(&edges) {
            messages.push(describe(&label, &circle, &edges));
        }
    }
    Ok(messages)
}

/// `label: a -> b -> a`, then the evidence of each step, one per line.
fn describe(label: &str, circle: &[String], edges: &Edges) -> String {
    let mut text = format!("{label}: {} -> {}", circle.join(" -> "), circle[0]);
    for (i, from) in circle.iter().enumerate() {
        let to = &circle[(i + 1) % circle.len()];
        if let Some(evidence) = edges.get(&(from.clone(), to.clone())) {
            text.push_str(&format!("\n    {from} -> {to}: {evidence}"));
        }
    }
    text
}

/// The graph (`""`, or `bin/NAME`) and module path of a file, from its path under `src/`.
fn module_of(relative: &Path) -> Option<(String, Vec<String>)> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    let file = parts.pop()?;
    let stem = file.strip_suffix(".rs")?.to_owned();
    let mut graph = String::new();
    if parts.first().is_some_and(|p| p == "bin") {
        parts.remove(0);
        if parts.is_empty() {
            // src/bin/NAME.rs is the root of binary NAME.
            return Some((format!("bin/{stem}"), Vec::new()));
        }
        graph = format!("bin/{}", parts.remove(0));
        if parts.is_empty() && stem == "main" {
            return Some((graph, Vec::new()));
        }
    } else if parts.is_empty() && (stem == "lib" || stem == "main") {
        return Some((graph, Vec::new()));
    }
    if stem != "mod" {
        parts.push(stem);
    }
    Some((graph, parts))
}

/// The sibling-level edges of one graph's files.
fn edges(files: &[(PathBuf, Vec<String>, Scan)]) -> Edges {
    let mut known: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut test_code: Vec<&[String]> = Vec::new();
    for (_, module, scan) in files {
        for end in 0..=module.len() {
            known.insert(module[..end].to_vec());
        }
        known.extend(scan.inline_modules.iter().cloned());
        test_code.extend(scan.test_modules.iter().map(Vec::as_slice));
    }
    let mut edges = Edges::new();
    for (file, _, scan) in files {
        for reference in &scan.references {
            let from = &reference.from;
            if test_code.iter().any(|t| from.starts_with(t)) {
                continue;
            }
            let Some(path) = resolve(from, &reference.written) else {
                continue;
            };
            // The longest known module the path starts with: the rest names an item.
            let Some(to) = (0..=path.len())
                .rev()
                .map(|end| &path[..end])
                .find(|p| known.contains(*p))
            else {
                continue;
            };
            if let Some((a, b)) = sibling_edge(from, to) {
                edges.entry((a, b)).or_insert_with(|| {
                    format!(
                        "{}:{} uses {}",
                        file.display(),
                        reference.line,
                        reference.written.join("::")
                    )
                });
            }
        }
    }
    edges
}

/// The absolute path of `written` (`crate::`, `super::`, `self::` first) used in module `from`.
fn resolve(from: &[String], written: &[String]) -> Option<Vec<String>> {
    let mut path = from.to_vec();
    let mut rest = written.iter().peekable();
    match rest.next()?.as_str() {
        "crate" => path.clear(),
        "self" => {}
        "super" => {
            path.pop()?;
            while rest.next_if(|s| *s == "super").is_some() {
                path.pop()?;
            }
        }
        _ => return None,
    }
    // `a::{self, b}` names `a` itself.
    path.extend(rest.filter(|s| *s != "self").cloned());
    Some(path)
}

/// `from -> to` lifted to the children of their closest common ancestor, as `a::b` names;
/// `None` when one is an ancestor of the other (or they are the same).
fn sibling_edge(from: &[String], to: &[String]) -> Option<(String, String)> {
    if from.starts_with(to) || to.starts_with(from) {
        return None;
    }
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    Some((from[..=common].join("::"), to[..=common].join("::")))
}

/// The circles of a directed graph: for each module on a circle (in name order) that no earlier
/// circle went through, the shortest circle through it. Each circle is listed from that module
/// on, without repeating it at the end.
pub fn circles(edges: &Edges) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().insert(to);
    }
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut covered: BTreeSet<&str> = BTreeSet::new();
    for &start in next.keys() {
        if covered.contains(start) {
            continue;
        }
        if let Some(circle) = shortest_circle(&next, start) {
            covered.extend(circle.iter().copied());
            found.push(circle.iter().map(|m| (*m).to_owned()).collect());
        }
    }
    found
}

/// Breadth first from `start`'s successors back to `start`.
fn shortest_circle<'a>(
    next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    start: &'a str,
) -> Option<Vec<&'a str>> {
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &successor in next.get(node).into_iter().flatten() {
            if successor == start {
                let mut circle = vec![node];
                while let Some(&before) = came_from.get(circle[circle.len() - 1]) {
                    circle.push(before);
                }
                circle.reverse();
                return Some(circle);
            }
            if successor != start && !came_from.contains_key(successor) {
                came_from.insert(successor, node);
                queue.push_back(successor);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Edges {
        edges
            .iter()
            .map(|(a, b)| (((*a).to_owned(), (*b).to_owned()), String::new()))
            .collect()
    }

    fn path(text: &str) -> Vec<String> {
        text.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn no_circle_in_a_layered_graph() {
        let edges = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("x::p", "x::q")]);
        assert!(circles(&edges).is_empty());
    }

    #[test]
    fn finds_two_and_three_step_circles() {
        let edges = graph(&[
            ("rules::csv", "rules::csv_export"),
            ("rules::csv_export", "rules::csv"),
            ("rules::put", "rules::csv"),
            ("b", "c"),
            ("c", "d"),
            ("d", "b"),
            ("d", "e"),
        ]);
        assert_eq!(
            circles(&edges),
            [vec!["b", "c", "d"], vec!["rules::csv", "rules::csv_export"]]
        );
    }

    #[test]
    fn every_module_on_a_circle_is_shown_once() {
        // a <-> b and b <-> c: one strongly connected set, two circles to break.
        let edges = graph(&[("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")]);
        assert_eq!(circles(&edges), [vec!["a", "b"], vec!["c", "b"]]);
        // The shortest circle through a module, not the first one found.
        let edges = graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("b", "a")]);
        assert_eq!(circles(&edges)[0], ["a", "b"]);
    }

    #[test]
    fn edges_are_lifted_to_siblings_and_ancestry_is_not_an_edge() {
        let edge = |a: &str, b: &str| sibling_edge(&path(a), &path(b));
        let pair = |a: &str, b: &str| Some((a.to_owned(), b.to_owned()));
        assert_eq!(
            edge("rules::csv::plan", "rules::csv_export"),
            pair("rules::csv", "rules::csv_export")
        );
        assert_eq!(edge("a::b::c", "d::e"), pair("a", "d"));
        assert_eq!(edge("a", "b"), pair("a", "b"));
        assert_eq!(edge("rules::csv", "rules"), None, "to the parent");
        assert_eq!(edge("rules", "rules::csv::plan"), None, "to a descendant");
        assert_eq!(edge("", "rules"), None, "from the root");
        assert_eq!(edge("rules", ""), None, "to the root");
        assert_eq!(edge("a", "a"), None);
    }

    #[test]
    fn resolves_relative_paths() {
        let from = path("rules::csv");
        let resolved = |w: &str| resolve(&from, &path(w)).map(|p| p.join("::"));
        assert_eq!(
            resolved("super::csv_export::X").as_deref(),
            Some("rules::csv_export::X")
        );
        assert_eq!(resolved("super::super::error").as_deref(), Some("error"));
        assert_eq!(
            resolved("crate::endpoint::self").as_deref(),
            Some("endpoint")
        );
        assert_eq!(
            resolved("self::inner").as_deref(),
            Some("rules::csv::inner")
        );
        assert_eq!(resolved("super::super::super::x"), None, "above the root");
        assert_eq!(resolved("std::fmt"), None);
    }

    #[test]
    fn module_paths_from_file_paths() {
        let module =
            |p: &str| module_of(Path::new(p)).map(|(g, m)| format!("{g}|{}", m.join("::")));
        assert_eq!(module("lib.rs").as_deref(), Some("|"));
        assert_eq!(module("main.rs").as_deref(), Some("|"));
        assert_eq!(module("rules/csv.rs").as_deref(), Some("|rules::csv"));
        assert_eq!(module("rules/mod.rs").as_deref(), Some("|rules"));
        assert_eq!(module("a/b/mod.rs").as_deref(), Some("|a::b"));
        assert_eq!(module("bin/tool.rs").as_deref(), Some("bin/tool|"));
        assert_eq!(module("bin/tool/main.rs").as_deref(), Some("bin/tool|"));
        assert_eq!(module("bin/tool/part.rs").as_deref(), Some("bin/tool|part"));
        assert_eq!(module("notes.txt"), None);
    }

    /// A crate in a temporary directory, removed when dropped.
    struct TempCrate(PathBuf);

    impl TempCrate {
        fn new(files: &[(&str, &str)]) -> TempCrate {
            let unique = format!(
                "xtask-circles-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            )
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
            let root = std::env::temp_dir().join(unique);
            let _ = std::fs::remove_dir_all(&root);
            for (file, text) in files {
                let path = root.join("src").join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            TempCrate(root)
        }

        fn check(&self) -> Vec<String> {
            check_crate("demo-crate", &self.0.join("src"), Path::new("src")).unwrap()
        }
    }

    impl Drop for TempCrate {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn finds_the_circle_in_a_source_tree() {
        let tree = TempCrate::new(&[
            (
                "lib.rs",
                "mod rules;\nmod error;\npub use rules::csv::Plan;\n",
            ),
            ("error.rs", "pub struct Error;\n"),
            (
                "rules/mod.rs",
                "pub mod csv;\npub mod csv_export;\npub mod put;\npub(crate) fn shared() {}\n",
            ),
            (
                "rules/csv/mod.rs",
                "mod plan;\nuse super::shared;\nuse crate::error::Error;\n",
            ),
            // The circle: a child of csv uses csv_export, which uses csv.
            (
                "rules/csv/plan.rs",
                "// crate::rules::put would be a false edge here.\n\
                 use super::super::{csv_export::COLUMNS, shared};\n",
            ),
            (
                "rules/csv_export.rs",
                "pub const COLUMNS: u8 = 1;\n\nfn f() -> super::csv::Plan { todo!() }\n",
            ),
            // put uses csv only in its tests: no circle.
            (
                "rules/put.rs",
                "use super::csv;\n#[cfg(test)]\nmod tests {\n    use crate::rules::put;\n}\n",
            ),
            ("bin/tool.rs", "mod a;\nmod b;\n"),
            ("bin/tool/a.rs", "use crate::b::x;\n"),
            ("bin/tool/b.rs", "use super::a;\n"),
        ]);
        let messages = tree.check();
        assert_eq!(
            messages,
            [
                "demo-crate: rules::csv -> rules::csv_export -> rules::csv\n    \
                 rules::csv -> rules::csv_export: src/rules/csv/plan.rs:2 uses super::super::csv_export::COLUMNS\n    \
                 rules::csv_export -> rules::csv: src/rules/csv_export.rs:3 uses super::csv::Plan",
                "demo-crate (bin/tool): a -> b -> a\n    \
                 a -> b: src/bin/tool/a.rs:1 uses crate::b::x\n    \
                 b -> a: src/bin/tool/b.rs:1 uses super::a",
            ]
        );
    }

    #[test]
    fn test_code_and_parents_make_no_circle() {
        let tree = TempCrate::new(&[
            (
                "lib.rs",
                "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\nfn root_item() {}\n",
            ),
            (
                "a.rs",
                "use crate::b::B;\nuse crate::root_item;\npub struct A;\n",
            ),
            (
                "b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
            ),
            ("tests.rs", "use crate::a::A;\nuse crate::b::B;\n"),
            ("b/helpers.rs", "#![cfg(test)]\nuse crate::a::A;\n"),
        ]);
        assert_eq!(tree.check(), Vec::<String>::new());
    }

    #[test]
    fn a_missing_source_directory_is_an_error() {
        let missing = std::env::temp_dir().join("xtask-circles-no-such-directory");
        assert!(check_crate("x", &missing, Path::new("src")).is_err());
    }
}
