import CaskCLIKit
import CipherCask

/// `cask decrypt IN OUT [--listing LISTING]`: an RNCryptor v3 password message back into a
/// file, streaming; with `--listing`, first checked to be the file an export's listing names.
enum DecryptCommand: Subcommand {
  static var spec: CommandSpec { .decrypt }

  static func run(_ arguments: ParsedArguments) throws {
    let (input, target) = try FileTransfer.paths(arguments, spec)
    let output = arguments.argument("out")
    if arguments.option("listing") != nil && input == "-" {
      throw CLIError.usage("--listing needs <in> to be a file of the export, not standard input", spec)
    }
    let password = try PasswordSource.password(arguments, subject: "'\(input)'")
    if let listing = arguments.option("listing") {
      try ExportListingCheck.check(input, listing: listing, password: password)
    }
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
