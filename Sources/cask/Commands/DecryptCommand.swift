import CipherCask

/// `cask decrypt IN OUT`: an RNCryptor v3 password message back into a file, streaming.
enum DecryptCommand: Subcommand {
  static let spec = CommandSpec(
    name: "decrypt",
    abstract: "Decrypt an RNCryptor v3 file.",
    discussion: """
      Reads an RNCryptor v3 password message (from cask or any RNCryptor implementation) in \
      1 MiB chunks. The plaintext goes to a temporary file beside OUT and is renamed to OUT \
      only after the whole message has authenticated: with a wrong password or a modified \
      file, OUT is not written at all.
      """,
    arguments: [
      ArgumentSpec(name: "in", help: "The RNCryptor v3 file to decrypt."),
      ArgumentSpec(name: "out", help: "The plaintext file to write."),
    ],
    options: [FileTransfer.force] + OptionSpec.passwordOptions)

  static func run(_ arguments: ParsedArguments) throws {
    let (input, output) = try FileTransfer.paths(arguments)
    let password = try PasswordSource.password(arguments, subject: "'\(input)'")
    let progress = ProcessIO.progressBar("Decrypting", total: FileTransfer.size(of: input))
    defer { progress?.finish() }
    do {
      try RNCryptor.decryptFile(at: input, to: output, password: password)
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, file: input))
    }
  }
}
