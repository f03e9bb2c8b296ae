//! Endpoint provisioning use cases: list, get, insert, replace, patch, delete, bulk CSV.

use super::audit::Auditor;
use super::auth::Principal;
use super::endpoint_lists::{CachedList, EndpointLists, ListBuilder, MAX_CACHED_ENDPOINTS};
use super::version_reads::VersionReads;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition, MAX_PAGE_SIZE};
use roomlink_domain::endpoint::{Endpoint, EndpointProfile};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::{
    EndpointStore, EnterpriseStore, IdGenerator, ListenerStore, SecretSealer,
};
use roomlink_domain::rules::EndpointDraft;
use roomlink_domain::rules::csv::{CsvReport, CsvUpload};
use roomlink_domain::rules::patch::EndpointPatch;
use roomlink_domain::rules::put::EndpointBody;
use roomlink_domain::secret::{SealedSecret, SecretChange};
use std::sync::Arc;

/// A request body as the driving adapter decoded it. A body that could not be decoded still
/// reaches the use case, which authorizes and audits the attempt before refusing it.
pub type Decoded<T> = Result<T>;

pub struct EndpointService {
    pub endpoints: Arc<dyn EndpointStore>,
    pub listeners: Arc<dyn ListenerStore>,
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
    pub audit: Arc<Auditor>,
    /// Serialized lists, served while the store's list version is unchanged.
    pub lists: Arc<EndpointLists>,
    /// The version reads behind them, shared by requests that arrive together.
    pub versions: VersionReads,
}

/// The whole list of an enterprise, as `GET /api/endpoints` answers it.
pub enum WholeList {
    /// Complete, and (when it was current) cached.
    Complete(Arc<CachedList>),
    /// Longer than a cache entry may be: the array so far (`[{...},{...}`, unclosed) and
    /// where the rest begins, to be streamed page by page.
    Streaming { head: Vec<u8>, next: ListPosition },
}

/// One endpoint, as `GET /api/endpoints/{id}` answers it.
pub enum OneEndpoint {
    /// Its JSON object, at this range of a cached list's bytes.
    Cached(Arc<CachedList>, std::ops::Range<usize>),
    /// Read from the store (no current list cached).
    Read(Box<Endpoint>),
}

/// Endpoints read per round trip while building a whole list.
const LIST_PAGE: usize = 500;

impl EndpointService {
    /// The whole list: from the cache when the store's list version says it is current, else
    /// read page by page (and cached when it fits and nothing was written meanwhile).
    pub async fn whole_list(&self, principal: &Principal) -> Result<WholeList> {
        principal.authorize(Operation::ListEndpoints, Target::Enterprise)?;
        let enterprise = &principal.enterprise_id;
        let Some(version) = self.list_version(enterprise).await? else {
            // The caller's enterprise is gone: nothing to list.
            return Ok(WholeList::Complete(Arc::new(ListBuilder::new(0).finish())));
        };
        if let Some(list) = self.lists.get(enterprise, version) {
            return Ok(WholeList::Complete(list));
        }
        self.build_list(enterprise, version).await
    }

    /// The whole list read page by page, `version` having been read before the first page;
    /// cached when it fits and nothing was written meanwhile.
    async fn build_list(&self, enterprise: &EnterpriseId, version: u64) -> Result<WholeList> {
        let mut list = ListBuilder::new(version);
        let mut after = None;
        loop {
            let page = self
                .endpoints
                .endpoint_page(enterprise, after, LIST_PAGE)
                .await?;
            list.push(&page.endpoints)?;
            match page.next {
                None => break,
                Some(next) if list.len() >= MAX_CACHED_ENDPOINTS => {
                    self.lists.note_too_long(enterprise);
                    return Ok(WholeList::Streaming {
                        head: list.into_head(),
                        next,
                    });
                }
                Some(next) => after = Some(next),
            }
        }
        let list = Arc::new(list.finish());
        // Kept only if no write committed while the pages were read: then the bytes are
        // exactly the list at `version`.
        if self.list_version(enterprise).await? == Some(version) {
            self.lists.put(enterprise, list.clone());
        }
        Ok(WholeList::Complete(list))
    }

    /// The enterprise's list version, from a read sent after this call began (shared with
    /// concurrent callers; see `version_reads`).
    async fn list_version(&self, enterprise: &EnterpriseId) -> Result<Option<u64>> {
        self.versions
            .read(enterprise, || {
                self.endpoints.endpoint_list_version(enterprise)
            })
            .await
    }

    /// One endpoint: its bytes in the current cached list if there is one (one version read),
    /// else from a list this request builds; for an enterprise too long to keep whole, the
    /// endpoint kept at the current version (read and kept when there is none); else read
    /// from the store.
    pub async fn get_one(&self, principal: &Principal, id: &EndpointId) -> Result<OneEndpoint> {
        principal.authorize(Operation::GetEndpoint, Target::Endpoint(id))?;
        let enterprise = &principal.enterprise_id;
        let version = self.list_version(enterprise).await?;
        if let Some(list) = version.and_then(|v| self.lists.get(enterprise, v)) {
            // The cached list is the whole current list: absent from it is absent.
            let range = list.row(id).ok_or_else(|| id.not_found())?;
            return Ok(OneEndpoint::Cached(list, range));
        }
        // No current list (none built yet, or a write since): one request builds it, so that
        // the reads after it come from memory; the others read their row meanwhile. The list's
        // pages are read after this request arrived, so its row in them is current.
        if let Some(version) = version
            && let Some(_turn) = self.lists.start_build(enterprise)
            && let WholeList::Complete(list) = self.build_list(enterprise, version).await?
        {
            let range = list.row(id).ok_or_else(|| id.not_found())?;
            return Ok(OneEndpoint::Cached(list, range));
        }
        // Too long to keep whole: single endpoints are kept, at the version read before them.
        if let Some(version) = version
            && self.lists.keeps_rows(enterprise)
        {
            if let Some(row) = self.lists.row(enterprise, version, id) {
                let range = row.row(id).ok_or_else(|| id.not_found())?;
                return Ok(OneEndpoint::Cached(row, range));
            }
            let endpoint = self.read_one(enterprise, id).await?;
            let row = Arc::new(CachedList::one(version, &endpoint)?);
            self.lists.put_row(enterprise, id, row.clone());
            let range = row.row(id).ok_or_else(|| id.not_found())?;
            return Ok(OneEndpoint::Cached(row, range));
        }
        let endpoint = self.read_one(enterprise, id).await?;
        Ok(OneEndpoint::Read(Box::new(endpoint)))
    }

    async fn read_one(&self, enterprise: &EnterpriseId, id: &EndpointId) -> Result<Endpoint> {
        self.endpoints
            .endpoint(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    /// One page of the list (`limit` is clamped to 1..=`MAX_PAGE_SIZE`). The same
    /// authorization as [`EndpointService::whole_list`]; streaming the whole list is a walk of pages.
    pub async fn page(
        &self,
        principal: &Principal,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        principal.authorize(Operation::ListEndpoints, Target::Enterprise)?;
        self.read_page(principal, after, limit).await
    }

    /// One page of the CSV export: the list's pages, authorized as `ExportEndpoints`.
    pub async fn export_page(
        &self,
        principal: &Principal,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        principal.authorize(Operation::ExportEndpoints, Target::Enterprise)?;
        self.read_page(principal, after, limit).await
    }

    async fn read_page(
        &self,
        principal: &Principal,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        self.endpoints
            .endpoint_page(
                &principal.enterprise_id,
                after,
                limit.clamp(1, MAX_PAGE_SIZE),
            )
            .await
    }

    /// POST: a new endpoint.
    pub async fn insert(
        &self,
        principal: &Principal,
        body: Decoded<EndpointBody>,
    ) -> Result<Endpoint> {
        let id = EndpointId::from_trusted(self.ids.entity_id());
        let audit = self
            .audit
            .op(principal, Operation::InsertEndpoint, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::InsertEndpoint, Target::Enterprise)?;
            let draft = body?.into_new()?;
            self.check_listener(&principal.enterprise_id, &draft.profile)
                .await?;
            let key = self.public_key(&principal.enterprise_id).await?;
            let password =
                seal_change(self.sealer.as_ref(), &draft.password, None, key.as_deref())?;
            let endpoint = Endpoint::new(
                id.clone(),
                principal.enterprise_id.clone(),
                draft.profile,
                password,
            )?;
            self.endpoints.insert_endpoint(&endpoint, &audit).await?;
            Ok(endpoint)
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// PUT: replaces every field of the endpoint with the body's.
    pub async fn replace(
        &self,
        principal: &Principal,
        id: &EndpointId,
        body: Decoded<EndpointBody>,
    ) -> Result<Endpoint> {
        let audit = self
            .audit
            .op(principal, Operation::UpdateEndpoint, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::UpdateEndpoint, Target::Endpoint(id))?;
            let body = body?;
            self.change(principal, id, &audit, move |current| {
                body.replacing(current)
            })
            .await
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// PATCH: sets the fields the patch names; the others stay.
    pub async fn patch(
        &self,
        principal: &Principal,
        id: &EndpointId,
        patch: Decoded<EndpointPatch>,
    ) -> Result<Endpoint> {
        let audit = self
            .audit
            .op(principal, Operation::PatchEndpoint, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::PatchEndpoint, Target::Endpoint(id))?;
            let patch = patch?;
            let audit = audit
                .clone()
                .detail(format!("fields: {}", patch.property_names().join(", ")));
            self.change(principal, id, &audit, move |current| {
                patch.merge_into(current)
            })
            .await
        }
        .await;
        self.audit.settle(audit, result).await
    }

    pub async fn delete(&self, principal: &Principal, id: &EndpointId) -> Result<()> {
        let audit = self
            .audit
            .op(principal, Operation::DeleteEndpoint, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::DeleteEndpoint, Target::Endpoint(id))?;
            if self
                .endpoints
                .delete_endpoint(&principal.enterprise_id, id, &audit)
                .await?
            {
                Ok(())
            } else {
                Err(id.not_found())
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Bulk load from CSV in one transaction; answers with the full list afterwards and the
    /// report of what the upload did.
    pub async fn bulk_put(
        &self,
        principal: &Principal,
        csv: &[u8],
    ) -> Result<(Vec<Endpoint>, CsvReport)> {
        let audit = self.audit.op(principal, Operation::BulkPutEndpoints, None);
        let result = self.bulk_put_audited(principal, csv, &audit).await;
        self.audit.settle(audit, result).await
    }

    async fn bulk_put_audited(
        &self,
        principal: &Principal,
        csv: &[u8],
        audit: &AuditEntry,
    ) -> Result<(Vec<Endpoint>, CsvReport)> {
        principal.authorize(Operation::BulkPutEndpoints, Target::Enterprise)?;
        let upload = CsvUpload::parse(csv)?;
        let enterprise = principal.enterprise_id.clone();
        let key = self.public_key(&enterprise).await?;
        // Sealed before the store locks the enterprise: sealing is the upload's slow part.
        let passwords = upload.seal_passwords(|p| self.sealer.seal(p, key.as_deref()))?;
        let ids = self.ids.clone();
        let ent = enterprise.clone();
        let report = self
            .endpoints
            .bulk_put(
                &enterprise,
                upload.ids(),
                Box::new(move |ctx| {
                    upload.apply(ctx, &ent, &passwords, &mut || {
                        EndpointId::from_trusted(ids.entity_id())
                    })
                }),
                audit,
            )
            .await?;
        let list = self.endpoints.list_endpoints(&enterprise).await?;
        Ok((list, report))
    }

    /// Applies a write rule. It runs once on the current row to fail fast and to learn which
    /// listener the result names, then again, authoritatively, on the row read inside the
    /// store's transaction (the rules are pure, so both runs agree unless the row changed).
    async fn change(
        &self,
        principal: &Principal,
        id: &EndpointId,
        audit: &AuditEntry,
        rule: impl Fn(&Endpoint) -> Result<EndpointDraft> + Send + Sync + 'static,
    ) -> Result<Endpoint> {
        let enterprise = principal.enterprise_id.clone();
        let current = self
            .endpoints
            .endpoint(&enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())?;
        let preview = rule(&current)?;
        self.check_listener(&enterprise, &preview.profile).await?;
        let key = self.public_key(&enterprise).await?;
        let sealer = self.sealer.clone();
        self.endpoints
            .update_endpoint(
                &enterprise,
                id,
                Box::new(move |stored| {
                    let draft = rule(&stored)?;
                    let password = seal_change(
                        sealer.as_ref(),
                        &draft.password,
                        stored.password(),
                        key.as_deref(),
                    )?;
                    Endpoint::new(
                        stored.id().clone(),
                        stored.enterprise_id().clone(),
                        draft.profile,
                        password,
                    )
                }),
                audit,
            )
            .await
    }

    async fn check_listener(
        &self,
        enterprise: &EnterpriseId,
        profile: &EndpointProfile,
    ) -> Result<()> {
        let Some(listener) = profile.listener() else {
            return Ok(());
        };
        match self.listeners.listener(enterprise, &listener).await? {
            Some(_) => Ok(()),
            None => Err(Error::invalid(format!(
                "listenerServiceId: no listener service '{listener}' in this enterprise"
            ))),
        }
    }

    async fn public_key(&self, enterprise: &EnterpriseId) -> Result<Option<String>> {
        Ok(self
            .enterprises
            .enterprise(enterprise)
            .await?
            .and_then(|e| e.public_key))
    }
}

fn seal_change(
    sealer: &dyn SecretSealer,
    change: &SecretChange,
    current: Option<&SealedSecret>,
    key: Option<&str>,
) -> Result<Option<SealedSecret>> {
    match change {
        SecretChange::Keep => Ok(current.cloned()),
        SecretChange::Clear => Ok(None),
        SecretChange::Set(secret) => sealer.seal(secret, key).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Subject;
    use roomlink_domain::ErrorKind;
    use roomlink_domain::access::RoleSet;
    use roomlink_domain::enterprise::Enterprise;
    use roomlink_domain::ids::EnterpriseId;
    use roomlink_domain::ports::MockSecretSealer;
    use roomlink_domain::system::RandomIds;
    use roomlink_memory_store::MemoryStore;
    use serde_json::json;

    /// A sealer that marks values instead of encrypting them, to observe what is stored.
    fn marking_sealer() -> MockSecretSealer {
        let mut s = MockSecretSealer::new();
        s.expect_seal().returning(|p, _| {
            Ok(SealedSecret {
                key_id: "k1".into(),
                ciphertext: format!("sealed:{}", p.expose()).into_bytes(),
            })
        });
        s
    }

    async fn service(limit: u32) -> (EndpointService, Principal, Arc<MemoryStore>) {
        let store = Arc::new(MemoryStore::new());
        let enterprise = Enterprise {
            id: EnterpriseId::from_trusted("ent".into()),
            name: "acme".into(),
            endpoint_limit: limit,
            public_key: None,
        };
        roomlink_domain::ports::EnterpriseStore::create_enterprise(store.as_ref(), &enterprise)
            .await
            .unwrap();
        let principal = Principal {
            enterprise_id: enterprise.id,
            enterprise_name: "acme".into(),
            roles: RoleSet::read_write(),
            subject: Subject::ServiceUser {
                username: "ops".into(),
                stamp: 0,
            },
        };
        let svc = EndpointService {
            endpoints: store.clone(),
            listeners: store.clone(),
            enterprises: store.clone(),
            sealer: Arc::new(marking_sealer()),
            ids: Arc::new(RandomIds),
            audit: Arc::new(Auditor {
                store: store.clone(),
                clock: Arc::new(roomlink_domain::system::SystemClock),
            }),
            lists: Arc::default(),
            versions: Default::default(),
        };
        (svc, principal, store)
    }

    fn decoded(v: serde_json::Value) -> Decoded<EndpointBody> {
        EndpointBody::from_json(v.as_object().unwrap())
    }

    fn patched(v: serde_json::Value) -> Decoded<EndpointPatch> {
        EndpointPatch::from_json(v)
    }

    fn sealed_text(e: &Endpoint) -> Option<String> {
        e.password()
            .map(|p| String::from_utf8(p.ciphertext.clone()).unwrap())
    }

    #[tokio::test]
    async fn passwords_are_sealed_kept_and_cleared_as_the_rules_say() {
        let (svc, who, _) = service(10).await;
        let body = json!({"name": "Room", "password": "pw1"});
        let created = svc.insert(&who, decoded(body)).await.unwrap();
        assert_eq!(sealed_text(&created).as_deref(), Some("sealed:pw1"));
        let id = created.id().clone();
        let patched = svc
            .patch(&who, &id, patched(json!({"location": "HQ"})))
            .await
            .unwrap();
        assert_eq!(
            sealed_text(&patched).as_deref(),
            Some("sealed:pw1"),
            "PATCH keeps it"
        );
        let replaced = svc
            .replace(&who, &id, decoded(json!({"name": "Room"})))
            .await
            .unwrap();
        assert_eq!(
            sealed_text(&replaced),
            None,
            "PUT without a password clears it"
        );
    }

    #[tokio::test]
    async fn bulk_put_reports_and_applies_in_one_go() {
        let (svc, who, _) = service(3).await;
        let csv = b"id,name,password\n,A,pw\n,B,\n,C,pw\n,D,pw\n,E,pw\n";
        let (list, outcome) = svc.bulk_put(&who, csv).await.unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(outcome.created, 3);
        assert_eq!(
            outcome.skipped.len(),
            2,
            "one without password, one past the limit"
        );
        assert!(
            list.iter()
                .all(|e| sealed_text(e).as_deref() == Some("sealed:pw"))
        );
        let id = list[0].id().as_str().to_owned();
        let update = format!("id,name,password\n{id},A2,\n");
        let (list, outcome) = svc.bulk_put(&who, update.as_bytes()).await.unwrap();
        assert_eq!(outcome.updated, 1);
        assert_eq!(list[0].name(), "A2");
        assert_eq!(
            sealed_text(&list[0]).as_deref(),
            Some("sealed:pw"),
            "blank keeps"
        );
    }

    #[tokio::test]
    async fn read_only_callers_cannot_write() {
        let (svc, mut who, _) = service(3).await;
        who.roles = RoleSet::read_only();
        let e = svc
            .insert(&who, decoded(json!({"name": "x"})))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Forbidden);
        let e = svc
            .bulk_put(&who, b"id,name,password\n,A,pw\n")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Forbidden);
        match svc.whole_list(&who).await.unwrap() {
            WholeList::Complete(list) => assert!(list.is_empty()),
            WholeList::Streaming { .. } => panic!("an empty list is complete"),
        }
    }

    #[tokio::test]
    async fn unknown_listener_references_are_invalid() {
        let (svc, who, _) = service(3).await;
        let body = json!({"name": "x", "listenerServiceId": "nope"});
        let e = svc.insert(&who, decoded(body)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
    }

    /// The bytes `get_one` answered, when they came from a list in memory.
    fn cached_bytes(one: OneEndpoint) -> Option<String> {
        match one {
            OneEndpoint::Cached(list, range) => {
                Some(String::from_utf8(list.json()[range].to_vec()).unwrap())
            }
            OneEndpoint::Read(_) => None,
        }
    }

    #[tokio::test]
    async fn one_endpoint_builds_the_list_and_the_next_write_is_seen() {
        let (svc, who, _) = service(5).await;
        let a = svc
            .insert(&who, decoded(json!({"name": "A"})))
            .await
            .unwrap();
        svc.insert(&who, decoded(json!({"name": "B"})))
            .await
            .unwrap();
        // No list was cached: this request builds it and answers from it.
        let first = cached_bytes(svc.get_one(&who, a.id()).await.unwrap()).unwrap();
        assert!(first.contains(r#""name":"A""#), "{first}");
        assert!(
            !first.contains(r#""name":"B""#),
            "one endpoint's object: {first}"
        );
        svc.patch(&who, a.id(), patched(json!({"name": "A2"})))
            .await
            .unwrap();
        // The write moved the version: the list is built again, with the write in it.
        let after = cached_bytes(svc.get_one(&who, a.id()).await.unwrap()).unwrap();
        assert!(after.contains(r#""name":"A2""#), "{after}");
        // Absent from the current list is absent.
        let missing = EndpointId::from_trusted("nope".into());
        let e = svc.get_one(&who, &missing).await.err().unwrap();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }

    #[tokio::test]
    async fn without_a_cache_one_endpoint_is_read_from_the_store() {
        let (mut svc, who, _) = service(5).await;
        svc.lists = Arc::new(EndpointLists::with_budget(0));
        let a = svc
            .insert(&who, decoded(json!({"name": "A"})))
            .await
            .unwrap();
        match svc.get_one(&who, a.id()).await.unwrap() {
            OneEndpoint::Read(e) => assert_eq!(e.id(), a.id()),
            OneEndpoint::Cached(..) => panic!("no list may be built with the cache off"),
        }
    }

    /// The list `get_one` answered from, and the endpoint's bytes in it.
    fn kept(one: OneEndpoint) -> (Arc<CachedList>, String) {
        match one {
            OneEndpoint::Cached(list, range) => {
                let text = String::from_utf8(list.json()[range].to_vec()).unwrap();
                (list, text)
            }
            OneEndpoint::Read(_) => panic!("not answered from memory"),
        }
    }

    #[tokio::test]
    async fn an_enterprise_too_long_to_keep_whole_keeps_single_endpoints_at_their_version() {
        let (svc, who, _) = service(5).await;
        let a = svc
            .insert(&who, decoded(json!({"name": "A"})))
            .await
            .unwrap();
        let b = svc
            .insert(&who, decoded(json!({"name": "B"})))
            .await
            .unwrap();
        svc.lists.note_too_long(&who.enterprise_id);
        // Read from the store once, then kept: the same bytes in memory answer again.
        let (first, text) = kept(svc.get_one(&who, a.id()).await.unwrap());
        assert!(
            text.starts_with('{') && text.contains(r#""name":"A""#),
            "{text}"
        );
        let (again, _) = kept(svc.get_one(&who, a.id()).await.unwrap());
        assert!(Arc::ptr_eq(&first, &again), "the kept endpoint answered");
        let (other, text) = kept(svc.get_one(&who, b.id()).await.unwrap());
        assert!(!Arc::ptr_eq(&first, &other) && text.contains(r#""name":"B""#));
        // A write moves the version: nothing kept before it is served.
        svc.patch(&who, b.id(), patched(json!({"name": "B2"})))
            .await
            .unwrap();
        let (after, text) = kept(svc.get_one(&who, a.id()).await.unwrap());
        assert!(!Arc::ptr_eq(&first, &after) && text.contains(r#""name":"A""#));
        let (_, text) = kept(svc.get_one(&who, b.id()).await.unwrap());
        assert!(text.contains(r#""name":"B2""#), "{text}");
        let missing = EndpointId::from_trusted("nope".into());
        let e = svc.get_one(&who, &missing).await.err().unwrap();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }

    #[test]
    fn one_build_of_an_enterprises_list_at_a_time() {
        let lists = EndpointLists::default();
        let ent = EnterpriseId::from_trusted("ent".into());
        let turn = lists.start_build(&ent).unwrap();
        assert!(lists.start_build(&ent).is_none(), "a build is running");
        drop(turn);
        assert!(lists.start_build(&ent).is_some(), "the turn was given up");
        lists.note_too_long(&ent);
        assert!(lists.start_build(&ent).is_none(), "too long to keep");
    }
}
