//! HTTPS without a proxy: the certificate chain and private key from PEM files
//! (`server.tls_cert`, `server.tls_key`), reloadable while serving.
//!
//! The rustls configuration asks [`ReloadableCert`] for the certificate at every handshake, so
//! a reload takes effect for the next connection; connections already open keep theirs. A
//! reload that fails (a missing file, a key that does not match the certificate) keeps the
//! certificate in use and says why.

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

/// Why a certificate could not be loaded: one line naming the file, never its contents.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: no PEM certificate in the file")]
    NoCertificate { path: String },
    #[error("{path}: no usable private key (PEM PKCS#8, PKCS#1 or SEC1; RSA, ECDSA or Ed25519)")]
    BadKey { path: String },
    #[error("the private key in {key} does not match the certificate in {cert}")]
    Mismatch { cert: String, key: String },
    #[error("cannot configure TLS: {0}")]
    Config(String),
}

/// The PEM files to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The certificate in use, replaced by [`ReloadableCert::reload`].
#[derive(Debug)]
pub struct ReloadableCert {
    files: TlsFiles,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
}

impl ReloadableCert {
    /// Loads the files; an error if either is unusable.
    pub fn load(files: TlsFiles) -> Result<Arc<ReloadableCert>, TlsError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let current = read(&files, &provider)?;
        Ok(Arc::new(ReloadableCert {
            files,
            provider,
            current: RwLock::new(Arc::new(current)),
        }))
    }

    /// Reads the files again; on failure the certificate in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = read(&self.files, &self.provider)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(fresh);
        Ok(())
    }

    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// A server configuration (TLS 1.2 and 1.3, HTTP/1.1) answering with this certificate.
    pub fn server_config(self: &Arc<Self>) -> Result<rustls::ServerConfig, TlsError> {
        let mut config = rustls::ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}

impl ResolvesServerCert for ReloadableCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        )
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn read(files: &TlsFiles, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let cert_text = std::fs::read(&files.cert).map_err(|e| TlsError::Read {
        path: shown(&files.cert),
        reason: e.to_string(),
    })?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_text)
        .collect::<Result<_, _>>()
        .map_err(|_| TlsError::NoCertificate {
            path: shown(&files.cert),
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: shown(&files.cert),
        });
    }
    let key_text =
        zeroize::Zeroizing::new(std::fs::read(&files.key).map_err(|e| TlsError::Read {
            path: shown(&files.key),
            reason: e.to_string(),
        })?);
    let bad_key = || TlsError::BadKey {
        path: shown(&files.key),
    };
    let key = PrivateKeyDer::from_pem_slice(&key_text).map_err(|_| bad_key())?;
    let certified = CertifiedKey::from_der(chain, key, provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => TlsError::Mismatch {
            cert: shown(&files.cert),
            key: shown(&files.key),
        },
        _ => bad_key(),
    })?;
    Ok(certified)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> TlsFiles {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, made.cert.pem()).unwrap();
        std::fs::write(&files.key, made.signing_key.serialize_pem()).unwrap();
        files
    }

    #[test]
    fn loads_a_pair_and_refuses_a_mismatched_or_missing_one_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_pair(dir.path(), "a");
        let b = write_pair(dir.path(), "b");
        assert!(ReloadableCert::load(a.clone()).is_ok());
        let mixed = TlsFiles {
            cert: a.cert.clone(),
            key: b.key.clone(),
        };
        assert!(matches!(
            ReloadableCert::load(mixed),
            Err(TlsError::Mismatch { .. })
        ));
        let missing = TlsFiles {
            cert: dir.path().join("none.crt"),
            key: a.key.clone(),
        };
        let error = ReloadableCert::load(missing).unwrap_err().to_string();
        assert!(error.contains("none.crt"), "{error}");
        std::fs::write(
            &b.key,
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let error = ReloadableCert::load(b).unwrap_err().to_string();
        assert!(
            !error.contains("AAAA"),
            "the key's text never shows: {error}"
        );
    }

    #[test]
    fn a_failed_reload_keeps_the_certificate_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let files = write_pair(dir.path(), "a");
        let cert = ReloadableCert::load(files.clone()).unwrap();
        let before = cert.current.read().unwrap().cert.clone();
        std::fs::write(&files.key, "not a key").unwrap();
        assert!(cert.reload().is_err());
        assert_eq!(cert.current.read().unwrap().cert, before);
        let fresh = write_pair(dir.path(), "a");
        cert.reload().unwrap();
        assert_ne!(cert.current.read().unwrap().cert, before);
        assert_eq!(fresh, files);
    }
}
