//! A small HTTP/1.1 client for the admin listener, used by the command line: `toolgate health`
//! (the container health check: the runtime image has no curl) and `toolgate store backup`
//! (which streams the running gateway's store from `POST /backup`).

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::net::TcpStream;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `toolgate health` waits for the whole answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of an error body kept for the message.
const ERROR_BODY: usize = 4096;

/// Why a call to the admin listener failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminClientError {
    /// The URL is not `http://HOST:PORT/PATH`.
    #[error("bad URL `{0}`: write http://HOST:PORT/PATH")]
    Url(String),
    /// Nothing accepted the connection.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// Where.
        address: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The listener went silent.
    #[error("{0} did not answer within {1:?}")]
    Timeout(String, Duration),
    /// The connection broke or the answer was not HTTP.
    #[error("{0}")]
    Http(#[from] hyper::Error),
    /// The listener refused.
    #[error("{status}: {message}")]
    Status {
        /// The status.
        status: StatusCode,
        /// The first line of its body.
        message: String,
    },
    /// Whoever took the body could not (a full disk, a damaged stream).
    #[error("{0}")]
    Receiver(String),
}

impl AdminClientError {
    /// Whether nothing listened there (the gateway is not running).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Connect { .. })
    }
}

/// `toolgate health`: `GET url`; exit 0 on a 2xx answer within 5 s, else 1 with the reason.
pub fn health(url: &str) -> std::process::ExitCode {
    let answer = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())
        .and_then(|runtime| runtime.block_on(get(url, HEALTH_TIMEOUT)).map_err(|error| error.to_string()));
    match answer {
        Ok((status, body)) if status.is_success() => {
            println!("{body}");
            std::process::ExitCode::SUCCESS
        }
        Ok((status, body)) => {
            eprintln!("toolgate health: {url}: {status} {body}");
            std::process::ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("toolgate health: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `GET url` within `timeout`; the status and the start of the body.
pub async fn get(url: &str, timeout: Duration) -> Result<(StatusCode, String), AdminClientError> {
    let uri: Uri = url.parse().map_err(|_| AdminClientError::Url(url.to_owned()))?;
    let authority = match (uri.scheme_str(), uri.authority()) {
        (Some("http"), Some(authority)) if authority.port_u16().is_some() => authority.to_string(),
        _ => return Err(AdminClientError::Url(url.to_owned())),
    };
    let path = uri.path_and_query().map_or("/", |path| path.as_str()).to_owned();
    let exchange = async {
        let response = send(&authority, Method::GET, &path, None).await?;
        let status = response.status();
        Ok((status, start_of_body(response).await))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| AdminClientError::Timeout(authority, timeout))?
}

/// `POST /backup` on the admin listener at `authority` with the backup `token`; hands every
/// piece of the stream to `receiver`. `idle` bounds each wait for the next piece.
pub async fn backup(
    authority: &str,
    token: &str,
    idle: Duration,
    receiver: &mut dyn FnMut(&[u8]) -> Result<(), String>,
) -> Result<(), AdminClientError> {
    let answer = tokio::time::timeout(idle, send(authority, Method::POST, "/backup", Some(token)));
    let response = answer.await.map_err(|_| AdminClientError::Timeout(authority.to_owned(), idle))??;
    if response.status() != StatusCode::OK {
        let status = response.status();
        return Err(AdminClientError::Status { status, message: start_of_body(response).await });
    }
    let mut body = response.into_body();
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_| AdminClientError::Timeout(authority.to_owned(), idle))?;
        match frame {
            None => return Ok(()),
            Some(frame) => {
                if let Some(data) = frame?.data_ref() {
                    receiver(data).map_err(AdminClientError::Receiver)?;
                }
            }
        }
    }
}

async fn send(
    authority: &str,
    method: Method,
    path: &str,
    token: Option<&str>,
) -> Result<Response<Incoming>, AdminClientError> {
    let connect_error = |source| AdminClientError::Connect { address: authority.to_owned(), source };
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(authority))
        .await
        .map_err(|_| AdminClientError::Timeout(authority.to_owned(), CONNECT_TIMEOUT))?
        .map_err(connect_error)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let mut request = Request::builder().method(method).uri(path).header(header::HOST, authority);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(Empty::<Bytes>::new()).map_err(|_| AdminClientError::Url(path.to_owned()))?;
    Ok(sender.send_request(request).await?)
}

/// The first line of a (short) body, for messages.
async fn start_of_body(response: Response<Incoming>) -> String {
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while bytes.len() < ERROR_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                bytes.extend_from_slice(frame.data_ref().map_or(&[][..], |data| data.as_ref()))
            }
            _ => break,
        }
    }
    String::from_utf8_lossy(&bytes).lines().next().unwrap_or_default().trim().to_owned()
}
