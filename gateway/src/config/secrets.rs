//! References to secrets: configuration never holds a secret value, only where to find it
//! (`env:NAME` or `file:/path`). Values are read at start-up and never logged.

use std::fmt;

/// Where a secret lives.
#[derive(Clone, PartialEq, Eq)]
pub enum SecretRef {
    /// An environment variable.
    Env(String),
    /// A file (trailing newlines are trimmed).
    File(std::path::PathBuf),
    /// A value made by the program itself (the demo); never parsed from a file.
    Generated(String),
}

/// Why a secret could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The variable is not set or not UTF-8.
    #[error("environment variable {0} is not set")]
    MissingEnv(String),
    /// The file could not be read.
    #[error("cannot read secret file {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What the OS said.
        reason: String,
    },
    /// The secret is empty.
    #[error("secret {0} is empty")]
    Empty(String),
}

impl SecretRef {
    /// Parses `env:NAME` or `file:/path`; anything else is refused so secrets are never inline.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(name) = text.strip_prefix("env:") {
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Ok(Self::Env(name.to_owned()));
            }
        } else if let Some(path) = text.strip_prefix("file:")
            && !path.is_empty()
        {
            return Ok(Self::File(path.into()));
        }
        Err("write `env:VARIABLE` or `file:/path/to/secret`; secrets never go in the configuration".into())
    }

    /// Reads the secret's value.
    pub fn read(&self) -> Result<String, SecretError> {
        let value = match self {
            Self::Env(name) => std::env::var(name).map_err(|_| SecretError::MissingEnv(name.clone()))?,
            Self::File(path) => std::fs::read_to_string(path).map_err(|error| SecretError::File {
                path: path.display().to_string(),
                reason: error.to_string(),
            })?,
            Self::Generated(value) => value.clone(),
        };
        let value = value.trim_end_matches(['\r', '\n']).to_owned();
        if value.is_empty() {
            return Err(SecretError::Empty(self.to_string()));
        }
        Ok(value)
    }

    /// Makes relative file paths relative to `directory`.
    pub fn resolve_relative_to(&mut self, directory: &std::path::Path) {
        if let Self::File(path) = self
            && path.is_relative()
        {
            *path = directory.join(&*path);
        }
    }
}

/// Shows where the secret lives, never its value.
impl fmt::Display for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env(name) => write!(f, "env:{name}"),
            Self::File(path) => write!(f, "file:{}", path.display()),
            Self::Generated(_) => f.write_str("<generated>"),
        }
    }
}

impl fmt::Debug for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_references_parse_and_values_never_display() {
        assert_eq!(SecretRef::parse("env:OIDC_SECRET"), Ok(SecretRef::Env("OIDC_SECRET".into())));
        assert!(SecretRef::parse("hunter2").is_err());
        assert!(SecretRef::parse("env:").is_err());
        assert!(SecretRef::parse("env:A-B").is_err());
        assert_eq!(SecretRef::Generated("secret".into()).to_string(), "<generated>");
        let directory = tempfile::tempdir().expect("dir");
        let path = directory.path().join("s");
        std::fs::write(&path, "value\n").expect("write");
        assert_eq!(SecretRef::File(path).read().expect("read"), "value");
    }
}
