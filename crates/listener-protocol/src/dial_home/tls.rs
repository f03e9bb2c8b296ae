//! Trust for `wss://`: the system's roots (where customers add their own CAs, e.g. for an
//! inspecting proxy) plus an optional PEM file.

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::path::Path;
use std::sync::Arc;

/// The certificates of a PEM file; at least one, each usable as a trust anchor (checked here,
/// not only when the roots are built, so that `--check` refuses what `run` would).
pub fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("connect.ca_file {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "connect.ca_file {}: no PEM certificate in it",
            path.display()
        ));
    }
    let mut anchors = rustls::RootCertStore::empty();
    for cert in &certs {
        anchors.add(cert.clone()).map_err(|e| unusable(path, e))?;
    }
    Ok(certs)
}

/// A certificate `RootCertStore::add` refused (rustls words it as a peer's: "invalid peer
/// certificate").
fn unusable(path: &Path, e: rustls::Error) -> String {
    let why = match e {
        rustls::Error::InvalidCertificate(why) => format!("{why:?}"),
        other => other.to_string(),
    };
    format!(
        "connect.ca_file {}: a certificate in it cannot be used: {why}",
        path.display()
    )
}

/// The TLS client configuration for `wss://` URLs.
pub fn client_config(ca_file: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    if let Some(path) = ca_file {
        for cert in read_ca_file(path)? {
            roots.add(cert).map_err(|e| unusable(path, e))?;
        }
    }
    if roots.is_empty() {
        return Err(
            "no trusted certificate for wss://: the system has none; set connect.ca_file".into(),
        );
    }
    tracing::debug!(system_roots = added, "TLS roots loaded");
    // The provider is named: another crate in the binary may enable a second one, and then
    // rustls cannot pick a default.
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}
