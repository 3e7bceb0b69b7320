import CipherCask

/// `cask get STORE KEY`: writes a value to standard output, byte for byte.
enum GetCommand: Subcommand {
  static let spec = CommandSpec(
    name: "get",
    abstract: "Write the value of a key to standard output.",
    discussion: "The value is written byte for byte, with nothing added. A missing key is an error (exit 1).",
    arguments: [.store, ArgumentSpec(name: "key", help: "The key (or, with --collection, the object's id).")],
    options: [.collectionForKeys] + OptionSpec.passwordOptions)

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let value = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      try store.get(key)
    }
    guard let value else { throw CLIError.failure("no value for that key in store '\(path)'") }
    StandardStream.output.write(value)
  }
}
