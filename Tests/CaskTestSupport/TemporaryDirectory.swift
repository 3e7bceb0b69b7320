import Foundation

/// A fresh directory under the system's temporary folder, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
  public let path: String

  public init(_ label: String = "cask") throws {
    let base = FileManager.default.temporaryDirectory.path
    path = "\(base)/\(label)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  /// A path inside the directory.
  public func file(_ name: String) -> String { "\(path)/\(name)" }

  public func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}

/// File-damaging helpers for corruption tests.
public enum FileDamage {
  /// Flips the bits of `mask` in the byte at `offset`.
  public static func flipByte(at offset: Int, in path: String, mask: UInt8 = 0x01) throws {
    var data = try Data(contentsOf: URL(fileURLWithPath: path))
    data[data.startIndex + offset] ^= mask
    try data.write(to: URL(fileURLWithPath: path))
  }

  /// Cuts the file to `length` bytes.
  public static func truncate(_ path: String, to length: Int) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.truncate(atOffset: UInt64(length))
  }

  /// The size of a file in bytes.
  public static func size(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? NSNumber)?.intValue ?? 0
  }
}
