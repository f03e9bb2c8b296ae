//! The answer of `GET /api/endpoints`, kept serialized per enterprise and served while the
//! store's list version is unchanged (docs/adr/0003-endpoint-list-cache.md).
//!
//! A cached list is labelled with the version read *before* its rows, and kept only if the
//! version read *after* them is the same: no endpoint write committed in between, so the bytes
//! are exactly the list at that version. Serving it needs the current version, one primary-key
//! read, on every request; a write through any instance changes the version in its own
//! transaction, so no instance can serve a list older than the last committed write.
//!
//! An enterprise too long to keep whole keeps single endpoints instead, each labelled with the
//! version read before its row: the row is at least as new as that version, and is served
//! only to requests that read the same version, so none gets one older than its version says.

use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Enterprises with more endpoints than this are streamed page by page, never cached.
pub const MAX_CACHED_ENDPOINTS: usize = 5_000;

/// Bytes of serialized lists kept across all enterprises by default.
pub const DEFAULT_LIST_CACHE_BYTES: usize = 64 << 20;

/// One enterprise's whole list as a JSON array, with where each endpoint's object lies in it.
pub struct CachedList {
    version: u64,
    json: Vec<u8>,
    rows: HashMap<EndpointId, Range<usize>>,
}

impl CachedList {
    /// One endpoint alone, read after `version` was: its JSON object, not an array.
    pub fn one(version: u64, endpoint: &Endpoint) -> Result<CachedList> {
        let json = serde_json::to_vec(endpoint)
            .map_err(|e| Error::internal(format!("endpoint serialization: {e}")))?;
        let rows = HashMap::from([(endpoint.id().clone(), 0..json.len())]);
        Ok(CachedList {
            version,
            json,
            rows,
        })
    }

    /// The list's bytes: `[{...},{...}]` (a single endpoint's: `{...}`).
    pub fn json(&self) -> &[u8] {
        &self.json
    }

    /// Where endpoint `id`'s JSON object lies in [`CachedList::json`]; `None` if it is not in
    /// the list.
    pub fn row(&self, id: &EndpointId) -> Option<Range<usize>> {
        self.rows.get(id).cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Memory held, for the cache's budget.
    fn weight(&self) -> usize {
        self.json.capacity()
            + self.rows.capacity() * (std::mem::size_of::<(EndpointId, Range<usize>)>() + 24)
    }
}

/// A list being serialized, page by page.
pub struct ListBuilder {
    version: u64,
    json: Vec<u8>,
    rows: HashMap<EndpointId, Range<usize>>,
}

impl ListBuilder {
    /// For the list at `version` (read before the first page).
    pub fn new(version: u64) -> Self {
        ListBuilder {
            version,
            json: b"[".to_vec(),
            rows: HashMap::new(),
        }
    }

    /// Appends the next endpoints, in list order.
    pub fn push(&mut self, endpoints: &[Endpoint]) -> Result<()> {
        self.json.reserve(endpoints.len() * 640);
        for e in endpoints {
            if !self.rows.is_empty() {
                self.json.push(b',');
            }
            let start = self.json.len();
            serde_json::to_writer(&mut self.json, e)
                .map_err(|e| Error::internal(format!("endpoint serialization: {e}")))?;
            self.rows.insert(e.id().clone(), start..self.json.len());
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The complete list.
    pub fn finish(mut self) -> CachedList {
        self.json.push(b']');
        self.json.shrink_to_fit();
        CachedList {
            version: self.version,
            json: self.json,
            rows: self.rows,
        }
    }

    /// The array opened and the endpoints so far, for a list too long to keep that goes on
    /// streaming: `[{...},{...}`, no closing bracket.
    pub fn into_head(self) -> Vec<u8> {
        self.json
    }
}

struct Entry {
    list: Arc<CachedList>,
    /// When it was stored, in puts: the oldest goes first when the budget is spent.
    stored: u64,
}

/// Single endpoints of an enterprise too long to keep whole, all at one version.
struct RowSet {
    version: u64,
    rows: HashMap<EndpointId, Arc<CachedList>>,
    bytes: usize,
    /// When it was started, in puts: the oldest goes first when the budget is spent.
    stored: u64,
}

#[derive(Default)]
struct Entries {
    by_enterprise: HashMap<EnterpriseId, Entry>,
    rows: HashMap<EnterpriseId, RowSet>,
    bytes: usize,
    puts: u64,
}

impl Entries {
    /// Drops the oldest lists and row sets until `weight` more bytes fit in `budget`.
    fn make_room(&mut self, weight: usize, budget: usize) {
        while self.bytes + weight > budget {
            let oldest_list = self
                .by_enterprise
                .iter()
                .min_by_key(|(_, e)| e.stored)
                .map(|(id, e)| (e.stored, id.clone()));
            let oldest_rows = self
                .rows
                .iter()
                .min_by_key(|(_, r)| r.stored)
                .map(|(id, r)| (r.stored, id.clone()));
            match (oldest_list, oldest_rows) {
                (Some((l, id)), rows) if rows.as_ref().is_none_or(|(r, _)| l < *r) => {
                    if let Some(gone) = self.by_enterprise.remove(&id) {
                        self.bytes -= gone.list.weight();
                    }
                }
                (_, Some((_, id))) => {
                    if let Some(gone) = self.rows.remove(&id) {
                        self.bytes -= gone.bytes;
                    }
                }
                (_, None) => break,
            }
        }
    }
}

/// Lists being built for `GET` of one endpoint, and lists found too long to keep.
#[derive(Default)]
struct Builds {
    running: HashSet<EnterpriseId>,
    too_long: HashSet<EnterpriseId>,
}

/// The cached lists of every enterprise, within a budget of bytes.
pub struct EndpointLists {
    entries: Mutex<Entries>,
    builds: Mutex<Builds>,
    budget: usize,
}

/// The right to build one enterprise's list for a `GET` of one of its endpoints; given up when
/// dropped.
pub struct BuildTurn<'a> {
    lists: &'a EndpointLists,
    enterprise: EnterpriseId,
}

impl Drop for BuildTurn<'_> {
    fn drop(&mut self) {
        if let Ok(mut builds) = self.lists.builds.lock() {
            builds.running.remove(&self.enterprise);
        }
    }
}

impl Default for EndpointLists {
    fn default() -> Self {
        EndpointLists::with_budget(DEFAULT_LIST_CACHE_BYTES)
    }
}

impl EndpointLists {
    /// Keeps at most `budget` bytes of lists (0 keeps none).
    pub fn with_budget(budget: usize) -> Self {
        EndpointLists {
            entries: Mutex::default(),
            builds: Mutex::default(),
            budget,
        }
    }

    /// The enterprise's list if the cached one is at `version`.
    pub fn get(&self, enterprise: &EnterpriseId, version: u64) -> Option<Arc<CachedList>> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.by_enterprise.get(enterprise)?;
        (entry.list.version == version).then(|| entry.list.clone())
    }

    /// Whether a `GET` of one endpoint, finding no current list, should build it: when nobody
    /// builds it already (the others read their row meanwhile), the cache is on, and the last
    /// build was not too long to keep. A list is only ever built by one such request at a time.
    pub fn start_build(&self, enterprise: &EnterpriseId) -> Option<BuildTurn<'_>> {
        if self.budget == 0 {
            return None;
        }
        let mut builds = self.builds.lock().ok()?;
        if builds.too_long.contains(enterprise) || !builds.running.insert(enterprise.clone()) {
            return None;
        }
        Some(BuildTurn {
            lists: self,
            enterprise: enterprise.clone(),
        })
    }

    /// The enterprise's list was too long to keep (more than [`MAX_CACHED_ENDPOINTS`], or over
    /// the budget): `GET` of one endpoint stops building it until a list of it fits again.
    pub fn note_too_long(&self, enterprise: &EnterpriseId) {
        if let Ok(mut builds) = self.builds.lock() {
            builds.too_long.insert(enterprise.clone());
        }
    }

    /// Keeps `list` (built at a version confirmed unchanged after its rows were read),
    /// replacing the enterprise's previous one; the oldest lists go when the budget is spent.
    pub fn put(&self, enterprise: &EnterpriseId, list: Arc<CachedList>) {
        let weight = list.weight();
        if weight > self.budget {
            self.note_too_long(enterprise);
            return;
        }
        if let Ok(mut builds) = self.builds.lock() {
            builds.too_long.remove(enterprise);
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let entries = &mut *entries;
        if let Some(old) = entries.by_enterprise.remove(enterprise) {
            entries.bytes -= old.list.weight();
        }
        // The whole list holds every row: single ones of the enterprise are no longer needed.
        if let Some(old) = entries.rows.remove(enterprise) {
            entries.bytes -= old.bytes;
        }
        entries.make_room(weight, self.budget);
        entries.puts += 1;
        entries.bytes += weight;
        let stored = entries.puts;
        entries
            .by_enterprise
            .insert(enterprise.clone(), Entry { list, stored });
    }

    /// Whether single endpoints of the enterprise are kept: its list is too long to keep
    /// whole, and the cache is on.
    pub fn keeps_rows(&self, enterprise: &EnterpriseId) -> bool {
        self.budget > 0
            && self
                .builds
                .lock()
                .is_ok_and(|b| b.too_long.contains(enterprise))
    }

    /// Endpoint `id` of the enterprise, if it was kept at `version`.
    pub fn row(
        &self,
        enterprise: &EnterpriseId,
        version: u64,
        id: &EndpointId,
    ) -> Option<Arc<CachedList>> {
        let entries = self.entries.lock().ok()?;
        let set = entries.rows.get(enterprise)?;
        (set.version == version)
            .then(|| set.rows.get(id).cloned())
            .flatten()
    }

    /// Keeps one endpoint (from [`CachedList::one`]) of the enterprise. A newer version than
    /// the kept rows' drops them all: any of them may have changed since.
    pub fn put_row(&self, enterprise: &EnterpriseId, id: &EndpointId, row: Arc<CachedList>) {
        let weight = row.weight();
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let entries = &mut *entries;
        match entries.rows.get(enterprise) {
            Some(set) if set.version > row.version => return,
            Some(set) if set.version < row.version => {
                let bytes = set.bytes;
                entries.rows.remove(enterprise);
                entries.bytes -= bytes;
            }
            _ => {}
        }
        entries.make_room(weight, self.budget);
        if entries.bytes + weight > self.budget {
            return;
        }
        entries.puts += 1;
        let stored = entries.puts;
        let set = entries
            .rows
            .entry(enterprise.clone())
            .or_insert_with(|| RowSet {
                version: row.version,
                rows: HashMap::new(),
                bytes: 0,
                stored,
            });
        if let Some(old) = set.rows.insert(id.clone(), row) {
            set.bytes -= old.weight();
            entries.bytes -= old.weight();
        }
        set.bytes += weight;
        entries.bytes += weight;
    }

    /// Bytes held now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::endpoint::Endpoint;
    use roomlink_domain::rules::put;

    fn endpoint(ent: &EnterpriseId, n: usize) -> Endpoint {
        let body = serde_json::json!({ "name": format!("room {n}") });
        let draft = put::insert(body.as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted(format!("{n:024}")),
            ent.clone(),
            draft.profile,
            None,
        )
        .unwrap()
    }

    fn list(ent: &EnterpriseId, version: u64, n: usize) -> (Vec<Endpoint>, CachedList) {
        let endpoints: Vec<Endpoint> = (0..n).map(|i| endpoint(ent, i)).collect();
        let mut b = ListBuilder::new(version);
        for page in endpoints.chunks(2) {
            b.push(page).unwrap();
        }
        (endpoints, b.finish())
    }

    #[test]
    fn the_bytes_are_the_serialized_list_and_each_row_is_found_in_them() {
        let ent = EnterpriseId::from_trusted("e".into());
        let (endpoints, cached) = list(&ent, 7, 5);
        assert_eq!(cached.json(), serde_json::to_vec(&endpoints).unwrap());
        for e in &endpoints {
            let range = cached.row(e.id()).unwrap();
            assert_eq!(&cached.json()[range], serde_json::to_vec(e).unwrap());
        }
        let (_, empty) = list(&ent, 1, 0);
        assert_eq!(empty.json(), b"[]");
        assert!(empty.row(endpoints[0].id()).is_none());
    }

    #[test]
    fn a_list_is_served_only_at_its_version_and_the_oldest_go_past_the_budget() {
        let (a, b, c) = (
            EnterpriseId::from_trusted("a".into()),
            EnterpriseId::from_trusted("b".into()),
            EnterpriseId::from_trusted("c".into()),
        );
        let weight = list(&a, 1, 3).1.weight();
        let lists = EndpointLists::with_budget(weight * 2);
        lists.put(&a, Arc::new(list(&a, 1, 3).1));
        assert!(lists.get(&a, 1).is_some());
        assert!(lists.get(&a, 2).is_none(), "another version");
        assert!(lists.get(&b, 1).is_none(), "another enterprise");
        lists.put(&b, Arc::new(list(&b, 4, 3).1));
        lists.put(&c, Arc::new(list(&c, 9, 3).1));
        assert!(lists.get(&a, 1).is_none(), "the oldest went");
        assert!(lists.get(&b, 4).is_some() && lists.get(&c, 9).is_some());
        assert_eq!(lists.bytes(), weight * 2);
        // Replacing an enterprise's list does not count it twice.
        lists.put(&c, Arc::new(list(&c, 10, 3).1));
        assert_eq!(lists.bytes(), weight * 2);
        assert!(lists.get(&c, 9).is_none() && lists.get(&c, 10).is_some());
        // Nothing is kept with no budget.
        let none = EndpointLists::with_budget(0);
        none.put(&a, Arc::new(list(&a, 1, 1).1));
        assert!(none.get(&a, 1).is_none());
    }

    #[test]
    fn single_endpoints_are_served_at_their_version_within_the_budget() {
        let ent = EnterpriseId::from_trusted("ent".into());
        let (endpoints, _) = list(&ent, 1, 3);
        let one =
            |version: u64, i: usize| Arc::new(CachedList::one(version, &endpoints[i]).unwrap());
        let weight = one(1, 0).weight();
        let lists = EndpointLists::with_budget(weight * 2);
        assert!(!lists.keeps_rows(&ent), "only once the list is too long");
        lists.note_too_long(&ent);
        assert!(lists.keeps_rows(&ent));
        let id = |i: usize| endpoints[i].id().clone();
        lists.put_row(&ent, &id(0), one(2, 0));
        lists.put_row(&ent, &id(1), one(2, 1));
        let row = lists.row(&ent, 2, &id(0)).unwrap();
        assert_eq!(&row.json()[row.row(&id(0)).unwrap()], row.json());
        assert!(lists.row(&ent, 3, &id(0)).is_none(), "another version");
        // An older version is not kept over a newer one; a newer one replaces every row.
        lists.put_row(&ent, &id(2), one(1, 2));
        assert!(lists.row(&ent, 1, &id(2)).is_none());
        lists.put_row(&ent, &id(2), one(3, 2));
        assert!(lists.row(&ent, 2, &id(0)).is_none() && lists.row(&ent, 3, &id(2)).is_some());
        assert_eq!(lists.bytes(), weight);
        // A whole list put for the enterprise takes the place of its rows.
        let (_, whole) = list(&ent, 4, 1);
        lists.put(&ent, Arc::new(whole));
        assert!(lists.row(&ent, 3, &id(2)).is_none());
        assert!(!lists.keeps_rows(&ent));
        assert!(lists.bytes() <= weight * 2);
    }
}
