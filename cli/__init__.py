"""The command line: ``zcode-acp`` and its subcommands, a layer on top that nothing below imports
(docs/architecture.md, "Layers"). ``main.py`` is the stdio fast path an editor launches."""
