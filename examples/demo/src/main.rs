//! `arkagent-demo`: an interactive REPL, or a scripted run (`--say`, `--script`) that
//! prints a transcript and exits. See `arkagent-demo --help`.
//!
//! Exit codes: 0 done; 1 a turn failed (scripted mode) or start-up failed; 2 bad
//! arguments.

use std::process::ExitCode;

use arkagent_demo::config::{parse_args, Command, USAGE};
use arkagent_demo::console::Console;
use arkagent_demo::repl::{run_interactive, run_script, Demo};

fn main() -> ExitCode {
    let config = match parse_args(std::env::args().skip(1), |name| std::env::var(name).ok()) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Run(config)) => config,
        Err(message) => {
            eprintln!("arkagent-demo: {message}");
            return ExitCode::from(2);
        }
    };
    let secrets = match &config.endpoint {
        arkagent_demo::config::Endpoint::Real { api_key, .. } => vec![api_key.clone()],
        arkagent_demo::config::Endpoint::Simulated => {
            vec![arkagent_demo::config::SIMULATED_API_KEY.to_owned()]
        }
    };
    arkagent_demo::init_tracing(secrets);
    let lines = match config.script_lines() {
        Ok(lines) => lines,
        Err(e) => {
            eprintln!("arkagent-demo: could not read the script: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("arkagent-demo: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut demo = match Demo::start(&config, Console::stdout()) {
        Ok(demo) => demo,
        Err(e) => {
            eprintln!("arkagent-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    if config.is_scripted() {
        rt.block_on(run_script(&mut demo, &lines));
        if demo.failures() > 0 {
            return ExitCode::FAILURE;
        }
    } else {
        run_interactive(&rt, &mut demo);
    }
    ExitCode::SUCCESS
}
