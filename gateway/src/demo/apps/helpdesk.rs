//! The IT helpdesk: a WebMCP declarative form (`<form toolname>`) to open tickets, and a ticket
//! queue whose table registers itself as a component in `window.__ci4a__` (state view, `sort`,
//! `filter` and `select` tools).

use super::{DemoApp, STYLE, plain, with_type};
use crate::http::body::{self, ProxyBody};
use http::{HeaderValue, Method, Response, StatusCode, header};
use serde::Serialize;
use std::sync::Mutex;

const FORM_PAGE: &str = include_str!("../pages/helpdesk.html");
const FORM_SCRIPT: &str = include_str!("../pages/helpdesk.js");
const QUEUE_PAGE: &str = include_str!("../pages/queue.html");
const QUEUE_SCRIPT: &str = include_str!("../pages/queue.js");

/// The helpdesk app.
pub struct Helpdesk {
    tickets: Mutex<Vec<Ticket>>,
}

#[derive(Debug, Clone, Serialize)]
struct Ticket {
    id: u64,
    summary: String,
    category: String,
    urgency: String,
    details: String,
    notify: bool,
}

impl Default for Helpdesk {
    fn default() -> Self {
        let examples = [
            ("Laptop fan is very loud", "hardware", "low"),
            ("Cannot open the VPN client", "software", "high"),
            ("Access to the finance share", "access", "medium"),
        ];
        let tickets = examples
            .iter()
            .enumerate()
            .map(|(index, (summary, category, urgency))| Ticket {
                id: index as u64 + 1,
                summary: (*summary).into(),
                category: (*category).into(),
                urgency: (*urgency).into(),
                details: String::new(),
                notify: false,
            })
            .collect();
        Self { tickets: Mutex::new(tickets) }
    }
}

impl Helpdesk {
    fn open(&self, body: &[u8], wants_json: bool) -> Response<ProxyBody> {
        let field = |name: &str| {
            form_urlencoded::parse(body)
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.trim().chars().take(500).collect::<String>())
        };
        let summary = field("summary").unwrap_or_default();
        let category = field("category").unwrap_or_default();
        let urgency = field("urgency").unwrap_or_else(|| "low".into());
        let valid = !summary.is_empty()
            && ["hardware", "software", "access"].contains(&category.as_str())
            && ["low", "medium", "high"].contains(&urgency.as_str());
        if !valid {
            return plain(StatusCode::BAD_REQUEST, "summary, a known category and urgency are required");
        }
        let mut tickets = self.tickets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ticket = Ticket {
            id: tickets.last().map_or(1, |ticket| ticket.id + 1),
            summary,
            category,
            urgency,
            details: field("details").unwrap_or_default(),
            notify: field("notify").is_some(),
        };
        tickets.push(ticket.clone());
        if wants_json {
            return json(&ticket);
        }
        let mut response = Response::new(body::empty());
        *response.status_mut() = StatusCode::SEE_OTHER;
        response.headers_mut().insert(header::LOCATION, HeaderValue::from_static("/queue"));
        response
    }
}

impl DemoApp for Helpdesk {
    fn respond(&self, method: &Method, path: &str, query: &str, body: &[u8]) -> Response<ProxyBody> {
        let page = |html: &'static str| {
            let mut response = with_type(Response::new(body::full(html)), "text/html; charset=utf-8");
            response.headers_mut().insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("script-src 'self'; object-src 'none'; base-uri 'none'"),
            );
            response
        };
        match (method.as_str(), path) {
            ("GET", "/") => page(FORM_PAGE),
            ("GET", "/queue") => page(QUEUE_PAGE),
            ("GET", "/app.js") => with_type(Response::new(body::full(FORM_SCRIPT)), "text/javascript"),
            ("GET", "/queue.js") => with_type(Response::new(body::full(QUEUE_SCRIPT)), "text/javascript"),
            ("GET", "/style.css") => with_type(Response::new(body::full(STYLE)), "text/css"),
            ("GET", "/api/tickets") => {
                json(&*self.tickets.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
            }
            // Agents (the page's own respondWith) ask for JSON with `?format=json`.
            ("POST", "/tickets") => self.open(body, query == "format=json"),
            _ => plain(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

fn json(value: &impl Serialize) -> Response<ProxyBody> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    with_type(Response::new(body::full(body)), "application/json")
}
