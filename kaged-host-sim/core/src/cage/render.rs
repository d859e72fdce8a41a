//! The human form of a [`CagePolicy`]: what the plugin may read, write,
//! reach and run, and what is enforced how (`kaged-host-sim cage DIR`).

use std::fmt::Write;

use super::cgroup::CgroupState;
use super::policy::{CagePolicy, Mode, Mount, NetMode};

impl CagePolicy {
    /// A few lines per section: filesystem, network, exec, environment,
    /// seccomp, cgroup, notes.
    pub fn render(&self) -> String {
        let mut o = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_fs(&mut o);
        let _ = self.write_rest(&mut o);
        o
    }

    fn write_fs(&self, o: &mut String) -> std::fmt::Result {
        writeln!(
            o,
            "filesystem (in order; a later mount covers an earlier one):"
        )?;
        for m in &self.mounts {
            match m {
                Mount::Proc { dest } => {
                    writeln!(o, "  proc     {}  (the cage's own)", dest.display())?
                }
                Mount::Dev { dest } => writeln!(
                    o,
                    "  dev      {}  (null, zero, random, tty...)",
                    dest.display()
                )?,
                Mount::Tmpfs { dest, size } => writeln!(
                    o,
                    "  tmpfs    {}  (empty, writable, gone at exit{})",
                    dest.display(),
                    size.map(|s| format!(", {} MiB", s >> 20))
                        .unwrap_or_default()
                )?,
                Mount::KernelReadOnly { dest } => {
                    writeln!(o, "  ro       {}  (kernel interface)", dest.display())?
                }
                Mount::Masked { dest, .. } => {
                    writeln!(o, "  masked   {}  (kernel interface)", dest.display())?
                }
                Mount::Sealed { dest } => writeln!(
                    o,
                    "  sealed   {}  (empty, read-only: nothing written there without a grant)",
                    dest.display()
                )?,
                Mount::Symlink { target, dest } => {
                    writeln!(o, "  symlink  {} -> {}", dest.display(), target.display())?
                }
                Mount::HostsFile { dest } => writeln!(
                    o,
                    "  ro       {}  (generated: the granted hosts, see network)",
                    dest.display()
                )?,
                Mount::Bind {
                    source,
                    dest,
                    mode,
                    missing,
                    because,
                } => {
                    let mode = match mode {
                        Mode::Ro => "ro",
                        Mode::Rw => "rw",
                    };
                    let from = if source == dest {
                        String::new()
                    } else {
                        format!(" <- {}", source.display())
                    };
                    let missing = if *missing { ", missing now" } else { "" };
                    writeln!(
                        o,
                        "  {mode}       {}{from}  ({}{missing})",
                        dest.display(),
                        because.join(", ")
                    )?;
                }
            }
        }
        let remounts: Vec<String> = self
            .remount_ro
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        writeln!(o, "  then read-only: {}", remounts.join(", "))?;
        writeln!(o, "  cwd and HOME: {} (read-only)", self.chdir.display())
    }

    fn write_rest(&self, o: &mut String) -> std::fmt::Result {
        writeln!(o, "user: {}", self.user.describe())?;
        match self.net.mode {
            NetMode::None => writeln!(o, "network: none (a new namespace, loopback only)")?,
            NetMode::Shared | NetMode::Filtered => {
                let mode = if self.net.mode == NetMode::Shared {
                    "shared"
                } else {
                    "filtered"
                };
                writeln!(o, "network: {mode}, granted {}", self.net.grants.join(", "))?;
                if let Some(f) = &self.net.filtering {
                    writeln!(o, "  {f}")?;
                }
                for s in &self.net.stand_ins {
                    writeln!(o, "  stand-in {} for {}", s.address, s.host)?;
                }
            }
        }
        for g in &self.exec {
            let bin = g
                .binary_path
                .as_ref()
                .map_or_else(|| "not found".to_string(), |p| p.display().to_string());
            writeln!(
                o,
                "exec: {} ({bin}), working dir {} (rw)",
                g.binary,
                g.workdir.display()
            )?;
        }
        let keys: Vec<&str> = self.env.keys().map(String::as_str).collect();
        writeln!(o, "environment: cleared, then {}", keys.join(" "))?;
        writeln!(
            o,
            "seccomp: {} profile, {} for {}",
            self.seccomp.profile,
            self.seccomp.action,
            self.seccomp.denied.join(" ")
        )?;
        for c in &self.seccomp.conditional {
            writeln!(o, "  {c}")?;
        }
        for a in &self.seccomp.also {
            writeln!(o, "  {a}")?;
        }
        let l = &self.limits;
        let rl: Vec<String> = l
            .rlimits
            .iter()
            .map(|r| format!("{} {}", r.name, r.value))
            .collect();
        writeln!(
            o,
            "limits: /tmp {} MiB, /dev/shm {} MiB; {}",
            l.tmp_bytes >> 20,
            l.shm_bytes >> 20,
            rl.join(", ")
        )?;
        for n in &l.not_set {
            writeln!(o, "  not set: {n}")?;
        }
        let w = &self.cgroup.wanted;
        let wanted = format!(
            "memory.max {} MiB, pids.max {}, cpu.weight {} (cpu shares {})",
            w.memory_max_bytes / (1024 * 1024),
            w.pids_max,
            w.cpu_weight,
            w.cpu_shares
        );
        match &self.cgroup.state {
            CgroupState::Unavailable { reason } => {
                writeln!(o, "cgroup: unavailable, no limit applied ({reason})")?;
                writeln!(o, "  wanted: {wanted}")?;
            }
            CgroupState::Available { parent } => {
                writeln!(
                    o,
                    "cgroup: available under {}; not applied yet",
                    parent.display()
                )?;
                writeln!(o, "  wanted: {wanted}")?;
            }
            CgroupState::AvailableV1 { parents } => {
                let under: Vec<String> = parents
                    .iter()
                    .map(|(c, p)| format!("{c} under {}", p.display()))
                    .collect();
                writeln!(
                    o,
                    "cgroup: v1 available ({}); not applied yet",
                    under.join(", ")
                )?;
                writeln!(o, "  wanted: {wanted}")?;
            }
            CgroupState::Applied {
                path,
                also,
                applied,
                failed,
            } => {
                writeln!(o, "cgroup: {}", path.display())?;
                for p in also {
                    writeln!(o, "  also {}", p.display())?;
                }
                writeln!(o, "  applied: {applied:?}")?;
                for f in failed {
                    writeln!(o, "  not applied: {f}")?;
                }
            }
        }
        let l = &self.landlock;
        writeln!(o, "landlock: {}", l.line())?;
        if l.fs_enforced {
            writeln!(
                o,
                "  files (entered in the cage by the host's executable, {}, before the \
                 command; EACCES otherwise):",
                super::init::INIT_DEST
            )?;
            for r in &l.fs {
                let access = serde_json::to_value(r.access).unwrap_or_default();
                writeln!(
                    o,
                    "    {:<6} {}",
                    access.as_str().unwrap_or("?"),
                    r.path.display()
                )?;
            }
        }
        if let Some(ports) = l.enforced_ports() {
            writeln!(o, "  tcp connect: ports {ports} only (EACCES otherwise)")?;
        }
        if l.scoped {
            writeln!(
                o,
                "  abstract unix sockets and signals: scoped to the cage (EPERM outside)"
            )?;
        }
        for n in &l.not_enforced {
            writeln!(o, "  not enforced: {n}")?;
        }
        writeln!(o, "state: {}", self.state)?;
        for n in &self.notes {
            writeln!(o, "note: {n}")?;
        }
        Ok(())
    }
}
