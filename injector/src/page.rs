//! The streaming page rewriter: one per HTML response.
//!
//! It decides the encoding from the first bytes (byte order mark) and the Content-Type charset,
//! then streams the body through lol_html, which places the runtime `<script>` and fixes `<meta>`
//! CSP. A filtering rewriter ([`PageRewriter::filtered`]) also removes what the user may not see
//! and turns legacy forms into tools. Pages lol_html cannot parse (UTF-16 and other
//! non-ASCII-compatible encodings) pass through untouched, or are refused when filtering. Output
//! leaves as soon as lol_html emits it; only an auto-mode form is held back, bounded.
//!
//! Failure is closed: after any error the rewriter emits nothing more, not even the rewritten
//! output of the failing call, and refuses further input. The caller must end the response.

mod answer;
mod attribute_text;
mod bindings;
mod charset;
mod filter;
mod form_names;
mod form_rules;
mod forms;
mod injection;
mod leaks;
mod meta_csp;
mod output;
mod path_glob;
mod policy;
mod selectors;
mod shared;
mod sink;
mod start_tag;
mod survey;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use lol_html::{AsciiCompatibleEncoding, MemorySettings, send};

use crate::error::RewriteError;
pub use answer::{AnswerProbe, BUILT_IN_ERROR_MARKERS, FormSeen, PageAnswer, check_error_selector};
use charset::{Decoding, MAX_BOM_LENGTH};
pub use form_rules::{FormRuleError, FormRuleSpec, FormRules};
pub use path_glob::{PathGlob, resolve_action_path};
pub use policy::{PagePolicy, PageSummary, ToolKind, Visibility};
use shared::{FilterState, PageState, SharedState, lock};
use sink::PageSink;
use survey::Survey;

/// lol_html's default preallocation for its parsing buffer; capped by the memory limit, since
/// the preallocation counts against it.
const PREALLOCATED_PARSING_BUFFER: usize = 1024;

/// Everything the rewriter needs to know about one response.
#[derive(Clone, Debug)]
pub struct PageSettings {
    /// Path of the runtime script ([`RuntimeAsset::path`](crate::RuntimeAsset::path)).
    pub script_src: String,
    /// SRI value of the runtime script ([`RuntimeAsset::integrity`](crate::RuntimeAsset::integrity)).
    pub integrity: String,
    /// Nonce for the script ([`CspPlan::nonce`](crate::CspPlan::nonce)).
    pub nonce: String,
    /// Absolute URL of the runtime script, used when rewriting `<meta>` CSP.
    pub script_url: String,
    /// The `charset` parameter of the response's Content-Type header, if any.
    pub declared_charset: Option<String>,
    /// Upper bound in bytes for lol_html's buffers (`MemorySettings::max_allowed_memory_usage`).
    pub memory_limit: usize,
    /// Whether the runtime script goes into the page. False for a page the browser sandboxes
    /// into an opaque origin (CSP `sandbox` without `allow-same-origin`), where the script's
    /// integrity check cannot pass: such a page is filtered all the same, with no script.
    pub inject: bool,
}

/// What happened to the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The runtime script was placed in the page.
    Injected,
    /// The page is in an encoding lol_html cannot parse; every byte passed through untouched and
    /// nothing was injected (never for a filtering rewriter).
    PassedThrough,
    /// The page was rewritten (filtered, for a filtering rewriter) without the script, as
    /// [`PageSettings::inject`] asked.
    NotInjected,
}

/// Rewrites one HTML response body, chunk by chunk.
///
/// The output does not depend on how the input is split into chunks.
pub struct PageRewriter {
    state: State,
    /// Reads the page as the answer to a form submission, when asked to.
    probe: Option<AnswerProbe>,
    /// Which filter handlers the page needs: all of them, unless
    /// [`rewrite_whole`](Self::rewrite_whole), which sees the page first, knows better.
    survey: Survey,
}

impl PageRewriter {
    /// Prepares a rewriter that injects the runtime and fixes CSP, without filtering; no output
    /// is produced until the encoding is known.
    pub fn new(settings: PageSettings) -> Self {
        Self::start(settings, None)
    }

    /// Prepares a rewriter that also filters the page for one user: `<tool>`, `<context>` and
    /// tool forms `page.visibility` refuses are removed, tool markup hidden in comments,
    /// raw text and `srcdoc` is removed, and legacy forms become tools per `page.forms`. A page
    /// in an encoding lol_html cannot parse is refused ([`RewriteError::UnsupportedEncoding`]).
    pub fn filtered(settings: PageSettings, page: PagePolicy) -> Self {
        Self::start(settings, Some(page))
    }

    fn start(settings: PageSettings, policy: Option<PagePolicy>) -> Self {
        let prefix = Vec::with_capacity(MAX_BOM_LENGTH);
        Self { state: State::Sniffing { settings, policy, prefix }, probe: None, survey: Survey::unknown() }
    }

    /// Also reads the page as a site's answer to a form submission (title, forms, error
    /// markers) into `probe`. Call before the first [`write`](Self::write).
    #[must_use]
    pub fn with_answer_probe(mut self, probe: AnswerProbe) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Feeds one chunk; rewritten bytes are appended to `out` as soon as lol_html emits them.
    ///
    /// On error nothing from this call is appended, and every later call fails with
    /// [`RewriteError::AlreadyFailed`].
    pub fn write(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> Result<(), RewriteError> {
        let result = match &mut self.state {
            State::Failed => return Err(RewriteError::AlreadyFailed),
            State::Running(stage) => stage.write(chunk, out),
            State::Sniffing { settings, policy, prefix } => {
                // Only the first few bytes are held back, to look for a byte order mark.
                let taken = MAX_BOM_LENGTH.saturating_sub(prefix.len()).min(chunk.len());
                prefix.extend_from_slice(&chunk[..taken]);
                if charset::may_become_bom(prefix) {
                    return Ok(());
                }
                match Stage::start(settings, policy.as_ref(), self.probe.as_ref(), prefix, &self.survey) {
                    Ok(mut stage) => {
                        let result =
                            stage.write(prefix, out).and_then(|()| stage.write(&chunk[taken..], out));
                        self.state = State::Running(stage);
                        result
                    }
                    Err(error) => Err(error),
                }
            }
        };
        if result.is_err() {
            self.state = State::Failed;
        }
        result
    }

    /// Rewrites a whole document, for a page whose every byte is at hand. Seeing the page before
    /// lol_html's handlers are built, it leaves out the filter handlers that cannot act on it
    /// (`survey.rs`): each costs every start tag a check, and the comment scan makes lol_html
    /// lex every byte instead of scanning for tags. And once lol_html has read past the last
    /// start tag any handler acts on, with nothing left open, the rest is copied as it is.
    ///
    /// The output is that of [`write`](Self::write) of `page` then [`end`](Self::end), with two
    /// differences in the copied rest, neither of which can hold anything a handler removes:
    /// text that lol_html would have decoded and encoded again for a text handler (a
    /// `<script>`'s, say) keeps its own bytes where they do not survive that round trip (bytes
    /// invalid in the page's encoding, characters the encoder writes as references); and a token
    /// too large for lol_html's memory limit is copied instead of failing the page (the page is
    /// in memory already).
    pub fn rewrite_whole(mut self, page: &[u8], out: &mut Vec<u8>) -> Result<PageSummary, RewriteError> {
        // Only a filtering rewriter has handlers to leave out.
        if matches!(&self.state, State::Sniffing { prefix, policy: Some(_), .. } if prefix.is_empty()) {
            self.survey = Survey::of(page);
        }
        // The answer probe reads every element and the title's text: it needs the whole page.
        let mut cut = if self.probe.is_some() { usize::MAX } else { self.survey.quiet_from };
        let (mut done, mut step, mut quiet) = (0, FIRST_CUT_STEP, false);
        out.reserve(page.len().saturating_add(OUTPUT_ALLOWANCE));
        while cut < page.len() {
            self.write(&page[done..cut], out)?;
            done = cut;
            quiet = matches!(&self.state, State::Running(stage) if stage.is_quiet());
            if quiet {
                break;
            }
            // What is still open usually ends soon (a form's end tag after its last control):
            // the next cuts are tried close by first, then further and further apart.
            cut = next_cut(page, cut.saturating_add(step));
            step = step.saturating_mul(2);
        }
        match self.state {
            State::Running(stage) if quiet => stage.end_copying(&page[done..], out),
            _ => {
                self.write(&page[done..], out)?;
                self.end(out)
            }
        }
    }

    /// Ends the document; the remaining output is appended to `out`.
    pub fn end(self, out: &mut Vec<u8>) -> Result<PageSummary, RewriteError> {
        let stage = match self.state {
            State::Failed => return Err(RewriteError::AlreadyFailed),
            State::Running(stage) => stage,
            State::Sniffing { settings, policy, prefix } => {
                // A body shorter than a byte order mark: decide with what there is.
                let mut stage =
                    Stage::start(&settings, policy.as_ref(), self.probe.as_ref(), &prefix, &self.survey)?;
                stage.write(&prefix, out)?;
                stage
            }
        };
        stage.end(out)
    }
}

impl fmt::Debug for PageRewriter {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Sniffing { .. } => "sniffing",
            State::Running(Stage::PassThrough) => "passing through",
            State::Running(Stage::Rewrite { .. }) => "rewriting",
            State::Failed => "failed",
        };
        formatter.debug_struct("PageRewriter").field("state", &state).finish()
    }
}

/// Where a page rewriter is in its life.
enum State {
    /// Waiting for enough bytes to rule a byte order mark in or out.
    Sniffing { settings: PageSettings, policy: Option<PagePolicy>, prefix: Vec<u8> },
    /// The encoding is decided.
    Running(Stage),
    /// An error happened; no more input is accepted.
    Failed,
}

/// How the body is processed once the encoding is decided.
enum Stage {
    PassThrough,
    Rewrite {
        rewriter: Box<send::HtmlRewriter<'static, PageSink>>,
        state: SharedState,
        /// Refuse ESC bytes (see [`ESCAPE`]): a filtering rewriter whose encoding no BOM or header fixed.
        refuse_escapes: bool,
        /// Whether the script is placed ([`PageSettings::inject`]).
        inject: bool,
        /// Whether a handler has placed the script already.
        placed: Arc<AtomicBool>,
    },
}

/// The escape byte that switches ISO-2022-JP between character sets. lol_html ignores a
/// `<meta charset="iso-2022-jp">` (it cannot parse that encoding) while a browser follows it, and
/// browsers may also detect ISO-2022-JP on an undeclared page: then `<p title=ESC$B="ESC(B>` hides
/// markup inside what the filter takes for an attribute. A filtering rewriter whose encoding was
/// not fixed by a BOM or the header refuses any ESC byte, which ASCII-compatible HTML never needs.
const ESCAPE: u8 = 0x1B;

/// Whether `bytes` hold an [`ESCAPE`]: a vectorised search, since it reads every byte of a
/// filtered page (the slice's own `contains` reads a word at a time).
fn has_escape(bytes: &[u8]) -> bool {
    memchr::memchr(ESCAPE, bytes).is_some()
}

impl Stage {
    fn start(
        settings: &PageSettings,
        policy: Option<&PagePolicy>,
        probe: Option<&AnswerProbe>,
        prefix: &[u8],
        survey: &Survey,
    ) -> Result<Self, RewriteError> {
        match charset::decide(prefix, settings.declared_charset.as_deref()) {
            // Passing through would pass unfiltered content: a filtering rewriter refuses.
            Decoding::PassThrough if policy.is_some() => Err(RewriteError::UnsupportedEncoding),
            Decoding::PassThrough => Ok(Stage::PassThrough),
            Decoding::Rewrite { encoding, follow_meta_charset } => {
                let filter = policy.map(FilterState::new);
                let state: SharedState = Arc::new(Mutex::new(PageState { filter, ..PageState::default() }));
                let placed = Arc::new(AtomicBool::new(false));
                let mut lol_settings = lol_settings(settings, encoding, follow_meta_charset, &placed);
                if policy.is_some() {
                    lol_settings = filter::append_handlers(lol_settings, &state, survey);
                }
                if let Some(probe) = probe {
                    lol_settings = probe.append_handlers(lol_settings);
                }
                let rewriter = send::HtmlRewriter::new(lol_settings, PageSink::new(&state));
                let refuse_escapes = policy.is_some() && follow_meta_charset;
                Ok(Stage::Rewrite {
                    rewriter: Box::new(rewriter),
                    state,
                    refuse_escapes,
                    inject: settings.inject,
                    placed,
                })
            }
        }
    }

    fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), RewriteError> {
        match self {
            Stage::PassThrough => {
                out.extend_from_slice(input);
                Ok(())
            }
            Stage::Rewrite { state, refuse_escapes: true, .. } if has_escape(input) => {
                lock(state).output.discard();
                Err(RewriteError::UnsupportedEncoding)
            }
            Stage::Rewrite { rewriter, state, .. } => match rewriter.write(input) {
                Ok(()) => {
                    lock(state).output.drain_into(out);
                    Ok(())
                }
                Err(error) => {
                    lock(state).output.discard();
                    Err(error.into())
                }
            },
        }
    }

    /// Whether no handler can change another byte of the page that follows: lol_html has read
    /// past the last element a handler acts on (the caller knows that from the survey), the
    /// script is placed, and nothing is open whose later content or end a handler waits for:
    /// a refused element being removed, a raw-text element being scanned, a form held back or
    /// whose controls are being described.
    fn is_quiet(&self) -> bool {
        let Stage::Rewrite { state, inject, placed, .. } = self else {
            return false;
        };
        if *inject && !placed.load(Ordering::Relaxed) {
            return false;
        }
        let page = lock(state);
        page.output.held().is_none()
            && page.filter.as_ref().is_none_or(|filter| {
                filter.suppressed == 0 && filter.raw_text.is_none() && filter.forms.is_idle()
            })
    }

    /// Ends a quiet rewrite ([`is_quiet`](Self::is_quiet)) and appends `rest`, the page's
    /// remaining bytes, unparsed. lol_html writes out whatever it still holds of what it read
    /// (a tag or text cut short) byte for byte, so `rest` continues it exactly.
    fn end_copying(self, rest: &[u8], out: &mut Vec<u8>) -> Result<PageSummary, RewriteError> {
        if matches!(self, Stage::Rewrite { refuse_escapes: true, .. }) && has_escape(rest) {
            return Err(RewriteError::UnsupportedEncoding);
        }
        let summary = self.end(out)?;
        out.extend_from_slice(rest);
        #[cfg(test)]
        COPIED.set(rest.len());
        Ok(summary)
    }

    fn end(self, out: &mut Vec<u8>) -> Result<PageSummary, RewriteError> {
        match self {
            Stage::PassThrough => Ok(PageSummary::new(Outcome::PassedThrough)),
            Stage::Rewrite { rewriter, state, inject, .. } => match rewriter.end() {
                Ok(()) => {
                    let mut page = lock(&state);
                    // A form still open at the end of the document is complete now.
                    forms::finish(&mut page);
                    // The document-end handler places the script if no head or body did.
                    page.output.drain_into(out);
                    let summary =
                        PageSummary::new(if inject { Outcome::Injected } else { Outcome::NotInjected });
                    Ok(page.filter.as_ref().map_or(summary, |filter| filter.counts.summary(summary)))
                }
                Err(error) => {
                    lock(&state).output.discard();
                    Err(error.into())
                }
            },
        }
    }
}

/// Where to try the next cut of a page that was not quiet: just past the first `>` at or after
/// `from` (a `>` is never part of a multi-byte character in the encodings lol_html parses), or
/// the page's end.
fn next_cut(page: &[u8], from: usize) -> usize {
    let from = from.min(page.len());
    memchr::memchr(b'>', &page[from..]).map_or(page.len(), |offset| from + offset + 1)
}

/// How far past a cut where the page was not quiet yet the next one is tried; each miss doubles
/// it, so a page that never goes quiet is written in a few pieces, not many.
const FIRST_CUT_STEP: usize = 64;

/// Room for what the rewrite adds to a whole page (the script tag, a form's tool attributes)
/// beyond its own length, reserved once.
const OUTPUT_ALLOWANCE: usize = 1024;

#[cfg(test)]
thread_local! {
    /// How many bytes the last `rewrite_whole` on this thread copied unparsed.
    static COPIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn lol_settings(
    settings: &PageSettings,
    encoding: AsciiCompatibleEncoding,
    follow_meta_charset: bool,
    placed: &Arc<AtomicBool>,
) -> send::Settings<'static, 'static> {
    let memory = MemorySettings::new()
        .with_max_allowed_memory_usage(settings.memory_limit)
        .with_preallocated_parsing_buffer_size(PREALLOCATED_PARSING_BUFFER.min(settings.memory_limit))
        // Graceful bail-out would flush the unprocessed input as-is: unfiltered bytes. Never.
        .with_graceful_bail_out_on_memory_limit_exceeded(false);
    let lol_settings = send::Settings::new_send()
        .with_encoding(encoding)
        .with_adjust_charset_on_meta_tag(follow_meta_charset)
        .with_memory_settings(memory)
        // Strict: markup whose parse is ambiguous for a streaming parser is an error, not a guess.
        .with_strict(true)
        .with_graceful_bail_out_on_content_handler_error(false);
    if !settings.inject {
        return lol_settings;
    }
    let script_tag = injection::script_tag(&settings.script_src, &settings.integrity, &settings.nonce);
    let lol_settings = injection::append_handlers(lol_settings, script_tag, placed);
    meta_csp::append_handler(lol_settings, settings.nonce.clone(), settings.script_url.clone())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod filtered_tests;
