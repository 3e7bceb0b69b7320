import CaskEngine
import Foundation

extension FileDamage {
  /// The bytes of the store header `CASK` in `store`.
  public static func headerBytes(ofStore store: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(store)/\(CaskFormat.headerFileName)")))
  }

  /// Writes `bytes` as the store header `CASK` in `store` with its CRC recomputed, as someone
  /// who holds the files but not the password can: the CRC is the header's last field and
  /// covers every byte before it.
  public static func writeHeader(_ bytes: [UInt8], toStore store: String) throws {
    var bytes = bytes
    let crc = CRC32C.checksum(bytes[0..<(bytes.count - 4)])
    for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
    try Data(bytes).write(to: URL(fileURLWithPath: "\(store)/\(CaskFormat.headerFileName)"))
  }

  /// Writes `version` into the version field of the store header `CASK` in `store` and
  /// recomputes the header's CRC (before format 5 nothing else vouches for the field).
  public static func setHeaderVersion(_ version: UInt16, ofStore store: String) throws {
    var bytes = try headerBytes(ofStore: store)
    let versionOffset = CaskFormat.headerMagic.count
    bytes[versionOffset] = UInt8(version & 0xff)
    bytes[versionOffset + 1] = UInt8(version >> 8)
    try writeHeader(bytes, toStore: store)
  }

  /// Every file of the store directory but its lock, with its bytes: what a refused open or
  /// upgrade must leave as it was.
  public static func files(ofStore store: String) throws -> [String: Data] {
    var found: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: store) where name != CaskFormat.lockFileName {
      found[name] = try Data(contentsOf: URL(fileURLWithPath: "\(store)/\(name)"))
    }
    return found
  }
}

extension FileDamage {
  /// Where the first record of a segment file's `bytes` starts: after the 32-byte header, and
  /// after the link too in a version 5 segment (Docs/FORMAT.md, section 5.1).
  public static func recordsStart<Bytes: Collection<UInt8>>(ofSegment bytes: Bytes) -> Int where Bytes.Index == Int {
    let versionOffset = bytes.startIndex + CaskFormat.segmentMagic.count
    let linked =
      bytes.count > versionOffset + 1 - bytes.startIndex
      && UInt16(bytes[versionOffset]) | UInt16(bytes[versionOffset + 1]) << 8 == CaskFormat.authenticatedVersion
    return CaskFormat.segmentHeaderLength + (linked ? CaskFormat.segmentLinkLength : 0)
  }
}
