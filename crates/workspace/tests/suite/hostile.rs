//! The hostile-tenant corpus, run against every tier (the README's score
//! table is this file's outcome).

mod fresh {
    const TIER: crate::suite::support::Tier = crate::suite::support::Tier::Fresh;
    include!("hostile_cases.rs");
}

mod warm {
    const TIER: crate::suite::support::Tier = crate::suite::support::Tier::Warm;
    include!("hostile_cases.rs");
}

mod landlock {
    const TIER: crate::suite::support::Tier = crate::suite::support::Tier::Landlock;
    include!("hostile_cases.rs");
}
