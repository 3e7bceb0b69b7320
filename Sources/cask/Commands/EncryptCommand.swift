import CipherCask

/// `cask encrypt IN OUT`: a file into an RNCryptor v3 password message, streaming.
enum EncryptCommand: Subcommand {
  static let spec = CommandSpec(
    name: "encrypt",
    abstract: "Encrypt a file into an RNCryptor v3 file.",
    discussion: """
      The output is an RNCryptor v3 password message that any RNCryptor implementation \
      decrypts with the password. The file is streamed in 1 MiB chunks, so memory stays small \
      whatever its size; OUT appears only once it is complete. At a prompt the password is \
      asked twice.
      """,
    arguments: [
      ArgumentSpec(name: "in", help: "The file to encrypt."),
      ArgumentSpec(name: "out", help: "The encrypted file to write."),
    ],
    options: [FileTransfer.force] + OptionSpec.passwordOptions)

  static func run(_ arguments: ParsedArguments) throws {
    let (input, output) = try FileTransfer.paths(arguments)
    let password = try PasswordSource.password(arguments, subject: "'\(output)'", confirm: true)
    let progress = ProcessIO.progressBar("Encrypting", total: FileTransfer.size(of: input))
    defer { progress?.finish() }
    do {
      try RNCryptor.encryptFile(at: input, to: output, password: password)
    } catch {
      throw CLIError.failure(ErrorMessage.describe(error, file: input))
    }
  }
}
