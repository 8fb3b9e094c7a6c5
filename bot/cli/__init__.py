"""The `fixbot` command line: one module per subcommand, each with a register(subparsers) function."""
