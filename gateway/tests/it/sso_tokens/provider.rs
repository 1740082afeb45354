//! The fake OpenID provider: discovery and a JWKS the test controls (keys, failures, stop).

use super::*;

// The fake OpenID provider.

#[derive(Default)]
pub(super) struct ProviderState {
    pub(super) keys: Vec<Value>,
    pub(super) jwks_failing: bool,
    pub(super) jwks_hits: usize,
    pub(super) id_token: Option<String>,
    /// Key set requests wait while this is set (a provider that stalls).
    pub(super) jwks_stalled: bool,
    /// The issuer the discovery document names, when not the real one (a misconfiguration).
    pub(super) published_issuer: Option<String>,
}

pub(super) struct Provider {
    pub(super) issuer: String,
    pub(super) address: SocketAddr,
    pub(super) state: Arc<Mutex<ProviderState>>,
    pub(super) stop: watch::Sender<bool>,
}

impl Provider {
    /// A provider whose issuer ends with `suffix` (`/`, as Auth0 and Authentik publish theirs).
    pub(super) async fn start_with_issuer_suffix(keys: Vec<Value>, suffix: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind provider");
        let address = listener.local_addr().expect("provider address");
        let issuer = format!("http://{address}{suffix}");
        let state = Arc::new(Mutex::new(ProviderState { keys, ..ProviderState::default() }));
        let (stop, stopped) = watch::channel(false);
        let (served, base) = (state.clone(), (issuer.clone(), format!("http://{address}")));
        tokio::spawn(async move {
            let mut accept_stopped = stopped.clone();
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => return,
                    },
                    _ = accept_stopped.changed() => return,
                };
                let (state, base, mut connection_stopped) = (served.clone(), base.clone(), stopped.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let (state, base) = (state.clone(), base.clone());
                        async move {
                            if request.uri().path() == "/jwks" {
                                state.lock().expect("state").jwks_hits += 1;
                            }
                            while request.uri().path() == "/jwks" && state.lock().expect("state").jwks_stalled
                            {
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                            Ok::<_, Infallible>(provider_answer(
                                &base.0,
                                &base.1,
                                &state,
                                request.uri().path(),
                            ))
                        }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    // Dropping the connection closes its socket: a stopped provider answers nothing.
                    tokio::select! {
                        _ = connection => {}
                        _ = connection_stopped.changed() => {}
                    }
                });
            }
        });
        Self { issuer, address, state, stop }
    }

    pub(super) fn with_state<T>(&self, change: impl FnOnce(&mut ProviderState) -> T) -> T {
        change(&mut self.state.lock().expect("provider state"))
    }

    pub(super) fn publish(&self, keys: Vec<Value>) {
        self.with_state(|state| state.keys = keys);
    }

    pub(super) fn set_jwks_stalled(&self, stalled: bool) {
        self.with_state(|state| state.jwks_stalled = stalled);
    }

    pub(super) fn set_jwks_failing(&self, failing: bool) {
        self.with_state(|state| state.jwks_failing = failing);
    }

    pub(super) fn set_id_token(&self, token: String) {
        self.with_state(|state| state.id_token = Some(token));
    }

    pub(super) fn jwks_hits(&self) -> usize {
        self.with_state(|state| state.jwks_hits)
    }

    pub(super) fn stop(&self) {
        self.stop.send_replace(true);
    }
}

pub(super) fn provider_answer(
    issuer: &str,
    origin: &str,
    state: &Mutex<ProviderState>,
    path: &str,
) -> Response<Full<Bytes>> {
    let state = state.lock().expect("provider state");
    let (status, body) = match path {
        "/.well-known/openid-configuration" => (
            StatusCode::OK,
            json!({
                "issuer": state.published_issuer.as_deref().unwrap_or(issuer),
                "authorization_endpoint": format!("{origin}/authorize"),
                "token_endpoint": format!("{origin}/token"),
                "jwks_uri": format!("{origin}/jwks"),
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["ES256", "RS256"],
            }),
        ),
        "/jwks" => {
            if state.jwks_failing {
                (StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": "down" }))
            } else {
                (StatusCode::OK, json!({ "keys": state.keys }))
            }
        }
        "/token" => (
            StatusCode::OK,
            json!({
                "access_token": "opaque-access-token", "token_type": "Bearer", "expires_in": 300,
                "id_token": state.id_token,
            }),
        ),
        _ => (StatusCode::NOT_FOUND, json!({ "error": "not found" })),
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}

// A keep-alive HTTP/1.1 client, reconnecting when the gateway closes the connection.

pub(super) struct Client {
    pub(super) address: SocketAddr,
    pub(super) sender: Option<SendRequest<Full<Bytes>>>,
}

impl Client {
    pub(super) fn new(address: SocketAddr) -> Self {
        Self { address, sender: None }
    }

    pub(super) async fn get(&mut self, host: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        for attempt in 0..3 {
            let mut sender = match self.sender.take() {
                Some(sender) if !sender.is_closed() => sender,
                _ => connect(self.address).await,
            };
            if sender.ready().await.is_err() {
                continue;
            }
            let mut request = Request::get(path).header("host", host);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let request = request.body(Full::new(Bytes::new())).expect("request is well-formed");
            match sender.send_request(request).await {
                Ok(response) => {
                    let (parts, body) = response.into_parts();
                    let body = body.collect().await.expect("body completes").to_bytes();
                    self.sender = Some(sender);
                    return Answer { status: parts.status, headers: parts.headers, body };
                }
                // The gateway may close a kept-alive connection between requests; a GET is safe
                // to send again.
                Err(error) if attempt < 2 => note_retry(&error),
                Err(error) => panic!("GET {path} on {host}: {error}"),
            }
        }
        panic!("GET {path} on {host}: no connection")
    }
}

pub(super) fn note_retry(error: &hyper::Error) {
    eprintln!("retrying after a closed connection: {error}");
}

pub(super) async fn connect(address: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(address).await.expect("connect to gateway");
    let (sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    sender
}
