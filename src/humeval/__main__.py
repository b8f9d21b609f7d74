from humeval.cli.app import main

main()
