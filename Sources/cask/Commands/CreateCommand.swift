import CaskCLIKit
import CipherCask
import Foundation

/// `cask create STORE`: a new, empty store. One of the two commands that create stores.
enum CreateCommand: Subcommand {
  static var spec: CommandSpec { .create }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      if FileManager.default.fileExists(atPath: "\(path)/\(CaskFormat.headerFileName)") {
        throw CLIError.failure("store '\(path)' already exists")
      }
      let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
      guard isDirectory.boolValue, contents.isEmpty else {
        throw CLIError.failure("'\(path)' already exists and is not an empty directory")
      }
    }
    let password = try PasswordSource.password(arguments, subject: "the new store '\(path)'", confirm: true)
    PasswordStrength.warnIfWeak(password, skip: arguments.flag("accept-weak-password"))
    var options = StoreAccess.options(.readWrite, create: true)
    if let derivation = keyDerivation(arguments) { options.keyDerivation = derivation }
    let store = try StoreAccess.open(path, password: password, options: options)
    try StoreAccess.run(store) { _ in }
    StandardStream.error.write("Created store \(MessageText.quoted(path)).\n")
  }

  /// The derivation `--kdf` names, or nil without it (the parser allows only its two names).
  static func keyDerivation(_ arguments: ParsedArguments) -> CaskStore.KeyDerivation? {
    switch arguments.option("kdf") {
    case "rncryptor": return .rncryptor
    case "scrypt": return .standard
    default: return nil
    }
  }
}
