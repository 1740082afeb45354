//! The legacy expense form: plain HTML, no agent markup; the demo configuration's form rule
//! turns it into the `submit_expense` tool at the gateway.

use super::{DemoApp, STYLE, plain, with_type};
use crate::http::body::{self, ProxyBody};
use crate::http::pages::escape_html;
use http::{HeaderValue, Method, Response, StatusCode, header};
use std::sync::Mutex;

const EXPENSES_PAGE: &str = include_str!("../pages/expenses.html");

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
        let nonce = format!("{:016x}", u64::from_le_bytes(crate::support::random::random_bytes()));
        let page = EXPENSES_PAGE.replace("{{CLAIMS}}", &items).replace("{{NONCE}}", &nonce);
        (page, nonce)
    }
}

impl DemoApp for ExpenseForm {
    fn respond(&self, method: &Method, path: &str, _query: &str, body: &[u8]) -> Response<ProxyBody> {
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
