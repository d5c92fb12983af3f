from zcode_acp.cli.main import main

main()
