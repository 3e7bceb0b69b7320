extension ArgumentSpec {
  /// `<store>`, the first argument of every store command.
  static let store = ArgumentSpec(name: "store", help: "The store's directory.")
}

extension OptionSpec {
  /// `-h, --help`, which every command accepts.
  package static let help = OptionSpec("help", short: "h", help: "Show help information.")

  /// `--json`, for commands with a machine-readable output.
  static let json = OptionSpec("json", help: "Print the result as JSON.")

  /// `--force`, for `encrypt` and `decrypt`.
  static let force = OptionSpec("force", help: "Replace <out> if it exists.")

  /// `--collection <name>` for commands that address single keys: the key is then the id of
  /// an object of that collection (stored under `name + U+0000 + id`).
  static let collectionForKeys = OptionSpec(
    "collection", value: "name",
    help: "Address the object with this id in the named collection instead of a plain key.",
    check: .collectionName)

  /// The request options of `pull` and `import URL`: headers (from a file, the environment or
  /// the command line), plain http with credentials, and the size limit of an answer.
  static let remoteOptions = [
    OptionSpec(
      "header-file", value: "file",
      help: "Send the headers of this file, one 'Name: value' per line (# comments); for tokens. "
        + "CASK_PULL_HEADERS, the same lines, is read too. Header values appear in no message."),
    OptionSpec(
      "header", value: "header",
      help: "Send this HTTP header, 'Name: value'; repeat for more. Others see it in ps: give tokens in "
        + "--header-file or CASK_PULL_HEADERS.",
      check: .header, isRepeatable: true),
    OptionSpec(
      "allow-insecure-http",
      help: "Send credential headers over plain http:// to hosts other than localhost (anyone on the path reads them)."),
    OptionSpec(
      "max-response-size", value: "bytes",
      help: "Fail, writing nothing, on an answer larger than this (default 67108864, 64 MiB).",
      check: .positiveInteger),
  ]

  /// `--accept-weak-password`, for the commands that set a password (`create`, `passwd`).
  static let acceptWeakPassword = OptionSpec(
    "accept-weak-password", help: "Do not warn about a short or common new password.")

  /// `--kdf`, how a new password wraps the store's data key (`create`, `passwd`).
  static func keyDerivation(default: String) -> OptionSpec {
    OptionSpec(
      "kdf", value: "kdf",
      help: "How the password wraps the data key: scrypt (memory-hard) or rncryptor (PBKDF2, as any RNCryptor v3 "
        + "implementation reads it). Default: \(`default`).",
      allowedValues: ["scrypt", "rncryptor"])
  }

  /// Where the password of an existing store or file comes from (see Docs/CLI.md, "Passwords").
  static let passwordOptions = [
    OptionSpec(
      "password-file", value: "file",
      help: "Read the password from the first line of this file. Otherwise --password-stdin, CASK_PASSWORD or a prompt."
    ),
    OptionSpec("password-stdin", help: "Read the password from the first line of standard input."),
  ]

  /// The long names the parser refuses because they would carry a password on the command
  /// line (`--password`, `--new-password`), with the variable that takes its place.
  package static let refusedPasswordNames = [
    "password": "CASK_PASSWORD", "new-password": "CASK_NEW_PASSWORD", "export-password": "CASK_EXPORT_PASSWORD",
  ]
}
