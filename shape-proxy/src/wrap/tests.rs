//! `wrap`, `unwrap` and `discover` on each client's configuration as its documentation
//! writes it: what is rewritten, what is left and why, and the round trip byte for byte.

use super::*;
use std::path::Path;

const PROGRAM: &str = "/opt/bin/toolshape-proxy";

fn places(root: &Path) -> Places {
    let home = root.join("home");
    Places {
        cwd: root.join("project"),
        config_home: home.join(".config"),
        codex_home: home.join(".codex"),
        dir: home.join(".toolshape"),
        home,
    }
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn options(clients: &[Client]) -> WrapOptions {
    WrapOptions {
        clients: clients.to_vec(),
        files: Vec::new(),
        servers: Vec::new(),
        program: PathBuf::from(PROGRAM),
        dry_run: false,
    }
}

/// Claude Code's `~/.claude.json`: the client's own state around the servers, three servers
/// of the user's, one of a project's, and three the proxy cannot start as the client does.
const CLAUDE: &str = r#"{
  "numStartups": 42,
  "theme": "dark",
  "mcpServers": {
    "filesystem": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/home/me/notes"
      ],
      "env": {}
    },
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/home/me/repo"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"
      }
    },
    "sentry": {
      "type": "http",
      "url": "https://mcp.sentry.dev/mcp",
      "headers": {
        "Authorization": "Bearer ${SENTRY_TOKEN}"
      }
    },
    "linear": {
      "type": "sse",
      "url": "https://mcp.linear.app/sse"
    },
    "notes": {
      "command": "node",
      "args": ["${HOME}/notes-server/index.js"]
    }
  },
  "projects": {
    "/home/me/repo": {
      "allowedTools": [],
      "mcpServers": {
        "filesystem": {
          "type": "stdio",
          "command": "npx",
          "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/repo"],
          "env": {}
        }
      },
      "hasTrustDialogAccepted": true
    }
  },
  "userID": "0123abcd"
}"#;

#[test]
fn claude_code_servers_go_behind_the_proxy_and_come_back_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.home.join(".claude.json");
    put(&file, CLAUDE);
    let report = wrap(&places, &options(&[Client::ClaudeCode])).unwrap();
    let proxy_toml = places.dir.join("proxy.toml");
    let upstream_args = |name: &str| {
        Value::from(vec![
            UPSTREAM_FLAG.to_owned(),
            name.to_owned(),
            proxy_toml.display().to_string(),
        ])
    };
    let after = std::fs::read_to_string(&file).unwrap();
    let value = json::value(&after, "after").unwrap();
    let servers = &value["mcpServers"];
    for (name, upstream) in [
        ("filesystem", "filesystem"),
        ("git", "git"),
        ("github", "github"),
    ] {
        assert_eq!(servers[name]["command"], PROGRAM, "{name}");
        assert_eq!(servers[name]["args"], upstream_args(upstream), "{name}");
    }
    // The entry keeps its type (now stdio) and its env, which the client still expands.
    assert_eq!(servers["filesystem"]["type"], "stdio");
    assert_eq!(servers["git"].get("type"), None);
    assert_eq!(
        servers["github"]["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "${GITHUB_TOKEN}"
    );
    // The project's server of the same name but another folder is another upstream.
    let project = &value["projects"]["/home/me/repo"]["mcpServers"]["filesystem"];
    assert_eq!(project["args"], upstream_args("filesystem-2"));
    // The HTTP server with a header: its upstream sends it, the variable set on the proxy by
    // the entry, which Claude Code expands.
    assert_eq!(servers["sentry"]["type"], "stdio");
    assert_eq!(servers["sentry"]["env"]["SENTRY_TOKEN"], "${SENTRY_TOKEN}");
    assert_eq!(servers["sentry"].get("headers"), None);
    // Left, each with its reason, untouched.
    for (name, why) in [
        ("linear", "served over SSE"),
        ("notes", "holds a variable the client expands"),
    ] {
        assert!(
            report.contains(&format!("  left      {name}: ")),
            "{report}"
        );
        assert!(report.contains(why), "{why}: {report}");
        let before = json::value(CLAUDE, "before").unwrap();
        assert_eq!(servers[name], before["mcpServers"][name]);
    }
    // Every byte outside the four entries is as it was.
    assert!(after.starts_with("{\n  \"numStartups\": 42,\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"type\": \"stdio\",\n      \"command\": \"/opt/bin/toolshape-proxy\",\n      \"args\": ["));
    assert!(after.ends_with(
        "      \"hasTrustDialogAccepted\": true\n    }\n  },\n  \"userID\": \"0123abcd\"\n}"
    ));
    // The proxy's configuration has the four upstreams, as the client started them.
    let (config, _) = ProxyConfig::load(&proxy_toml).unwrap();
    let names: Vec<&str> = config.upstreams.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["filesystem", "filesystem-2", "git", "github", "sentry"]
    );
    assert_eq!(
        config.upstreams["sentry"].headers,
        BTreeMap::from([(
            "Authorization".to_owned(),
            "Bearer ${SENTRY_TOKEN}".to_owned()
        )])
    );
    assert_eq!(config.upstreams["git"].command.as_deref(), Some("uvx"));
    assert_eq!(
        config.upstreams["git"].args,
        ["mcp-server-git", "--repository", "/home/me/repo"]
    );
    assert_eq!(config.upstreams["filesystem-2"].args[2], "/home/me/repo");
    assert!(
        config.upstreams["github"].env.is_empty(),
        "secrets stay in the client's file"
    );
    // The backup is the file as it was.
    let backup = std::fs::read_dir(places.dir.join("backups"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(std::fs::read_to_string(backup.path()).unwrap(), CLAUDE);
    // discover says where each stands.
    let found = discover(&places, &[Client::ClaudeCode], &[]).unwrap();
    assert!(found.contains("  behind    git (upstream git)"), "{found}");
    assert!(
        found.contains("  behind    filesystem (of /home/me/repo) (upstream filesystem-2)"),
        "{found}"
    );
    assert!(
        found.contains("0 servers not yet behind the proxy"),
        "{found}"
    );
    // Wrapping again changes nothing.
    let again = wrap(&places, &options(&[Client::ClaudeCode])).unwrap();
    assert!(again.contains("  already   git (upstream git)"), "{again}");
    assert!(again.contains("nothing to put behind the proxy"), "{again}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
    // unwrap: byte for byte.
    let undone = unwrap(&places, &[], false).unwrap();
    assert!(undone.contains("byte for byte"), "{undone}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CLAUDE);
    assert!(
        unwrap(&places, &[], false)
            .unwrap()
            .contains("nothing to undo")
    );
}

#[test]
fn a_dry_run_prints_the_diff_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.home.join(".claude.json");
    put(&file, CLAUDE);
    let mut dry = options(&[Client::ClaudeCode]);
    dry.dry_run = true;
    let report = wrap(&places, &dry).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CLAUDE);
    assert!(!places.dir.exists(), "nothing written: {report}");
    assert!(
        report.contains("--- ~/.claude.json\n+++ ~/.claude.json\n"),
        "{report}"
    );
    assert!(
        report.contains("-      \"command\": \"uvx\",\n"),
        "{report}"
    );
    assert!(
        report.contains("+      \"command\": \"/opt/bin/toolshape-proxy\",\n"),
        "{report}"
    );
    assert!(report.contains("+++ ~/.toolshape/proxy.toml\n"), "{report}");
    assert!(report.contains("+[upstreams.git]\n"), "{report}");
    assert!(
        report.ends_with("dry run: 5 servers would be put behind the proxy; nothing was written\n"),
        "{report}"
    );
}

/// Codex's `config.toml`, as its documentation writes servers.
const CODEX: &str = r#"model = "gpt-5"  # the model

# Context7: library docs
[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]
startup_timeout_sec = 20

[mcp_servers.context7.env]
MY_ENV_VAR = "MY_ENV_VALUE"

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }

[mcp_servers.docs]
url = "http://127.0.0.1:4000/mcp"

[profiles.fast]
model = "gpt-5-mini"
"#;

#[test]
fn codex_servers_go_behind_the_proxy_and_come_back_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.codex_home.join("config.toml");
    put(&file, CODEX);
    let report = wrap(&places, &options(&[Client::Codex])).unwrap();
    assert!(
        report.contains("  wrapped   context7 (upstream context7)"),
        "{report}"
    );
    assert!(
        report.contains("  wrapped   docs (upstream docs)"),
        "{report}"
    );
    assert!(
        report.contains("  wrapped   figma (upstream figma)"),
        "{report}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    let value = toml::value(&after, "after").unwrap();
    let context7 = &value["mcp_servers"]["context7"];
    assert_eq!(context7["command"], PROGRAM);
    assert_eq!(context7["args"][0], UPSTREAM_FLAG);
    assert_eq!(context7["startup_timeout_sec"], 20);
    assert_eq!(context7["env"]["MY_ENV_VAR"], "MY_ENV_VALUE");
    // Codex's headers are the upstream's now; the entry names the variable it passes on,
    // and keeps no setting of an HTTP entry.
    let figma = &value["mcp_servers"]["figma"];
    assert_eq!(figma["env_vars"], serde_json::json!(["FIGMA_OAUTH_TOKEN"]));
    for gone in ["url", "http_headers", "bearer_token_env_var"] {
        assert_eq!(figma.get(gone), None, "{gone}");
    }
    let docs = &value["mcp_servers"]["docs"];
    assert_eq!(docs.get("url"), None);
    assert_eq!(docs.get("env_vars"), None);
    assert_eq!(docs["args"][1], "docs");
    assert!(
        after.starts_with(
            "model = \"gpt-5\"  # the model\n\n# Context7: library docs\n[mcp_servers.context7]\n"
        ),
        "{after}"
    );
    let (config, _) = ProxyConfig::load(places.dir.join("proxy.toml")).unwrap();
    assert_eq!(
        config.upstreams["docs"].url.as_deref(),
        Some("http://127.0.0.1:4000/mcp")
    );
    assert_eq!(
        config.upstreams["context7"].args,
        ["-y", "@upstash/context7-mcp"]
    );
    let figma = &config.upstreams["figma"];
    assert_eq!(figma.url.as_deref(), Some("https://mcp.figma.com/mcp"));
    assert_eq!(
        figma.headers,
        BTreeMap::from([
            (
                "Authorization".to_owned(),
                "Bearer ${FIGMA_OAUTH_TOKEN}".to_owned()
            ),
            ("X-Figma-Region".to_owned(), "us-east-1".to_owned()),
        ])
    );
    unwrap(&places, &[], false).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CODEX);
}

/// A Codex entry edited after `wrap` (so its backup is not used) gets its headers back entry
/// by entry: the tables and the token variable as they were, `env_vars` as it was (a list it
/// had kept with the variable added; none it had not).
#[test]
fn codex_headers_come_back_entry_by_entry() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.codex_home.join("config.toml");
    let before = r#"[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
env_vars = ["HOME_REGION"]

[mcp_servers.figma.env_http_headers]
X-Key = "FIGMA_KEY"

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
http_headers = { "X-Team" = "core" }
"#;
    put(&file, before);
    wrap(&places, &options(&[Client::Codex])).unwrap();
    let after = std::fs::read_to_string(&file).unwrap();
    let value = toml::value(&after, "after").unwrap();
    assert_eq!(
        value["mcp_servers"]["figma"]["env_vars"],
        serde_json::json!(["HOME_REGION", "FIGMA_KEY", "FIGMA_OAUTH_TOKEN"])
    );
    assert_eq!(value["mcp_servers"]["linear"].get("env_vars"), None);
    let (config, _) = ProxyConfig::load(places.dir.join("proxy.toml")).unwrap();
    assert_eq!(config.upstreams["figma"].headers["X-Key"], "${FIGMA_KEY}");
    assert_eq!(config.upstreams["linear"].headers["X-Team"], "core");
    // An edit elsewhere: unwrap puts the entries back one by one and keeps it.
    put(
        &file,
        &format!("{after}\n[profiles.fast]\nmodel = \"gpt-5-mini\"\n"),
    );
    unwrap(&places, &[], false).unwrap();
    let restored = toml::value(&std::fs::read_to_string(&file).unwrap(), "restored").unwrap();
    let mut expected = toml::value(before, "before").unwrap();
    expected["profiles"] = serde_json::json!({"fast": {"model": "gpt-5-mini"}});
    assert_eq!(restored, expected);
}

/// VS Code's `mcp.json`: comments, trailing commas, inputs, CRLF line ends.
const VSCODE: &str = "{\r\n  // Inputs are prompted on first server start.\r\n  \"inputs\": [\r\n    {\r\n      \"type\": \"promptString\",\r\n      \"id\": \"perplexity-key\",\r\n      \"description\": \"Perplexity API Key\",\r\n      \"password\": true\r\n    }\r\n  ],\r\n  \"servers\": {\r\n    // https://github.com/ppl-ai/modelcontextprotocol/\r\n    \"Perplexity\": {\r\n      \"type\": \"stdio\",\r\n      \"command\": \"npx\",\r\n      \"args\": [\"-y\", \"server-perplexity-ask\"],\r\n      \"env\": {\r\n        \"PERPLEXITY_API_KEY\": \"${input:perplexity-key}\"\r\n      },\r\n    },\r\n    \"workspace-files\": {\r\n      \"type\": \"stdio\",\r\n      \"command\": \"npx\",\r\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"${workspaceFolder}\"]\r\n    },\r\n    \"fetch\": { \"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"], \"cwd\": \"${workspaceFolder}\" },\r\n    \"github\": {\r\n      \"type\": \"http\",\r\n      \"url\": \"https://api.githubcopilot.com/mcp/\"\r\n    },\r\n  },\r\n}\r\n";

#[test]
fn vs_code_servers_go_behind_the_proxy_and_come_back_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.cwd.join(".vscode/mcp.json");
    put(&file, VSCODE);
    let report = wrap(&places, &options(&[Client::VsCode])).unwrap();
    assert!(
        report.starts_with(&format!("{} (VS Code)\n", file.display())),
        "{report}"
    );
    assert!(
        report.contains("  wrapped   Perplexity (upstream Perplexity)"),
        "{report}"
    );
    assert!(
        report.contains("  wrapped   fetch (upstream fetch)"),
        "{report}"
    );
    assert!(
        report.contains("  wrapped   github (upstream github)"),
        "{report}"
    );
    assert!(
        report.contains("  left      workspace-files: \"${workspaceFolder}\" holds a variable"),
        "{report}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(
        !after.replace("\r\n", "").contains('\n'),
        "CRLF kept: {after:?}"
    );
    assert!(after.contains("    // https://github.com/ppl-ai/modelcontextprotocol/\r\n"));
    let value = json::value(&after, "after").unwrap();
    let servers = &value["servers"];
    assert_eq!(
        servers["Perplexity"]["env"]["PERPLEXITY_API_KEY"],
        "${input:perplexity-key}"
    );
    // One line stays one line; the folder VS Code expands stays VS Code's (the proxy runs in it).
    assert!(after.contains(&format!("    \"fetch\": {{ \"type\": \"stdio\", \"command\": \"{PROGRAM}\", \"args\": [\"--upstream\", \"fetch\", ")));
    assert_eq!(servers["fetch"]["cwd"], "${workspaceFolder}");
    // An HTTP server becomes a stdio entry starting the proxy, whose upstream is the URL.
    assert_eq!(servers["github"]["type"], "stdio");
    assert_eq!(servers["github"].get("url"), None);
    let (config, _) = ProxyConfig::load(places.dir.join("proxy.toml")).unwrap();
    assert_eq!(
        config.upstreams["github"].url.as_deref(),
        Some("https://api.githubcopilot.com/mcp/")
    );
    assert_eq!(config.upstreams["fetch"].cwd, None);
    unwrap(&places, &[], false).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), VSCODE);
}

/// Cursor's `mcp.json`, one line per server.
const CURSOR: &str = "{\n\t\"mcpServers\": {\n\t\t\"memory\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"], \"env\": {\"MEMORY_FILE_PATH\": \"/tmp/m.json\"}},\n\t\t\"remote\": {\"url\": \"http://localhost:9000/mcp\"}\n\t}\n}\n";

#[test]
fn a_file_edited_after_wrap_keeps_its_edits_when_unwrapped() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.home.join(".cursor/mcp.json");
    put(&file, CURSOR);
    // One server first, then the rest: the first backup still undoes both.
    let mut first = options(&[Client::Cursor]);
    first.servers = vec!["memory".to_owned()];
    let report = wrap(&places, &first).unwrap();
    assert!(!report.contains("remote"), "{report}");
    wrap(&places, &options(&[Client::Cursor])).unwrap();
    let wrapped = std::fs::read_to_string(&file).unwrap();
    assert!(
        wrapped.contains("\t\t\"remote\": { \"command\": "),
        "{wrapped}"
    );
    let undo = unwrap(&places, &[], true).unwrap();
    assert!(undo.contains("byte for byte"), "{undo}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        wrapped,
        "a dry run writes nothing"
    );
    // The user adds a server and changes the theme of the memory server's env by hand.
    let edited = wrapped.replace(
        "\t\t\"remote\"",
        "\t\t\"added\": {\"command\": \"added-server\"},\n\t\t\"remote\"",
    );
    put(&file, &edited);
    let undone = unwrap(&places, std::slice::from_ref(&file), false).unwrap();
    assert!(undone.contains("the other edits kept"), "{undone}");
    let expected = CURSOR.replace(
        "\t\t\"remote\"",
        "\t\t\"added\": {\"command\": \"added-server\"},\n\t\t\"remote\"",
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
}

#[test]
fn an_entry_changed_or_removed_since_is_left_and_said() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.home.join(".cursor/mcp.json");
    put(&file, CURSOR);
    wrap(&places, &options(&[Client::Cursor])).unwrap();
    let wrapped = std::fs::read_to_string(&file).unwrap();
    let value = json::value(&wrapped, "w").unwrap();
    // `remote` removed; `memory` pointed elsewhere by hand.
    let mut servers = value["mcpServers"].as_object().unwrap().clone();
    servers.remove("remote");
    servers["memory"]["args"] = Value::from(vec!["by-hand"]);
    let edited =
        serde_json::to_string_pretty(&serde_json::json!({ "mcpServers": servers })).unwrap();
    put(&file, &edited);
    let undone = unwrap(&places, &[], false).unwrap();
    assert!(
        undone.contains("  left      memory: changed since it was wrapped"),
        "{undone}"
    );
    assert!(
        undone.contains("  left      remote: no longer in the file"),
        "{undone}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
}

#[cfg(unix)]
#[test]
fn permissions_and_links_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let real = root.path().join("dotfiles/claude.json");
    put(&real, CLAUDE);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir_all(&places.home).unwrap();
    std::os::unix::fs::symlink(&real, places.home.join(".claude.json")).unwrap();
    wrap(&places, &options(&[Client::ClaudeCode])).unwrap();
    let link = std::fs::symlink_metadata(places.home.join(".claude.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    assert_ne!(std::fs::read_to_string(&real).unwrap(), CLAUDE);
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let manifest = std::fs::metadata(places.dir.join("wrapped.json")).unwrap();
    assert_eq!(
        manifest.permissions().mode() & 0o777,
        0o600,
        "it holds the entries' env"
    );
    unwrap(&places, &[], false).unwrap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), CLAUDE);
}

#[test]
fn a_file_given_by_path_is_read_by_its_layout() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let vscode = root.path().join("elsewhere/servers.json");
    put(&vscode, VSCODE);
    let codex = root.path().join("elsewhere/codex.toml");
    put(&codex, CODEX);
    let mut given = options(&[]);
    given.files = vec![vscode.clone(), codex.clone(), vscode.clone()];
    let report = wrap(&places, &given).unwrap();
    assert_eq!(
        report.matches("  wrapped   Perplexity").count(),
        1,
        "{report}"
    );
    assert!(report.contains("  wrapped   context7"), "{report}");
    unwrap(&places, &[], false).unwrap();
    assert_eq!(std::fs::read_to_string(&vscode).unwrap(), VSCODE);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), CODEX);
}

#[test]
fn no_configuration_and_a_broken_one_are_errors_that_write_nothing() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let none = wrap(&places, &options(&[])).unwrap_err();
    assert!(
        none.to_string().contains("no MCP configuration found"),
        "{none}"
    );
    put(
        &places.home.join(".claude.json"),
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"}",
    );
    let broken = wrap(&places, &options(&[Client::ClaudeCode])).unwrap_err();
    assert!(matches!(broken, WrapError::Parse(_)), "{broken}");
    assert!(!places.dir.exists());
    // A proxy configuration that cannot be read is an error, not a file to write anew.
    put(&places.home.join(".cursor/mcp.json"), CURSOR);
    std::fs::create_dir_all(places.dir.join("proxy.toml")).unwrap();
    let unreadable = wrap(&places, &options(&[Client::Cursor])).unwrap_err();
    assert!(matches!(unreadable, WrapError::Read { .. }), "{unreadable}");
    assert_eq!(
        std::fs::read_to_string(places.home.join(".cursor/mcp.json")).unwrap(),
        CURSOR
    );
}

#[test]
fn each_entry_is_judged_as_the_proxy_would_start_it() {
    let judged = |v: Value| classify(&v);
    let ready = |command: &str, args: &[&str]| State::Ready {
        spec: UpstreamSpec {
            command: Some(command.to_owned()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..UpstreamSpec::default()
        },
        env: Vec::new(),
    };
    assert_eq!(judged(serde_json::json!({"command": "x"})), ready("x", &[]));
    // A folder written out goes to the upstream too (one the client expands stays its own).
    match judged(serde_json::json!({"command": "x", "cwd": "/srv"})) {
        State::Ready { spec, .. } => assert_eq!(spec.cwd, Some(PathBuf::from("/srv"))),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        judged(serde_json::json!({"command": "x", "type": "stdio", "args": ["a"]})),
        ready("x", &["a"])
    );
    assert_eq!(
        judged(serde_json::json!({"command": PROGRAM, "args": [UPSTREAM_FLAG, "fs", "/p.toml"]})),
        State::Wrapped {
            upstream: "fs".to_owned()
        }
    );
    // An empty headers table sends nothing.
    assert!(matches!(
        judged(serde_json::json!({"url": "http://h/mcp", "headers": {}})),
        State::Ready { .. }
    ));
    // Headers: each variable the client would expand is set on the proxy by the entry's env
    // (in the client's own syntax) and read by the proxy under a plain name.
    let headers = |entry: Value| match judged(entry) {
        State::Ready { spec, env } => (spec.headers, env),
        other => panic!("{other:?}"),
    };
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let (sent, env) = headers(serde_json::json!({"type": "http", "url": "https://h/mcp",
        "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}", "X-Org": "acme"}}));
    assert_eq!(
        sent,
        BTreeMap::from([
            pair("Authorization", "Bearer ${SENTRY_TOKEN}"),
            pair("X-Org", "acme")
        ])
    );
    assert_eq!(env, [pair("SENTRY_TOKEN", "${SENTRY_TOKEN}")]);
    let (sent, env) = headers(serde_json::json!({"url": "https://h/mcp", "headers": {
        "A": "${env:TOKEN}", "B": "${input:api-key}", "C": "${REGION:-eu}", "D": "${input:other}"}}));
    assert_eq!(sent["A"], "${TOKEN}");
    assert_eq!(sent["B"], "${TOOLSHAPE_HEADER_1}");
    assert_eq!(sent["C"], "${REGION}");
    assert_eq!(sent["D"], "${TOOLSHAPE_HEADER_2}");
    assert_eq!(
        env,
        [
            pair("TOKEN", "${env:TOKEN}"),
            pair("TOOLSHAPE_HEADER_1", "${input:api-key}"),
            pair("REGION", "${REGION:-eu}"),
            pair("TOOLSHAPE_HEADER_2", "${input:other}")
        ]
    );
    // Codex's: as written, from a variable, a bearer token; each variable once, by name.
    let (sent, env) = headers(serde_json::json!({"url": "https://h/mcp",
        "http_headers": {"X-Region": "us-east-1", "X-Dollar": "$5"},
        "env_http_headers": {"X-Key": "API_KEY", "X-Again": "API_KEY"},
        "bearer_token_env_var": "TOKEN"}));
    assert_eq!(
        sent,
        BTreeMap::from([
            pair("Authorization", "Bearer ${TOKEN}"),
            pair("X-Again", "${API_KEY}"),
            pair("X-Dollar", "$5"),
            pair("X-Key", "${API_KEY}"),
            pair("X-Region", "us-east-1"),
        ])
    );
    assert_eq!(
        env,
        [pair("API_KEY", "${API_KEY}"), pair("TOKEN", "${TOKEN}")]
    );
    // Empty or null, they send nothing.
    let (sent, env) = headers(serde_json::json!({"url": "https://h/mcp",
        "http_headers": {}, "env_http_headers": null, "bearer_token_env_var": null}));
    assert!(sent.is_empty() && env.is_empty());
    // A name the entry's env gives another value is not reused; one it gives this value is.
    let (sent, env) = headers(serde_json::json!({"url": "https://h/mcp",
        "headers": {"A": "${TOKEN}", "B": "${KEY}"}, "env": {"TOKEN": "literal", "KEY": "${KEY}"}}));
    assert_eq!(sent["A"], "${TOOLSHAPE_HEADER_1}");
    assert_eq!(sent["B"], "${KEY}");
    assert_eq!(env, [pair("TOOLSHAPE_HEADER_1", "${TOKEN}")]);
    for (entry, why) in [
        (serde_json::json!("npx"), "not a table"),
        (
            serde_json::json!({"command": "x", "args": "a b"}),
            "not a list of strings",
        ),
        (
            serde_json::json!({"command": "x", "args": [1]}),
            "not a list of strings",
        ),
        (
            serde_json::json!({"command": "x", "url": "http://h"}),
            "both",
        ),
        (
            serde_json::json!({"type": "http", "command": "x"}),
            "its type is \"http\"",
        ),
        (
            serde_json::json!({"url": "http://h", "headers": {"A": 1}}),
            "not a string",
        ),
        (
            serde_json::json!({"url": "http://h", "headers": {"A": "${B"}}),
            "not closed",
        ),
        (
            serde_json::json!({"url": "http://h", "headers": "A: b"}),
            "not a table",
        ),
        // Codex's headers: a literal the proxy would expand, a name that is no variable's,
        // one header set twice (names alike whatever their case), not strings.
        (
            serde_json::json!({"url": "http://h", "http_headers": {"X": "a${B}"}}),
            "`http_headers.X` holds `${`",
        ),
        (
            serde_json::json!({"url": "http://h", "bearer_token_env_var": "MY-TOKEN"}),
            "its `bearer_token_env_var` names `MY-TOKEN`, not a variable's name",
        ),
        (
            serde_json::json!({"url": "http://h", "env_http_headers": {"X": "1ST"}}),
            "its `env_http_headers.X` names `1ST`",
        ),
        (
            serde_json::json!({"url": "http://h", "bearer_token_env_var": "T",
                "http_headers": {"authorization": "Basic x"}}),
            "sets the header `Authorization` twice",
        ),
        (
            serde_json::json!({"url": "http://h", "headers": {"X": "a"},
                "http_headers": {"x": "b"}}),
            "sets the header `x` twice",
        ),
        (
            serde_json::json!({"url": "http://h", "http_headers": {"X": 1}}),
            "`http_headers.X` is not a string",
        ),
        (
            serde_json::json!({"url": "http://h", "env_http_headers": ["X"]}),
            "`env_http_headers` is not a table of strings",
        ),
        (
            serde_json::json!({"url": "http://h", "bearer_token_env_var": 1}),
            "`bearer_token_env_var` is not a string",
        ),
        (
            serde_json::json!({"url": "http://h/sse", "type": "sse"}),
            "SSE",
        ),
        (
            serde_json::json!({"url": "http://${HOST}/mcp"}),
            "holds a variable",
        ),
        (
            serde_json::json!({"command": "${HOME}/bin/s"}),
            "holds a variable",
        ),
        (serde_json::json!({"env": {}}), "neither"),
    ] {
        match judged(entry.clone()) {
            State::Skipped(reason) => assert!(reason.contains(why), "{entry}: {reason}"),
            other => panic!("{entry}: {other:?}"),
        }
    }
}

/// The README's `wrap --dry-run` is what the command prints for the configuration it was run
/// on (a home at `/home/me`, shown here in a temporary one).
#[test]
fn the_readme_shows_a_dry_run_as_it_is() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let claude = r#"{
  "numStartups": 12,
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/home/me/repo"]
    },
    "linear": {
      "type": "sse",
      "url": "https://mcp.linear.app/sse"
    }
  }
}
"#;
    put(&places.home.join(".claude.json"), claude);
    let mut dry = options(&[Client::ClaudeCode]);
    dry.program = PathBuf::from("/home/me/.cargo/bin/toolshape-proxy");
    dry.dry_run = true;
    let printed = wrap(&places, &dry)
        .unwrap()
        .replace(&places.home.display().to_string(), "/home/me");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let start = "$ toolshape-proxy wrap --client claude --dry-run\n";
    let shown = readme
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(shown, _)| shown)
        .expect("the README shows `wrap --client claude --dry-run` in a console block");
    assert_eq!(shown, printed, "print it again into the README");
}

/// A backup removed by hand: the entries are put back one by one, and for a JSON file that
/// is the file as it was.
#[test]
fn a_lost_backup_still_unwraps_entry_by_entry() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let file = places.home.join(".cursor/mcp.json");
    put(&file, CURSOR);
    wrap(&places, &options(&[Client::Cursor])).unwrap();
    std::fs::remove_dir_all(places.dir.join("backups")).unwrap();
    let undone = unwrap(&places, &[], false).unwrap();
    assert!(undone.contains("  restored  memory"), "{undone}");
    assert!(undone.contains("  restored  remote"), "{undone}");
    assert!(
        undone.contains("is gone: its entries put back one by one"),
        "{undone}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CURSOR);
}

#[test]
fn places_come_from_the_environment_and_clients_from_their_words() {
    let vars = |set: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            set.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    let cwd = PathBuf::from("/work");
    let places = Places::from_vars(vars(&[("HOME", "/home/me")]), cwd.clone()).unwrap();
    assert_eq!(places.home, Path::new("/home/me"));
    assert_eq!(places.config_home, Path::new("/home/me/.config"));
    assert_eq!(places.codex_home, Path::new("/home/me/.codex"));
    assert_eq!(places.dir, Path::new("/home/me/.toolshape"));
    assert_eq!(places.cwd, cwd);
    // An empty variable is as unset; each override is taken.
    let places = Places::from_vars(
        vars(&[
            ("HOME", ""),
            ("USERPROFILE", "/u"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("CODEX_HOME", "/cx"),
            ("TOOLSHAPE_HOME", ""),
        ]),
        cwd.clone(),
    )
    .unwrap();
    assert_eq!(places.home, Path::new("/u"));
    assert_eq!(places.config_home, Path::new("/cfg"));
    assert_eq!(places.codex_home, Path::new("/cx"));
    assert_eq!(places.dir, Path::new("/u/.toolshape"));
    assert!(Places::from_vars(vars(&[]), cwd).is_err());
    for (word, client) in [
        ("claude", Client::ClaudeCode),
        ("Claude-Code", Client::ClaudeCode),
        ("claude_code", Client::ClaudeCode),
        ("codex", Client::Codex),
        ("vscode", Client::VsCode),
        ("vs-code", Client::VsCode),
        ("code", Client::VsCode),
        ("cursor", Client::Cursor),
    ] {
        assert_eq!(Client::from_word(word), Some(client), "{word}");
    }
    assert_eq!(Client::from_word("zed"), None);
}

/// The check before writing: an edit that changes anything besides the wrapped entries, or
/// leaves one not starting the proxy, is refused.
#[test]
fn an_edit_that_changes_more_than_its_entries_is_refused() {
    let file = ClientFile {
        path: PathBuf::from("mcp.json"),
        client: None,
        format: Format::Json("mcpServers"),
    };
    let before =
        r#"{"theme": "dark", "mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#;
    let wrapped = |upstream: &str| Wrapped {
        at: vec!["mcpServers".to_owned(), "a".to_owned()],
        upstream: upstream.to_owned(),
        text: None,
        settings: Map::new(),
    };
    let good = r#"{"theme": "dark", "mcpServers": {"a": {"command": "p", "args": ["--upstream", "a", "c.toml"]}, "b": {"command": "y"}}}"#;
    checked(&file, before, good, &[wrapped("a")]).unwrap();
    for (after, record) in [
        // Another setting changed.
        (good.replace("dark", "light"), wrapped("a")),
        // Another entry changed.
        (good.replace("\"y\"", "\"z\""), wrapped("a")),
        // The entry starts the proxy for another upstream.
        (good.to_owned(), wrapped("b")),
        // The entry does not start the proxy.
        (before.to_owned(), wrapped("a")),
    ] {
        let refused = checked(&file, before, &after, &[record]).unwrap_err();
        assert!(
            matches!(refused, WrapError::Unsafe { .. }),
            "{after}: {refused}"
        );
    }
}

/// The same server in two clients' files is one upstream; one that differs in its command,
/// arguments, folder, URL or headers is another.
#[test]
fn the_same_server_twice_is_one_upstream() {
    let root = tempfile::tempdir().unwrap();
    let places = places(root.path());
    let entry = r#"{"command": "npx", "args": ["-y", "m"], "cwd": "/srv"}"#;
    let server = |name: &str, entry: &str| format!("{{\"mcpServers\": {{\"{name}\": {entry}}}}}\n");
    let variants = [
        entry.to_owned(),
        entry.replace("npx", "bunx"),
        entry.replace("\"m\"", "\"n\""),
        entry.replace("/srv", "/tmp"),
        r#"{"url": "http://h/mcp"}"#.to_owned(),
        r#"{"url": "http://h/mcp", "headers": {"A": "b"}}"#.to_owned(),
    ];
    let mut files = vec![];
    for (i, variant) in variants.iter().enumerate() {
        let file = root.path().join(format!("c{i}.json"));
        put(&file, &server("m", variant));
        files.push(file);
    }
    // The first again, in another file: the same upstream.
    let again = root.path().join("again.json");
    put(&again, &server("m", entry));
    files.push(again);
    let mut given = options(&[]);
    given.files = files;
    let report = wrap(&places, &given).unwrap();
    let (config, _) = ProxyConfig::load(places.dir.join("proxy.toml")).unwrap();
    let names: Vec<&str> = config.upstreams.keys().map(String::as_str).collect();
    assert_eq!(names, ["m", "m-2", "m-3", "m-4", "m-5", "m-6"], "{report}");
    assert_eq!(report.matches("(upstream m)").count(), 2, "{report}");
}
