//! Redaction against fake secrets in each well-known format, in every position a text or a
//! JSON answer has; and against real payloads, which hold none.

use super::*;

// Fake secrets in every well-known format, through the harness in every position and under
// every client profile: tests/suite/redaction.rs. Here, how the parts work.

const PAT: &str = "ghp_Zq8kL2vN9xR4wT6yB3mJ7pD1sF5hK0cG2aE4";
const GITLAB: &str = "glpat-Xk29fLq8Vz3mWp7RtY5u";

fn pem() -> String {
    let body: Vec<String> = (0..12)
        .map(|i| format!("MII{i:02}Zq8kL2vN9xR4wT6yB3mJ7pD1sF5hK0cG2aE4Xk29fLq8Vz3mWp7RtY5u1"))
        .collect();
    format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
        body.join("\n")
    )
}

/// A policy: which of secrets, e-mail addresses and phone numbers are redacted.
fn kinds(secrets: bool, emails: bool, phones: bool) -> Redaction {
    Redaction {
        secrets,
        emails,
        phones,
    }
}

fn on(policy: Redaction) -> (Redaction, BTreeSet<String>) {
    (policy, BTreeSet::new())
}

#[test]
fn a_text_keeps_its_words_and_loses_its_secrets() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    let text = format!("use {PAT} here\nkey:\n{}\nthen {GITLAB}.", pem());
    let mut counts = Redacted::default();
    let out = redactor.text(&text, None, &mut counts);
    assert_eq!(
        out,
        "use [redacted: github-pat] here\nkey:\n[redacted: private-key]\nthen [redacted: gitlab-pat]."
    );
    assert_eq!(
        counts,
        Redacted {
            secrets: 3,
            emails: 0,
            phones: 0
        }
    );
    let off = kinds(false, false, false);
    let out = Redactor::new(off, &args).text(&text, None, &mut counts);
    assert!(matches!(out, Cow::Borrowed(_)));
    assert_eq!(counts.total(), 3);
}

/// Two rules on one secret (`github-pat` and `generic-api-key` on `api_key = ghp_…`), an
/// address inside a secret's span: one marker, counted once.
#[test]
fn overlapping_findings_are_one() {
    let all = kinds(true, true, true);
    let args = BTreeSet::new();
    let redactor = Redactor::new(all, &args);
    let mut counts = Redacted::default();
    let text = format!("api_key = {PAT}\nthen {PAT} again");
    let out = redactor.text(&text, None, &mut counts);
    assert_eq!(out.matches("[redacted: ").count(), 2, "{out}");
    assert!(out.ends_with("then [redacted: github-pat] again"), "{out}");
    assert_eq!(
        counts,
        Redacted {
            secrets: 2,
            emails: 0,
            phones: 0
        }
    );
    let mut counts = Redacted::default();
    let url = "https://hooks.slack.com/services/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";
    let text = format!("hook {url} by ana@example.com");
    let out = redactor.text(&text, None, &mut counts);
    assert_eq!(
        out,
        "hook [redacted: slack-webhook-url] by [redacted: e-mail]"
    );
    assert_eq!(
        counts,
        Redacted {
            secrets: 1,
            emails: 1,
            phones: 0
        }
    );
}

/// Two secrets side by side are two (spans that touch are not joined); one policy of the
/// three on alone is on.
#[test]
fn touching_secrets_stay_two_and_each_policy_alone_is_on() {
    let args = BTreeSet::new();
    let mut counts = Redacted::default();
    let text = format!("{PAT}{PAT}");
    let out = Redactor::new(Redaction::default(), &args).text(&text, None, &mut counts);
    assert_eq!(out, "[redacted: github-pat][redacted: github-pat]");
    assert_eq!(counts.secrets, 2);
    let emails = kinds(false, true, false);
    let out = Redactor::new(emails, &args).text("ana@example.com", None, &mut counts);
    assert_eq!(out, "[redacted: e-mail]");
    let phones = kinds(false, false, true);
    let out = Redactor::new(phones, &args).text("call 555-123-4567", None, &mut counts);
    assert_eq!(out, "call [redacted: phone]");
    // Shaped like a number with a country code but of 5 digits, or of 16: no phone number.
    for text in ["dial +1 23 45 now", "ref +12 3456 7890 1234 5678 x"] {
        let out = Redactor::new(phones, &args).text(text, None, &mut counts);
        assert_eq!(out, text);
    }
    assert_eq!((counts.emails, counts.phones), (1, 1));
    // 7 and 15 digits are a phone number; 6 and 16 are not.
    for (text, phone) in [
        ("+1 23 4567", true),
        ("+1 23 456", false),
        ("+123 4567 8901 2345", true),
        ("+123 4567 8901 23456", false),
    ] {
        let out = Redactor::new(phones, &args).text(text, None, &mut counts);
        assert_eq!(out == "[redacted: phone]", phone, "{text}: {out}");
    }
}

/// Text that only looks like JSON is read as text; in JSON, an item of a list after a nested
/// object is still under the list's key; two keys that hold secrets of one kind stay two,
/// numbered in order.
#[test]
fn json_edges() {
    let args = BTreeSet::new();
    let redactor = Redactor::new(Redaction::default(), &args);
    let mut counts = Redacted::default();
    let text = format!("{{ deploy with {PAT} }}");
    assert_eq!(
        redactor.block(&text, &mut counts),
        "{ deploy with [redacted: github-pat] }"
    );
    let text = r#"{"secret": [{"a": "x"}, "Zq8kL2vN9xR4wT6y"], "b": "Zq8kL2vN9xR4wT6y"}"#;
    assert_eq!(
        redactor.block(text, &mut counts),
        r#"{"secret": [{"a": "x"}, "[redacted: secret]"], "b": "Zq8kL2vN9xR4wT6y"}"#
    );
    let other = PAT.replace("Zq8", "Wx7");
    let text = format!(r#"{{"{PAT}": 1, "{other}": 2}}"#);
    assert_eq!(
        redactor.block(&text, &mut counts),
        r#"{"[redacted: github-pat] #1": 1, "[redacted: github-pat] #2": 2}"#
    );
    let mut value = serde_json::json!({ PAT: 1, other.clone(): 2 });
    redactor.value(&mut value, &mut counts);
    assert_eq!(
        value,
        serde_json::json!({"[redacted: github-pat] #1": 1, "[redacted: github-pat] #2": 2})
    );
    assert_eq!(counts.secrets, 6);
}

#[test]
fn json_text_keeps_its_bytes_but_the_secrets() {
    let (policy, args) = on(Redaction::default());
    let redactor = Redactor::new(policy, &args);
    let (pat, pem) = (PAT, &pem());
    let text = format!(
        "{{\"id\": 42, \"id\": 43, \"note\": \"{pat}\", \"nested\": [{{\"key\": {}}}, 1.50e3],\n \"{pat}\": true, \"client_secret\": \"Zq8kL2vN9xR4wT6y\", \"page_token\": \"Zq8kL2vN9xR4wT6y\"}}",
        serde_json::to_string(pem).unwrap()
    );
    let mut counts = Redacted::default();
    let out = redactor.block(&text, &mut counts);
    assert_eq!(counts.secrets, 4, "{out}");
    assert!(
        !out.contains(pat) && !out.contains("MII") && !out.contains("Zq8kL2vN9xR4wT6y\", \"page"),
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
    let (a, b) = (PAT.to_owned(), GITLAB.to_owned());
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
    // A tool's argument (`sessionToken`) is passed back whatever it is called.
    let args: BTreeSet<String> = ["sessionToken".to_owned()].into();
    let redactor = Redactor::new(Redaction::default(), &args);
    let mut counts = Redacted::default();
    let cases = [
        // A tool's argument is passed back whatever it is called.
        ("Zq8kL2vN9xR4wT6y", "session_token", "Zq8kL2vN9xR4wT6y"),
        ("Zq8kL2vN9xR4wT6y", "auth_token", "[redacted: secret]"),
        // At the edges: 8 characters and 3 bits a character are enough, 7 or less random not.
        ("Zq8kL2vN", "password", "[redacted: secret]"),
        ("Zq8kL2v", "password", "Zq8kL2v"),
        ("aabbccdd", "password", "aabbccdd"),
        // Entropy at its edge: 8 distinct characters are 3 bits each (taken), 2.75 not.
        ("abcdefgh", "password", "[redacted: secret]"),
        ("abcdefgg", "password", "abcdefgg"),
        ("two words", "password", "two words"),
    ];
    for (value, key, shown) in cases {
        assert_eq!(
            redactor.text(value, Some(key), &mut counts),
            shown,
            "{value} under {key}"
        );
    }
    assert_eq!(counts.secrets, 3);
}

#[test]
fn emails_and_phones_by_policy() {
    let args = BTreeSet::new();
    let text = "Mail ana.lopez+work@example.co.uk or call +44 20 7946 0958 or (555) 123-4567, \
        not 2026-12-07, 12:30:45, v1.2.3, 192.168.100.200, id 1234567890, order 555-1234";
    let mut counts = Redacted::default();
    let off = Redactor::new(Redaction::default(), &args).text(text, None, &mut counts);
    assert_eq!(off, text);
    let all = kinds(true, true, true);
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
    let all = kinds(true, false, true);
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

#[test]
#[ignore = "a timing, printed"]
fn time_redaction() {
    let args = BTreeSet::new();
    let redactor = Redactor::new(Redaction::default(), &args);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data");
    let mut texts: Vec<(String, String)> = [
        "payloads/build_log.txt",
        "payloads/git_log_stat.txt",
        "payloads/npm_view_express.json",
        "payloads/jsonapi_articles.json",
        "bodies/readme.md",
    ]
    .iter()
    .map(|p| {
        (
            p.to_string(),
            std::fs::read_to_string(format!("{root}/{p}")).unwrap(),
        )
    })
    .collect();
    let rows: Vec<String> = (0..5200)
        .map(|i| {
            format!(
                "({i}, 'customer {i}', 'c{i}@example.com', {}.50, '2026-01-{:02}')",
                i * 3,
                i % 28 + 1
            )
        })
        .collect();
    texts.push(("one line 2 MB".into(), rows.join(", ").repeat(5)));
    for (name, text) in &texts {
        let _ = redactor.block(text, &mut Redacted::default());
        let t = std::time::Instant::now();
        let mut c = Redacted::default();
        let _ = redactor.block(text, &mut c);
        println!(
            "{name}: {} bytes, {:?}, {} found",
            text.len(),
            t.elapsed(),
            c.total()
        );
    }
}
