import CaskCLIKit
import CipherCaskSync
import Foundation

/// The request headers of `pull` and `import URL`, from three places, all sent: the lines of
/// `--header-file FILE`, the lines of the variable `CASK_PULL_HEADERS`, and `--header`
/// values. A file or the variable keeps a token off the command line, where `ps` shows it to
/// every user of the machine; a `--header` that carries a credential gets a warning saying so.
enum RemoteHeaders {
  static let environmentVariable = "CASK_PULL_HEADERS"

  /// Every header given, in the order file, variable, options.
  ///
  /// - Throws: `CLIError.failure` for a header file that cannot be read, and for a line of
  ///   the file or the variable that is not a `Name: value` header, naming the line by number
  ///   and never showing it.
  static func collect(_ arguments: ParsedArguments) throws -> [(name: String, value: String)] {
    var headers: [(name: String, value: String)] = []
    if let path = arguments.option("header-file") {
      FileExposure.warnIfShared(path, what: "the header file")
      var bytes = try SecretFile.read(path, what: "the header file")
      defer { Secret.wipe(&bytes) }
      headers += try lines(bytes, source: "the header file \(MessageText.quoted(path))")
    }
    if var bytes = EnvironmentSecrets.bytes(environmentVariable) {
      defer { Secret.wipe(&bytes) }
      headers += try lines(bytes, source: environmentVariable)
    }
    for text in arguments.optionValues("header") {
      guard let header = HeaderText.split(text) else { continue }  // the parser has checked it
      if RemoteConfiguration.isCredentialHeader(header.name) {
        StandardStream.error.write(
          "warning: --header \(MessageText.quoted(header.name)) is visible to every user of this machine (ps, "
            + "/proc/PID/cmdline); give it in --header-file or \(environmentVariable) instead\n")
      }
      headers.append(header)
    }
    return headers
  }

  /// Whether any header source is given (for `import`, which takes them only for a URL).
  static func anyGiven(_ arguments: ParsedArguments) -> Bool {
    !arguments.optionValues("header").isEmpty || arguments.option("header-file") != nil
  }

  /// The headers of `bytes`, one `Name: value` per line (LF or CRLF; spaces and tabs before
  /// the name are ignored). Blank lines and lines whose first non-blank character is `#` are
  /// skipped.
  static func lines(_ bytes: [UInt8], source: String) throws -> [(name: String, value: String)] {
    var headers: [(name: String, value: String)] = []
    for (index, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
      var line = raw
      if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
      let content = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
      if content.isEmpty || content.first == UInt8(ascii: "#") { continue }
      guard let text = String(validating: content, as: UTF8.self), let header = HeaderText.split(text) else {
        throw CLIError.failure(
          "\(source), line \(index + 1): not a 'Name: value' header (a token name, a colon, printable ASCII)")
      }
      headers.append(header)
    }
    return headers
  }
}
