from tcdb.cli.app import main

main()
