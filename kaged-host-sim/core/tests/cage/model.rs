//! A small host, in memory, and helpers to compile against it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use kaged_host_core::cage::{
    compile_with, BindSource, CageError, CageFds, CageInputs, CagePolicy, MemFs, Mount,
};
use kaged_plugin_protocol::manifest::Manifest;

/// The install directory of the plugin in [`host`].
pub const INSTALL: &str = "/opt/plugins/demo";

/// A Debian-like merged-/usr host with a plugin, data and a few traps.
pub fn host() -> MemFs {
    MemFs::new()
        .file("/usr/bin/python3.11")
        .symlink("/usr/bin/python3", "python3.11")
        .file("/usr/bin/bash")
        .dir("/usr/lib")
        .dir("/usr/lib64")
        .dir("/usr/sbin")
        .file("/usr/share/zoneinfo/Etc/UTC")
        .symlink("/bin", "usr/bin")
        .symlink("/lib", "usr/lib")
        .symlink("/lib64", "usr/lib64")
        .symlink("/sbin", "usr/sbin")
        .file("/etc/ld.so.cache")
        .file("/etc/nsswitch.conf")
        .file("/etc/hosts")
        .file("/etc/passwd")
        .symlink("/etc/localtime", "/usr/share/zoneinfo/Etc/UTC")
        .symlink(
            "/etc/resolv.conf",
            "../run/systemd/resolve/stub-resolv.conf",
        )
        .file("/run/systemd/resolve/stub-resolv.conf")
        .dir("/etc/ssl/certs")
        .dir("/etc/ssl/private")
        .file(format!("{INSTALL}/plugin.py"))
        .dir("/opt/data/sub")
        .file("/opt/data/file")
        .dir("/srv/secret")
        .symlink("/opt/escape", "/srv/secret")
        .symlink("/opt/inner", "data")
        .dir("/tmp")
        .file("/opt/tools/bin/tool")
        .symlink("/opt/tools/bin/alias", "/srv/secret/tool")
        .file("/srv/secret/tool")
        .file("/work/target/debug/echo")
        .dir("/home/op/.config/kaged/memory")
}

/// The spawn environment of the demo plugin.
pub fn env() -> BTreeMap<String, String> {
    [
        ("HOME", INSTALL),
        ("KAGED_PLUGIN_DIR", INSTALL),
        ("KAGED_PLUGIN_NAME", "demo"),
        ("PATH", "/usr/bin:/usr/local/bin"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A manifest with these capabilities.
pub fn manifest(caps: &[&str]) -> Manifest {
    let caps: Vec<String> = caps.iter().map(|c| format!("  - {c:?}\n")).collect();
    let text = format!(
        "name: demo\nversion: 1.0.0\nkaged_api: 1\ndescription: d\ncommand: [./plugin.py]\n\
         capabilities:\n{}",
        if caps.is_empty() {
            "  []\n".to_string()
        } else {
            caps.concat()
        }
    );
    Manifest::from_yaml_str(&text).expect("manifest")
}

/// The default inputs of the demo plugin.
pub fn inputs() -> CageInputs {
    CageInputs::new(INSTALL, env())
}

/// Compile `caps` on [`host`] with `inputs`.
pub fn compile_in(caps: &[&str], inputs: &CageInputs) -> Result<CagePolicy, CageError> {
    compile_with(&manifest(caps), inputs, &host())
}

/// Compile `caps` on [`host`] with the default inputs.
pub fn compile(caps: &[&str]) -> Result<CagePolicy, CageError> {
    compile_in(caps, &inputs())
}

/// The argv template for `./plugin.py` (descriptors as placeholders, each
/// bind's as `<fd:SOURCE>`), as strings.
pub fn argv(policy: &CagePolicy) -> Vec<String> {
    policy
        .bwrap_argv_template(&[
            OsString::from(format!("{INSTALL}/plugin.py")),
            OsString::from("--flag"),
        ])
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// The argv for `./plugin.py` with info fd 4, seccomp fd 5 and the binds'
/// descriptors from 6 on (missing sources left out), as strings.
pub fn argv_with_fds(policy: &CagePolicy, present: impl Fn(&Path) -> bool) -> Vec<String> {
    let mut next = 6;
    let binds = policy
        .mounts
        .iter()
        .map(|m| match m {
            Mount::Bind { source, .. } if present(source) => {
                next += 1;
                Some(BindSource::Fd(next - 1))
            }
            _ => None,
        })
        .collect();
    let fds = CageFds {
        info: Some(4),
        seccomp: 5,
        binds,
    };
    policy
        .bwrap_argv(&[OsString::from(format!("{INSTALL}/plugin.py"))], &fds)
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// The options of an argv before `--`, each with its values.
pub fn options(argv: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() && argv[i] != "--" {
        let arity = match argv[i].as_str() {
            "--setenv" | "--symlink" | "--ro-bind" | "--ro-bind-fd" | "--bind-fd"
            | "--ro-bind-data" => 2,
            "--proc" | "--dev" | "--tmpfs" | "--chdir" | "--info-fd" | "--seccomp"
            | "--cap-drop" => 1,
            _ => 0,
        };
        out.push(argv[i..(i + 1 + arity).min(argv.len())].to_vec());
        i += 1 + arity;
    }
    out
}

/// The (flag, source, dest) of every bind in an argv template, in order,
/// read back as the path forms they stand for: `--ro-bind-fd <fd:S> D` is
/// `("--ro-bind", S, D)`, `--bind-fd <fd?:S> D` (a source missing at
/// compile time) `("--bind-try", S, D)`; the kernel paths' `--ro-bind P P`
/// as they are.
pub fn binds(argv: &[String]) -> Vec<(String, PathBuf, PathBuf)> {
    options(argv)
        .into_iter()
        .filter(|o| o[0].contains("bind") && o.len() == 3)
        .map(|o| {
            let base = o[0].trim_end_matches("-fd").to_string();
            let (flag, source) = if let Some(s) = o[1].strip_prefix("<fd?:") {
                (format!("{base}-try"), s.trim_end_matches('>'))
            } else if let Some(s) = o[1].strip_prefix("<fd:") {
                (base, s.trim_end_matches('>'))
            } else {
                (base, o[1].as_str())
            };
            (flag, PathBuf::from(source), PathBuf::from(&o[2]))
        })
        .collect()
}

/// Whether the argv has `flag SRC DEST`.
pub fn has_bind(argv: &[String], flag: &str, src: &str, dest: &str) -> bool {
    binds(argv)
        .iter()
        .any(|(f, s, d)| f == flag && s == &PathBuf::from(src) && d == &PathBuf::from(dest))
}
