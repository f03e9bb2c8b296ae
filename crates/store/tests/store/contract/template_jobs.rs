//! TemplateJobStore: jobs round-trip with their rooms in every state (a thousand of them as
//! well), one job runs per enterprise (also when inserts race), claims are exclusive until
//! they lapse, a room is saved only under a held claim, lapsed running jobs are found, the
//! list is newest first, limited and scoped, inserts and finishes come with their audit
//! entries or not at all, an owner's released claims lapse at once (only its running jobs'),
//! a cancelled job is nobody's and frees its enterprise (only a running job of the enterprise
//! is cancelled), and finished or cancelled jobs are purged before a cutoff with their rooms
//! (running ones never).

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter};
use roomlink_domain::ids::{JobId, TemplateId};
use roomlink_domain::template::SettingKey;
use roomlink_domain::template::job::{
    JobKind, JobRoom, JobState, RoomState, Step, Steps, TemplateJob,
};
use roomlink_domain::template::room_outcome::{KeyOutcome, RoomOutcome};
use std::collections::BTreeMap;

const NOW: i64 = 1_800_000_000_000;
const LEASE: i64 = 60_000;

fn steps(undo: bool) -> Steps {
    let step = |to: Value, from: Value| Step {
        to,
        only_from: undo.then_some(from),
    };
    Steps::from([
        (
            SettingKey::TimeZone,
            step(json!("Europe/Oslo"), json!("Etc/UTC")),
        ),
        (SettingKey::StandbyDelayMinutes, step(json!(15), json!(30))),
        (
            SettingKey::WelcomeMessage,
            step(json!("Velkommen – «trykk»"), json!(null)),
        ),
    ])
}

fn room(n: usize, undo: bool, state: RoomState) -> JobRoom {
    JobRoom {
        endpoint_id: EndpointId::from_trusted(format!("endpoint-{n}")),
        name: format!("Room {n}"),
        steps: steps(undo),
        state,
    }
}

/// One room in each state a room can be in.
fn every_state() -> Vec<RoomState> {
    let previous = BTreeMap::from([
        (SettingKey::TimeZone, json!("Etc/UTC")),
        (SettingKey::StandbyDelayMinutes, json!(30)),
    ]);
    vec![
        RoomState::Pending,
        RoomState::Writing {
            previous: previous.clone(),
        },
        RoomState::Done(RoomOutcome::Written(BTreeMap::from([
            (
                SettingKey::TimeZone,
                KeyOutcome::Applied {
                    from: json!("Etc/UTC"),
                },
            ),
            (SettingKey::StandbyDelayMinutes, KeyOutcome::Unchanged),
            (
                SettingKey::WelcomeMessage,
                KeyOutcome::Unsupported("no such setting on this firmware".into()),
            ),
            (SettingKey::SystemName, KeyOutcome::Refused("denied".into())),
            (
                SettingKey::ProximityMode,
                KeyOutcome::Unreadable("not answered".into()),
            ),
            (
                SettingKey::AutoAnswerMode,
                KeyOutcome::Skipped("changed since".into()),
            ),
        ]))),
        RoomState::Done(RoomOutcome::Unreachable {
            kind: ErrorKind::ListenerOffline,
            message: "the listener is offline".into(),
            previous,
        }),
    ]
}

/// A running job of `e` created at `created`, with `rooms`.
fn job(e: &Enterprise, kind: JobKind, created: i64, rooms: Vec<JobRoom>) -> TemplateJob {
    TemplateJob {
        id: JobId::from_trusted(new_id()),
        enterprise_id: e.id.clone(),
        template_id: TemplateId::from_trusted(new_id()),
        template_name: "Oslo – 4th floor".into(),
        kind,
        state: JobState::Running,
        created_by: "alice@corp.example".into(),
        created_at: created,
        finished_at: None,
        rooms,
    }
}

fn apply(e: &Enterprise, created: i64, rooms: usize) -> TemplateJob {
    let rooms = (0..rooms)
        .map(|n| room(n, false, RoomState::Pending))
        .collect();
    job(e, JobKind::Apply, created, rooms)
}

fn audit(j: &TemplateJob, operation: &str) -> AuditEntry {
    AuditEntry::sample(&j.enterprise_id, operation, NOW).target(j.id.as_str())
}

/// How many audit entries name `j`.
async fn trail(h: &Harness, j: &TemplateJob) -> usize {
    let filter = AuditFilter {
        target_id: Some(j.id.as_str().to_owned()),
        ..AuditFilter::default()
    };
    let page = h
        .store
        .audit_page(&j.enterprise_id, &filter, None, 100)
        .await
        .unwrap();
    page.entries.len()
}

/// The operations of the audit entries naming `j`, sorted.
async fn operations(h: &Harness, j: &TemplateJob) -> Vec<String> {
    let filter = AuditFilter {
        target_id: Some(j.id.as_str().to_owned()),
        ..AuditFilter::default()
    };
    let page = h
        .store
        .audit_page(&j.enterprise_id, &filter, None, 100)
        .await
        .unwrap();
    let mut operations: Vec<String> = page
        .entries
        .into_iter()
        .map(|r| r.entry.operation)
        .collect();
    operations.sort();
    operations
}

async fn cancel(h: &Harness, e: &EnterpriseId, j: &TemplateJob, at: i64) -> bool {
    h.store
        .cancel_job(e, &j.id, at, &audit(j, "templates.job.cancel"))
        .await
        .unwrap()
}

async fn insert(h: &Harness, j: &TemplateJob, owner: &str) -> Result<()> {
    h.store
        .insert_job(j, owner, NOW + LEASE, &audit(j, "templates.apply"))
        .await
}

async fn finish(h: &Harness, j: &TemplateJob, owner: &str, at: i64) -> bool {
    h.store
        .finish_job(
            &j.enterprise_id,
            &j.id,
            owner,
            at,
            &audit(j, "templates.job.finish"),
        )
        .await
        .unwrap()
}

async fn read(h: &Harness, j: &TemplateJob) -> TemplateJob {
    h.store
        .job(&j.enterprise_id, &j.id)
        .await
        .unwrap()
        .expect("the job is stored")
}

pub async fn template_jobs_round_trip_with_every_room_state(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let rooms = every_state()
        .into_iter()
        .enumerate()
        .map(|(n, state)| room(n, false, state))
        .collect();
    let mut applied = job(&e, JobKind::Apply, NOW, rooms);
    insert(h, &applied, "a").await.unwrap();
    assert_eq!(read(h, &applied).await, applied);
    assert_eq!(h.store.jobs(&e.id, 10).await.unwrap(), [applied.clone()]);
    assert_eq!(h.store.job(&other.id, &applied.id).await.unwrap(), None);
    assert_eq!(trail(h, &applied).await, 1, "the insert's audit entry");

    assert!(finish(h, &applied, "a", NOW + 5).await);
    applied.state = JobState::Finished;
    applied.finished_at = Some(NOW + 5);
    assert_eq!(read(h, &applied).await, applied);
    assert_eq!(trail(h, &applied).await, 2, "the finish's audit entry");

    // An undo's steps carry what the undone job wrote.
    let rooms = every_state()
        .into_iter()
        .enumerate()
        .map(|(n, state)| room(n, true, state))
        .collect();
    let of = applied.id.clone();
    let undo = job(&e, JobKind::Undo { of }, NOW + 10, rooms);
    insert(h, &undo, "a").await.unwrap();
    assert_eq!(read(h, &undo).await, undo);
    assert_eq!(h.store.jobs(&e.id, 10).await.unwrap(), [undo, applied]);

    // A thousand rooms, in order.
    let big = apply(&other, NOW, 1_000);
    insert(h, &big, "a").await.unwrap();
    assert_eq!(read(h, &big).await, big);
}

pub async fn one_template_job_runs_per_enterprise(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let first = apply(&e, NOW, 2);
    insert(h, &first, "a").await.unwrap();
    let second = apply(&e, NOW + 1, 2);
    let err = insert(h, &second, "b").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    assert_eq!(err.details()["entityClass"], json!("Job"));
    assert_eq!(err.details()["name"], json!(first.id.as_str()));
    assert!(err.message().contains(first.id.as_str()), "{err:?}");
    assert_eq!(h.store.job(&e.id, &second.id).await.unwrap(), None);
    assert_eq!(
        trail(h, &second).await,
        0,
        "no audit entry for a refused job"
    );

    // Another enterprise's job runs meanwhile.
    let theirs = apply(&other, NOW, 1);
    insert(h, &theirs, "b").await.unwrap();

    // Only the claim's holder finishes it; then the next may start.
    assert!(!finish(h, &first, "b", NOW + 2).await);
    assert_eq!(trail(h, &first).await, 1);
    assert_eq!(kind(insert(h, &second, "b").await), ErrorKind::Conflict);
    assert!(finish(h, &first, "a", NOW + 2).await);
    assert!(!finish(h, &first, "a", NOW + 3).await, "finished once");
    insert(h, &second, "b").await.unwrap();
    assert_eq!(read(h, &second).await, second);

    // Racing inserts of another enterprise's jobs: exactly one runs.
    let racing = enterprise(h, 10).await;
    warm_up(h, 6).await;
    let racers: Vec<TemplateJob> = (0..6).map(|i| apply(&racing, NOW + i, 3)).collect();
    let results = join_all(racers.iter().map(|j| insert(h, j, "a"))).await;
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    for err in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err:?}");
    }
    let listed = h.store.jobs(&racing.id, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].rooms.len(), 3);
}

pub async fn template_job_claims_are_exclusive_until_they_lapse(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let j = apply(&e, NOW, 3);
    let lease = NOW + LEASE;
    insert(h, &j, "a").await.unwrap();
    let claim = |owner: &'static str, now: i64, until: i64| {
        let (e, id) = (e.id.clone(), j.id.clone());
        async move { h.store.claim_job(&e, &id, owner, now, until).await.unwrap() }
    };
    assert!(!claim("b", NOW, NOW + 500).await, "a holds it");
    assert!(
        !claim("b", lease - 1, lease + 500).await,
        "a holds it to the end"
    );
    assert!(claim("a", NOW, lease + 100).await, "a renews");
    assert!(!claim("b", lease + 1, lease + 500).await, "renewed");
    assert!(
        !h.store
            .claim_job(&other.id, &j.id, "b", lease + 200, lease + 500)
            .await
            .unwrap(),
        "not another enterprise's job"
    );
    assert!(
        claim("b", lease + 101, lease + 500).await,
        "lapsed: b takes it"
    );

    // a lost it: its room is not written.
    let done = RoomState::Done(RoomOutcome::Written(BTreeMap::from([(
        SettingKey::TimeZone,
        KeyOutcome::Unchanged,
    )])));
    let save = |position: usize, state: RoomState, owner: &'static str, until: i64| {
        let (e, id) = (e.id.clone(), j.id.clone());
        async move {
            h.store
                .save_job_room(&e, &id, position, &state, owner, until)
                .await
                .unwrap()
        }
    };
    assert!(!save(1, done.clone(), "a", lease + 900).await);
    assert_eq!(read(h, &j).await, j, "nothing written");
    assert!(!claim("a", lease + 450, lease + 900).await, "nor renewed");

    // b's is, and renews its claim.
    let writing = every_state().swap_remove(1);
    assert!(save(1, writing.clone(), "b", lease + 1_000).await);
    assert!(save(2, done.clone(), "b", lease + 1_000).await);
    let mut expected = j.clone();
    expected.rooms[1].state = writing;
    expected.rooms[2].state = done;
    assert_eq!(read(h, &j).await, expected);
    assert!(
        !claim("a", lease + 600, lease + 2_000).await,
        "renewed by the save"
    );
    assert!(
        !h.store
            .save_job_room(&other.id, &j.id, 0, &RoomState::Pending, "b", lease + 1_000)
            .await
            .unwrap(),
        "not another enterprise's job"
    );

    // A finished job is nobody's.
    assert!(!finish(h, &j, "a", lease + 700).await);
    assert!(finish(h, &j, "b", lease + 700).await);
    assert!(!claim("b", lease + 800, lease + 2_000).await);
    assert!(!claim("a", lease + 5_000, lease + 9_000).await);
    assert!(!save(0, RoomState::Pending, "b", lease + 2_000).await);
    expected.state = JobState::Finished;
    expected.finished_at = Some(lease + 700);
    assert_eq!(read(h, &j).await, expected);
}

pub async fn orphaned_template_jobs_are_running_with_a_lapsed_claim(h: &Harness) {
    let first = enterprise(h, 10).await;
    let second = enterprise(h, 10).await;
    let third = enterprise(h, 10).await;
    let lapsed = apply(&first, NOW, 1);
    insert(h, &lapsed, "a").await.unwrap();
    let held = apply(&second, NOW + 1, 1);
    h.store
        .insert_job(
            &held,
            "b",
            NOW + 10 * LEASE,
            &audit(&held, "templates.apply"),
        )
        .await
        .unwrap();
    let done = apply(&third, NOW + 2, 1);
    insert(h, &done, "c").await.unwrap();
    assert!(finish(h, &done, "c", NOW + 3).await);

    assert!(h.store.orphaned_jobs(NOW).await.unwrap().is_empty());
    assert!(
        h.store.orphaned_jobs(NOW + LEASE).await.unwrap().is_empty(),
        "lapsed only after its last moment"
    );
    assert_eq!(
        h.store.orphaned_jobs(NOW + LEASE + 1).await.unwrap(),
        [(first.id.clone(), lapsed.id.clone())]
    );
    assert!(
        h.store
            .claim_job(&first.id, &lapsed.id, "d", NOW + LEASE + 1, NOW + 3 * LEASE)
            .await
            .unwrap()
    );
    assert!(
        h.store
            .orphaned_jobs(NOW + LEASE + 1)
            .await
            .unwrap()
            .is_empty(),
        "claimed again"
    );
    assert_eq!(
        h.store.orphaned_jobs(NOW + 20 * LEASE).await.unwrap(),
        [
            (first.id.clone(), lapsed.id.clone()),
            (second.id.clone(), held.id.clone())
        ],
        "oldest first, never a finished job"
    );
}

pub async fn template_jobs_list_newest_first_limited_and_scoped(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let theirs = apply(&other, NOW + 100, 1);
    insert(h, &theirs, "a").await.unwrap();
    // Created out of order, two at the same moment; each with its own number of rooms.
    let mut stored = Vec::new();
    for (created, rooms) in [(NOW + 5, 1), (NOW, 2), (NOW + 9, 3), (NOW + 5, 4)] {
        let mut j = apply(&e, created, rooms);
        insert(h, &j, "a").await.unwrap();
        assert!(finish(h, &j, "a", NOW + 50).await);
        j.state = JobState::Finished;
        j.finished_at = Some(NOW + 50);
        stored.push(j);
    }
    stored.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    assert_eq!(h.store.jobs(&e.id, 10).await.unwrap(), stored);
    assert_eq!(h.store.jobs(&e.id, 2).await.unwrap(), stored[..2]);
    assert!(h.store.jobs(&e.id, 0).await.unwrap().is_empty());
    assert_eq!(h.store.jobs(&other.id, 10).await.unwrap(), [theirs]);

    // An enterprise's jobs go with it.
    h.store.delete_enterprise(&e.id).await.unwrap();
    assert!(h.store.jobs(&e.id, 10).await.unwrap().is_empty());
    assert_eq!(h.store.job(&e.id, &stored[0].id).await.unwrap(), None);
    assert_eq!(h.store.jobs(&other.id, 10).await.unwrap().len(), 1);
}

pub async fn released_template_jobs_are_free_at_once(h: &Harness) {
    let mine = enterprise(h, 10).await;
    let also_mine = enterprise(h, 10).await;
    let theirs = enterprise(h, 10).await;
    let done = enterprise(h, 10).await;
    let first = apply(&mine, NOW, 2);
    insert(h, &first, "a").await.unwrap();
    let second = apply(&also_mine, NOW + 1, 1);
    insert(h, &second, "a").await.unwrap();
    let held = apply(&theirs, NOW + 2, 1);
    insert(h, &held, "b").await.unwrap();
    let mut finished = apply(&done, NOW + 3, 1);
    insert(h, &finished, "a").await.unwrap();
    assert!(finish(h, &finished, "a", NOW + 4).await);
    finished.state = JobState::Finished;
    finished.finished_at = Some(NOW + 4);
    assert!(h.store.orphaned_jobs(NOW).await.unwrap().is_empty());

    assert_eq!(h.store.release_jobs("nobody").await.unwrap(), 0);
    assert_eq!(
        h.store.release_jobs("a").await.unwrap(),
        2,
        "a's running jobs, not its finished one"
    );
    assert_eq!(
        h.store.orphaned_jobs(NOW).await.unwrap(),
        [
            (mine.id.clone(), first.id.clone()),
            (also_mine.id.clone(), second.id.clone())
        ],
        "lapsed at once, b's job not among them"
    );
    assert_eq!(h.store.release_jobs("a").await.unwrap(), 0, "released once");

    // a holds them no more: its save and finish are refused, and the jobs are as they were.
    assert!(
        !h.store
            .save_job_room(
                &mine.id,
                &first.id,
                0,
                &RoomState::Pending,
                "a",
                NOW + LEASE
            )
            .await
            .unwrap()
    );
    assert!(!finish(h, &second, "a", NOW + 5).await);
    assert_eq!(read(h, &first).await, first);
    assert_eq!(read(h, &second).await, second);
    assert_eq!(
        read(h, &finished).await,
        finished,
        "a finished job is untouched"
    );

    // Anyone takes them, well before the lease would have lapsed.
    let claim = |e: &Enterprise, j: &TemplateJob, owner: &'static str| {
        let (e, id) = (e.id.clone(), j.id.clone());
        async move {
            h.store
                .claim_job(&e, &id, owner, NOW + 1, NOW + 2 * LEASE)
                .await
                .unwrap()
        }
    };
    assert!(claim(&mine, &first, "c").await);
    assert!(!claim(&mine, &first, "a").await, "c holds it now");
    assert!(
        claim(&also_mine, &second, "a").await,
        "a may take one back as well"
    );
    assert!(h.store.orphaned_jobs(NOW + 2).await.unwrap().is_empty());

    // b's claim holds until its lease lapses.
    assert!(!claim(&theirs, &held, "c").await, "b holds it");
    assert_eq!(
        h.store.orphaned_jobs(NOW + LEASE + 1).await.unwrap(),
        [(theirs.id.clone(), held.id.clone())],
        "b's job lapses with its lease, c's and a's are renewed"
    );
    assert!(finish(h, &held, "b", NOW + 6).await);
}

pub async fn finished_template_jobs_are_purged_before_the_cutoff(h: &Harness) {
    let cutoff = NOW + 1_000;
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let quiet = enterprise(h, 10).await;
    // Finished just before, at and after the cutoff, in two enterprises; running jobs older
    // than the cutoff.
    let mut stored = Vec::new();
    for (ent, created, finished, rooms) in [
        (&e, NOW, cutoff - 1, 3),
        (&e, NOW + 1, cutoff, 2),
        (&other, NOW, NOW + 2, 4),
        (&other, NOW + 3, cutoff + 1, 1),
    ] {
        let mut j = apply(ent, created, rooms);
        insert(h, &j, "a").await.unwrap();
        assert!(finish(h, &j, "a", finished).await);
        j.state = JobState::Finished;
        j.finished_at = Some(finished);
        stored.push(j);
    }
    let [old, at_cutoff, older, newer] = <[TemplateJob; 4]>::try_from(stored).unwrap();
    let running = apply(&e, NOW - 100 * LEASE, 2);
    insert(h, &running, "a").await.unwrap();
    let lapsed = apply(&quiet, NOW - 200 * LEASE, 1);
    h.store
        .insert_job(
            &lapsed,
            "b",
            NOW - 199 * LEASE,
            &audit(&lapsed, "templates.apply"),
        )
        .await
        .unwrap();

    assert_eq!(
        h.store.purge_jobs(NOW).await.unwrap(),
        0,
        "none finished so early"
    );
    assert_eq!(h.store.purge_jobs(cutoff).await.unwrap(), 2);
    assert_eq!(h.store.job(&e.id, &old.id).await.unwrap(), None);
    assert_eq!(h.store.job(&other.id, &older.id).await.unwrap(), None);
    assert_eq!(
        read(h, &at_cutoff).await,
        at_cutoff,
        "finished at the cutoff stays"
    );
    assert_eq!(read(h, &newer).await, newer);
    assert_eq!(read(h, &running).await, running, "running, however old");
    assert_eq!(
        read(h, &lapsed).await,
        lapsed,
        "running with a lapsed claim"
    );
    assert_eq!(
        h.store.jobs(&e.id, 10).await.unwrap(),
        [at_cutoff.clone(), running.clone()]
    );
    assert_eq!(h.store.jobs(&other.id, 10).await.unwrap(), [newer]);
    assert_eq!(h.store.purge_jobs(cutoff).await.unwrap(), 0, "purged once");

    // The rooms went with their job: a job of the same id stores (positions are free again)
    // and reads back with its own rooms only.
    let mut again = apply(&other, NOW + 10, 1);
    again.id = older.id.clone();
    insert(h, &again, "a").await.unwrap();
    assert_eq!(read(h, &again).await, again);
    assert!(finish(h, &again, "a", cutoff + 5).await);

    // Later, everything finished goes; the running jobs still stay.
    assert_eq!(h.store.purge_jobs(i64::MAX).await.unwrap(), 3);
    assert_eq!(h.store.jobs(&e.id, 10).await.unwrap(), [running]);
    assert!(h.store.jobs(&other.id, 10).await.unwrap().is_empty());
    assert_eq!(
        h.store.orphaned_jobs(NOW).await.unwrap(),
        [(quiet.id.clone(), lapsed.id.clone())]
    );
    assert_eq!(h.store.jobs(&quiet.id, 10).await.unwrap(), [lapsed]);
}

pub async fn a_cancelled_template_job_is_nobodys_and_frees_its_enterprise(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let mut j = apply(&e, NOW, 3);
    insert(h, &j, "a").await.unwrap();
    let theirs = apply(&other, NOW, 2);
    insert(h, &theirs, "b").await.unwrap();
    let done = RoomState::Done(RoomOutcome::Written(BTreeMap::from([(
        SettingKey::TimeZone,
        KeyOutcome::Unchanged,
    )])));
    let save = |e: &Enterprise, j: &TemplateJob, position: usize, owner: &'static str| {
        let (e, id, state) = (e.id.clone(), j.id.clone(), done.clone());
        async move {
            h.store
                .save_job_room(&e, &id, position, &state, owner, NOW + 2 * LEASE)
                .await
                .unwrap()
        }
    };
    assert!(save(&e, &j, 0, "a").await);
    j.rooms[0].state = done.clone();

    // Another enterprise's id is no job to cancel: both jobs stay as they are.
    assert!(!cancel(h, &other.id, &j, NOW + 5).await);
    assert!(!cancel(h, &e.id, &theirs, NOW + 5).await);
    assert_eq!(read(h, &j).await, j);
    assert_eq!(read(h, &theirs).await, theirs);
    assert_eq!(trail(h, &j).await, 1, "no audit entry for a refused cancel");
    assert_eq!(trail(h, &theirs).await, 1);

    // Cancelled: finished at `at`, its rooms as they were, with its audit entry.
    assert!(cancel(h, &e.id, &j, NOW + 10).await);
    j.state = JobState::Cancelled;
    j.finished_at = Some(NOW + 10);
    assert_eq!(read(h, &j).await, j);
    assert_eq!(
        operations(h, &j).await,
        ["templates.apply", "templates.job.cancel"]
    );

    // The instance running it lost it: its save and finish are refused, writing nothing.
    assert!(!save(&e, &j, 1, "a").await);
    assert!(!finish(h, &j, "a", NOW + 20).await);
    assert_eq!(read(h, &j).await, j);
    assert_eq!(trail(h, &j).await, 2);

    // Nobody resumes or claims it, and there is no claim to release.
    assert!(
        h.store
            .orphaned_jobs(NOW + 100 * LEASE)
            .await
            .unwrap()
            .iter()
            .all(|(_, id)| *id != j.id),
        "a cancelled job is no orphan"
    );
    assert_eq!(
        h.store.orphaned_jobs(NOW + 100 * LEASE).await.unwrap(),
        [(other.id.clone(), theirs.id.clone())]
    );
    for (owner, now) in [("a", NOW + 11), ("b", NOW + 11), ("c", NOW + 100 * LEASE)] {
        assert!(
            !h.store
                .claim_job(&e.id, &j.id, owner, now, now + LEASE)
                .await
                .unwrap(),
            "{owner} claims a cancelled job"
        );
    }
    assert_eq!(h.store.release_jobs("a").await.unwrap(), 0);
    assert_eq!(read(h, &j).await, j);

    // Cancelled once.
    assert!(!cancel(h, &e.id, &j, NOW + 30).await);
    assert_eq!(read(h, &j).await, j, "still cancelled at the first time");
    assert_eq!(trail(h, &j).await, 2);

    // The enterprise may start its next job at once.
    let mut next = apply(&e, NOW + 40, 1);
    insert(h, &next, "c").await.unwrap();
    assert_eq!(read(h, &next).await, next);
    assert_eq!(
        h.store.jobs(&e.id, 10).await.unwrap(),
        [next.clone(), j.clone()]
    );

    // A finished job is not cancelled.
    assert!(finish(h, &next, "c", NOW + 50).await);
    next.state = JobState::Finished;
    next.finished_at = Some(NOW + 50);
    assert!(!cancel(h, &e.id, &next, NOW + 60).await);
    assert_eq!(read(h, &next).await, next, "still finished");
    assert_eq!(
        operations(h, &next).await,
        ["templates.apply", "templates.job.finish"]
    );

    // The other enterprise's job went on all along: its owner still holds it.
    assert!(save(&other, &theirs, 1, "b").await);
    assert!(finish(h, &theirs, "b", NOW + 70).await);
}

pub async fn cancelled_template_jobs_are_purged_before_the_cutoff(h: &Harness) {
    let cutoff = NOW + 1_000;
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    // Cancelled just before, at and after the cutoff (one enterprise's, one after the other),
    // and finished before it; a running job older than all of them.
    let mut cancelled = Vec::new();
    for (ent, created, at, rooms) in [
        (&e, NOW, cutoff - 1, 3),
        (&e, NOW + 1, cutoff, 2),
        (&e, NOW + 2, cutoff + 1, 1),
    ] {
        let mut j = apply(ent, created, rooms);
        insert(h, &j, "a").await.unwrap();
        assert!(cancel(h, &ent.id, &j, at).await);
        j.state = JobState::Cancelled;
        j.finished_at = Some(at);
        cancelled.push(j);
    }
    let [before, at_cutoff, after] = <[TemplateJob; 3]>::try_from(cancelled).unwrap();
    let mut finished = apply(&other, NOW, 2);
    insert(h, &finished, "a").await.unwrap();
    assert!(finish(h, &finished, "a", NOW + 3).await);
    finished.state = JobState::Finished;
    finished.finished_at = Some(NOW + 3);
    let running = apply(&e, NOW - 100 * LEASE, 2);
    insert(h, &running, "b").await.unwrap();

    assert_eq!(
        h.store.purge_jobs(NOW).await.unwrap(),
        0,
        "none ended so early"
    );
    assert_eq!(h.store.purge_jobs(cutoff).await.unwrap(), 2);
    assert_eq!(h.store.job(&e.id, &before.id).await.unwrap(), None);
    assert_eq!(h.store.job(&other.id, &finished.id).await.unwrap(), None);
    assert_eq!(
        read(h, &at_cutoff).await,
        at_cutoff,
        "cancelled at the cutoff stays"
    );
    assert_eq!(read(h, &after).await, after);
    assert_eq!(read(h, &running).await, running, "running, however old");
    assert_eq!(h.store.purge_jobs(cutoff).await.unwrap(), 0, "purged once");

    // The rooms went with their job: a job of the same id stores with its own rooms only.
    let mut again = apply(&other, NOW + 10, 1);
    again.id = before.id.clone();
    insert(h, &again, "a").await.unwrap();
    assert_eq!(read(h, &again).await, again);
    assert!(cancel(h, &other.id, &again, cutoff + 5).await);

    // Later, everything ended goes; the running job stays.
    assert_eq!(h.store.purge_jobs(i64::MAX).await.unwrap(), 3);
    assert_eq!(h.store.jobs(&e.id, 10).await.unwrap(), [running]);
    assert!(h.store.jobs(&other.id, 10).await.unwrap().is_empty());
}
