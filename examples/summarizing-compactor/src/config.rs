//! The compactor's project-side config (`config_schema`).

use schemars::JsonSchema;
use serde::Deserialize;

/// Bounds of `max_summary_chars` (also the knob's).
pub const SUMMARY_CHARS: (u32, u32) = (200, 20_000);
/// Largest `keep_last_n` (also the knob's).
pub const KEEP_LAST_MAX: u32 = 50;

/// How to summarise.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The longest summary message, in characters.
    #[serde(default = "default_max")]
    #[schemars(default = "default_max", range(min = 200, max = 20000))]
    pub max_summary_chars: u32,
    /// The last N compacted messages are kept verbatim, not summarised.
    #[serde(default = "default_keep")]
    #[schemars(default = "default_keep", range(max = 50))]
    pub keep_last_n: u32,
}

fn default_max() -> u32 {
    2000
}

fn default_keep() -> u32 {
    2
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_summary_chars: default_max(),
            keep_last_n: default_keep(),
        }
    }
}

impl Config {
    /// Check the ranges; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        let (lo, hi) = SUMMARY_CHARS;
        if !(lo..=hi).contains(&self.max_summary_chars) {
            return Err(format!(
                "field `max_summary_chars`: {} is outside {lo}..={hi}",
                self.max_summary_chars
            ));
        }
        if self.keep_last_n > KEEP_LAST_MAX {
            return Err(format!(
                "field `keep_last_n`: {} is above the maximum {KEEP_LAST_MAX}",
                self.keep_last_n
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ranges() {
        let c: Config = serde_json::from_str("{}").expect("defaults");
        assert_eq!(c, Config::default());
        assert!(c.check().is_ok());
        let c = Config {
            max_summary_chars: 10,
            keep_last_n: 0,
        };
        assert!(c
            .check()
            .expect_err("too short")
            .contains("max_summary_chars"));
        let c = Config {
            max_summary_chars: 500,
            keep_last_n: 51,
        };
        assert!(c.check().expect_err("too many").contains("keep_last_n"));
    }
}
