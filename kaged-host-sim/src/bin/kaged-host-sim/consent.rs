//! The operator's consent: asked on the terminal at install, asked again by
//! `plugin consent NAME` for what an installed copy asks now, and shown by
//! `plugin list` (a plugin whose manifest asks more than was consented
//! does not start: ADDENDUM §16).
//!
//! ```text
//! $ kaged-host-sim plugin list --store ~/.kaged
//! echo  0.1.0  disabled (capability overreach: net:*, read:fs:/root)  local  /src/echo  sha256:3f9c0a1b2c3d
//!   → re-consent with: kaged-host-sim plugin consent echo --store ~/.kaged
//! $ kaged-host-sim plugin consent echo --store ~/.kaged
//! Plugin echo 0.1.0 is installed; its manifest (sha256 ...) asks:
//!
//! Capability changes since consent:
//!   + net:*    (NEW)
//!   + read:fs:/root    (NEW)
//! Consent to what echo asks? [y/N] y
//! ✓ Consented: echo may start with net:[], net:*, read:fs:/root
//! ```

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use kaged_host_engine::{InstallError, InstallPlan, InstalledPlugin, PluginStore};
use kaged_host_sim::daemon::link::{DaemonLink, LinkError};

use super::{one_line, CliError};

/// The consent callback of an install or a re-consent: print the plan,
/// then consent with `--yes` or ask on the terminal; `no_terminal` is set
/// when there was no terminal to ask on (the caller says so and refuses).
pub(super) fn asker(yes: bool, no_terminal: &mut bool) -> impl FnMut(&InstallPlan) -> bool + '_ {
    move |plan| {
        kaged_host_core::out!("{}", plan.render());
        if yes {
            return true;
        }
        ask(plan).unwrap_or_else(|| {
            *no_terminal = true;
            false
        })
    }
}

/// Ask on the terminal; `None` when there is no terminal to ask.
pub(super) fn ask(plan: &InstallPlan) -> Option<bool> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    // `out!` flushes: the question shows before the answer is read.
    kaged_host_core::out!("{} [y/N] ", plan.question());
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok()?;
    Some(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// `plugin consent NAME`: show what the installed copy asks beyond the
/// recorded consent, record it on consent (`--yes`, or `y` on a
/// terminal), then enable the plugin in a running daemon that had refused
/// to start it.
pub(super) async fn reconsent(
    store: &PluginStore,
    name: &str,
    yes: bool,
) -> Result<ExitCode, CliError> {
    let mut no_terminal = false;
    let result = store.consent(name, asker(yes, &mut no_terminal));
    let entry = match result {
        Ok(entry) => entry,
        Err(InstallError::Declined { .. }) if no_terminal => {
            return Err(CliError::Usage(
                "consent needed: stdin is not a terminal, pass --yes to consent without asking"
                    .into(),
            ))
        }
        Err(e) => return Err(CliError::Failed(one_line("consent", &e))),
    };
    let caps = match entry.capabilities.is_empty() {
        true => "no capability".to_string(),
        false => entry.capabilities.join(", "),
    };
    kaged_host_core::outln!("✓ Consented: {name} may start with {caps}");
    let Some(link) = DaemonLink::read(store.root()) else {
        return Ok(ExitCode::SUCCESS);
    };
    match link.enable_if_refused(name).await {
        Ok(None) | Err(LinkError::Unreachable { .. }) => {}
        Ok(Some(state)) => kaged_host_core::outln!("  The running daemon had refused it: {state}"),
        Err(e) => {
            return Err(CliError::Failed(one_line(
                &format!("consented, but the running daemon did not enable {name}"),
                &e,
            )))
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `plugin list`'s rows for `p`: `name version state scope source digest`,
/// the state saying why a plugin does not start (`disabled (capability
/// overreach: net:*, ...)`), then the command that re-consents.
pub(super) fn list_rows(store: &PluginStore, p: &InstalledPlugin) -> Vec<String> {
    let scope = if p.local { "local" } else { "project" };
    let digest = p
        .manifest_sha256
        .as_deref()
        .map_or_else(|| "sha256:-".to_string(), |d| format!("sha256:{:.12}", d));
    let check = store.check_consent(&p.name, None);
    let mut hint = None;
    // An installed copy whose manifest no longer validates never starts
    // (ADDENDUM §16: `disabled (invalid manifest)`), whatever was consented.
    let validation = kaged_host_core::validate_dir(&store.plugin_dir(&p.name));
    let state = match &check {
        _ if validation.has_errors() => {
            let first = validation
                .errors()
                .next()
                .map(ToString::to_string)
                .unwrap_or_default();
            hint = Some(format!("  → {first}"));
            "disabled (invalid manifest)".to_string()
        }
        Ok(c) if !c.over_store.is_empty() => {
            let caps: Vec<&str> = c.over_store.iter().map(|g| g.capability.as_str()).collect();
            format!(
                "disabled (grant reaches the plugin store: {})",
                caps.join(", ")
            )
        }
        Ok(c) if c.refused() => {
            hint = Some(format!("  → re-consent with: {}", c.reconsent));
            format!("disabled (capability overreach: {})", c.over.join(", "))
        }
        Ok(c) if c.manifest_changed() => format!(
            "{} (manifest changed since consent, nothing new asked)",
            enabled(p)
        ),
        Ok(_) => enabled(p).to_string(),
        Err(e) => format!("disabled ({})", one_line("consent unchecked", e)),
    };
    let mut rows = vec![format!(
        "{}\t{}\t{state}\t{scope}\t{}\t{digest}",
        p.name, p.installed, p.source
    )];
    rows.extend(hint);
    rows
}

fn enabled(p: &InstalledPlugin) -> &'static str {
    if p.enabled {
        "enabled"
    } else {
        "disabled"
    }
}
