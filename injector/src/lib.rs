//! Toolgate's HTML layer: everything that touches page bytes on their way to the browser.
//!
//! - [`runtime_asset`]: the discovery runtime script embedded in the binary, with its
//!   content-hashed path and Subresource Integrity value.
//! - [`plan_csp`] / [`allow_in_policy`]: rewriting Content-Security-Policy so the injected script
//!   is allowed while the site's other restrictions stay in force.
//! - [`PageRewriter`]: the streaming rewriter (lol_html) that places the script in each HTML page
//!   and fixes `<meta>` CSP, chunk by chunk, failing closed on any error. A filtering rewriter
//!   ([`PageRewriter::filtered`]) also removes the tools and contexts a user may not see
//!   ([`Visibility`]) and turns legacy forms into tools ([`FormRules`]).
//!
//! The crate knows bytes and lol_html only: no HTTP types, no async runtime, no randomness (the
//! gateway passes nonces in). That keeps every piece testable on its own.
//!
//! ```
//! use injector::{CspHeader, Outcome, PageRewriter, PageSettings, plan_csp, runtime_asset};
//!
//! # fn main() -> Result<(), injector::RewriteError> {
//! let runtime = runtime_asset();
//! let script_url = format!("https://tasks.corp.example{}", runtime.path);
//! let upstream = [CspHeader { report_only: false, value: "script-src 'nonce-cGFnZQ=='".into() }];
//! let plan = plan_csp(&upstream, "ZnJlc2g=", &script_url);
//! assert_eq!(plan.nonce, "cGFnZQ=="); // the page's own nonce is reused
//!
//! let mut rewriter = PageRewriter::new(PageSettings {
//!     script_src: runtime.path.clone(),
//!     integrity: runtime.integrity.clone(),
//!     nonce: plan.nonce,
//!     script_url,
//!     declared_charset: Some("utf-8".into()),
//!     memory_limit: 1 << 20,
//!     inject: true,
//! });
//! let mut out = Vec::new();
//! rewriter.write(b"<html><head><title>Tasks</title>", &mut out)?;
//! rewriter.write(b"</head><body></body></html>", &mut out)?;
//! assert_eq!(rewriter.end(&mut out)?.outcome, Outcome::Injected);
//! assert!(out.starts_with(b"<html><head><script src=\"/.toolgate/runtime."));
//! # Ok(())
//! # }
//! ```

mod csp;
mod error;
mod page;
mod runtime;

pub use csp::{CspHeader, CspPlan, allow_in_policy, plan_csp, sandboxes_origin};
pub use error::RewriteError;
pub use page::{
    AnswerProbe, BUILT_IN_ERROR_MARKERS, FormRuleError, FormRuleSpec, FormRules, FormSeen, Outcome,
    PageAnswer, PagePolicy, PageRewriter, PageSettings, PageSummary, PathGlob, ToolKind, Visibility,
    check_error_selector, resolve_action_path,
};
pub use runtime::{RuntimeAsset, runtime_asset};
