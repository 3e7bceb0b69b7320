import CaskCLIKit
import CipherCask

/// `cask token STORE [--json]`: prints the store's integrity token, for
/// `cask verify --expect-token` later.
enum TokenCommand: Subcommand {
  static var spec: CommandSpec { .token }

  struct Report: Encodable {
    var store: String
    var token: String
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let token = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      do {
        return try store.integrityToken()
      } catch CaskError.unsupportedVersion(let found, _) {
        throw CLIError.failure(
          "store '\(path)' is format version \(found), which has no integrity token (version 3 stores have one)")
      }
    }
    if arguments.flag("json") {
      try JSONOutput.write(Report(store: path, token: token))
    } else {
      StandardStream.output.write(token + "\n")
    }
  }
}
