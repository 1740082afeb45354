//! The travel desk: a WebMCP imperative page. Its script registers `search_flights` and
//! `book_flight` with `document.modelContext.registerTool` and offers `list_destinations` through
//! the early-preview `navigator.modelContext.provideContext`; the server only answers JSON.

use super::{DemoApp, STYLE, plain, with_type};
use crate::http::body::{self, ProxyBody};
use http::{HeaderValue, Method, Response, StatusCode, header};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

const TRAVEL_PAGE: &str = include_str!("../pages/travel.html");
const TRAVEL_SCRIPT: &str = include_str!("../pages/travel.js");

/// The flights the demo travel desk sells: (number, from, to, departure, price in EUR).
const FLIGHTS: [(&str, &str, &str, &str, u32); 8] = [
    ("TG101", "Berlin", "London", "07:40", 189),
    ("TG103", "Berlin", "London", "18:05", 142),
    ("TG220", "Berlin", "Paris", "09:15", 164),
    ("TG231", "London", "Berlin", "12:30", 171),
    ("TG305", "Paris", "Madrid", "10:50", 133),
    ("TG410", "Madrid", "Berlin", "16:20", 208),
    ("TG512", "London", "New York", "11:00", 524),
    ("TG513", "New York", "London", "22:10", 498),
];

/// The travel desk app.
#[derive(Default)]
pub struct TravelSearch {
    bookings: Mutex<Vec<Booking>>,
}

#[derive(Debug, Clone, Serialize)]
struct Flight {
    flight: &'static str,
    from: &'static str,
    to: &'static str,
    departs: &'static str,
    price_eur: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Booking {
    flight: String,
    date: String,
    passengers: u32,
}

impl TravelSearch {
    fn search(query: &str) -> Response<ProxyBody> {
        let field = |name: &str| {
            form_urlencoded::parse(query.as_bytes())
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.trim().to_lowercase())
                .unwrap_or_default()
        };
        let (from, to) = (field("from"), field("to"));
        let flights: Vec<Flight> = FLIGHTS
            .iter()
            .filter(|(_, origin, destination, _, _)| {
                (from.is_empty() || origin.to_lowercase() == from)
                    && (to.is_empty() || destination.to_lowercase() == to)
            })
            .map(|&(flight, from, to, departs, price_eur)| Flight { flight, from, to, departs, price_eur })
            .collect();
        json(&flights)
    }

    fn book(&self, body: &[u8]) -> Response<ProxyBody> {
        let Ok(booking) = serde_json::from_slice::<Booking>(body) else {
            return plain(StatusCode::BAD_REQUEST, "expected {\"flight\", \"date\", \"passengers\"}");
        };
        if !FLIGHTS.iter().any(|(flight, ..)| *flight == booking.flight)
            || !(1..=9).contains(&booking.passengers)
        {
            return plain(StatusCode::BAD_REQUEST, "unknown flight or passenger count outside 1-9");
        }
        let mut bookings = self.bookings.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        bookings.push(booking.clone());
        let reference = format!("BK{:04}", bookings.len());
        json(&serde_json::json!({"reference": reference, "booking": booking}))
    }
}

impl DemoApp for TravelSearch {
    fn respond(&self, method: &Method, path: &str, query: &str, body: &[u8]) -> Response<ProxyBody> {
        match (method.as_str(), path) {
            ("GET", "/") => {
                let mut response =
                    with_type(Response::new(body::full(TRAVEL_PAGE)), "text/html; charset=utf-8");
                response.headers_mut().insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static("script-src 'self'; object-src 'none'; base-uri 'none'"),
                );
                response
            }
            ("GET", "/app.js") => with_type(Response::new(body::full(TRAVEL_SCRIPT)), "text/javascript"),
            ("GET", "/style.css") => with_type(Response::new(body::full(STYLE)), "text/css"),
            ("GET", "/api/flights") => Self::search(query),
            ("POST", "/api/bookings") => self.book(body),
            _ => plain(StatusCode::NOT_FOUND, "not found"),
        }
    }
}

fn json(value: &impl Serialize) -> Response<ProxyBody> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    with_type(Response::new(body::full(body)), "application/json")
}
