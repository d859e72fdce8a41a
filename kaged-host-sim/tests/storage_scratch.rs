#[test]
fn deep() {
    for sql in [
        format!("SELECT {}1", "1 + ".repeat(4990)),
        format!("SELECT {}1", "1 + ".repeat(100_000)),
        format!("SELECT {}1", "- ".repeat(9000)),
        format!("SELECT {}1", "NOT ".repeat(9000)),
        format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000)),
        format!("SELECT * FROM t WHERE {}", "a = 1 OR ".repeat(2400) + "1"),
        format!("SELECT CASE {} END", "WHEN 1 THEN 2 ".repeat(2000)),
        format!("SELECT 1 {}", "UNION SELECT 1 ".repeat(3000)),
        format!("SELECT * FROM t {}", "JOIN t ON 1 ".repeat(2400)),
        format!("SELECT {}1", "1 COLLATE x || ".repeat(3000)),
    ] {
        let h = std::thread::Builder::new().stack_size(2 << 20).spawn(move || {
            let r = kaged_host_sim::storage::rewrite("plugin_x_", &sql);
            let _ = kaged_host_sim::storage::redact_sql(&sql);
            r.map(|r| r.sql.len()).map_err(|e| e.to_string().chars().take(80).collect::<String>())
        }).unwrap();
        eprintln!("{:?}", h.join().map_err(|_| "panic"));
    }
}
