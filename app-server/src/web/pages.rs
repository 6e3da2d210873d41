//! The web client's HTTP side: the page at `/` (which signs a browser in), its assets under
//! `/assets/`, and the headers every HTTP response of the listener carries.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::assets::{self, Asset};
use super::{PageAccess, SIGN_IN_FILE, WebAccess};

/// The Content-Security-Policy of every response: scripts and styles only from the daemon
/// itself (no inline script, no `eval`), the socket only to the daemon, nothing framed.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Add the security headers to every response of the listener.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            header::HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
        (
            header::HeaderName::from_static("cross-origin-resource-policy"),
            "same-origin",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// Answer a request that is not a WebSocket upgrade, with the web client on.
pub fn answer(web: &WebAccess, path: &str, headers: &HeaderMap, query: Option<&str>) -> Response {
    if let Some(name) = path.strip_prefix("/assets/") {
        if let Err(refusal) = web.admit_page(headers, None) {
            return refusal.into_response();
        }
        return match assets::find(name) {
            Some(asset) => serve(asset, "public, max-age=300"),
            None => not_found(),
        };
    }
    if path != "/" {
        return not_found();
    }
    match web.admit_page(headers, query) {
        Err(refusal) => refusal.into_response(),
        Ok(PageAccess::SignedIn) => serve(assets::index(), "no-store"),
        Ok(PageAccess::SignedInNow(cookie)) => {
            let mut response = serve(assets::index(), "no-store");
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
        Ok(PageAccess::NotSignedIn) => sign_in_page(
            "Sign in to Weft",
            "Open the sign-in URL that <code>weft app-server</code> printed when it started.",
        ),
        Ok(PageAccess::WrongToken) => sign_in_page(
            "This sign-in link is not valid",
            "The daemon makes a new token each time it starts: open the URL it printed this \
             time.",
        ),
    }
}

fn serve(asset: &Asset, cache: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, asset.content_type),
            (header::CACHE_CONTROL, cache),
        ],
        asset.body,
    )
        .into_response()
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

/// The page a browser that has not signed in gets (static, no script).
fn sign_in_page(title: &str, what: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{title}</title>\
         <link rel=\"icon\" href=\"/assets/icon.svg\" type=\"image/svg+xml\">\
         <link rel=\"stylesheet\" href=\"/assets/app.css\"></head>\
         <body class=\"sign-in\"><main><h1>{title}</h1><p>{what}</p>\
         <p>It is also in <code>$WEFT_HOME/{SIGN_IN_FILE}</code>, readable only by you.</p>\
         </main></body></html>"
    );
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}
