//! Links and SIP addresses: host names found in a text, and the meetings their links carry.

use super::{Hit, Kind, MeetingRules, Scan};

const SAFELINKS: &str = "safelinks.protection.outlook.com";

fn is_host_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'.' || c == b'-'
}

fn is_url_stop(c: u8) -> bool {
    c <= b' ' || c >= 0x7f || b"<>\"'`|\\^{}[]".contains(&c)
}

fn is_id(s: &str) -> bool {
    (1..=20).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit())
}

fn host_matches(host: &str, pattern: &str) -> bool {
    let p = pattern
        .trim()
        .trim_start_matches("*.")
        .trim_start_matches('.');
    let (h, p) = (host.as_bytes(), p.as_bytes());
    !p.is_empty()
        && (h.eq_ignore_ascii_case(p)
            || (h.len() > p.len()
                && h[h.len() - p.len() - 1] == b'.'
                && h[h.len() - p.len()..].eq_ignore_ascii_case(p)))
}

/// The kind of a host, and whether it matched as one of this platform's SIP domains.
fn classify(rules: &MeetingRules, host: &str) -> Option<(Kind, bool)> {
    let any = |list: &[String]| list.iter().any(|p| host_matches(host, p));
    [
        (&rules.hosts, Kind::Platform, false),
        (&rules.sip_domains, Kind::Platform, true),
        (&rules.teams_hosts, Kind::Teams, false),
        (&rules.zoom_hosts, Kind::Zoom, false),
        (&rules.webex_hosts, Kind::Webex, false),
        (&rules.meet_hosts, Kind::Meet, false),
    ]
    .into_iter()
    .find(|(list, _, _)| any(list))
    .map(|(_, kind, sip)| (kind, sip))
}

/// Finds host names (runs of letters, digits, dots and dashes) and reads the links and
/// addresses around them. `nested_at`: the position of the Safe Link being unwrapped.
pub(super) fn scan_hosts(
    text: &str,
    rules: &MeetingRules,
    nested_at: Option<usize>,
    out: &mut Scan,
) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !is_host_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_host_byte(b[i]) {
            i += 1;
        }
        let (mut s, mut e) = (start, i);
        while s < e && matches!(b[s], b'.' | b'-') {
            s += 1;
        }
        while e > s && matches!(b[e - 1], b'.' | b'-') {
            e -= 1;
        }
        let host = text[s..e].to_ascii_lowercase();
        if !host.contains('.') {
            continue;
        }
        let pos = nested_at.unwrap_or(s);
        let prev = start.checked_sub(1).map(|k| b[k]);
        if prev == Some(b'@') {
            address(text, start - 1, &host, rules, pos, out);
            continue;
        }
        let schemed = text[..start].ends_with("//");
        if !schemed
            && matches!(
                prev,
                Some(b'/' | b'%' | b'=' | b'&' | b'?' | b'#' | b'_' | b'~' | b':' | b'+' | b'\\')
            )
        {
            continue; // inside another link
        }
        let (rest_start, end) = url_rest(b, e);
        let rest = &text[rest_start..end];
        if nested_at.is_none() && schemed && host_matches(&host, SAFELINKS) {
            if let Some(target) = query_value(split_url(rest).1, "url") {
                scan_hosts(&percent_decode(target), rules, Some(s), out);
            }
            i = i.max(end);
            continue;
        }
        let Some((kind, _)) = classify(rules, &host) else {
            continue;
        };
        if kind != Kind::Meet {
            out.mentions.push((pos, kind));
        }
        if schemed || !rest.is_empty() {
            out.hits.push((pos, link_hit(kind, rest)));
            i = i.max(end);
        }
    }
}

/// The path, query and fragment after a host ending at `e` (empty when none follows), and
/// where the link ends.
fn url_rest(b: &[u8], e: usize) -> (usize, usize) {
    let mut j = e;
    if b.get(j) == Some(&b':') {
        let digits = b[j + 1..]
            .iter()
            .take(6)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits > 0 {
            j += 1 + digits;
        }
    }
    if !matches!(b.get(j), Some(b'/' | b'?' | b'#')) {
        return (j, j);
    }
    let mut k = j;
    while k < b.len() && !is_url_stop(b[k]) {
        k += 1;
    }
    while k > j && b".,;:!?)*".contains(&b[k - 1]) {
        k -= 1;
    }
    (j, k)
}

fn split_url(rest: &str) -> (&str, &str, &str) {
    let (before, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (path, query) = before.split_once('?').unwrap_or((before, ""));
    (path, query, fragment)
}

fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split(['&', ';']).find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k.eq_ignore_ascii_case(key) && !v.is_empty()).then_some(v)
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |k: usize| b.get(k).and_then(|c| char::from(*c).to_digit(16));
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if let (b'%', Some(hi), Some(lo)) = (b[i], hex(i + 1), hex(i + 2)) {
            out.extend(u8::try_from(hi * 16 + lo).ok());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn link_hit(kind: Kind, rest: &str) -> Hit {
    let (path, query, fragment) = split_url(rest);
    let found = match kind {
        Kind::Platform => platform_link(path, query, fragment),
        Kind::Teams => id_after(path, &["meet"]).map(|id| (id, query_value(query, "p"))),
        Kind::Zoom => id_after(path, &["j", "w", "s", "join", "wc"]).map(|id| (id, None)),
        Kind::Webex | Kind::Meet => None,
    };
    match found {
        Some((id, passcode)) => Hit::Meeting {
            kind,
            id: id.to_owned(),
            passcode: passcode.map(str::to_owned),
        },
        None => Hit::NoId(kind),
    }
}

/// A meeting id right after one of `prefixes` in a link's path.
fn id_after<'a>(path: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segments
        .windows(2)
        .find(|w| prefixes.iter().any(|p| w[0].eq_ignore_ascii_case(p)) && is_id(w[1]))
        .map(|w| w[1])
}

type IdAndPasscode<'a> = (&'a str, Option<&'a str>);

fn platform_link<'a>(
    path: &'a str,
    query: &'a str,
    fragment: &'a str,
) -> Option<IdAndPasscode<'a>> {
    let fragment = fragment.trim_start_matches('!');
    let in_fragment = || match fragment.starts_with('/') {
        true => path_id(fragment),
        false => query_id(fragment),
    };
    path_id(path)
        .or_else(|| query_id(query))
        .or_else(in_fragment)
}

fn path_id(path: &str) -> Option<IdAndPasscode<'_>> {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let id = segments.next().filter(|s| is_id(s))?;
    let passcode = segments.next().filter(|s| {
        s.bytes().all(|c| c.is_ascii_alphanumeric()) && s.bytes().any(|c| c.is_ascii_digit())
    });
    Some((id, passcode))
}

fn query_id(query: &str) -> Option<IdAndPasscode<'_>> {
    let value = |keys: &[&str]| keys.iter().find_map(|k| query_value(query, k));
    let id = value(&["meetingid", "meeting_id", "meeting", "id"]).filter(|v| is_id(v))?;
    Some((id, value(&["passcode", "pin", "pc"])))
}

/// `user@host`: a SIP address when the host is known (or `sip:` says so), else an e-mail.
fn address(text: &str, at: usize, host: &str, rules: &MeetingRules, pos: usize, out: &mut Scan) {
    let b = text.as_bytes();
    let is_user_byte = |c: u8| c.is_ascii_alphanumeric() || b"._-+*".contains(&c);
    let mut u = at;
    while u > 0 && at - u < 64 && is_user_byte(b[u - 1]) {
        u -= 1;
    }
    let user = (u == 0 || !is_user_byte(b[u - 1])).then(|| &text[u..at]);
    let sip = [&b"sip:"[..], b"sips:"]
        .iter()
        .any(|scheme| u >= scheme.len() && b[u - scheme.len()..u].eq_ignore_ascii_case(scheme));
    let kind = match classify(rules, host) {
        Some((Kind::Platform, false)) if !sip => {
            out.mentions.push((pos, Kind::Platform)); // an e-mail at the platform's web host
            return;
        }
        Some((Kind::Meet, _)) => return,
        Some((kind, _)) => kind,
        None => {
            if sip {
                out.hits.push((pos, Hit::ForeignSip(host.to_owned())));
            }
            return;
        }
    };
    out.mentions.push((pos, kind));
    match user.and_then(sip_user) {
        Some((id, passcode)) => {
            let (id, passcode) = (id.to_owned(), passcode.map(str::to_owned));
            out.hits.push((pos, Hit::Meeting { kind, id, passcode }));
        }
        None if sip => out.hits.push((pos, Hit::NoId(kind))),
        None => {}
    }
}

/// `<id>[.<passcode>]` or `<id>*<passcode>`.
fn sip_user(user: &str) -> Option<IdAndPasscode<'_>> {
    let (id, passcode) = match user.split_once(['.', '*']) {
        Some((id, passcode)) => (id, Some(passcode)),
        None => (user, None),
    };
    let passcode_ok =
        passcode.is_none_or(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_alphanumeric()));
    (is_id(id) && passcode_ok).then_some((id, passcode))
}
