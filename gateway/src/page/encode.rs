//! Compressing a rewritten page in the stream: `Encoder` holds one brotli, zstd or gzip stream,
//! and `CompressedBody` puts the rewriter's output through it and hands the compressed bytes on
//! as they appear.
//!
//! It never holds back what the browser could already use: the first piece of the page (its
//! head, with the runtime's script tag) is flushed at once, and so is everything written
//! whenever the page would otherwise wait for its upstream. Pieces that arrive back to back are
//! compressed together, so a chatty upstream does not pay a flush (and, for brotli, new code
//! tables) per piece. Memory per page is the encoder's state, set below: about 0.35 MiB for
//! gzip, 1.1 MiB for brotli, 0.75 MiB for zstd.

use crate::config::CompressionConfig;
use crate::http::accept_encoding::ContentCoding;
use crate::http::body::BoxError;
use bytes::Bytes;
use http_body::{Body, Frame};
use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Brotli's window: 128 KiB, the distance at which pages still repeat themselves (rows,
/// navigation, attributes). Its default, 4 MiB, costs megabytes per page in flight and allocation
/// time per response for no gain on pages.
const BROTLI_WINDOW_LOG: u32 = 17;

/// zstd's window (64 KiB) and match tables (2^15 entries): about 0.75 MiB of state in all. zstd
/// keeps its state in one allocation, and past about a megabyte that allocation was measured to
/// cost more than the compression itself (fresh pages for every response; bench/README.md,
/// "Compression"). Pages lose nothing measurable to the smaller window.
const ZSTD_WINDOW_LOG: u32 = 16;
/// See `ZSTD_WINDOW_LOG`.
const ZSTD_TABLE_LOG: u32 = 15;

/// Brotli's output buffer, between its encoder and ours.
const BROTLI_BUFFER: usize = 4096;

/// One compressed stream, writing into a buffer that `take_output` empties.
pub struct Encoder {
    state: State,
}

enum State {
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
}

impl Encoder {
    /// A stream in `coding` at its configured level; `None` for a coding the configuration does
    /// not compress with, or when zstd cannot set up its context.
    pub fn new(coding: ContentCoding, config: &CompressionConfig) -> Option<Self> {
        let state = match coding {
            ContentCoding::Brotli => State::Brotli(Box::new(brotli::CompressorWriter::new(
                Vec::new(),
                BROTLI_BUFFER,
                config.brotli?,
                BROTLI_WINDOW_LOG,
            ))),
            ContentCoding::Zstd => {
                use zstd::stream::raw::CParameter;
                let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), config.zstd?).ok()?;
                for parameter in [
                    CParameter::WindowLog(ZSTD_WINDOW_LOG),
                    CParameter::HashLog(ZSTD_TABLE_LOG),
                    CParameter::ChainLog(ZSTD_TABLE_LOG),
                ] {
                    encoder.set_parameter(parameter).ok()?;
                }
                State::Zstd(encoder)
            }
            ContentCoding::Gzip => {
                State::Gzip(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(config.gzip?)))
            }
            ContentCoding::Identity => return None,
        };
        Some(Self { state })
    }

    /// Compresses `data`; some of it may stay inside the encoder until the next flush.
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        self.writer().write_all(data)
    }

    /// Pushes everything written so far out as bytes a decoder can finish reading now (gzip's
    /// sync flush, brotli's and zstd's flush operations), keeping the stream open.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }

    /// The compressed bytes produced since the last call.
    pub fn take_output(&mut self) -> Bytes {
        let output = match &mut self.state {
            State::Brotli(encoder) => encoder.get_mut(),
            State::Zstd(encoder) => encoder.get_mut(),
            State::Gzip(encoder) => encoder.get_mut(),
        };
        Bytes::from(std::mem::take(output))
    }

    /// Ends the stream; returns the bytes not yet taken, its end included.
    pub fn finish(self) -> io::Result<Bytes> {
        let output = match self.state {
            State::Brotli(encoder) => encoder.into_inner(),
            State::Zstd(encoder) => encoder.finish()?,
            State::Gzip(encoder) => encoder.finish()?,
        };
        Ok(Bytes::from(output))
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.state {
            State::Brotli(encoder) => encoder.as_mut(),
            State::Zstd(encoder) => encoder,
            State::Gzip(encoder) => encoder,
        }
    }
}

/// A body compressed on its way out: the rewritten page in, the encoded stream out.
pub struct CompressedBody<B> {
    inner: B,
    /// `None` once the stream has ended, cleanly or not.
    encoder: Option<Encoder>,
    /// Nothing has been flushed yet: the first piece goes out at once.
    first: bool,
    /// Something was written since the last flush.
    unflushed: bool,
}

impl<B> CompressedBody<B> {
    /// Compresses `inner` with `encoder`.
    pub fn new(inner: B, encoder: Encoder) -> Self {
        Self { inner, encoder: Some(encoder), first: true, unflushed: false }
    }
}

impl<B> Body for CompressedBody<B>
where
    B: Body<Data = Bytes, Error = BoxError> + Unpin,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            let Some(encoder) = this.encoder.as_mut() else { return Poll::Ready(None) };
            let result = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => {
                        let first = std::mem::take(&mut this.first);
                        this.unflushed = !first;
                        encoder.write(&data).and_then(|()| if first { encoder.flush() } else { Ok(()) })
                    }
                    // Empty data and trailers say nothing about the compressed stream.
                    _ => continue,
                },
                // The stream is cut with the page's own error: the browser sees a failed load.
                Poll::Ready(Some(Err(error))) => {
                    this.encoder = None;
                    return Poll::Ready(Some(Err(error)));
                }
                Poll::Ready(None) => {
                    let finished = this.encoder.take().map(Encoder::finish).transpose();
                    return Poll::Ready(match finished {
                        Ok(Some(rest)) if !rest.is_empty() => Some(Ok(Frame::data(rest))),
                        Ok(_) => None,
                        Err(error) => Some(Err(error.into())),
                    });
                }
                // The page waits for its upstream: what it has so far goes to the browser now.
                Poll::Pending if this.unflushed => {
                    this.unflushed = false;
                    encoder.flush()
                }
                Poll::Pending => return Poll::Pending,
            };
            if let Err(error) = result {
                this.encoder = None;
                return Poll::Ready(Some(Err(error.into())));
            }
            let output = encoder.take_output();
            if !output.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(output))));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.encoder.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::io::Read;

    /// A body fed through a channel, so each test decides when a piece arrives.
    struct ChannelBody(tokio::sync::mpsc::Receiver<Result<Bytes, BoxError>>);

    impl Body for ChannelBody {
        type Data = Bytes;
        type Error = BoxError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
            self.0.poll_recv(cx).map(|piece| piece.map(|result| result.map(Frame::data)))
        }
    }

    const CODINGS: [ContentCoding; 3] = [ContentCoding::Brotli, ContentCoding::Zstd, ContentCoding::Gzip];

    fn page() -> Vec<u8> {
        let mut page = b"<!doctype html><html><head><title>t</title></head><body>".to_vec();
        for row in 0..2000 {
            page.extend_from_slice(
                format!("<tr><td>row {row}</td><td>caf\u{e9} {}</td></tr>\n", row % 7).as_bytes(),
            );
        }
        page.extend_from_slice(b"</body></html>");
        page
    }

    /// An independent decoder for each coding: what a browser does with the whole stream.
    fn decode(coding: ContentCoding, compressed: &[u8]) -> Vec<u8> {
        let mut decoded = Vec::new();
        match coding {
            ContentCoding::Brotli => brotli_decompressor::Decompressor::new(compressed, 4096)
                .read_to_end(&mut decoded)
                .expect("br"),
            ContentCoding::Zstd => zstd::stream::read::Decoder::new(compressed)
                .and_then(|mut decoder| decoder.read_to_end(&mut decoded))
                .expect("zstd"),
            ContentCoding::Gzip => {
                flate2::read::GzDecoder::new(compressed).read_to_end(&mut decoded).expect("gzip")
            }
            ContentCoding::Identity => unreachable!("never encoded"),
        };
        decoded
    }

    /// What a streaming decoder makes of a stream so far (it has not ended).
    fn decode_prefix(coding: ContentCoding, compressed: &[u8]) -> Vec<u8> {
        let mut decoded = Vec::new();
        let mut buffer = [0u8; 4096];
        let mut reader: Box<dyn Read + '_> = match coding {
            ContentCoding::Brotli => Box::new(brotli_decompressor::Decompressor::new(compressed, 4096)),
            ContentCoding::Zstd => Box::new(zstd::stream::read::Decoder::new(compressed).expect("zstd")),
            ContentCoding::Gzip => Box::new(flate2::read::GzDecoder::new(compressed)),
            ContentCoding::Identity => unreachable!("never encoded"),
        };
        // The stream ends early by design: read until the decoder runs out of input.
        while let Ok(read) = reader.read(&mut buffer) {
            if read == 0 {
                break;
            }
            decoded.extend_from_slice(&buffer[..read]);
        }
        decoded
    }

    #[test]
    fn every_coding_decodes_to_the_input_in_any_chunking() {
        let config = CompressionConfig::default();
        let plain = page();
        for coding in CODINGS {
            for chunk in [1, 100, 16 * 1024, plain.len()] {
                let mut encoder = Encoder::new(coding, &config).expect("configured");
                let mut compressed = Vec::new();
                for (index, piece) in plain.chunks(chunk).enumerate() {
                    encoder.write(piece).expect("write");
                    if index % 3 == 0 {
                        encoder.flush().expect("flush");
                    }
                    compressed.extend_from_slice(&encoder.take_output());
                }
                compressed.extend_from_slice(&encoder.finish().expect("finish"));
                if chunk >= 16 * 1024 {
                    assert!(compressed.len() < plain.len() / 4, "{coding:?}/{chunk}: {} B", compressed.len());
                }
                assert_eq!(decode(coding, &compressed), plain, "{coding:?}/{chunk}");
            }
        }
    }

    #[test]
    fn only_configured_codings_get_an_encoder() {
        let config = CompressionConfig { brotli: None, ..CompressionConfig::default() };
        assert!(Encoder::new(ContentCoding::Brotli, &config).is_none());
        assert!(Encoder::new(ContentCoding::Identity, &config).is_none());
        assert!(Encoder::new(ContentCoding::Zstd, &config).is_some());
    }

    #[tokio::test]
    async fn the_first_piece_and_a_piece_before_a_wait_can_be_decoded_before_the_end() {
        for coding in CODINGS {
            let (sender, receiver) = tokio::sync::mpsc::channel(4);
            let encoder = Encoder::new(coding, &CompressionConfig::default()).expect("configured");
            let mut body = CompressedBody::new(ChannelBody(receiver), encoder);
            let mut received = Vec::new();
            for piece in ["<html><head><title>first</title></head>", "<body><p>second</p>"] {
                sender.send(Ok(Bytes::from(piece))).await.expect("send");
                // The upstream now waits: the piece must come out, decodable, before any more.
                while !String::from_utf8_lossy(&decode_prefix(coding, &received)).ends_with(piece) {
                    let frame = tokio::time::timeout(std::time::Duration::from_secs(5), body.frame())
                        .await
                        .unwrap_or_else(|_| panic!("{coding:?}: {piece} held back"))
                        .expect("frame")
                        .expect("data");
                    received.extend_from_slice(&frame.into_data().expect("data"));
                }
            }
            sender.send(Ok(Bytes::from("</body></html>"))).await.expect("send");
            drop(sender);
            while let Some(frame) = body.frame().await {
                received.extend_from_slice(&frame.expect("data").into_data().expect("data"));
            }
            assert!(body.is_end_stream());
            let whole = "<html><head><title>first</title></head><body><p>second</p></body></html>";
            assert_eq!(decode(coding, &received), whole.as_bytes(), "{coding:?}");
        }
    }

    #[tokio::test]
    async fn pieces_that_arrive_together_are_compressed_together() {
        let plain = page();
        for coding in CODINGS {
            let encoder = Encoder::new(coding, &CompressionConfig::default()).expect("configured");
            // Every piece is queued before the body is read, as if the upstream had sent them all.
            let (sender, receiver) = tokio::sync::mpsc::channel(plain.len() / 100 + 1);
            for piece in plain.chunks(100) {
                sender.send(Ok(Bytes::copy_from_slice(piece))).await.expect("send");
            }
            drop(sender);
            let body = CompressedBody::new(ChannelBody(receiver), encoder);
            let compressed = body.collect().await.expect("complete").to_bytes();
            assert_eq!(decode(coding, &compressed), plain, "{coding:?}");
            // One flush per 100-byte piece would cost more than the whole page compressed at once.
            let mut whole = Encoder::new(coding, &CompressionConfig::default()).expect("configured");
            whole.write(&plain).expect("write");
            let alone = whole.finish().expect("finish").len();
            assert!(
                compressed.len() < alone + alone / 10,
                "{coding:?}: {} B against {alone} B",
                compressed.len()
            );
        }
    }

    #[tokio::test]
    async fn an_error_from_the_page_cuts_the_stream() {
        let (sender, receiver) = tokio::sync::mpsc::channel(4);
        let encoder = Encoder::new(ContentCoding::Gzip, &CompressionConfig::default()).expect("configured");
        let mut body = CompressedBody::new(ChannelBody(receiver), encoder);
        sender.send(Ok(Bytes::from_static(b"<html><head>"))).await.expect("send");
        sender.send(Err("rewrite failed".into())).await.expect("send");
        let mut outcome = Ok(());
        while let Some(frame) = body.frame().await {
            if let Err(error) = frame {
                outcome = Err(error.to_string());
            }
        }
        assert_eq!(outcome, Err("rewrite failed".to_owned()), "the stream must not end cleanly");
        assert!(body.is_end_stream());
    }
}
