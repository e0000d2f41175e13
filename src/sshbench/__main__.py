from sshbench.cli import main

raise SystemExit(main())
