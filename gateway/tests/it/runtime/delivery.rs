//! How the runtime script travels: each client gets the content coding it prefers (brotli, gzip
//! or identity, compressed at build time) with `Vary: Accept-Encoding`, every coding decodes to
//! the very bytes the page's SRI hash covers, and Chromium runs the brotli copy.

use super::*;
use crate::harness::{get, send};
use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use std::io::Read as _;

/// Chromium's `Accept-Encoding` for a script.
const BROWSER: &str = "gzip, deflate, br, zstd";

fn runtime_request(method: &str, accept_encoding: Option<&str>) -> Request<Full<Bytes>> {
    let mut request =
        Request::builder().method(method).uri(&injector::runtime_asset().path).header("host", "app.test");
    if let Some(value) = accept_encoding {
        request = request.header("accept-encoding", value);
    }
    request.body(Full::new(Bytes::new())).expect("request")
}

fn decode(content_encoding: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut decoded = Vec::new();
    match content_encoding {
        None => decoded.extend_from_slice(body),
        Some("br") => {
            brotli_decompressor::Decompressor::new(body, 4096)
                .read_to_end(&mut decoded)
                .expect("brotli decodes");
        }
        Some("gzip") => {
            flate2::read::GzDecoder::new(body).read_to_end(&mut decoded).expect("gzip decodes");
        }
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
    decoded
}

#[tokio::test]
async fn each_client_gets_the_coding_it_prefers_and_the_same_script() {
    let app = upstream(|_| reply("text/plain", "upstream")).await;
    let gateway = harness::gateway(&[("app.test", app.address)], "").await;
    let runtime = injector::runtime_asset();
    let cases: [(Option<&str>, Option<&str>, &[u8]); 6] = [
        (Some(BROWSER), Some("br"), runtime.brotli),
        (Some("gzip, deflate"), Some("gzip"), runtime.gzip),
        // q-values beat the gateway's own order (brotli first).
        (Some("br;q=0.5, gzip"), Some("gzip"), runtime.gzip),
        (None, None, runtime.body),
        (Some("identity"), None, runtime.body),
        (Some("br;q=0, gzip;q=0, deflate"), None, runtime.body),
    ];
    for (accept_encoding, expected_coding, expected_bytes) in cases {
        let answer = send(gateway.address, runtime_request("GET", accept_encoding)).await;
        let case = format!("Accept-Encoding {accept_encoding:?}");
        assert_eq!(answer.status, StatusCode::OK, "{case}");
        assert_eq!(answer.header("content-encoding"), expected_coding, "{case}");
        assert_eq!(answer.header("vary"), Some("accept-encoding"), "{case}");
        assert_eq!(
            answer.header("content-length"),
            Some(expected_bytes.len().to_string().as_str()),
            "{case}"
        );
        assert!(answer.body == expected_bytes, "{case}: not the build's copy in that coding");
        let decoded = decode(expected_coding, &answer.body);
        assert!(decoded == runtime.body, "{case}: decodes to other bytes");
        // What a browser checks against the page's integrity attribute, after decoding.
        assert_eq!(harness::sri_sha384(&decoded), runtime.integrity, "{case}");
        assert_eq!(answer.header("cache-control"), Some("public, max-age=31536000, immutable"), "{case}");
        assert_eq!(answer.header("content-type"), Some("text/javascript; charset=utf-8"), "{case}");
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"), "{case}");
    }

    // HEAD describes the representation a GET would get, without its body.
    let head = send(gateway.address, runtime_request("HEAD", Some(BROWSER))).await;
    assert_eq!(head.header("content-encoding"), Some("br"));
    assert_eq!(head.header("content-length"), Some(runtime.brotli.len().to_string().as_str()));
    assert!(head.body.is_empty());

    let other = send(gateway.address, get("app.test", "/.toolgate/runtime.0000000000000000.js")).await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
    assert!(app.requests().is_empty(), "the upstream saw: {:?}", app.requests());
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn chromium_receives_the_brotli_copy_and_runs_it() {
    let shop = shop().await;
    let browser = Browser::launch(&[]).await;
    // `open` waits for the runtime's first round trip with the gateway: the script ran.
    let page = open(&browser, &shop, "/").await;
    let runtime = injector::runtime_asset();
    let sizes = page
        .eval(&format!(
            "(() => {{ const entry = performance.getEntriesByType('resource')
                 .find((entry) => new URL(entry.name).pathname === {path});
               return entry && {{encoded: entry.encodedBodySize, decoded: entry.decodedBodySize}}; }})()",
            path = json!(runtime.path)
        ))
        .await;
    assert_eq!(
        sizes,
        json!({"encoded": runtime.brotli.len(), "decoded": runtime.body.len()}),
        "Chromium should get the brotli copy ({} bytes) and decode it to the script ({} bytes)",
        runtime.brotli.len(),
        runtime.body.len()
    );
    assert_eq!(
        page.eval("document.documentElement.getAttribute('data-toolgate-runtime')").await,
        json!("ready")
    );
    assert!(page.console_errors().is_empty(), "{:?}", page.console_errors());
    shop.gateway.stop().await;
}
