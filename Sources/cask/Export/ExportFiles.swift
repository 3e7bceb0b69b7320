import CaskCLIKit
import CaskPlatform
import CipherCask
import Foundation

/// Writes the files of an export: RNCryptor v3 password messages under random names, with
/// keys derived once (one PBKDF2 pair for the whole export), or plaintext under sequential
/// names. Each file's SHA-256 goes into the listing (`ExportCommand.Listing`), which is
/// authenticated with the files when they are encrypted: a file swapped for another, or
/// replaced, no longer matches its entry.
final class ExportFiles: @unchecked Sendable {
  let directory: String
  private let keys: RNCryptor.PasswordKeys?
  private var written = 0
  private(set) var nonJSONValues = 0
  /// The files written so far, and the directories this export made (the deepest last): what
  /// `removeAll()` takes back. Guarded by `lock`, which `removeAll()` can be told to keep, so
  /// that no file is made after it (a signal's cleanup runs beside the export).
  private var created: [String] = []
  private var madeDirectories: [String] = []
  private let lock = NSLock()

  init(directory: String, encryptedWith password: String?) throws {
    self.directory = directory
    keys = try password.map { try RNCryptor.PasswordKeys(password: $0) }
    var missing: [String] = []
    var ancestor = directory
    while !ancestor.isEmpty, ancestor != "/", !FileManager.default.fileExists(atPath: ancestor) {
      missing.insert(ancestor, at: 0)
      ancestor = FilePath.directory(of: ancestor)
    }
    madeDirectories = missing
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw CLIError.failure("cannot create '\(directory)'")
    }
  }

  /// Removes every file this export wrote, and the directories it made: an export that
  /// failed part-way, or was interrupted, leaves no values behind (plaintext ones above all),
  /// and can be made again into the same directory. With `keepingLock`, no file is written
  /// after it (for the cleanup of a signal, after which the process ends).
  func removeAll(keepingLock: Bool = false) {
    lock.lock()
    for name in created { unlink("\(directory)/\(name)") }
    created = []
    for made in madeDirectories.reversed() { rmdir(made) }
    madeDirectories = []
    if !keepingLock { lock.unlock() }
  }

  /// Writes one value and returns the file's name and the SHA-256 of its bytes (in hex).
  func write(_ value: Data) throws -> (name: String, digest: String) {
    written += 1
    if let keys {
      var generator = SystemRandomNumberGenerator()
      let name = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
      let sealed = try RNCryptor.encrypt(value, passwordKeys: keys)
      return (try save(sealed, as: name + ".rncryptor"), Self.digest(of: sealed))
    }
    let isJSON = (try? JSONSerialization.jsonObject(with: value, options: [.fragmentsAllowed])) != nil
    if !isJSON { nonJSONValues += 1 }
    return (
      try save(value, as: String(written).leftPadded(to: 8) + (isJSON ? ".json" : ".bin")), Self.digest(of: value)
    )
  }

  /// The SHA-256 of `bytes` in lower-case hex, as the listing holds it.
  static func digest(of bytes: Data) -> String {
    RNCryptor.sha256(bytes).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
  }

  /// Writes the listing (encrypted like the values when they are) and returns its name.
  func writeListing(_ listing: Data) throws -> String {
    if let keys { return try save(RNCryptor.encrypt(listing, passwordKeys: keys), as: "listing.rncryptor") }
    return try save(listing, as: "listing.json")
  }

  private func save(_ data: Data, as name: String) throws -> String {
    lock.lock()
    defer { lock.unlock() }
    try ExportFile.create("\(directory)/\(name)", contents: data)
    created.append(name)
    return name
  }
}

extension String {
  fileprivate func leftPadded(to length: Int) -> String {
    count >= length ? self : String(repeating: "0", count: length - count) + self
  }
}
