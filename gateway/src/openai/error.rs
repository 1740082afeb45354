//! Failures of the OpenAI-compatible endpoint in OpenAI's error shape
//! (`{"error": {"message", "type", "param", "code"}}`), so SDK clients raise their usual
//! exceptions, and the one mapping from a model failure to a status: unreachable → 502,
//! timeout → 504, busy → 429.

use super::response;
use crate::http::body::ProxyBody;
use crate::llm::LlmError;
use http::{HeaderValue, Response, StatusCode, header};

/// An error answered to an API client; `code` is a bounded reason (also `x-toolgate-reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// An error with a status, a bounded code and a message a person can act on.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into() }
    }

    /// 401: no or no acceptable bearer token.
    pub(super) fn unauthenticated(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_api_key", message)
    }

    /// 503: no `[llm]` configured.
    pub(super) fn no_model() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "llm_not_configured",
            "no language model is configured for this gateway",
        )
    }

    /// 503: the audit log cannot record the step, so it is not taken.
    pub(super) fn audit_unavailable() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "audit_unavailable",
            "the audit log cannot be written right now; try again later",
        )
    }

    /// 400: the request is not a chat completion the gateway can serve.
    pub(super) fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// The model call failed before its answer began.
    pub(super) fn from_llm(error: &LlmError) -> Self {
        let status = match error {
            LlmError::Unreachable(_) | LlmError::Protocol(_) | LlmError::Interrupted => {
                StatusCode::BAD_GATEWAY
            }
            LlmError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            LlmError::RateLimited | LlmError::Status { status: 429, .. } => StatusCode::TOO_MANY_REQUESTS,
            LlmError::Status { status: 400 | 413 | 422, .. } => StatusCode::BAD_REQUEST,
            LlmError::Config(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_GATEWAY,
        };
        Self::new(status, error.reason(), error.user_message())
    }

    /// The bounded reason (tests read it; the response carries it as `code`).
    #[cfg(test)]
    pub(crate) fn code(&self) -> &'static str {
        self.code
    }

    /// The message (tests read it; the response carries it).
    #[cfg(test)]
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP status (tests read it; the response carries it).
    #[cfg(test)]
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    /// The error's `type`, as OpenAI names its classes of errors.
    fn kind(&self) -> &'static str {
        match self.status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::FORBIDDEN => "permission_error",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            status if status.is_server_error() => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The error's body, also sent as the last event of a stream that fails mid-way.
    pub(super) fn body(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {"message": self.message, "type": self.kind(), "param": null, "code": self.code},
        })
    }

    /// The error as a response.
    pub fn into_response(self) -> Response<ProxyBody> {
        let mut response = response::json(self.status, &self.body());
        let headers = response.headers_mut();
        if let Ok(value) = HeaderValue::from_str(self.code) {
            headers.insert("x-toolgate-reason", value);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::TimeoutPhase;

    #[test]
    fn model_failures_map_to_gateway_statuses() {
        let status = |error: LlmError| ApiError::from_llm(&error).status();
        assert_eq!(status(LlmError::Unreachable("refused".into())), StatusCode::BAD_GATEWAY);
        assert_eq!(status(LlmError::Timeout(TimeoutPhase::FirstToken)), StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(status(LlmError::RateLimited), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(status(LlmError::Status { status: 500, message: String::new() }), StatusCode::BAD_GATEWAY);
        assert_eq!(status(LlmError::Status { status: 413, message: String::new() }), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn the_body_has_openais_shape() {
        let body = ApiError::unauthenticated("no token").body();
        assert_eq!(body["error"]["type"], "authentication_error");
        assert_eq!(body["error"]["code"], "invalid_api_key");
        assert_eq!(body["error"]["message"], "no token");
        assert!(body["error"]["param"].is_null());
    }
}
