from zcode_acp.actors.cli.main import main

main()
