//! Manifest validation: every rule, knobs, the examples, and properties.

mod examples;
mod knobs;
mod properties;
mod rules;
