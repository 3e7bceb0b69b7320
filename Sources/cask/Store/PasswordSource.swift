import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Where passwords come from. Never from a command-line argument: it would show in `ps` and
/// in the shell's history. For the password of a store or file, in this order (what the
/// command line asks for before what the environment holds):
///
/// 1. `--password-file F`: the first line of F;
/// 2. `--password-stdin`: the first line of standard input;
/// 3. the environment variable `CASK_PASSWORD`;
/// 4. a prompt without echo when a terminal is attached (asked twice for a new password).
///
/// `passwd` takes the new password the same way from `--new-password-file`,
/// `--new-password-stdin` (the line after the current password's when both come from
/// standard input), `CASK_NEW_PASSWORD` or a prompt asked twice. Docs/CLI.md has the full
/// rules.
struct PasswordSource {
  /// The option names and variable of one password.
  struct Names {
    var file: String
    var environment: String
    var stdin: String
    /// What the prompt asks for, e.g. "Password for store 'notes.cask'".
    var prompt: String
  }

  static let environmentVariable = "CASK_PASSWORD"
  static let newEnvironmentVariable = "CASK_NEW_PASSWORD"
  static let exportEnvironmentVariable = "CASK_EXPORT_PASSWORD"

  /// The password of the store or file named in `subject`.
  ///
  /// - Parameter confirm: ask twice at a prompt (for a new store or a new file).
  static func password(_ arguments: ParsedArguments, subject: String, confirm: Bool = false) throws -> String {
    let names = Names(
      file: "password-file", environment: environmentVariable, stdin: "password-stdin",
      prompt: "Password for \(subject)")
    return try resolve(arguments, names, confirm: confirm)
  }

  /// The password of `passwd`'s new credential.
  static func newPassword(_ arguments: ParsedArguments, subject: String) throws -> String {
    let names = Names(
      file: "new-password-file", environment: newEnvironmentVariable, stdin: "new-password-stdin",
      prompt: "New password for \(subject)")
    return try resolve(arguments, names, confirm: true)
  }

  /// Whether `export` is asked for a password of its own: `--export-password-file`,
  /// `--export-password-stdin`, `--export-password-prompt` or `CASK_EXPORT_PASSWORD`.
  static func exportPasswordGiven(_ arguments: ParsedArguments) -> Bool {
    arguments.option("export-password-file") != nil || arguments.flag("export-password-stdin")
      || arguments.flag("export-password-prompt") || EnvironmentSecrets.isSet(exportEnvironmentVariable)
  }

  /// The password `export` encrypts its files under instead of the store's, from
  /// `--export-password-file`, `--export-password-stdin` (the line after the store password's
  /// when both come from standard input), `CASK_EXPORT_PASSWORD` or, with
  /// `--export-password-prompt`, a prompt asked twice; nil when none of these is given.
  ///
  /// - Parameter required: when none is given, ask at the terminal (twice) instead of
  ///   returning nil; without a terminal that is an error naming the ways to give one.
  static func exportPassword(_ arguments: ParsedArguments, required: Bool = false) throws -> String? {
    let given = exportPasswordGiven(arguments)
    guard given || required else { return nil }
    let names = Names(
      file: "export-password-file", environment: exportEnvironmentVariable, stdin: "export-password-stdin",
      prompt: "Password for the exported files")
    do {
      return try resolve(arguments, names, confirm: true)
    } catch CLIError.failure(let message) where !given && message.hasPrefix("no password") {
      throw CLIError.failure(
        "an encrypted export needs its own password: give --export-password-file, set \(exportEnvironmentVariable) "
          + "or use --export-password-stdin (or --reuse-store-password, which lets the files test the store's "
          + "password cheaply)")
    }
  }

  /// A password given explicitly by a file, the environment or standard input, without
  /// prompting; `nil` when none was (for `demo`, which then uses its fixed password).
  static func explicitPassword(_ arguments: ParsedArguments) throws -> String? {
    let given =
      arguments.option("password-file") != nil || EnvironmentSecrets.isSet(environmentVariable)
      || arguments.flag("password-stdin")
    return given ? try password(arguments, subject: "the demo store") : nil
  }

  private static func resolve(_ arguments: ParsedArguments, _ names: Names, confirm: Bool) throws -> String {
    if let path = arguments.option(names.file) {
      FileExposure.warnIfShared(path, what: "the password file")
      var line = try readFirstLine(of: path)
      defer { Secret.wipe(&line) }
      return try string(from: line, source: "the password file '\(path)'")
    }
    // Before the environment. Prevents: an exported CASK_PASSWORD silently winning over the
    // flag, so that `passwd --password-stdin --new-password-stdin` took line 1 (the current
    // password) as the new one.
    if arguments.flag(names.stdin) {
      guard var line = try StandardStream.input.readLineBytes() else {
        throw CLIError.failure("--\(names.stdin) was given but standard input is empty")
      }
      defer { Secret.wipe(&line) }
      return try string(from: line, source: "standard input")
    }
    if var value = environmentBytes(names.environment) {
      defer { Secret.wipe(&value) }
      guard !value.isEmpty else { throw CLIError.failure("\(names.environment) is set but empty") }
      return try string(from: value, source: names.environment)
    }
    return try prompt(names, confirm: confirm)
  }

  private static func prompt(_ names: Names, confirm: Bool) throws -> String {
    guard var first = try PasswordPrompt.read("\(names.prompt): ") else {
      throw CLIError.failure(
        "no password: give --\(names.file), set \(names.environment) or use --\(names.stdin) "
          + "(no terminal to prompt on)")
    }
    defer { Secret.wipe(&first) }
    if confirm {
      guard var second = try PasswordPrompt.read("Repeat the password: ") else {
        throw CLIError.failure("cannot read the password from the terminal")
      }
      defer { Secret.wipe(&second) }
      guard first == second else { throw CLIError.failure("the passwords do not match") }
    }
    return try string(from: first, source: "the prompt")
  }

  /// The bytes of the variable `name`, as the process received them (`EnvironmentSecrets`
  /// took them out of the environment at start). Foundation's `ProcessInfo.environment`
  /// repairs bytes that are not UTF-8 to U+FFFD, so two different passwords would become one;
  /// they are refused instead, as from a password file.
  private static func environmentBytes(_ name: String) -> [UInt8]? {
    EnvironmentSecrets.bytes(name)
  }

  /// The first line of a file, without its line ending. The file is read to its end, so a
  /// pipe, a FIFO or `/dev/stdin` works as a regular file does.
  private static func readFirstLine(of path: String) throws -> [UInt8] {
    var contents = try SecretFile.read(path, what: "the password file")
    defer { Secret.wipe(&contents) }
    var bytes = [UInt8](contents.prefix { $0 != UInt8(ascii: "\n") })
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    return bytes
  }

  private static func string(from bytes: [UInt8], source: String) throws -> String {
    guard !bytes.isEmpty else { throw CLIError.failure("the password from \(source) is empty") }
    guard let password = String(validating: bytes, as: UTF8.self) else {
      throw CLIError.failure("the password from \(source) is not valid UTF-8")
    }
    return password
  }
}

/// Wiping of the byte buffers that held a password on its way in. (The libraries take the
/// password as a `String`, which Swift gives no way to wipe; the buffers are ours to clear.)
enum Secret {
  static func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
      if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
    }
  }
}
