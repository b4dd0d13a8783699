"""Command-line interface: one module per subcommand, loaded lazily by :mod:`.main`."""
