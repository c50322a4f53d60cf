//! The `flashbuf` command-line tool; see `flashbuf --help`.

fn main() {
    std::process::exit(flashbuf::cli::run());
}
