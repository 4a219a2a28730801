//! The Landlock + seccomp tier's launcher on its own (the `oxiscope`
//! binary is one too): confines itself by the policy on descriptor 3,
//! then executes the command.

fn main() {
    oxiscope_workspace::landlock_launcher();
    eprintln!(
        "usage: oxiscope-landlock {} -- COMMAND ARGS... (a policy on descriptor 3)",
        oxiscope_workspace::LANDLOCK_LAUNCHER_ARG
    );
    std::process::exit(2);
}
