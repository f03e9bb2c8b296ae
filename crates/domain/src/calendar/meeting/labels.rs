//! Labelled values of invitation texts: "Meeting ID: 123 456 789", "Passcode: 4321".

use super::{IdLabel, Passcode, Scan};

const ID_LABELS: &[&str] = &["meeting id", "meeting number", "access code", "webinar id"];
const PASSCODE_LABELS: &[&str] = &["passcode", "password"];
const NOT_PARTICIPANTS: &[&str] = &[
    "moderator",
    "host",
    "leader",
    "chairperson",
    "organizer",
    "presenter",
    "panelist",
];
const NOT_PASSCODES: &[&str] = &[
    "none", "no", "not", "na", "null", "nil", "optional", "required",
];

enum Label {
    Id(String),
    Passcode(Passcode),
}

pub(super) fn scan_labels(text: &str, out: &mut Scan) {
    let low = text.to_ascii_lowercase();
    let b = low.as_bytes();
    let mut labels: Vec<(usize, Label)> = Vec::new();
    for name in ID_LABELS {
        for (pos, _) in low.match_indices(name) {
            let end = pos + name.len();
            if !at_word(b, pos, name.len()) {
                continue;
            }
            if let Some(id) = value_start(b, end).and_then(|(j, _)| digit_groups(b, j)) {
                labels.push((pos, Label::Id(id)));
            }
        }
    }
    for name in PASSCODE_LABELS {
        for (pos, _) in low.match_indices(name) {
            let end = pos + name.len();
            let word = prev_word(b, pos);
            if !at_word(b, pos, name.len()) || NOT_PARTICIPANTS.iter().any(|w| w.as_bytes() == word)
            {
                continue;
            }
            let Some((j, own_line)) = value_start(b, end) else {
                continue;
            };
            if !colon_before(b, end, j) {
                continue;
            }
            if let Some(p) = passcode_value(text, j, own_line) {
                labels.push((pos, Label::Passcode(p)));
            }
        }
    }
    labels.sort_by_key(|(pos, _)| *pos);
    for (pos, label) in labels {
        match (label, out.ids.last_mut()) {
            (Label::Id(id), _) => out.ids.push(IdLabel {
                pos,
                id,
                passcodes: Vec::new(),
            }),
            (Label::Passcode(p), Some(last)) => last.passcodes.push(p),
            (Label::Passcode(p), None) => out.loose.push(p),
        }
    }
}

fn at_word(b: &[u8], pos: usize, len: usize) -> bool {
    let before = pos.checked_sub(1).map(|k| b[k]);
    !before.is_some_and(|c| c.is_ascii_alphanumeric())
        && !b.get(pos + len).is_some_and(|c| c.is_ascii_alphanumeric())
}

/// The word before `pos` on its line (letters only).
fn prev_word(b: &[u8], pos: usize) -> &[u8] {
    let mut e = pos;
    while e > 0 && matches!(b[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    let mut s = e;
    while s > 0 && b[s - 1].is_ascii_alphabetic() {
        s -= 1;
    }
    &b[s..e]
}

fn skip_blanks(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    j
}

/// Where a label's value starts, after an optional `(…)` and `:`; `true` when it is on the
/// next line (allowed after a `:` only).
fn value_start(b: &[u8], j: usize) -> Option<(usize, bool)> {
    let mut j = skip_blanks(b, j);
    if b.get(j) == Some(&b'(') {
        let close = b[j..]
            .iter()
            .take(48)
            .position(|c| matches!(c, b')' | b'\n'))?;
        if b[j + close] != b')' {
            return None;
        }
        j = skip_blanks(b, j + close + 1);
    }
    if b.get(j) != Some(&b':') {
        return Some((j, false));
    }
    let j = skip_blanks(b, j + 1);
    match b.get(j) {
        Some(b'\n') => Some((skip_blanks(b, j + 1), true)),
        _ => Some((j, false)),
    }
}

/// Whether a `:` lies between a label's end and its value.
fn colon_before(b: &[u8], label_end: usize, value: usize) -> bool {
    b.get(label_end..value)
        .is_some_and(|gap| gap.contains(&b':'))
}

/// 1 to 20 digits in groups split by up to two spaces, tabs or dashes.
fn digit_groups(b: &[u8], mut j: usize) -> Option<String> {
    let mut id = String::new();
    loop {
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == start || id.len() + (j - start) > 20 {
            return None;
        }
        id.extend(b[start..j].iter().map(|c| char::from(*c)));
        let gap = b[j..]
            .iter()
            .take(2)
            .take_while(|c| matches!(c, b' ' | b'\t' | b'-'))
            .count();
        if gap == 0 || !b.get(j + gap).is_some_and(u8::is_ascii_digit) {
            break;
        }
        j += gap;
    }
    (!b.get(j).is_some_and(u8::is_ascii_alphanumeric)).then_some(id)
}

fn passcode_value(text: &str, j: usize, own_line: bool) -> Option<Passcode> {
    let b = text.as_bytes();
    let mut k = j;
    while k < b.len() && !b[k].is_ascii_whitespace() {
        if k - j >= 64 {
            return None;
        }
        k += 1;
    }
    let mut e = k;
    while e > j && b".,;)]#\"'".contains(&b[e - 1]) {
        e -= 1;
    }
    let after = skip_blanks(b, k);
    if e == j || (own_line && !matches!(b.get(after), None | Some(b'\n'))) {
        return None;
    }
    let token = &text[j..e];
    let usable = (1..=32).contains(&token.len())
        && token.bytes().all(|c| c.is_ascii_alphanumeric())
        && !NOT_PASSCODES.iter().any(|w| token.eq_ignore_ascii_case(w));
    let value = usable.then(|| token.to_owned());
    let alternative = match b.get(after) {
        Some(b'(') => {
            let digits = b[after + 1..]
                .iter()
                .take(33)
                .take_while(|c| c.is_ascii_digit())
                .count();
            let ends = matches!(b.get(after + 1 + digits), Some(b' ' | b')'));
            (digits > 0 && digits <= 32 && ends)
                .then(|| text[after + 1..after + 1 + digits].to_owned())
        }
        _ => None,
    };
    let numeric = alternative.or_else(|| {
        value
            .clone()
            .filter(|v| v.bytes().all(|c| c.is_ascii_digit()))
    });
    (value.is_some() || numeric.is_some()).then_some(Passcode { value, numeric })
}
