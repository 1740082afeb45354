//! Builds the discovery runtime that ships inside the binary, into `OUT_DIR`, where
//! `src/runtime.rs` includes it:
//!
//! 1. `runtime.js`: the parts (`runtime/parts/*.js`) in their contract order inside one
//!    strict-mode function, the source exactly as developers read and edit it;
//! 2. `runtime.min.js`: that source parsed and printed again without comments and layout by a
//!    real JavaScript parser (oxc). Nothing is renamed or rewritten, so the script behaves as the
//!    source does and keeps its names in stack traces. These are the bytes SRI covers;
//! 3. `runtime.min.js.br` and `runtime.min.js.gz`: those bytes compressed once, at the strongest
//!    settings, so the gateway never compresses the runtime per request.
//!
//! A part that does not parse fails the build, naming the part and line. Only the standard
//! library, oxc, brotli and flate2 are used here.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use oxc_allocator::Allocator;
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_span::SourceType;

/// The parts in their contract order (core first, start last; `runtime/README.md`, "Files").
/// Each part's top-level names are visible to the parts after it.
const PARTS: [&str; 13] = [
    "00-core.js",
    "10-schema.js",
    "20-voix.js",
    "30-webmcp.js",
    "35-native.js",
    "40-forms.js",
    "45-forms-execute.js",
    "50-ci4a.js",
    "60-agent.js",
    "65-panel-look.js",
    "68-submit-pointer.js",
    "70-panel.js",
    "90-start.js",
];

/// The one wrapper around all parts: a function scope they share, strict mode for all of them.
const WRAPPER_START: &str = "(function toolgateRuntime() {\n'use strict';\n";
const WRAPPER_END: &str = "\n})();\n";

/// Brotli's strongest quality, with its default window (4 MiB, far larger than the script).
const BROTLI_QUALITY: i32 = 11;
const BROTLI_WINDOW_BITS: i32 = 22;

type BuildError = Box<dyn std::error::Error>;

fn main() {
    // Printed with `Display`, so a parse error reads as lines, not as a quoted Debug string.
    if let Err(error) = build() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn build() -> Result<(), BuildError> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let parts_dir = manifest_dir.join("runtime/parts");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // The directory too, so a part added there without a place in `PARTS` is caught below.
    println!("cargo::rerun-if-changed={}", parts_dir.display());

    check_every_part_is_listed(&parts_dir)?;
    let source = Source::concatenate(&parts_dir)?;
    let minified = minify(&source)?;
    let brotli = compress_brotli(minified.as_bytes())?;
    let gzip = compress_gzip(minified.as_bytes())?;

    std::fs::write(out_dir.join("runtime.js"), &source.text)?;
    std::fs::write(out_dir.join("runtime.min.js"), &minified)?;
    std::fs::write(out_dir.join("runtime.min.js.br"), brotli)?;
    std::fs::write(out_dir.join("runtime.min.js.gz"), gzip)?;
    Ok(())
}

/// The wrapped source, with where each part starts in it (to name a part in a parse error).
struct Source {
    text: String,
    starts: Vec<(&'static str, usize)>,
}

impl Source {
    fn concatenate(parts_dir: &Path) -> Result<Self, BuildError> {
        let mut text = String::from(WRAPPER_START);
        let mut starts = Vec::with_capacity(PARTS.len());
        for part in PARTS {
            let path = parts_dir.join(part);
            println!("cargo::rerun-if-changed={}", path.display());
            let part_text =
                std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
            starts.push((part, text.len()));
            text.push_str(&part_text);
        }
        text.push_str(WRAPPER_END);
        Ok(Self { text, starts })
    }

    /// `part.js:line` for a byte offset into the wrapped source.
    fn locate(&self, offset: usize) -> String {
        let Some(&(part, start)) = self.starts.iter().rev().find(|(_, start)| *start <= offset) else {
            return "the wrapper".to_owned();
        };
        let line = self.text.get(start..offset).map_or(0, |text| text.matches('\n').count()) + 1;
        format!("{part}:{line}")
    }
}

/// A `.js` file in the parts folder that `PARTS` leaves out would silently be missing from the
/// runtime; it fails the build instead.
fn check_every_part_is_listed(parts_dir: &Path) -> Result<(), BuildError> {
    for entry in std::fs::read_dir(parts_dir)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".js") && !PARTS.contains(&name.as_ref()) {
            return Err(format!(
                "runtime part {name} is not in PARTS (injector/build.rs): add it in its contract place"
            )
            .into());
        }
    }
    Ok(())
}

/// Parses the source as a classic script and prints it back without comments or layout.
fn minify(source: &Source) -> Result<String, BuildError> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, &source.text, SourceType::cjs()).parse();
    if parsed.panicked || !parsed.errors.is_empty() {
        let mut report = String::from("the runtime does not parse:");
        for error in &parsed.errors {
            let offset = error.labels.as_ref().and_then(|labels| labels.first()).map(|label| label.offset());
            let place = offset.map_or_else(|| "?".to_owned(), |offset| source.locate(offset));
            write!(report, "\n  {place}: {error}")?;
        }
        return Err(report.into());
    }
    Ok(Codegen::new().with_options(CodegenOptions::minify()).build(&parsed.program).code)
}

fn compress_brotli(bytes: &[u8]) -> Result<Vec<u8>, BuildError> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: BROTLI_QUALITY,
        lgwin: BROTLI_WINDOW_BITS,
        size_hint: bytes.len(),
        ..Default::default()
    };
    let mut compressed = Vec::new();
    brotli::BrotliCompress(&mut &bytes[..], &mut compressed, &params)?;
    Ok(compressed)
}

fn compress_gzip(bytes: &[u8]) -> Result<Vec<u8>, BuildError> {
    // flate2 writes a zero modification time into the gzip header, so the output depends on the
    // input alone and builds are reproducible.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?)
}
