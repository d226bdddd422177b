"""The ``stereoset-eval`` command line: :mod:`stereoset_eval.cli.main` and one module per subcommand."""
