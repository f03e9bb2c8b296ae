//! SIGKILL during a CSV upload (see the target's doc).

use super::*;

/// A body just under the 1 MiB bound.
const CSV_BYTES: usize = 1_000_000;

/// The upload: thousands of new endpoints, under the default endpoint limit of 10,000.
fn big_csv() -> (Vec<u8>, usize) {
    let mut csv = b"id,name,ipaddress,port,location,password\n".to_vec();
    let mut rows = 0;
    loop {
        let row = format!(
            ",Room {rows:05},127.77.{}.{},22,\"Building {}, floor {}, wing {} - {}\",room-pw-{rows:05}\n",
            rows / 250,
            rows % 250 + 1,
            rows / 100,
            rows % 100,
            rows % 7,
            "x".repeat(80)
        );
        if csv.len() + row.len() > CSV_BYTES {
            break;
        }
        csv.extend_from_slice(row.as_bytes());
        rows += 1;
    }
    (csv, rows)
}

async fn names(client: &reqwest::Client, address: &str, token: &str) -> HashSet<String> {
    let response = client
        .get(format!("http://{address}/api/endpoints"))
        .header("X-Access-Token", token)
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Where the process is killed.
#[derive(Debug, Clone, Copy)]
enum KillPoint {
    /// Half of the body has been sent.
    MidBody,
    /// This fraction of a whole upload's measured apply time after the last byte was sent.
    Applying(f64),
    /// PostgreSQL only: as soon as the service's connection holds a transaction that has
    /// written (pg_stat_activity shows a transaction id), then this much longer.
    InTransaction(Duration),
}

/// Waits until a connection other than ours to `database_url` has an open transaction that
/// has written something: the upload is being applied.
async fn transaction_open(database_url: &str) {
    let (client, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL";
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let open: i64 = client.query_one(query, &[]).await.unwrap().get(0);
        if open > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upload's transaction never began"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    drop(client);
    let _ = connection.await;
}

/// Starts the upload over a raw connection: the head and the first `upto` bytes of the body.
fn start_upload(address: &str, token: &str, body: &[u8], upto: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "PUT /api/endpoints/csv HTTP/1.1\r\nHost: {address}\r\nX-Access-Token: {token}\r\n\
         Content-Type: text/csv\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..upto]).unwrap();
    stream.flush().unwrap();
    stream
}

/// The whole upload; the response's status line once the response has been read to its end.
fn upload(address: &str, token: &str, body: &[u8]) -> String {
    let mut response = BufReader::new(start_upload(address, token, body, body.len()));
    let mut status = String::new();
    response.read_line(&mut status).unwrap();
    let mut rest = Vec::new();
    let _ = response.read_to_end(&mut rest);
    status.trim().to_owned()
}

async fn sigkill_during_csv_upload(backend: &str, database_url: String, dir: tempfile::TempDir) {
    let postgres = database_url.starts_with("postgres");
    let service = Service::new(dir, database_url);
    let (csv, rows) = big_csv();
    let expected: HashSet<String> = (0..rows).map(|i| format!("Room {i:05}")).collect();
    let mut points = vec![
        KillPoint::MidBody,
        KillPoint::Applying(0.05),
        KillPoint::Applying(0.25),
        KillPoint::Applying(0.5),
        KillPoint::Applying(0.75),
        KillPoint::Applying(0.95),
    ];
    if postgres {
        points.push(KillPoint::InTransaction(Duration::ZERO));
        points.push(KillPoint::InTransaction(Duration::from_millis(300)));
    }
    let tenants: Vec<String> = (0..points.len()).map(|i| format!("k{i}")).collect();
    let s = &service;
    tokio::task::block_in_place(|| {
        s.tenant("baseline");
        for t in &tenants {
            s.tenant(t);
        }
    });
    let client = reqwest::Client::new();
    let csv = Arc::new(csv);

    // A whole upload, to learn how long applying one takes here.
    let (child, address) = tokio::task::block_in_place(|| service.serve());
    let baseline_token = token(&client, &address, "baseline").await;
    let mut tokens = Vec::new();
    for t in &tenants {
        tokens.push(token(&client, &address, t).await);
    }
    let (a, t, body) = (address.clone(), baseline_token.clone(), csv.clone());
    let status = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let status = upload(&a, &t, &body);
        (status, started.elapsed())
    })
    .await
    .unwrap();
    let (status, apply_time) = status;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(names(&client, &address, &baseline_token).await, expected);

    let mut running = Some((child, address));
    let mut outcomes = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let (child, address) = running.take().unwrap();
        let (a, t, body) = (address.clone(), tokens[i].clone(), csv.clone());
        let upto = match point {
            KillPoint::MidBody => csv.len() / 2,
            KillPoint::Applying(_) | KillPoint::InTransaction(_) => csv.len(),
        };
        // The connection stays open until the server is gone.
        let connection = tokio::task::spawn_blocking(move || start_upload(&a, &t, &body, upto))
            .await
            .unwrap();
        match point {
            KillPoint::MidBody => tokio::time::sleep(Duration::from_millis(200)).await,
            KillPoint::Applying(f) => tokio::time::sleep(apply_time.mul_f64(*f)).await,
            KillPoint::InTransaction(after) => {
                transaction_open(&service.database_url).await;
                tokio::time::sleep(*after).await;
            }
        }
        tokio::task::block_in_place(|| sigkill(child));
        drop(connection);

        // Restarted: the enterprise has every row or none.
        let (child, address) = tokio::task::block_in_place(|| service.serve());
        let stored = names(&client, &address, &tokens[i]).await;
        assert!(
            stored.is_empty() || stored == expected,
            "{backend}: killed at {point:?}, {} of {rows} rows are stored",
            stored.len()
        );
        outcomes.push((*point, stored.len()));
        running = Some((child, address));
    }

    // The service is sound after all that: an upload to a killed tenant goes through.
    let (child, address) = running.take().unwrap();
    let (a, t, body) = (address.clone(), tokens[0].clone(), csv.clone());
    let status = tokio::task::spawn_blocking(move || upload(&a, &t, &body))
        .await
        .unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(names(&client, &address, &tokens[0]).await, expected);
    tokio::task::block_in_place(|| sigkill(child));
    let _ = writeln!(
        std::io::stderr(),
        "{backend}: {rows} rows ({} bytes), a whole upload took {apply_time:?}; \
         rows stored after each SIGKILL: {outcomes:?}",
        csv.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_csv_upload_sqlite() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("data/roomlink.db").display());
    tokio::time::timeout(
        Duration::from_secs(300),
        sigkill_during_csv_upload("sqlite", url, dir),
    )
    .await
    .expect("the test finishes within its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_csv_upload_postgres() {
    let _serial = SERIAL.lock().await;
    let Some(database) = roomlink_store::testing::TestDatabase::create().await else {
        return; // TestDatabase said why
    };
    let dir = tempfile::tempdir().unwrap();
    tokio::time::timeout(
        Duration::from_secs(300),
        sigkill_during_csv_upload("postgres", database.url().to_owned(), dir),
    )
    .await
    .expect("the test finishes within its bound");
}
