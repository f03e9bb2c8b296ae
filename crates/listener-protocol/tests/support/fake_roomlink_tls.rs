//! The fake roomlink (fake_roomlink.rs) behind TLS: a throwaway CA signs a certificate for
//! `127.0.0.1` and `localhost`; the CA's PEM is written to a temporary file for `ca_file`.
//! Include it beside fake_roomlink.rs (`#[path]`), as `mod fake_roomlink_tls`.

#![allow(dead_code)]

use crate::fake_roomlink::{FakeRoomlink, Io, Layer};
use base64::Engine;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// A CA of the test's own: its certificate (DER) and the PEM file holding it.
pub struct TestCa {
    pub der: CertificateDer<'static>,
    dir: tempfile::TempDir,
}

impl TestCa {
    /// The PEM file with the CA's certificate, for `ca_file`.
    pub fn pem_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A file named `name` in the same temporary directory, with `contents`.
    pub fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("writes the file");
        path
    }
}

/// `der` as one PEM section with `label`.
pub fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A new CA and the TLS server configuration of a certificate it signed for 127.0.0.1 and
/// localhost.
pub fn make_ca() -> (TestCa, Arc<rustls::ServerConfig>) {
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "roomlink test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key).expect("the CA certificate");
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate().expect("a server key");
    let mut server_params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .expect("server params");
    server_params
        .distinguished_name
        .push(DnType::CommonName, "roomlink test server");
    let server_cert = server_params
        .signed_by(&server_key, &issuer)
        .expect("the server certificate");

    let dir = tempfile::tempdir().expect("a temporary directory");
    let ca = TestCa {
        der: ca_cert.der().clone(),
        dir,
    };
    std::fs::write(ca.pem_file(), pem("CERTIFICATE", ca_cert.der())).expect("writes the CA");

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(vec![server_cert.der().clone()], key)
    .expect("the server certificate and key");
    (ca, Arc::new(config))
}

/// A fake roomlink at `https://127.0.0.1:PORT` serving the certificate of a new [`TestCa`].
pub async fn start_tls(listener_id: &str, secret: &str) -> (FakeRoomlink, TestCa) {
    let (ca, config) = make_ca();
    let acceptor = TlsAcceptor::from(config);
    let layer: Layer = Arc::new(move |tcp| {
        let acceptor = acceptor.clone();
        Box::pin(async move {
            let tls = acceptor
                .accept(tcp)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            Ok(Box::new(tls) as Box<dyn Io>)
        })
    });
    let roomlink = FakeRoomlink::start_with(listener_id, secret, "https", layer).await;
    (roomlink, ca)
}
