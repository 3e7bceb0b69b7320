import CaskCLIKit
import CipherCask

/// `cask passwd STORE`: replaces the password.
enum PasswdCommand: Subcommand {
  static var spec: CommandSpec { .passwd }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let newPassword = try PasswordSource.newPassword(arguments, subject: "store '\(path)'")
      PasswordStrength.warnIfWeak(newPassword, skip: arguments.flag("accept-weak-password"))
      let progress = ProgressBar.start("Changing the password", total: nil, unit: .time) { 0 }
      defer { progress?.finish() }
      try store.changePassword(to: newPassword, keyDerivation: CreateCommand.keyDerivation(arguments))
    }
    if arguments.flag("json") { return try JSONOutput.write(Reports.Password(store: path, changed: true)) }
    StandardStream.error.write("Changed the password of store '\(path)'.\n")
  }
}
