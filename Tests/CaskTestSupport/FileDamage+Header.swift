import CaskEngine
import Foundation

extension FileDamage {
  /// Writes `version` into the version field of the store header `CASK` in `store` and
  /// recomputes the header's CRC, as someone who holds the files but not the password can
  /// (before format 5 nothing else vouches for the field).
  public static func setHeaderVersion(_ version: UInt16, ofStore store: String) throws {
    let path = "\(store)/\(CaskFormat.headerFileName)"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let versionOffset = CaskFormat.headerMagic.count
    bytes[versionOffset] = UInt8(version & 0xff)
    bytes[versionOffset + 1] = UInt8(version >> 8)
    // The CRC is the header's last field and covers every byte before it.
    let crc = CRC32C.checksum(bytes[0..<(bytes.count - 4)])
    for index in 0..<4 { bytes[bytes.count - 4 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
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
