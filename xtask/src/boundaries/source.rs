//! What one Rust source file refers to inside its crate: every path that starts with `crate::`,
//! `super::` or `self::` (in `use` trees, expanded, and in code), and the inline modules it
//! declares. A small tokenizer, not a parser: comments, strings and character literals are
//! skipped so that text in them is never taken for a path.
//!
//! Test code is left out: items under `#[cfg(test)]` (usually `mod tests`) reach into sibling
//! modules for fixtures, which is not a dependency of the crate's real code.

/// A path as written, e.g. `["super", "csv", "STANDARD_COLUMNS"]`, in module `from`.
#[derive(Debug, PartialEq)]
pub struct Reference {
    pub from: Vec<String>,
    pub written: Vec<String>,
    pub line: usize,
}

/// What [`scan`] finds; module paths are absolute (from the crate root).
#[derive(Debug, Default)]
pub struct Scan {
    pub references: Vec<Reference>,
    /// Modules declared inline (`mod name { ... }`).
    pub inline_modules: Vec<Vec<String>>,
    /// Modules in files of their own declared under `#[cfg(test)]` (`mod tests;`).
    pub test_modules: Vec<Vec<String>>,
}

/// Scans `source`, the file of module `module`.
pub fn scan(source: &str, module: &[String]) -> Scan {
    Walker {
        tokens: tokenize(source),
        at: 0,
        depth: 0,
        inline: Vec::new(),
        module: module.to_vec(),
        scan: Scan::default(),
    }
    .walk()
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

struct Spanned {
    token: Token,
    line: usize,
}

fn tokenize(source: &str) -> Vec<Spanned> {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => i = block_comment(&chars, i, &mut line),
            '"' => i = quoted(&chars, i, '"', &mut line),
            '\'' => {
                if at(i + 1) == '\\' {
                    i = quoted(&chars, i, '\'', &mut line);
                } else if at(i + 2) == '\'' {
                    i += 3;
                } else {
                    // A lifetime or a label: the quote, then an identifier.
                    i += 1;
                    while is_ident(at(i)) {
                        i += 1;
                    }
                }
            }
            c if c.is_ascii_digit() => {
                while is_ident(at(i)) || (at(i) == '.' && at(i + 1).is_ascii_digit()) {
                    i += 1;
                }
            }
            c if is_ident_start(c) => {
                let start = i;
                while is_ident(at(i)) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                match (word.as_str(), at(i)) {
                    // Raw strings: r"..", r#".."#, br"..", cr#".."#.
                    ("r" | "br" | "cr", '"') => i = raw_string(&chars, i, &mut line),
                    ("r" | "br" | "cr", '#') if at(i + 1) == '"' || at(i + 1) == '#' => {
                        i = raw_string(&chars, i, &mut line);
                    }
                    // A raw identifier: r#type.
                    ("r", '#') if is_ident_start(at(i + 1)) => {
                        let start = i + 1;
                        i += 1;
                        while is_ident(at(i)) {
                            i += 1;
                        }
                        tokens.push(Spanned {
                            token: Token::Ident(chars[start..i].iter().collect()),
                            line: start_line,
                        });
                    }
                    ("b" | "c", '"') => i = quoted(&chars, i, '"', &mut line),
                    ("b", '\'') => i = quoted(&chars, i, '\'', &mut line),
                    _ => tokens.push(Spanned {
                        token: Token::Ident(word),
                        line: start_line,
                    }),
                }
            }
            ':' if at(i + 1) == ':' => {
                tokens.push(Spanned {
                    token: Token::PathSep,
                    line,
                });
                i += 2;
            }
            c => {
                tokens.push(Spanned {
                    token: Token::Punct(c),
                    line,
                });
                i += 1;
            }
        }
    }
    tokens
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Past a (nested) `/* */` comment starting at `i`.
fn block_comment(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        match (chars[i], chars.get(i + 1)) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            (c, _) => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// Past a literal from the opening `quote` at or after `i` to its unescaped closing one.
fn quoted(chars: &[char], mut i: usize, quote: char, line: &mut usize) -> usize {
    while i < chars.len() && chars[i] != quote {
        i += 1;
    }
    i += 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote => return i + 1,
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// Past a raw string whose `#`s or opening quote are at `i`.
fn raw_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    i += 1; // the opening quote
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        if chars[i] == '\n' {
            *line += 1;
        }
        i += 1;
    }
    i
}

struct Walker {
    tokens: Vec<Spanned>,
    at: usize,
    /// `{` minus `}` so far.
    depth: usize,
    /// Inline modules we are in, with the depth outside their braces.
    inline: Vec<(String, usize)>,
    module: Vec<String>,
    scan: Scan,
}

impl Walker {
    fn token(&self, i: usize) -> Option<&Token> {
        self.tokens.get(i).map(|t| &t.token)
    }

    fn is(&self, i: usize, punct: char) -> bool {
        self.token(i) == Some(&Token::Punct(punct))
    }

    fn ident(&self, i: usize) -> Option<&str> {
        match self.token(i) {
            Some(Token::Ident(word)) => Some(word),
            _ => None,
        }
    }

    /// The module the walker is in: the file's, then the inline ones.
    fn current(&self) -> Vec<String> {
        let mut path = self.module.clone();
        path.extend(self.inline.iter().map(|(name, _)| name.clone()));
        path
    }

    fn walk(mut self) -> Scan {
        while self.at < self.tokens.len() {
            let i = self.at;
            match self.token(i) {
                Some(Token::Punct('#')) => self.attributes(),
                Some(Token::Punct('{')) => {
                    self.depth += 1;
                    self.at += 1;
                }
                Some(Token::Punct('}')) => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.inline.last().is_some_and(|(_, d)| *d == self.depth) {
                        self.inline.pop();
                    }
                    self.at += 1;
                }
                Some(Token::Ident(word)) if word == "mod" => {
                    if let Some(name) = self.ident(i + 1).map(str::to_owned)
                        && self.is(i + 2, '{')
                    {
                        self.inline.push((name, self.depth));
                        self.scan.inline_modules.push(self.current());
                    }
                    self.at += 1;
                }
                Some(Token::Ident(word))
                    if matches!(word.as_str(), "crate" | "super" | "self")
                        && self.token(i + 1) == Some(&Token::PathSep)
                        && (i == 0 || self.token(i - 1) != Some(&Token::PathSep)) =>
                {
                    let line = self.tokens[i].line;
                    let mut paths = Vec::new();
                    self.at = self.tree(i, Vec::new(), &mut paths);
                    let from = self.current();
                    self.scan
                        .references
                        .extend(paths.into_iter().map(|written| Reference {
                            from: from.clone(),
                            written,
                            line,
                        }));
                }
                _ => self.at += 1,
            }
        }
        self.scan
    }

    /// One path tree from `i` (`a::b`, `a::{b, c::*}`, `a::b as c`), each leaf a path of
    /// `prefix`; returns where the tree ends.
    fn tree(&self, mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        loop {
            match self.token(i) {
                Some(Token::Ident(word)) => {
                    prefix.push(word.clone());
                    i += 1;
                    if self.token(i) == Some(&Token::PathSep) {
                        i += 1;
                        continue;
                    }
                    out.push(prefix);
                    return i;
                }
                Some(Token::Punct('{')) => {
                    i += 1;
                    loop {
                        match self.token(i) {
                            Some(Token::Punct('}')) => return i + 1,
                            Some(Token::Punct(',')) => i += 1,
                            Some(Token::Ident(word)) if word == "as" => i += 2,
                            Some(Token::Ident(_) | Token::Punct('{' | '*')) => {
                                i = self.tree(i, prefix.clone(), out);
                            }
                            // Not a use tree after all: give up on it.
                            _ => return i,
                        }
                    }
                }
                // `a::*`, or `a::<T>` in code: the path so far.
                _ => {
                    if self.is(i, '*') {
                        i += 1;
                    }
                    out.push(prefix);
                    return i;
                }
            }
        }
    }

    /// `#[...]` or `#![...]` at `self.at`; under `cfg(test)` the item it applies to is skipped.
    fn attributes(&mut self) {
        let inner = self.is(self.at + 1, '!');
        let open = self.at + if inner { 2 } else { 1 };
        if !self.is(open, '[') {
            self.at += 1;
            return;
        }
        let close = self.closing(open);
        let body: Vec<&Token> = (open + 1..close).filter_map(|i| self.token(i)).collect();
        let cfg_test = body
            == [
                &Token::Ident("cfg".into()),
                &Token::Punct('('),
                &Token::Ident("test".into()),
                &Token::Punct(')'),
            ];
        self.at = close + 1;
        if !cfg_test {
            return;
        }
        if inner {
            // The enclosing module is test code: on to its closing brace, or the file's end.
            self.at = match self.inline.last() {
                None => self.tokens.len(),
                Some(&(_, outside)) => self.block_end(self.at, outside),
            };
            return;
        }
        self.skip_item();
    }

    /// Skips the item at `self.at` (after any further attributes), noting `mod name;`.
    fn skip_item(&mut self) {
        while self.is(self.at, '#') {
            let open = self.at + 1;
            if !self.is(open, '[') {
                break;
            }
            self.at = self.closing(open) + 1;
        }
        // `[pub[(..)]] mod name;`: a test module in a file of its own.
        let mut i = self.at;
        if self.ident(i) == Some("pub") {
            i += 1;
            if self.is(i, '(') {
                i = self.closing(i) + 1;
            }
        }
        if self.ident(i) == Some("mod")
            && let Some(name) = self.ident(i + 1)
            && self.is(i + 2, ';')
        {
            let mut module = self.current();
            module.push(name.to_owned());
            self.scan.test_modules.push(module);
        }
        // To `;` or past the `{ }` at this level; never past the end of the enclosing block.
        let mut level = 0usize;
        while let Some(token) = self.token(self.at) {
            match token {
                Token::Punct('(' | '[' | '{') => level += 1,
                Token::Punct(')' | ']' | '}') => {
                    if level == 0 {
                        return;
                    }
                    level -= 1;
                    if level == 0 && self.is(self.at, '}') {
                        self.at += 1;
                        return;
                    }
                }
                Token::Punct(';') if level == 0 => {
                    self.at += 1;
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// The index of the `}` from `i` on that brings the depth back to `outside` (or the end).
    fn block_end(&self, mut i: usize, outside: usize) -> usize {
        let mut depth = self.depth;
        while let Some(token) = self.token(i) {
            match token {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == outside {
                        return i;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        i
    }

    /// The index of the bracket closing the one at `open` (or the end).
    fn closing(&self, open: usize) -> usize {
        let mut level = 0usize;
        let mut i = open;
        while let Some(token) = self.token(i) {
            match token {
                Token::Punct('(' | '[' | '{') => level += 1,
                Token::Punct(')' | ']' | '}') => {
                    level = level.saturating_sub(1);
                    if level == 0 {
                        return i;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(source: &str) -> Vec<String> {
        scan(source, &["m".to_owned()])
            .references
            .iter()
            .map(|r| format!("{}: {}", r.from.join("::"), r.written.join("::")))
            .collect()
    }

    #[test]
    fn expands_use_trees() {
        let source = "use super::{csv_export, dial_style as ds, inner::{self, x::*}};\n\
                      use crate::error::{Error, ErrorKind};\nuse std::fmt;\n";
        assert_eq!(
            paths(source),
            [
                "m: super::csv_export",
                "m: super::dial_style",
                "m: super::inner::self",
                "m: super::inner::x",
                "m: crate::error::Error",
                "m: crate::error::ErrorKind",
            ]
        );
    }

    #[test]
    fn finds_paths_in_code_but_not_in_comments_or_literals() {
        let source = r####"
            //! See [`crate::doc_link`] and super::in_a_comment.
            /* crate::block /* nested crate::x */ crate::still_comment */
            pub(crate) fn f<'a>(x: &'a str) -> crate::types::T<'a> {
                let _ = "crate::in_a_string \" super::x";
                let _ = r#"crate::raw "quoted" super::y"#;
                let _ = b"self::bytes";
                let _ = ('"', '\'', 'x', b'"');
                let _ = crate::calls::f::<u8>(super::super::up::Z);
                let _ = 'label: loop { break 'label; };
                $crate::macros::m!();
                self::local::g();
                a::crate_not_first::x();
            }
        "####;
        assert_eq!(
            paths(source),
            [
                "m: crate::types::T",
                "m: crate::calls::f",
                "m: super::super::up::Z",
                "m: crate::macros::m",
                "m: self::local::g",
            ]
        );
    }

    #[test]
    fn tracks_inline_modules_and_lines() {
        let source = "mod a {\n    mod b {\n        use super::x;\n    }\n    use crate::y;\n}\nuse crate::z;\n";
        let found = scan(source, &["m".to_owned()]);
        let seen: Vec<(String, String, usize)> = found
            .references
            .iter()
            .map(|r| (r.from.join("::"), r.written.join("::"), r.line))
            .collect();
        assert_eq!(
            seen,
            [
                ("m::a::b".to_owned(), "super::x".to_owned(), 3),
                ("m::a".to_owned(), "crate::y".to_owned(), 5),
                ("m".to_owned(), "crate::z".to_owned(), 7),
            ]
        );
        assert_eq!(found.inline_modules, [vec!["m", "a"], vec!["m", "a", "b"]]);
    }

    #[test]
    fn leaves_out_test_code() {
        let source = "use crate::kept;\n\
            #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::fixture::{a, b};\n    fn f() { crate::x::y(); }\n}\n\
            #[cfg(test)]\n#[allow(dead_code)]\nuse crate::test_only_import;\n\
            #[cfg(test)]\npub(crate) mod helpers;\n\
            #[cfg(not(test))]\nuse crate::not_test;\n\
            struct S {\n    #[cfg(test)]\n    field: crate::skipped::T,\n}\n\
            use crate::after;\n";
        let found = scan(source, &[]);
        let written: Vec<String> = found
            .references
            .iter()
            .map(|r| r.written.join("::"))
            .collect();
        assert_eq!(written, ["crate::kept", "crate::not_test", "crate::after"]);
        assert_eq!(found.test_modules, [vec!["helpers".to_owned()]]);
    }

    #[test]
    fn a_file_marked_as_test_code_refers_to_nothing() {
        let found = scan(
            "#![cfg(test)]\nuse crate::a;\nfn f() { super::b(); }\n",
            &[],
        );
        assert!(found.references.is_empty());
        let found = scan(
            "mod t {\n#![cfg(test)]\nuse crate::a;\n}\nuse crate::b;\n",
            &[],
        );
        let written: Vec<String> = found
            .references
            .iter()
            .map(|r| r.written.join("::"))
            .collect();
        assert_eq!(written, ["crate::b"]);
    }

    #[test]
    fn unfinished_source_is_no_panic() {
        for source in [
            "use crate::{a, b",
            "use crate::",
            "\"open string",
            "r#\"open raw",
            "/* open comment",
            "#[cfg(test)]",
            "#[cfg(test)] mod",
            "#![cfg(test)",
            "'",
            "mod a {",
            "}}} use super::x;",
        ] {
            let _ = scan(source, &[]);
        }
        assert_eq!(paths("}}} use super::x;"), ["m: super::x"]);
    }
}
