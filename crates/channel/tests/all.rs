//! Channels driven end to end over fake platforms and a fake model.

mod suite;
