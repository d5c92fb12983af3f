"""``python -m zcode_acp``: the same as the ``zcode-acp`` command."""

from zcode_acp.cli.main import main

main()
