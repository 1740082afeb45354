//! A small Chrome DevTools Protocol client for browser tests: starts Debian's headless Chromium
//! with a fresh profile, opens pages, navigates, evaluates JavaScript (awaiting promises) in the
//! page or with a shadow root (closed ones too) as `this`, and collects console errors and
//! uncaught exceptions.
//!
//! One WebSocket to the browser endpoint; each page is a flattened session on it. A reader task
//! routes command results by id and keeps the events each test needs.

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// How long any single protocol command or page load may take before the test fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The object group of the remote objects `Page::eval_in_shadow` resolves (released after each).
const SHADOW_GROUP: &str = "toolgate-tests-shadow";

/// The flags every test browser starts with (the project's standard headless set).
pub const STANDARD_FLAGS: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Debian's Chromium; the README's test command installs it. A missing browser is a failure
/// with instructions, never a skipped test.
pub fn chromium_path() -> PathBuf {
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "headless Chromium is required: run ./test.sh (it installs Debian's `chromium`) or `apt-get install chromium`"
    );
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;
type Events = Arc<Mutex<HashMap<String, Vec<mpsc::UnboundedSender<(String, Value)>>>>>;

/// A running headless Chromium and the protocol connection to it.
pub struct Browser {
    _process: tokio::process::Child,
    _profile: tempfile::TempDir,
    connection: Connection,
}

/// The shared, cloneable half of the connection: send commands, subscribe to session events.
#[derive(Clone)]
struct Connection {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Pending,
    events: Events,
    next_id: Arc<AtomicU64>,
}

/// One tab, as a flattened DevTools session.
pub struct Page {
    connection: Connection,
    session: String,
    errors: Arc<Mutex<Vec<String>>>,
    loads: tokio::sync::Mutex<mpsc::UnboundedReceiver<(String, Value)>>,
}

impl Browser {
    /// Starts Chromium with the standard flags plus `extra` (e.g. `--enable-features=…`).
    pub async fn launch(extra: &[&str]) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let process = tokio::process::Command::new(chromium_path())
            .args(STANDARD_FLAGS)
            .args(extra)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium");
        let (port, path) = devtools_endpoint(profile.path()).await;
        let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("connect to devtools");
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (socket, _) = tokio_tungstenite::client_async(url, stream).await.expect("devtools handshake");
        let (mut sink, mut source) = socket.split();
        let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = queue.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let events: Events = Arc::default();
        let (reader_pending, reader_events) = (Arc::clone(&pending), Arc::clone(&events));
        tokio::spawn(async move {
            while let Some(Ok(message)) = source.next().await {
                let Ok(text) = message.to_text() else { continue };
                let Ok(value) = serde_json::from_str::<Value>(text) else { continue };
                route(&value, &reader_pending, &reader_events);
            }
        });
        let connection = Connection { outgoing, pending, events, next_id: Arc::new(AtomicU64::new(1)) };
        Browser { _process: process, _profile: profile, connection }
    }

    /// Opens a new blank tab with console and exception collection switched on.
    pub async fn page(&self) -> Page {
        let connection = self.connection.clone();
        let target = connection.call(None, "Target.createTarget", json!({"url": "about:blank"})).await;
        let target_id = target["targetId"].as_str().expect("target id").to_owned();
        let attached = connection
            .call(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}))
            .await;
        let session = attached["sessionId"].as_str().expect("session id").to_owned();
        let events = connection.subscribe(&session);
        let (loads_sender, loads) = mpsc::unbounded_channel();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&errors);
        tokio::spawn(collect_events(events, collected, loads_sender));
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            connection.call(Some(&session), domain, json!({})).await;
        }
        Page { connection, session, errors, loads: tokio::sync::Mutex::new(loads) }
    }
}

impl Page {
    /// Navigates and waits for the load event.
    pub async fn goto(&self, url: &str) {
        let mut loads = self.loads.lock().await;
        while loads.try_recv().is_ok() {}
        let navigated = self.call("Page.navigate", json!({"url": url})).await;
        if let Some(error) = navigated.get("errorText").and_then(Value::as_str) {
            panic!("navigation to {url} failed: {error}");
        }
        tokio::time::timeout(COMMAND_TIMEOUT, loads.recv())
            .await
            .unwrap_or_else(|_| panic!("{url} did not finish loading"))
            .expect("browser connection open");
    }

    /// Evaluates `expression` in the page, awaiting a returned promise; returns its JSON value
    /// (`null` for `undefined`). A thrown exception fails the test with its text.
    pub async fn eval(&self, expression: &str) -> Value {
        let answer = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details["exception"]["description"].as_str().or(details["text"].as_str());
            panic!("JavaScript threw: {}\nin: {expression}", text.unwrap_or("(no description)"));
        }
        answer["result"].get("value").cloned().unwrap_or(Value::Null)
    }

    /// Calls `function_body` (statements; `return` gives the result) with the shadow root of
    /// the first element matching `host_selector` as `this`, awaiting a returned promise; returns
    /// its JSON value. The root is found through the protocol (`DOM.getDocument` with `pierce`),
    /// which reaches closed roots that page scripts cannot. A thrown exception fails the test.
    pub async fn eval_in_shadow(&self, host_selector: &str, function_body: &str) -> Value {
        let document = self.call("DOM.getDocument", json!({"depth": -1, "pierce": true})).await;
        let host = self
            .call(
                "DOM.querySelector",
                json!({"nodeId": document["root"]["nodeId"], "selector": host_selector}),
            )
            .await;
        let host = host["nodeId"].as_i64().filter(|id| *id != 0);
        let host = host.unwrap_or_else(|| panic!("no element matches {host_selector}"));
        let described =
            self.call("DOM.describeNode", json!({"nodeId": host, "depth": 1, "pierce": true})).await;
        let root = described["node"]["shadowRoots"][0]["backendNodeId"].as_i64();
        let root = root.unwrap_or_else(|| panic!("{host_selector} has no shadow root"));
        let resolved =
            self.call("DOM.resolveNode", json!({"backendNodeId": root, "objectGroup": SHADOW_GROUP})).await;
        let object = resolved["object"]["objectId"].as_str().expect("the shadow root as a remote object");
        let answer = self
            .call(
                "Runtime.callFunctionOn",
                json!({
                    "functionDeclaration": format!("async function () {{ {function_body}\n}}"),
                    "objectId": object,
                    "awaitPromise": true,
                    "returnByValue": true,
                }),
            )
            .await;
        self.call("Runtime.releaseObjectGroup", json!({"objectGroup": SHADOW_GROUP})).await;
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details["exception"]["description"].as_str().or(details["text"].as_str());
            panic!("JavaScript threw: {}\nin: {function_body}", text.unwrap_or("(no description)"));
        }
        answer["result"].get("value").cloned().unwrap_or(Value::Null)
    }

    /// Evaluates `expression`, which starts a navigation (a click on a submit button, a link),
    /// and waits for the page it leads to (after any redirects) to load.
    pub async fn navigate_by(&self, expression: &str) {
        let mut loads = self.loads.lock().await;
        while loads.try_recv().is_ok() {}
        // Run it after this evaluation returns, so the navigation does not cut the answer off.
        self.eval(&format!("setTimeout(() => {{ {expression}; }}, 0), true")).await;
        tokio::time::timeout(COMMAND_TIMEOUT, loads.recv())
            .await
            .unwrap_or_else(|_| panic!("{expression} led to no page load"))
            .expect("browser connection open");
    }

    /// Runs `action` (which leads to a navigation, however indirectly) and waits for the page it
    /// leads to to load; returns what the action returned.
    pub async fn loaded_after<T>(&self, action: impl std::future::Future<Output = T>) -> T {
        let mut loads = self.loads.lock().await;
        while loads.try_recv().is_ok() {}
        let value = action.await;
        tokio::time::timeout(COMMAND_TIMEOUT, loads.recv())
            .await
            .unwrap_or_else(|_| panic!("no page load followed"))
            .expect("browser connection open");
        value
    }

    /// Sets the viewport to `width` × `height` CSS pixels (a phone below 600 px).
    pub async fn set_viewport(&self, width: u32, height: u32) {
        let metrics =
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600});
        self.call("Emulation.setDeviceMetricsOverride", metrics).await;
    }

    /// Saves a PNG of the whole page (beyond the viewport) to `path`.
    pub async fn screenshot(&self, path: &std::path::Path) {
        use base64::Engine as _;
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png", "captureBeyondViewport": true}))
            .await;
        let data = shot["data"].as_str().expect("screenshot data");
        let png = base64::engine::general_purpose::STANDARD.decode(data).expect("base64 screenshot");
        if let Some(directory) = path.parent() {
            std::fs::create_dir_all(directory).expect("screenshot directory");
        }
        std::fs::write(path, png).expect("write screenshot");
    }

    /// Runs `source` in every new document of this tab before any of the page's scripts.
    pub async fn add_script_on_new_document(&self, source: &str) {
        self.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": source})).await;
    }

    /// Console errors, failed-resource log entries and uncaught exceptions seen so far.
    pub fn console_errors(&self) -> Vec<String> {
        self.errors.lock().expect("errors lock").clone()
    }

    /// Sends any protocol command in this tab's session.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.connection.call(Some(&self.session), method, params).await
    }
}

impl Connection {
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = Value::from(session);
        }
        let (sender, receiver) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, sender);
        self.outgoing.send(message.to_string()).expect("devtools connection open");
        match tokio::time::timeout(COMMAND_TIMEOUT, receiver).await {
            Ok(Ok(Ok(result))) => result,
            Ok(Ok(Err(error))) => panic!("{method} failed: {error}"),
            Ok(Err(_)) => panic!("{method}: the browser connection closed"),
            Err(_) => panic!("{method}: no answer within {COMMAND_TIMEOUT:?}"),
        }
    }

    fn subscribe(&self, session: &str) -> mpsc::UnboundedReceiver<(String, Value)> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.events.lock().expect("events lock").entry(session.to_owned()).or_default().push(sender);
        receiver
    }
}

/// Hands a message from the browser to whoever waits for it.
fn route(message: &Value, pending: &Pending, events: &Events) {
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        let Some(sender) = pending.lock().expect("pending lock").remove(&id) else { return };
        let result = match message.get("error") {
            Some(error) => Err(error.to_string()),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = sender.send(result);
        return;
    }
    let (Some(method), Some(session)) =
        (message.get("method").and_then(Value::as_str), message.get("sessionId").and_then(Value::as_str))
    else {
        return;
    };
    if let Some(listeners) = events.lock().expect("events lock").get_mut(session) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        listeners.retain(|listener| listener.send((method.to_owned(), params.clone())).is_ok());
    }
}

/// Keeps a page's errors and forwards its load events.
async fn collect_events(
    mut events: mpsc::UnboundedReceiver<(String, Value)>,
    errors: Arc<Mutex<Vec<String>>>,
    loads: mpsc::UnboundedSender<(String, Value)>,
) {
    while let Some((method, params)) = events.recv().await {
        let error = match method.as_str() {
            "Page.loadEventFired" => {
                let _ = loads.send((method, params));
                None
            }
            "Runtime.exceptionThrown" => Some(format!(
                "uncaught: {}",
                params["exceptionDetails"]["exception"]["description"]
                    .as_str()
                    .or(params["exceptionDetails"]["text"].as_str())
                    .unwrap_or("?")
            )),
            "Runtime.consoleAPICalled" if params["type"] == "error" => {
                let args: Vec<String> = params["args"]
                    .as_array()
                    .map(|args| {
                        args.iter()
                            .map(|arg| arg["value"].as_str().map_or_else(|| arg.to_string(), str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                Some(format!("console.error: {}", args.join(" ")))
            }
            "Log.entryAdded" if params["entry"]["level"] == "error" => {
                Some(format!("log: {}", params["entry"]["text"].as_str().unwrap_or("?")))
            }
            _ => None,
        };
        if let Some(error) = error {
            errors.lock().expect("errors lock").push(error);
        }
    }
}

/// Waits for Chromium to write the DevTools port and path into the profile.
async fn devtools_endpoint(profile: &Path) -> (u16, String) {
    let file = profile.join("DevToolsActivePort");
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next())
                && let Ok(port) = port.trim().parse()
            {
                return (port, path.trim().to_owned());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("Chromium did not open its DevTools port within 15 s");
}
