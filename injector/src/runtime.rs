//! The discovery runtime script that ships inside the binary.
//!
//! `build.rs` concatenates the parts (`injector/runtime/parts/*.js`, documented in
//! `injector/runtime/README.md`) in a fixed order inside one strict-mode wrapper, minifies the
//! result (comments and layout only) and precompresses it with brotli and gzip. This module holds
//! those bytes and derives, once on first use, the content-hashed path (so the script can be cached
//! forever) and the Subresource Integrity hash (so a tampered copy never runs). Both are taken over
//! the identity bytes: a browser checks SRI after it has undone the content coding.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256, Sha384};

/// The minified runtime (the identity bytes), written by `build.rs`.
const RUNTIME_MINIFIED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runtime.min.js"));
/// [`RUNTIME_MINIFIED`] compressed with brotli at build time.
const RUNTIME_BROTLI: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runtime.min.js.br"));
/// [`RUNTIME_MINIFIED`] compressed with gzip at build time.
const RUNTIME_GZIP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/runtime.min.js.gz"));

/// Every runtime URL lives under the gateway's reserved prefix.
const RUNTIME_PATH_PREFIX: &str = "/.toolgate/runtime.";

/// How many hex digits of the SHA-256 go into the file name: 64 bits is plenty to tell builds
/// apart, and short enough to keep the URL readable.
const PATH_HASH_HEX_DIGITS: usize = 16;

/// The runtime script as the gateway serves it: one representation in three content codings.
#[derive(Debug)]
pub struct RuntimeAsset {
    /// Path on every site host, e.g. `/.toolgate/runtime.0123456789abcdef.js`; the hex part is the
    /// start of the SHA-256 of [`RuntimeAsset::body`], so a new build gets a new URL.
    pub path: String,
    /// Subresource Integrity value for the `<script integrity>` attribute: `sha384-<base64>` of
    /// [`RuntimeAsset::body`].
    pub integrity: String,
    /// The minified script itself (`text/javascript; charset=utf-8`), for clients that accept
    /// neither brotli nor gzip.
    pub body: &'static [u8],
    /// [`RuntimeAsset::body`] compressed with brotli, to be sent with `Content-Encoding: br`.
    pub brotli: &'static [u8],
    /// [`RuntimeAsset::body`] compressed with gzip, to be sent with `Content-Encoding: gzip`.
    pub gzip: &'static [u8],
}

/// Returns the embedded runtime, hashing it on the first call only.
pub fn runtime_asset() -> &'static RuntimeAsset {
    static ASSET: OnceLock<RuntimeAsset> = OnceLock::new();
    ASSET.get_or_init(|| RuntimeAsset::new(RUNTIME_MINIFIED, RUNTIME_BROTLI, RUNTIME_GZIP))
}

impl RuntimeAsset {
    fn new(body: &'static [u8], brotli: &'static [u8], gzip: &'static [u8]) -> Self {
        let path_digest = Sha256::digest(body);
        let mut path_hash = String::with_capacity(PATH_HASH_HEX_DIGITS);
        for byte in path_digest.iter().take(PATH_HASH_HEX_DIGITS / 2) {
            path_hash.push_str(&format!("{byte:02x}"));
        }
        let integrity = format!("sha384-{}", BASE64.encode(Sha384::digest(body)));
        Self { path: format!("{RUNTIME_PATH_PREFIX}{path_hash}.js"), integrity, body, brotli, gzip }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    /// The parts concatenated and wrapped, before minification: what developers edit.
    const RUNTIME_SOURCE: &str = include_str!(concat!(env!("OUT_DIR"), "/runtime.js"));

    /// Issue 19's budget for the runtime on the wire, with brotli.
    const BROTLI_BUDGET_BYTES: usize = 45_000;

    #[test]
    fn path_is_reserved_and_content_hashed() {
        let asset = runtime_asset();
        let hash = asset.path.strip_prefix("/.toolgate/runtime.").and_then(|rest| rest.strip_suffix(".js"));
        let Some(hash) = hash else {
            panic!("unexpected runtime path {}", asset.path);
        };
        assert_eq!(hash.len(), 16);
        assert!(hash.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')));
        let full_hex: String = Sha256::digest(asset.body).iter().map(|byte| format!("{byte:02x}")).collect();
        assert!(full_hex.starts_with(hash));
    }

    #[test]
    fn integrity_is_sha384_of_the_body() {
        let asset = runtime_asset();
        let Some(encoded) = asset.integrity.strip_prefix("sha384-") else {
            panic!("integrity must name sha384: {}", asset.integrity);
        };
        let decoded = BASE64.decode(encoded).unwrap_or_default();
        assert_eq!(decoded.len(), 48);
        assert_eq!(decoded.as_slice(), Sha384::digest(asset.body).as_slice());
    }

    #[test]
    fn known_input_gives_known_path_and_integrity() {
        // Pins the derivation against independent values (sha256sum / openssl dgst -sha384).
        let asset = RuntimeAsset::new(b"abc", b"", b"");
        assert_eq!(asset.path, "/.toolgate/runtime.ba7816bf8f01cfea.js");
        assert_eq!(
            asset.integrity,
            "sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"
        );
    }

    #[test]
    fn parts_are_wrapped_in_one_strict_function_in_contract_order() {
        let source = RUNTIME_SOURCE;
        assert!(source.starts_with("(function toolgateRuntime() {\n'use strict';\n// 00-core.js"));
        assert!(source.ends_with("\n})();\n"));
        let headers = [
            "// 00-core.js",
            "// 10-schema.js",
            "// 20-voix.js",
            "// 30-webmcp.js",
            "// 35-native.js",
            "// 40-forms.js",
            "// 45-forms-execute.js",
            "// 50-ci4a.js",
            "// 60-agent.js",
            "// 65-panel-look.js",
            "// 70-panel.js",
            "// 90-start.js",
        ];
        let positions: Vec<usize> = headers
            .iter()
            .map(|header| source.find(header).unwrap_or_else(|| panic!("{header} is missing")))
            .collect();
        assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "parts out of order: {positions:?}");
        assert_eq!(source.matches("'use strict'").count(), 1, "one wrapper, no part adds its own");
    }

    #[test]
    fn runtime_guards_reentry_before_anything_else_and_marks_the_document() {
        let source = RUNTIME_SOURCE;
        let guard = source.find("hasOwnProperty.call(window, '__toolgate__')").expect("re-entry guard");
        let first_side_effect =
            source.find("Object.defineProperty(window, '__toolgate__'").expect("API install");
        assert!(guard < first_side_effect);
        assert!(source.contains("setAttribute('data-toolgate-runtime', 'ready')"));
    }

    #[test]
    fn runtime_only_talks_to_the_reserved_prefix() {
        // The runtime's only network use is the agent API on the page's own origin, through the
        // fetch it took before page scripts could replace it.
        let source = RUNTIME_SOURCE;
        for needle in ["XMLHttpRequest", "sendBeacon", "WebSocket(", "EventSource(", "import("] {
            assert!(!source.contains(needle), "unexpected network use {needle}");
        }
        assert_eq!(source.matches("window.fetch").count(), 1);
        assert_eq!(source.matches("fetch(").count(), 0, "every request goes through gatewayFetch");
        assert!(source.contains("'/.toolgate/agent/session'"));
        assert!(source.contains("'/.toolgate/agent/catalog'"));
        assert!(!source.contains("http://") && !source.contains("https://"), "no absolute URLs");
    }

    #[test]
    fn brotli_copy_decodes_to_exactly_the_served_bytes() {
        let asset = runtime_asset();
        let mut decoded = Vec::new();
        brotli_decompressor::Decompressor::new(asset.brotli, 4096)
            .read_to_end(&mut decoded)
            .unwrap_or_else(|error| panic!("the brotli copy does not decode: {error}"));
        assert!(
            decoded == asset.body,
            "brotli copy decodes to {} bytes, not the {} served",
            decoded.len(),
            asset.body.len()
        );
    }

    #[test]
    fn gzip_copy_decodes_to_exactly_the_served_bytes() {
        let asset = runtime_asset();
        let mut decoder = flate2::read::GzDecoder::new(asset.gzip);
        let mut decoded = Vec::new();
        decoder
            .read_to_end(&mut decoded)
            .unwrap_or_else(|error| panic!("the gzip copy does not decode: {error}"));
        assert!(
            decoded == asset.body,
            "gzip copy decodes to {} bytes, not the {} served",
            decoded.len(),
            asset.body.len()
        );
        // One gzip member and nothing after it: a browser reads no further either.
        let mut rest = Vec::new();
        decoder.into_inner().read_to_end(&mut rest).unwrap_or_default();
        assert!(rest.is_empty(), "{} bytes after the gzip member", rest.len());
    }

    #[test]
    fn runtime_fits_the_wire_budget_with_brotli() {
        let asset = runtime_asset();
        assert!(
            asset.brotli.len() <= BROTLI_BUDGET_BYTES,
            "the runtime is {} bytes with brotli, over the {BROTLI_BUDGET_BYTES}-byte budget",
            asset.brotli.len()
        );
        assert!(asset.gzip.len() < asset.body.len() && asset.brotli.len() < asset.gzip.len());
    }

    #[test]
    fn served_bytes_are_the_minified_source_with_every_name_kept() {
        let body =
            std::str::from_utf8(runtime_asset().body).unwrap_or_else(|error| panic!("not UTF-8: {error}"));
        assert!(
            body.starts_with("(function toolgateRuntime(){\"use strict\";"),
            "{}",
            body.chars().take(80).collect::<String>()
        );
        assert!(body.trim_end().ends_with("})();"));
        // Comments and layout went (the part headers are comments); the only lines left are
        // inside template literals (the panel's stylesheet), which keep their text.
        assert!(!body.contains("// 00-core.js"));
        assert!(body.lines().count() * 20 < RUNTIME_SOURCE.lines().count(), "{} lines", body.lines().count());
        assert!(
            body.len() * 4 < RUNTIME_SOURCE.len() * 3,
            "{} bytes from {}",
            body.len(),
            RUNTIME_SOURCE.len()
        );
        // Nothing was renamed (oxc prints, it does not mangle): names stay readable in a stack trace.
        for name in ["function callTool(", "gatewayFetch=window.fetch.bind(window)", "__toolgate__"] {
            assert!(body.contains(name), "{name} is missing from the served runtime");
        }
    }

    #[test]
    fn asset_is_computed_once() {
        assert!(std::ptr::eq(runtime_asset(), runtime_asset()));
    }
}
