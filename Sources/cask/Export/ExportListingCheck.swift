import CaskCLIKit
import CipherCask
import Foundation

/// `decrypt IN OUT --listing LISTING`: that IN is the very file the export's listing names,
/// before anything of it is decrypted. The listing holds each file's SHA-256 and is
/// authenticated by the export's password, so a file swapped for another of the same export
/// (or replaced by any other message under that password) is told apart: each file alone is
/// a valid RNCryptor message, and only the listing says which key it belongs to.
enum ExportListingCheck {
  /// - Throws: `CLIError.failure` when the listing cannot be read or decrypted, names no such
  ///   file, holds no digests (an older export), or holds another digest for it; the message
  ///   names the files, never a key or a value.
  static func check(_ input: String, listing path: String, password: String) throws {
    guard let sealed = FileManager.default.contents(atPath: path) else {
      throw CLIError.failure("cannot read the listing \(MessageText.quoted(path))")
    }
    let document: Data
    if path.hasSuffix(".json") {
      document = sealed
    } else {
      do {
        document = try RNCryptor.decrypt(sealed, password: password)
      } catch {
        throw CLIError.failure(
          "cannot decrypt the listing \(MessageText.quoted(path)): wrong password, or the listing was modified")
      }
    }
    guard let listing = try? JSONDecoder().decode(ExportCommand.Listing.self, from: document),
      listing.format == "cask-export"
    else {
      throw CLIError.failure("\(MessageText.quoted(path)) is not the listing of a cask export")
    }
    let name = (input as NSString).lastPathComponent
    guard let entry = listing.entries.first(where: { $0.file == name }) else {
      throw CLIError.failure(
        "the listing \(MessageText.quoted(path)) names no file \(MessageText.quoted(name)): it is not a file of this export"
      )
    }
    guard let expected = entry.sha256 else {
      throw CLIError.failure(
        "the listing \(MessageText.quoted(path)) holds no file digests (an export of version \(listing.version)): "
          + "the file cannot be checked")
    }
    guard let bytes = FileManager.default.contents(atPath: input) else {
      throw CLIError.failure("cannot read \(MessageText.quoted(input))")
    }
    guard ExportFiles.digest(of: bytes) == expected.lowercased() else {
      throw CLIError.failure(
        "\(MessageText.quoted(input)) is not the file the listing names \(MessageText.quoted(name)) (its SHA-256 differs): "
          + "the export's files were swapped or replaced; nothing was written")
    }
  }
}
