//! The typed `[compression]` section: which content codings the gateway may compress rewritten
//! pages with, at which level each, and the size below which a page goes out uncompressed.
//!
//! The defaults were measured for pages compressed in the stream (bench/README.md,
//! "Compression"): each level is the point past which a smaller page costs much more CPU.

use super::raw;
use toml::Spanned;

/// `[compression]`: how rewritten pages are compressed on their way to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionConfig {
    /// The brotli quality (0–11), `None` when `br` is not among the codings.
    pub brotli: Option<u32>,
    /// The zstd level (1–19), `None` when `zstd` is not among the codings.
    pub zstd: Option<i32>,
    /// The gzip level (1–9), `None` when `gzip` is not among the codings.
    pub gzip: Option<u32>,
    /// A page whose upstream says, by its `Content-Length`, that it is smaller than this many
    /// bytes (uncompressed) goes out uncompressed.
    pub min_size: u64,
}

/// The codings the configuration may name, as `Content-Encoding` spells them.
const CODINGS: [&str; 3] = ["br", "zstd", "gzip"];

/// Brotli quality 4: about gzip 6's CPU for a page up to 14 % smaller than gzip 6 makes it; 5
/// costs 40 % more CPU and half as much memory again.
const BROTLI_LEVEL: u32 = 4;
/// zstd's own default level: a page about as small as brotli 3 makes it for less CPU than gzip 4.
const ZSTD_LEVEL: i32 = 3;
/// gzip 4: within 2–3 % of level 6's size for about 70 % of its CPU.
const GZIP_LEVEL: u32 = 4;
/// Below about a kilobyte a compressed page saves less than one packet.
const MIN_SIZE: u64 = 1024;

impl Default for CompressionConfig {
    fn default() -> Self {
        Self {
            brotli: Some(BROTLI_LEVEL),
            zstd: Some(ZSTD_LEVEL),
            gzip: Some(GZIP_LEVEL),
            min_size: MIN_SIZE,
        }
    }
}

impl super::Checker<'_> {
    pub(super) fn compression(&mut self, raw: &raw::RawCompression) -> Option<CompressionConfig> {
        let listed = match &raw.codings {
            None => Some(CODINGS.to_vec()),
            Some(codings) => self.codings(codings),
        };
        let key = |name: &str| format!("compression.{name}");
        let brotli = self.count_or(&raw.brotli_level, &key("brotli_level"), BROTLI_LEVEL.into(), 0, 11);
        let zstd =
            self.count_or(&raw.zstd_level, &key("zstd_level"), ZSTD_LEVEL.unsigned_abs().into(), 1, 19);
        let gzip = self.count_or(&raw.gzip_level, &key("gzip_level"), GZIP_LEVEL.into(), 1, 9);
        let min_size = self.count_or(&raw.min_size, &key("min_size"), MIN_SIZE, 0, 1 << 30);
        let listed = listed?;
        let on = |name: &str| listed.contains(&name);
        // The ranges checked above fit the narrower types.
        Some(CompressionConfig {
            brotli: on("br").then_some(u32::try_from(brotli?).ok()?),
            zstd: on("zstd").then_some(i32::try_from(zstd?).ok()?),
            gzip: on("gzip").then_some(u32::try_from(gzip?).ok()?),
            min_size: min_size?,
        })
    }

    /// `codings`: each of `br`, `zstd`, `gzip` at most once; an empty list turns compression off.
    fn codings(&mut self, codings: &[Spanned<String>]) -> Option<Vec<&'static str>> {
        let mut listed = Vec::new();
        let mut valid = true;
        for (index, coding) in codings.iter().enumerate() {
            let key = format!("compression.codings[{index}]");
            match CODINGS.iter().find(|name| coding.get_ref().eq_ignore_ascii_case(name)) {
                Some(name) if listed.contains(name) => {
                    self.problem(coding, &key, &format!("`{name}` is listed twice"));
                    valid = false;
                }
                Some(name) => listed.push(*name),
                None => {
                    let message = format!(
                        "`{}` is not a coding the gateway compresses with; use \"br\", \"zstd\" or \"gzip\"",
                        coding.get_ref()
                    );
                    self.problem(coding, &key, &message);
                    valid = false;
                }
            }
        }
        valid.then_some(listed)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn parse(section: &str) -> Result<super::CompressionConfig, String> {
        let text = format!(
            "public_url = \"http://g.test\"\n[server]\nlisten = \"127.0.0.1:8080\"\nadmin_listen = \"127.0.0.1:9090\"\n\
             insecure_no_sso = true\n[store]\npath = \":memory:\"\n{section}\n\
             [sites.a]\nhost = \"a.test\"\nupstream = \"http://127.0.0.1:3000\"\n"
        );
        Config::parse(&text, "c.toml").map(|config| config.compression).map_err(|error| error.to_string())
    }

    #[test]
    fn every_coding_is_on_by_default_at_its_measured_level() {
        let config = parse("").expect("valid");
        assert_eq!(config, super::CompressionConfig::default());
        assert_eq!(
            (config.brotli, config.zstd, config.gzip, config.min_size),
            (Some(4), Some(3), Some(4), 1024)
        );
    }

    #[test]
    fn codings_and_levels_are_chosen_and_an_empty_list_turns_compression_off() {
        let config = parse(
            "[compression]\ncodings = [\"gzip\", \"BR\"]\nbrotli_level = 0\ngzip_level = 9\nmin_size = 0",
        )
        .expect("valid");
        assert_eq!((config.brotli, config.zstd, config.gzip, config.min_size), (Some(0), None, Some(9), 0));
        let off = parse("[compression]\ncodings = []").expect("valid");
        assert_eq!((off.brotli, off.zstd, off.gzip), (None, None, None));
    }

    #[test]
    fn bad_codings_and_levels_are_each_named_with_their_line() {
        let error = parse(
            "[compression]\ncodings = [\"br\", \"deflate\", \"br\"]\nbrotli_level = 12\nzstd_level = 0\n\
             gzip_level = 10\nmin_size = -1",
        )
        .expect_err("invalid");
        for expected in [
            "line 9: compression.codings[1]: `deflate` is not a coding the gateway compresses with; use \"br\", \"zstd\" or \"gzip\"",
            "line 9: compression.codings[2]: `br` is listed twice",
            "line 10: compression.brotli_level: must be a whole number from 0 to 11",
            "line 11: compression.zstd_level: must be a whole number from 1 to 19",
            "line 12: compression.gzip_level: must be a whole number from 1 to 9",
            "line 13: compression.min_size: must be a whole number from 0 to 1073741824",
        ] {
            assert!(error.contains(expected), "{expected}\nnot in:\n{error}");
        }
        let unknown = parse("[compression]\nlevel = 3").expect_err("unknown key");
        assert!(unknown.contains("compression.level"), "{unknown}");
    }
}
