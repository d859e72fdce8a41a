//! The cage's second layer: Landlock (issue 45). The spawner restricts
//! bwrap's process (and so everything the cage runs) with a Landlock
//! domain before it executes bwrap, so a mistake in the mounts or the
//! seccomp table is not the only wall:
//!
//! - **TCP connect by port** (Landlock ABI ≥ 4, Linux 6.7): when every
//!   `net:` grant names a port, connecting to any other TCP port fails
//!   with `EACCES`, on every address. A grant with `*` as its port
//!   (`net:HOST:*`, `net:*`) leaves TCP ports unrestricted. In a filtered
//!   cage (`net:HOST:PORT`: [`super::net_filter`]) this is the second
//!   wall: the plugin's own connects never leave the cage's network
//!   namespace (the host makes the granted ones, outside this domain), so
//!   the rule holds the cage's own loopback to the granted ports too.
//! - **Scopes** (ABI ≥ 6, Linux 6.12): abstract unix sockets made outside
//!   the cage cannot be connected to (what keeps the host's from a shared
//!   network, `net:*`; a filtered one does not show them at all), and no
//!   signal reaches a process outside the cage.
//!
//! The filesystem rights are not Landlock's here: a domain that handles
//! them forbids `mount(2)`, which bwrap needs after the domain is in
//! force. Best effort: what this kernel cannot enforce is said in the cage
//! description and the report's cage line ([`LandlockPolicy::line`]).
//! Addresses and UDP are not Landlock's (it has no address rule): the
//! network filter enforces the host part of `net:HOST:PORT`.

use std::sync::OnceLock;

use kaged_plugin_protocol::capability::Capability;
use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use serde::{Deserialize, Serialize};

use super::landlock_fs::FsRule;

/// What this kernel's Landlock can enforce of the cage's layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LandlockSupport {
    /// Filesystem rules (ABI ≥ 1), entered in the cage (`cage::init`).
    #[serde(default)]
    pub fs: bool,
    /// TCP connect rules (ABI ≥ 4).
    pub tcp: bool,
    /// Abstract unix socket and signal scopes (ABI ≥ 6).
    pub scopes: bool,
}

impl LandlockSupport {
    /// This kernel's, probed once per process (a ruleset created with each
    /// feature as a hard requirement, then dropped: nothing is restricted).
    pub fn detect() -> LandlockSupport {
        static SUPPORT: OnceLock<LandlockSupport> = OnceLock::new();
        *SUPPORT.get_or_init(|| LandlockSupport {
            fs: Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(ABI::V1))
                .and_then(Ruleset::create)
                .is_ok(),
            tcp: Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessNet::ConnectTcp)
                .and_then(Ruleset::create)
                .is_ok(),
            scopes: Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .scope(Scope::from_all(ABI::V6))
                .and_then(Ruleset::create)
                .is_ok(),
        })
    }
}

/// The Landlock layer of a cage: what it asks, and what is enforced.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LandlockPolicy {
    /// The TCP ports the plugin may connect to (`None`: not restricted by
    /// port, because the cage has no network or a grant allows any port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_connect: Option<Vec<u16>>,
    /// Whether the TCP rule is in force (this kernel has it).
    #[serde(default)]
    pub tcp_enforced: bool,
    /// Whether abstract unix sockets and signals are scoped to the cage.
    #[serde(default)]
    pub scoped: bool,
    /// The filesystem rules, entered in the cage by `cage::init`
    /// ([`super::landlock_fs`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fs: Vec<FsRule>,
    /// Whether they are in force (this kernel has Landlock and the cage
    /// can run the init).
    #[serde(default)]
    pub fs_enforced: bool,
    /// What is asked and not enforced here, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_enforced: Vec<String>,
}

impl LandlockPolicy {
    /// The layer for `caps` (the manifest's, parsed), for a cage with a
    /// network (shared or filtered) or none, on a kernel with `support`.
    pub fn compile(caps: &[Capability], network: bool, support: LandlockSupport) -> Self {
        let mut ports: Vec<u16> = Vec::new();
        let mut any_port = false;
        for c in caps {
            match c {
                Capability::NetAll => any_port = true,
                Capability::Net { port: Some(p), .. } => ports.push(*p),
                Capability::Net { port: None, .. } => any_port = true,
                _ => {}
            }
        }
        ports.sort_unstable();
        ports.dedup();
        let tcp_connect = (network && !any_port && !ports.is_empty()).then_some(ports);
        let mut not_enforced = Vec::new();
        if tcp_connect.is_some() && !support.tcp {
            not_enforced.push(
                "tcp ports: this kernel's Landlock has no network rules (ABI < 4, Linux < 6.7)"
                    .to_string(),
            );
        }
        if !support.scopes {
            not_enforced.push(
                "abstract unix sockets and signals: this kernel's Landlock has no scopes \
                 (ABI < 6, Linux < 6.12)"
                    .to_string(),
            );
        }
        if !support.fs {
            not_enforced.push(
                "filesystem rules: this kernel has no Landlock (ABI < 1, Linux < 5.13)".to_string(),
            );
        }
        LandlockPolicy {
            tcp_enforced: tcp_connect.is_some() && support.tcp,
            tcp_connect,
            scoped: support.scopes,
            fs: Vec::new(),
            fs_enforced: support.fs,
            not_enforced,
        }
    }

    /// The filesystem rules of the cage (`cage::landlock_rules::fs_rules`
    /// of its final mounts).
    pub fn set_fs(&mut self, rules: Vec<FsRule>) {
        self.fs = rules;
    }

    /// The filesystem rules cannot be entered after all (the init is not
    /// there): said, not claimed.
    pub fn fs_not_enforced(&mut self, why: String) {
        if self.fs_enforced {
            self.fs_enforced = false;
            self.not_enforced.push(format!("filesystem rules: {why}"));
        }
    }

    /// Whether anything is to be enforced at spawn.
    pub fn enforces_anything(&self) -> bool {
        self.tcp_enforced || self.scoped
    }

    /// The TCP ports in force, listed (`443, 5432`); `None` when TCP is
    /// not restricted here.
    pub fn enforced_ports(&self) -> Option<String> {
        let ports = self.tcp_connect.as_ref().filter(|_| self.tcp_enforced)?;
        let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
        Some(ports.join(", "))
    }

    /// In brief, for the cage line: `tcp 443, 5432; scoped`, `scoped`,
    /// `unavailable`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if self.fs_enforced {
            parts.push("fs".to_string());
        }
        if let Some(ports) = self.enforced_ports() {
            parts.push(format!("tcp {ports}"));
        }
        if self.scoped {
            parts.push("scoped".to_string());
        }
        if parts.is_empty() {
            "unavailable".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// The ruleset to restrict bwrap's process with, created now (before
    /// the fork: the child only calls `restrict_self`), or `None` when
    /// nothing is enforced.
    pub fn ruleset(&self) -> Result<Option<RulesetCreated>, landlock::RulesetError> {
        if !self.enforces_anything() {
            return Ok(None);
        }
        let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
        if self.tcp_enforced {
            ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?;
        }
        if self.scoped {
            ruleset = ruleset.scope(Scope::from_all(ABI::V6))?;
        }
        let mut created = ruleset.create()?;
        if let (Some(ports), true) = (&self.tcp_connect, self.tcp_enforced) {
            for port in ports {
                created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
            }
        }
        Ok(Some(created))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(list: &[&str]) -> Vec<Capability> {
        list.iter().map(|c| Capability::parse(c).unwrap()).collect()
    }

    const ALL: LandlockSupport = LandlockSupport {
        fs: true,
        tcp: true,
        scopes: true,
    };

    #[test]
    fn ports_are_restricted_only_when_every_grant_names_one() {
        let p = LandlockPolicy::compile(&caps(&["net:a.example:443", "net:b:5432"]), true, ALL);
        assert_eq!(p.tcp_connect, Some(vec![443, 5432]));
        assert_eq!(p.line(), "fs; tcp 443, 5432; scoped");
        for any in [&["net:a:443", "net:b:*"][..], &["net:*"][..]] {
            let p = LandlockPolicy::compile(&caps(any), true, ALL);
            assert_eq!(p.tcp_connect, None, "{any:?}");
            assert_eq!(p.line(), "fs; scoped");
        }
        let p = LandlockPolicy::compile(&caps(&["net:[]"]), false, ALL);
        assert_eq!(p.tcp_connect, None);
    }

    #[test]
    fn what_the_kernel_lacks_is_said() {
        let none = LandlockSupport::default();
        let p = LandlockPolicy::compile(&caps(&["net:a:443"]), true, none);
        assert!(!p.enforces_anything());
        assert_eq!(p.line(), "unavailable");
        assert_eq!(p.not_enforced.len(), 3, "{:?}", p.not_enforced);
    }
}
