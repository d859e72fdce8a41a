//! CLI (in progress).
