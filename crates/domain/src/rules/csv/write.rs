//! From an upload to the rows a store writes: the one function that plans, decides and builds
//! the write ([`CsvUpload::apply`]), and the passwords it needs, sealed beforehand
//! ([`CsvUpload::seal_passwords`]).
//!
//! A store reads the [`CsvContext`] inside its transaction (the enterprise locked), hands it to
//! `apply` and writes what comes back; it decides nothing itself. Sealing is the slow part of
//! an upload (one public-key operation per password), so it happens before the lock, which
//! holds back every other writer of the enterprise.

use super::columns::Column;
use super::parse::CsvUpload;
use super::plan::{CsvContext, CsvReport};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::ids::{EndpointId, EnterpriseId};
use crate::rules::limit::EndpointLimit;
use crate::rules::password_from_text;
use crate::secret::{SealedSecret, Secret};
use std::collections::HashMap;

/// The writes of one CSV upload, and the report of what they do (handed back once written).
#[derive(Debug, Default)]
pub struct CsvWrite {
    pub inserts: Vec<Endpoint>,
    /// One per endpoint, each naming an endpoint of [`CsvContext::existing`].
    pub updates: Vec<Endpoint>,
    pub report: CsvReport,
}

impl CsvWrite {
    /// Holds the write to what its context allowed: updates only of endpoints the context
    /// read (the enterprise's own, locked), creates only within `limit`, every endpoint of
    /// `enterprise`. A write from [`CsvUpload::apply`] always passes; the stores call this so
    /// that no other writer can reach across tenants or past the limit. `NotFound` for an
    /// update of an unknown id, then `LimitReached`.
    pub fn check_within(
        &self,
        enterprise: &EnterpriseId,
        ctx: &CsvContext,
        limit: EndpointLimit,
        count: usize,
    ) -> Result<()> {
        if let Some(e) = self
            .inserts
            .iter()
            .chain(&self.updates)
            .find(|e| e.enterprise_id() != enterprise)
        {
            return Err(Error::internal(format!(
                "a CSV upload of enterprise {enterprise} wrote endpoint {} of another",
                e.id()
            )));
        }
        if let Some(unknown) = self
            .updates
            .iter()
            .find(|e| !ctx.existing.contains_key(e.id()))
        {
            return Err(unknown.id().not_found());
        }
        limit.admit(count, self.inserts.len())
    }
}

/// The upload's passwords, sealed, by the line of their row.
#[derive(Debug, Default)]
pub struct SealedPasswords {
    by_line: HashMap<u64, SealedSecret>,
}

impl SealedPasswords {
    fn get(&self, line: u64) -> Result<SealedSecret> {
        self.by_line.get(&line).cloned().ok_or_else(|| {
            Error::internal(format!(
                "the password of CSV line {line} was planned but not sealed"
            ))
        })
    }
}

impl CsvUpload {
    /// Seals the password of every readable row that has one within bounds. Rows the plan
    /// will skip are sealed too: which rows apply is only known inside the transaction.
    pub fn seal_passwords(
        &self,
        mut seal: impl FnMut(&Secret) -> Result<SealedSecret>,
    ) -> Result<SealedPasswords> {
        let mut sealed = SealedPasswords::default();
        for row in &self.rows {
            let Some(text) = self.cell(row, Column::Password).filter(|p| !p.is_empty()) else {
                continue;
            };
            // A password out of bounds is the plan's to report, row by row.
            if let Ok(secret) = password_from_text(text) {
                sealed.by_line.insert(row.line, seal(&secret)?);
            }
        }
        Ok(sealed)
    }

    /// Plans the upload against `ctx` ([`CsvUpload::plan`]) and builds the write: created
    /// endpoints get `new_id()`, updated ones keep their stored password unless a row set one.
    pub fn apply(
        &self,
        ctx: &CsvContext,
        enterprise: &EnterpriseId,
        passwords: &SealedPasswords,
        new_id: &mut dyn FnMut() -> EndpointId,
    ) -> Result<CsvWrite> {
        let plan = self.plan(ctx);
        let mut write = CsvWrite::default();
        for c in &plan.creates {
            write.inserts.push(Endpoint::new(
                new_id(),
                enterprise.clone(),
                c.profile.clone(),
                Some(passwords.get(c.line)?),
            )?);
        }
        for u in &plan.updates {
            let password = match u.password_line {
                Some(line) => Some(passwords.get(line)?),
                None => ctx.existing.get(&u.id).and_then(|e| e.password().cloned()),
            };
            write.updates.push(Endpoint::new(
                u.id.clone(),
                enterprise.clone(),
                u.profile.clone(),
                password,
            )?);
        }
        write.report = plan.into_report();
        Ok(write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::put;
    use serde_json::json;

    /// A seal that marks the text instead of encrypting it, to see which password went where.
    fn mark(secret: &Secret) -> Result<SealedSecret> {
        Ok(SealedSecret {
            key_id: "test".into(),
            ciphertext: format!("sealed:{}", secret.expose()).into_bytes(),
        })
    }

    fn sealed_text(e: &Endpoint) -> Option<String> {
        e.password()
            .map(|p| String::from_utf8(p.ciphertext.clone()).unwrap())
    }

    fn stored(id: &str, password: &str) -> Endpoint {
        let draft = put::insert(json!({"name": id}).as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted(id.into()),
            EnterpriseId::from_trusted("ent".into()),
            draft.profile,
            Some(mark(&Secret::new(password)).unwrap()),
        )
        .unwrap()
    }

    fn apply(csv: &str, ctx: &CsvContext) -> CsvWrite {
        let upload = CsvUpload::parse(csv.as_bytes()).unwrap();
        let passwords = upload.seal_passwords(mark).unwrap();
        let mut n = 0;
        upload
            .apply(
                ctx,
                &EnterpriseId::from_trusted("ent".into()),
                &passwords,
                &mut || {
                    n += 1;
                    EndpointId::from_trusted(format!("new{n}"))
                },
            )
            .unwrap()
    }

    #[test]
    fn creates_take_their_rows_password_and_a_new_id() {
        let ctx = CsvContext {
            capacity: 10,
            ..CsvContext::default()
        };
        let write = apply("id,name,password\n,A,p,w\n,B,pw2\n", &ctx);
        let ids: Vec<_> = write.inserts.iter().map(|e| e.id().as_str()).collect();
        assert_eq!(ids, ["new1"], "the ragged row A is skipped");
        assert_eq!(
            sealed_text(&write.inserts[0]).as_deref(),
            Some("sealed:pw2")
        );
        assert_eq!(write.report.created, 1);
        assert_eq!(write.report.skipped.len(), 1);
    }

    #[test]
    fn updates_keep_or_replace_the_stored_password() {
        let ctx = CsvContext::of_endpoints(&[stored("e1", "old1"), stored("e2", "old2")]);
        let write = apply("id,name,password\ne1,A,new1\ne1,A2,\ne2,B,\n", &ctx);
        let by_id: HashMap<_, _> = write
            .updates
            .iter()
            .map(|e| (e.id().as_str(), sealed_text(e)))
            .collect();
        assert_eq!(by_id.len(), 2, "one update per endpoint");
        assert_eq!(
            by_id["e1"].as_deref(),
            Some("sealed:new1"),
            "a later blank cell keeps the earlier row's password"
        );
        assert_eq!(by_id["e2"].as_deref(), Some("sealed:old2"));
    }

    #[test]
    fn passwords_out_of_bounds_are_not_sealed_but_skipped() {
        let long = "x".repeat(crate::rules::PASSWORD_MAX_CHARS + 1);
        let upload = CsvUpload::parse(format!("id,name,password\n,A,{long}\n").as_bytes()).unwrap();
        let mut calls = 0;
        upload
            .seal_passwords(|s| {
                calls += 1;
                mark(s)
            })
            .unwrap();
        assert_eq!(calls, 0);
        let ctx = CsvContext {
            capacity: 10,
            ..CsvContext::default()
        };
        let write = apply(&format!("id,name,password\n,A,{long}\n"), &ctx);
        assert!(write.inserts.is_empty());
        assert_eq!(write.report.skipped.len(), 1);
    }

    #[test]
    fn a_failed_seal_fails_the_upload_before_any_plan() {
        let upload = CsvUpload::parse(b"id,name,password\n,A,pw\n").unwrap();
        let refused = upload.seal_passwords(|_| Err(Error::internal("no key")));
        assert!(refused.is_err());
    }
}
