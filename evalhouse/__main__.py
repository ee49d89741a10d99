from evalhouse.cli import main

main()
