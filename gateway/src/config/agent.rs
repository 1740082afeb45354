//! The typed `[llm]` and `[agent]` sections: where the model lives, how long to wait for it, and
//! the limits of the agent loop (rounds, concurrent turns and tokens per user, waits).

use super::LlmConfig;
use super::{raw, values};
use crate::config::secrets::SecretRef;
use std::time::Duration;
use toml::Spanned;

/// Limits of the agent loop.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Model rounds (answers with tool calls) per turn.
    pub max_rounds: u32,
    /// Turns one user may have running at once.
    pub max_concurrent_turns: usize,
    /// Model tokens (in and out) one user may use per hour.
    pub tokens_per_hour: u64,
    /// How long a call waits for a human's approval.
    pub approval_timeout: Duration,
    /// How long the page may take to run a tool.
    pub tool_timeout: Duration,
    /// Estimated tokens of earlier turns replayed to the model (0: every turn starts afresh).
    pub history_tokens: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_rounds: 6,
            max_concurrent_turns: 2,
            tokens_per_hour: 200_000,
            approval_timeout: Duration::from_secs(300),
            tool_timeout: Duration::from_secs(60),
            history_tokens: 4000,
        }
    }
}

impl super::Checker<'_> {
    pub(super) fn llm(&mut self, raw: &raw::RawLlm) -> Option<LlmConfig> {
        let base_url = self.check(&raw.base_url, "llm.base_url", |text| {
            let url = url::Url::parse(text).map_err(|error| format!("not a URL: {error}"))?;
            match url.scheme() {
                "http" | "https" if url.host().is_some() => Ok(url),
                _ => Err("must be an http:// or https:// URL with a host".to_owned()),
            }
        });
        let model = self.check(&raw.model, "llm.model", |text| {
            if text.trim().is_empty() { Err("must not be empty".to_owned()) } else { Ok(text.to_owned()) }
        });
        let api_key = match &raw.api_key {
            None => Some(None),
            Some(value) => self.check(value, "llm.api_key", SecretRef::parse).map(Some),
        };
        let defaults = LlmConfig::new(url::Url::parse("http://127.0.0.1/").ok()?, "");
        let connect_timeout =
            self.duration_or(&raw.connect_timeout, "llm.connect_timeout", defaults.connect_timeout);
        let first_token_timeout = self.duration_or(
            &raw.first_token_timeout,
            "llm.first_token_timeout",
            defaults.first_token_timeout,
        );
        let idle_timeout = self.duration_or(&raw.idle_timeout, "llm.idle_timeout", defaults.idle_timeout);
        let max_retries =
            self.count_or(&raw.max_retries, "llm.max_retries", u64::from(defaults.max_retries), 0, 10);
        let max_tokens =
            self.count_or(&raw.max_tokens, "llm.max_tokens", u64::from(defaults.max_tokens), 16, 1 << 20);
        let aliases: Vec<Option<String>> = raw
            .model_aliases
            .iter()
            .enumerate()
            .map(|(index, alias)| {
                self.check(alias, &format!("llm.model_aliases[{index}]"), |text| {
                    let name = text.trim();
                    if name.is_empty() || name.len() > 128 || name.chars().any(char::is_control) {
                        Err("must be a model name of 1 to 128 characters".to_owned())
                    } else {
                        Ok(name.to_owned())
                    }
                })
            })
            .collect();
        let mut config = LlmConfig::new(base_url?, model?);
        config.model_aliases = aliases.into_iter().collect::<Option<_>>()?;
        config.api_key = api_key?;
        config.connect_timeout = connect_timeout?;
        config.first_token_timeout = first_token_timeout?;
        config.idle_timeout = idle_timeout?;
        config.max_retries = u32::try_from(max_retries?).ok()?;
        config.max_tokens = u32::try_from(max_tokens?).ok()?;
        Some(config)
    }

    pub(super) fn agent(&mut self, raw: &raw::RawAgent) -> Option<AgentConfig> {
        let defaults = AgentConfig::default();
        let max_rounds =
            self.count_or(&raw.max_rounds, "agent.max_rounds", u64::from(defaults.max_rounds), 1, 50);
        let max_concurrent = self.count_or(
            &raw.max_concurrent_turns,
            "agent.max_concurrent_turns",
            defaults.max_concurrent_turns as u64,
            1,
            1000,
        );
        let tokens = self.count_or(
            &raw.tokens_per_hour,
            "agent.tokens_per_hour",
            defaults.tokens_per_hour,
            1,
            u64::MAX >> 1,
        );
        let approval_timeout =
            self.duration_or(&raw.approval_timeout, "agent.approval_timeout", defaults.approval_timeout);
        let tool_timeout = self.duration_or(&raw.tool_timeout, "agent.tool_timeout", defaults.tool_timeout);
        let history_tokens = self.count_or(
            &raw.history_tokens,
            "agent.history_tokens",
            defaults.history_tokens as u64,
            0,
            1 << 20,
        );
        Some(AgentConfig {
            max_rounds: u32::try_from(max_rounds?).ok()?,
            max_concurrent_turns: usize::try_from(max_concurrent?).ok()?,
            tokens_per_hour: tokens?,
            approval_timeout: approval_timeout?,
            tool_timeout: tool_timeout?,
            history_tokens: usize::try_from(history_tokens?).ok()?,
        })
    }

    fn duration_or(
        &mut self,
        value: &Option<Spanned<String>>,
        key: &str,
        default: Duration,
    ) -> Option<Duration> {
        match value {
            None => Some(default),
            Some(value) => self.check(value, key, values::duration),
        }
    }

    pub(super) fn count_or(
        &mut self,
        value: &Option<Spanned<i64>>,
        key: &str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Option<u64> {
        let Some(spanned) = value else { return Some(default) };
        match u64::try_from(*spanned.get_ref()) {
            Ok(count) if (min..=max).contains(&count) => Some(count),
            _ => {
                self.problem(spanned, key, &format!("must be a whole number from {min} to {max}"));
                None
            }
        }
    }
}
