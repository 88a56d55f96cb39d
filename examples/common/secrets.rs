//! Fake secrets, one in each well-known format a redaction must catch (random in the
//! characters each format takes, a different set for each seed), and where they stand in the
//! answers of the redaction tests and the proxy check. None of them is a real credential.

/// A deterministic string of `n` characters of `alphabet`, from `seed` (xorshift).
pub fn random(seed: u64, n: usize, alphabet: &str) -> String {
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

/// One fake secret: the gitleaks rule that must find it, and its text.
#[derive(Debug, Clone)]
pub struct Fake {
    pub rule: &'static str,
    pub text: String,
}

impl Fake {
    /// Pieces of the secret that must not reach a model either: every 12 characters of it
    /// that are its random part (a private key's each body line), so a secret shown in part
    /// (cut at a page or a cap) is caught too.
    pub fn pieces(&self) -> Vec<String> {
        let random: String = match self.text.split_once('\n') {
            Some((_, body)) => body.lines().filter(|l| !l.starts_with("-----")).collect(),
            None => self.text.chars().skip(13).collect(),
        };
        let chars: Vec<char> = random.chars().collect();
        chars
            .chunks(12)
            .filter(|c| c.len() == 12)
            .map(|c| c.iter().collect())
            .collect()
    }
}

/// A fake secret of each well-known format (cloud, source hosting, chat, payment, model
/// providers, a private key block, a JWT, a webhook URL), random for `seed`.
pub fn fakes(seed: u64) -> Vec<Fake> {
    let r = |n, k: u64| random(seed.wrapping_mul(97).wrapping_add(k), n, ALNUM);
    let upper = |n, k: u64| {
        random(
            seed.wrapping_mul(97).wrapping_add(k),
            n,
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        )
    };
    let digits = |n, k: u64| random(seed.wrapping_mul(97).wrapping_add(k), n, "0123456789");
    let key_body: String = (0..20)
        .map(|k| r(64, 100 + k))
        .collect::<Vec<_>>()
        .join("\n");
    let fake = |rule, text| Fake { rule, text };
    vec![
        fake("github-pat", format!("ghp_{}", r(36, 1))),
        fake(
            "github-fine-grained-pat",
            format!("github_pat_{}", r(82, 2)),
        ),
        fake("gitlab-pat", format!("glpat-{}", r(20, 3))),
        fake("aws-access-token", format!("AKIA{}", upper(16, 4))),
        fake(
            "slack-bot-token",
            format!("xoxb-{}-{}-{}", digits(12, 5), digits(13, 6), r(24, 7)),
        ),
        fake(
            "openai-api-key",
            format!("sk-proj-{}T3BlbkFJ{}", r(58, 8), r(58, 9)),
        ),
        fake("anthropic-api-key", format!("sk-ant-api03-{}AA", r(93, 10))),
        fake("stripe-access-token", format!("sk_live_{}", r(32, 11))),
        fake("gcp-api-key", format!("AIza{}", r(35, 12))),
        fake(
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}",
                r(40, 13),
                r(43, 14)
            ),
        ),
        fake(
            "private-key",
            format!("-----BEGIN RSA PRIVATE KEY-----\n{key_body}\n-----END RSA PRIVATE KEY-----"),
        ),
        fake(
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
