//! Arbitrary bytes as a CSV upload: `CsvUpload::parse`, then the import plan against a small
//! enterprise. Neither may panic, and the plan must keep the promises of `rules::csv`:
//!
//! - every row is created, skipped, or folded into one update per endpoint (the counts add up);
//! - creates stay within the enterprise's capacity and carry a password;
//! - updates name only endpoints the enterprise has, each once, and keep ANNEX_O;
//! - listener references are the enterprise's, and calendarIds stay unique in the result;
//! - the plan is deterministic, every planned profile is a valid endpoint that survives the
//!   storage record, and the CSV export of the result re-uploads as a plan that changes nothing.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_domain::endpoint::{Endpoint, EndpointProfile};
use roomlink_domain::enums::DialStyle;
use roomlink_domain::error::{Error, ErrorKind};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::rules::csv::{CsvContext, CsvPlan, CsvUpload, MAX_BYTES, export};
use roomlink_domain::rules::put;
use roomlink_domain::secret::{SealedSecret, Secret};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

fn enterprise() -> EnterpriseId {
    EnterpriseId::from_trusted("ent".to_owned())
}

fn endpoint(id: &str, body: Value) -> Endpoint {
    let object = body.as_object().expect("a sample body is an object");
    let draft = put::insert(object).expect("a sample endpoint is valid");
    Endpoint::new(
        EndpointId::from_trusted(id.to_owned()),
        enterprise(),
        draft.profile,
        None,
    )
    .expect("a sample endpoint is complete")
}

/// The enterprise the upload lands in: three endpoints the file may name (one ANNEX_O), a
/// calendarId held by an endpoint the file does not name, and two listener services.
fn context(capacity: usize) -> CsvContext {
    let stored = [
        endpoint(
            "e1",
            json!({"name": "Board room", "dialStyle": "ANNEX_O", "calendarId": "board@corp.example",
                   "listenerServiceId": "ls1", "controlProtocol": "TANDBERG_SSH"}),
        ),
        endpoint(
            "e2",
            json!({"name": "Huddle", "port": 22, "location": "HQ", "calendarId": "huddle@corp.example"}),
        ),
        endpoint(
            "5f0c9289e4b0c0c6485f4cfa",
            json!({"name": "Lobby", "ipAddress": "127.77.0.3", "customData": {"floor": 1},
                   "elevation": -12.5, "geolocation": {"latitude": 1.5, "longitude": -2.0}}),
        ),
    ];
    let mut ctx = CsvContext {
        listeners: HashSet::from([
            ListenerServiceId::from_trusted("ls1".to_owned()),
            ListenerServiceId::from_trusted("ls2".to_owned()),
        ]),
        capacity,
        ..CsvContext::of_endpoints(&stored)
    };
    ctx.calendar_owners.insert(
        "other@corp.example".to_owned(),
        EndpointId::from_trusted("e9".to_owned()),
    );
    ctx
}

fuzz_target!(|data: &[u8]| {
    let upload = match CsvUpload::parse(data) {
        Ok(upload) => upload,
        Err(e) => {
            let expected = if data.len() > MAX_BYTES {
                ErrorKind::PayloadTooLarge
            } else {
                ErrorKind::Invalid
            };
            assert_eq!(e.kind(), expected, "{e}");
            return;
        }
    };
    // Both a tight and a roomy endpoint limit, so the limit rule is exercised too.
    for capacity in [1, 10_000] {
        let ctx = context(capacity);
        let plan = upload.plan(&ctx);
        assert_eq!(plan, upload.plan(&ctx), "the plan is deterministic");
        check_plan(&upload, &ctx, &plan);
        check_export_round_trip(&ctx, &plan);
    }
});

/// "Sealing" that keeps the password readable, so that the write can be checked against the
/// rows' cells.
fn seal_in_clear(secret: &Secret) -> Result<SealedSecret, Error> {
    Ok(SealedSecret {
        key_id: "clear".to_owned(),
        ciphertext: secret.expose().as_bytes().to_vec(),
    })
}

/// The write the plan becomes: every new endpoint has a password (non-empty, at most 1,024
/// characters) and a new id; an update keeps the stored password unless its row set one.
fn check_write(upload: &CsvUpload, ctx: &CsvContext, plan: &CsvPlan) {
    let passwords = upload
        .seal_passwords(seal_in_clear)
        .expect("sealing in clear cannot fail");
    let enterprise = EnterpriseId::from_trusted("ent".to_owned());
    let mut n = 0;
    let write = upload
        .apply(ctx, &enterprise, &passwords, &mut || {
            n += 1;
            EndpointId::from_trusted(format!("new{n}"))
        })
        .expect("a plan's passwords are all sealed");
    assert_eq!(write.inserts.len(), plan.creates.len());
    assert_eq!(write.updates.len(), plan.updates.len());
    for created in &write.inserts {
        let password = created.password().expect("a new endpoint has a password");
        let text = std::str::from_utf8(&password.ciphertext).expect("a password is text");
        assert!(!text.is_empty(), "a new endpoint has a password");
        assert!(text.chars().count() <= 1024);
    }
    for (updated, planned) in write.updates.iter().zip(&plan.updates) {
        assert_eq!(updated.id(), &planned.id);
        let stored = ctx.existing.get(&planned.id).expect("updates name stored endpoints");
        match planned.password_line {
            None => assert_eq!(updated.password(), stored.password(), "kept"),
            Some(_) => {
                let password = updated.password().expect("a set password");
                let text = std::str::from_utf8(&password.ciphertext).expect("text");
                assert!(!text.is_empty() && text.chars().count() <= 1024);
            }
        }
    }
}

fn check_plan(upload: &CsvUpload, ctx: &CsvContext, plan: &CsvPlan) {
    // Every row is a create, a skip or an update; updates of one endpoint fold into one.
    let rows = upload.len();
    let decided = plan.creates.len() + plan.skipped.len();
    assert!(decided <= rows, "{decided} decisions for {rows} rows");
    let update_rows = rows - decided;
    assert!(plan.updates.len() <= update_rows);
    assert_eq!(plan.updates.is_empty(), update_rows == 0);
    assert!(
        plan.creates.len() <= ctx.capacity,
        "past the endpoint limit"
    );

    let ids = upload.ids();
    let unique: HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "ids() names each id once");
    for id in &ids {
        assert!(EndpointId::parse(id.as_str()).is_ok());
    }

    // Rows are decided in file order.
    assert!(plan.creates.windows(2).all(|w| w[0].line <= w[1].line));
    assert!(plan.skipped.windows(2).all(|w| w[0].line <= w[1].line));
    assert!(
        plan.skipped
            .iter()
            .all(|s| !s.reason.to_string().is_empty())
    );

    let mut updated = HashSet::new();
    for update in &plan.updates {
        assert!(updated.insert(update.id.clone()), "one update per endpoint");
        let stored = ctx
            .existing
            .get(&update.id)
            .expect("updates name stored endpoints");
        if stored.profile().dial_style() == Some(&DialStyle::AnnexO) {
            assert_eq!(update.profile.dial_style(), Some(&DialStyle::AnnexO));
        }
        check_profile(&update.profile, ctx);
    }
    for create in &plan.creates {
        check_profile(&create.profile, ctx);
    }
    check_write(upload, ctx, plan);

    // calendarIds stay unique in the enterprise the plan leaves behind.
    let mut calendars: HashMap<EndpointId, String> = ctx
        .calendar_owners
        .iter()
        .map(|(calendar, id)| (id.clone(), calendar.clone()))
        .collect();
    for update in &plan.updates {
        match update.profile.calendar_id() {
            Some(c) => calendars.insert(update.id.clone(), c.as_str().to_owned()),
            None => calendars.remove(&update.id),
        };
    }
    let mut seen = HashSet::new();
    let created = plan.creates.iter().filter_map(|c| c.profile.calendar_id());
    for calendar in calendars
        .values()
        .map(String::as_str)
        .chain(created.map(|c| c.as_str()))
    {
        assert!(
            seen.insert(calendar.to_owned()),
            "calendarId {calendar} used twice"
        );
    }
}

/// A planned profile is a whole, valid endpoint of this enterprise and survives storage.
fn check_profile(profile: &EndpointProfile, ctx: &CsvContext) {
    assert!(profile.name().is_some(), "a name is required");
    if let Some(listener) = profile.listener() {
        assert!(
            ctx.listeners.contains(&listener),
            "foreign listener {listener}"
        );
    }
    let back = EndpointProfile::from_record(profile.to_record()).expect("the record reads back");
    assert_eq!(&back, profile, "the storage record keeps every field");
}

/// The endpoints the plan leaves, exported and uploaded again, are updated to themselves.
fn check_export_round_trip(ctx: &CsvContext, plan: &CsvPlan) {
    let mut after: Vec<Endpoint> = Vec::new();
    for update in &plan.updates {
        after.push(
            Endpoint::new(
                update.id.clone(),
                enterprise(),
                update.profile.clone(),
                None,
            )
            .expect("an updated endpoint is valid"),
        );
    }
    for (i, create) in plan.creates.iter().enumerate() {
        after.push(
            Endpoint::new(
                EndpointId::from_trusted(format!("new{i}")),
                enterprise(),
                create.profile.clone(),
                None,
            )
            .expect("a created endpoint is valid"),
        );
    }
    let file = export::export(&after).expect("the export writes");
    if file.len() > MAX_BYTES {
        return;
    }
    let upload = CsvUpload::parse(&file).expect("the export parses as an upload");
    assert_eq!(upload.len(), after.len());
    let again = CsvContext {
        listeners: ctx.listeners.clone(),
        ..CsvContext::of_endpoints(&after)
    };
    let replay = upload.plan(&again);
    assert!(replay.skipped.is_empty(), "{:?}", replay.skipped);
    assert!(replay.creates.is_empty());
    assert_eq!(replay.updates.len(), after.len());
    for (update, original) in replay.updates.iter().zip(&after) {
        assert_eq!(&update.id, original.id());
        assert_eq!(
            &update.profile,
            original.profile(),
            "export and upload agree"
        );
        assert_eq!(update.password_line, None, "a blank password keeps the stored one");
    }
}
