extension CommandSpec {
  /// `cask sync`.
  package static let sync = CommandSpec(
    name: "sync",
    abstract: "Sync a collection with a Kinto server, both ways.",
    discussion: """
      Pulls what changed in the Kinto collection since the last sync (all of it the first \
      time) into the local collection, then sends the local changes: every change made to the \
      collection since it was first synced, by any command or program. URL is the server's /v1 \
      root. The remote collection (--remote-collection, by default the local name) and its \
      bucket are created when the credentials allow it. The credentials are read from \
      --auth-file, one line 'user:password'; they appear in no message. An object changed on \
      both sides is a conflict: with --conflicts server-wins the server's version is kept, with \
      client-wins the local one is sent; without the option both are kept, the local one \
      unsent, and listed (exit 0). Failed requests are retried with backoff; a sync that still \
      fails exits 1, keeping what was stored and every unsent change for the next run.
      """,
    arguments: [.store, ArgumentSpec(name: "url", help: "The Kinto server's /v1 root, http:// or https://.")],
    options: [
      .json,
      OptionSpec("bucket", value: "name", help: "The Kinto bucket.", isRequired: true),
      OptionSpec(
        "collection", value: "name", help: "The local collection to sync.", isRequired: true, check: .collectionName),
      OptionSpec("remote-collection", value: "name", help: "The Kinto collection (default: the local name)."),
      OptionSpec(
        "auth-file", value: "file", help: "A file whose first line is 'user:password' for basic auth.",
        isRequired: true),
      OptionSpec(
        "conflicts", value: "policy", help: "Who wins a conflict (default: keep both, list them).",
        allowedValues: ["server-wins", "client-wins"]),
      OptionSpec(
        "allow-insecure-http",
        help: "Send the credentials over plain http:// to hosts other than localhost (anyone on the path reads them)."),
    ] + OptionSpec.passwordOptions)
}
