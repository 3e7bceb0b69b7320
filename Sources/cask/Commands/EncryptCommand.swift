import CaskCLIKit
import CipherCask

/// `cask encrypt IN OUT`: a file into an RNCryptor v3 password message, streaming.
enum EncryptCommand: Subcommand {
  static var spec: CommandSpec { .encrypt }

  static func run(_ arguments: ParsedArguments) throws {
    let (input, target) = try FileTransfer.paths(arguments, spec)
    let output = arguments.argument("out")
    let password = try PasswordSource.password(arguments, subject: "'\(output)'", confirm: true)
    let partials: String
    if case .file(let path, _) = target { partials = path } else { partials = "" }
    // Signals are blocked before the progress bar's thread starts, so that none reaches it.
    try Interruption.removingPartialFiles(of: partials) {
      let progress = ProcessIO.progressBar("Encrypting", total: FileTransfer.size(of: input))
      defer { progress?.finish() }
      try FileTransfer.run(
        arguments, input: input, target: target, output: output,
        file: { source, destination, replacing in
          try RNCryptor.encryptFile(at: source, to: destination, password: password, replacing: replacing)
        },
        stream: { destination in try StreamCrypt.encrypt(input, to: destination, password: password) })
    }
  }
}
