"""Serving the app to web browsers: `anton-tui serve` runs one anton-tui per browser tab (through textual-serve),
each behind a token.

Only the command line imports this package, and only for `serve`. `plan` and `command` are plain Python (so
`anton-tui serve --help` answers at once); `server` and `guard` bring in textual-serve and aiohttp when the serving
starts. The apps it starts learn that they run in a browser tab, and whether that browser lets the page use its
clipboard, from `SERVED_ENV` (read by `anton_tui.tui.served`).
"""

from __future__ import annotations

SERVED_ENV = "ANTON_SERVED"  # set by `anton-tui serve` for the apps it starts: one of the two values below
WITH_CLIPBOARD = "clipboard"  # the page is a secure context (https, or a loopback address): it may write the clipboard
WITHOUT_CLIPBOARD = "no-clipboard"  # plain http from another machine: the browser gives the page no clipboard
TOKEN_ENV = "ANTON_SERVE_TOKEN"  # a token of the user's choosing instead of a generated one
