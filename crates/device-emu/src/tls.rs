//! The emulated codecs' HTTPS identity: a self-signed certificate made at start, as a codec
//! ships one out of the box. Tests pin it by its SHA-256 fingerprint.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use sha2::{Digest, Sha256};
use std::io;
use std::net::IpAddr;
use std::sync::Arc;

/// A certificate and its private key.
pub struct TlsIdentity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl TlsIdentity {
    /// A new self-signed certificate (ECDSA P-256) naming `localhost` and every host address.
    pub fn self_signed(hosts: &[IpAddr]) -> io::Result<TlsIdentity> {
        let mut names = vec!["localhost".to_owned()];
        names.extend(hosts.iter().map(ToString::to_string));
        let made = rcgen::generate_simple_self_signed(names).map_err(io::Error::other)?;
        Ok(TlsIdentity {
            cert: made.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()),
        })
    }

    /// The certificate, DER.
    pub fn certificate_der(&self) -> &[u8] {
        &self.cert
    }

    /// SHA-256 of the certificate's DER: upper-case hex pairs joined by colons
    /// (`AB:01:...`), the way browsers and `openssl x509 -fingerprint -sha256` show it.
    pub fn fingerprint_sha256(&self) -> String {
        fingerprint_sha256(&self.cert)
    }

    /// A rustls server configuration serving this certificate, HTTP/1.1 only.
    pub fn server_config(&self) -> io::Result<Arc<rustls::ServerConfig>> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(
                vec![self.cert.clone()],
                PrivateKeyDer::Pkcs8(self.key.clone_key()),
            )
            .map_err(io::Error::other)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

// No Debug that could print the private key.
impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("fingerprint_sha256", &self.fingerprint_sha256())
            .finish_non_exhaustive()
    }
}

/// SHA-256 of `der` as colon-separated upper-case hex.
pub fn fingerprint_sha256(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_colon_separated_upper_hex_of_the_der() {
        let id = TlsIdentity::self_signed(&["127.77.0.1".parse().expect("ip")]).expect("cert");
        let fp = id.fingerprint_sha256();
        assert_eq!(fp.len(), 32 * 3 - 1);
        assert!(fp.split(':').all(|pair| {
            pair.len() == 2
                && pair
                    .chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        }));
        assert_eq!(fp, fingerprint_sha256(id.certificate_der()));
        assert!(!format!("{id:?}").contains("PRIVATE"));
        id.server_config().expect("rustls accepts the certificate");
    }
}
