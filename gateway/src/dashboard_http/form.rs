//! Reading a dashboard form: `application/x-www-form-urlencoded`, at most 1 MiB (a policy
//! document is the largest field), read under the body idle timeout.

use crate::http::body::IdleTimeout;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use std::time::Duration;

/// Largest form accepted.
const MAX_FORM: usize = 1 << 20;

/// A submitted form's fields, in order.
pub(super) struct Form {
    fields: Vec<(String, String)>,
}

impl Form {
    /// Reads the body; the status to answer when it is not a form or too large.
    pub(super) async fn read(request: Request<Incoming>, idle: Duration) -> Result<Self, StatusCode> {
        let is_form =
            request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(
                |value| {
                    value.split(';').next().is_some_and(|essence| {
                        essence.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded")
                    })
                },
            );
        if !is_form {
            return Err(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        }
        let body = IdleTimeout::new(request.into_body(), idle);
        let bytes = Limited::new(body, MAX_FORM)
            .collect()
            .await
            .map_err(|_| StatusCode::PAYLOAD_TOO_LARGE)?
            .to_bytes();
        Ok(Self { fields: url::form_urlencoded::parse(&bytes).into_owned().collect() })
    }

    /// The first value of `name`.
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        crate::sso::login::param(&self.fields, name)
    }

    /// The first value of `name`, or "".
    pub(super) fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or("")
    }
}
