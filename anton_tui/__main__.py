from anton_tui.cli import main

raise SystemExit(main())
