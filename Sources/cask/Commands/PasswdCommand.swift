import CipherCask

/// `cask passwd STORE`: replaces the password.
enum PasswdCommand: Subcommand {
  static let spec = CommandSpec(
    name: "passwd",
    abstract: "Change the password of a store.",
    discussion: """
      The current password comes from --password-file, CASK_PASSWORD, --password-stdin or a \
      prompt; the new one from --new-password-file, CASK_NEW_PASSWORD, --new-password-stdin \
      or a prompt asked twice. When both come from standard input, the first line is the \
      current password and the second the new one. Only the store's header is rewritten (the \
      data key is re-wrapped), atomically: after a crash the store opens with one of the two.
      """,
    arguments: [.store],
    options: OptionSpec.passwordOptions + [
      OptionSpec("new-password-file", value: "file", help: "Read the new password from the first line of this file."),
      OptionSpec("new-password-stdin", help: "Read the new password from the next line of standard input."),
    ])

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let newPassword = try PasswordSource.newPassword(arguments, subject: "store '\(path)'")
      let progress = ProgressBar.start("Changing the password", total: nil, unit: .time) { 0 }
      defer { progress?.finish() }
      try store.changePassword(to: newPassword)
    }
    StandardStream.error.write("Changed the password of store '\(path)'.\n")
  }
}
