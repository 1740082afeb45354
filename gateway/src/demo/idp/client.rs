//! The one relying party the development provider serves: the gateway that `toolgate demo`
//! starts. Its redirect URIs are matched exactly (never by prefix), and its secret is compared in
//! constant time, as a real provider would.

use super::DevIdpError;
use aws_lc_rs::constant_time::verify_slices_are_equal;
use aws_lc_rs::digest::{SHA256, digest};
use url::{Origin, Url};

/// The client registration the provider is started with.
#[derive(Clone)]
pub struct DevClient {
    /// The `client_id` the gateway sends.
    pub client_id: String,
    /// The secret the gateway authenticates with at the token endpoint.
    pub client_secret: String,
    /// The absolute `http`/`https` URIs the provider may redirect to after sign-in, compared exactly.
    pub redirect_uris: Vec<String>,
}

impl std::fmt::Debug for DevClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DevClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// A checked registration.
pub(super) struct RegisteredClient {
    client_id: String,
    secret: String,
    redirect_uris: Vec<String>,
    /// The origins of the redirect URIs: where sign-out may send the browser back to.
    origins: Vec<Origin>,
}

impl RegisteredClient {
    pub(super) fn new(client: DevClient) -> Result<Self, DevIdpError> {
        if client.client_id.is_empty() || client.client_secret.is_empty() {
            return Err(DevIdpError::EmptyClientCredentials);
        }
        if client.redirect_uris.is_empty() {
            return Err(DevIdpError::NoRedirectUris);
        }
        let mut origins = Vec::with_capacity(client.redirect_uris.len());
        for uri in &client.redirect_uris {
            let invalid = |reason: &'static str| DevIdpError::InvalidRedirectUri { uri: uri.clone(), reason };
            let parsed = Url::parse(uri).map_err(|_| invalid("it is not an absolute URL"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(invalid("its scheme is not http or https"));
            }
            if parsed.fragment().is_some() {
                return Err(invalid("it has a fragment (RFC 6749 §3.1.2)"));
            }
            origins.push(parsed.origin());
        }
        Ok(Self {
            client_id: client.client_id,
            secret: client.client_secret,
            redirect_uris: client.redirect_uris,
            origins,
        })
    }

    pub(super) fn id(&self) -> &str {
        &self.client_id
    }

    /// Whether `uri` is, character for character, one of the registered redirect URIs.
    pub(super) fn is_registered_redirect(&self, uri: &str) -> bool {
        self.redirect_uris.iter().any(|registered| registered == uri)
    }

    /// Whether `client_id` and `secret` are this client's. Both sides are hashed first, so the
    /// comparison takes the same time whatever the lengths and contents.
    pub(super) fn authenticates(&self, client_id: &str, secret: &str) -> bool {
        let same = |left: &str, right: &str| {
            verify_slices_are_equal(
                digest(&SHA256, left.as_bytes()).as_ref(),
                digest(&SHA256, right.as_bytes()).as_ref(),
            )
            .is_ok()
        };
        // Both comparisons always run, so timing does not tell which one failed.
        let id_matches = same(client_id, &self.client_id);
        let secret_matches = same(secret, &self.secret);
        id_matches & secret_matches
    }

    /// Whether sign-out may redirect to `uri`: only to the origin of a registered redirect URI.
    pub(super) fn allows_post_logout(&self, uri: &Url) -> bool {
        uri.fragment().is_none() && self.origins.contains(&uri.origin())
    }
}
