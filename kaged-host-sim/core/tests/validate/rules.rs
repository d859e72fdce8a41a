//! One failing and one passing manifest per rule (fields, identity,
//! timeouts, capabilities, roles, hooks, tools, methods, notifications).
//! Knob and config-schema rules are in `knobs.rs`.
//!
//! Each case appends a snippet to a valid base manifest; base fields the
//! snippet redefines are dropped. Case lines are relative to the snippet
//! (line 1 = its first line); the harness adds the base's length.

use kaged_host_core::validate::{validate_str, Rule, ValidationReport};
use kaged_plugin_protocol::PluginRole;

const BASE: [(&str, &str); 6] = [
    ("name", "name: demo-plugin"),
    ("version", "version: 1.0.0"),
    ("kaged_api", "kaged_api: 1"),
    ("description", "description: A demo plugin."),
    ("command", "command: [./run]"),
    ("capabilities", "capabilities: []"),
];

/// The base manifest completed by `snippet`, and the snippet's line offset.
fn doc(snippet: &str) -> (String, usize) {
    let keys: Vec<&str> = snippet
        .lines()
        .filter(|l| !l.starts_with([' ', '-', '#']))
        .filter_map(|l| l.split(':').next())
        .collect();
    let base: Vec<&str> = BASE
        .iter()
        .filter(|(k, _)| !keys.contains(k))
        .map(|(_, l)| *l)
        .collect();
    (format!("{}\n{snippet}", base.join("\n")), base.len())
}

fn report(snippet: &str) -> (ValidationReport, usize, String) {
    let (text, offset) = doc(snippet);
    (validate_str(&text), offset, text)
}

/// `bad` reports `rule` at `path` on snippet line `line`; `good` has no
/// error and no finding of `rule`.
fn check(rule: Rule, path: &str, line: usize, bad: &str, good: &str) {
    let (r, offset, text) = report(bad);
    assert!(
        r.problems
            .iter()
            .any(|p| p.rule == rule && p.path == path && p.line == Some(offset + line)),
        "expected {rule} at `{path}` line {}\n--- manifest\n{text}\n--- report\n{}",
        offset + line,
        r.render_human()
    );
    let (r, _, text) = report(good);
    assert!(
        !r.has_errors() && r.problems_of(rule).next().is_none(),
        "passing case for {rule} reported problems\n--- manifest\n{text}\n--- report\n{}",
        r.render_human()
    );
}

macro_rules! case {
    ($test:ident: $rule:ident at $path:literal line $line:literal, bad $bad:expr, good $good:expr) => {
        #[test]
        fn $test() {
            check(Rule::$rule, $path, $line, &$bad, &$good);
        }
    };
}

fn tool(name: &str) -> String {
    format!("  - name: {name}\n    description: d\n    parameters_schema:\n      type: object\n")
}

// --- top-level keys and types ---
case!(unknown_top_level_key: UnknownKey at "colour" line 1, bad "colour: blue\n", good "author: someone\n");
case!(unknown_key_is_named_in_message_too: UnknownKey at "method" line 1, bad "method: [a.b]\n", good "methods: [a.b]\n");
case!(wrong_type_scalar: WrongType at "author" line 1, bad "author: [a]\n", good "author: Jane\n");
case!(wrong_type_list: WrongType at "capabilities" line 1, bad "capabilities: net:*\n", good "capabilities: [net:*]\n");
case!(duplicate_key: DuplicateKey at "version" line 2, bad "version: 1.0.0\nversion: 1.0.1\n", good "version: 1.0.1\n");

#[test]
fn each_missing_required_field_is_reported_at_the_root() {
    for (key, _) in BASE {
        let text: Vec<&str> = BASE
            .iter()
            .filter(|(k, _)| *k != key)
            .map(|(_, l)| *l)
            .collect();
        let r = validate_str(&text.join("\n"));
        let p = r.problems_of(Rule::MissingField).next();
        assert_eq!(
            p.map(|p| (p.path.as_str(), p.line)),
            Some((key, Some(1))),
            "{key}"
        );
    }
    assert!(!report("").0.has_errors(), "the base is valid");
}

// --- identity ---
case!(name_format: NameFormat at "name" line 1, bad "name: Demo_Plugin\n", good "name: demo-2\n");
case!(name_too_long: NameFormat at "name" line 1, bad format!("name: {}\n", "a".repeat(65)), good format!("name: {}\n", "a".repeat(64)));
case!(name_builtin_namespace: NameBuiltinNamespace at "name" line 1, bad "name: file\n", good "name: files\n");
case!(version_semver: VersionSemver at "version" line 1, bad "version: 1.0\n", good "version: 1.0.0-beta.1+build.5\n");
case!(version_not_string: VersionSemver at "version" line 1, bad "version: 1\n", good "version: \"1.0.0\"\n");
case!(kaged_api_above: KagedApiUnsupported at "kaged_api" line 1, bad "kaged_api: 2\n", good "kaged_api: 1\n");
case!(kaged_api_below: KagedApiUnsupported at "kaged_api" line 1, bad "kaged_api: 0\n", good "kaged_api: 1\n");
case!(kaged_api_type: WrongType at "kaged_api" line 1, bad "kaged_api: \"1\"\n", good "kaged_api: 1\n");
case!(description_empty: DescriptionEmpty at "description" line 1, bad "description: \"  \"\n", good "description: ok\n");
// A block scalar is located at its first content line.
case!(description_multiline: DescriptionMultiline at "description" line 2,
    bad "description: |\n  one\n  two\n", good "description: >\n  one\n  two\n");
case!(description_too_long: DescriptionTooLong at "description" line 1,
    bad format!("description: {}\n", "é".repeat(201)), good format!("description: {}\n", "é".repeat(200)));
case!(homepage_not_url: HomepageNotUrl at "homepage" line 1, bad "homepage: example.com\n", good "homepage: https://example.com/x\n");

// --- command and env ---
case!(command_empty: CommandEmpty at "command" line 1, bad "command: []\n", good "command: [/usr/bin/env, bun]\n");
case!(command_executable_empty: CommandExecutableEmpty at "command[0]" line 2,
    bad "command:\n  - \"\"\n  - x\n", good "command:\n  - ./bin/x\n  - \"\"\n");
case!(command_outside_plugin_dir: CommandOutsidePluginDir at "command[0]" line 1,
    bad "command: [../../target/debug/x]\n", good "command: [./bin/../bin/x, ../arg]\n");
case!(command_outside_plugin_dir_nested: CommandOutsidePluginDir at "command[0]" line 1,
    bad "command: [bin/../../x]\n", good "command: [/usr/bin/python3, ../main.py]\n");
case!(command_entry_type: WrongType at "command[1]" line 1, bad "command: [x, 3]\n", good "command: [x, \"3\"]\n");
case!(env_reserved: EnvReserved at "env.KAGED_PLUGIN_NAME" line 2,
    bad "env:\n  KAGED_PLUGIN_NAME: x\n", good "env:\n  LOG_LEVEL: info\n");
case!(env_value_type: WrongType at "env.LOG_LEVEL" line 2, bad "env:\n  LOG_LEVEL: 3\n", good "env:\n  LOG_LEVEL: \"3\"\n");

// --- timeouts (0 is not allowed for any of them) ---
case!(shutdown_timeout_zero: ShutdownTimeoutRange at "shutdown_timeout_sec" line 1,
    bad "shutdown_timeout_sec: 0\n", good "shutdown_timeout_sec: 1\n");
case!(shutdown_timeout_max: ShutdownTimeoutRange at "shutdown_timeout_sec" line 1,
    bad "shutdown_timeout_sec: 31\n", good "shutdown_timeout_sec: 30\n");
case!(health_interval_min: HealthIntervalRange at "health_interval_sec" line 1,
    bad "health_interval_sec: 4\n", good "health_interval_sec: 5\n");
case!(health_interval_max: HealthIntervalRange at "health_interval_sec" line 1,
    bad "health_interval_sec: 301\n", good "health_interval_sec: 300\n");
case!(hook_timeout_zero: HookTimeoutRange at "hook_timeout_sec" line 1, bad "hook_timeout_sec: 0\n", good "hook_timeout_sec: 1\n");
case!(hook_timeout_max: HookTimeoutRange at "hook_timeout_sec" line 1, bad "hook_timeout_sec: 61\n", good "hook_timeout_sec: 60\n");
case!(timeout_type: WrongType at "hook_timeout_sec" line 1, bad "hook_timeout_sec: 1.5\n", good "hook_timeout_sec: 2\n");

// --- capabilities ---
fn caps(list: &[&str]) -> String {
    let mut s = "capabilities:\n".to_owned();
    for c in list {
        s.push_str(&format!("  - {c}\n"));
    }
    s
}
case!(capability_unknown: CapabilityUnknown at "capabilities[0]" line 2,
    bad caps(&["kaged:storage:admin"]), good caps(&["kaged:storage:read", "kaged:storage:write"]));
case!(capability_unknown_mapping: CapabilityUnknown at "capabilities[0]" line 2,
    bad caps(&["net: \"*\""]), good caps(&["net: []"]));
case!(capability_no_network_forms: CapabilityUnknown at "capabilities[1]" line 3,
    bad caps(&["net:[]", "net: [none]"]), good caps(&["net:[]", "\"net:[]\"", "net: []"]));
case!(capability_path_relative: CapabilityPath at "capabilities[0]" line 2,
    bad caps(&["read:fs:opt/x"]), good caps(&["read:fs:/opt/x", "write:fs:/var/lib/x"]));
case!(capability_path_uri_prefix: CapabilityPath at "capabilities[1]" line 3,
    bad caps(&["read:fs:config:/memory", "write:fs:config:memory"]),
    good caps(&["read:fs:config:/memory", "write:fs:project:/notes"]));
case!(capability_path_glob: CapabilityPath at "capabilities[0]" line 2, bad caps(&["read:fs:/opt/*"]), good caps(&["read:fs:/opt"]));
// ADDENDUM §15: a `..` component is a manifest error, under a root or not.
case!(capability_path_parent_dir: CapabilityPath at "capabilities[0]" line 2,
    bad caps(&["write:fs:config:/../../../../tmp/x"]),
    good caps(&["write:fs:config:/x..y/..z", "read:fs:/opt/a..b"]));
case!(capability_path_parent_dir_absolute: CapabilityPath at "capabilities[1]" line 3,
    bad caps(&["read:fs:/opt/x", "read:fs:/opt/../etc"]),
    good caps(&["read:fs:/opt/x", "read:fs:/etc/hosts"]));
case!(capability_exec_path_parent_dir: CapabilityPath at "capabilities[0]" line 2,
    bad caps(&["exec:git:project:/../repo"]), good caps(&["exec:git:project:/repo"]));

#[test]
fn a_parent_dir_grant_is_named_in_the_message() {
    let r = validate_str(&format!(
        "{}\ncapabilities: [\"write:fs:config:/../../../../tmp/x\"]\n",
        BASE.iter()
            .filter(|(k, _)| *k != "capabilities")
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("\n")
    ));
    let p = r
        .problems_of(Rule::CapabilityPath)
        .next()
        .expect("a capability_path error");
    assert!(
        p.message.contains("write:fs:config:/../../../../tmp/x") && p.message.contains("`..`"),
        "{}",
        p.message
    );
}
case!(capability_exec_path: CapabilityPath at "capabilities[0]" line 2,
    bad caps(&["exec:bash:tools"]), good caps(&["exec:bash:/opt/oh-my-pi", "exec:bash:project:/tools"]));
case!(capability_exec_binary: CapabilityExecBinary at "capabilities[0]" line 2,
    bad caps(&["exec::/opt/x"]), good caps(&["exec:/usr/bin/python3:/opt/x"]));
case!(capability_net_host: CapabilityNetHost at "capabilities[0]" line 2,
    bad caps(&["net:bad_host!:443"]), good caps(&["net:api.openai.com:443", "net:[::1]:8080", "net:10.0.0.1:22"]));
case!(capability_net_port_zero: CapabilityNetPort at "capabilities[0]" line 2,
    bad caps(&["net:localhost:0"]), good caps(&["net:localhost:1", "net:localhost:65535"]));
case!(capability_net_port_high: CapabilityNetPort at "capabilities[0]" line 2,
    bad caps(&["net:localhost:65536"]), good caps(&["net:localhost:*", "net:*"]));
case!(capability_duplicate: CapabilityDuplicate at "capabilities[1]" line 3,
    bad caps(&["net:*", "net:*"]), good caps(&["net:*", "kaged:storage:read"]));
case!(capability_net_conflict: CapabilityNetConflict at "capabilities[0]" line 2,
    bad caps(&["net: []", "net:localhost:80"]), good caps(&["net: []", "kaged:storage:read"]));
case!(capability_nested_grant: CapabilityNestedGrant at "capabilities[1]" line 3,
    bad caps(&["write:fs:config:/shared", "read:fs:config:/shared/x/data"]),
    good caps(&["read:fs:config:/shared", "write:fs:config:/shared/x/data", "write:fs:/srv/a",
                "write:fs:/srv/ab", "write:fs:project:/shared/x", "write:fs:config:/other"]));
case!(capability_nested_in_exec_workdir: CapabilityNestedGrant at "capabilities[0]" line 2,
    bad caps(&["write:fs:/opt/x/./y/out", "exec:bash:/opt/x/y"]), good caps(&["exec:bash:/opt/x/y", "write:fs:/opt/x/y"]));

// --- roles and hooks ---
case!(role_unknown: RoleUnknown at "roles[1]" line 1,
    bad "roles: [observer, judge]\nhooks: [post_compact]\n", good "roles: [observer]\nhooks: [post_compact]\n");
case!(role_duplicate: RoleDuplicate at "roles[1]" line 1, bad "roles: [observer, observer]\n", good "roles: [observer]\n");
case!(roles_empty_with_hooks: RolesEmptyWithHooks at "roles" line 1,
    bad "roles: []\nhooks: [on_session_start]\n", good "hooks: [on_session_start]\n");
case!(hook_unknown: HookUnknown at "hooks[0]" line 2,
    bad "hooks:\n  - pre_compaction\n", good "hooks:\n  - on_session_start\n  - on_session_idle\n  - pre_compact\n  - post_compact\n");
case!(hook_duplicate: HookDuplicate at "hooks[1]" line 1, bad "hooks: [pre_compact, pre_compact]\n", good "hooks: [pre_compact]\n");
case!(compactor_requires_pre_compact: CompactorRequiresPreCompact at "roles[1]" line 3,
    bad "roles:\n  - observer\n  - compactor\nhooks: [post_compact]\n",
    good "roles:\n  - observer\n  - compactor\nhooks: [pre_compact]\n");

#[test]
fn roles_default_to_observer_when_hooks_are_declared() {
    let roles = |snippet: &str| {
        let (r, _, _) = report(snippet);
        r.manifest
            .map(|m| m.effective_roles())
            .expect("valid manifest")
    };
    assert_eq!(roles("hooks: [on_session_idle]\n"), [PluginRole::Observer]);
    assert!(roles("").is_empty());
    assert_eq!(
        roles("roles: [compactor]\nhooks: [pre_compact]\n"),
        [PluginRole::Compactor]
    );
}

// --- tools ---
case!(tool_name_format: ToolNameFormat at "tools[0].name" line 2, bad format!("tools:\n{}", tool("Recall")), good format!("tools:\n{}", tool("recall_2")));
case!(tool_name_single_segment: ToolNameFormat at "tools[0].name" line 2,
    bad format!("tools:\n{}", tool("memory.recall")), good format!("tools:\n{}", tool("recall")));
case!(tool_registered_name: ToolRegisteredName at "tools[0].name" line 3,
    bad format!("name: x\ntools:\n{}", tool("recall")), good format!("name: xy\ntools:\n{}", tool("recall")));
case!(tool_duplicate: ToolDuplicate at "tools[1].name" line 6,
    bad format!("tools:\n{}{}", tool("recall"), tool("recall")), good format!("tools:\n{}{}", tool("recall"), tool("retain")));
case!(tool_description_missing: ToolDescriptionMissing at "tools[0].description" line 2,
    bad "tools:\n  - name: t\n    parameters_schema: {type: object}\n", good format!("tools:\n{}", tool("t")));
case!(tool_schema_missing: MissingField at "tools[0].parameters_schema" line 2,
    bad "tools:\n  - name: t\n    description: d\n", good format!("tools:\n{}", tool("t")));
case!(tool_unknown_key: UnknownKey at "tools[0].handler" line 6,
    bad format!("tools:\n{}    handler: x\n", tool("t")), good format!("tools:\n{}", tool("t")));
case!(tool_schema_invalid: ToolSchemaInvalid at "tools[0].parameters_schema.properties.a.type" line 8,
    bad format!("tools:\n{}      properties:\n        a:\n          type: strnig\n", tool("t")),
    good format!("tools:\n{}      properties:\n        a:\n          type: string\n", tool("t")));
case!(tool_schema_not_object: ToolSchemaNotObject at "tools[0].parameters_schema.type" line 5,
    bad "tools:\n  - name: t\n    description: d\n    parameters_schema:\n      type: string\n", good format!("tools:\n{}", tool("t")));
case!(tool_schema_boolean_root: ToolSchemaNotObject at "tools[0].parameters_schema" line 4,
    bad "tools:\n  - name: t\n    description: d\n    parameters_schema: true\n", good format!("tools:\n{}", tool("t")));
case!(schema_stray_key: SchemaStrayKey at "tools[0].parameters_schema.properties.name.unique per project." line 6,
    bad "tools:\n  - name: t\n    description: d\n    parameters_schema:\n      type: object\n      properties: {name: {type: string, description: The name, unique per project.}}\n",
    good "tools:\n  - name: t\n    description: d\n    parameters_schema:\n      type: object\n      properties: {name: {type: string, description: \"The name, unique per project.\"}}\n");

// --- methods and notifications ---
case!(method_name_format: MethodNameFormat at "methods[0]" line 2, bad "methods:\n  - Presets.List\n", good "methods:\n  - presets.list\n");
case!(method_one_segment: MethodNameFormat at "methods[1]" line 1, bad "methods: [a.b, presets]\n", good "methods: [a.b, a.b.c.d]\n");
case!(method_five_segments: MethodNameFormat at "methods[0]" line 1, bad "methods: [a.b.c.d.e]\n", good "methods: [a.b_2.c]\n");
case!(method_reserved_kaged: MethodReserved at "methods[0]" line 1, bad "methods: [kaged.storage.query]\n", good "methods: [storage.query]\n");
case!(method_reserved_system: MethodReserved at "methods[0]" line 1, bad "methods: [system.rate_limited]\n", good "methods: [systems.rate]\n");
case!(method_system_method: MethodReserved at "methods[0]" line 1, bad "methods: [config.update]\n", good "methods: [config.reload]\n");
case!(method_duplicate: MethodDuplicate at "methods[1]" line 1, bad "methods: [a.b, a.b]\n", good "methods: [a.b, a.c]\n");
case!(method_tool_collision: MethodToolCollision at "methods[0]" line 3,
    bad format!("name: presets\nmethods:\n  - presets.list\ntools:\n{}", tool("list")),
    good format!("name: presets\nmethods:\n  - presets.search\ntools:\n{}", tool("list")));
case!(notification_name_format: NotificationNameFormat at "notifications[0]" line 1,
    bad "notifications: [catalogUpdated]\n", good "notifications: [catalog.updated]\n");
case!(notification_reserved: NotificationReserved at "notifications[0]" line 1,
    bad "notifications: [kaged.catalog.updated]\n", good "notifications: [catalog.updated]\n");
case!(notification_duplicate: NotificationDuplicate at "notifications[1]" line 1,
    bad "notifications: [a.b, a.b]\n", good "notifications: [a.b, a.c]\n");

#[test]
fn methods_are_optional() {
    let (r, _, _) = report("");
    assert!(r.problems.is_empty(), "{}", r.render_human());
    assert_eq!(r.manifest.map(|m| m.methods.len()), Some(0));
}

#[test]
fn a_prefixed_tool_name_in_methods_is_only_a_collision() {
    let (r, offset, _) = report(&format!(
        "name: memory-md\nmethods: [memory-md.recall]\ntools:\n{}",
        tool("recall")
    ));
    let rules: Vec<(Rule, &str, Option<usize>)> = r
        .problems
        .iter()
        .map(|p| (p.rule, p.path.as_str(), p.line))
        .collect();
    assert_eq!(
        rules,
        [(Rule::MethodToolCollision, "methods[0]", Some(offset + 2))],
        "exempt from the method regex (ADDENDUM §1)"
    );
}

#[test]
fn an_invalid_plugin_name_is_not_reported_again_per_tool() {
    let (r, _, _) = report(&format!("name: Bad\ntools:\n{}", tool("recall")));
    assert_eq!(r.problems_of(Rule::NameFormat).count(), 1);
    assert_eq!(r.problems_of(Rule::ToolRegisteredName).count(), 0);
}
