//! Where the language model lives and how long the gateway waits for it. The lead's config
//! parser builds an [`LlmConfig`] from the `[llm]` table; tests build one by hand.

use crate::config::secrets::SecretRef;
use std::time::Duration;
use url::Url;

/// The `[llm]` table, typed: an OpenAI-compatible endpoint and its time limits.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The API root, e.g. `http://127.0.0.1:8000/v1`; requests go to
    /// `{base_url}/chat/completions` and `{base_url}/models`.
    pub base_url: Url,
    /// The model name sent with every request.
    pub model: String,
    /// The API key, sent as `Authorization: Bearer`; read once when the client is built.
    pub api_key: Option<SecretRef>,
    /// How long opening a connection (TCP and TLS) may take.
    pub connect_timeout: Duration,
    /// How long the model may take from the request to the first byte of its answer.
    pub first_token_timeout: Duration,
    /// How long the answer may stay silent between two chunks once it has started.
    pub idle_timeout: Duration,
    /// How many times a call is tried again when it fails before the first byte.
    pub max_retries: u32,
    /// The most tokens an answer may have; a request may ask for fewer, never more.
    pub max_tokens: u32,
    /// Other model names `/v1` clients may ask for (`gpt-4o`, say), all served by `model`.
    pub model_aliases: Vec<String>,
}

impl LlmConfig {
    /// A configuration for `base_url` and `model` with the documented defaults (no key, 5 s
    /// connect, 60 s first token, 30 s idle, 2 retries, 1024 tokens).
    pub fn new(base_url: Url, model: impl Into<String>) -> Self {
        Self {
            base_url,
            model: model.into(),
            api_key: None,
            connect_timeout: Duration::from_secs(5),
            first_token_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(30),
            max_retries: 2,
            max_tokens: 1024,
            model_aliases: Vec::new(),
        }
    }

    /// `{base_url}/{path}`, whether or not the base URL ends with a slash.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url.as_str().trim_end_matches('/'))
    }
}
