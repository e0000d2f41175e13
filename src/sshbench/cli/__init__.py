"""The command line: main.py (`main`, the console script's entry point, and the whole parser, built by parser.py),
one module per command group (run, latency, algorithms, store, security, crossover, fleet, completion), each
adding its subcommands. Every `SshbenchError` becomes one `sshbench: error:` line and its exit code."""
