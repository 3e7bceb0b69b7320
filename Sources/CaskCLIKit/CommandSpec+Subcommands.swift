/// The subcommands of `cask`, each described once: the parser and the help text come from
/// these, and each command in `Sources/cask/Commands/` does its work with the result. Options
/// with a `ValueCheck` are checked by the parser; what needs the file system (does the store
/// exist, is the file readable) is the command's.
extension CommandSpec {
  /// Every subcommand, in the order the root help lists them.
  package static let subcommands: [CommandSpec] = [
    demo, create, put, get, delete, keys, `import`, pull, sync, export, encrypt, decrypt, compact, backup,
    verify, token, stats, passwd, rekey, upgrade, salvage, completion,
  ]

  /// `cask demo`.
  package static let demo = CommandSpec(
    name: "demo",
    abstract: "Try CipherCask on a sample of events.",
    discussion: """
      Creates an encrypted store in DIR (default ./cask-demo), imports 300 invented events \
      bundled with cask, filters them by city, moves the events of one venue in one atomic \
      batch, deletes the events that are over, and prints the store's statistics. It runs \
      offline, in seconds. Unless a password is given with --password-file, CASK_PASSWORD or \
      --password-stdin, the store's password is the fixed demo password 'cask-demo'. Running \
      it again on the same directory imports the sample again (replacing the events).
      """,
    arguments: [ArgumentSpec(name: "dir", help: "The store's directory (default: cask-demo).", isOptional: true)],
    options: OptionSpec.passwordOptions)

  /// `cask create`.
  package static let create = CommandSpec(
    name: "create",
    abstract: "Create a new, empty encrypted store.",
    discussion: """
      STORE must not exist yet, or be an empty directory. At a prompt the password is asked \
      twice. A password shorter than 12 characters or in a built-in list of common ones gets \
      a warning. Other commands never create a store. The password wraps the store's data key \
      with scrypt (N = 2^15, r = 8, p = 1: 32 MiB and a fraction of a second per open, and per \
      guess) unless --kdf rncryptor asks for RNCryptor's PBKDF2.
      """,
    arguments: [ArgumentSpec(name: "store", help: "The directory to create the store in.")],
    options: OptionSpec.passwordOptions + [.acceptWeakPassword, .keyDerivation(default: "scrypt")])

  /// `cask put`.
  package static let put = CommandSpec(
    name: "put",
    abstract: "Store a value under a key.",
    discussion: """
      The value is read from --file, or else from standard input, and stored byte for byte. \
      An existing value under the key is replaced.
      """,
    arguments: [.store, ArgumentSpec(name: "key", help: "The key (or, with --collection, the object's id).")],
    options: [
      OptionSpec("file", value: "file", help: "Read the value from this file instead of standard input."),
      .collectionForKeys,
    ] + OptionSpec.passwordOptions)

  /// `cask get`.
  package static let get = CommandSpec(
    name: "get",
    abstract: "Write the value of a key to standard output.",
    discussion: """
      The value is written byte for byte, with nothing added. A missing key is an error (exit 1). \
      With --json an object is written as JSON text and a newline: a JSON object as stored, an \
      object of the binary coder converted as `export --format jsonl` does; any other value is \
      then an error.
      """,
    arguments: [.store, ArgumentSpec(name: "key", help: "The key (or, with --collection, the object's id).")],
    options: [
      .collectionForKeys,
      OptionSpec("json", help: "Write the object as JSON text (binary objects converted) and a newline."),
    ] + OptionSpec.passwordOptions)

  /// `cask delete`.
  package static let delete = CommandSpec(
    name: "delete",
    abstract: "Remove a key and its value.",
    discussion: "A key that does not exist is an error (exit 1); nothing is written then.",
    arguments: [.store, ArgumentSpec(name: "key", help: "The key (or, with --collection, the object's id).")],
    options: [.collectionForKeys] + OptionSpec.passwordOptions)

  /// `cask keys`.
  package static let keys = CommandSpec(
    name: "keys",
    abstract: "List the keys of a store.",
    discussion: """
      Keys are sorted by their UTF-8 bytes, one per line. Control characters are shown escaped \
      (the U+0000 between a collection's name and an object's id as \\0); --json prints them \
      exactly. With --collection, the ids of that collection's objects are listed.
      """,
    arguments: [.store],
    options: [
      OptionSpec("prefix", value: "prefix", help: "Only keys (or ids) that start with this text."),
      OptionSpec(
        "collection", value: "name", help: "List the ids of the objects of this collection.",
        check: .collectionName),
      .json,
    ] + OptionSpec.passwordOptions)

  /// `cask import`.
  package static let `import` = CommandSpec(
    name: "import",
    abstract: "Import JSON objects into a collection.",
    discussion: """
      FILE holds a JSON array of objects or JSON Lines (one object per line); '-' reads \
      standard input, and an http:// or https:// URL is downloaded first (with the headers of \
      --header-file, CASK_PULL_HEADERS and --header; a failed download writes nothing). Each object is stored, exactly as written, under the id found at \
      --id-key (a string, or a number written in decimal): a new id is inserted, an existing \
      one replaced. The import is one atomic batch: when an object is malformed, the error \
      names its line and nothing is written. With --batch-size the objects are written in \
      atomic batches of that many instead, and the batches before a malformed object stay \
      imported. The store must exist ('cask create').
      """,
    arguments: [
      .store,
      ArgumentSpec(
        name: "file", help: "The JSON or JSON Lines file, '-' for standard input, or an http:// or https:// URL."),
    ],
    options: [
      .json,
      OptionSpec(
        "collection", value: "name", help: "The collection to import into.", isRequired: true,
        check: .collectionName),
      OptionSpec("id-key", value: "key", help: "The field of each object that holds its id.", isRequired: true),
      OptionSpec(
        "batch-size", value: "n", help: "Objects per atomic batch (default: the whole input in one).",
        check: .positiveInteger),
    ] + OptionSpec.remoteOptions + OptionSpec.passwordOptions)

  /// `cask export`.
  package static let export = CommandSpec(
    name: "export",
    abstract: "Export values as RNCryptor v3 files (or plaintext JSON).",
    discussion: """
      Writes every value of the store, or of one collection, to its own file in DIR, which \
      must be new or empty. With --format rncryptor (the default) each file is an RNCryptor \
      v3 password message that any RNCryptor implementation opens with the export password; \
      file names are random and reveal nothing, and listing.rncryptor, encrypted the same \
      way, maps them to their keys and holds each file's SHA-256 (a JSON document; see \
      Docs/CLI.md), so 'cask decrypt FILE OUT --listing listing.rncryptor' tells a file \
      swapped or replaced. The export password comes from --export-password-file (or -stdin, \
      CASK_EXPORT_PASSWORD), or is asked twice at the terminal; it should differ from the \
      store's: RNCryptor's PBKDF2 (10,000 rounds) makes each file a far cheaper test of its \
      password than the store's header. --reuse-store-password encrypts under the store's \
      password all the same, with a warning. With \
      --format json the values are written decrypted, with a plaintext listing.json: a \
      warning says so. With --format jsonl DIR is a new file, or '-' for standard output: \
      one JSON line per value, and with --collection the collection's objects themselves, \
      one per line, which 'cask import ... --id-key KEY' reads back.
      """,
    arguments: [.store, ArgumentSpec(name: "dir", help: "The directory to write the files to.")],
    options: [
      .json,
      OptionSpec(
        "collection", value: "name", help: "Export only the objects of this collection.", check: .collectionName),
      OptionSpec(
        "format", value: "format", help: "The kind of files to write (default rncryptor).",
        allowedValues: ["rncryptor", "json", "jsonl"]),
      OptionSpec(
        "skip-damaged",
        help: "Leave out the values that cannot be read, list them, and exit 1 if there were any."),
    ] + OptionSpec.passwordOptions + [
      OptionSpec(
        "export-password-file", value: "file",
        help: "Encrypt the files under the password on the first line of this file instead of the store's. "
          + "Also --export-password-stdin, CASK_EXPORT_PASSWORD or --export-password-prompt."),
      OptionSpec(
        "export-password-stdin", help: "Read the export password from the next line of standard input."),
      OptionSpec("export-password-prompt", help: "Ask for the export password (twice) at the terminal."),
      OptionSpec(
        "reuse-store-password",
        help: "Encrypt under the store's password (warns: the files then test it cheaply)."),
    ])

  /// `cask encrypt`.
  package static let encrypt = CommandSpec(
    name: "encrypt",
    abstract: "Encrypt a file into an RNCryptor v3 file.",
    discussion: """
      The output is an RNCryptor v3 password message that any RNCryptor implementation \
      decrypts with the password. The file is streamed in 1 MiB chunks, so memory stays small \
      whatever its size; OUT appears only once it is complete. At a prompt the password is \
      asked twice.
      """,
    arguments: [
      ArgumentSpec(name: "in", help: "The file to encrypt."),
      ArgumentSpec(name: "out", help: "The encrypted file to write."),
    ],
    options: [.force] + OptionSpec.passwordOptions)

  /// `cask decrypt`.
  package static let decrypt = CommandSpec(
    name: "decrypt",
    abstract: "Decrypt an RNCryptor v3 file.",
    discussion: """
      Reads an RNCryptor v3 password message (from cask or any RNCryptor implementation) in \
      1 MiB chunks. The plaintext goes to a temporary file beside OUT and is renamed to OUT \
      only after the whole message has authenticated: with a wrong password or a modified \
      file, OUT is not written at all.
      """,
    arguments: [
      ArgumentSpec(name: "in", help: "The RNCryptor v3 file to decrypt."),
      ArgumentSpec(name: "out", help: "The plaintext file to write."),
    ],
    options: [
      .force,
      OptionSpec(
        "listing", value: "file",
        help: "First check that <in> is the file this export listing names (its SHA-256), so that a swapped "
          + "or replaced file is refused."),
    ] + OptionSpec.passwordOptions)

  /// `cask compact`.
  package static let compact = CommandSpec(
    name: "compact",
    abstract: "Reclaim the space of overwritten and deleted values.",
    discussion: """
      Rewrites the store's segments keeping only live records (copied still encrypted) and \
      removes the old ones. Safe to interrupt: the store opens to the same contents either way. \
      A live record that is damaged, or is not the record its key was sealed for, stops the \
      compaction with an error (exit 1) and changes nothing. With --drop-damaged such records \
      are left out instead (their keys are lost), each is reported on standard error, and the \
      command exits with status 1 after compacting.
      """,
    arguments: [.store],
    options: [
      .json,
      OptionSpec(
        "drop-damaged",
        help: "Salvage: leave out damaged live records (their keys are lost), report each, and exit 1."),
    ] + OptionSpec.passwordOptions)

  /// `cask backup`.
  package static let backup = CommandSpec(
    name: "backup",
    abstract: "Copy a store into a new directory, as it is now.",
    discussion: """
      Writes a copy of the store into DIR, which must not exist yet or be empty: the same \
      files, still encrypted, opened with the same password. A copy that fails with an error \
      (a full disk) or is interrupted (Ctrl-C, kill) removes what it wrote. Each file is \
      synced and the store's header is written last, so a copy cut short by a crash or kill -9 \
      is not a store: delete DIR and run it again. Programs can back up a store they have open with CaskStore.backup(to:).
      """,
    arguments: [.store, ArgumentSpec(name: "dir", help: "Where to put the copy: a new or empty directory.")],
    options: [.json] + OptionSpec.passwordOptions)

  /// `cask verify`.
  package static let verify = CommandSpec(
    name: "verify",
    abstract: "Check every record of a store.",
    discussion: """
      Reads every segment, checks each record's checksum and authenticates (decrypts) its key \
      and value, and checks the hint files. Nothing is changed. The report lists each damaged \
      file and offset; the command exits with status 1 when there is any damage. With \
      --expect-token (a value 'cask token' printed earlier, kept outside the store) it also \
      exits with status 1 when the store is older than the state the token was taken at: a \
      store put back as a whole from an older copy.
      """,
    arguments: [.store],
    options: [
      .json,
      OptionSpec(
        "expect-token", value: "token",
        help: "Exit 1 unless the store is the state of this 'cask token' value or a later one."),
    ] + OptionSpec.passwordOptions)

  /// `cask token`.
  package static let token = CommandSpec(
    name: "token",
    abstract: "Print a store's integrity token.",
    discussion: """
      Prints a short opaque value (sealed under the store's key) that states how far the \
      store's history has come. Keep it outside the store's directory, for example beside a \
      backup or on a server; 'cask verify STORE --expect-token TOKEN' later refuses a store \
      older than it, such as a whole directory put back from an older copy. Format version 3 \
      stores only. The store is opened read-only.
      """,
    arguments: [.store],
    options: [.json] + OptionSpec.passwordOptions)

  /// `cask stats`.
  package static let stats = CommandSpec(
    name: "stats",
    abstract: "Show a store's size and health.",
    discussion: """
      Keys, collections with their object counts, live and dead bytes (dead bytes are \
      reclaimed by 'cask compact'), segment files, and what the store's recovery found when \
      it was opened for this command.
      """,
    arguments: [.store],
    options: [.json] + OptionSpec.passwordOptions)

  /// `cask passwd`.
  package static let passwd = CommandSpec(
    name: "passwd",
    abstract: "Change the password of a store.",
    discussion: """
      The current password comes from --password-file, --password-stdin, CASK_PASSWORD or a \
      prompt; the new one from --new-password-file, --new-password-stdin, CASK_NEW_PASSWORD \
      or a prompt asked twice. When both come from standard input, the first line is the \
      current password and the second the new one. What is written from now on is sealed \
      under a new data key that an old copy of the header cannot unwrap; the records written \
      before stay under the old key (and open with an old header and the old password) until \
      'cask compact' seals them again, which passwd reports. After a crash the store opens \
      with one of the two passwords. The new header wraps its key as the old one did (scrypt \
      with the same parameters, or RNCryptor's PBKDF2) unless --kdf says otherwise.
      """,
    arguments: [.store],
    options: [.json] + OptionSpec.passwordOptions + [
      OptionSpec("new-password-file", value: "file", help: "Read the new password from the first line of this file."),
      OptionSpec("new-password-stdin", help: "Read the new password from the next line of standard input."),
      .acceptWeakPassword, .keyDerivation(default: "the store's current one"),
    ])

  /// `cask rekey`.
  package static let rekey = CommandSpec(
    name: "rekey",
    abstract: "Copy a store into a new directory under a new data key and password.",
    discussion: """
      Writes every key and value of the store into a new store at DIR (which must not exist) \
      whose records are encrypted again under a new random data key, wrapped under the new \
      password. Unlike 'cask passwd', nothing in the copy opens with the store's old data key, \
      old headers or old passwords: after a compromise, replace the store with the copy and \
      destroy the store and its backups. The passwords come as for 'cask passwd'. The copy is \
      built in a hidden directory beside DIR and renamed to DIR when complete and synced.
      """,
    arguments: [.store, ArgumentSpec(name: "dir", help: "Where to put the new store: a path that does not exist.")],
    options: OptionSpec.passwordOptions + [
      OptionSpec("new-password-file", value: "file", help: "Read the new password from the first line of this file."),
      OptionSpec("new-password-stdin", help: "Read the new password from the next line of standard input."),
      .acceptWeakPassword,
    ])

  /// `cask upgrade`.
  package static let upgrade = CommandSpec(
    name: "upgrade",
    abstract: "Rewrite a format version 2 store in the current format, in place.",
    discussion: """
      Copies every key and value of STORE into a new version 3 store (records bound to their \
      place, a manifest) in a hidden directory beside it, under the same data key and \
      password, then swaps the two directories in one step and removes the old one. After a \
      crash STORE is the old store or the new one, whole; a hidden '.STORE.upgrade-...' \
      directory left behind is removed by the next upgrade. A store that has the current \
      version already is left as it is (exit 0). The store must not be open elsewhere.
      """,
    arguments: [.store],
    options: [.json] + OptionSpec.passwordOptions)

  /// `cask salvage`.
  package static let salvage = CommandSpec(
    name: "salvage",
    abstract: "Copy every value that still reads from a damaged store into a new one.",
    discussion: """
      Opens the store read-only and writes every value that reads intact into a new store at \
      NEWSTORE (which must not exist), under the same password. Values that cannot be read, \
      and the damaged regions the open passed over, are listed on standard error by file and \
      offset (never by key); the exit status is 1 if anything was left out.
      """,
    arguments: [
      .store, ArgumentSpec(name: "newstore", help: "Where to put the new store: a path that does not exist."),
    ],
    options: [.json] + OptionSpec.passwordOptions)

  /// `cask completion`.
  package static let completion = CommandSpec(
    name: "completion",
    abstract: "Print a shell completion script (bash, zsh or fish).",
    discussion: """
      Prints a script that completes cask's subcommands and options. Load it with \
      'source <(cask completion bash)' (bash), 'source <(cask completion zsh)' (zsh) or \
      'cask completion fish | source' (fish), or install it where the shell looks for \
      completions.
      """,
    arguments: [ArgumentSpec(name: "shell", help: "bash, zsh or fish.")],
    options: [])
}
