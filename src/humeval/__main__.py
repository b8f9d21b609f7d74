from humeval.cli import main

main()
