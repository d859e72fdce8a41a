//! Who the plugin runs as (ADDENDUM §16: "the plugin never runs as the
//! host's root").
//!
//! - **The host runs as root**: each plugin gets its own unprivileged uid
//!   and gid, `first + FNV-1a(name) % count` from a range
//!   ([`PluginIds`], [`IDS_ENV`] to move it), the same at every start so
//!   that what it wrote last time is still its own. The spawner drops to it
//!   before it runs bwrap (`cage::stage`), so per-user kernel limits
//!   (inotify instances, `RLIMIT_NPROC`, keys) are the plugin's own and a
//!   setuid file it could make would elevate nobody.
//! - **The host is an ordinary user**: bwrap runs as that user and maps it
//!   into the cage; there is no other uid to give (that would need
//!   `newuidmap` and the host's subordinate ids). The cage description says
//!   which applies.
//!
//! ```
//! use kaged_host_core::cage::PluginIds;
//!
//! let ids = PluginIds::DEFAULT;
//! let a = ids.id_for("memory-markdown");
//! assert!(a >= ids.first && a < ids.first + ids.count);
//! assert_eq!(a, ids.id_for("memory-markdown"), "the same at every start");
//! assert_eq!(PluginIds::parse("3000000:1000").unwrap().first, 3_000_000);
//! ```

use serde::{Deserialize, Serialize};

/// The environment variable that moves the plugin id range:
/// `FIRST:COUNT` (decimal).
pub const IDS_ENV: &str = "KAGED_PLUGIN_IDS";

/// The range of uids (and gids) plugins get when the host runs as root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginIds {
    /// The first id.
    pub first: u32,
    /// How many ids.
    pub count: u32,
}

/// The largest id a range may reach: bwrap 0.8 cannot map a uid above
/// `i32::MAX` into its user namespace (`setting up uid map: Invalid
/// argument`, checked on this machine kind).
pub const MAX_ID: u32 = i32::MAX as u32;

impl PluginIds {
    /// 1 900 000 000 + 65 536: above systemd's container range
    /// (524 288..1 879 048 191), below its foreign range and bwrap's limit.
    pub const DEFAULT: PluginIds = PluginIds {
        first: 1_900_000_000,
        count: 65_536,
    };

    /// `FIRST:COUNT`; the range must be non-empty, above 65 535 (no system
    /// or login user) and end at or below [`MAX_ID`].
    pub fn parse(text: &str) -> Result<PluginIds, String> {
        let (first, count) = text
            .split_once(':')
            .ok_or_else(|| format!("`{text}` is not FIRST:COUNT"))?;
        let num = |s: &str, what: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|e| format!("{what} `{s}` of `{text}`: {e}"))
        };
        let ids = PluginIds {
            first: num(first, "FIRST")?,
            count: num(count, "COUNT")?,
        };
        if ids.count == 0 {
            return Err(format!("`{text}`: COUNT must be at least 1"));
        }
        if ids.first < 65_536 {
            return Err(format!(
                "`{text}`: FIRST must be at least 65536 (no system or login user)"
            ));
        }
        if u64::from(ids.first) + u64::from(ids.count) - 1 > u64::from(MAX_ID) {
            return Err(format!(
                "`{text}`: the range must end at or below {MAX_ID} (bwrap cannot map higher ids)"
            ));
        }
        Ok(ids)
    }

    /// [`IDS_ENV`] when set, else [`PluginIds::DEFAULT`].
    pub fn from_env() -> Result<PluginIds, String> {
        match std::env::var(IDS_ENV) {
            Ok(text) if !text.is_empty() => {
                PluginIds::parse(&text).map_err(|e| format!("${IDS_ENV}: {e}"))
            }
            _ => Ok(PluginIds::DEFAULT),
        }
    }

    /// The id of the plugin called `name`: `first + FNV-1a(name) % count`.
    pub fn id_for(&self, name: &str) -> u32 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        // `count` ≥ 1 and the sum ≤ MAX_ID (parse), so this fits.
        self.first + (hash % u64::from(self.count.max(1))) as u32
    }
}

/// Who the plugin runs as, in a cage policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CageUser {
    /// Its own unprivileged uid and gid (the host runs as root).
    Own {
        /// The uid (also the gid).
        id: u32,
        /// The range it was taken from.
        range: PluginIds,
    },
    /// The host's own uid (the host is an ordinary user).
    Host {
        /// That uid.
        uid: u32,
    },
}

impl Default for CageUser {
    fn default() -> Self {
        CageUser::Host { uid: 0 }
    }
}

impl CageUser {
    /// The user of plugin `name` on a host running as `host_uid`.
    pub fn for_plugin(name: &str, host_uid: u32, ids: PluginIds) -> CageUser {
        if host_uid == 0 {
            CageUser::Own {
                id: ids.id_for(name),
                range: ids,
            }
        } else {
            CageUser::Host { uid: host_uid }
        }
    }

    /// The id the spawner drops to, when it drops.
    pub fn own_id(&self) -> Option<u32> {
        match self {
            CageUser::Own { id, .. } => Some(*id),
            CageUser::Host { .. } => None,
        }
    }

    /// In brief, for the cage line: `uid 1900012345` or `host uid 1000`.
    pub fn line(&self) -> String {
        match self {
            CageUser::Own { id, .. } => format!("uid {id}"),
            CageUser::Host { uid } => format!("host uid {uid}"),
        }
    }

    /// In full, for `kaged-host-sim cage`.
    pub fn describe(&self) -> String {
        match self {
            CageUser::Own { id, range } => format!(
                "uid {id}, gid {id}: the plugin's own (from {}+{}, ${IDS_ENV}); never the \
                 host's root; its grants are mapped to it (idmapped mounts), so it reads and \
                 writes what it was granted and what it writes belongs, on disk, to the \
                 grant's owner",
                range.first, range.count
            ),
            CageUser::Host { uid } => format!(
                "uid {uid}: the host's own (an ordinary user; bwrap maps it into the cage); \
                 per-user limits are shared with the host's other processes of that user"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_checked_where_it_is_read() {
        assert!(PluginIds::parse("100000").is_err());
        assert!(PluginIds::parse("100000:0").is_err());
        assert!(PluginIds::parse("1000:10").is_err());
        assert!(PluginIds::parse("2147483600:100").is_err());
        assert!(PluginIds::parse("x:1").is_err());
        let ids = PluginIds::parse("2147483548:100").unwrap();
        assert_eq!(ids.first + ids.count - 1, MAX_ID);
    }

    #[test]
    fn the_root_host_gives_each_plugin_an_id_of_the_range() {
        let ids = PluginIds::parse("200000:10").unwrap();
        for name in ["a", "echo", "memory-markdown", ""] {
            let id = CageUser::for_plugin(name, 0, ids).own_id().unwrap();
            assert!((200_000..200_010).contains(&id), "{name}: {id}");
        }
        assert_eq!(
            CageUser::for_plugin("a", 1000, ids),
            CageUser::Host { uid: 1000 }
        );
    }
}
