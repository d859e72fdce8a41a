//! A crashed plugin's last words: the lines of its stderr that say what
//! went wrong, not the runtime's banner after them (`Node.js v20.20.2`,
//! `Bun v1.1.0`) nor blank lines.

/// The lines of `stderr` (oldest first) that say why the plugin ended: the
/// last error line (`TypeError: ...`, `ValueError: ...`, `panicked at`,
/// `error: ...`) with its first stack frame, or the line of the frame that
/// raised it (Python); else the last line that is neither blank nor a
/// runtime banner. Empty when nothing is left.
///
/// ```
/// use kaged_host_core::last_words::last_words;
/// let node: Vec<String> = [
///     "/p/plugin.js:12", "    tag.toLowerCase()", "        ^", "",
///     "TypeError: tag.toLowerCase is not a function",
///     "    at handle (/p/plugin.js:12:9)", "    at Interface.<anonymous> (/p/plugin.js:40:3)",
///     "", "Node.js v20.20.2",
/// ].iter().map(|s| s.to_string()).collect();
/// assert_eq!(last_words(&node), [
///     "TypeError: tag.toLowerCase is not a function",
///     "at handle (/p/plugin.js:12:9)",
/// ]);
/// let py: Vec<String> = ["Traceback (most recent call last):", "  File \"/p/plugin.py\", line 9, in work",
///     "    x = p[\"n\"] + 1", "KeyError: 'n'"].iter().map(|s| s.to_string()).collect();
/// assert_eq!(last_words(&py), ["File \"/p/plugin.py\", line 9, in work", "KeyError: 'n'"]);
/// ```
pub fn last_words(stderr: &[String]) -> Vec<String> {
    let meaningful: Vec<&str> = stderr
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .skip_while(|l| l.trim().is_empty() || is_banner(l))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let Some(i) = meaningful.iter().rposition(|l| is_error(l)) else {
        return meaningful
            .last()
            .map(|l| vec![l.trim().to_string()])
            .unwrap_or_default();
    };
    let mut out = Vec::new();
    // Python names the frame before the error: `  File "...", line N`.
    if let Some(frame) = meaningful[..i]
        .iter()
        .rev()
        .take(2)
        .find(|l| l.trim_start().starts_with("File \""))
    {
        out.push(frame.trim().to_string());
    }
    out.push(meaningful[i].trim().to_string());
    // Node and Bun name it after: `    at handler (file:line:col)`.
    if let Some(next) = meaningful
        .get(i + 1)
        .filter(|l| l.trim_start().starts_with("at "))
    {
        out.push(next.trim().to_string());
    }
    out
}

/// A runtime's version line printed after an uncaught exception.
fn is_banner(line: &str) -> bool {
    let l = line.trim();
    ["Node.js v", "Bun v", "deno "]
        .iter()
        .any(|p| l.starts_with(p) && l.chars().any(|c| c.is_ascii_digit()))
}

/// A line that names an error: `XError: ...`, `XException`, `panicked at`,
/// `error: ...`, `fatal: ...`.
fn is_error(line: &str) -> bool {
    let l = line.trim_start();
    if l.starts_with("at ") || l.starts_with("File \"") {
        return false;
    }
    let head = l.split(':').next().unwrap_or_default();
    head.ends_with("Error")
        || head.ends_with("Exception")
        || head == "error"
        || head == "fatal"
        || l.contains("panicked at")
}
