//! The OpenID Connect relying party (openidconnect-rs): discovery, the authorization request
//! with PKCE, state and nonce, the code exchange, ID token verification with pinned algorithms,
//! and token refresh. The provider's metadata and keys are cached; an unknown key id triggers a
//! refetch at most once per `sso.key_refetch_interval`.
//!
//! Fetch first, then swap: a discovery or key refetch runs without holding anything readers
//! need, and the new provider replaces the old one in a single pointer swap. A request that has
//! a provider never waits on the network for another's refetch.

use super::http::IdpHttp;
use crate::config::SsoConfig;
use crate::support::clock::unix_now;
use jsonwebtoken::Algorithm;
use openidconnect::core::{
    CoreAuthDisplay, CoreAuthenticationFlow, CoreClaimName, CoreClaimType, CoreClient, CoreClientAuthMethod,
    CoreGrantType, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJweKeyManagementAlgorithm,
    CoreJwsSigningAlgorithm, CoreResponseMode, CoreResponseType, CoreSubjectIdentifierType,
};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, OAuth2TokenResponse,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, Scope, TokenResponse,
};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// After a failed discovery, the next attempt waits at least this long.
const DISCOVERY_RETRY: Duration = Duration::from_secs(5);

/// Why talking to the identity provider failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OidcError {
    /// The provider cannot be reached or answered nonsense; nothing can be verified (503).
    #[error("identity provider unavailable: {0}")]
    Unavailable(String),
    /// The provider answered, but not as the configuration says it should: its discovery
    /// document names another issuer, or is missing or malformed at the configured issuer's
    /// address. Retrying will not help; an operator must fix `sso.issuer` (503).
    #[error("identity provider configuration mismatch: {0}")]
    Misconfigured(String),
    /// The provider refused (bad code, expired refresh token) or the token did not verify.
    #[error("sign-in rejected: {0}")]
    Rejected(String),
}

/// What the provider said about the user after a code exchange or refresh.
pub struct Tokens {
    /// Verified ID token claims (`None` when a refresh returned no ID token).
    pub claims: Option<serde_json::Map<String, serde_json::Value>>,
    /// The ID token itself, for `id_token_hint` at sign-out (`None` with `claims`).
    pub id_token: Option<String>,
    /// The refresh token to use next, if any.
    pub refresh_token: Option<String>,
    /// When the tokens expire (UNIX seconds).
    pub expires_at: u64,
}

/// An authorization request ready to send the browser to.
pub struct Authorization {
    /// The provider's authorization URL with every parameter.
    pub url: String,
    /// The `state` value (the key of the pending login).
    pub state: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier for the code exchange.
    pub verifier: String,
}

/// Discovery fields openidconnect does not model, which the gateway uses.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
struct ExtraMetadata {
    /// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
    #[serde(default)]
    end_session_endpoint: Option<String>,
}

impl openidconnect::AdditionalProviderMetadata for ExtraMetadata {}

/// The provider's discovery document.
type Metadata = openidconnect::ProviderMetadata<
    ExtraMetadata,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

struct Provider {
    metadata: Metadata,
    jwks: Vec<(String, jsonwebtoken::jwk::Jwk)>,
    fetched: Instant,
}

/// The relying party.
pub struct Oidc {
    issuer: String,
    client_id: ClientId,
    client_secret: ClientSecret,
    redirect: RedirectUrl,
    scopes: Vec<String>,
    algorithms: Vec<Algorithm>,
    key_refetch_interval: Duration,
    http: IdpHttp,
    /// The provider in use: read and swapped, never held across a network call.
    provider: RwLock<Option<Arc<Provider>>>,
    /// One discovery or refetch at a time; only requests that need a new provider wait here.
    fetching: tokio::sync::Mutex<()>,
    /// The last failed first discovery, answered again until `DISCOVERY_RETRY` has passed.
    last_failure: Mutex<Option<(Instant, OidcError)>>,
}

impl Oidc {
    /// A relying party for `config`, with the callback at `redirect_uri`.
    pub fn new(config: &SsoConfig, client_secret: String, redirect_uri: &str) -> Result<Self, String> {
        let redirect =
            RedirectUrl::new(redirect_uri.to_owned()).map_err(|error| format!("public_url: {error}"))?;
        Ok(Self {
            issuer: config.issuer.clone(),
            client_id: ClientId::new(config.client_id.clone()),
            client_secret: ClientSecret::new(client_secret),
            redirect,
            scopes: config.scopes.clone(),
            algorithms: config.algorithms.clone(),
            key_refetch_interval: config.key_refetch_interval,
            http: IdpHttp::new(),
            provider: RwLock::new(None),
            fetching: tokio::sync::Mutex::new(()),
            last_failure: Mutex::new(None),
        })
    }

    /// The issuer URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Starts a login: the URL to send the browser to, and what the callback must check.
    pub async fn authorization(&self) -> Result<Authorization, OidcError> {
        let provider = self.provider().await?;
        let client = self.client(&provider);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in self.scopes.iter().filter(|scope| *scope != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        Ok(Authorization {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges an authorization code (with its PKCE verifier) and verifies the ID token.
    pub async fn exchange(&self, code: &str, verifier: &str, nonce: &str) -> Result<Tokens, OidcError> {
        let provider = self.provider().await?;
        let client = self.client(&provider);
        let request = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|error| OidcError::Unavailable(error.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()));
        let response = request.request_async(&self.http).await.map_err(token_error)?;
        let id_token =
            response.id_token().ok_or_else(|| OidcError::Rejected("no ID token in the response".into()))?;
        let claims = self.verify_id_token(id_token, Some(nonce)).await?;
        let expires_at = claims.get("exp").and_then(serde_json::Value::as_u64).unwrap_or_default();
        Ok(Tokens {
            claims: Some(claims),
            id_token: Some(id_token.to_string()),
            refresh_token: response.refresh_token().map(|token| token.secret().clone()),
            expires_at,
        })
    }

    /// Uses a refresh token; returns fresh claims when the provider sends a new ID token.
    pub async fn refresh(&self, refresh_token: &str) -> Result<Tokens, OidcError> {
        let provider = self.provider().await?;
        let client = self.client(&provider);
        let token = RefreshToken::new(refresh_token.to_owned());
        let request = client
            .exchange_refresh_token(&token)
            .map_err(|error| OidcError::Unavailable(error.to_string()))?;
        let response = request.request_async(&self.http).await.map_err(token_error)?;
        let claims = match response.id_token() {
            Some(id_token) => Some(self.verify_id_token(id_token, None).await?),
            None => None,
        };
        let lifetime = response.expires_in().unwrap_or(Duration::from_secs(300));
        let expires_at = claims
            .as_ref()
            .and_then(|claims| claims.get("exp").and_then(serde_json::Value::as_u64))
            .unwrap_or_else(|| unix_now() + lifetime.as_secs());
        Ok(Tokens {
            id_token: claims.as_ref().and(response.id_token()).map(ToString::to_string),
            claims,
            refresh_token: Some(
                response
                    .refresh_token()
                    .map_or_else(|| refresh_token.to_owned(), |token| token.secret().clone()),
            ),
            expires_at,
        })
    }

    /// The key with id `kid`, refetching the provider's keys (rate-limited) when unknown.
    pub async fn key(&self, kid: &str) -> Result<Option<jsonwebtoken::jwk::Jwk>, OidcError> {
        let provider = self.provider().await?;
        if let Some(key) = find_key(&provider, kid) {
            return Ok(Some(key));
        }
        let refreshed = self.refetch(&provider).await?;
        Ok(find_key(&refreshed, kid))
    }

    /// The pinned algorithms.
    pub fn algorithms(&self) -> &[Algorithm] {
        &self.algorithms
    }

    /// The provider's end-session endpoint, if it has one.
    pub async fn end_session_endpoint(&self) -> Option<String> {
        let provider = self.provider().await.ok()?;
        provider.metadata.additional_metadata().end_session_endpoint.clone()
    }

    async fn verify_id_token(
        &self,
        id_token: &openidconnect::core::CoreIdToken,
        nonce: Option<&str>,
    ) -> Result<serde_json::Map<String, serde_json::Value>, OidcError> {
        let mut provider = self.provider().await?;
        let allowed: Vec<CoreJwsSigningAlgorithm> =
            self.algorithms.iter().filter_map(|alg| core_algorithm(*alg)).collect();
        for attempt in 0..2 {
            let client = self.client(&provider);
            let verifier = client.id_token_verifier().set_allowed_algs(allowed.clone());
            let expected = nonce.map(|nonce| Nonce::new(nonce.to_owned()));
            let result = match &expected {
                Some(expected) => id_token.claims(&verifier, expected).map(drop),
                // Refreshed ID tokens carry no nonce (OIDC Core 12.2).
                None => id_token.claims(&verifier, |_: Option<&Nonce>| Ok(())).map(drop),
            };
            match result {
                Ok(()) => return raw_claims(&id_token.to_string()),
                Err(openidconnect::ClaimsVerificationError::SignatureVerification(
                    openidconnect::SignatureVerificationError::NoMatchingKey,
                )) if attempt == 0 => {
                    provider = self.refetch(&provider).await?;
                }
                Err(error) => return Err(OidcError::Rejected(error.to_string())),
            }
        }
        Err(OidcError::Rejected("ID token signed with an unknown key".into()))
    }

    fn client(
        &self,
        provider: &Provider,
    ) -> CoreClient<
        openidconnect::EndpointSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointMaybeSet,
        openidconnect::EndpointMaybeSet,
    > {
        CoreClient::from_provider_metadata(
            provider.metadata.clone(),
            self.client_id.clone(),
            Some(self.client_secret.clone()),
        )
        .set_redirect_uri(self.redirect.clone())
    }

    /// The provider in use, without waiting for anyone.
    fn current(&self) -> Option<Arc<Provider>> {
        self.provider.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn swap(&self, provider: Arc<Provider>) {
        *self.provider.write().unwrap_or_else(PoisonError::into_inner) = Some(provider);
    }

    /// The cached provider, discovering it first if there is none yet.
    async fn provider(&self) -> Result<Arc<Provider>, OidcError> {
        if let Some(provider) = self.current() {
            return Ok(provider);
        }
        let _fetching = self.fetching.lock().await;
        if let Some(provider) = self.current() {
            return Ok(provider);
        }
        if let Some((at, error)) = &*self.last_failure.lock().unwrap_or_else(PoisonError::into_inner)
            && at.elapsed() < DISCOVERY_RETRY
        {
            return Err(error.clone());
        }
        match self.discover().await {
            Ok(provider) => {
                let provider = Arc::new(provider);
                self.swap(provider.clone());
                Ok(provider)
            }
            Err(error) => {
                *self.last_failure.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some((Instant::now(), error.clone()));
                Err(error)
            }
        }
    }

    /// Refetches metadata and keys unless `seen` is younger than the refetch interval or was
    /// replaced meanwhile. Requests holding a provider go on using it while this runs.
    async fn refetch(&self, seen: &Arc<Provider>) -> Result<Arc<Provider>, OidcError> {
        let _fetching = self.fetching.lock().await;
        if let Some(current) = self.current()
            && (!Arc::ptr_eq(&current, seen) || current.fetched.elapsed() < self.key_refetch_interval)
        {
            return Ok(current);
        }
        let provider = Arc::new(self.discover().await?);
        tracing::info!(keys = provider.jwks.len(), "identity provider keys refetched");
        self.swap(provider.clone());
        Ok(provider)
    }

    async fn discover(&self) -> Result<Provider, OidcError> {
        let issuer = IssuerUrl::new(self.issuer.clone())
            .map_err(|error| OidcError::Misconfigured(error.to_string()))?;
        let metadata = Metadata::discover_async(issuer, &self.http).await.map_err(|error| {
            let error = discovery_error(error);
            match &error {
                OidcError::Misconfigured(reason) => {
                    tracing::error!(reason = %reason, "identity provider configuration mismatch: check sso.issuer");
                }
                other => tracing::warn!(reason = %other, "identity provider discovery failed"),
            }
            error
        })?;
        let jwks = bearer_keys(&metadata);
        Ok(Provider { metadata, jwks, fetched: Instant::now() })
    }
}

/// A provider that cannot be reached is an outage; one that answers something other than the
/// configured issuer's discovery document is a configuration mismatch, and is reported as one.
fn discovery_error<E: std::error::Error + 'static>(error: openidconnect::DiscoveryError<E>) -> OidcError {
    use openidconnect::DiscoveryError;
    match error {
        DiscoveryError::Validation(reason) => {
            OidcError::Misconfigured(format!("the discovery document does not match sso.issuer: {reason}"))
        }
        DiscoveryError::Parse(error) => OidcError::Misconfigured(format!(
            "the discovery document at sso.issuer is not valid OpenID provider metadata: {error}"
        )),
        DiscoveryError::UrlParse(error) => OidcError::Misconfigured(format!("sso.issuer: {error}")),
        DiscoveryError::Response(status, _, _) if status.is_client_error() => OidcError::Misconfigured(
            format!("no discovery document at sso.issuer (HTTP {status}); is the issuer URL right?"),
        ),
        DiscoveryError::Response(status, _, _) => {
            OidcError::Unavailable(format!("discovery answered HTTP {status}"))
        }
        DiscoveryError::Request(error) => {
            OidcError::Unavailable(format!("discovery: {}", error_chain(&error)))
        }
        other => OidcError::Unavailable(format!("discovery: {other}")),
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The provider's keys in jsonwebtoken's form, by key id; keys jsonwebtoken cannot use (or
/// without a `kid`) are skipped.
fn bearer_keys(metadata: &Metadata) -> Vec<(String, jsonwebtoken::jwk::Jwk)> {
    let Ok(set) = serde_json::to_value(metadata.jwks()) else { return Vec::new() };
    let keys = set.get("keys").and_then(serde_json::Value::as_array).cloned().unwrap_or_default();
    keys.into_iter()
        .filter_map(|key| serde_json::from_value::<jsonwebtoken::jwk::Jwk>(key).ok())
        .filter_map(|key| key.common.key_id.clone().map(|kid| (kid, key)))
        .collect()
}

fn find_key(provider: &Provider, kid: &str) -> Option<jsonwebtoken::jwk::Jwk> {
    provider.jwks.iter().find(|(id, _)| id == kid).map(|(_, key)| key.clone())
}

/// The payload of a token whose signature was already verified, as a JSON object.
fn raw_claims(token: &str) -> Result<serde_json::Map<String, serde_json::Value>, OidcError> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).ok_or_else(|| OidcError::Rejected("malformed ID token".into()))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| OidcError::Rejected("malformed ID token payload".into()))?;
    serde_json::from_slice(&bytes)
        .map_err(|_| OidcError::Rejected("ID token payload is not a JSON object".into()))
}

fn token_error<E: std::error::Error>(
    error: openidconnect::RequestTokenError<
        E,
        openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>,
    >,
) -> OidcError {
    match error {
        openidconnect::RequestTokenError::ServerResponse(response) => {
            OidcError::Rejected(response.to_string())
        }
        openidconnect::RequestTokenError::Request(error) => OidcError::Unavailable(error.to_string()),
        other => OidcError::Unavailable(other.to_string()),
    }
}

fn core_algorithm(algorithm: Algorithm) -> Option<CoreJwsSigningAlgorithm> {
    Some(match algorithm {
        Algorithm::RS256 => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
        Algorithm::RS384 => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
        Algorithm::RS512 => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
        Algorithm::PS256 => CoreJwsSigningAlgorithm::RsaSsaPssSha256,
        Algorithm::PS384 => CoreJwsSigningAlgorithm::RsaSsaPssSha384,
        Algorithm::PS512 => CoreJwsSigningAlgorithm::RsaSsaPssSha512,
        Algorithm::ES256 => CoreJwsSigningAlgorithm::EcdsaP256Sha256,
        Algorithm::ES384 => CoreJwsSigningAlgorithm::EcdsaP384Sha384,
        Algorithm::EdDSA => CoreJwsSigningAlgorithm::EdDsa,
        _ => return None,
    })
}
