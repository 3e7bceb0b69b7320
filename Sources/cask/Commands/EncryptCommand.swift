import CaskCLIKit
import CipherCask

/// `cask encrypt IN OUT`: a file into an RNCryptor v3 password message, streaming.
enum EncryptCommand: Subcommand {
  static var spec: CommandSpec { .encrypt }

  static func run(_ arguments: ParsedArguments) throws {
    let (input, output) = try FileTransfer.paths(arguments)
    let password = try PasswordSource.password(arguments, subject: "'\(output)'", confirm: true)
    // Signals are blocked before the progress bar's thread starts, so that none reaches it.
    try Interruption.removingPartialFiles(of: output) {
      let progress = ProcessIO.progressBar("Encrypting", total: FileTransfer.size(of: input))
      defer { progress?.finish() }
      try FileTransfer.run(arguments, input: input, output: output) { replacing in
        try RNCryptor.encryptFile(at: input, to: output, password: password, replacing: replacing)
      }
    }
  }
}
