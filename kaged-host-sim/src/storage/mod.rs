//! Brokered plugin storage (being implemented).
