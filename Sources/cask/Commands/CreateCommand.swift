import CipherCask
import Foundation

/// `cask create STORE`: a new, empty store. One of the two commands that create stores.
enum CreateCommand: Subcommand {
  static let spec = CommandSpec(
    name: "create",
    abstract: "Create a new, empty encrypted store.",
    discussion: """
      STORE must not exist yet, or be an empty directory. At a prompt the password is asked \
      twice. Other commands never create a store.
      """,
    arguments: [ArgumentSpec(name: "store", help: "The directory to create the store in.")],
    options: OptionSpec.passwordOptions)

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
    let store = try StoreAccess.open(path, password: password, options: StoreAccess.options(.readWrite, create: true))
    try StoreAccess.run(store) { _ in }
    StandardStream.error.write("Created store '\(path)'.\n")
  }
}
