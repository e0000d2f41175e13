"""The command line: entry.py (the console script: imports the rest inside a try, for a Ctrl-C at start-up), main.py
(`main` and the whole parser, built by parser.py),
one module per command group (run, latency, algorithms, store, security, crossover, fleet, completion), each
adding its subcommands. Every `SshbenchError` becomes one `sshbench: error:` line and its exit code."""
