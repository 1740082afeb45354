//! The VOIX task board: `<tool>` and `<context>` elements in its HTML, handlers in its script.

use super::{DemoApp, STYLE, plain, with_type};
use crate::http::body::{self, ProxyBody};
use crate::http::pages::escape_html;
use http::{HeaderValue, Method, Response, StatusCode, header};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

const TASKS_PAGE: &str = include_str!("../pages/tasks.html");
const TASKS_SCRIPT: &str = include_str!("../pages/tasks.js");

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
    fn respond(&self, method: &Method, path: &str, _query: &str, body: &[u8]) -> Response<ProxyBody> {
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
