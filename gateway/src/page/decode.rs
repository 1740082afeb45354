//! Streaming decoders for the content codings an upstream may use despite being asked for
//! `identity`: gzip, deflate (zlib-wrapped or raw, as found in the wild), brotli and zstd.
//!
//! Input is fed in small slices and decoded output is handed on after each slice (zstd's in
//! pieces of a fixed buffer), so a compression bomb can never make more than about a megabyte of
//! output exist at once. `is_decodable` tells the proxy which codings it may let a browser ask an
//! upstream for.

use http::HeaderValue;
use std::io::{self, Write};

/// Compressed input is fed to the decoders in slices of this size. Deflate expands at most
/// about 1032:1, so one slice yields at most ~1 MiB of output before it is passed on.
const SLICE: usize = 1024;

/// zstd hands its output on in pieces of this size, however much one slice expands to.
const ZSTD_OUTPUT: usize = 64 * 1024;

/// The largest zstd window accepted: 8 MiB, the limit of the `zstd` content coding (RFC 9659
/// §3), so a frame cannot make the decoder hold more.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// A content coding the gateway can decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Identity,
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    /// Reads `Content-Encoding`; `None` when the coding (or a stack of codings) is unsupported.
    fn from_header(value: Option<&HeaderValue>) -> Option<Self> {
        let Some(value) = value else { return Some(Self::Identity) };
        Self::from_name(value.to_str().ok()?.trim())
    }

    fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "" | "identity" => Some(Self::Identity),
            "gzip" | "x-gzip" => Some(Self::Gzip),
            "deflate" => Some(Self::Deflate),
            "br" => Some(Self::Brotli),
            "zstd" => Some(Self::Zstd),
            _ => None,
        }
    }
}

/// Whether the gateway can decode a body in the content coding `name` (as `Accept-Encoding` or
/// `Content-Encoding` spell it): what the proxy may let a browser ask an upstream for.
pub fn is_decodable(name: &str) -> bool {
    !name.is_empty() && Coding::from_name(name).is_some()
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
    Zstd(Box<ZstdStream>),
}

impl Decoder {
    /// A decoder for the body a `Content-Encoding` field (or its absence) describes; `None` when
    /// the coding, or a stack of codings, is one the gateway cannot decode.
    pub fn for_content_encoding(value: Option<&HeaderValue>) -> Option<Self> {
        Self::new(Coding::from_header(value)?)
    }

    fn new(coding: Coding) -> Option<Self> {
        let state = match coding {
            Coding::Identity => State::Identity,
            Coding::Gzip => State::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            Coding::Deflate => State::DeflateUndecided(Vec::with_capacity(2)),
            Coding::Brotli => {
                State::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096)))
            }
            // The decoder's context cannot be set up (out of memory): refused like a coding the
            // gateway does not know.
            Coding::Zstd => State::Zstd(Box::new(ZstdStream::new().ok()?)),
        };
        Some(Self { state })
    }

    /// Whether the body is not encoded at all (its bytes are the page's).
    pub fn is_identity(&self) -> bool {
        matches!(self.state, State::Identity)
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
                State::Zstd(decoder) => decoder.decode(slice, sink)?,
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
            State::Zstd(decoder) if decoder.ended => return Ok(()),
            State::Zstd(_) => return Err(DecodeError::Corrupt(truncated())),
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

/// A zstd stream, decoded into a fixed buffer that is handed on each time it fills.
struct ZstdStream {
    decoder: zstd::stream::raw::Decoder<'static>,
    output: Vec<u8>,
    /// The input so far ends where a frame ends (true before any input).
    ended: bool,
}

impl ZstdStream {
    fn new() -> io::Result<Self> {
        let mut decoder = zstd::stream::raw::Decoder::new()?;
        decoder.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX))?;
        Ok(Self { decoder, output: vec![0; ZSTD_OUTPUT], ended: true })
    }

    fn decode<E>(
        &mut self,
        input: &[u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), DecodeError<E>> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let mut input_buffer = InBuffer::around(input);
        loop {
            let before = input_buffer.pos();
            let mut output_buffer = OutBuffer::around(&mut self.output[..]);
            let hint =
                self.decoder.run(&mut input_buffer, &mut output_buffer).map_err(DecodeError::Corrupt)?;
            let written = output_buffer.pos();
            // zstd answers 0 when a frame is complete and all of it was handed out; a later call
            // that moves nothing already looks for the next frame's header and answers more.
            if hint == 0 {
                self.ended = true;
            } else if written > 0 || input_buffer.pos() > before {
                self.ended = false;
            }
            if written > 0 {
                sink(&self.output[..written]).map_err(DecodeError::Sink)?;
            }
            let consumed = input_buffer.pos() == input.len();
            if consumed && written < self.output.len() {
                return Ok(());
            }
            if written == 0 && input_buffer.pos() == before {
                // No progress on either side: never spin on a stream zstd cannot move.
                return Err(DecodeError::Corrupt(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "zstd made no progress",
                )));
            }
        }
    }
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
    use std::io::Read;

    fn decode_in_chunks(coding: Coding, input: &[u8], chunk: usize) -> Result<Vec<u8>, String> {
        let mut decoder = Decoder::new(coding).ok_or("no decoder")?;
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
    fn gzip_zlib_raw_deflate_brotli_and_zstd_round_trip_in_any_chunking() {
        let plain = sample();
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
        for encoder in [&mut gzip as &mut dyn Write, &mut zlib, &mut raw] {
            encoder.write_all(&plain).ok();
        }
        let cases = [
            (Coding::Gzip, gzip.finish().unwrap_or_default()),
            (Coding::Deflate, zlib.finish().unwrap_or_default()),
            (Coding::Deflate, raw.finish().unwrap_or_default()),
            (Coding::Brotli, brotli_fixture(&plain)),
            (Coding::Zstd, zstd::encode_all(&plain[..], 3).unwrap_or_default()),
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
        assert!(decode_in_chunks(Coding::Gzip, &compressed[..compressed.len() / 2], 64).is_err());
        assert!(decode_in_chunks(Coding::Gzip, b"this is not gzip at all", 4).is_err());
        assert!(decode_in_chunks(Coding::Deflate, b"x", 4).is_err());
        let zstd = zstd::encode_all(&sample()[..], 3).unwrap_or_default();
        assert!(decode_in_chunks(Coding::Zstd, &zstd[..zstd.len() - 3], 64).is_err(), "truncated zstd");
        assert!(decode_in_chunks(Coding::Zstd, b"(\xb5/\xfd not zstd at all", 4).is_err());
    }

    #[test]
    fn a_zstd_bomb_is_handed_on_in_bounded_pieces_and_huge_windows_are_refused() {
        // 64 MiB of one byte compresses to a few kilobytes; no piece handed on may exceed the
        // output buffer.
        let bomb = zstd::encode_all(std::io::repeat(b'a').take(64 << 20), 19).unwrap_or_default();
        assert!(bomb.len() < 64 * 1024, "{} B", bomb.len());
        let mut decoder = Decoder::new(Coding::Zstd).expect("decoder");
        let (mut total, mut largest) = (0usize, 0usize);
        let mut sink = |bytes: &[u8]| -> Result<(), ()> {
            total += bytes.len();
            largest = largest.max(bytes.len());
            Ok(())
        };
        decoder.decode(&bomb, &mut sink).expect("decodes");
        decoder.finish(&mut sink).expect("complete");
        assert_eq!(total, 64 << 20);
        assert!(largest <= ZSTD_OUTPUT, "{largest}");

        // A frame that asks for a 16 MiB window is refused, not decoded.
        let mut encoder = zstd::stream::raw::Encoder::new(3).expect("encoder");
        encoder.set_parameter(zstd::stream::raw::CParameter::WindowLog(24)).expect("window");
        let mut wide = zstd::stream::write::Encoder::with_encoder(Vec::new(), encoder);
        std::io::copy(&mut std::io::repeat(b'b').take(20 << 20), &mut wide).expect("write");
        let wide = wide.finish().expect("finish");
        assert!(decode_in_chunks(Coding::Zstd, &wide, 4096).is_err(), "window above 8 MiB");
    }

    #[test]
    fn header_values() {
        let value = |text: &'static str| Some(HeaderValue::from_static(text));
        assert_eq!(Coding::from_header(None), Some(Coding::Identity));
        assert_eq!(Coding::from_header(value("GZIP").as_ref()), Some(Coding::Gzip));
        assert_eq!(Coding::from_header(value("br").as_ref()), Some(Coding::Brotli));
        assert_eq!(Coding::from_header(value("zstd").as_ref()), Some(Coding::Zstd));
        assert_eq!(Coding::from_header(value("compress").as_ref()), None);
        assert_eq!(Coding::from_header(value("gzip, br").as_ref()), None);
        assert!(Decoder::for_content_encoding(value("gzip, br").as_ref()).is_none());
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
