from sshbench.cli.main import main

raise SystemExit(main())
