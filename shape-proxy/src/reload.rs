//! The configuration reloaded while the proxy runs: its file and the shaping configuration
//! it names are read again every second, and when either changed the shaping configuration
//! (budgets, projections, views, rules, client profiles) is checked, the presets applied
//! again, and every call from then on shaped by it (a walk begun before goes on from its
//! stored result); clients are told the tools changed, since their output schemas follow it.
//! A bad edit keeps the running configuration and says why, once per edit. An upstream that
//! lists its tools after the configuration was prepared (it started late, started again, or
//! said its tools changed) has the configuration prepared again the same way, so its preset
//! applies without an edit. What `[proxy]`
//! and `[upstreams]` say (processes, addresses, credentials, stores) takes effect when the
//! proxy starts again: a change there is named as such.

use crate::{Proxy, ProxyConfig};
use std::path::Path;
use std::time::Duration;
use toolshape::handle::HandleStore;
use toolshape::mcp::Harness;

/// How often the files are read.
pub const EVERY: Duration = Duration::from_secs(1);

/// What a change of the files came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Nothing changed yet.
    Unchanged,
    /// Calls are shaped by the configuration read; each sentence says something of it (what
    /// a preset shapes, what takes effect at the next start, a tool no upstream lists).
    Reloaded(Vec<String>),
    /// The running configuration is kept: why.
    Kept(String),
}

/// The bytes of the proxy's configuration file and of the shaping configuration it names,
/// as they are now (an unreadable file reads as its error, so a change to it is seen too).
fn contents(path: &Path) -> Vec<Result<Vec<u8>, String>> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| e.to_string());
    let own = read(path);
    let shape = own
        .as_ref()
        .ok()
        .and_then(|b| toml::from_str::<ProxyConfig>(&String::from_utf8_lossy(b)).ok())
        .and_then(|c| c.proxy.shape);
    let mut out = vec![own];
    if let Some(shape) = shape {
        out.push(read(&path.parent().unwrap_or(Path::new(".")).join(shape)));
    }
    out
}

/// Reads the configuration again and, when it can be used, shapes calls by it.
pub async fn reload_once<S: HandleStore + 'static>(
    harness: &Harness<Proxy, S>,
    running: &ProxyConfig,
) -> Outcome {
    let Some(path) = &running.source else {
        return Outcome::Kept("the configuration was not read from a file".to_owned());
    };
    // Each error names the file it is about.
    let kept = |why: String| Outcome::Kept(format!("{why}; the running configuration is kept"));
    let (mut config, shape) = match ProxyConfig::load(path) {
        Ok(loaded) => loaded,
        Err(e) => return kept(e.to_string()),
    };
    if let Some(only) = &running.proxy.only
        && let Err(e) = config.only(only)
    {
        return kept(e.to_string());
    }
    let proxy = harness.inner();
    let mut said = Vec::new();
    // `--strict` on the command line is the running configuration's, not the file's.
    config.proxy.strict |= running.proxy.strict;
    if config.upstreams != running.upstreams || config.proxy != running.proxy {
        said.push(format!(
            "{}: what [proxy] and [upstreams] say takes effect when the proxy starts again",
            path.display()
        ));
    }
    let ready = match proxy.ready(&config, shape).await {
        Ok(ready) => ready,
        Err(crate::ProxyError::Unlisted(unlisted)) => {
            return kept(format!(
                "{}: --strict: {}",
                path.display(),
                unlisted.join("; ")
            ));
        }
        Err(e) => return kept(e.to_string()),
    };
    said.extend(ready.unlisted);
    said.extend(ready.presets);
    if let Err(e) = harness.reload(ready.shape) {
        return kept(e.to_string());
    }
    proxy.tools_changed().await;
    Outcome::Reloaded(said)
}

/// Watches `running`'s files every `every` while the proxy runs, reloading on each change of
/// them or of an upstream's tool list ([`reload_once`]) and logging what came of it; the
/// receiver sees each outcome. A configuration not read from a file is not watched (nor
/// prepared again for an upstream that lists late).
pub fn watch<S: HandleStore + 'static>(
    harness: Harness<Proxy, S>,
    running: ProxyConfig,
    every: Duration,
) -> tokio::sync::watch::Receiver<Outcome> {
    let (tell, outcomes) = tokio::sync::watch::channel(Outcome::Unchanged);
    let Some(path) = running.source.clone() else {
        return outcomes;
    };
    tokio::spawn(async move {
        let mut last = contents(&path);
        loop {
            tokio::time::sleep(every).await;
            let now = contents(&path);
            let edited = now != last;
            // An upstream that answered after the configuration was prepared (started late,
            // restarted, or told the proxy its tools changed): its preset is chosen and
            // checked again.
            let relisted = harness.inner().relisted();
            if !edited && !relisted {
                continue;
            }
            last = now;
            let outcome = reload_once(&harness, &running).await;
            match &outcome {
                Outcome::Reloaded(said) => {
                    match edited {
                        true => tracing::info!("{}: reloaded", path.display()),
                        false => tracing::info!(
                            "an upstream listed its tools: the configuration prepared again"
                        ),
                    }
                    for sentence in said {
                        tracing::info!("{sentence}");
                    }
                }
                Outcome::Kept(why) => tracing::warn!("{why}"),
                Outcome::Unchanged => {}
            }
            // Nobody may listen: the watch goes on for the log.
            let _ = tell.send(outcome);
        }
    });
    outcomes
}

#[cfg(test)]
mod tests;
