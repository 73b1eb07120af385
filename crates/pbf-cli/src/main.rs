//! The `pbf` binary: a thin shell over [`pbf_cli::run`].

use std::process::ExitCode;

fn main() -> ExitCode {
    match pbf_cli::run(std::env::args_os()) {
        Ok(outcome) => outcome.exit_code(),
        Err(pbf_cli::CliError::Usage(e)) => {
            // clap formats its own message, `error:` prefix and usage included.
            let _ = e.print();
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
