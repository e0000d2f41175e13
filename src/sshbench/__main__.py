from sshbench.cli.entry import main

raise SystemExit(main())
