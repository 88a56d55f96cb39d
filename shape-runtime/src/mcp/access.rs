//! Who calls a server over HTTP, and how much: the [`Principal`] a request is made for, and
//! (feature `http`) the [`Access`] layer that names it from a bearer token or a JWT, refuses
//! requests without one, and holds each principal to its limits.
//!
//! Stored results and cursors belong to the principal that made them: the [`Harness`] and
//! [`Pages`] read a request's principal ([`Principal::of`]) and keep what it cuts for that
//! principal alone. Another principal's handle reads exactly as one that never existed, and
//! another principal's cursor exactly as an altered one. Over stdio there is no layer, and
//! the client that started the process is the one principal (`mcp`, or the owner given).
//!
//! [`Harness`]: super::Harness
//! [`Pages`]: super::Pages

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use std::fmt;
use std::sync::Arc;

/// The one a request is made for: what an [`Access`] layer (or a layer of your own, which
/// inserts a `Principal` into the HTTP request's extensions) named it after checking its
/// credentials. Stored results and cursors are kept per principal.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Principal(Arc<str>);

impl Principal {
    /// A principal named `name` (a token's principal as configured, `jwt:` and the subject
    /// of a JWT).
    pub fn new(name: impl AsRef<str>) -> Self {
        Principal(Arc::from(name.as_ref()))
    }

    /// Its name: what stored results and cursors are kept under.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The principal of the request `context` answers: the one the layer in front of the
    /// server put into the HTTP request's extensions (rmcp's streamable HTTP server hands the
    /// request's parts on); `None` over stdio, or over HTTP with no such layer.
    pub fn of(context: &RequestContext<RoleServer>) -> Option<Principal> {
        context
            .extensions
            .get::<http::request::Parts>()?
            .extensions
            .get::<Principal>()
            .cloned()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Principal({:?})", &*self.0)
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The owner a request's results are kept for: its principal, else `default` (the one
/// client of a stdio process).
pub(crate) fn owner_of(context: &RequestContext<RoleServer>, default: &str) -> String {
    Principal::of(context).map_or_else(|| default.to_owned(), |p| p.as_str().to_owned())
}

#[cfg(feature = "http")]
pub use layer::{Access, AccessError};

#[cfg(feature = "http")]
mod layer {
    use super::Principal;
    use axum::extract::{Request, State};
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
    use axum::middleware::Next;
    use axum::response::{IntoResponse, Response};
    use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter, clock::Clock};
    use sha2::{Digest, Sha256};
    use std::collections::HashMap;
    use std::num::NonZeroU32;
    use std::path::Path;
    use std::sync::{Arc, Mutex};
    use subtle::ConstantTimeEq;

    /// Principals the rate limiter keeps before it forgets those whose bucket is full again.
    const MAX_RATE_KEYS: usize = 10_000;

    /// The shortest bearer token accepted: 16 bytes, as for a cursor key.
    const MIN_TOKEN_LEN: usize = 16;

    /// Why an [`Access`] could not be set up. Each message says what to do.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[non_exhaustive]
    pub enum AccessError {
        /// A bearer token shorter than 16 bytes, or one given to two principals.
        #[error("the bearer token of principal {principal:?} {why}")]
        Token {
            /// The principal it names.
            principal: String,
            /// What is wrong with it.
            why: String,
        },
        /// A principal's name that is empty or has a control character.
        #[error("{name:?} cannot name a principal: give a name of visible characters")]
        Name {
            /// The name given.
            name: String,
        },
        /// The JWT settings cannot be used: the key set could not be read, holds no key this
        /// layer can check with, or the issuer or audience is empty.
        #[error("JWT validation cannot be set up: {0}")]
        Jwt(String),
        /// A list of tokens that is not `principal=token` pairs separated by commas.
        #[error("{0:?} is no principal=token pair: write `alice=…,ci=…`")]
        List(String),
        /// A limit of 0, which would refuse every call.
        #[error("{what} of 0 would refuse every call: give at least 1, or leave the limit out")]
        ZeroLimit {
            /// Which limit.
            what: &'static str,
        },
    }

    /// Who may call a server over HTTP, as whom, and how much: an axum layer
    /// ([`protect`](Self::protect)) in front of rmcp's streamable HTTP service.
    ///
    /// Each request must carry `Authorization: Bearer <token>`: a token configured for a
    /// principal ([`token`](Self::token), compared in constant time against every token
    /// configured), or a JWT ([`jwt`](Self::jwt)) signed by a key of the configured key set,
    /// of the configured issuer and audience and not expired, whose subject names the
    /// principal (`jwt:` and the `sub` claim). A request without one, or with one not
    /// accepted, is refused with 401 and `WWW-Authenticate: Bearer`, and the body says why.
    /// [`anyone`](Self::anyone) admits every request as principal `anonymous` instead (a
    /// server on a machine of its own).
    ///
    /// The principal is put into the request's extensions, where [`Principal::of`] reads it:
    /// the harness and [`Pages`](super::super::Pages) keep each principal's stored results and
    /// cursors for it alone. Limits hold per principal: [`concurrent_calls`](Self::concurrent_calls)
    /// requests in flight at once and [`calls_per_minute`](Self::calls_per_minute); a request
    /// past one is refused with 429 (and `Retry-After` for the rate), the body saying when to
    /// call again.
    ///
    /// ```
    /// use toolshape::mcp::{Access, Principal};
    ///
    /// let access = Access::new()
    ///     .token("alice", "a token of at least sixteen bytes")?
    ///     .token("ci", std::env::var("CI_TOKEN").unwrap_or_else(|_| "another long token!".into()))?
    ///     .concurrent_calls(8)?
    ///     .calls_per_minute(600)?;
    /// let app = access.protect(axum::Router::new() /* .nest_service("/mcp", service) */);
    /// # let _ = app;
    /// # Ok::<(), toolshape::mcp::AccessError>(())
    /// ```
    #[derive(Clone)]
    pub struct Access {
        inner: Settings,
    }

    /// What an [`Access`] is configured with; the counts it keeps are a [`Gate`]'s, made
    /// by [`Access::protect`].
    #[derive(Clone, Default)]
    struct Settings {
        /// The SHA-256 of each token, with its principal: comparing digests in constant time
        /// takes as long whatever the token's length.
        tokens: Vec<([u8; 32], Principal)>,
        jwt: Option<Arc<Jwt>>,
        anyone: bool,
        concurrent: Option<usize>,
        per_minute: Option<NonZeroU32>,
    }

    /// A protected router's door: the settings, and the calls each principal made this
    /// minute and has in flight.
    struct Gate {
        inner: Settings,
        rate: Option<DefaultKeyedRateLimiter<Principal>>,
        in_flight: Mutex<HashMap<Principal, usize>>,
    }

    struct Jwt {
        keys: Vec<JwtKey>,
        issuer: String,
        audience: String,
    }

    struct JwtKey {
        kid: Option<String>,
        key: jsonwebtoken::DecodingKey,
        algorithm: jsonwebtoken::Algorithm,
    }

    impl fmt::Debug for Access {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let principals: Vec<&str> = self.inner.tokens.iter().map(|(_, p)| p.as_str()).collect();
            f.debug_struct("Access")
                .field("token_principals", &principals)
                .field(
                    "jwt",
                    &self.inner.jwt.as_ref().map(|j| (&j.issuer, &j.audience)),
                )
                .field("anyone", &self.inner.anyone)
                .field("concurrent_calls", &self.inner.concurrent)
                .field("calls_per_minute", &self.inner.per_minute)
                .finish()
        }
    }

    use std::fmt;

    impl Default for Access {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Access {
        /// The browser origins a server on its own machine accepts (rmcp's
        /// `StreamableHttpServerConfig::with_allowed_origins`): loopback names on any port. A
        /// request from another origin is refused (403), as the MCP transport specification
        /// requires of a server; one without `Origin` (a client that is no browser) passes.
        pub const LOOPBACK_ORIGINS: [&'static str; 5] = [
            "http://localhost:*",
            "https://localhost:*",
            "http://127.0.0.1:*",
            "https://127.0.0.1:*",
            "http://[::1]:*",
        ];

        /// Admits no one until a [`token`](Self::token) or a [`jwt`](Self::jwt) key set is
        /// given; no limits.
        pub fn new() -> Self {
            Access {
                inner: Settings::default(),
            }
        }

        /// Admits every request, with or without a token, as principal `anonymous` (they
        /// then share one another's results); the limits still hold. For a server only its
        /// own machine reaches.
        pub fn anyone() -> Self {
            Self::new().with(|i| i.anyone = true)
        }

        fn with(mut self, f: impl FnOnce(&mut Settings)) -> Self {
            f(&mut self.inner);
            self
        }

        /// Admits a request bearing `token` as `principal`. A token is at least 16 bytes,
        /// and no two principals share one.
        pub fn token(
            self,
            principal: impl AsRef<str>,
            token: impl AsRef<str>,
        ) -> Result<Self, AccessError> {
            let (principal, token) = (principal.as_ref(), token.as_ref());
            check_name(principal)?;
            let refused = |why: String| AccessError::Token {
                principal: principal.to_owned(),
                why,
            };
            if token.len() < MIN_TOKEN_LEN {
                return Err(refused(format!(
                    "is {} bytes: give at least {MIN_TOKEN_LEN} (for example `openssl rand -hex 32`)",
                    token.len()
                )));
            }
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            if let Some((_, other)) = self.inner.tokens.iter().find(|(d, _)| *d == digest) {
                return Err(refused(format!(
                    "is also {other}'s: give each principal a token of its own"
                )));
            }
            let principal = Principal::new(principal);
            Ok(self.with(|i| i.tokens.push((digest, principal))))
        }

        /// [`token`](Self::token) for each `principal=token` of `listed`, separated by commas
        /// (as an environment variable carries them: `alice=…,ci=…`); blanks around each are
        /// ignored, an empty list adds none.
        pub fn tokens(mut self, listed: &str) -> Result<Self, AccessError> {
            for pair in listed.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (principal, token) = pair
                    .split_once('=')
                    .ok_or_else(|| AccessError::List(pair.chars().take(40).collect()))?;
                self = self.token(principal.trim(), token.trim())?;
            }
            Ok(self)
        }

        /// Admits a request bearing a JWT signed by a key of `jwks` (a JSON Web Key Set, as
        /// an authorization server publishes it), issued by `issuer` for `audience` (this
        /// server's resource URI), not expired (a minute's leeway) and naming a subject, as
        /// principal `jwt:` and the subject. Keys are chosen by the token's `kid`, or the
        /// only key of the set; each key is checked with its own algorithm (its `alg`, else
        /// RS256 for RSA, ES256 or ES384 for its curve, EdDSA for Ed25519).
        pub fn jwt(self, jwks: &str, issuer: &str, audience: &str) -> Result<Self, AccessError> {
            if issuer.trim().is_empty() || audience.trim().is_empty() {
                return Err(AccessError::Jwt(
                    "name the issuer (the authorization server's URL) and the audience (this \
                     server's resource URI): a token of any other is refused"
                        .to_owned(),
                ));
            }
            let set: jsonwebtoken::jwk::JwkSet = serde_json::from_str(jwks).map_err(|e| {
                AccessError::Jwt(format!("the key set is not a JSON Web Key Set: {e}"))
            })?;
            let mut keys = Vec::new();
            let mut skipped = Vec::new();
            for jwk in &set.keys {
                match jwt_key(jwk) {
                    Ok(key) => keys.push(key),
                    Err(why) => skipped.push(why),
                }
            }
            if keys.is_empty() {
                return Err(AccessError::Jwt(format!(
                    "the key set holds no key to check signatures with{}",
                    match skipped.is_empty() {
                        true => String::new(),
                        false => format!(" ({})", skipped.join("; ")),
                    }
                )));
            }
            let jwt = Jwt {
                keys,
                issuer: issuer.to_owned(),
                audience: audience.to_owned(),
            };
            Ok(self.with(|i| i.jwt = Some(Arc::new(jwt))))
        }

        /// [`jwt`](Self::jwt) with the key set read from the file at `path`.
        pub fn jwks_file(
            self,
            path: impl AsRef<Path>,
            issuer: &str,
            audience: &str,
        ) -> Result<Self, AccessError> {
            let path = path.as_ref();
            let jwks = std::fs::read_to_string(path).map_err(|e| {
                AccessError::Jwt(format!(
                    "the key set {} could not be read: {e}",
                    path.display()
                ))
            })?;
            self.jwt(&jwks, issuer, audience)
        }

        /// At most `calls` requests of one principal in flight at once; one more is refused
        /// (429) until one of them is answered.
        pub fn concurrent_calls(self, calls: u32) -> Result<Self, AccessError> {
            if calls == 0 {
                return Err(AccessError::ZeroLimit {
                    what: "concurrent_calls",
                });
            }
            Ok(self.with(|i| i.concurrent = Some(calls as usize)))
        }

        /// At most `calls` requests of one principal a minute, as a bucket of `calls` that
        /// refills evenly over the minute; one more is refused (429, with `Retry-After`).
        pub fn calls_per_minute(self, calls: u32) -> Result<Self, AccessError> {
            let Some(calls) = NonZeroU32::new(calls) else {
                return Err(AccessError::ZeroLimit {
                    what: "calls_per_minute",
                });
            };
            Ok(self.with(|i| i.per_minute = Some(calls)))
        }

        /// `router` behind this layer: every request checked before it reaches the router.
        ///
        /// With JWTs, the server is an OAuth resource server as the MCP authorization
        /// specification describes it: its Protected Resource Metadata (RFC 9728: the
        /// resource, which is the audience, and the authorization server, which is the
        /// issuer) is served without credentials at `/.well-known/oauth-protected-resource`
        /// and at that path followed by the audience's path (`…/oauth-protected-resource/mcp`
        /// for `https://host/mcp`), and every 401 names it (`resource_metadata` in
        /// `WWW-Authenticate`), so a client can find where to get a token. A route `router`
        /// has at one of those paths is shadowed by the metadata.
        pub fn protect(self, router: axum::Router) -> axum::Router {
            let metadata = self.inner.jwt.as_ref().map(|jwt| {
                serde_json::json!({
                    "resource": jwt.audience,
                    "authorization_servers": [jwt.issuer],
                    "bearer_methods_supported": ["header"],
                })
                .to_string()
            });
            let paths = self.inner.jwt.as_ref().map(|jwt| jwt.metadata_paths());
            let gate = Arc::new(Gate {
                rate: self
                    .inner
                    .per_minute
                    .map(|n| RateLimiter::keyed(Quota::per_minute(n))),
                inner: self.inner,
                in_flight: Mutex::new(HashMap::new()),
            });
            let router = router.layer(axum::middleware::from_fn_with_state(gate, admit));
            match (metadata, paths) {
                // The metadata's routes in a router of their own, the server's behind it as
                // its fallback: a server that has a route at one of these paths keeps it
                // shadowed rather than making axum panic on the overlap.
                (Some(metadata), Some(paths)) => {
                    let answer = move || {
                        let metadata = metadata.clone();
                        async move { ([(header::CONTENT_TYPE, "application/json")], metadata) }
                    };
                    paths
                        .into_iter()
                        .fold(axum::Router::new(), |outer, path| {
                            outer.route(&path, axum::routing::get(answer.clone()))
                        })
                        .fallback_service(router)
                }
                _ => router,
            }
        }
    }

    impl Gate {
        /// The principal `headers` authenticate, or the refusal.
        fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Box<Response>> {
            let inner = &self.inner;
            if inner.anyone {
                return Ok(Principal::new("anonymous"));
            }
            let challenge = |error: Option<&str>, message: String| {
                let mut value = "Bearer realm=\"mcp\"".to_owned();
                if let Some(url) = inner.jwt.as_deref().and_then(Jwt::metadata_url) {
                    value.push_str(&format!(", resource_metadata=\"{url}\""));
                }
                if let Some(error) = error {
                    value.push_str(&format!(", error=\"{error}\""));
                }
                let mut response = (StatusCode::UNAUTHORIZED, message).into_response();
                if let Ok(value) = HeaderValue::from_str(&value) {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
                Box::new(response)
            };
            let bearer = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    let (scheme, token) = v.trim().split_once(' ')?;
                    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
                });
            let Some(token) = bearer.filter(|t| !t.is_empty()) else {
                return Err(challenge(
                    None,
                    "this server needs credentials: send `Authorization: Bearer <token>` with \
                     the token you were given"
                        .to_owned(),
                ));
            };
            // Every configured token is compared, whether or not an earlier one matched.
            let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
            let mut found = None;
            for (known, principal) in &inner.tokens {
                if bool::from(known.ct_eq(&digest)) {
                    found = Some(principal);
                }
            }
            if let Some(principal) = found {
                return Ok(principal.clone());
            }
            let why = match &inner.jwt {
                Some(jwt) if token.matches('.').count() == 2 => match jwt.check(token) {
                    Ok(principal) => return Ok(principal),
                    Err(why) => why,
                },
                _ => "it is not a token this server issued".to_owned(),
            };
            Err(challenge(
                Some("invalid_token"),
                format!(
                    "the bearer token was refused: {why}; send a token this server accepts \
                     (ask for a new one if yours expired)"
                ),
            ))
        }

        /// A place among `principal`'s calls in flight, or the refusal.
        fn enter(self: &Arc<Self>, principal: &Principal) -> Result<InFlight, Box<Response>> {
            if let Some(limiter) = &self.rate {
                // Principals whose bucket is full again are forgotten once there are many
                // (a JWT's subjects are as many as the authorization server issues).
                if limiter.len() > MAX_RATE_KEYS {
                    limiter.retain_recent();
                }
                if let Err(not_until) = limiter.check_key(principal) {
                    let wait = not_until.wait_time_from(limiter.clock().now());
                    // Whole seconds, rounded up: the one figure the body and the header say.
                    let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
                    let per_minute = self.inner.per_minute.map_or(0, NonZeroU32::get);
                    let message = format!(
                        "principal {principal} made more than {per_minute} calls in a minute, \
                         the most this server takes; call again in {secs} s"
                    );
                    let mut response = (StatusCode::TOO_MANY_REQUESTS, message).into_response();
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
                    return Err(Box::new(response));
                }
            }
            let Some(most) = self.inner.concurrent else {
                return Ok(InFlight(None));
            };
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            let now = in_flight.entry(principal.clone()).or_insert(0);
            if *now >= most {
                let message = format!(
                    "principal {principal} has {most} calls in flight, the most this server \
                     takes at once; call again when one of them has answered"
                );
                return Err(Box::new(
                    (StatusCode::TOO_MANY_REQUESTS, message).into_response(),
                ));
            }
            *now += 1;
            Ok(InFlight(Some((Arc::clone(self), principal.clone()))))
        }
    }

    /// A request in flight, counted against its principal until it is answered.
    struct InFlight(Option<(Arc<Gate>, Principal)>);

    impl Drop for InFlight {
        fn drop(&mut self) {
            if let Some((gate, principal)) = self.0.take() {
                let mut in_flight = gate.in_flight.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(now) = in_flight.get_mut(&principal) {
                    *now -= 1;
                    if *now == 0 {
                        in_flight.remove(&principal);
                    }
                }
            }
        }
    }

    /// The middleware: authenticate, count, and hand the request on with its principal.
    async fn admit(State(access): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
        let principal = match access.authenticate(request.headers()) {
            Ok(principal) => principal,
            Err(refusal) => return *refusal,
        };
        let _in_flight = match access.enter(&principal) {
            Ok(in_flight) => in_flight,
            Err(refusal) => return *refusal,
        };
        request.extensions_mut().insert(principal);
        next.run(request).await
    }

    fn check_name(name: &str) -> Result<(), AccessError> {
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(AccessError::Name {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// A key of a JSON Web Key Set, with the algorithm it checks, or why it cannot be used.
    fn jwt_key(jwk: &jsonwebtoken::jwk::Jwk) -> Result<JwtKey, String> {
        use jsonwebtoken::Algorithm;
        use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve};
        let kid = jwk.common.key_id.clone();
        let name = kid.as_deref().unwrap_or("a key without `kid`");
        let algorithm = match (&jwk.common.key_algorithm, &jwk.algorithm) {
            (Some(alg), _) => alg
                .to_string()
                .parse::<Algorithm>()
                .map_err(|_| format!("{name}: algorithm {alg} checks no signature"))?,
            (None, AlgorithmParameters::RSA(_)) => Algorithm::RS256,
            (None, AlgorithmParameters::EllipticCurve(ec)) => match ec.curve {
                EllipticCurve::P256 => Algorithm::ES256,
                EllipticCurve::P384 => Algorithm::ES384,
                ref other => return Err(format!("{name}: curve {other:?} is not supported")),
            },
            (None, AlgorithmParameters::OctetKeyPair(_)) => Algorithm::EdDSA,
            (None, AlgorithmParameters::OctetKey(_)) => Algorithm::HS256,
        };
        let key = jsonwebtoken::DecodingKey::from_jwk(jwk).map_err(|e| format!("{name}: {e}"))?;
        Ok(JwtKey {
            kid,
            key,
            algorithm,
        })
    }

    #[derive(serde::Deserialize)]
    struct Claims {
        sub: Option<String>,
    }

    /// Where RFC 9728 puts a resource's metadata: this path, then the resource's own path.
    const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

    impl Jwt {
        /// The audience split into its origin and its path (`https://host:8080`, `/mcp`), when
        /// it is a URL.
        fn audience_parts(&self) -> Option<(&str, &str)> {
            let rest = self
                .audience
                .strip_prefix("https://")
                .or_else(|| self.audience.strip_prefix("http://"))?;
            let origin_len =
                self.audience.len() - rest.len() + rest.find('/').unwrap_or(rest.len());
            let (origin, path) = self.audience.split_at(origin_len);
            Some((origin, path.trim_end_matches('/')))
        }

        /// The paths the metadata is served at: the well-known one, and it followed by the
        /// audience's path.
        fn metadata_paths(&self) -> Vec<String> {
            let mut paths = vec![METADATA_PATH.to_owned()];
            if let Some((_, path)) = self.audience_parts()
                && !path.is_empty()
                && !path.contains(['?', '#', '{', '}', '*'])
            {
                paths.push(format!("{METADATA_PATH}{path}"));
            }
            paths
        }

        /// The metadata's URL a 401 names: the audience's origin, the well-known path, the
        /// audience's path (RFC 9728 section 3.1).
        fn metadata_url(&self) -> Option<String> {
            let (origin, path) = self.audience_parts()?;
            Some(format!("{origin}{METADATA_PATH}{path}"))
        }

        /// The principal `token` names, or why it is refused.
        fn check(&self, token: &str) -> Result<Principal, String> {
            let header =
                jsonwebtoken::decode_header(token).map_err(|e| format!("it is not a JWT ({e})"))?;
            let key = match &header.kid {
                Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
                None if self.keys.len() == 1 => self.keys.first(),
                None => None,
            }
            .ok_or("it is signed by no key this server knows")?;
            if header.alg != key.algorithm {
                return Err(format!(
                    "it is signed with {:?}, and its key checks {:?}",
                    header.alg, key.algorithm
                ));
            }
            let mut validation = jsonwebtoken::Validation::new(key.algorithm);
            validation.set_issuer(&[&self.issuer]);
            validation.set_audience(&[&self.audience]);
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            // `nbf`, where a token has one, is checked too (jsonwebtoken leaves it out by
            // default): a token not valid yet is refused.
            validation.validate_nbf = true;
            let data =
                jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(|e| {
                    use jsonwebtoken::errors::ErrorKind;
                    match e.kind() {
                        ErrorKind::ExpiredSignature => "it expired".to_owned(),
                        ErrorKind::InvalidAudience => "it is for another audience".to_owned(),
                        ErrorKind::InvalidIssuer => "another issuer issued it".to_owned(),
                        ErrorKind::InvalidSignature => "its signature does not match".to_owned(),
                        ErrorKind::ImmatureSignature => "it is not valid yet".to_owned(),
                        ErrorKind::MissingRequiredClaim(claim) => {
                            format!("it has no `{claim}` claim")
                        }
                        _ => format!("it could not be read ({e})"),
                    }
                })?;
            let sub = data.claims.sub.ok_or("it has no `sub` claim")?;
            if sub.trim().is_empty() || sub.chars().any(char::is_control) {
                return Err("its subject names no one".to_owned());
            }
            Ok(Principal::new(format!("jwt:{sub}")))
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// The rate limiter at its edge: holding `MAX_RATE_KEYS` principals it forgets none;
        /// one past, the next call forgets every principal whose bucket is full again.
        #[test]
        fn the_rate_limiter_forgets_principals_only_past_its_limit() {
            // 6,000,000 calls a minute: a bucket is full again 10 µs after a call.
            let n = NonZeroU32::new(6_000_000).unwrap();
            let gate = Arc::new(Gate {
                inner: Settings {
                    tokens: Vec::new(),
                    jwt: None,
                    anyone: true,
                    concurrent: None,
                    per_minute: Some(n),
                },
                rate: Some(RateLimiter::keyed(Quota::per_minute(n))),
                in_flight: Mutex::new(HashMap::new()),
            });
            let limiter = gate.rate.as_ref().unwrap();
            for i in 0..MAX_RATE_KEYS {
                assert!(gate.enter(&Principal::new(format!("p{i}"))).is_ok());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(limiter.len(), MAX_RATE_KEYS);
            assert!(gate.enter(&Principal::new("one more")).is_ok());
            assert_eq!(limiter.len(), MAX_RATE_KEYS + 1, "forgotten at the limit");
            assert!(gate.enter(&Principal::new("and another")).is_ok());
            assert!(
                limiter.len() <= 2,
                "{} kept one past the limit",
                limiter.len()
            );
        }
    }
}
