//! Redaction against fake secrets in each well-known format, in every position a text or a
//! JSON answer has; and against real payloads, which hold none.

use super::*;

/// A deterministic "random" string of `n` characters from `alphabet`.
pub(crate) fn random(seed: u64, n: usize, alphabet: &str) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut x = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chars[(x % chars.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Fake secrets, one per well-known format, with the rule that must find each.
pub(crate) fn fakes(seed: u64) -> Vec<(&'static str, String)> {
    let r = |n, k: u64| random(seed.wrapping_add(k), n, ALNUM);
    let upper = |n, k: u64| random(seed.wrapping_add(k), n, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
    let digits = |n, k: u64| random(seed.wrapping_add(k), n, "0123456789");
    let key_body: String = (0..20)
        .map(|k| random(seed.wrapping_add(100 + k), 64, ALNUM))
        .collect::<Vec<_>>()
        .join("\n");
    vec![
        ("github-pat", format!("ghp_{}", r(36, 1))),
        (
            "github-fine-grained-pat",
            format!("github_pat_{}", r(82, 2)),
        ),
        ("gitlab-pat", format!("glpat-{}", r(20, 3))),
        ("aws-access-token", format!("AKIA{}", upper(16, 4))),
        (
            "slack-bot-token",
            format!("xoxb-{}-{}-{}", digits(12, 5), digits(13, 6), r(24, 7)),
        ),
        (
            "openai-api-key",
            format!("sk-proj-{}T3BlbkFJ{}", r(58, 8), r(58, 9)),
        ),
        ("anthropic-api-key", format!("sk-ant-api03-{}AA", r(93, 10))),
        ("stripe-access-token", format!("sk_live_{}", r(32, 11))),
        ("gcp-api-key", format!("AIza{}", r(35, 12))),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}",
                r(40, 13),
                r(43, 14)
            ),
        ),
        (
            "private-key",
            format!("-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----"),
        ),
        (
            "slack-webhook-url",
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                upper(8, 15),
                upper(8, 16),
                r(24, 17)
            ),
        ),
    ]
}

fn on(policy: Redaction) -> (Redaction, BTreeSet<String>) {
    (policy, BTreeSet::new())
}

#[test]
fn each_format_is_found_where_it_stands_in_text() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    for seed in 0..20 {
        for (rule, secret) in fakes(seed) {
            for text in [
                secret.clone(),
                format!("the key is {secret} and that is all"),
                format!("export TOKEN='{secret}'\nnext line"),
                format!("line one\n\"{secret}\"\nline three"),
            ] {
                let mut counts = Redacted::default();
                let out = redactor.text(&text, None, &mut counts);
                assert!(
                    !out.contains(&secret),
                    "{rule} (seed {seed}) passed in {text:?}: {out}"
                );
                assert!(out.contains("[redacted: "), "{rule}: {out}");
                assert_eq!(counts.secrets, 1, "{rule} (seed {seed}) in {text:?}: {out}");
                // The words around it stay.
                for word in ["the key is", "and that is all", "next line", "line three"] {
                    assert_eq!(text.contains(word), out.contains(word), "{out}");
                }
            }
        }
    }
}

#[test]
fn the_marker_names_the_rule() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    for (rule, secret) in fakes(7) {
        let mut counts = Redacted::default();
        let text = format!("x {secret} y");
        let out = redactor.text(&text, None, &mut counts);
        assert_eq!(out, format!("x [redacted: {rule}] y"), "{rule}");
    }
}

#[test]
fn json_text_keeps_its_bytes_but_the_secrets() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    let fakes = fakes(3);
    let (_, pat) = &fakes[0];
    let (_, pem) = &fakes[10];
    let text = format!(
        "{{\"id\": 42, \"id\": 43, \"note\": \"{pat}\", \"nested\": [{{\"key\": {}}}, 1.50e3],\n \"{pat}\": true, \"client_secret\": \"Zq8kL2vN9xR4wT6y\", \"page_token\": \"Zq8kL2vN9xR4wT6y\"}}",
        serde_json::to_string(pem).unwrap()
    );
    let mut counts = Redacted::default();
    let out = redactor.block(&text, &mut counts);
    assert_eq!(counts.secrets, 4, "{out}");
    assert!(
        !out.contains(pat.as_str())
            && !out.contains("MII")
            && !out.contains("Zq8kL2vN9xR4wT6y\", \"page"),
        "{out}"
    );
    // Written as the upstream wrote it elsewhere: the key written twice, the number's form.
    assert!(
        out.starts_with("{\"id\": 42, \"id\": 43, \"note\": \"[redacted: github-pat]\""),
        "{out}"
    );
    assert!(
        out.contains("1.50e3") && out.contains("\"[redacted: github-pat] #1\": true"),
        "{out}"
    );
    assert!(
        out.contains("\"client_secret\": \"[redacted: secret]\""),
        "{out}"
    );
    // A page token is passed back: it stays.
    assert!(
        out.contains("\"page_token\": \"Zq8kL2vN9xR4wT6y\""),
        "{out}"
    );
    serde_json::from_str::<serde::de::IgnoredAny>(&out).unwrap();
}

#[test]
fn structured_values_and_keys_are_redacted_and_two_secret_keys_stay_two() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    let fakes = fakes(5);
    let (a, b) = (&fakes[0].1, &fakes[2].1);
    let mut value = serde_json::json!({
        "id": "MDQ6VXNlcjU4MzIzMQ==",
        "items": [{"body": format!("use {a}"), "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e"}],
        "map": {a.clone(): 1, b.clone(): 2},
        "apiKey": "Xk29fLq8Vz3mWp7R",
    });
    let mut counts = Redacted::default();
    redactor.value(&mut value, &mut counts);
    assert_eq!(counts.secrets, 4, "{value}");
    let text = value.to_string();
    assert!(
        !text.contains(a.as_str()) && !text.contains(b.as_str()),
        "{text}"
    );
    assert_eq!(value["map"].as_object().unwrap().len(), 2, "{value}");
    assert_eq!(value["id"], "MDQ6VXNlcjU4MzIzMQ==");
    assert_eq!(
        value["items"][0]["sha"],
        "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    );
    assert_eq!(value["apiKey"], "[redacted: secret]");
}

#[test]
fn key_like_names_and_names_passed_back() {
    for key in [
        "password",
        "db_password",
        "clientSecret",
        "client-secret",
        "apiKey",
        "api_key",
        "ACCESS_TOKEN",
        "refreshToken",
        "private_key",
        "secretKey",
        "credentials",
    ] {
        assert!(key_like(key), "{key}");
    }
    for key in [
        "id",
        "token_id",
        "page_token",
        "nextPageToken",
        "next_cursor",
        "key",
        "monkey",
        "author",
        "token_type",
        "keyboard",
        "secret_name",
        "tokens",
        "max_tokens",
        "sha",
        "name",
        "title",
    ] {
        assert!(!key_like(key), "{key}");
    }
    // A tool's argument is passed back whatever it is called.
    let args: BTreeSet<String> = ["sessionToken".to_owned()].into();
    let redactor = Redactor::new(Redaction::default(), &args);
    let mut counts = Redacted::default();
    assert_eq!(
        redactor.text("Zq8kL2vN9xR4wT6y", Some("session_token"), &mut counts),
        "Zq8kL2vN9xR4wT6y"
    );
    assert_eq!(
        redactor.text("Zq8kL2vN9xR4wT6y", Some("auth_token"), &mut counts),
        "[redacted: secret]"
    );
    // At the edges: 8 characters and 3 bits a character are enough, 7 or less random not.
    assert_eq!(
        redactor.text("Zq8kL2vN", Some("password"), &mut counts),
        "[redacted: secret]"
    );
    assert_eq!(
        redactor.text("Zq8kL2v", Some("password"), &mut counts),
        "Zq8kL2v"
    );
    assert_eq!(
        redactor.text("aabbccdd", Some("password"), &mut counts),
        "aabbccdd"
    );
    assert_eq!(
        redactor.text("two words", Some("password"), &mut counts),
        "two words"
    );
    assert_eq!(counts.secrets, 2);
}

#[test]
fn emails_and_phones_by_policy() {
    let args = BTreeSet::new();
    let text = "Mail ana.lopez+work@example.co.uk or call +44 20 7946 0958 or (555) 123-4567, \
        not 2026-12-07, 12:30:45, v1.2.3, 192.168.100.200, id 1234567890, order 555-1234";
    let mut counts = Redacted::default();
    let off = Redactor::new(Redaction::default(), &args).text(text, None, &mut counts);
    assert_eq!(off, text);
    let all = Redaction {
        secrets: true,
        emails: true,
        phones: true,
    };
    let out = Redactor::new(all, &args).text(text, None, &mut counts);
    assert_eq!(
        out,
        "Mail [redacted: e-mail] or call [redacted: phone] or [redacted: phone], \
        not 2026-12-07, 12:30:45, v1.2.3, 192.168.100.200, id 1234567890, order 555-1234"
    );
    assert_eq!((counts.emails, counts.phones), (1, 2));
    // Under a tool's argument name, an address is what the tool takes: it stays.
    let args: BTreeSet<String> = ["assignee".to_owned()].into();
    let mut counts = Redacted::default();
    let kept = Redactor::new(all, &args).text("ana@example.com", Some("assignee"), &mut counts);
    assert_eq!((kept.as_ref(), counts.total()), ("ana@example.com", 0));
}

/// Real payloads (a build log, a git log, GitHub-like JSON:API articles, npm's view of
/// express, rustdoc's HTML, this repository's Markdown and code) hold no secret: nothing of
/// them is taken for one.
#[test]
fn real_payloads_lose_nothing() {
    let all = Redaction {
        secrets: true,
        emails: false,
        phones: true,
    };
    let args = BTreeSet::new();
    let redactor = Redactor::new(all, &args);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
    let mut read = 0;
    for dir in ["payloads", "bodies"] {
        for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut counts = Redacted::default();
            let out = redactor.block(&text, &mut counts);
            let found: Vec<&str> = out
                .match_indices("[redacted: ")
                .map(|(i, _)| &out[i..(i + 40).min(out.len())])
                .collect();
            assert_eq!(counts.total(), 0, "{}: {found:?}", path.display());
            read += 1;
        }
    }
    assert!(read >= 14);
}
