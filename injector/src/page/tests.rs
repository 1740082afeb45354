//! Unit tests for the page rewriter's state machine: sniffing, failure, memory limit, `Send`.

use super::*;

fn settings() -> PageSettings {
    PageSettings {
        script_src: "/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        integrity: "sha384-TEST".to_owned(),
        nonce: "dG9vbGdhdGU=".to_owned(),
        script_url: "https://tasks.corp.example/.toolgate/runtime.0123456789abcdef.js".to_owned(),
        declared_charset: None,
        memory_limit: 64 * 1024,
        inject: true,
    }
}

const SCRIPT: &str = r#"<script src="/.toolgate/runtime.0123456789abcdef.js" integrity="sha384-TEST" nonce="dG9vbGdhdGU="></script>"#;

fn rewrite(settings: PageSettings, chunks: &[&[u8]]) -> (Vec<u8>, Outcome) {
    let mut rewriter = PageRewriter::new(settings);
    let mut out = Vec::new();
    for chunk in chunks {
        if let Err(error) = rewriter.write(chunk, &mut out) {
            panic!("write failed: {error}");
        }
    }
    match rewriter.end(&mut out) {
        Ok(summary) => (out, summary.outcome),
        Err(error) => panic!("end failed: {error}"),
    }
}

#[test]
fn page_rewriter_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<PageRewriter>();
}

#[test]
fn empty_body_gets_the_script() {
    let (out, outcome) = rewrite(settings(), &[]);
    assert_eq!(String::from_utf8_lossy(&out), SCRIPT);
    assert_eq!(outcome, Outcome::Injected);
}

#[test]
fn tiny_bodies_are_decided_at_the_end() {
    let (out, _) = rewrite(settings(), &[b"\xEF"]);
    assert_eq!(out, [b"\xEF", SCRIPT.as_bytes()].concat());

    let (out, outcome) = rewrite(settings(), &[b"\xFF"]);
    assert_eq!(out, [b"\xFF", SCRIPT.as_bytes()].concat());
    assert_eq!(outcome, Outcome::Injected);
}

#[test]
fn nothing_is_emitted_while_sniffing() {
    let mut rewriter = PageRewriter::new(settings());
    let mut out = Vec::new();
    assert!(rewriter.write(b"\xEF\xBB", &mut out).is_ok());
    assert!(out.is_empty());
    assert!(rewriter.write(b"\xBF<head>", &mut out).is_ok());
    assert!(out.starts_with(b"\xEF\xBB\xBF<head>"));
}

#[test]
fn utf16_declared_in_the_header_passes_through() {
    let page = b"<\0h\0e\0a\0d\0>\0";
    let settings = PageSettings { declared_charset: Some("utf-16le".to_owned()), ..settings() };
    let (out, outcome) = rewrite(settings, &[page]);
    assert_eq!(out, page);
    assert_eq!(outcome, Outcome::PassedThrough);
}

#[test]
fn debug_names_the_state() {
    let rewriter = PageRewriter::new(settings());
    assert_eq!(format!("{rewriter:?}"), r#"PageRewriter { state: "sniffing" }"#);
}

#[test]
fn ambiguous_markup_is_an_error_and_poisons_the_rewriter() {
    let mut rewriter = PageRewriter::new(settings());
    let mut out = Vec::new();
    let result = rewriter.write(b"<body><select><xmp><script>alert(1)</script></xmp></select>", &mut out);
    assert!(matches!(result, Err(RewriteError::Malformed(_))), "{result:?}");
    assert!(out.is_empty(), "nothing of the failing call may be emitted");
    assert!(matches!(rewriter.write(b"more", &mut out), Err(RewriteError::AlreadyFailed)));
    assert!(matches!(rewriter.end(&mut out), Err(RewriteError::AlreadyFailed)));
    assert!(out.is_empty());
}

#[test]
fn huge_attribute_exceeds_the_memory_limit_and_nothing_after_it_leaks() {
    // lol_html only buffers tags that some handler has to see whole; tags no selector can
    // match stream through without buffering. A <meta http-equiv> is one we must see whole.
    let mut page = b"<!DOCTYPE html><html><head><title>t</title>".to_vec();
    page.extend_from_slice(b"<meta http-equiv=\"Content-Security-Policy\" content=\"");
    page.extend(std::iter::repeat_n(b'A', 256 * 1024));
    page.extend_from_slice(b"\"><p>after-the-blob</p></head><body></body></html>");
    let settings = PageSettings { memory_limit: 16 * 1024, ..settings() };

    let mut rewriter = PageRewriter::new(settings);
    let mut out = Vec::new();
    let mut failure = None;
    for chunk in page.chunks(1024) {
        if let Err(error) = rewriter.write(chunk, &mut out) {
            failure = Some(error);
            break;
        }
    }
    assert!(matches!(failure, Some(RewriteError::MemoryLimitExceeded)), "{failure:?}");
    // Everything before the huge tag was rewritten and emitted; nothing from the tag on was.
    let emitted = String::from_utf8_lossy(&out);
    assert!(emitted.contains(SCRIPT), "{emitted}");
    assert!(emitted.ends_with("<title>t</title>"), "{emitted}");
    assert!(!emitted.contains("<meta"));
    assert!(!emitted.contains("AAAA"));
    assert!(!emitted.contains("after-the-blob"));

    let length_at_failure = out.len();
    assert!(matches!(rewriter.write(b"<p>late</p>", &mut out), Err(RewriteError::AlreadyFailed)));
    assert!(matches!(rewriter.end(&mut out), Err(RewriteError::AlreadyFailed)));
    assert_eq!(out.len(), length_at_failure);
}

#[test]
fn the_same_page_fits_a_larger_limit() {
    let mut page = b"<body><meta http-equiv=refresh content=\"".to_vec();
    page.extend(std::iter::repeat_n(b'A', 8 * 1024));
    page.extend_from_slice(b"\">x");
    let mut chunks: Vec<&[u8]> = page.chunks(1024).collect();
    chunks.push(b"</body>");
    let (out, outcome) = rewrite(settings(), &chunks);
    assert_eq!(outcome, Outcome::Injected);
    assert_eq!(out.len(), page.len() + SCRIPT.len() + "</body>".len());
}

#[test]
fn meta_charset_is_ignored_when_the_header_names_one() {
    // The header wins over <meta charset> (HTML's encoding sniffing order), so 0xE9 in the
    // rewritten meta CSP is read as UTF-8 (invalid, U+FFFD) instead of windows-1252 "é".
    let page = b"<head><meta charset=windows-1252><meta http-equiv=Content-Security-Policy content=\"script-src https://caf\xE9.example\">";
    let utf8_declared = PageSettings { declared_charset: Some("utf-8".to_owned()), ..settings() };
    let (out, _) = rewrite(utf8_declared, &[page]);
    assert!(out.windows(3).any(|bytes| bytes == "\u{FFFD}".as_bytes()));

    let (out, _) = rewrite(settings(), &[page]);
    assert!(out.windows(12).any(|bytes| bytes == b"caf\xE9.example"));
}
