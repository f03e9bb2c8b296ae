//! Harnesses: one fresh store per test, for each adapter, and a sealer.

use roomlink_domain::ports::{SecretSealer, Store};
use roomlink_memory_store::MemoryStore;
use roomlink_store::testing::TestDatabase;
use roomlink_store::{DbConfig, DbStore};
use std::path::PathBuf;
use std::sync::Arc;

/// A store under test, with what it needs to outlive it.
pub struct Harness {
    pub store: Arc<dyn Store>,
    pub sealer: Arc<dyn SecretSealer>,
    /// Dropped after `store` (fields drop in order): the temporary directory or database.
    _place: Option<Box<dyn Send + Sync>>,
}

impl Harness {
    /// A database adapter (SQLite or PostgreSQL), whose statements can fail half-way; the
    /// reference adapter's cannot.
    pub fn is_database(&self) -> bool {
        self._place.is_some()
    }

    fn new(store: Arc<dyn Store>, place: Option<Box<dyn Send + Sync>>) -> Self {
        Harness {
            store,
            sealer: Arc::new(sealer()),
            _place: place,
        }
    }
}

/// The sealer the tests seal endpoint passwords and listener secrets with: the service's own,
/// with a fixed key.
pub fn sealer() -> roomlink_crypto::Sealer {
    roomlink_crypto::Sealer::new(roomlink_crypto::KeyRing::new(
        roomlink_crypto::ServiceKey::from_bytes([7; 32]),
        Vec::new(),
    ))
}

pub async fn memory() -> Option<Harness> {
    Some(Harness::new(Arc::new(MemoryStore::new()), None))
}

/// A migrated SQLite store in a fresh temporary directory.
pub async fn sqlite() -> Option<Harness> {
    let (store, dir) = sqlite_store().await;
    Some(Harness::new(Arc::new(store), Some(Box::new(dir))))
}

pub async fn sqlite_store() -> (DbStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("roomlink.db").display());
    let store = DbStore::connect(&DbConfig::new(url)).await.unwrap();
    store.migrate().await.unwrap();
    (store, dir)
}

/// A migrated PostgreSQL store on a fresh database, or `None` (after saying so) when no
/// server is configured.
pub async fn postgres() -> Option<Harness> {
    let db = TestDatabase::create().await?;
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    store.migrate().await.unwrap();
    Some(Harness::new(Arc::new(store), Some(Box::new(db))))
}

/// Every file of an SQLite database directory (the database, its WAL and shared memory).
pub fn files_in(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}
