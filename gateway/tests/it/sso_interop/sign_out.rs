//! Signing out: the gateway's logout and its CSRF token, and sign-out ending the session at the
//! provider and back (RP-initiated logout, back-channel logout).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn logout_needs_its_csrf_token_and_revokes_the_session_everywhere() {
    let setup = Setup::start("").await;
    setup.provider.next_user("alice").await;
    let mut browser = Browser::default();
    assert_eq!(browser.open(&setup.site_url("/")).await.0.status, StatusCode::OK);
    let session_cookie = browser.cookie("app.localhost", "toolgate").expect("session cookie");
    let requests_before = setup.site.requests().len();

    let form = browser.open(&setup.site_url("/.toolgate/logout")).await.0.text();
    let token = form
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("csrf field");
    let logout = url::Url::parse(&setup.site_url("/.toolgate/logout")).expect("url");
    let origin = format!("http://app.localhost:{}", setup.port);
    for bad in ["", "csrf=", "csrf=AAAA", &format!("csrf={token}x")] {
        let answer = browser.request(Method::POST, &logout, &[("origin", &origin)], Some(bad)).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{bad:?}");
    }
    let cross_site = browser
        .request(Method::POST, &logout, &[("origin", "http://evil.example")], Some(&format!("csrf={token}")))
        .await;
    assert_eq!(cross_site.status, StatusCode::FORBIDDEN, "another origin cannot sign the user out");
    let answer =
        browser.request(Method::POST, &logout, &[("origin", &origin)], Some(&format!("csrf={token}"))).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "on to the provider's sign-out: {}", answer.text());

    // The old cookie no longer opens anything: navigations go to sign-in, APIs get 401.
    let replay = format!("toolgate={session_cookie}");
    let page = url::Url::parse(&setup.site_url("/private")).expect("url");
    let answer = Browser::default().request(Method::GET, &page, &[("cookie", &replay)], None).await;
    assert_eq!(answer.status, StatusCode::FOUND);
    assert!(answer.header("location").is_some_and(|location| location.contains("/.toolgate/login?")));
    let whoami = url::Url::parse(&setup.site_url("/.toolgate/whoami")).expect("url");
    let answer = Browser::default().request(Method::GET, &whoami, &[("cookie", &replay)], None).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(setup.site.requests().len(), requests_before, "nothing reached the site after logout");
    setup.gateway.stop().await;
}

/// The value of the hidden input `name` in an HTML page.
fn hidden_input(page: &str, name: &str) -> String {
    page.split(&format!("name=\"{name}\" value=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no {name} field in {page}"))
        .to_owned()
}

/// Confirms the provider's own sign-out page (`GET` it, then `POST` its form with `logout=yes`);
/// returns the provider's redirect.
async fn confirm_provider_sign_out(browser: &mut Browser, end_session: &str) -> Answer {
    let (page, history) = browser.open(end_session).await;
    assert_eq!(page.status, StatusCode::OK, "{history:#?}\n{}", page.text());
    let page = page.text();
    let action = page
        .split("action=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the provider's sign-out form");
    let action = url::Url::parse(history.last().expect("page")).expect("url").join(action).expect("action");
    let form = format!("xsrf={}&logout=yes", hidden_input(&page, "xsrf"));
    browser.request(Method::POST, &action, &[], Some(&form)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_out_at_the_gateway_ends_the_provider_session_too() {
    let setup = Setup::start("").await;
    setup.provider.next_user("alice").await;
    let mut browser = Browser::default();
    assert_eq!(browser.open(&setup.site_url("/")).await.0.status, StatusCode::OK);

    // Positive control: with only the gateway's cookies gone, the provider's session signs the
    // user straight back in, without its login step. This is what signing out must end.
    browser.forget("app.localhost");
    browser.forget("localhost");
    let (answer, history) = browser.open(&setup.site_url("/again")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(!history.iter().any(|url| url.contains("/interaction/")), "{history:#?}");

    let form = browser.open(&setup.site_url("/.toolgate/logout")).await.0.text();
    let logout = url::Url::parse(&setup.site_url("/.toolgate/logout")).expect("url");
    let origin = format!("http://app.localhost:{}", setup.port);
    let form = format!("csrf={}", hidden_input(&form, "csrf"));
    let answer = browser.request(Method::POST, &logout, &[("origin", &origin)], Some(&form)).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text());
    let end_session = url::Url::parse(answer.header("location").expect("location")).expect("url");
    assert!(
        end_session.as_str().starts_with(&format!("{}/session/end?", setup.provider.issuer)),
        "{end_session}"
    );
    let query: HashMap<_, _> = end_session.query_pairs().into_owned().collect();
    assert!(query.get("id_token_hint").is_some_and(|hint| hint.split('.').count() == 3), "{query:?}");
    assert_eq!(query["client_id"], CLIENT_ID);
    let signed_out = format!("http://localhost:{}/.toolgate/signed-out", setup.port);
    assert_eq!(query["post_logout_redirect_uri"], signed_out);

    let answer = confirm_provider_sign_out(&mut browser, end_session.as_str()).await;
    assert_eq!(answer.header("location"), Some(signed_out.as_str()), "{}", answer.text());
    let (done, _) = browser.open(&signed_out).await;
    assert_eq!(done.status, StatusCode::OK);
    assert!(done.text().contains("and of the corporate sign-in"), "{}", done.text());

    // The next visit goes through the provider's login step again.
    let (answer, history) = browser.open(&setup.site_url("/after")).await;
    assert_eq!(answer.status, StatusCode::OK, "{history:#?}");
    assert!(history.iter().any(|url| url.contains("/interaction/")), "signed straight back in: {history:#?}");
    setup.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_out_at_the_provider_ends_the_gateway_session_by_back_channel() {
    let setup = Setup::start("").await;
    setup.provider.next_user("bob").await;
    let mut browser = Browser::default();
    assert_eq!(browser.open(&setup.site_url("/")).await.0.status, StatusCode::OK);
    let requests_before = setup.site.requests().len();

    // The user signs out in the provider's own pages, never touching the gateway.
    let answer =
        confirm_provider_sign_out(&mut browser, &format!("{}/session/end", setup.provider.issuer)).await;
    assert!(answer.status.is_redirection(), "{}", answer.text());

    // The provider told the gateway before it answered: the site's session is gone.
    let page = url::Url::parse(&setup.site_url("/private")).expect("url");
    let answer = browser.request(Method::GET, &page, &[], None).await;
    assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.text());
    assert!(answer.header("location").is_some_and(|location| location.contains("/.toolgate/login?")));
    assert_eq!(setup.site.requests().len(), requests_before, "nothing reached the site after the sign-out");
    let counted = setup.metric("toolgate_sign_in_events_total{outcome=\"backchannel_logout\"} 1").await;
    assert!(counted.is_some(), "the back-channel logout is counted");
    setup.gateway.stop().await;
}
