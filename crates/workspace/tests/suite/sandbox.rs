//! The hostile-tenant suite, run against every sandbox tier.

/// A fresh bubblewrap sandbox per command.
mod fresh {
    const TIER: crate::suite::support::Tier = crate::suite::support::Tier::Fresh;
    include!("sandbox_cases.rs");
}

/// One warm bubblewrap sandbox per workspace, entered by every command.
mod warm {
    const TIER: crate::suite::support::Tier = crate::suite::support::Tier::Warm;
    include!("sandbox_cases.rs");
}
