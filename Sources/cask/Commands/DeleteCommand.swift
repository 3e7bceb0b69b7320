import CipherCask

/// `cask delete STORE KEY`.
enum DeleteCommand: Subcommand {
  static let spec = CommandSpec(
    name: "delete",
    abstract: "Remove a key and its value.",
    discussion: "A key that does not exist is an error (exit 1); nothing is written then.",
    arguments: [.store, ArgumentSpec(name: "key", help: "The key (or, with --collection, the object's id).")],
    options: [.collectionForKeys] + OptionSpec.passwordOptions)

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let deleted = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      try store.delete(key)
    }
    guard deleted else { throw CLIError.failure("no value for that key in store '\(path)'") }
  }
}
