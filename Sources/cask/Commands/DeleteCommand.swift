import CaskCLIKit
import CipherCask

/// `cask delete STORE KEY`.
enum DeleteCommand: Subcommand {
  static var spec: CommandSpec { .delete }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let deleted = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      try store.delete(key)
    }
    guard deleted else { throw CLIError.failure("no value for that key in store '\(path)'") }
  }
}
