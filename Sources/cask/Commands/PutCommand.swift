import CaskCLIKit
import CipherCask
import Foundation

/// `cask put STORE KEY [--file F]`: stores a value, byte for byte.
enum PutCommand: Subcommand {
  static var spec: CommandSpec { .put }

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
