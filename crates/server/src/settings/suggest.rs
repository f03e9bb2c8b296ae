//! What an unknown setting was probably meant to be.

use super::KNOWN;

/// The known key an unknown one was probably meant to be: the same key in another section,
/// a known key it begins, or the closest by edit distance (if close enough to be a typo).
pub fn nearest(key: &str) -> Option<&'static str> {
    let last = key.rsplit('.').next().unwrap_or(key);
    if let Some(known) = KNOWN
        .iter()
        .find(|known| known.rsplit('.').next() == Some(last))
    {
        return Some(known);
    }
    if key.len() >= 4
        && let Some(known) = KNOWN
            .iter()
            .filter(|known| known.starts_with(key))
            .min_by_key(|known| known.len())
    {
        return Some(known);
    }
    let (distance, known) = KNOWN
        .iter()
        .map(|known| (edit_distance(key, known), *known))
        .min()?;
    (distance <= (key.chars().count() / 3).max(2)).then_some(known)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbours (`servre` -> `server` is one edit) each cost one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the (a.len()+1) x (b.len()+1) table: two back, one back, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}
