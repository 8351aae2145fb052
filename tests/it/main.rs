//! The end-to-end tests: the real binary against loopback servers and a
//! temporary HOME. One test binary, a module per area, so that the
//! dependency tree is linked once (as cargo's and rust-analyzer's own
//! suites do).

mod common;
mod synthetic;

mod attacks;

mod background;
mod cancelled;
mod command_line;
mod crushrc;
mod durability;
mod escapes;
mod faults;
mod foreign;
mod front;
mod fuzz_regressions;
mod go_agreement;
mod going_out;
mod held;
mod host;
mod hyper;
mod local_files;
mod messages;
mod origins;
mod proxy;
mod readings;
mod readme;
mod screen;
mod signed;
mod stand_in;
mod startup;
mod terminal;
mod tls;
mod update_providers;
