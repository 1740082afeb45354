//! The demo intranet apps, served in-process on loopback, one per agent dialect: a task board
//! with VOIX tools (`tasks.rs`), a travel search registering WebMCP tools from script
//! (`travel.rs`), a helpdesk with a WebMCP declarative form and a component-registry queue
//! (`helpdesk.rs`), and a legacy expense form with no agent markup (`expenses.rs`) that a
//! gateway form rule turns into a tool. They are ordinary web apps on purpose: the gateway in
//! front of them is what the demo shows.

mod expenses;
mod helpdesk;
mod tasks;
mod travel;

pub use expenses::ExpenseForm;
pub use helpdesk::Helpdesk;
pub use tasks::TaskBoard;
pub use travel::TravelSearch;

use crate::http::body::{self, ProxyBody};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;

/// The stylesheet every demo app serves at `/style.css`.
const STYLE: &str = include_str!("pages/style.css");

/// Request bodies of the demo apps are tiny; anything larger is refused.
const MAX_BODY: usize = 16 * 1024;

/// A demo app: answers one request at a time from its in-memory state.
pub trait DemoApp: Send + Sync + 'static {
    /// Answers a request whose body has been read (`query` is empty when there is none).
    fn respond(&self, method: &Method, path: &str, query: &str, body: &[u8]) -> Response<ProxyBody>;
}

/// Serves `app` on `listener` until `shutdown` resolves.
pub async fn serve(app: Arc<dyn DemoApp>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            () = &mut shutdown => return,
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let app = app.clone();
                async move {
                    let (parts, body) = request.into_parts();
                    let response = match Limited::new(body, MAX_BODY).collect().await {
                        // No demo app has an icon; say so without an error in the console.
                        Ok(_) if parts.uri.path() == "/favicon.ico" => {
                            let mut response = Response::new(body::empty());
                            *response.status_mut() = StatusCode::NO_CONTENT;
                            response
                        }
                        Ok(collected) => app.respond(
                            &parts.method,
                            parts.uri.path(),
                            parts.uri.query().unwrap_or_default(),
                            &collected.to_bytes(),
                        ),
                        Err(_) => plain(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
                    };
                    Ok::<_, Infallible>(response)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

pub(super) fn with_type(
    mut response: Response<ProxyBody>,
    content_type: &'static str,
) -> Response<ProxyBody> {
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<ProxyBody> {
    let mut response =
        with_type(Response::new(body::full(Bytes::from_static(text.as_bytes()))), "text/plain");
    *response.status_mut() = status;
    response
}
