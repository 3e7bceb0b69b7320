import CaskCLIKit
import CipherCask

/// `cask decrypt IN OUT`: an RNCryptor v3 password message back into a file, streaming.
enum DecryptCommand: Subcommand {
  static var spec: CommandSpec { .decrypt }

  static func run(_ arguments: ParsedArguments) throws {
    let (input, target) = try FileTransfer.paths(arguments, spec)
    let output = arguments.argument("out")
    let password = try PasswordSource.password(arguments, subject: "'\(input)'")
    let partials: String
    if case .file(let path, _) = target { partials = path } else { partials = "" }
    // Signals are blocked before the progress bar's thread starts, so that none reaches it.
    try Interruption.removingPartialFiles(of: partials) {
      let progress = ProcessIO.progressBar("Decrypting", total: FileTransfer.size(of: input))
      defer { progress?.finish() }
      try FileTransfer.run(
        arguments, input: input, target: target, output: output,
        file: { source, destination, replacing in
          try RNCryptor.decryptFile(at: source, to: destination, password: password, replacing: replacing)
        },
        stream: { destination in try StreamCrypt.decrypt(input, to: destination, password: password) })
    }
  }
}
