/// The subcommands that talk to a server: `cask pull` and `cask sync`.
extension CommandSpec {
  /// `cask pull`.
  package static let pull = CommandSpec(
    name: "pull",
    abstract: "Fetch the JSON objects of a REST resource into a collection.",
    discussion: """
      GETs URL and upserts each object of the answer into the collection under the id found \
      at --id-key, exactly as the server sent it, as 'cask import' does. The answer is a JSON \
      array of objects, one object (it has the --id-key field), or an envelope: an object \
      whose 'result' member (or the one --envelope names) holds the object or the array. \
      Pages are followed: an envelope's 'next' member (--next-key) names the next page, \
      absolute or relative, until a page has none; or, with --page-parameter NAME, pages are \
      asked for as ?NAME=1, 2, ... until one holds no object. Every page is fetched before \
      anything is written, then all objects are written in one atomic batch: after any error \
      (an HTTP status other than 2xx, an answer that is not JSON, a network failure, a \
      timeout of 30 s, an answer over --max-response-size) nothing is written. Tokens go in \
      --header-file or CASK_PULL_HEADERS, not on the command line; header values appear in no \
      message. A URL with 'user:password@' is refused, and credential headers go over plain \
      http:// only to localhost unless --allow-insecure-http is given. The store must exist \
      ('cask create').
      """,
    arguments: [.store, ArgumentSpec(name: "url", help: "The resource, an http:// or https:// URL.")],
    options: [
      .json,
      OptionSpec(
        "collection", value: "name", help: "The collection to upsert into.", isRequired: true, check: .collectionName),
      OptionSpec("id-key", value: "key", help: "The field of each object that holds its id.", isRequired: true),
      OptionSpec(
        "envelope", value: "key",
        help: "The member of each answer that holds the objects (default: the answer itself, or 'result')."),
      OptionSpec(
        "next-key", value: "key",
        help: "The envelope member that links to the next page (default next; not with --page-parameter)."),
      OptionSpec(
        "page-parameter", value: "name",
        help: "Ask for pages by number (?name=1, 2, ...) until one is empty, instead of following links."),
      OptionSpec(
        "max-pages", value: "n", help: "Fail, writing nothing, after more pages than this (default 10000).",
        check: .positiveInteger),
    ] + OptionSpec.remoteOptions + OptionSpec.passwordOptions)

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
