//! A streamed completion in OpenAI's Server-Sent Events format (`data: {chunk}`, then
//! `data: [DONE]`). The model's text is passed on as it arrives; tool calls are held until the
//! answer is complete and checked, then the allowed ones are sent whole and the refused ones
//! explained in a last piece of text.
//!
//! The model call starts before the response does, so a model that cannot be reached or does not
//! answer in time is an HTTP error (502, 504), not a broken stream. A failure after the first
//! byte ends the stream with an `error` event, which OpenAI's clients raise. A client that leaves
//! stops the model call (its stream is dropped).

use super::exchange::{Exchange, tokens};
use super::{ApiError, calls, response};
use crate::http::body::ProxyBody;
use crate::llm::{ChatEvent, ChatRequest, ChatStream, ToolCall, Usage};
use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Value, json};
use std::time::Instant;
use tokio::sync::mpsc;

/// Starts the model's stream and answers with the client's; `finished` gets the tokens used
/// once the stream is over.
pub async fn start<Finished: Future<Output = ()> + Send>(
    exchange: Exchange,
    request: ChatRequest,
    include_usage: bool,
    finished: impl FnOnce(u64) -> Finished + Send + 'static,
) -> Result<Response<ProxyBody>, ApiError> {
    let started = Instant::now();
    let model = match exchange.llm.stream(request).await {
        Ok(model) => model,
        Err(error) => {
            exchange.model_failed(&error, started);
            finished(0).await;
            return Err(ApiError::from_llm(&error));
        }
    };
    let (sender, response) = crate::http::body::event_stream();
    tokio::spawn(async move {
        let client = Client(sender);
        let outcome = relay(&exchange, model, &client, include_usage, started).await;
        // Released before `[DONE]`, so a client's next request never finds this one running.
        finished(tokens(outcome.as_ref().ok().copied().flatten())).await;
        if outcome.is_ok() {
            client.done().await;
        }
    });
    Ok(response)
}

/// Passes the model's answer on, up to the last chunk; its usage once complete, `Err` when the
/// stream failed or the client left.
async fn relay(
    exchange: &Exchange,
    mut model: ChatStream,
    client: &Client,
    include_usage: bool,
    started: Instant,
) -> Result<Option<Usage>, ()> {
    let role = json!({"role": "assistant", "content": ""});
    if !client.send(&response::chunk(exchange, role, None)).await {
        exchange.model_failed_with("client_gone", started);
        return Err(());
    }
    let mut wrote_text = false;
    let mut held: Vec<ToolCall> = Vec::new();
    while let Some(event) = model.next().await {
        match event {
            Ok(ChatEvent::TextDelta(delta)) => {
                wrote_text = true;
                let chunk = response::chunk(exchange, json!({"content": delta}), None);
                if !client.send(&chunk).await {
                    // Dropping the model's stream closes its connection: the model stops.
                    exchange.model_failed_with("client_gone", started);
                    return Err(());
                }
            }
            Ok(ChatEvent::ToolCalls(calls)) => held = calls,
            Ok(ChatEvent::Done { finish_reason, usage }) => {
                exchange.model_answered(usage, started);
                let checked = calls::check(exchange, held).await;
                finish(exchange, client, &checked, wrote_text, finish_reason.as_deref()).await;
                if include_usage {
                    client.send(&response::usage_chunk(exchange, usage)).await;
                }
                return Ok(usage);
            }
            Err(error) => {
                exchange.model_failed(&error, started);
                client.send(&ApiError::from_llm(&error).body()).await;
                return Err(());
            }
        }
    }
    // `next` always ends with `Done` or an error; a stream that just stops is a broken one.
    exchange.model_failed_with("llm_interrupted", started);
    client
        .send(
            &ApiError::new(StatusCode::BAD_GATEWAY, "llm_interrupted", "the model stopped answering").body(),
        )
        .await;
    Err(())
}

/// The end of the answer: refusals as text, then the allowed calls, then the finish reason.
async fn finish(
    exchange: &Exchange,
    client: &Client,
    checked: &calls::Checked,
    wrote_text: bool,
    model_said: Option<&str>,
) {
    if !checked.refusals.is_empty() {
        let separator = if wrote_text { "\n\n" } else { "" };
        let text = format!("{separator}{}", checked.refusal_text());
        client.send(&response::chunk(exchange, json!({"content": text}), None)).await;
    }
    if !checked.allowed.is_empty() {
        client.send(&response::chunk(exchange, response::tool_calls_delta(&checked.allowed), None)).await;
    }
    let reason = response::finish(checked, model_said);
    client.send(&response::chunk(exchange, json!({}), Some(reason))).await;
}

/// The sending half of the client's stream.
struct Client(mpsc::Sender<Bytes>);

impl Client {
    /// Sends one `data:` event; `false` once the client is gone.
    async fn send(&self, value: &Value) -> bool {
        self.0.send(Bytes::from(crate::http::sse_frame(None, &value.to_string()))).await.is_ok()
    }

    async fn done(&self) {
        let _ = self.0.send(Bytes::from(crate::http::sse_frame(None, "[DONE]"))).await;
    }
}
