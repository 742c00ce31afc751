//! The core's layering, checked from its source: no module imports one it must sit
//! below, no `impl World` lives outside `sim/`, and the scenario build is a pipeline of
//! short stages. Run with `cargo test --test layering`.
//!
//! Arrows are read from `crate::…` and `super::…` paths in code (comments are skipped),
//! including grouped imports (`use crate::{net::link::Link, tcp::TcpIo};`), and named by
//! the top-level module on each end (`net/link.rs` is in `net`).

use std::path::{Path, PathBuf};

/// Arrows that must not exist: (from, to) top-level modules.
const FORBIDDEN: &[(&str, &str)] = &[
    // The network carries packets; TCP is an endpoint on top of it, the simulation and
    // its recorders drive and watch it from above (through `net::datapath::LinkEnv`).
    ("net", "tcp"),
    ("net", "sim"),
    ("net", "trace"),
    // Recorders read the network through `trace::View`, never the simulation.
    ("trace", "sim"),
    // The flows sit below both the simulation that runs them and the recorders.
    ("flow", "sim"),
    ("flow", "trace"),
    // Controllers retune congestion controls; the algorithms know nothing of them.
    ("cc", "control"),
];

/// Forbidden arrows that still exist, each with where it goes away. An entry here is
/// reported, not failed; delete it to enforce the arrow.
const KNOWN_EXCEPTIONS: &[(&str, &str)] = &[];

/// The longest function allowed in the scenario build (`sim/build*`), in lines from
/// `fn` to its closing brace.
const MAX_BUILD_FN_LINES: usize = 80;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file: `net/link.rs` is `["net", "link"]`, `net/mod.rs`
/// is `["net"]`, `lib.rs` is `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// Code of a line without its `//` comment (good enough: no `//` in our string literals
/// that precede a path).
fn code_of(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Top-level modules a line of code names through `crate::` or `super::` paths.
fn referenced_modules(code: &str, module: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..].iter().collect();
        let boundary = i == 0 || !is_ident_char(bytes[i - 1]);
        let (mut base, mut len) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut m = module.to_vec();
            let mut len = 0;
            while rest[len..].starts_with("super::") {
                m.pop();
                len += "super::".len();
            }
            (m, len)
        } else {
            i += 1;
            continue;
        };
        let after: String = bytes[i + len..].iter().collect();
        if after.starts_with('{') {
            // A grouped import: every item at the group's top level.
            let mut depth = 0;
            let mut item = String::new();
            for c in after.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        push_first(&mut out, &base, &item);
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 1 {
                    item.push(c);
                }
            }
            push_first(&mut out, &base, &item);
        } else {
            let ident: String = after.chars().take_while(|&c| is_ident_char(c)).collect();
            if !ident.is_empty() {
                base.push(ident);
            }
            if let Some(top) = base.first() {
                out.push(top.clone());
            }
        }
        len += 1;
        i += len;
    }
    out
}

fn push_first(out: &mut Vec<String>, base: &[String], item: &str) {
    let ident: String = item
        .trim()
        .chars()
        .take_while(|&c| is_ident_char(c))
        .collect();
    let top = base
        .first()
        .cloned()
        .or(Some(ident).filter(|s| !s.is_empty()));
    if let Some(t) = top {
        out.push(t);
    }
}

/// Every (from, to, file:line) arrow between different top-level modules.
fn arrows() -> Vec<(String, String, String)> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src");
        let module = module_path(rel);
        let Some(from) = module.first().cloned() else {
            continue;
        };
        let text = std::fs::read_to_string(&f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            for to in referenced_modules(code_of(line), &module) {
                if to != from {
                    let at = format!("{}:{}", rel.display(), n + 1);
                    out.push((from.clone(), to, at));
                }
            }
        }
    }
    out
}

#[test]
fn no_forbidden_arrows() {
    let all = arrows();
    assert!(
        all.iter().any(|(f, t, _)| f == "sim" && t == "net"),
        "the scan finds no sim -> net arrow: it is broken"
    );
    let mut bad = Vec::new();
    for &(from, to) in FORBIDDEN {
        let hits: Vec<&String> = all
            .iter()
            .filter(|(f, t, _)| f == from && t == to)
            .map(|(_, _, at)| at)
            .collect();
        if hits.is_empty() {
            continue;
        }
        if KNOWN_EXCEPTIONS.contains(&(from, to)) {
            eprintln!("known exception {from} -> {to}: {hits:?}");
        } else {
            bad.push(format!("{from} -> {to} at {hits:?}"));
        }
    }
    assert!(bad.is_empty(), "forbidden arrows:\n{}", bad.join("\n"));
}

#[test]
fn the_scan_reads_grouped_and_relative_paths() {
    let m = vec!["trace".to_owned(), "series".to_owned()];
    let got = referenced_modules("use crate::{net::link::Link, tcp::TcpIo};", &m);
    assert_eq!(got, ["net", "tcp"]);
    assert_eq!(
        referenced_modules("use super::super::sim::World;", &m),
        ["sim"]
    );
    assert_eq!(referenced_modules("use super::View;", &m), ["trace"]);
    assert_eq!(
        referenced_modules("let x = crate::sim::run(sc);", &m),
        ["sim"]
    );
    assert!(referenced_modules("my_crate::sim", &m).is_empty());
}

#[test]
fn no_impl_world_outside_sim() {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src");
        if rel.starts_with("sim") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            if code_of(line).trim_start().starts_with("impl World") {
                bad.push(format!("{}:{}", rel.display(), n + 1));
            }
        }
    }
    assert!(bad.is_empty(), "impl World outside sim/: {bad:?}");
}

/// `(name, first line, lines)` of every function with a body in `text`: from the `fn`
/// line to the first line after it that is `}` at the same indentation.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = code_of(line);
        let trimmed = code.trim_start();
        let indent = &code[..code.len() - trimmed.len()];
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let head = &trimmed[..at];
        let is_fn = head
            .split_whitespace()
            .all(|w| w.starts_with("pub") || ["const", "async", "unsafe", "extern"].contains(&w));
        if !is_fn || code.trim_end().ends_with(';') {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|&c| is_ident_char(c))
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = (i..lines.len()).find(|&j| code_of(lines[j]).trim_end() == close) {
            out.push((name, i + 1, end - i + 1));
        } else if code.trim_end().ends_with('}') {
            out.push((name, i + 1, 1));
        }
    }
    out
}

#[test]
fn build_stages_are_short() {
    let sim = src_dir().join("sim");
    let mut files = Vec::new();
    rust_files(&sim, &mut files);
    files.retain(|f| {
        let rel = f.strip_prefix(&sim).expect("under sim");
        rel.starts_with("build") || rel == Path::new("build.rs")
    });
    assert!(!files.is_empty(), "no sim/build* sources found");
    let mut long = Vec::new();
    let mut counted = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read source");
        for (name, line, n) in function_lengths(&text) {
            counted += 1;
            if n > MAX_BUILD_FN_LINES {
                long.push(format!("{}:{line} fn {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(
        counted > 5,
        "found only {counted} functions: the scan is broken"
    );
    assert!(
        long.is_empty(),
        "functions over {MAX_BUILD_FN_LINES} lines in sim/build*:\n{}",
        long.join("\n")
    );
}

#[test]
fn function_lengths_count_to_the_closing_brace() {
    let text = "fn a() {\n    x;\n}\n\n    pub(crate) fn b(\n        y: u32,\n    ) -> u32 {\n        y\n    }\nfn c();\n";
    assert_eq!(
        function_lengths(text),
        [("a".to_owned(), 1, 3), ("b".to_owned(), 5, 5)]
    );
}
