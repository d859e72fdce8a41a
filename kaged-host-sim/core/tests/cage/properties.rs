//! Properties of the compiler over arbitrary sets of grants: the argv is
//! deterministic and independent of the order of the capabilities, every
//! rw bind comes after each ro bind containing it, `/` and `/etc` are never
//! bound, `--share-net` appears iff `net:*` is granted and the generated
//! hosts file iff another network grant is (a filtered network), what a path
//! is inside the cage is what its most specific grant says, and a grant
//! strictly inside a writable grant is refused (ADDENDUM §16).

use std::path::{Path, PathBuf};

use kaged_host_core::cage::{Access, CageError};
use proptest::prelude::*;

use crate::model::{argv, binds, compile};

/// Grantable paths of the in-memory host: existing, missing, nested, under
/// the tmpfs, and one whose symlink leaves it.
const PATHS: [&str; 10] = [
    "/opt/data",
    "/opt/data/sub",
    "/opt/data/sub/deep",
    "/opt/data/file",
    "/opt/missing",
    "/opt/data/missing",
    "/srv/secret",
    "/tmp/t",
    "/home/op",
    "/opt/escape",
];
const NETS: [&str; 5] = [
    "net:[]",
    "net:api.example.com:443",
    "net:localhost:*",
    "net:*",
    "kaged:storage:read",
];
const EXISTING: [&str; 6] = [
    "/opt/data",
    "/opt/data/sub",
    "/opt/data/file",
    "/srv/secret",
    "/home/op",
    "/opt/escape",
];

fn grant() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..PATHS.len(), any::<bool>()).prop_map(|(i, rw)| {
            format!("{}:fs:{}", if rw { "write" } else { "read" }, PATHS[i])
        }),
        (0..PATHS.len()).prop_map(|i| format!("exec:bash:{}", PATHS[i])),
        (0..NETS.len()).prop_map(|i| NETS[i].to_string()),
    ]
}

/// Whether a path grant lies strictly inside a writable one (`write:fs:`
/// or an `exec:` working directory).
fn nested_in_writable(grants: &[String]) -> bool {
    let path = |g: &String| {
        ["read:fs:", "write:fs:", "exec:bash:"]
            .iter()
            .find_map(|p| g.strip_prefix(p))
            .map(|d| (PathBuf::from(d), !g.starts_with("read:")))
    };
    let paths: Vec<(PathBuf, bool)> = grants.iter().filter_map(path).collect();
    paths.iter().any(|(inner, _)| {
        paths
            .iter()
            .any(|(outer, rw)| *rw && inner != outer && inner.starts_with(outer))
    })
}

/// The access the most specific existing grant gives `path` (rw wins on a tie).
fn expected(grants: &[String], path: &Path) -> Option<Access> {
    let mut best: Option<(usize, Access)> = None;
    for g in grants {
        let (dir, access) = if let Some(d) = g.strip_prefix("read:fs:") {
            (d, Access::ReadOnly)
        } else if let Some(d) = g.strip_prefix("write:fs:") {
            (d, Access::ReadWrite)
        } else if let Some(d) = g.strip_prefix("exec:bash:") {
            (d, Access::ReadWrite)
        } else {
            continue;
        };
        if !EXISTING.contains(&dir) || !path.starts_with(dir) {
            continue;
        }
        let depth = Path::new(dir).components().count();
        best = match best {
            Some((d, a)) if d > depth || (d == depth && a == Access::ReadWrite) => Some((d, a)),
            _ => Some((depth, access)),
        };
    }
    best.map(|(_, a)| a)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_cage_is_deterministic_and_keeps_its_rules(
        grants in proptest::collection::vec(grant(), 0..8),
        rotate in 0usize..8,
    ) {
        let caps: Vec<&str> = grants.iter().map(String::as_str).collect();
        let result = compile(&caps);
        if grants.iter().any(|g| g.ends_with("/opt/escape")) {
            prop_assert!(matches!(result, Err(CageError::Escapes { .. })), "{result:?}");
            return Ok(());
        }
        if nested_in_writable(&grants) {
            prop_assert!(matches!(result, Err(CageError::NestedInWritable { .. })), "{result:?}");
            return Ok(());
        }
        let policy = result.expect("compiles");
        let a = argv(&policy);
        // Deterministic, and the order of the capabilities does not matter.
        prop_assert_eq!(&a, &argv(&compile(&caps).unwrap()));
        let mut rotated = caps.clone();
        if !rotated.is_empty() {
            let n = rotate % rotated.len();
            rotated.rotate_left(n);
        }
        let b = binds(&a);
        let b2 = binds(&argv(&compile(&rotated).unwrap()));
        let key = |v: &[(String, PathBuf, PathBuf)]| v.iter().map(|(f, s, d)| (f.clone(), s.clone(), d.clone())).collect::<Vec<_>>();
        prop_assert_eq!(key(&b), key(&b2));
        // Every rw bind after each ro bind at or above it.
        for (i, (flag, _, dest)) in b.iter().enumerate() {
            if !flag.starts_with("--bind") { continue; }
            for (j, (f2, _, d2)) in b.iter().enumerate() {
                if f2.starts_with("--ro-bind") && dest.starts_with(d2) {
                    prop_assert!(j < i, "{dest:?} (rw) before {d2:?} (ro)");
                }
            }
        }
        // Never / or /etc.
        for (_, src, dest) in &b {
            for p in [Path::new("/"), Path::new("/etc")] {
                prop_assert!(src != p && dest != p, "{src:?} -> {dest:?}");
            }
        }
        // --share-net iff net:*; the generated hosts file iff filtered.
        let all = grants.iter().any(|g| g == "net:*");
        let some = grants.iter().any(|g| g.starts_with("net:") && g != "net:[]");
        prop_assert_eq!(a.iter().any(|x| x == "--share-net"), all);
        prop_assert_eq!(a.iter().any(|x| x == "--ro-bind-data"), some && !all);
        // The most specific grant decides.
        for p in PATHS.iter().filter(|p| EXISTING.contains(p)) {
            let probe = Path::new(p).join("probe");
            if let Some(want) = expected(&grants, &probe) {
                prop_assert_eq!(policy.access(&probe), want, "{}", probe.display());
            }
        }
    }
}
