import CipherCask
import Foundation

/// `cask put STORE KEY [--file F]`: stores a value, byte for byte.
enum PutCommand: Subcommand {
  static let spec = CommandSpec(
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

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let file = arguments.option("file")
    if file == nil && arguments.flag("password-stdin") {
      throw CLIError.usage("--password-stdin needs --file: standard input carries the value", spec)
    }
    try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let value: Data
      if let file {
        do {
          value = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
          throw CLIError.failure("cannot read '\(file)'")
        }
      } else {
        value = try StandardStream.input.readAll()
      }
      try store.put(value, forKey: key)
    }
  }
}
