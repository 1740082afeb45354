//! The demo intranet apps, served in-process on loopback: a task board that declares VOIX
//! tools and context, and a legacy expense form with no agent markup. They are ordinary web
//! apps on purpose: the gateway in front of them is what the demo shows.

use crate::body::{self, ProxyBody};
use crate::pages::escape_html;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

const STYLE: &str = include_str!("pages/style.css");
const TASKS_PAGE: &str = include_str!("pages/tasks.html");
const TASKS_SCRIPT: &str = include_str!("pages/tasks.js");
const EXPENSES_PAGE: &str = include_str!("pages/expenses.html");

/// Request bodies of the demo apps are tiny; anything larger is refused.
const MAX_BODY: usize = 16 * 1024;

/// A demo app: answers one request at a time from its in-memory state.
pub trait DemoApp: Send + Sync + 'static {
    /// Answers a request whose body has been read.
    fn respond(&self, method: &Method, path: &str, body: &[u8]) -> Response<ProxyBody>;
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
                        Ok(collected) => app.respond(&parts.method, parts.uri.path(), &collected.to_bytes()),
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

/// The VOIX task board.
#[derive(Default)]
pub struct TaskBoard {
    tasks: Mutex<Vec<Task>>,
}

#[derive(Debug, Clone, Serialize)]
struct Task {
    id: u64,
    title: String,
    done: bool,
}

#[derive(Deserialize)]
struct NewTask {
    title: String,
}

#[derive(Deserialize)]
struct TaskNumber {
    id: u64,
}

impl TaskBoard {
    /// A board with a few tasks so the demo has something to show.
    pub fn with_examples() -> Self {
        let board = Self::default();
        for title in ["Review the Q3 roadmap", "Book the team offsite", "Rotate the staging keys"] {
            board.add(title);
        }
        board
    }

    fn add(&self, title: &str) {
        let mut tasks = self.lock();
        let id = tasks.last().map_or(1, |task| task.id + 1);
        tasks.push(Task { id, title: title.trim().chars().take(200).collect(), done: false });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Task>> {
        // A panic while holding the lock leaves a list of plain values, still consistent.
        self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn page(&self) -> String {
        let tasks = self.lock();
        let items: String = tasks
            .iter()
            .map(|task| {
                let class = if task.done { " class=\"done\"" } else { "" };
                format!("<li{class}>#{} {}</li>", task.id, escape_html(&task.title))
            })
            .collect();
        let context: Vec<String> = tasks
            .iter()
            .map(|task| {
                format!("#{} {}{}", task.id, escape_html(&task.title), if task.done { " (done)" } else { "" })
            })
            .collect();
        TASKS_PAGE.replace("{{TASK_ITEMS}}", &items).replace("{{TASK_CONTEXT}}", &context.join("\n"))
    }

    fn tasks_json(&self) -> Response<ProxyBody> {
        let body = serde_json::to_vec(&*self.lock()).unwrap_or_default();
        with_type(Response::new(body::full(body)), "application/json")
    }
}

impl DemoApp for TaskBoard {
    fn respond(&self, method: &Method, path: &str, body: &[u8]) -> Response<ProxyBody> {
        match (method.as_str(), path) {
            ("GET", "/") => {
                let mut response =
                    with_type(Response::new(body::full(self.page())), "text/html; charset=utf-8");
                response.headers_mut().insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'",
                    ),
                );
                response
            }
            ("GET", "/app.js") => with_type(Response::new(body::full(TASKS_SCRIPT)), "text/javascript"),
            ("GET", "/style.css") => with_type(Response::new(body::full(STYLE)), "text/css"),
            ("GET", "/api/tasks") => self.tasks_json(),
            ("POST", "/api/tasks") => match serde_json::from_slice::<NewTask>(body) {
                Ok(task) if !task.title.trim().is_empty() => {
                    self.add(&task.title);
                    self.tasks_json()
                }
                _ => plain(StatusCode::BAD_REQUEST, "expected {\"title\": \"…\"}"),
            },
            ("POST", "/api/tasks/done" | "/api/tasks/delete") => {
                let Ok(TaskNumber { id }) = serde_json::from_slice(body) else {
                    return plain(StatusCode::BAD_REQUEST, "expected {\"id\": n}");
                };
                let mut tasks = self.lock();
                let Some(index) = tasks.iter().position(|task| task.id == id) else {
                    return plain(StatusCode::NOT_FOUND, "no such task");
                };
                if path.ends_with("done") {
                    tasks[index].done = true;
                } else {
                    tasks.remove(index);
                }
                drop(tasks);
                self.tasks_json()
            }
            _ => plain(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

/// The legacy expense form.
#[derive(Default)]
pub struct ExpenseForm {
    claims: Mutex<Vec<Claim>>,
}

#[derive(Debug, Clone)]
struct Claim {
    amount: String,
    currency: String,
    date: String,
    description: String,
}

impl ExpenseForm {
    fn page(&self) -> (String, String) {
        let claims = self.claims.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let items: String = claims
            .iter()
            .map(|claim| {
                format!(
                    "<li>{} {} on {}: {}</li>",
                    escape_html(&claim.amount),
                    escape_html(&claim.currency),
                    escape_html(&claim.date),
                    escape_html(&claim.description)
                )
            })
            .collect();
        // Like many legacy apps, this one protects its inline script with a per-response nonce.
        let nonce = format!("{:016x}", u64::from_le_bytes(crate::random::random_bytes()));
        let page = EXPENSES_PAGE.replace("{{CLAIMS}}", &items).replace("{{NONCE}}", &nonce);
        (page, nonce)
    }
}

impl DemoApp for ExpenseForm {
    fn respond(&self, method: &Method, path: &str, body: &[u8]) -> Response<ProxyBody> {
        match (method.as_str(), path) {
            ("GET", "/") => {
                let (page, nonce) = self.page();
                let mut response = with_type(Response::new(body::full(page)), "text/html; charset=utf-8");
                let policy = format!("script-src 'nonce-{nonce}'; object-src 'none'; base-uri 'none'");
                if let Ok(value) = HeaderValue::from_str(&policy) {
                    response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
                }
                response
            }
            ("GET", "/style.css") => with_type(Response::new(body::full(STYLE)), "text/css"),
            ("POST", "/submit") => {
                let field = |name: &str| {
                    form_urlencoded::parse(body)
                        .find(|(key, _)| key == name)
                        .map(|(_, value)| value.chars().take(200).collect::<String>())
                        .unwrap_or_default()
                };
                let claim = Claim {
                    amount: field("amount"),
                    currency: field("currency"),
                    date: field("date"),
                    description: field("description"),
                };
                if claim.amount.is_empty() || claim.description.is_empty() {
                    return plain(StatusCode::BAD_REQUEST, "amount and description are required");
                }
                self.claims.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(claim);
                let mut response = Response::new(body::empty());
                *response.status_mut() = StatusCode::SEE_OTHER;
                response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/"));
                response
            }
            _ => plain(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

fn with_type(mut response: Response<ProxyBody>, content_type: &'static str) -> Response<ProxyBody> {
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<ProxyBody> {
    let mut response =
        with_type(Response::new(body::full(Bytes::from_static(text.as_bytes()))), "text/plain");
    *response.status_mut() = status;
    response
}
