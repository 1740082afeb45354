//! Compression on the way to the browser: a rewritten page goes out in the coding the browser
//! prefers (br, zstd or gzip) and decodes to exactly the page an identity client gets; it stays
//! uncompressed where it must (`no-transform`, bodiless answers, tiny pages, media); a streamed
//! page still reaches the browser piece by piece; non-page bodies keep the upstream's own coding;
//! and Chromium renders pages compressed in each coding with the runtime running.

use crate::harness::{
    self, decode_whole, gateway_with_policy, injected_nonce, navigate_accepting, reply, send, upstream,
};
use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use std::io::Write;
use std::time::Duration;

const POLICY: &str = r#"
[[rule]]
id = "reports"
tools.allow = ["export_*"]
contexts.allow = ["report_*"]
"#;

/// A page of a few kilobytes with a tool the policy allows, one it refuses and a context.
fn page() -> String {
    let mut page = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Report</title></head><body>\n\
         <tool name=\"export_report\" description=\"Export as CSV\"></tool>\n\
         <tool name=\"delete_report\" description=\"Delete it\"></tool>\n\
         <context name=\"report_summary\">All regions, caf\u{e9} included.</context>\n<table>\n",
    );
    for row in 0..120 {
        page.push_str(&format!(
            "<tr><td>Site {row}</td><td>{}</td><td>team-{}@corp.example</td></tr>\n",
            row * 7 % 50,
            row % 9
        ));
    }
    page.push_str("</table></body></html>\n");
    page
}

/// The page with its per-response nonce replaced, so two answers can be compared.
fn without_nonce(page: &str) -> String {
    let nonce = injected_nonce(page).expect("the runtime tag has a nonce");
    page.replace(&nonce, "NONCE")
}

async fn page_gateway(extra: &str) -> (harness::Upstream, gateway::app::Running, tempfile::TempDir) {
    let app = upstream(|_| reply("text/html; charset=utf-8", page())).await;
    let (gateway, directory) = gateway_with_policy(&[("app.test", app.address)], extra, POLICY).await;
    (app, gateway, directory)
}

#[tokio::test]
async fn gzip_br_and_zstd_clients_get_exactly_the_page_an_identity_client_gets() {
    let (app, gateway, _directory) = page_gateway("").await;
    let identity = send(gateway.address, navigate_accepting("app.test", "/", "identity")).await;
    assert_eq!(identity.status, StatusCode::OK);
    assert!(identity.header("content-encoding").is_none());
    assert_eq!(identity.header("vary"), Some("Accept-Encoding"), "others get it compressed");
    let expected = without_nonce(&identity.text());
    assert!(expected.contains("export_report") && !expected.contains("delete_report"), "filtered");
    assert_eq!(expected.matches(&harness::runtime_tag_prefix()).count(), 1, "injected once");
    for coding in ["gzip", "br", "zstd"] {
        let answer = send(gateway.address, navigate_accepting("app.test", "/", coding)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.header("content-encoding"), Some(coding));
        assert_eq!(answer.header("vary"), Some("Accept-Encoding"));
        assert!(answer.header("content-length").is_none(), "{coding}: streamed, no length known");
        assert!(
            answer.body.len() * 3 < answer.decoded().len(),
            "{coding}: {} B on the wire",
            answer.body.len()
        );
        assert_eq!(without_nonce(&answer.text()), expected, "{coding}");
    }
    // The upstream is still asked for identity: the gateway compresses what it rewrote.
    assert!(app.requests().iter().all(|seen| seen.headers["accept-encoding"] == "identity"));
    gateway.stop().await;
}

#[tokio::test]
async fn q_values_choose_the_coding() {
    let (_app, gateway, _directory) = page_gateway("").await;
    let cases: [(&str, Option<&str>); 9] = [
        ("gzip, deflate, br, zstd", Some("br")),
        ("br;q=0.5, gzip", Some("gzip")),
        ("gzip;q=0.5, zstd;q=0.9, br;q=0.1", Some("zstd")),
        ("*", Some("br")),
        ("br;q=0, *", Some("zstd")),
        ("*;q=0", None),
        ("identity", None),
        ("gzip;q=0.5, identity", None),
        ("deflate, compress", None),
    ];
    for (accept_encoding, expected) in cases {
        let answer = send(gateway.address, navigate_accepting("app.test", "/", accept_encoding)).await;
        assert_eq!(answer.header("content-encoding"), expected, "{accept_encoding}");
        assert_eq!(answer.header("vary"), Some("Accept-Encoding"), "{accept_encoding}");
        assert!(answer.text().contains("export_report"), "{accept_encoding}");
    }
    // No Accept-Encoding at all: no coding.
    let answer = send(gateway.address, harness::get("app.test", "/")).await;
    assert!(answer.header("content-encoding").is_none());
    gateway.stop().await;
}

#[tokio::test]
async fn configured_codings_and_levels_are_the_only_ones_used() {
    let (_app, gateway, _directory) =
        page_gateway("[compression]\ncodings = [\"gzip\"]\ngzip_level = 1").await;
    let answer = send(gateway.address, navigate_accepting("app.test", "/", "br, zstd, gzip;q=0.1")).await;
    assert_eq!(answer.header("content-encoding"), Some("gzip"));
    assert!(answer.text().contains("export_report"));
    let refused = send(gateway.address, navigate_accepting("app.test", "/", "br, zstd")).await;
    assert!(refused.header("content-encoding").is_none());
    gateway.stop().await;

    let (_app, gateway, _directory) = page_gateway("[compression]\ncodings = []").await;
    let off = send(gateway.address, navigate_accepting("app.test", "/", "gzip, br, zstd")).await;
    assert!(off.header("content-encoding").is_none());
    assert!(off.header("vary").is_none(), "nothing depends on Accept-Encoding any more");
    gateway.stop().await;
}

#[tokio::test]
async fn no_transform_is_respected_and_the_validator_stays_weak() {
    let app = upstream(|seen| {
        let mut response = reply("text/html", page());
        let headers = response.headers_mut();
        headers.insert("etag", "\"v1\"".parse().expect("etag"));
        headers.insert("vary", "Cookie".parse().expect("vary"));
        if seen.uri.path() == "/kept" {
            headers.insert("cache-control", "max-age=60, no-transform".parse().expect("cache-control"));
        }
        response
    })
    .await;
    let (gateway, _directory) = gateway_with_policy(&[("app.test", app.address)], "", POLICY).await;
    let kept = send(gateway.address, navigate_accepting("app.test", "/kept", "gzip, br, zstd")).await;
    assert!(kept.header("content-encoding").is_none(), "no-transform: the coding is the upstream's");
    assert_eq!(kept.header("vary"), Some("Cookie"), "the answer does not depend on Accept-Encoding");
    assert_eq!(kept.decoded(), kept.body, "sent as it is");
    assert!(
        kept.text().contains("export_report") && !kept.text().contains("delete_report"),
        "still filtered"
    );

    // A compressed page never carries the upstream's strong validator: weak, and Vary merged.
    let compressed = send(gateway.address, navigate_accepting("app.test", "/", "br")).await;
    assert_eq!(compressed.header("content-encoding"), Some("br"));
    assert_eq!(compressed.header("etag"), Some("W/\"v1\""));
    assert_eq!(compressed.headers.get_all("vary").iter().collect::<Vec<_>>(), ["Cookie, Accept-Encoding"]);
    gateway.stop().await;
}

#[tokio::test]
async fn media_tiny_pages_and_bodiless_answers_are_never_compressed() {
    let image: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let image_bytes = image.clone();
    let app = upstream(move |seen| match seen.uri.path() {
        "/logo.png" => reply("image/png", image_bytes.clone()),
        "/font.woff2" => reply("font/woff2", image_bytes.clone()),
        "/tiny" => reply("text/html", "<html><head></head><body>small</body></html>"),
        "/unchanged" => {
            let mut response = reply("text/html", "");
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response
        }
        _ => reply("text/html", page()),
    })
    .await;
    let (gateway, _directory) = gateway_with_policy(&[("app.test", app.address)], "", POLICY).await;
    let accepting = |path: &str| navigate_accepting("app.test", path, "gzip, br, zstd");
    for path in ["/logo.png", "/font.woff2"] {
        let media = send(gateway.address, accepting(path)).await;
        assert!(media.header("content-encoding").is_none(), "{path}");
        assert_eq!(media.body, image, "{path}: the upstream's bytes, untouched");
    }
    let tiny = send(gateway.address, accepting("/tiny")).await;
    assert!(tiny.header("content-encoding").is_none());
    assert!(tiny.header("vary").is_none());
    assert!(tiny.text().contains("small</body>") && tiny.text().contains("<script src="), "rewritten");
    let unchanged = send(gateway.address, accepting("/unchanged")).await;
    assert_eq!(unchanged.status, StatusCode::NOT_MODIFIED);
    assert!(unchanged.header("content-encoding").is_none() && unchanged.body.is_empty());
    let head = http::Request::head("/")
        .header("host", "app.test")
        .header("accept-encoding", "gzip, br, zstd")
        .body(Full::new(Bytes::new()))
        .expect("request");
    let head = send(gateway.address, head).await;
    assert!(head.header("content-encoding").is_none() && head.body.is_empty());
    gateway.stop().await;

    // The threshold is what kept the tiny page plain.
    let app = upstream(|_| reply("text/html", "<html><head></head><body>small</body></html>")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[compression]\nmin_size = 0").await;
    let tiny = send(gateway.address, navigate_accepting("app.test", "/", "br")).await;
    assert_eq!(tiny.header("content-encoding"), Some("br"));
    assert!(tiny.text().contains("small</body>"));
    gateway.stop().await;
}

#[tokio::test]
async fn non_page_bodies_keep_the_upstream_s_own_coding() {
    const JSON: &str = r#"{"items": [1, 2, 3], "note": "the upstream compressed this itself"}"#;
    let app = upstream(|seen| {
        let asked = seen.headers.get("accept-encoding").and_then(|value| value.to_str().ok()).unwrap_or("");
        let (coding, body) = if asked.contains("zstd") {
            ("zstd", zstd::encode_all(JSON.as_bytes(), 3).expect("zstd"))
        } else if asked.contains("gzip") {
            let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(JSON.as_bytes()).expect("gzip");
            ("gzip", encoder.finish().expect("gzip"))
        } else {
            ("identity", JSON.as_bytes().to_vec())
        };
        let mut response = reply("application/json", body);
        if coding != "identity" {
            response.headers_mut().insert("content-encoding", coding.parse().expect("coding"));
        }
        response
    })
    .await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let fetch = |accept_encoding: &'static str| {
        http::Request::get("/api")
            .header("host", "app.test")
            .header("accept", "application/json")
            .header("accept-encoding", accept_encoding)
            .body(Full::new(Bytes::new()))
            .expect("request")
    };
    for (accept_encoding, coding) in [("zstd, gzip;q=0.5, dcb", "zstd"), ("gzip, compress", "gzip")] {
        let answer = send(gateway.address, fetch(accept_encoding)).await;
        assert_eq!(answer.header("content-encoding"), Some(coding), "{accept_encoding}");
        assert_eq!(answer.text(), JSON, "{accept_encoding}");
        assert_eq!(decode_whole(coding, &answer.body), JSON.as_bytes(), "the upstream's own stream");
    }
    let asked: Vec<String> = app
        .requests()
        .iter()
        .map(|seen| seen.headers["accept-encoding"].to_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(asked, ["zstd, gzip;q=0.5", "gzip"], "only codings the gateway could decode are asked for");
    // The gateway never compresses a body that is not a page itself.
    let plain = send(gateway.address, fetch("identity")).await;
    assert!(plain.header("content-encoding").is_none());
    let navigated = send(gateway.address, navigate_accepting("app.test", "/api", "gzip, br, zstd")).await;
    assert!(navigated.header("content-encoding").is_none(), "a navigation asks for identity");
    assert_eq!(navigated.text(), JSON);
    gateway.stop().await;
}

/// Decodes a compressed stream as its pieces arrive, as a browser does.
struct StreamDecoder(Box<dyn Write + Send>, std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

/// A `Write` whose bytes the test can read while the decoder still owns it.
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("decoded").extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl StreamDecoder {
    fn new(coding: &str) -> Self {
        let decoded = std::sync::Arc::default();
        let sink = Shared(std::sync::Arc::clone(&decoded));
        let writer: Box<dyn Write + Send> = match coding {
            "gzip" => Box::new(flate2::write::GzDecoder::new(sink)),
            "br" => Box::new(brotli_decompressor::DecompressorWriter::new(sink, 4096)),
            "zstd" => Box::new(zstd::stream::write::Decoder::new(sink).expect("zstd")),
            other => panic!("no decoder for {other}"),
        };
        Self(writer, decoded)
    }

    /// Feeds a piece; returns everything decoded so far.
    fn push(&mut self, piece: &[u8]) -> String {
        self.0.write_all(piece).expect("the stream decodes");
        self.0.flush().expect("the stream decodes");
        String::from_utf8_lossy(&self.1.lock().expect("decoded")).into_owned()
    }
}

#[tokio::test]
async fn a_compressed_page_streams_before_the_upstream_finishes() {
    for coding in ["gzip", "br", "zstd"] {
        let (sender, app) = harness::streaming_upstream("text/html").await;
        let gateway = harness::gateway(&[("app.test", app.address)], "").await;
        sender
            .send(Bytes::from_static(b"<html><head><title>big</title></head><body>\n"))
            .await
            .expect("send");
        let response = harness::open(gateway.address, navigate_accepting("app.test", "/", coding)).await;
        assert_eq!(response.headers()["content-encoding"], coding);
        let mut body = response.into_body();
        let mut decoder = StreamDecoder::new(coding);
        let mut decoded = String::new();
        // Each piece the upstream sends must come out, decodable, while the upstream still waits.
        let pieces = [
            ("", "<head><script src="),
            ("<p>second piece</p>\n", "second piece</p>"),
            ("<p>third piece</p>\n", "third piece</p>"),
        ];
        for (piece, wanted) in pieces {
            if !piece.is_empty() {
                sender.send(Bytes::from(piece)).await.expect("send");
            }
            while !decoded.contains(wanted) {
                let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
                    .await
                    .unwrap_or_else(|_| panic!("{coding}: {wanted:?} held back while the upstream waits"))
                    .expect("frame")
                    .expect("ok");
                decoded = decoder.push(&frame.into_data().expect("data"));
            }
        }
        sender.send(Bytes::from_static(b"</body></html>")).await.expect("send");
        drop(sender);
        while let Some(frame) = body.frame().await {
            decoded = decoder.push(&frame.expect("ok").into_data().expect("data"));
        }
        assert!(decoded.starts_with("<html><head><script src="), "{coding}: {decoded}");
        assert!(decoded.ends_with("<p>third piece</p>\n</body></html>"), "{coding}: {decoded}");
        gateway.stop().await;
    }
}

#[tokio::test]
async fn a_compressed_page_cut_after_its_head_ends_in_an_error() {
    let huge = crate::pages::over_memory_page();
    let app = upstream(move |_| reply("text/html", huge.clone())).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "[limits]\nrewrite_memory = 65536").await;
    let response = harness::open(gateway.address, navigate_accepting("app.test", "/", "br")).await;
    assert_eq!(response.status(), StatusCode::OK, "the head was already on its way");
    assert_eq!(response.headers()["content-encoding"], "br");
    let mut body = response.into_body();
    let mut decoder = StreamDecoder::new("br");
    let mut decoded = String::new();
    let outcome = loop {
        match body.frame().await {
            Some(Ok(frame)) => decoded = decoder.push(&frame.into_data().unwrap_or_default()),
            Some(Err(error)) => break Err(error),
            None => break Ok(()),
        }
    };
    assert!(outcome.is_err(), "the stream must end in an error, not a clean end");
    assert!(decoded.contains("<title>t</title>"));
    assert!(
        !decoded.contains("secret") && !decoded.contains("aaaa"),
        "nothing after the failure point leaks"
    );
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_renders_pages_compressed_in_each_coding_and_the_runtime_runs() {
    let browser = crate::cdp::Browser::launch(&[]).await;
    for coding in ["br", "zstd", "gzip"] {
        // A tab per gateway: the previous page's requests to a stopped gateway are not this one's.
        let tab = browser.page().await;
        let app = upstream(|_| reply("text/html; charset=utf-8", page())).await;
        let config = format!("[compression]\ncodings = [\"{coding}\"]");
        let (gateway, _directory) =
            gateway_with_policy(&[("report.localhost", app.address)], &config, POLICY).await;
        let identity = send(gateway.address, navigate_accepting("report.localhost", "/", "identity")).await;
        tab.goto(&format!("http://report.localhost:{}/", gateway.address.port())).await;
        let marker = tab.eval("document.documentElement.getAttribute('data-toolgate-runtime')").await;
        assert_eq!(marker, "ready", "{coding}: the runtime ran");
        let sizes = tab
            .eval(
                "(() => { const n = performance.getEntriesByType('navigation')[0]; \
                 return [n.encodedBodySize, n.decodedBodySize]; })()",
            )
            .await;
        let (encoded, decoded) = (sizes[0].as_u64().unwrap_or(0), sizes[1].as_u64().unwrap_or(0));
        assert_eq!(decoded, identity.body.len() as u64, "{coding}: Chromium decoded the whole page");
        assert!(encoded > 0 && encoded * 3 < decoded, "{coding}: {encoded} B on the wire for {decoded} B");
        let rows = tab.eval("document.querySelectorAll('tr').length").await;
        assert_eq!(rows, 120, "{coding}");
        assert!(tab.console_errors().is_empty(), "{coding}: {:?}", tab.console_errors());
        gateway.stop().await;
    }
}
