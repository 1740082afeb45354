//! The discovery runtime script that ships inside the binary.
//!
//! The script is written as parts (`injector/runtime/parts/*.js`, documented in
//! `injector/runtime/README.md`) that share one function scope: they are concatenated here, in a
//! fixed order, inside one strict-mode wrapper. The gateway serves the result under a
//! content-hashed path (so it can be cached forever) and the page loads it with a Subresource
//! Integrity hash (so a tampered copy never runs). Both are derived once, on first use.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256, Sha384};

/// The embedded runtime script: the parts in their contract order (core first, start last)
/// inside one function, so each part's top-level names are visible to the parts after it.
const RUNTIME_SOURCE: &str = concat!(
    "(function toolgateRuntime() {\n'use strict';\n",
    include_str!("../runtime/parts/00-core.js"),
    include_str!("../runtime/parts/10-schema.js"),
    include_str!("../runtime/parts/20-voix.js"),
    include_str!("../runtime/parts/30-webmcp.js"),
    include_str!("../runtime/parts/35-native.js"),
    include_str!("../runtime/parts/40-forms.js"),
    include_str!("../runtime/parts/45-forms-execute.js"),
    include_str!("../runtime/parts/50-ci4a.js"),
    include_str!("../runtime/parts/60-agent.js"),
    include_str!("../runtime/parts/65-panel-look.js"),
    include_str!("../runtime/parts/68-submit-pointer.js"),
    include_str!("../runtime/parts/70-panel.js"),
    include_str!("../runtime/parts/90-start.js"),
    "\n})();\n",
);

/// Every runtime URL lives under the gateway's reserved prefix.
const RUNTIME_PATH_PREFIX: &str = "/.toolgate/runtime.";

/// How many hex digits of the SHA-256 go into the file name: 64 bits is plenty to tell builds
/// apart, and short enough to keep the URL readable.
const PATH_HASH_HEX_DIGITS: usize = 16;

/// The runtime script as the gateway serves it.
#[derive(Debug)]
pub struct RuntimeAsset {
    /// Path on every site host, e.g. `/.toolgate/runtime.0123456789abcdef.js`; the hex part is the
    /// start of the SHA-256 of [`RuntimeAsset::body`], so a new build gets a new URL.
    pub path: String,
    /// Subresource Integrity value for the `<script integrity>` attribute: `sha384-<base64>`.
    pub integrity: String,
    /// The script itself (`text/javascript; charset=utf-8`).
    pub body: &'static [u8],
}

/// Returns the embedded runtime, hashing it on the first call only.
pub fn runtime_asset() -> &'static RuntimeAsset {
    static ASSET: OnceLock<RuntimeAsset> = OnceLock::new();
    ASSET.get_or_init(|| RuntimeAsset::from_source(RUNTIME_SOURCE.as_bytes()))
}

impl RuntimeAsset {
    fn from_source(body: &'static [u8]) -> Self {
        let path_digest = Sha256::digest(body);
        let mut path_hash = String::with_capacity(PATH_HASH_HEX_DIGITS);
        for byte in path_digest.iter().take(PATH_HASH_HEX_DIGITS / 2) {
            path_hash.push_str(&format!("{byte:02x}"));
        }
        let integrity = format!("sha384-{}", BASE64.encode(Sha384::digest(body)));
        Self { path: format!("{RUNTIME_PATH_PREFIX}{path_hash}.js"), integrity, body }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let asset = RuntimeAsset::from_source(b"abc");
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
    fn asset_is_computed_once() {
        assert!(std::ptr::eq(runtime_asset(), runtime_asset()));
    }
}
