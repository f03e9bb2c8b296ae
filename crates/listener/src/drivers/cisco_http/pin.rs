//! TLS certificate pinning: the codec's end-entity certificate must have the SHA-256
//! fingerprint configured for the address the driver connects to. Chain, names and dates are
//! not checked (codecs ship self-signed certificates); the handshake signatures are.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A fingerprint as 32 bytes, from hex with or without colons (`AB:CD:…` or `abcd…`).
pub fn parse_fingerprint(text: &str) -> Option<[u8; 32]> {
    let hex: String = text
        .chars()
        .filter(|c| *c != ':' && !c.is_whitespace())
        .collect();
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// Colon-separated upper-case hex, as the emulator and browsers show fingerprints.
pub fn format_fingerprint(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The address form pins are looked up by: IP addresses canonical, names lower case.
fn canonical(address: &str) -> String {
    let bare = address.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => bare.to_ascii_lowercase(),
    }
}

#[derive(Debug)]
struct PinMismatch {
    address: String,
    seen: String,
}

impl std::fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the certificate of {} (SHA-256 {}) is not the pinned one",
            self.address, self.seen
        )
    }
}

impl std::error::Error for PinMismatch {}

#[derive(Debug)]
pub struct PinVerifier {
    pins: HashMap<String, [u8; 32]>,
    provider: Arc<CryptoProvider>,
}

impl PinVerifier {
    /// `Err` names the first pin that is not a SHA-256 fingerprint.
    pub fn new(
        pins: &BTreeMap<String, String>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, String> {
        let mut parsed = HashMap::new();
        for (address, pin) in pins {
            let bytes = parse_fingerprint(pin).ok_or_else(|| {
                format!("the pin for {address} is not a SHA-256 fingerprint (64 hex digits, colons allowed)")
            })?;
            parsed.insert(canonical(address), bytes);
        }
        Ok(PinVerifier {
            pins: parsed,
            provider,
        })
    }
}

impl ServerCertVerifier for PinVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let address = match server_name {
            ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
            other => canonical(&other.to_str()),
        };
        let Some(pin) = self.pins.get(&address) else {
            return Err(rustls::Error::General(format!(
                "no certificate fingerprint is pinned for {address}"
            )));
        };
        let seen = Sha256::digest(end_entity.as_ref());
        if seen.as_slice() == pin.as_slice() {
            return Ok(ServerCertVerified::assertion());
        }
        Err(rustls::Error::InvalidCertificate(CertificateError::Other(
            OtherError(Arc::new(PinMismatch {
                address,
                seen: format_fingerprint(&seen),
            })),
        )))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A rustls client configuration that trusts exactly the pinned certificates.
pub fn pinned_client_config(
    pins: &BTreeMap<String, String>,
) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = PinVerifier::new(pins, provider.clone())?;
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_with_or_without_colons() {
        let upper = "AB:".repeat(31) + "AB";
        let bytes = parse_fingerprint(&upper).expect("colons");
        assert_eq!(bytes, [0xAB; 32]);
        assert_eq!(parse_fingerprint(&"ab".repeat(32)), Some([0xAB; 32]));
        assert_eq!(format_fingerprint(&bytes), upper);
        assert_eq!(parse_fingerprint("AB:CD"), None);
        assert_eq!(parse_fingerprint(&"zz".repeat(32)), None);
        assert_eq!(canonical("[::1]"), "::1");
        assert_eq!(canonical("Codec.Example"), "codec.example");
    }
}
