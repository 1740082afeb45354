//! `GET /.toolgate/agent/outcomes/{call id}`: what the site answered the caller's own form
//! submission for that call (`outcomes`), for the runtime to give `__toolgate__.call` and the
//! panel the real result. It waits, bounded: a few seconds for the submission to reach the site
//! (none with `?arrival=0`, for a submission the page sent itself; with replicas, still the
//! moment another replica's record takes to reach the store), then until the site has answered
//! or the call's timeout is over.
//!
//! Answers `{"observed": false}` when no submission of the call reached the site (the page
//! answered the call itself), else `{"observed": true, "ok": true, "result": {…}}` or
//! `{"observed": true, "ok": false, "error": {"code": "rejected_by_site", "message", "messages"}}`.
//! The messages are the page's own text, for the user's own page: the model gets them redacted.

use super::{ApiError, Caller, json};
use crate::config::Site;
use crate::http::body::ProxyBody;
use crate::outcomes::SiteAnswer;
use crate::state::Gateway;
use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::json;
use std::time::Duration;

/// How long a submission has to reach the site after the runtime asks.
pub const ARRIVAL: Duration = Duration::from_secs(3);

/// Waits for and answers the outcome of one of the caller's calls.
pub async fn respond(
    gateway: &Gateway,
    site: &Site,
    caller: &Caller,
    call_id: &str,
    request: &Request<Incoming>,
) -> Result<Response<ProxyBody>, ApiError> {
    super::turn_endpoints::check_csrf(gateway, site, caller, request)?;
    let valid = (1..=64).contains(&call_id.len())
        && call_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'));
    if !valid {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such call"));
    }
    let owner = caller.owner(gateway, site).key();
    let deadline = tokio::time::Instant::now() + gateway.config.agent.tool_timeout;
    // `?arrival=0`: the submission was sent by the page itself and has arrived by now, or never will.
    let arrival = if request.uri().query() == Some("arrival=0") { Duration::ZERO } else { ARRIVAL };
    let answer = gateway.outcomes.wait(&owner, call_id, arrival, deadline).await;
    Ok(json(StatusCode::OK, &body(answer.as_ref())))
}

/// The JSON answer for an outcome (or for none).
fn body(answer: Option<&SiteAnswer>) -> serde_json::Value {
    let Some(answer) = answer else { return json!({"observed": false}) };
    match (answer.tool_result(), answer) {
        (Ok(result), _) => json!({"observed": true, "ok": true, "result": result}),
        (Err(message), SiteAnswer::RejectedBySite { messages, .. }) => json!({
            "observed": true, "ok": false,
            "error": {"code": answer.label(), "message": message, "messages": messages, "status": answer.status()},
        }),
        (Err(message), _) => json!({
            "observed": true, "ok": false,
            "error": {"code": answer.label(), "message": message, "status": answer.status()},
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_say_what_the_site_did() {
        assert_eq!(body(None), json!({"observed": false}));
        let accepted =
            SiteAnswer::Accepted { status: 302, url: Some("/list/".into()), title: Some("List".into()) };
        assert_eq!(
            body(Some(&accepted)),
            json!({"observed": true, "ok": true,
                   "result": {"submitted": true, "status": 302, "url": "/list/", "title": "List"}})
        );
        let refused = SiteAnswer::RejectedBySite { status: 200, messages: vec!["Email taken".into()] };
        let answer = body(Some(&refused));
        assert_eq!(answer["ok"], json!(false));
        assert_eq!(answer["error"]["code"], "rejected_by_site");
        assert_eq!(answer["error"]["messages"], json!(["Email taken"]));
        assert!(answer["error"]["message"].as_str().is_some_and(|text| text.ends_with(": Email taken")));
    }
}
