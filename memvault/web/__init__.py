"""The memory panel (`memvault ui`): a local web page where a person sees, edits and forgets what an
agent remembers, and sees what a prompt would be given. Server-rendered; every read and write is a
verb (`memvault.verbs`), the same the CLI runs: this package only translates forms to requests and
replies to HTML (`app` the routes, `pages` the reads, `actions` the writes, `rows` the entries'
translation, `render` the HTML, `security` the guard)."""
