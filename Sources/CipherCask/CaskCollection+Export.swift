import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskCollection {
  /// Writes every object to a new file as JSON Lines: one object per line, encoded with
  /// `encoder`, which `importJSON(contentsOf:decoder:)` with the matching decoder (and
  /// `cask import ... --id-key` with the field that holds the id) reads back.
  ///
  /// The file is written under a temporary name in the same directory (mode 0600) and renamed
  /// to `url` when complete, so `url` never holds part of an export; a file already at `url`
  /// is replaced. The objects are those of the moment of the call, in no particular order.
  /// The file is plaintext.
  ///
  /// - Parameter encoder: how the objects are encoded; pretty-printing is left out, so that
  ///   each object stays on one line.
  /// - Returns: how many objects were written.
  /// - Throws: `CollectionError.decoding` for an object that no longer decodes as `T`,
  ///   `EncodingError`, `CaskError.io` for the file; nothing is left at `url` then.
  /// - Complexity: O(n) reads, decodes and encodes; memory O(one object + 1 MiB).
  @discardableResult
  public func exportJSON(to url: URL, encoder: JSONEncoder = JSONEncoder()) throws -> Int {
    try checkName()
    let temporary = url.deletingLastPathComponent()
      .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial").path
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw CaskError.io(operation: "open", path: temporary, errno: errno) }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
      let count = try exportJSON(to: handle, encoder: encoder)
      try handle.synchronize()
      try handle.close()
      guard rename(temporary, url.path) == 0 else {
        throw CaskError.io(operation: "rename", path: url.path, errno: errno)
      }
      return count
    } catch {
      try? handle.close()
      unlink(temporary)
      throw error
    }
  }

  /// Writes every object to `handle` as JSON Lines (see `exportJSON(to:encoder:)`), from its
  /// current offset; the handle stays open. For standard output, a pipe or a socket.
  ///
  /// - Returns: how many objects were written.
  /// - Throws: as `exportJSON(to:encoder:)`, and the handle's write errors. What was written
  ///   before an error stays written.
  @discardableResult
  public func exportJSON(to handle: FileHandle, encoder: JSONEncoder = JSONEncoder()) throws -> Int {
    try exportJSON(encoder: encoder) { try handle.write(contentsOf: $0) }
  }

  /// Hands every object, as JSON Lines, to `write` in pieces of about 1 MiB (each ends with a
  /// line break).
  ///
  /// - Returns: how many objects were written.
  /// - Throws: as `exportJSON(to:encoder:)`, and what `write` throws.
  @discardableResult
  public func exportJSON(encoder: JSONEncoder = JSONEncoder(), write: (Data) throws -> Void) throws -> Int {
    let lineEncoder = Self.lineEncoder(like: encoder)
    var pending = Data()
    var count = 0
    var failures: [CollectionError] = []
    try forEachObject(onDecodingFailure: .fail, failures: &failures) { object in
      pending.append(try lineEncoder.encode(object))
      pending.append(UInt8(ascii: "\n"))
      count += 1
      if pending.count >= 1 << 20 {
        try write(pending)
        pending.removeAll(keepingCapacity: true)
      }
    }
    if !pending.isEmpty { try write(pending) }
    return count
  }

  /// `encoder`'s settings without pretty-printing, which would spread an object over lines.
  private static func lineEncoder(like encoder: JSONEncoder) -> JSONEncoder {
    let copy = JSONEncoder()
    copy.outputFormatting = encoder.outputFormatting.subtracting(.prettyPrinted)
    copy.dateEncodingStrategy = encoder.dateEncodingStrategy
    copy.dataEncodingStrategy = encoder.dataEncodingStrategy
    copy.nonConformingFloatEncodingStrategy = encoder.nonConformingFloatEncodingStrategy
    copy.keyEncodingStrategy = encoder.keyEncodingStrategy
    copy.userInfo = encoder.userInfo
    return copy
  }
}
