//! The cage compiler: manifest + [`CageInputs`] → [`CagePolicy`], a pure
//! function of a [`FsView`] (ADDENDUM §13; plugin-host.md § Capability →
//! cage policy translation).
//!
//! 1. The install directory (resolved: the host's own path) is bound
//!    read-only at its own path, and is the working directory.
//! 2. `net:` ([`NetMode`]): no grant (`net:[]` or nothing) → no network;
//!    `net:*` → the host's network, shared; any other set of
//!    `net:<host>:<port>` / `net:<host>:*` → filtered: the cage's own
//!    empty network namespace, a generated `/etc/hosts` mapping each
//!    granted name to a stand-in address ([`super::net_grants`]), and
//!    every `connect(2)` decided and made by the host
//!    ([`super::net_filter`]).
//! 3. The base ([`super::base`]): the CA store when there is a network,
//!    the resolver configuration only when it is shared (filtered: the
//!    generated hosts file instead of the host's, and no DNS).
//! 4. `read:fs:P` / `write:fs:P` / `exec:BIN:P` → binds ([`super::grants`]).
//! 5. `exec:` binaries and the command: bound read-only only when no other
//!    bind shows them already (a binary under `/usr` needs nothing).
//! 6. Duplicates and nesting ([`super::merge`]); no mount strictly inside
//!    a read-write bind ([`super::nesting`]: ADDENDUM §16).
//!
//! `kaged:storage:*` grants nothing in the cage: storage is brokered over
//! the JSON-RPC connection.

use std::path::{Path, PathBuf};

use kaged_plugin_protocol::capability::Capability;
use kaged_plugin_protocol::manifest::Manifest;

use super::base::base_mounts;
use super::cgroup::CgroupPolicy;
use super::error::CageError;
use super::fs_view::{FsView, HostFs};
use super::grants::{find_binary, grant_bind, host_path, resolve_for};
use super::inputs::CageInputs;
use super::landlock_layer::LandlockPolicy;
use super::limits::CageLimits;
use super::merge::merge;
use super::net_grants::{stand_ins, NetGrant};
use super::policy::{
    Access, CagePolicy, ExecGrant, Mode, Mount, NetMode, NetPolicy, NET_FILTERED, NET_SHARED,
};
use super::seccomp::SeccompPolicy;
use super::user::CageUser;

/// Why the install directory is bound.
pub const BECAUSE_INSTALL_DIR: &str = "install dir";
/// Why the command is bound.
pub const BECAUSE_COMMAND: &str = "command";

/// Compile the cage of `manifest` against the real filesystem.
pub fn compile(manifest: &Manifest, inputs: &CageInputs) -> Result<CagePolicy, CageError> {
    compile_with(manifest, inputs, &HostFs)
}

/// The manifest's capabilities, parsed (the one typed model).
fn capabilities(manifest: &Manifest) -> Result<Vec<Capability>, CageError> {
    manifest
        .capabilities
        .iter()
        .map(|e| {
            e.capability().map_err(|err| CageError::BadCapability {
                entry: e.canonical(),
                message: err.message,
            })
        })
        .collect()
}

fn net_policy(caps: &[Capability], notes: &mut Vec<String>) -> NetPolicy {
    let mut grants: Vec<String> = caps
        .iter()
        .filter_map(|c| match c {
            Capability::NetAll => Some("*".to_string()),
            Capability::Net { .. } => c.to_string().strip_prefix("net:").map(str::to_string),
            _ => None,
        })
        .collect();
    grants.sort();
    grants.dedup();
    if grants.is_empty() {
        return NetPolicy {
            mode: NetMode::None,
            grants,
            filtering: None,
            stand_ins: Vec::new(),
        };
    }
    if caps.contains(&Capability::NetNone) {
        notes.push("`net:[]` is listed with network grants: the grants win".to_string());
    }
    if caps.contains(&Capability::NetAll) {
        if grants.len() > 1 {
            notes.push("`net:*` is listed with other network grants: `net:*` wins".to_string());
        }
        return NetPolicy {
            mode: NetMode::Shared,
            grants,
            filtering: Some(NET_SHARED.to_string()),
            stand_ins: Vec::new(),
        };
    }
    let parsed: Vec<NetGrant> = grants.iter().filter_map(|g| NetGrant::parse(g)).collect();
    NetPolicy {
        mode: NetMode::Filtered,
        stand_ins: stand_ins(&parsed),
        grants,
        filtering: Some(NET_FILTERED.to_string()),
    }
}

/// Compile the cage of `manifest` against `fs`.
pub fn compile_with(
    manifest: &Manifest,
    inputs: &CageInputs,
    fs: &dyn FsView,
) -> Result<CagePolicy, CageError> {
    let install = resolve_for(fs, BECAUSE_INSTALL_DIR, &inputs.install_dir)?;
    if !install.exists || !install.is_dir {
        return Err(CageError::InstallDir {
            dir: inputs.install_dir.clone(),
            why: "it is not an existing directory".to_string(),
        });
    }
    let caps = capabilities(manifest)?;
    let mut notes = Vec::new();
    let net = net_policy(&caps, &mut notes);
    let mut mounts = base_mounts(fs, net.mode)?;
    mounts.push(Mount::Bind {
        source: install.path.clone(),
        dest: install.path.clone(),
        mode: Mode::Ro,
        missing: false,
        because: vec![BECAUSE_INSTALL_DIR.to_string()],
    });
    let mut exec = Vec::new();
    for cap in &caps {
        let text = cap.to_string();
        let (raw, mode) = match cap {
            Capability::ReadFs(p) => (p, Mode::Ro),
            Capability::WriteFs(p) | Capability::Exec { path: p, .. } => (p, Mode::Rw),
            _ => continue,
        };
        let declared = host_path(fs, &text, raw, inputs)?;
        mounts.push(grant_bind(fs, &text, declared.clone(), mode)?);
        if let Capability::Exec { binary, .. } = cap {
            exec.push(ExecGrant {
                capability: text,
                binary: binary.clone(),
                binary_path: find_binary(fs, &cap.to_string(), binary)?,
                workdir: declared,
            });
        }
    }
    let reachable = net.mode != NetMode::None;
    let user = CageUser::for_plugin(&manifest.name, inputs.host_uid, inputs.ids);
    let mut policy = CagePolicy {
        mounts: merge(mounts),
        net,
        exec,
        chdir: install.path,
        user,
        env: inputs.env.clone(),
        remount_ro: Vec::new(),
        limits: CageLimits::for_user(&user),
        state: "ephemeral".to_string(),
        seccomp: SeccompPolicy::default_profile(),
        cgroup: CgroupPolicy::new(inputs.cgroup.clone()),
        landlock: LandlockPolicy::compile(&caps, reachable, inputs.landlock),
        notes,
    };
    add_executables(&mut policy, fs, inputs)?;
    seal_roots(&mut policy, fs, inputs);
    super::nesting::check_policy(&policy.mounts)?;
    policy.remount_ro = remounts(&policy.mounts);
    policy
        .landlock
        .set_fs(super::landlock_rules::fs_rules(&policy.mounts));
    policy.notes.extend(missing_notes(&policy.mounts));
    if !policy.exec.is_empty() {
        policy.notes.push(
            "exec: the cage cannot hold a binary to its working directory; that directory \
             is bound read-write"
                .to_string(),
        );
    }
    Ok(policy)
}

/// Seal the config and project roots that fall inside a writable tmpfs
/// of the cage ([`Mount::Sealed`]): what the plugin writes there without
/// a grant fails instead of being silently lost.
fn seal_roots(policy: &mut CagePolicy, fs: &dyn FsView, inputs: &CageInputs) {
    let roots = [&inputs.config_root, &inputs.project_root];
    let mut sealed = Vec::new();
    for root in roots.into_iter().flatten() {
        let Ok(r) = super::grants::resolve_for(fs, "root", root) else {
            continue;
        };
        if r.exists && policy.access(&r.path) == Access::Scratch {
            sealed.push(Mount::Sealed { dest: r.path });
        }
    }
    if !sealed.is_empty() {
        let mut all = std::mem::take(&mut policy.mounts);
        all.extend(sealed);
        policy.mounts = merge(all);
    }
}

/// Bind the `exec:` binaries and the command that no bind shows yet.
fn add_executables(
    policy: &mut CagePolicy,
    fs: &dyn FsView,
    inputs: &CageInputs,
) -> Result<(), CageError> {
    let mut extra = Vec::new();
    for g in &policy.exec {
        match &g.binary_path {
            None => policy.notes.push(format!(
                "`{}`: `{}` was not found (absolute, or on PATH); nothing bound for it",
                g.capability, g.binary
            )),
            Some(bin) if hidden(policy, bin) => {
                extra.push(grant_bind(fs, &g.capability, bin.clone(), Mode::Ro)?);
            }
            Some(_) => {}
        }
    }
    if let Some(cmd) = &inputs.command {
        let cmd = super::resolve::normalize(cmd);
        if hidden(policy, &cmd) {
            let r = resolve_for(fs, BECAUSE_COMMAND, &cmd)?;
            if r.exists {
                extra.push(Mount::Bind {
                    source: r.path,
                    dest: cmd,
                    mode: Mode::Ro,
                    missing: false,
                    because: vec![BECAUSE_COMMAND.to_string()],
                });
            } else {
                policy
                    .notes
                    .push(format!("the command {} does not exist", cmd.display()));
            }
        }
    }
    if !extra.is_empty() {
        let mut all = std::mem::take(&mut policy.mounts);
        all.extend(extra);
        policy.mounts = merge(all);
    }
    Ok(())
}

/// What is remounted read-only last: the masked directories, `/dev`, and
/// the cage root `/` (ADDENDUM §15: a write outside `/tmp`, `/dev/shm` and
/// the grants fails with `EROFS` instead of vanishing at exit).
fn remounts(mounts: &[Mount]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = mounts
        .iter()
        .filter_map(|m| match m {
            Mount::Masked { dest, dir: true } | Mount::Sealed { dest } => Some(dest.clone()),
            _ => None,
        })
        .collect();
    out.push(PathBuf::from("/dev"));
    out.push(PathBuf::from("/"));
    out
}

fn hidden(policy: &CagePolicy, path: &Path) -> bool {
    matches!(policy.access(path), Access::Hidden | Access::Scratch)
}

fn missing_notes(mounts: &[Mount]) -> Vec<String> {
    mounts
        .iter()
        .filter_map(|m| match m {
            Mount::Bind {
                missing: true,
                dest,
                because,
                ..
            } => Some(format!(
                "{} ({}) does not exist now: bound with the -try form, absent in the cage \
                 unless created before the plugin starts",
                dest.display(),
                because.join(", ")
            )),
            _ => None,
        })
        .collect()
}
