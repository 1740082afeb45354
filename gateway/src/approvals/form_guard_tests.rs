//! The form guard: the marker in every encoding, duplicates, method override, malformed and
//! oversized bodies failing closed, unmarked human submissions passing, argument matching.
use super::*;
use http::HeaderValue;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(*name, HeaderValue::from_str(value).expect("header"));
    }
    map
}

fn form(body: &str) -> Result<Option<AgentMark>, GuardError> {
    let headers = headers(&[("content-type", "application/x-www-form-urlencoded")]);
    agent_submission(&Method::POST, &headers, body.as_bytes())
}

fn multipart(body: &str) -> Result<Option<AgentMark>, GuardError> {
    let headers = headers(&[("content-type", "multipart/form-data; boundary=----WebKitFormBoundaryx7")]);
    agent_submission(&Method::POST, &headers, body.as_bytes())
}

fn json(body: &str) -> Result<Option<AgentMark>, GuardError> {
    let headers = headers(&[("content-type", "application/json; charset=utf-8")]);
    agent_submission(&Method::POST, &headers, body.as_bytes())
}

fn marked(result: Result<Option<AgentMark>, GuardError>) -> AgentMark {
    result.expect("parses").expect("marked")
}

const MULTIPART: &str = "------WebKitFormBoundaryx7\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n1200\r\n\
------WebKitFormBoundaryx7\r\nContent-Disposition: form-data; name=\"receipt\"; filename=\"r.txt\"\r\n\
Content-Type: text/plain\r\n\r\n__toolgate_call=not-this\r\n\
------WebKitFormBoundaryx7\r\nContent-Disposition: form-data; name=\"__toolgate_call\"\r\n\r\ncall_1\r\n\
------WebKitFormBoundaryx7\r\nContent-Disposition: form-data; name=\"__toolgate_approval\"\r\n\r\ntga1.x.y\r\n\
------WebKitFormBoundaryx7--\r\n";

#[test]
fn the_marker_is_found_in_every_encoding() {
    let mark = marked(form("amount=1200&note=taxi+ride&__toolgate_call=call_1&__toolgate_approval=tga1.x.y"));
    assert_eq!(mark.call_id, "call_1");
    assert_eq!(mark.token.as_deref(), Some("tga1.x.y"));
    assert_eq!(mark.method, Method::POST);
    assert_eq!(mark.fields, vec![("amount".into(), "1200".into()), ("note".into(), "taxi ride".into())]);

    let mark = marked(multipart(MULTIPART));
    assert_eq!((mark.call_id.as_str(), mark.token.as_deref()), ("call_1", Some("tga1.x.y")));
    assert_eq!(mark.fields, vec![("amount".into(), "1200".into())], "file parts are left out");

    let mark = marked(json(r#"{"amount": 1200, "tags": ["a"], "__toolgate_call": "call_1"}"#));
    assert_eq!((mark.call_id.as_str(), mark.token), ("call_1", None));
    assert_eq!(mark.fields, vec![("amount".into(), "1200".into()), ("tags".into(), r#"["a"]"#.into())]);

    let plain = headers(&[("content-type", "text/plain")]);
    let mark = marked(agent_submission(&Method::POST, &plain, b"amount=5\r\n__toolgate_call=c\r\n"));
    assert_eq!(mark.call_id, "c");

    let by_header = headers(&[("x-toolgate-call", "call_9"), ("x-toolgate-approval", "tga1.a.b")]);
    let mark = marked(agent_submission(&Method::POST, &by_header, b""));
    assert_eq!((mark.call_id.as_str(), mark.token.as_deref()), ("call_9", Some("tga1.a.b")));

    let mark = marked(query_mark(&Method::GET, &HeaderMap::new(), "q=1&__toolgate_call=call_3"));
    assert_eq!((mark.call_id.as_str(), mark.method), ("call_3", Method::GET));
}

#[test]
fn marker_name_variants_and_a_token_alone_still_mark() {
    assert_eq!(marked(form("%5F%5Ftoolgate_call=c")).call_id, "c", "percent-encoded name");
    assert_eq!(marked(form("__TOOLGATE.CALL=c")).call_id, "c", "case and PHP dot");
    assert_eq!(marked(form("__toolgate_call[]=c")).call_id, "c", "array syntax");
    let mark = marked(form("__toolgate_approval=t"));
    assert_eq!((mark.call_id.as_str(), mark.token.as_deref()), ("", Some("t")));
}

#[test]
fn human_submissions_are_not_marked() {
    assert_eq!(form("amount=1200&note=__toolgate_call"), Ok(None), "marker text in a value");
    assert_eq!(
        multipart(&MULTIPART.replace("__toolgate_call\"", "other\"").replace("__toolgate_approval", "x")),
        Ok(None)
    );
    assert_eq!(json(r#"{"amount": 1}"#), Ok(None));
    assert_eq!(json(r#"[1, 2]"#), Ok(None));
    assert_eq!(agent_submission(&Method::POST, &HeaderMap::new(), b""), Ok(None));
    let binary = headers(&[("content-type", "application/octet-stream")]);
    assert_eq!(agent_submission(&Method::POST, &binary, b"\x00\x01 plain upload"), Ok(None));
    assert_eq!(query_mark(&Method::GET, &HeaderMap::new(), "q=toolgate"), Ok(None));
}

#[test]
fn duplicate_markers_must_agree() {
    assert_eq!(marked(form("__toolgate_call=c&__toolgate_call=c")).call_id, "c");
    assert_eq!(form("__toolgate_call=c&__toolgate_call=d"), Err(GuardError::Conflicting("call marker")));
    assert_eq!(
        json(r#"{"__toolgate_call": "c", "__toolgate_call": "d"}"#),
        Err(GuardError::Conflicting("call marker"))
    );
    let body = MULTIPART.replace("name=\"amount\"", "name=\"__toolgate_call\"");
    assert_eq!(multipart(&body), Err(GuardError::Conflicting("call marker")));
    let mixed = headers(&[("content-type", "application/x-www-form-urlencoded"), ("x-toolgate-call", "h")]);
    let result = agent_submission(&Method::POST, &mixed, b"__toolgate_call=f");
    assert_eq!(result, Err(GuardError::Conflicting("call marker")));
    let twice = headers(&[("x-toolgate-approval", "a"), ("x-toolgate-approval", "b")]);
    assert!(matches!(agent_submission(&Method::POST, &twice, b""), Err(GuardError::Conflicting(_))));
}

#[test]
fn method_override_gives_the_effective_method() {
    assert_eq!(marked(form("_method=delete&__toolgate_call=c")).method, Method::DELETE);
    let header =
        headers(&[("content-type", "application/x-www-form-urlencoded"), ("x-http-method-override", "PUT")]);
    let mark = marked(agent_submission(&Method::POST, &header, b"__toolgate_call=c"));
    assert_eq!(mark.method, Method::PUT);
    let conflicting = agent_submission(&Method::POST, &header, b"_method=PATCH&__toolgate_call=c");
    assert_eq!(conflicting, Err(GuardError::Conflicting("method override")));
    assert_eq!(
        form("_method=DE%20LETE&__toolgate_call=c"),
        Err(GuardError::Malformed("invalid method override"))
    );
    let json_override = marked(json(r#"{"_method": "patch", "__toolgate_call": "c"}"#));
    assert_eq!(json_override.method, Method::PATCH);
    assert!(json_override.fields.is_empty());
}

#[test]
fn malformed_bodies_fail_closed_when_the_marker_may_be_in_them() {
    let truncated = &MULTIPART[..MULTIPART.len() - 40];
    assert!(matches!(multipart(truncated), Err(GuardError::Malformed(_))));
    assert!(matches!(json(r#"{"__toolgate_call": "c""#), Err(GuardError::Malformed(_))));
    assert!(matches!(json(r#"{"\u005f_tool\u0067ate_call": "c"#), Err(GuardError::Malformed(_))), "escaped");
    assert!(matches!(json(r#"[{"__toolgate_call": "c"}]"#), Err(GuardError::Malformed(_))));
    let no_boundary = headers(&[("content-type", "multipart/form-data")]);
    let result = agent_submission(&Method::POST, &no_boundary, MULTIPART.as_bytes());
    assert!(matches!(result, Err(GuardError::Malformed(_))));
    let unknown = headers(&[("content-type", "application/x-custom")]);
    let result = agent_submission(&Method::POST, &unknown, b"x%5F%5FTOOLGATE_call=c");
    assert!(matches!(result, Err(GuardError::Malformed(_))), "percent-encoded in an unknown encoding");
    let result = agent_submission(&Method::POST, &HeaderMap::new(), b"__toolgate_call=c");
    assert!(matches!(result, Err(GuardError::Malformed(_))), "no Content-Type");
    let twice = headers(&[("content-type", "application/json"), ("content-type", "text/plain")]);
    assert!(matches!(
        agent_submission(&Method::POST, &twice, b"__toolgate_call=c"),
        Err(GuardError::Malformed(_))
    ));
    // Header-marked with a body that cannot be read: refused even without marker text inside.
    let marked_broken = headers(&[("content-type", "application/json"), ("x-toolgate-call", "c")]);
    assert!(matches!(
        agent_submission(&Method::POST, &marked_broken, b"{oops"),
        Err(GuardError::Malformed(_))
    ));
    // The same broken bodies without any marker are someone else's problem: forwarded as-is.
    assert_eq!(json("{oops"), Ok(None));
    assert_eq!(multipart("garbage"), Ok(None));
    let file_marker =
        MULTIPART.replace("name=\"__toolgate_call\"", "name=\"__toolgate_call\"; filename=\"a\"");
    assert!(matches!(multipart(&file_marker), Err(GuardError::Malformed(_))));
}

#[test]
fn bodies_over_the_bound_are_refused_only_when_they_may_be_marked() {
    let mut body = "a=".to_owned() + &"x".repeat(MAX_GUARDED_BODY);
    assert_eq!(form(&body), Ok(None));
    body.push_str("&__toolgate_call=c");
    assert_eq!(form(&body), Err(GuardError::TooLarge));
    let header_marked = headers(&[("content-type", "application/octet-stream"), ("x-toolgate-call", "c")]);
    let big = vec![b'x'; MAX_GUARDED_BODY + 1];
    assert_eq!(agent_submission(&Method::POST, &header_marked, &big), Err(GuardError::TooLarge));
    let fields = "a=1&".repeat(MAX_FIELDS) + "__toolgate_call=c";
    assert!(matches!(form(&fields), Err(GuardError::Malformed("too many fields"))));
}

#[test]
fn submitted_fields_must_carry_exactly_the_approved_arguments() {
    let args = r#"{"amount":1200,"note":"taxi","receipt":true,"tags":["a","b"],"urgent":false}"#;
    let fields = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
    };
    let exact = [
        ("amount", "1200"),
        ("note", "taxi"),
        ("receipt", "on"),
        ("tags", "a"),
        ("tags", "b"),
        ("csrf", "z"),
    ];
    assert!(fields_match_args(args, &fields(&exact)));
    let cases: [&[(&str, &str)]; 5] = [
        &[("amount", "12000"), ("note", "taxi"), ("receipt", "on"), ("tags", "a"), ("tags", "b")],
        &[("amount", "1200"), ("note", "taxi"), ("tags", "a"), ("tags", "b")],
        &[("amount", "1200"), ("note", "taxi"), ("receipt", "on"), ("tags", "a")],
        &[
            ("amount", "1200"),
            ("amount", "1"),
            ("note", "taxi"),
            ("receipt", "on"),
            ("tags", "a"),
            ("tags", "b"),
        ],
        &[
            ("amount", "1200"),
            ("note", "taxi"),
            ("receipt", "on"),
            ("tags", "a"),
            ("tags", "b"),
            ("urgent", "on"),
        ],
    ];
    for case in cases {
        assert!(!fields_match_args(args, &fields(case)), "{case:?}");
    }
    assert!(!fields_match_args("[1]", &[]));
}

#[test]
fn numbers_match_by_value_not_by_spelling() {
    let fields = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
    };
    assert!(fields_match_args(r#"{"amount":42.0}"#, &fields(&[("amount", "42")])));
    assert!(fields_match_args(r#"{"amount":100}"#, &fields(&[("amount", "1e2")])));
    assert!(fields_match_args(r#"{"amount":0.5}"#, &fields(&[("amount", "0.50")])));
    for sent in ["42.5", "", "forty-two", "NaN", "inf"] {
        assert!(!fields_match_args(r#"{"amount":42}"#, &fields(&[("amount", sent)])), "{sent:?}");
    }
}

#[test]
fn reasons_lists_every_reason() {
    let every = [GuardError::TooLarge, GuardError::Malformed(""), GuardError::Conflicting("")];
    let reasons: Vec<_> = every.iter().map(GuardError::reason).collect();
    assert_eq!(reasons, GuardError::REASONS);
}
