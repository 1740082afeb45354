//! Streaming decoders for the content codings an upstream may use despite being asked for
//! `identity`: gzip, deflate (zlib-wrapped or raw, as found in the wild) and brotli.
//!
//! Input is fed in small slices and decoded output is handed on after each slice, so a
//! compression bomb can never make more than about a megabyte exist at once.

use http::HeaderValue;
use std::io::{self, Write};

/// Compressed input is fed to the decoders in slices of this size. Deflate expands at most
/// about 1032:1, so one slice yields at most ~1 MiB of output before it is passed on.
const SLICE: usize = 1024;

/// A content coding the gateway can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentCoding {
    /// No coding.
    Identity,
    /// `gzip` or `x-gzip`.
    Gzip,
    /// `deflate`.
    Deflate,
    /// `br`.
    Brotli,
}

impl ContentCoding {
    /// Reads `Content-Encoding`; `None` when the coding (or a stack of codings) is unsupported.
    pub fn from_header(value: Option<&HeaderValue>) -> Option<Self> {
        let Some(value) = value else { return Some(Self::Identity) };
        let value = value.to_str().ok()?.trim();
        match value.to_ascii_lowercase().as_str() {
            "" | "identity" => Some(Self::Identity),
            "gzip" | "x-gzip" => Some(Self::Gzip),
            "deflate" => Some(Self::Deflate),
            "br" => Some(Self::Brotli),
            _ => None,
        }
    }
}

/// Decodes one response body, chunk by chunk.
pub struct Decoder {
    state: State,
}

enum State {
    Identity,
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    RawDeflate(flate2::write::DeflateDecoder<Vec<u8>>),
    /// `deflate` before its first two bytes arrived: zlib header or raw stream?
    DeflateUndecided(Vec<u8>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Vec<u8>>>),
}

impl Decoder {
    /// A decoder for `coding`.
    pub fn new(coding: ContentCoding) -> Self {
        let state = match coding {
            ContentCoding::Identity => State::Identity,
            ContentCoding::Gzip => State::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            ContentCoding::Deflate => State::DeflateUndecided(Vec::with_capacity(2)),
            ContentCoding::Brotli => {
                State::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096)))
            }
        };
        Self { state }
    }

    /// Decodes `input`, handing decoded bytes to `sink` as they appear.
    pub fn decode<E>(
        &mut self,
        input: &[u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), DecodeError<E>> {
        if let State::DeflateUndecided(head) = &mut self.state {
            head.extend_from_slice(input);
            if head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(head);
            self.state = if is_zlib_header(head[0], head[1]) {
                State::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
            } else {
                State::RawDeflate(flate2::write::DeflateDecoder::new(Vec::new()))
            };
            return self.decode(&head, sink);
        }
        if let State::Identity = self.state {
            return sink(input).map_err(DecodeError::Sink);
        }
        for slice in input.chunks(SLICE) {
            match &mut self.state {
                State::Gzip(decoder) => feed(decoder, slice, |d| d.get_mut(), sink)?,
                State::Zlib(decoder) => feed(decoder, slice, |d| d.get_mut(), sink)?,
                State::RawDeflate(decoder) => feed(decoder, slice, |d| d.get_mut(), sink)?,
                State::Brotli(decoder) => feed(decoder.as_mut(), slice, |d| d.get_mut(), sink)?,
                State::Identity | State::DeflateUndecided(_) => {}
            }
        }
        Ok(())
    }

    /// Ends the stream: flushes what the decoder still holds and checks the stream was complete.
    pub fn finish<E>(mut self, sink: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), DecodeError<E>> {
        let output = match &mut self.state {
            State::Identity => return Ok(()),
            State::DeflateUndecided(head) if head.is_empty() => return Ok(()),
            State::DeflateUndecided(_) => return Err(DecodeError::Corrupt(truncated())),
            State::Gzip(decoder) => decoder.try_finish().map(|()| decoder.get_mut()),
            State::Zlib(decoder) => decoder.try_finish().map(|()| decoder.get_mut()),
            State::RawDeflate(decoder) => decoder.try_finish().map(|()| decoder.get_mut()),
            State::Brotli(decoder) => decoder.close().map(|()| decoder.get_mut()),
        };
        let output = output.map_err(DecodeError::Corrupt)?;
        if !output.is_empty() {
            sink(output).map_err(DecodeError::Sink)?;
            output.clear();
        }
        Ok(())
    }
}

/// Why decoding stopped.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError<E> {
    /// The compressed stream is corrupt or truncated.
    #[error("corrupt compressed body: {0}")]
    Corrupt(io::Error),
    /// The consumer of decoded bytes failed.
    #[error("consumer failed")]
    Sink(E),
}

fn feed<D: Write, E>(
    decoder: &mut D,
    slice: &[u8],
    output: impl Fn(&mut D) -> &mut Vec<u8>,
    sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), DecodeError<E>> {
    decoder.write_all(slice).map_err(DecodeError::Corrupt)?;
    let decoded = output(decoder);
    if !decoded.is_empty() {
        sink(decoded).map_err(DecodeError::Sink)?;
        decoded.clear();
    }
    Ok(())
}

/// RFC 1950: compression method 8 in the low nibble, and the two bytes as a big-endian number
/// divisible by 31.
fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

fn truncated() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "compressed body ended early")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;

    fn decode_in_chunks(coding: ContentCoding, input: &[u8], chunk: usize) -> Result<Vec<u8>, String> {
        let mut decoder = Decoder::new(coding);
        let mut output = Vec::new();
        let mut sink = |bytes: &[u8]| -> Result<(), ()> {
            output.extend_from_slice(bytes);
            Ok(())
        };
        for piece in input.chunks(chunk) {
            decoder.decode(piece, &mut sink).map_err(|e| format!("{e:?}"))?;
        }
        decoder.finish(&mut sink).map_err(|e| format!("{e:?}"))?;
        Ok(output)
    }

    fn sample() -> Vec<u8> {
        "<html><body>hello world, é and 漢字</body></html>\n".repeat(400).into_bytes()
    }

    #[test]
    fn gzip_zlib_raw_deflate_and_brotli_round_trip_in_any_chunking() {
        let plain = sample();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
        for encoder in [&mut gzip as &mut dyn Write, &mut zlib, &mut raw] {
            encoder.write_all(&plain).ok();
        }
        let cases = [
            (ContentCoding::Gzip, gzip.finish().unwrap_or_default()),
            (ContentCoding::Deflate, zlib.finish().unwrap_or_default()),
            (ContentCoding::Deflate, raw.finish().unwrap_or_default()),
            (ContentCoding::Brotli, brotli_fixture(&plain)),
        ];
        for (coding, compressed) in cases {
            assert!(!compressed.is_empty());
            for chunk in [1, 7, 4096, compressed.len()] {
                assert_eq!(
                    decode_in_chunks(coding, &compressed, chunk).as_deref(),
                    Ok(&plain[..]),
                    "{coding:?}/{chunk}"
                );
            }
        }
    }

    #[test]
    fn truncated_and_corrupt_streams_are_errors() {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        gzip.write_all(&sample()).ok();
        let compressed = gzip.finish().unwrap_or_default();
        assert!(decode_in_chunks(ContentCoding::Gzip, &compressed[..compressed.len() / 2], 64).is_err());
        assert!(decode_in_chunks(ContentCoding::Gzip, b"this is not gzip at all", 4).is_err());
        assert!(decode_in_chunks(ContentCoding::Deflate, b"x", 4).is_err());
    }

    #[test]
    fn header_values() {
        let value = |text: &'static str| Some(HeaderValue::from_static(text));
        assert_eq!(ContentCoding::from_header(None), Some(ContentCoding::Identity));
        assert_eq!(ContentCoding::from_header(value("GZIP").as_ref()), Some(ContentCoding::Gzip));
        assert_eq!(ContentCoding::from_header(value("br").as_ref()), Some(ContentCoding::Brotli));
        assert_eq!(ContentCoding::from_header(value("zstd").as_ref()), None);
        assert_eq!(ContentCoding::from_header(value("gzip, br").as_ref()), None);
    }

    /// The workspace has a brotli decoder only, so the fixture is a brotli stream of `sample()`
    /// made once by an independent encoder (Python's `brotli` module) and checked in.
    fn brotli_fixture(plain: &[u8]) -> Vec<u8> {
        let compressed = include_bytes!("../../tests/fixtures/sample.html.br");
        let mut decoded = Vec::new();
        let mut writer = brotli_decompressor::DecompressorWriter::new(&mut decoded, 4096);
        writer.write_all(compressed).ok();
        writer.close().ok();
        drop(writer);
        assert_eq!(decoded, plain, "fixture must be brotli of sample()");
        compressed.to_vec()
    }
}
