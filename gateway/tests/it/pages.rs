//! HTML pages through the gateway: the runtime is injected once in the right place whatever
//! the markup, encoding or compression; rewritten responses get their headers fixed; pages
//! that cannot be rewritten are refused, never passed unrewritten.

use crate::harness::{
    self, injected_nonce, navigate, navigate_accepting, reply, runtime_tag_prefix, send, upstream,
};
use bytes::Bytes;
use http::StatusCode;
use http_body_util::BodyExt;
use std::io::Write;
use std::time::Duration;

async fn page_through_gateway(
    content_type: &'static str,
    page: Vec<u8>,
    extra_headers: &'static [(&'static str, &'static str)],
) -> harness::Answer {
    let app = upstream(move |_| {
        let mut response = reply(content_type, page.clone());
        for (name, value) in extra_headers {
            response.headers_mut().append(*name, value.parse().expect("header"));
        }
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, navigate("app.test", "/")).await;
    assert_eq!(app.requests()[0].headers["accept-encoding"], "identity", "navigations ask for identity");
    gateway.stop().await;
    answer
}

fn count_injections(page: &str) -> usize {
    page.matches(&runtime_tag_prefix()).count()
}

#[tokio::test]
async fn injected_at_head_start_else_body_start_else_document_end() {
    let cases: [(&str, &str); 3] = [
        ("<!doctype html><html><head><title>t</title></head><body>x</body></html>", "<head><script src="),
        ("<!doctype html><html><body class=\"a\"><p>x</p></body></html>", "<body class=\"a\"><script src="),
        ("<p>fragment without head or body</p>", "</p><script src="),
    ];
    for (input, expected) in cases {
        let answer = page_through_gateway("text/html; charset=utf-8", input.as_bytes().to_vec(), &[]).await;
        assert_eq!(answer.status, StatusCode::OK);
        let page = answer.text();
        assert_eq!(count_injections(&page), 1, "{page}");
        assert!(page.contains(expected), "expected {expected:?} in {page}");
        // A blocking script: it must run before the page's own scripts.
        let tag_end =
            page[page.find(&harness::runtime_tag_prefix()).unwrap_or(0)..].find("></script>").unwrap_or(0);
        let tag = &page[page.find(&harness::runtime_tag_prefix()).unwrap_or(0)..][..tag_end];
        assert!(!tag.contains("defer") && !tag.contains("async"), "{tag}");
        let without_tag = remove_injection(&page);
        assert_eq!(without_tag, input, "nothing but the tag changes");
    }
}

#[tokio::test]
async fn rewritten_responses_fix_length_validators_and_caching() {
    let page = b"<html><head></head><body>hello</body></html>".to_vec();
    let answer = page_through_gateway(
        "text/html",
        page,
        &[("etag", "\"v1\""), ("cache-control", "public, max-age=300"), ("accept-ranges", "bytes")],
    )
    .await;
    assert!(answer.header("content-length").is_none());
    assert_eq!(answer.header("etag"), Some("W/\"v1\""));
    assert_eq!(answer.header("cache-control"), Some("private, max-age=300"));
    assert!(answer.header("accept-ranges").is_none());
}

#[tokio::test]
async fn utf8_bom_and_windows_1252_survive_byte_for_byte() {
    let mut with_bom = vec![0xEF, 0xBB, 0xBF];
    with_bom.extend_from_slice("<html><head></head><body>café</body></html>".as_bytes());
    let answer = page_through_gateway("text/html", with_bom.clone(), &[]).await;
    assert!(answer.body.starts_with(&[0xEF, 0xBB, 0xBF]), "BOM kept");
    assert_eq!(count_injections(&answer.text()), 1);

    let latin = b"<html><head></head><body>caf\xe9 \xa3 \x80</body></html>".to_vec();
    let answer = page_through_gateway("text/html; charset=windows-1252", latin, &[]).await;
    assert!(answer.body.windows(4).any(|w| w == b"caf\xe9"), "windows-1252 bytes untouched");
    assert!(answer.body.windows(3).any(|w| w == b"\xa3 \x80"));
    let injected = remove_injection_bytes(&answer.body);
    assert_eq!(injected, b"<html><head></head><body>caf\xe9 \xa3 \x80</body></html>");
}

#[tokio::test]
async fn utf16_pages_are_refused_never_passed_unfiltered() {
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "<html><head></head><body><tool name=\"secret\"></tool></body></html>".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let app = upstream(move |_| reply("text/html", utf16.clone())).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, navigate("app.test", "/")).await;
    assert_eq!(answer.status, 502);
    assert_eq!(answer.header("x-toolgate-reason"), Some("page_encoding"));
    assert!(answer.text().contains("UTF-16"), "{}", answer.text());
    let metrics = crate::passthrough::metrics_text(gateway.admin_address).await;
    assert!(
        metrics.contains("toolgate_rewrite_failures_total{reason=\"page_encoding\",site=\"site0\"} 1"),
        "{metrics}"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn gzip_deflate_and_brotli_pages_are_decoded_and_injected() {
    let plain = "<html><head><title>compressed</title></head><body>é</body></html>".repeat(50);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(plain.as_bytes()).expect("gzip");
    let gzip = gzip.finish().expect("gzip");
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    deflate.write_all(plain.as_bytes()).expect("deflate");
    let deflate = deflate.finish().expect("deflate");
    for (coding, body) in [("gzip", gzip), ("deflate", deflate)] {
        let app = upstream(move |_| {
            let mut response = reply("text/html", body.clone());
            response.headers_mut().insert("content-encoding", coding.parse().expect("coding"));
            response
        })
        .await;
        let gateway = harness::gateway(&[("app.test", app.address)], "").await;
        let answer = send(gateway.address, navigate("app.test", "/")).await;
        // Never the upstream's own bytes: decoded, rewritten and compressed again for the browser.
        assert_eq!(answer.header("content-encoding"), Some("br"), "{coding}");
        let page = answer.text();
        assert_eq!(count_injections(&page), 1, "{coding}: exactly once, at the first <head>");
        assert_eq!(remove_injection(&page), plain, "{coding}");
        gateway.stop().await;
    }

    let brotli_page = include_bytes!("../fixtures/sample.html.br").to_vec();
    let expected_plain = "<html><body>hello world, é and 漢字</body></html>\n".repeat(400);
    let app = upstream(move |_| {
        let mut response = reply("text/html; charset=utf-8", brotli_page.clone());
        response.headers_mut().insert("content-encoding", "br".parse().expect("coding"));
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, navigate("app.test", "/")).await;
    let page = answer.text();
    assert_eq!(count_injections(&page), 1, "injected at the first <body> only");
    assert_eq!(remove_injection(&page), expected_plain);
    gateway.stop().await;
}

#[tokio::test]
async fn unsupported_encoding_and_corrupt_gzip_are_refused_not_passed() {
    for (coding, body) in
        [("zstd", b"(\xb5/\xfd whatever".to_vec()), ("gzip", b"not gzip <tool name=x>".to_vec())]
    {
        let app = upstream(move |_| {
            let mut response = reply("text/html", body.clone());
            response.headers_mut().insert("content-encoding", coding.parse().expect("coding"));
            response
        })
        .await;
        let gateway = harness::gateway(&[("app.test", app.address)], "").await;
        let answer = send(gateway.address, navigate("app.test", "/")).await;
        assert_eq!(answer.status, StatusCode::BAD_GATEWAY, "{coding}");
        assert!(!answer.text().contains("<tool"), "{coding}");
        gateway.stop().await;
    }
}

#[tokio::test]
async fn page_over_the_memory_limit_before_any_output_is_refused_with_502() {
    // The rewriter must see a `<meta http-equiv>` whole; this one is larger than it may buffer,
    // and nothing precedes it, so the failure happens before the response headers.
    let huge =
        format!("<meta http-equiv=\"refresh\" content=\"{}\"><body>secret</body>", "a".repeat(300_000));
    let app = upstream(move |_| reply("text/html", huge.clone())).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[limits]\nrewrite_memory = 65536").await;
    let answer = send(gateway.address, navigate("app.test", "/")).await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert_eq!(answer.header("x-toolgate-reason"), Some("rewrite_memory"));
    assert!(!answer.text().contains("secret"));
    let metrics = crate::passthrough::metrics_text(gateway.admin_address).await;
    assert!(
        metrics.contains("toolgate_rewrite_failures_total{reason=\"rewrite_memory\",site=\"site0\"} 1"),
        "{metrics}"
    );
    gateway.stop().await;
}

/// A page whose head fits a 64 KiB rewriter memory limit and whose next tag does not: the
/// stream is cut after the head went out.
pub(crate) fn over_memory_page() -> String {
    format!(
        "<html><head><title>t</title>{}<meta http-equiv=\"refresh\" content=\"{}\"></head><body>secret</body></html>",
        "<link rel=\"preload\" href=\"/x\">".repeat(2000),
        "a".repeat(300_000)
    )
}

#[tokio::test]
async fn page_over_the_memory_limit_after_output_is_cut_never_passed() {
    let huge = crate::pages::over_memory_page();
    let app = upstream(move |_| reply("text/html", huge.clone())).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[limits]\nrewrite_memory = 65536").await;
    // Read on the wire as it is cut (compression.rs has the same cut for a compressed stream).
    let response = harness::open(gateway.address, navigate_accepting("app.test", "/", "identity")).await;
    assert_eq!(response.status(), StatusCode::OK, "the head was already on its way");
    let mut body = response.into_body();
    let mut received = Vec::new();
    let outcome = loop {
        match body.frame().await {
            Some(Ok(frame)) => received.extend_from_slice(&frame.into_data().unwrap_or_default()),
            Some(Err(error)) => break Err(error),
            None => break Ok(()),
        }
    };
    assert!(outcome.is_err(), "the stream must end in an error, not a clean end");
    let received = String::from_utf8_lossy(&received);
    assert!(received.contains("<title>t</title>"));
    assert!(
        !received.contains("secret") && !received.contains("aaaa"),
        "nothing after the failure point leaks"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn head_and_non_html_are_not_rewritten_and_unlabelled_bodies_cannot_be_sniffed() {
    let app = upstream(|seen| match seen.uri.path() {
        "/unlabelled" => {
            let mut response = reply("text/html", "<tool name=\"secret\"></tool>");
            response.headers_mut().remove("content-type");
            response
        }
        "/json" => reply("application/json", "{\"html\": \"<head></head>\"}"),
        _ => reply("text/html", "<html><head></head></html>"),
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let head = http::Request::head("/")
        .header("host", "app.test")
        .body(http_body_util::Full::new(Bytes::new()))
        .expect("request");
    let head = send(gateway.address, head).await;
    assert!(head.body.is_empty());
    assert!(head.header("cache-control").is_none(), "HEAD answers are not rewritten");
    let json = send(gateway.address, navigate("app.test", "/json")).await;
    assert_eq!(json.text(), "{\"html\": \"<head></head>\"}");
    // Without a Content-Type a browser would sniff this into a page with a tool in it.
    let unlabelled = send(gateway.address, navigate("app.test", "/unlabelled")).await;
    assert_eq!(unlabelled.header("x-content-type-options"), Some("nosniff"));
    gateway.stop().await;
}

#[tokio::test]
async fn xhtml_is_served_as_html_and_xml_documents_get_no_page_tools() {
    let app = upstream(|seen| match seen.uri.path() {
        "/page.xhtml" => reply(
            "application/xhtml+xml; charset=utf-8",
            "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head></head><body><style><tool name=\"s\"/></style></body></html>",
        ),
        _ => reply("image/svg+xml", "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"),
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let page = send(gateway.address, navigate("app.test", "/page.xhtml")).await;
    // Parsed as HTML by the browser too, so the filter and the browser agree on what is markup.
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(count_injections(&page.text()), 1);
    let svg = send(gateway.address, navigate("app.test", "/icon.svg")).await;
    assert_eq!(svg.header("permissions-policy"), Some("tools=()"));
    assert_eq!(svg.text(), "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", "not rewritten");
    gateway.stop().await;
}

#[tokio::test]
async fn a_range_of_a_page_is_fetched_whole_and_filtered() {
    let app = upstream(|seen| {
        let page = "<html><head></head><body><tool name=\"secret\"></tool>ok</body></html>";
        if seen.headers.contains_key("range") {
            let mut response = reply("text/html", &page[..20]);
            *response.status_mut() = StatusCode::PARTIAL_CONTENT;
            response.headers_mut().insert("content-range", "bytes 0-19/70".parse().expect("value"));
            return response;
        }
        reply("text/html", page)
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let mut ranged = navigate("app.test", "/");
    ranged.headers_mut().insert("range", "bytes=0-19".parse().expect("value"));
    ranged.headers_mut().insert("if-range", "\"v1\"".parse().expect("value"));
    let answer = send(gateway.address, ranged).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.text().contains("ok</body>"), "{}", answer.text());
    assert!(!answer.text().contains("secret"), "the built-in policy hides every tool: {}", answer.text());
    assert!(answer.header("content-range").is_none());
    let seen = app.requests();
    assert_eq!(seen.len(), 2);
    assert!(!seen[1].headers.contains_key("range") && !seen[1].headers.contains_key("if-range"));

    // A 206 page nobody asked a range of cannot be repaired: refused, never passed through.
    let app = upstream(|_| {
        let mut response = reply("text/html", "<tool name=\"secret\">");
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let answer = send(gateway.address, navigate("app.test", "/")).await;
    assert_eq!(answer.status, StatusCode::BAD_GATEWAY);
    assert!(!answer.text().contains("secret"));
    gateway.stop().await;
}

#[tokio::test]
async fn large_page_streams_first_bytes_before_the_upstream_finishes() {
    let (sender, app) = harness::streaming_upstream("text/html").await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let feeder = tokio::spawn(async move {
        sender.send(Bytes::from_static(b"<html><head><title>big</title></head><body>")).await.expect("send");
        sender
    });
    // Counted on the wire (compression.rs streams a compressed page the same way).
    let response = harness::open(gateway.address, navigate_accepting("app.test", "/", "identity")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let sender = feeder.await.expect("feeder");
    let mut body = response.into_body();
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("first bytes arrive while the upstream is still sending")
        .expect("frame")
        .expect("ok")
        .into_data()
        .expect("data");
    assert!(
        String::from_utf8_lossy(&first).contains("<head><script src="),
        "the head with the tag comes first"
    );
    // One megabyte more in 64 KiB chunks; each one must come through before the next is sent.
    let chunk = Bytes::from("<p>row of a very long page</p>\n".repeat(2048));
    let mut received = first.len();
    for _ in 0..16 {
        sender.send(chunk.clone()).await.expect("send");
        let mut got = 0;
        while got < chunk.len() {
            let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
                .await
                .expect("streamed")
                .expect("frame")
                .expect("ok");
            got += frame.into_data().map(|d| d.len()).unwrap_or(0);
        }
        received += got;
    }
    drop(sender);
    while let Some(frame) = body.frame().await {
        received += frame.expect("ok").into_data().map(|d| d.len()).unwrap_or(0);
    }
    assert!(received > 16 * chunk.len());
    gateway.stop().await;
}

#[tokio::test]
async fn nonce_on_the_tag_is_fresh_per_response() {
    let app = upstream(|_| reply("text/html", "<html><head></head></html>")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let first = injected_nonce(&send(gateway.address, navigate("app.test", "/")).await.text());
    let second = injected_nonce(&send(gateway.address, navigate("app.test", "/")).await.text());
    assert!(first.is_some() && first != second);
    gateway.stop().await;
}

/// The page with the injected tag removed.
pub fn remove_injection(page: &str) -> String {
    String::from_utf8(remove_injection_bytes(page.as_bytes())).expect("utf-8 page")
}

pub fn remove_injection_bytes(page: &[u8]) -> Vec<u8> {
    let prefix = runtime_tag_prefix();
    let mut output = page.to_vec();
    while let Some(start) = find(&output, prefix.as_bytes()) {
        let end = find(&output[start..], b"</script>").expect("tag closes") + start + "</script>".len();
        output.drain(start..end);
    }
    output
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// A form rule scoped with `path` makes a tool only on its pages: Django's "add" and "change"
/// pages share `form#employee_form`, and the add tool must never appear on a change page.
#[tokio::test]
async fn a_form_rule_with_a_path_makes_its_tool_only_on_those_pages() {
    const FORM: &str = "<!doctype html><html><head></head><body>\
        <form id=\"employee_form\" method=\"post\"><input name=\"name\"><button>Save</button></form></body></html>";
    let app = upstream(|_| reply("text/html; charset=utf-8", FORM)).await;
    let (gateway, _policy) = harness::gateway_with_site_tables(
        &[("app.test", app.address)],
        "[[sites.site0.forms.rule]]\nselector = \"form#employee_form\"\n\
         name = \"add_employee\"\ndescription = \"Create an employee record\"\n\
         path = \"/admin/staff/employee/add/\"\n",
        "[defaults]\nunknown_tools = \"allow\"\nunknown_contexts = \"allow\"\n",
    )
    .await;

    let add = send(gateway.address, navigate("app.test", "/admin/staff/employee/add/")).await.text();
    assert!(add.contains("toolname=\"add_employee\""), "the add page offers the tool: {add}");
    let change = send(gateway.address, navigate("app.test", "/admin/staff/employee/1/change/")).await.text();
    assert!(change.contains("id=\"employee_form\""), "{change}");
    assert!(!change.contains("toolname"), "the change page offers no add tool: {change}");
    gateway.stop().await;
}
