import CaskCLIKit
import CipherCask

/// `cask decrypt IN OUT`: an RNCryptor v3 password message back into a file, streaming.
enum DecryptCommand: Subcommand {
  static var spec: CommandSpec { .decrypt }

  static func run(_ arguments: ParsedArguments) throws {
    let (input, output) = try FileTransfer.paths(arguments)
    let password = try PasswordSource.password(arguments, subject: "'\(input)'")
    // Signals are blocked before the progress bar's thread starts, so that none reaches it.
    try Interruption.removingPartialFiles(of: output) {
      let progress = ProcessIO.progressBar("Decrypting", total: FileTransfer.size(of: input))
      defer { progress?.finish() }
      try FileTransfer.run(arguments, input: input, output: output) { replacing in
        try RNCryptor.decryptFile(at: input, to: output, password: password, replacing: replacing)
      }
    }
  }
}
