import CaskCLIKit
import CipherCask

/// `cask get STORE KEY`: writes a value to standard output, byte for byte, or with `--json` an
/// object's JSON text.
enum GetCommand: Subcommand {
  static var spec: CommandSpec { .get }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let key = try KeyText.storeKey(arguments)
    let value = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      try store.get(key)
    }
    guard let value else { throw CLIError.failure("no value for that key in store '\(path)'") }
    guard arguments.flag("json") else {
      StandardStream.output.write(value)
      return
    }
    StandardStream.output.write(try JSONLinesExport.objectText(value))
  }
}
