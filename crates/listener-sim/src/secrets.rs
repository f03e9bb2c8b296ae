//! How an endpoint's password reached the simulator. The simulated room systems accept any
//! password, so the opened text is wiped at once; only the way it arrived is kept.

use crate::rooms::CredentialSeen;
use roomlink_listener_protocol::secrets::password;
use roomlink_listener_protocol::wire::WireCredential;

/// How a credential arrived, opening a sealed one with `key` when there is one.
pub fn inspect(
    credential: Option<&WireCredential>,
    key: Option<&crypto_box::SecretKey>,
) -> CredentialSeen {
    match credential {
        None | Some(WireCredential::None) => CredentialSeen::None,
        Some(WireCredential::Plain { .. }) => CredentialSeen::Plain,
        Some(sealed @ WireCredential::Sealed { .. }) => match password(Some(sealed), key) {
            Ok(_) => CredentialSeen::SealedOpened,
            Err(_) => CredentialSeen::SealedUnopened,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as BASE64;

    #[test]
    fn sealed_credentials_open_only_with_the_right_key() {
        let key = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let other = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let sealed = key
            .public_key()
            .seal(&mut crypto_box::aead::OsRng, b"room-pw")
            .unwrap();
        let credential = WireCredential::Sealed {
            key_id: "pk-1".into(),
            ciphertext: BASE64.encode(&sealed),
        };
        assert_eq!(
            inspect(Some(&credential), Some(&key)),
            CredentialSeen::SealedOpened
        );
        assert_eq!(
            inspect(Some(&credential), Some(&other)),
            CredentialSeen::SealedUnopened
        );
        assert_eq!(
            inspect(Some(&credential), None),
            CredentialSeen::SealedUnopened
        );
        assert_eq!(inspect(None, Some(&key)), CredentialSeen::None);
    }
}
