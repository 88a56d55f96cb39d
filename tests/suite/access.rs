//! Safe to share (issue 50): who may call a server over HTTP and as whom
//! ([`toolshape::mcp::Access`]), each principal's results and cursors its own, and the limits
//! per principal, checked from outside: raw HTTP for what a refusal says, rmcp's own client
//! (with a bearer token, as an application sends it) for what a principal can open.

use crate::client::runtime;
use jsonwebtoken::{EncodingKey, Header, encode};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolshape::config::ShapeConfig;
use toolshape::mcp::{Access, Principal};
use toolshape_proxy::{AuthSettings, ProxyConfig, UpstreamSpec};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef00";

/// An upstream with one tool, `log`, answering 400 lines of text: more than a page, so the
/// harness stores it and hands out a cursor and a handle.
#[derive(Clone)]
struct Log;

impl ServerHandler for Log {
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let text: Vec<String> = (0..400)
            .map(|i| format!("line {i:03}: the build step {i} finished"))
            .collect();
        Ok(CallToolResult::success(vec![ContentBlock::text(text.join("\n"))]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(Map::from_iter([("type".to_owned(), json!("object"))]));
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "log",
            "the build log",
            schema,
        )]))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

async fn serve_log() -> String {
    crate::proxy::serve(Log).await
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn wait_for(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listened on {port}");
}

/// The status line's code, the headers (lower-cased names) and the body of a raw HTTP POST
/// of `body` to `path` at `port` with `headers`.
pub(crate) async fn post(
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    send(port, "POST", path, headers, body).await
}

/// [`post`] with another method.
async fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| *k == "Host") {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// An rmcp client of the proxy at `port`, sending `token` as its bearer token.
async fn client(port: u16, token: &str) -> RunningService<RoleClient, ()> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        unreachable!()
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Over HTTP with a token per principal: a request with no token, or one not issued, is
/// refused (401, `WWW-Authenticate: Bearer`, a body that says what to send); each principal
/// opens its own handle and follows its own cursor; the other's handle reads exactly as a
/// handle never issued, and the other's cursor exactly as an altered one (no word tells
/// "someone else's" from "none"); a wrong Host or Origin is refused even with a good token.
#[test]
fn over_http_each_principal_opens_only_its_own_results_and_cursors() {
    runtime().block_on(async {
        let upstream = serve_log().await;
        let mut config = ProxyConfig::default();
        config.upstreams.insert(
            "log".to_owned(),
            UpstreamSpec {
                url: Some(upstream),
                ..UpstreamSpec::default()
            },
        );
        config.proxy.auth = AuthSettings {
            tokens: [("alice", ALICE), ("bob", BOB)]
                .into_iter()
                .map(|(p, t)| (p.to_owned(), t.to_owned()))
                .collect(),
            ..AuthSettings::default()
        };
        let shape = ShapeConfig::from_toml_str("[tools.log]\nbudget = 300\n").unwrap();
        let port = free_port();
        let served = config.clone();
        let server = tokio::spawn(async move {
            toolshape_proxy::serve_http(&served, shape, &format!("127.0.0.1:{port}")).await
        });
        wait_for(port).await;

        // Refusals before anything is served.
        let (status, headers, body) = post(port, "/mcp", &[], &initialize_body()).await;
        assert_eq!(status, 401, "{body}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "www-authenticate" && v.starts_with("Bearer")),
            "{headers:?}"
        );
        assert!(body.contains("Authorization: Bearer"), "{body}");
        let wrong = bearer("not-a-token-of-this-server");
        let (status, headers, body) = post(
            port,
            "/mcp",
            &[("Authorization", &wrong)],
            &initialize_body(),
        )
        .await;
        assert_eq!(status, 401, "{body}");
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "www-authenticate" && v.contains("invalid_token")),
            "{headers:?}"
        );
        assert!(body.contains("refused"), "{body}");
        // One byte short of Alice's token, and Alice's with a byte more: not hers.
        for near in [&ALICE[..ALICE.len() - 1], &format!("{ALICE}0")] {
            let (status, _, _) = post(
                port,
                "/mcp",
                &[("Authorization", &bearer(near))],
                &initialize_body(),
            )
            .await;
            assert_eq!(status, 401, "{near}");
        }
        let alice_header = bearer(ALICE);
        let (status, _, body) = post(
            port,
            "/mcp",
            &[("Authorization", &alice_header)],
            &initialize_body(),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        for (header, value) in [("Host", "evil.example"), ("Origin", "http://evil.example")] {
            let (status, _, body) = post(
                port,
                "/mcp",
                &[("Authorization", &alice_header), (header, value)],
                &initialize_body(),
            )
            .await;
            assert_eq!(status, 403, "{header}: {body}");
        }

        owned_by_their_principal(port, "log", "line ").await;
        server.abort();
    });
}

/// Alice (rmcp's client with her bearer token) calls `tool` at `port`, which must store its
/// result and hand out a cursor: her handle opens and her cursor continues (its page says
/// `says`); Bob's reading of her handle is his reading of a handle never issued, his reading
/// of her cursor his reading of it altered; and Alice cannot open Bob's handle.
async fn owned_by_their_principal(port: u16, tool: &str, says: &str) {
    let alice = client(port, ALICE).await;
    let bob = client(port, BOB).await;
    let first = call(&alice, tool, json!({})).await;
    let envelope = structured(&first);
    let handle = envelope["omitted"]["handle"]
        .as_str()
        .unwrap_or_else(|| panic!("no handle: {envelope}"))
        .to_owned();
    let cursor = envelope["next"]
        .as_str()
        .unwrap_or_else(|| panic!("no cursor: {envelope}"))
        .to_owned();

    // Alice's own: the handle opens, the cursor continues.
    let opened = call(&alice, "open_result", json!({"handle": handle})).await;
    assert_ne!(opened.is_error, Some(true), "{}", text(&opened));
    let second = call(&alice, tool, json!({"cursor": cursor})).await;
    assert_ne!(second.is_error, Some(true), "{}", text(&second));
    assert!(text(&second).contains(says), "{}", text(&second));

    // Bob's view of Alice's handle, and of a handle never issued (the same length).
    let taken = call(&bob, "open_result", json!({"handle": handle})).await;
    let digits: String = handle
        .chars()
        .map(|c| match c {
            '0'..='8' => char::from(c as u8 + 1),
            '9' => '0',
            other => other,
        })
        .collect();
    let never = call(&bob, "open_result", json!({"handle": digits})).await;
    assert_eq!(taken.is_error, Some(true), "{}", text(&taken));
    assert_eq!(
        text(&taken).replace(&handle, "H"),
        text(&never).replace(&digits, "H"),
        "another's handle must read as one never issued"
    );
    assert_eq!(
        structured(&taken).to_string().replace(&handle, "H"),
        structured(&never).to_string().replace(&digits, "H")
    );

    // Bob's view of Alice's cursor, and of Alice's cursor altered in one digit.
    let followed = call(&bob, tool, json!({"cursor": cursor})).await;
    // A smaller last digit (a larger one could make a number too wide for its bytes,
    // which reads as unreadable, not as altered).
    let mut altered = cursor.clone().into_bytes();
    if let Some(last) = altered.last_mut() {
        *last = if *last > b'0' { *last - 1 } else { *last + 1 };
    }
    let altered = String::from_utf8(altered).unwrap();
    let forged = call(&bob, tool, json!({"cursor": altered})).await;
    assert_eq!(followed.is_error, Some(true), "{}", text(&followed));
    assert_eq!(text(&followed), text(&forged));
    assert_eq!(structured(&followed), structured(&forged));
    // And Bob's own walk is his: his handle is not Alice's, and Alice cannot open it.
    let his = structured(&call(&bob, tool, json!({})).await);
    let his_handle = his["omitted"]["handle"].as_str().unwrap().to_owned();
    assert_ne!(his_handle, handle);
    let refused = call(&alice, "open_result", json!({"handle": his_handle})).await;
    assert_eq!(refused.is_error, Some(true));

    let _ = alice.cancel().await;
    let _ = bob.cancel().await;
}

/// The proxy's settings: with no credentials it serves a loopback address to anyone and
/// refuses to start on one other machines reach; wrong settings are refused at start with
/// what to write.
#[test]
fn the_proxy_refuses_to_start_open_to_other_machines_or_with_wrong_credentials() {
    runtime().block_on(async {
        let mut config = ProxyConfig::default();
        config.upstreams.insert(
            "log".to_owned(),
            UpstreamSpec {
                url: Some("http://127.0.0.1:9/mcp".to_owned()),
                ..UpstreamSpec::default()
            },
        );
        let said = toolshape_proxy::serve_http(&config, ShapeConfig::default(), "0.0.0.0:0")
            .await
            .unwrap_err()
            .to_string();
        assert!(said.contains("reachable from other machines"), "{said}");
        assert!(said.contains("anyone = true"), "{said}");

        let settings = |auth: AuthSettings| {
            let mut settings = config.proxy.clone();
            settings.auth = auth;
            settings
        };
        let tokens = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
                .collect()
        };
        let refused = |auth: AuthSettings| {
            toolshape_proxy::http_access(&settings(auth), true)
                .unwrap_err()
                .to_string()
        };
        // A token of 15 bytes is refused, one of 16 taken.
        let said = refused(AuthSettings {
            tokens: tokens(&[("alice", "0123456789abcde")]),
            ..AuthSettings::default()
        });
        assert!(
            said.contains("15 bytes") && said.contains("alice"),
            "{said}"
        );
        assert!(
            toolshape_proxy::http_access(
                &settings(AuthSettings {
                    tokens: tokens(&[("alice", "0123456789abcdef")]),
                    ..AuthSettings::default()
                }),
                false
            )
            .unwrap()
            .is_some()
        );
        let said = refused(AuthSettings {
            tokens: tokens(&[("alice", ALICE), ("bob", ALICE)]),
            ..AuthSettings::default()
        });
        assert!(said.contains("a token of its own"), "{said}");
        let said = refused(AuthSettings {
            tokens: tokens(&[("alice", "env:TOOLSHAPE_TEST_NO_SUCH_VARIABLE")]),
            ..AuthSettings::default()
        });
        assert!(
            said.contains("TOOLSHAPE_TEST_NO_SUCH_VARIABLE") && said.contains("not set"),
            "{said}"
        );
        let said = refused(AuthSettings {
            jwks: Some("keys.json".into()),
            ..AuthSettings::default()
        });
        assert!(said.contains("all three"), "{said}");
        let said = refused(AuthSettings {
            tokens: tokens(&[("alice", ALICE)]),
            anyone: true,
            ..AuthSettings::default()
        });
        assert!(said.contains("anyone = true"), "{said}");
        let mut zero = config.proxy.clone();
        zero.calls_per_minute = Some(0);
        let said = toolshape_proxy::http_access(&zero, true)
            .unwrap_err()
            .to_string();
        assert!(said.contains("calls_per_minute of 0"), "{said}");
        // No credentials: on loopback, anyone; elsewhere, nothing (the start refuses).
        assert!(
            toolshape_proxy::http_access(&config.proxy, true)
                .unwrap()
                .is_some()
        );
        assert!(
            toolshape_proxy::http_access(&config.proxy, false)
                .unwrap()
                .is_none()
        );
    });
}

/// A server behind `access` whose one route answers the principal it was called as, after
/// waiting for `gate` when the body says `wait`; the calls that reached the route so far.
async fn serve_access(
    access: Access,
    gate: Arc<tokio::sync::Semaphore>,
) -> (u16, Arc<AtomicUsize>) {
    let entered = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&entered);
    let route = axum::routing::post(
        move |axum::Extension(principal): axum::Extension<Principal>, body: String| {
            let gate = Arc::clone(&gate);
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if body == "wait" {
                    let _ = gate.acquire().await.map(|p| p.forget());
                }
                principal.to_string()
            }
        },
    );
    let app = access.protect(axum::Router::new().route("/mcp", route));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, entered)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "https://mcp.example.com/mcp";
const SECRET: &[u8] = b"the shared HMAC key of the JWKS, 32+";

fn jwt(claims: Value, secret: &[u8], kid: Option<&str>) -> String {
    let mut header = Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = kid.map(str::to_owned);
    encode(&header, &claims, &EncodingKey::from_secret(secret)).unwrap()
}

/// JWTs as an OAuth resource server checks them: signed by a key of the set (by `kid`), of
/// the issuer and for the audience configured, not expired; each refusal says which rule
/// failed. A valid one names principal `jwt:` and its subject.
#[test]
fn a_jwt_names_its_subject_and_each_wrong_one_is_refused_with_its_reason() {
    use base64::Engine as _;
    runtime().block_on(async {
        let k = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(SECRET);
        let jwks = json!({"keys": [{"kty": "oct", "kid": "k1", "alg": "HS256", "k": k}]});
        let access = Access::new()
            .jwt(&jwks.to_string(), ISSUER, AUDIENCE)
            .unwrap()
            .token("ci", "a token for the CI, 16+")
            .unwrap();
        let (port, _) = serve_access(access, Arc::new(tokio::sync::Semaphore::new(0))).await;
        let good = json!({"sub": "user-7", "iss": ISSUER, "aud": AUDIENCE, "exp": now() + 600});
        let with = |f: &dyn Fn(&mut Map<String, Value>)| {
            let mut claims = good.as_object().unwrap().clone();
            f(&mut claims);
            Value::Object(claims)
        };
        let answer = |token: String| async move {
            post(port, "/mcp", &[("Authorization", &bearer(&token))], "").await
        };
        let (status, _, body) = answer(jwt(good.clone(), SECRET, Some("k1"))).await;
        assert_eq!((status, body.as_str()), (200, "jwt:user-7"));
        // The Protected Resource Metadata (RFC 9728), served without credentials at the
        // well-known path and at it followed by the audience's path, and named by each 401.
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let (status, _, body) = send(port, "GET", path, &[], "").await;
            assert_eq!(status, 200, "{path}: {body}");
            let metadata: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(metadata["resource"], AUDIENCE);
            assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
        }
        // A server with a route of its own at the well-known path: the metadata shadows it
        // (no panic on the overlap), and its other routes are still behind the gate.
        let own = axum::Router::new()
            .route("/mcp", axum::routing::post(|| async { "served" }))
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(|| async { "the server's own" }),
            );
        let jwks_again = jwks.to_string();
        let app = Access::new()
            .jwt(&jwks_again, ISSUER, AUDIENCE)
            .unwrap()
            .protect(own);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let other = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let (status, _, body) =
            send(other, "GET", "/.well-known/oauth-protected-resource", &[], "").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["resource"], AUDIENCE);
        assert_eq!(post(other, "/mcp", &[], "").await.0, 401);
        let token = jwt(good.clone(), SECRET, Some("k1"));
        let (status, _, body) = post(other, "/mcp", &[("Authorization", &bearer(&token))], "").await;
        assert_eq!((status, body.as_str()), (200, "served"));
        let (status, headers, _) = post(port, "/mcp", &[], "").await;
        assert_eq!(status, 401);
        let challenge = headers
            .iter()
            .find(|(k, _)| k == "www-authenticate")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        assert!(
            challenge.contains(
                "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
            ),
            "{challenge}"
        );
        let (status, _, body) = answer("a token for the CI, 16+".to_owned()).await;
        assert_eq!((status, body.as_str()), (200, "ci"));
        // A token that is no JWT and no configured token is not read as a JWT.
        let (status, _, body) = answer("a token for the CI, 17+".to_owned()).await;
        assert_eq!(status, 401);
        assert!(body.contains("not a token this server issued"), "{body}");
        // Within the minute's leeway an expired token is still taken; past it, refused.
        let (status, _, _) = answer(jwt(
            with(&|c| {
                c.insert("exp".into(), json!(now() - 30));
            }),
            SECRET,
            Some("k1"),
        ))
        .await;
        assert_eq!(status, 200);
        // No `kid`, and the set holds one key: that key.
        let (status, _, body) = answer(jwt(good.clone(), SECRET, None)).await;
        assert_eq!((status, body.as_str()), (200, "jwt:user-7"));
        for (why, claims, secret, kid) in [
            (
                "it expired;",
                with(&|c| {
                    c.insert("exp".into(), json!(now() - 3600));
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "another audience",
                with(&|c| {
                    c.insert("aud".into(), json!("https://other.example/mcp"));
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "another issuer",
                with(&|c| {
                    c.insert("iss".into(), json!("https://evil.example"));
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "signature does not match",
                good.clone(),
                b"another key altogether, 32 bytes+".as_slice(),
                Some("k1"),
            ),
            ("no key this server knows", good.clone(), SECRET, Some("k2")),
            (
                "no `sub` claim",
                with(&|c| {
                    c.remove("sub");
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "not valid yet",
                with(&|c| {
                    c.insert("nbf".into(), json!(now() + 3600));
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "names no one",
                with(&|c| {
                    c.insert("sub".into(), json!(""));
                }),
                SECRET,
                Some("k1"),
            ),
            (
                "no `exp` claim",
                with(&|c| {
                    c.remove("exp");
                }),
                SECRET,
                Some("k1"),
            ),
        ] {
            let (status, headers, body) = answer(jwt(claims, secret, kid)).await;
            assert_eq!(status, 401, "{why}: {body}");
            assert!(body.contains(why), "{why}: {body}");
            assert!(
                headers
                    .iter()
                    .any(|(k, v)| k == "www-authenticate" && v.contains("invalid_token")),
                "{headers:?}"
            );
        }
        // A key set that holds no usable key, and an empty issuer, are refused at set-up.
        let said = Access::new()
            .jwt(r#"{"keys": []}"#, ISSUER, AUDIENCE)
            .unwrap_err()
            .to_string();
        assert!(said.contains("no key"), "{said}");
        let said = Access::new()
            .jwt(&jwks.to_string(), " ", AUDIENCE)
            .unwrap_err()
            .to_string();
        assert!(said.contains("issuer"), "{said}");
        let said = Access::new()
            .jwks_file("/nonexistent/jwks.json", ISSUER, AUDIENCE)
            .unwrap_err()
            .to_string();
        assert!(said.contains("/nonexistent/jwks.json"), "{said}");
    });
}

/// The limits at their edges, per principal: the last call a minute allows is served and
/// the next refused (429, `Retry-After`) while another principal is still served; the last
/// call in flight allowed is served and one more refused until one answers.
#[test]
fn each_principal_is_held_to_its_calls_a_minute_and_its_calls_in_flight() {
    runtime().block_on(async {
        let rate = Access::new()
            .token("alice", ALICE)
            .unwrap()
            .token("bob", BOB)
            .unwrap()
            .calls_per_minute(3)
            .unwrap();
        let (port, _) = serve_access(rate, Arc::new(tokio::sync::Semaphore::new(0))).await;
        let as_ = |token: &'static str| async move {
            post(port, "/mcp", &[("Authorization", &bearer(token))], "").await
        };
        for _ in 0..3 {
            assert_eq!(as_(ALICE).await.0, 200);
        }
        let (status, headers, body) = as_(ALICE).await;
        assert_eq!(status, 429, "{body}");
        assert!(body.contains("alice") && body.contains("3 calls"), "{body}");
        let retry: u64 = headers
            .iter()
            .find(|(k, _)| k == "retry-after")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or_else(|| panic!("no Retry-After: {headers:?}"));
        // 3 a minute: the next place frees 20 s after the first call, less the moments the
        // test took, rounded up.
        assert_eq!(retry, 20, "{headers:?}");
        assert!(body.contains("call again in 20 s"), "{body}");
        assert_eq!(
            as_(BOB).await.0,
            200,
            "another principal keeps its own minute"
        );

        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let flight = Access::new()
            .token("alice", ALICE)
            .unwrap()
            .token("bob", BOB)
            .unwrap()
            .concurrent_calls(2)
            .unwrap();
        let (port, entered) = serve_access(flight, Arc::clone(&gate)).await;
        let waiting = |token: &'static str| {
            tokio::spawn(async move {
                post(port, "/mcp", &[("Authorization", &bearer(token))], "wait").await
            })
        };
        let first = waiting(ALICE);
        let second = waiting(ALICE);
        // Both are in flight once the route holds them (the gate is shut).
        for waited in 0.. {
            if entered.load(Ordering::SeqCst) >= 2 {
                break;
            }
            assert!(waited < 500, "the two calls did not reach the route");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (status, _, body) = post(port, "/mcp", &[("Authorization", &bearer(ALICE))], "").await;
        assert_eq!(status, 429, "{body}");
        assert!(body.contains("2 calls in flight"), "{body}");
        let (status, _, _) = post(port, "/mcp", &[("Authorization", &bearer(BOB))], "").await;
        assert_eq!(status, 200, "another principal has its own calls in flight");
        gate.add_permits(2);
        assert_eq!(first.await.unwrap().0, 200);
        assert_eq!(second.await.unwrap().0, 200);
        let (status, _, body) = post(port, "/mcp", &[("Authorization", &bearer(ALICE))], "").await;
        assert_eq!((status, body.as_str()), (200, "alice"));

        // A list as an environment variable carries it: blanks and empty entries ignored,
        // a pair without `=` refused with what to write.
        let (port, _) = serve_access(
            Access::new()
                .tokens(&format!(" alice={ALICE} , ,bob={BOB},"))
                .unwrap(),
            Arc::new(tokio::sync::Semaphore::new(0)),
        )
        .await;
        for (token, principal) in [(ALICE, "alice"), (BOB, "bob")] {
            let (status, _, body) =
                post(port, "/mcp", &[("Authorization", &bearer(token))], "").await;
            assert_eq!((status, body.as_str()), (200, principal));
        }
        let said = Access::new().tokens(ALICE).unwrap_err().to_string();
        assert!(said.contains("alice=…,ci=…"), "{said}");
        assert!(format!("{:?}", Access::new().tokens(" , ").unwrap()).contains("[]"));
        for name in ["", " ", "al\nice"] {
            let said = Access::new().token(name, ALICE).unwrap_err().to_string();
            assert!(said.contains("cannot name a principal"), "{name:?}: {said}");
        }
        for limit in [
            Access::new().concurrent_calls(0).unwrap_err(),
            Access::new().calls_per_minute(0).unwrap_err(),
        ] {
            assert!(limit.to_string().contains("of 0"), "{limit}");
        }
    });
}

/// A row of the typed server below.
#[derive(Clone, toolshape::ToolResult)]
#[shape(name = "row", plural = "rows", prose = "{id}: {text}")]
struct Row {
    #[shape(id)]
    id: String,
    #[shape(show)]
    text: String,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct RowArgs {
    cursor: Option<String>,
}

/// A typed rmcp server whose one tool pages 300 rows through `mcp::Pages`.
#[derive(Clone)]
struct Rows {
    pages: Arc<toolshape::mcp::Pages>,
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Self>,
}

#[rmcp::tool_router]
impl Rows {
    #[rmcp::tool(description = "300 rows")]
    async fn rows(
        &self,
        context: RequestContext<RoleServer>,
        rmcp::handler::server::wrapper::Parameters(args): rmcp::handler::server::wrapper::Parameters<RowArgs>,
    ) -> toolshape::Shaped {
        let rows: Vec<Row> = (0..300)
            .map(|i| Row {
                id: format!("row_{i:03}"),
                text: format!("row {i} of the typed server"),
            })
            .collect();
        let shaper = toolshape::Shaper::for_tool("rows").budget(toolshape::Budget::tokens(400));
        self.pages.page(&shaper, &context, &args, &rows).await
    }
}

impl ServerHandler for Rows {
    toolshape::mcp::tool_handler!(tool_router);

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The typed path: a server of its own over `mcp::Pages`, behind `mcp::Access` with a token
/// per principal: each principal's stored result and cursor are its own, as through the
/// proxy.
#[test]
fn through_pages_each_principal_opens_only_its_own_results_and_cursors() {
    use toolshape::cursor::CursorKeys;
    use toolshape::mcp::Pages;
    runtime().block_on(async {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
        };
        let pages = Arc::new(Pages::new(CursorKeys::new([3u8; 32]).unwrap()));
        let server = Rows {
            pages: Arc::clone(&pages),
            tool_router: Rows::tool_router()
                .with_route(Pages::open_result_route(|r: &Rows| &r.pages)),
        };
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true),
        );
        let access = Access::new()
            .token("alice", ALICE)
            .unwrap()
            .token("bob", BOB)
            .unwrap();
        let app = access.protect(axum::Router::new().nest_service("/mcp", service));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        owned_by_their_principal(port, "rows", "row_").await;
        served.abort();
    });
}

/// `Access::anyone` serves a request with no token as principal `anonymous`; what a log
/// prints of an `Access` names its principals and never a token.
#[test]
fn anyone_is_anonymous_and_a_log_shows_no_token() {
    runtime().block_on(async {
        let (port, _) =
            serve_access(Access::anyone(), Arc::new(tokio::sync::Semaphore::new(0))).await;
        let (status, _, body) = post(port, "/mcp", &[], "").await;
        assert_eq!((status, body.as_str()), (200, "anonymous"));
        let access = Access::new().token("alice", ALICE).unwrap();
        let printed = format!("{access:?}");
        assert!(
            printed.contains("alice") && !printed.contains(ALICE),
            "{printed}"
        );
        assert_eq!(
            format!("{:?}", Principal::new("alice")),
            "Principal(\"alice\")"
        );
        assert_eq!(Principal::new("alice").to_string(), "alice");
    });
}
